//! The write path of a game: the compare-and-set append (one statement for a
//! whole group-commit batch on PostgreSQL, three small ones per game on SQLite), reading
//! several games' new events at once, and rewriting a game's seats.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::games::{Append, GameIndex, NewEvent, StoredEvent};
use super::json::JsonValue;
use super::schema::{events, game_seats, games};
use super::tx::{Conn, Tx, conflict_or, on};

diesel::define_sql_function! {
    /// PostgreSQL: the feed key of the current transaction (migration `000040_feed_xid`).
    fn feed_tx() -> diesel::sql_types::BigInt;
}

#[derive(Insertable)]
#[diesel(table_name = events)]
struct EventInsert<'a> {
    event_id: String,
    game_id: &'a str,
    seq: i32,
    event_type: &'a str,
    schema_version: i32,
    audience: &'a str,
    data: JsonValue,
    recorded_at: NaiveDateTime,
}

impl Tx<'_> {
    /// Appends events at `expected + 1 …` if the game is still at version `expected`, and
    /// rewrites its index. [`StoreError::Conflict`] when another write came first; nothing
    /// is written then.
    ///
    /// # Errors
    /// Conflict, database failure.
    pub fn append(
        &mut self,
        game: &str,
        expected: i32,
        index: &GameIndex,
        events: &[NewEvent],
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            let made = Appends::append_rows(
                c,
                &[Append {
                    game,
                    expected,
                    index,
                    events,
                }],
                self.now,
            )?;
            if made == [true] {
                Ok(())
            } else {
                Err(StoreError::Conflict)
            }
        })
    }

    /// [`Tx::append`] for several games at once (each at most once), in one statement on
    /// PostgreSQL: whether each append was made, in order. An append whose game moved on
    /// writes nothing, and the others are made all the same.
    ///
    /// # Errors
    /// Database failure.
    pub fn append_many(&mut self, appends: &[Append<'_>]) -> Result<Vec<bool>, StoreError> {
        on!(self, |c| {
            if appends.is_empty() {
                return Ok(Vec::new());
            }
            Appends::append_rows(c, appends, self.now)
        })
    }

    /// The events of each game `(id, after)` after `after`, ordered by game and seq (one
    /// statement on PostgreSQL).
    ///
    /// # Errors
    /// Database failure.
    pub fn events_after_many(
        &mut self,
        after: &[(&str, i32)],
    ) -> Result<Vec<StoredEvent>, StoreError> {
        if after.is_empty() {
            return Ok(Vec::new());
        }
        if let Conn::Pg(c) = &mut self.conn {
            return events_after_pg(c, after);
        }
        // SQLite is in process: a statement per game costs no round trip.
        let mut all = Vec::new();
        for (game, version) in after {
            all.extend(self.load_events_after(game, *version)?);
        }
        Ok(all)
    }

    /// Inserts a game's events at `expected + 1 …` (shared by `create_game` and SQLite's
    /// append).
    pub(super) fn insert_events(
        &mut self,
        game: &str,
        expected: i32,
        events: &[NewEvent],
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            let at = self.now;
            let rows: Vec<EventInsert<'_>> = events
                .iter()
                .zip(expected + 1..)
                .map(|(e, seq)| EventInsert {
                    event_id: uuid::Uuid::now_v7().to_string(),
                    game_id: game,
                    seq,
                    event_type: &e.event_type,
                    schema_version: e.schema_version,
                    audience: &e.audience,
                    data: JsonValue(e.data.clone()),
                    recorded_at: at,
                })
                .collect();
            // Positions from the sequence (PostgreSQL) or AUTOINCREMENT (SQLite), in
            // the order of the rows; PostgreSQL's tx_id is the column's default.
            diesel::insert_into(events::table)
                .values(rows)
                .execute(c)
                .map_err(conflict_or)?;
            Ok(())
        })
    }

    /// Rewrites a game's seats in the index.
    pub(super) fn write_seats(&mut self, game: &str, index: &GameIndex) -> Result<(), StoreError> {
        on!(self, |c| Seats::write(c, game, index))
    }
}

/// The append's writes, per backend: for each game the compare-and-set on its index row
/// (so losers are found before any event or global position is written: a concurrent
/// writer holds the row lock until commit, after which the update matches nothing), its
/// events, its seats that changed. Returns whether each append was made; an append whose
/// compare-and-set failed wrote nothing.
trait Appends {
    fn append_rows(
        &mut self,
        appends: &[Append<'_>],
        at: NaiveDateTime,
    ) -> Result<Vec<bool>, StoreError>;
}

impl Appends for diesel::pg::PgConnection {
    /// One statement for any number of games (`batch.rs`: the compare-and-sets, the events
    /// and the changed seats as data-modifying CTEs that write only for the games whose
    /// compare-and-set matched). A command's cost on PostgreSQL is mostly round trips (each
    /// one two context switches, on the server's and on the backend's side; `perf` put a
    /// quarter of the server's CPU in switching), so this is one statement for a whole
    /// batch of commands ([`crate::games`]'s group commit) instead of three per command.
    fn append_rows(
        &mut self,
        appends: &[Append<'_>],
        at: NaiveDateTime,
    ) -> Result<Vec<bool>, StoreError> {
        super::batch::appends_pg(self, appends, at)
    }
}

/// What an append changes in a game's index row (`public` only when the log says).
#[derive(AsChangeset)]
#[diesel(table_name = games)]
struct IndexChange<'a> {
    version: i32,
    status: &'a str,
    updated_at: NaiveDateTime,
    public: Option<bool>,
    free_seats: i32,
}

impl Appends for diesel::sqlite::SqliteConnection {
    /// SQLite is in process (no round trips to save): three statements per game.
    fn append_rows(
        &mut self,
        appends: &[Append<'_>],
        at: NaiveDateTime,
    ) -> Result<Vec<bool>, StoreError> {
        let mut made = Vec::with_capacity(appends.len());
        for a in appends {
            let change = IndexChange {
                version: a.expected + i32::try_from(a.events.len()).unwrap_or(i32::MAX),
                status: &a.index.status,
                updated_at: at,
                public: a.index.public,
                free_seats: a.index.free_seats,
            };
            let updated = diesel::update(
                games::table
                    .find(a.game)
                    .filter(games::version.eq(a.expected)),
            )
            .set(&change)
            .execute(self)?;
            if updated == 1 {
                let mut tx = Tx::sqlite(self, at);
                tx.insert_events(a.game, a.expected, a.events)?;
                tx.write_seats(a.game, a.index)?;
            }
            made.push(updated == 1);
        }
        Ok(made)
    }
}

/// The events of several games after a version each, in one statement for any number of
/// games (arrays, so it stays prepared), ordered by game and seq.
fn events_after_pg(
    conn: &mut diesel::pg::PgConnection,
    after: &[(&str, i32)],
) -> Result<Vec<StoredEvent>, StoreError> {
    use diesel::sql_types::{Array, Integer, Text};
    let games: Vec<&str> = after.iter().map(|(g, _)| *g).collect();
    let versions: Vec<i32> = after.iter().map(|(_, v)| *v).collect();
    Ok(crate::prepared!(
        "SELECT e.position, e.event_id, e.game_id, e.seq, e.event_type, e.schema_version, \
                    e.audience, e.data, e.recorded_at, e.tx_id \
               FROM unnest($1::text[], $2::int4[]) AS q(game, after) \
               JOIN events e ON e.game_id = q.game AND e.seq > q.after \
              ORDER BY e.game_id, e.seq",
    )
    .bind::<Array<Text>, _>(&games)
    .bind::<Array<Integer>, _>(&versions)
    .load(conn)?)
}

/// Writes a game's seat rows, per backend.
trait Seats {
    fn write(&mut self, game: &str, index: &GameIndex) -> Result<(), StoreError>;
}

impl Seats for diesel::pg::PgConnection {
    /// One statement that writes only the seats that changed (a command changes one or
    /// two): a game's seats are fixed when it is created.
    fn write(&mut self, game: &str, index: &GameIndex) -> Result<(), StoreError> {
        use diesel::query_dsl::methods::FilterDsl;
        use diesel::upsert::excluded;
        debug_assert!(index.seats.iter().all(|s| s.game_id == game));
        let upsert = diesel::insert_into(game_seats::table)
            .values(&index.seats)
            .on_conflict((game_seats::game_id, game_seats::seat))
            .do_update()
            .set((
                game_seats::account_id.eq(excluded(game_seats::account_id)),
                game_seats::awaiting.eq(excluded(game_seats::awaiting)),
                game_seats::action.eq(excluded(game_seats::action)),
                game_seats::deadline_at.eq(excluded(game_seats::deadline_at)),
            ));
        FilterDsl::filter(
            upsert,
            diesel::dsl::sql::<diesel::sql_types::Bool>(
                "game_seats.account_id IS DISTINCT FROM excluded.account_id \
                 OR game_seats.awaiting IS DISTINCT FROM excluded.awaiting \
                 OR game_seats.action IS DISTINCT FROM excluded.action \
                 OR game_seats.deadline_at IS DISTINCT FROM excluded.deadline_at",
            ),
        )
        .execute(self)?;
        Ok(())
    }
}

impl Seats for diesel::sqlite::SqliteConnection {
    /// SQLite is in process (no round trips to save): all rows anew.
    fn write(&mut self, game: &str, index: &GameIndex) -> Result<(), StoreError> {
        diesel::delete(game_seats::table.filter(game_seats::game_id.eq(game))).execute(self)?;
        diesel::insert_into(game_seats::table)
            .values(&index.seats)
            .execute(self)?;
        Ok(())
    }
}
