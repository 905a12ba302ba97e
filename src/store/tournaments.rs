//! Store operations of the tournaments, written once and compiled for both connection types.
//!
//! A tournament is an index row in `tournaments` (status, visibility, host, version and
//! `state`, the folded aggregate as JSON: the live projection reads use), an append-only
//! stream in `tournament_events` and the `tournament_players` it was joined by. Every append
//! is a compare-and-set on the version, as for games and pads, and writes the new `state` in
//! the same transaction. On PostgreSQL every append (and creation) first takes one fixed
//! transaction-level advisory lock, so tournament events commit in the order of their
//! positions and the analysts' feed (`after=<position>`) never skips a late commit; tournament
//! appends are rare, so serialising them costs nothing that matters. SQLite serialises
//! writers anyway.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::json::JsonValue;
use super::schema::{tournament_events, tournament_players, tournaments};
use super::tx::{Conn, Tx, conflict_or, duplicate_or, on};

/// The key of the advisory lock every tournament append takes on PostgreSQL.
const APPEND_LOCK: &str = "stammtisch tournament appends";

/// A tournament's index row.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = tournaments)]
pub struct TournamentRow {
    /// Id (UUID text).
    pub id: String,
    /// Display name.
    pub name: String,
    /// `duplicate` or `swiss`.
    pub format: String,
    /// Ruleset name.
    pub ruleset: String,
    /// `open`, `running`, `finished` or `cancelled`.
    pub status: String,
    /// Listed and readable by anyone (else host, players and invite-code holders only).
    pub public: bool,
    /// The account that created it.
    pub host_account: String,
    /// Invite code of a private tournament.
    pub invite_code: Option<String>,
    /// Number of events.
    pub version: i32,
    /// Number of players joined.
    pub players: i32,
    /// Most players allowed.
    pub max_players: i32,
    /// When it starts by itself, if set.
    pub starts_at: Option<NaiveDateTime>,
    /// The running or last round, 0 before the start.
    pub current_round: i32,
    /// The folded aggregate.
    pub state: JsonValue,
    /// Creation time (UTC).
    pub created_at: NaiveDateTime,
    /// Time of the last append (UTC).
    pub updated_at: NaiveDateTime,
}

/// The index row's fields an append changes, beside the version.
#[derive(Debug, Clone)]
pub struct TournamentUpdate {
    /// New status.
    pub status: String,
    /// New number of players.
    pub players: i32,
    /// New current round.
    pub current_round: i32,
    /// The aggregate folded over every event including the appended ones.
    pub state: serde_json::Value,
}

/// A tournament event to append.
#[derive(Debug, Clone)]
pub struct NewTournamentEvent {
    /// Type name.
    pub event_type: String,
    /// Payload schema version.
    pub schema_version: i32,
    /// The event's payload, at `schema_version`.
    pub data: serde_json::Value,
}

/// A tournament event as stored.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = tournament_events)]
pub struct StoredTournamentEvent {
    /// Global position (commit order, see the module documentation).
    pub position: i64,
    /// The tournament's id.
    pub tournament_id: String,
    /// Position in the tournament's stream, from 1.
    pub seq: i32,
    /// Type name.
    pub event_type: String,
    /// Payload schema version.
    pub schema_version: i32,
    /// The payload as written, at `schema_version`.
    pub data: JsonValue,
    /// Time of the append (UTC).
    pub recorded_at: NaiveDateTime,
}

#[derive(Insertable)]
#[diesel(table_name = tournament_events)]
struct TournamentEventInsert<'a> {
    tournament_id: &'a str,
    seq: i32,
    event_type: &'a str,
    schema_version: i32,
    data: JsonValue,
    recorded_at: NaiveDateTime,
}

fn rows<'a>(
    id: &'a str,
    expected: i32,
    events: &'a [NewTournamentEvent],
    at: NaiveDateTime,
) -> Vec<TournamentEventInsert<'a>> {
    events
        .iter()
        .zip(expected + 1..)
        .map(|(e, seq)| TournamentEventInsert {
            tournament_id: id,
            seq,
            event_type: &e.event_type,
            schema_version: e.schema_version,
            data: JsonValue(e.data.clone()),
            recorded_at: at,
        })
        .collect()
}

impl Tx<'_> {
    /// On PostgreSQL, the one advisory lock every tournament write holds until commit.
    fn lock_tournament_appends(&mut self) -> Result<(), StoreError> {
        if let Conn::Pg(c) = &mut self.conn {
            diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
                .bind::<diesel::sql_types::Text, _>(APPEND_LOCK)
                .execute(*c)?;
        }
        Ok(())
    }

    /// Creates a tournament's index row and appends its first events.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the id exists, database failure.
    pub fn create_tournament(
        &mut self,
        row: &TournamentRow,
        events: &[NewTournamentEvent],
    ) -> Result<(), StoreError> {
        self.lock_tournament_appends()?;
        on!(self, |c| {
            diesel::insert_into(tournaments::table)
                .values(row.clone())
                .execute(c)
                .map_err(conflict_or)?;
            diesel::insert_into(tournament_events::table)
                .values(rows(&row.id, 0, events, self.now))
                .execute(c)
                .map_err(conflict_or)?;
            Ok(())
        })
    }

    /// The tournament's index row.
    ///
    /// # Errors
    /// Database failure.
    pub fn tournament(&mut self, id: &str) -> Result<Option<TournamentRow>, StoreError> {
        on!(self, |c| {
            Ok(tournaments::table
                .find(id)
                .select(TournamentRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// The tournament's events after `after` (its own `seq`), in order.
    ///
    /// # Errors
    /// Database failure.
    pub fn tournament_events(
        &mut self,
        id: &str,
        after: i32,
    ) -> Result<Vec<StoredTournamentEvent>, StoreError> {
        on!(self, |c| {
            Ok(tournament_events::table
                .filter(tournament_events::tournament_id.eq(id))
                .filter(tournament_events::seq.gt(after))
                .order(tournament_events::seq.asc())
                .select(StoredTournamentEvent::as_select())
                .load(c)?)
        })
    }

    /// Every tournament's events after global position `after`, in commit order, at most
    /// `limit` (the analysts' feed).
    ///
    /// # Errors
    /// Database failure.
    pub fn tournament_feed(
        &mut self,
        after: i64,
        limit: i64,
    ) -> Result<Vec<StoredTournamentEvent>, StoreError> {
        on!(self, |c| {
            Ok(tournament_events::table
                .filter(tournament_events::position.gt(after))
                .order(tournament_events::position.asc())
                .limit(limit)
                .select(StoredTournamentEvent::as_select())
                .load(c)?)
        })
    }

    /// Appends events at `expected + 1 …` and writes `update` into the index row if the
    /// tournament is still at version `expected`. [`StoreError::Conflict`] when another
    /// write came first; nothing is written then.
    ///
    /// # Errors
    /// Conflict, database failure.
    pub fn append_tournament(
        &mut self,
        id: &str,
        expected: i32,
        events: &[NewTournamentEvent],
        update: &TournamentUpdate,
    ) -> Result<(), StoreError> {
        self.lock_tournament_appends()?;
        on!(self, |c| {
            let new_version = expected + i32::try_from(events.len()).unwrap_or(i32::MAX);
            let updated = diesel::update(
                tournaments::table
                    .find(id)
                    .filter(tournaments::version.eq(expected)),
            )
            .set((
                tournaments::version.eq(new_version),
                tournaments::status.eq(&update.status),
                tournaments::players.eq(update.players),
                tournaments::current_round.eq(update.current_round),
                tournaments::state.eq(JsonValue(update.state.clone())),
                tournaments::updated_at.eq(self.now),
            ))
            .execute(c)?;
            if updated != 1 {
                return Err(StoreError::Conflict);
            }
            diesel::insert_into(tournament_events::table)
                .values(rows(id, expected, events, self.now))
                .execute(c)
                .map_err(conflict_or)?;
            Ok(())
        })
    }

    /// Rewrites only the folded `state` (and its derived columns) of a tournament, for
    /// `stammtisch rebuild-tournaments`; the version and events stay as they are.
    ///
    /// # Errors
    /// Database failure.
    pub fn set_tournament_state(
        &mut self,
        id: &str,
        update: &TournamentUpdate,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(tournaments::table.find(id))
                .set((
                    tournaments::status.eq(&update.status),
                    tournaments::players.eq(update.players),
                    tournaments::current_round.eq(update.current_round),
                    tournaments::state.eq(JsonValue(update.state.clone())),
                ))
                .execute(c)?;
            Ok(())
        })
    }

    /// Records that `account` joined the tournament.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] when it already did, database failure.
    pub fn add_tournament_player(&mut self, id: &str, account: &str) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::insert_into(tournament_players::table)
                .values((
                    tournament_players::tournament_id.eq(id),
                    tournament_players::account_id.eq(account),
                ))
                .execute(c)
                .map_err(duplicate_or)?;
            Ok(())
        })
    }

    /// Records that `account` left the tournament; whether it had joined.
    ///
    /// # Errors
    /// Database failure.
    pub fn remove_tournament_player(
        &mut self,
        id: &str,
        account: &str,
    ) -> Result<bool, StoreError> {
        on!(self, |c| {
            let n = diesel::delete(
                tournament_players::table
                    .filter(tournament_players::tournament_id.eq(id))
                    .filter(tournament_players::account_id.eq(account)),
            )
            .execute(c)?;
            Ok(n == 1)
        })
    }

    /// Ids of every tournament, for `stammtisch rebuild-tournaments`.
    ///
    /// # Errors
    /// Database failure.
    pub fn tournament_ids(&mut self) -> Result<Vec<String>, StoreError> {
        on!(self, |c| {
            Ok(tournaments::table
                .order(tournaments::id.asc())
                .select(tournaments::id)
                .load(c)?)
        })
    }
}

// What the worker looks at, and the list.
impl Tx<'_> {
    /// Ids of tournaments that may have something due at `now`: every running one, and
    /// open ones whose start time came or that are full; oldest first, at most `limit`.
    ///
    /// # Errors
    /// Database failure.
    pub fn due_tournaments(
        &mut self,
        now: NaiveDateTime,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        on!(self, |c| {
            Ok(tournaments::table
                .filter(
                    tournaments::status
                        .eq("running")
                        .or(tournaments::status.eq("open").and(
                            tournaments::starts_at
                                .le(now)
                                .or(tournaments::players.ge(tournaments::max_players)),
                        )),
                )
                .order(tournaments::updated_at.asc())
                .limit(limit)
                .select(tournaments::id)
                .load(c)?)
        })
    }
}

/// What the tournament list asks for.
pub struct TournamentListFilter<'a> {
    /// The caller: private tournaments it hosts or joined are listed for it.
    pub account: &'a str,
    /// Index statuses to list (empty: all).
    pub statuses: &'a [&'a str],
    /// Only those the caller hosts or joined.
    pub mine: bool,
    /// Ids below this one (the previous page's last; ids are time-ordered UUIDs).
    pub before_id: Option<&'a str>,
    /// Page size.
    pub limit: i64,
}

impl Tx<'_> {
    /// The tournaments a caller may see, newest first.
    ///
    /// # Errors
    /// Database failure.
    pub fn list_tournaments(
        &mut self,
        f: &TournamentListFilter<'_>,
    ) -> Result<Vec<TournamentRow>, StoreError> {
        on!(self, |c| {
            let joined = tournament_players::table
                .filter(tournament_players::account_id.eq(f.account))
                .select(tournament_players::tournament_id);
            let mut q = tournaments::table.into_boxed();
            if f.mine {
                q = q.filter(
                    tournaments::host_account
                        .eq(f.account)
                        .or(tournaments::id.eq_any(joined)),
                );
            } else {
                q = q.filter(
                    tournaments::public
                        .eq(true)
                        .or(tournaments::host_account.eq(f.account))
                        .or(tournaments::id.eq_any(joined)),
                );
            }
            if !f.statuses.is_empty() {
                q = q.filter(tournaments::status.eq_any(f.statuses.to_vec()));
            }
            if let Some(before) = f.before_id {
                q = q.filter(tournaments::id.lt(before));
            }
            Ok(q.order(tournaments::id.desc())
                .limit(f.limit)
                .select(TournamentRow::as_select())
                .load(c)?)
        })
    }
}
