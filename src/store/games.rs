//! Games and their event streams: the index rows beside each stream (status, seats, who
//! must act), creating a game, appending with optimistic concurrency, reading events, the
//! lists and the lobby's queries. The per-backend SQL of the append is in [`super::appends`].

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::json::JsonValue;
use super::schema::{events, game_seats, games};
use super::tx::{Tx, conflict_or, on};

/// A game's index row.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, serde::Deserialize)]
#[diesel(table_name = games)]
pub struct GameRow {
    /// Id (UUID text).
    pub id: String,
    /// Ruleset name.
    pub ruleset: String,
    /// Game name.
    pub name: Option<String>,
    /// `lobby`, `active`, `finished`.
    pub status: String,
    /// Creator's account.
    pub host_account: String,
    /// Number of events.
    pub version: i32,
    /// Creation time.
    pub created_at: NaiveDateTime,
    /// Last change.
    pub updated_at: NaiveDateTime,
    /// Listed for and watchable by every account.
    pub public: bool,
    /// The code that lets an account join a private game.
    pub invite_code: Option<String>,
    /// Seats nobody (person or bot) holds.
    pub free_seats: i32,
    /// The time control (JSON of `rules::TimeControl`), when the game has clocks.
    #[serde(default)]
    pub time_control: Option<String>,
}

/// A seat of the index: who sits there and whether they must act.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = game_seats)]
pub struct SeatRow {
    /// The game's id.
    pub game_id: String,
    /// The seat's index (0-based).
    pub seat: i32,
    /// Account of a person.
    pub account_id: Option<String>,
    /// The person must act now.
    pub awaiting: bool,
    /// What is asked of the person (`play_card`, or `pass,take`, …).
    pub action: Option<String>,
    /// When the seat must have acted (games with move deadlines).
    pub deadline_at: Option<NaiveDateTime>,
}

/// The index of a game after a command.
#[derive(Debug, Clone)]
pub struct GameIndex {
    /// New status.
    pub status: String,
    /// New visibility, when the game's log records it.
    pub public: Option<bool>,
    /// Seats nobody holds.
    pub free_seats: i32,
    /// Every seat of the game, in seat order.
    pub seats: Vec<SeatRow>,
}

/// A summary for lists: the index row and its seats.
#[derive(Debug, Clone)]
pub struct GameSummaryRow {
    /// The game.
    pub game: GameRow,
    /// Its seats.
    pub seats: Vec<SeatRow>,
}

/// An event to append.
#[derive(Debug, Clone)]
pub struct NewEvent {
    /// Type name.
    pub event_type: String,
    /// Payload schema version.
    pub schema_version: i32,
    /// `public`, `seat:N`, `server`.
    pub audience: String,
    /// The event's payload, at `schema_version`.
    pub data: serde_json::Value,
}

/// One game's part of a batched append ([`Tx::append_many`]).
#[derive(Debug, Clone, Copy)]
pub struct Append<'a> {
    /// The game's id.
    pub game: &'a str,
    /// The version the game must still be at.
    pub expected: i32,
    /// Its index after the events.
    pub index: &'a GameIndex,
    /// The events, at `expected + 1 …`.
    pub events: &'a [NewEvent],
}

/// An event as stored.
#[derive(Debug, Clone, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = events)]
pub struct StoredEvent {
    /// Global position.
    pub position: i64,
    /// Unique event id.
    pub event_id: String,
    /// The game's id.
    pub game_id: String,
    /// Position in the game's stream, from 1.
    pub seq: i32,
    /// Type name.
    pub event_type: String,
    /// Payload schema version.
    pub schema_version: i32,
    /// Who may see it: `public`, `seat:N` or `server`.
    pub audience: String,
    /// The payload as written, at `schema_version` (readers upcast it).
    pub data: JsonValue,
    /// Time of the append (UTC).
    pub recorded_at: NaiveDateTime,
    /// The feed's order key before `position` (PostgreSQL: the appending transaction; 0 on
    /// SQLite and for events older than the column).
    pub tx_id: i64,
}

/// Filters of a game list.
#[derive(Debug, Clone, Default)]
pub struct ListQuery<'a> {
    /// The caller.
    pub account: &'a str,
    /// Only games the caller sits in.
    pub mine: bool,
    /// Only games in which the caller must act.
    pub awaiting: bool,
    /// Status filter.
    pub status: Option<&'a str>,
    /// Ruleset filter.
    pub ruleset: Option<&'a str>,
    /// Only ids below this (newest first).
    pub before_id: Option<&'a str>,
    /// Only games with at least this many free seats.
    pub min_free_seats: Option<i32>,
    /// Page size.
    pub limit: i64,
}

impl Tx<'_> {
    /// Creates a game's index row and appends its first events.
    ///
    /// # Errors
    /// Database failure.
    pub fn create_game(
        &mut self,
        row: &GameRow,
        index: &GameIndex,
        events: &[NewEvent],
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::insert_into(games::table)
                .values(row.clone())
                .execute(c)
                .map_err(conflict_or)
        })?;
        self.insert_events(&row.id, 0, events)?;
        self.write_seats(&row.id, index)
    }

    /// The game's index row.
    ///
    /// # Errors
    /// Database failure.
    pub fn game(&mut self, id: &str) -> Result<Option<GameRow>, StoreError> {
        on!(self, |c| {
            Ok(games::table
                .find(id)
                .select(GameRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// The id of the game whose invite code is `code`.
    ///
    /// # Errors
    /// Database failure.
    pub fn game_by_invite_code(&mut self, code: &str) -> Result<Option<String>, StoreError> {
        on!(self, |c| {
            Ok(games::table
                .filter(games::invite_code.eq(code))
                .select(games::id)
                .first(c)
                .optional()?)
        })
    }

    /// All events of a game in order.
    ///
    /// # Errors
    /// Database failure.
    pub fn load_events(&mut self, game: &str) -> Result<Vec<StoredEvent>, StoreError> {
        on!(self, |c| {
            Ok(events::table
                .filter(events::game_id.eq(game))
                .order(events::seq.asc())
                .select(StoredEvent::as_select())
                .load(c)?)
        })
    }

    /// The events of each of `games`, in `seq` order, in statements of at most 200 games.
    ///
    /// # Errors
    /// Database failure.
    pub fn load_streams(
        &mut self,
        games: &[String],
    ) -> Result<std::collections::HashMap<String, Vec<StoredEvent>>, StoreError> {
        let mut streams: std::collections::HashMap<String, Vec<StoredEvent>> =
            std::collections::HashMap::with_capacity(games.len());
        for chunk in games.chunks(200) {
            let rows: Vec<StoredEvent> = on!(self, |c| events::table
                .filter(events::game_id.eq_any(chunk))
                .order((events::game_id.asc(), events::seq.asc()))
                .select(StoredEvent::as_select())
                .load(c)?);
            for row in rows {
                streams.entry(row.game_id.clone()).or_default().push(row);
            }
        }
        Ok(streams)
    }

    /// A game's index row and its events after `after` (0: all), in order, read in one
    /// statement (one snapshot, one round trip); `None` when there is no such game.
    ///
    /// # Errors
    /// Database failure.
    pub fn game_and_events_after(
        &mut self,
        game: &str,
        after: i32,
    ) -> Result<Option<(GameRow, Vec<StoredEvent>)>, StoreError> {
        on!(self, |c| {
            let rows: Vec<(GameRow, Option<StoredEvent>)> = games::table
                .left_join(
                    events::table.on(events::game_id.eq(games::id).and(events::seq.gt(after))),
                )
                .filter(games::id.eq(game))
                .order(events::seq.asc())
                .select((GameRow::as_select(), events::all_columns.nullable()))
                .load(c)?;
            let Some((row, _)) = rows.first() else {
                return Ok(None);
            };
            let row = row.clone();
            Ok(Some((
                row,
                rows.into_iter().filter_map(|(_, e)| e).collect(),
            )))
        })
    }

    /// All events of a game after `after`, in order.
    ///
    /// # Errors
    /// Database failure.
    pub fn load_events_after(
        &mut self,
        game: &str,
        after: i32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        on!(self, |c| {
            Ok(events::table
                .filter(events::game_id.eq(game))
                .filter(events::seq.gt(after))
                .order(events::seq.asc())
                .select(StoredEvent::as_select())
                .load(c)?)
        })
    }

    /// Events of a game after `after` that one of `audiences` may read, at most `limit`.
    ///
    /// # Errors
    /// Database failure.
    pub fn events_page(
        &mut self,
        game: &str,
        after: i32,
        audiences: &[String],
        limit: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        on!(self, |c| {
            Ok(events::table
                .filter(events::game_id.eq(game))
                .filter(events::seq.gt(after))
                .filter(events::audience.eq_any(audiences))
                .order(events::seq.asc())
                .limit(limit)
                .select(StoredEvent::as_select())
                .load(c)?)
        })
    }

    /// Games in which some seat's move deadline is at or before `now`.
    ///
    /// # Errors
    /// Database failure.
    pub fn expired_games(
        &mut self,
        now: NaiveDateTime,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        on!(self, |c| {
            Ok(game_seats::table
                .filter(game_seats::deadline_at.le(now))
                .select(game_seats::game_id)
                .distinct()
                .limit(limit)
                .load(c)?)
        })
    }

    /// Games for a list, newest first, after the cursor id.
    ///
    /// # Errors
    /// Database failure.
    pub fn list_games(&mut self, q: &ListQuery<'_>) -> Result<Vec<GameSummaryRow>, StoreError> {
        on!(self, |c| {
            let mut query = games::table
                .select(GameRow::as_select())
                .order(games::id.desc())
                .limit(q.limit)
                .into_boxed();
            if q.mine || q.awaiting {
                let mut seats = game_seats::table
                    .filter(game_seats::account_id.eq(q.account))
                    .select(game_seats::game_id)
                    .into_boxed();
                if q.awaiting {
                    seats = seats.filter(game_seats::awaiting.eq(true));
                }
                query = query.filter(games::id.eq_any(seats));
            } else {
                // Without `mine`, a caller sees their own games and public ones.
                let seats = game_seats::table
                    .filter(game_seats::account_id.eq(q.account))
                    .select(game_seats::game_id);
                query = query.filter(games::id.eq_any(seats).or(games::public.eq(true)));
            }
            if let Some(status) = q.status {
                query = query.filter(games::status.eq(status.to_owned()));
            }
            if let Some(ruleset) = q.ruleset {
                query = query.filter(games::ruleset.eq(ruleset.to_owned()));
            }
            if let Some(free) = q.min_free_seats {
                query = query.filter(games::free_seats.ge(free));
            }
            if let Some(before) = q.before_id {
                query = query.filter(games::id.lt(before.to_owned()));
            }
            let rows: Vec<GameRow> = query.load(c)?;
            let ids: Vec<&str> = rows.iter().map(|g| g.id.as_str()).collect();
            let seats: Vec<SeatRow> = game_seats::table
                .filter(game_seats::game_id.eq_any(&ids))
                .order((game_seats::game_id, game_seats::seat))
                .select(SeatRow::as_select())
                .load(c)?;
            Ok(rows
                .into_iter()
                .map(|game| {
                    let seats = seats
                        .iter()
                        .filter(|s| s.game_id == game.id)
                        .cloned()
                        .collect();
                    GameSummaryRow { game, seats }
                })
                .collect())
        })
    }

    /// Public lobbies of a ruleset with a free seat, oldest first.
    ///
    /// # Errors
    /// Database failure.
    pub fn open_public_lobbies(
        &mut self,
        ruleset: &str,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        on!(self, |c| {
            Ok(games::table
                .filter(games::status.eq("lobby"))
                .filter(games::public.eq(true))
                .filter(games::ruleset.eq(ruleset))
                .filter(games::free_seats.gt(0))
                .order(games::id.asc())
                .limit(limit)
                .select(games::id)
                .load(c)?)
        })
    }

    /// Sets (or clears) when a rematch's reserved seats are released.
    ///
    /// # Errors
    /// Database failure.
    pub fn set_reserved_until(
        &mut self,
        game: &str,
        until: Option<NaiveDateTime>,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(games::table.find(game))
                .set(games::reserved_until.eq(until))
                .execute(c)?;
            Ok(())
        })
    }

    /// Takes a game's invite code away: nobody joins with it any more (a lobby whose host's
    /// account was deleted).
    ///
    /// # Errors
    /// Storage failure.
    pub fn clear_invite_code(&mut self, game: &str) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(games::table.find(game))
                .set(games::invite_code.eq(None::<String>))
                .execute(c)?;
            Ok(())
        })
    }

    /// Games whose reserved seats are due to be released at `now`.
    ///
    /// # Errors
    /// Database failure.
    pub fn due_reservations(
        &mut self,
        now: NaiveDateTime,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        on!(self, |c| {
            Ok(games::table
                .filter(games::reserved_until.le(now))
                .select(games::id)
                .limit(limit)
                .load(c)?)
        })
    }

    /// How many games `account` hosts that are still in the lobby.
    ///
    /// # Errors
    /// Database failure.
    pub fn open_lobbies(&mut self, account: &str) -> Result<i64, StoreError> {
        on!(self, |c| {
            Ok(games::table
                .filter(games::host_account.eq(account))
                .filter(games::status.eq("lobby"))
                .count()
                .get_result(c)?)
        })
    }
}
