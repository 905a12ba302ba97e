//! Every store operation, written once and compiled for both connection types.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};

use super::StoreError;
use super::json::JsonValue;
use super::schema::{
    accounts, events, game_seats, games, idempotency_keys, settings, stream_tickets,
};

/// An account as stored.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, serde::Deserialize)]
#[diesel(table_name = accounts)]
pub struct AccountRow {
    /// Id (UUID text).
    pub id: String,
    /// The name people see and log in with, unique among live accounts regardless of case.
    pub name: String,
    /// Argon2id PHC string; `None` for guests.
    pub password_hash: Option<String>,
    /// Password-less quick-play account.
    pub guest: bool,
    /// Comma-separated roles.
    pub roles: String,
    /// Creation time (UTC).
    pub created_at: NaiveDateTime,
    /// Bumped to revoke every token issued before (tokens carry the version they were
    /// issued with).
    pub token_version: i32,
    /// When the account was deleted (its name and credentials are gone then).
    pub deleted_at: Option<NaiveDateTime>,
    /// When it became registered (at creation, or when the guest registered); `None` for a
    /// guest. Never changes afterwards, so the ratings projection can rely on it.
    pub registered_at: Option<NaiveDateTime>,
}

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

/// A stored answer to a command with an idempotency key.
#[derive(Debug, Clone)]
pub struct IdempotentRow {
    /// HTTP status of the first answer.
    pub status: i32,
    /// The first answer's body.
    pub response: serde_json::Value,
    /// SHA-256 of the request it answered (`None` for keys stored before it was kept).
    pub request_hash: Option<String>,
    /// When it was stored.
    pub created_at: NaiveDateTime,
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

/// What a group-commit batch asks before it decides ([`Tx::batch_reads`]).
#[derive(Debug, Clone, Copy)]
pub struct BatchQuery<'a> {
    /// The senders' accounts whose tokens are to be checked.
    pub accounts: &'a [&'a str],
    /// The games.
    pub games: &'a [&'a str],
    /// Whether a mail address makes someone listen (mail is on).
    pub mail: bool,
    /// The commands to count against their senders' limit, where the backend counts in
    /// the same statement: each command's counter key, account, and the token version
    /// it must hold (`None`: checked already). Only those whose token holds are counted.
    pub count: &'a [(String, &'a str, Option<i32>)],
    /// The counting window's start and length (seconds).
    pub window: (i64, i64),
}

/// A rate counter after hits were added: this window's hits and the previous window's.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct KeyCounts {
    /// The counter's key.
    pub key: String,
    /// Hits in the window, the added ones included.
    pub current: i32,
    /// Hits in the window before.
    pub previous: i32,
}

/// What a group-commit batch reads before it decides ([`Tx::batch_reads`]).
#[derive(Debug)]
pub struct BatchReads {
    /// The senders' accounts that exist (on PostgreSQL without `password_hash`, which
    /// the token check does not need).
    pub accounts: Vec<AccountRow>,
    /// The games' index rows that exist.
    pub games: Vec<GameRow>,
    /// The people concerned: everyone seated at these games (by their stored seats) and
    /// the senders. `None` where the backend does not read them ahead (SQLite, where a
    /// read costs no round trip); the batch then reads what it needs after deciding.
    pub people: Option<Vec<PersonRow>>,
    /// The counters of the counted commands' keys after counting them (those with a
    /// command whose token holds); `None` where the backend does not count in the
    /// statement (SQLite keeps its counters in the process).
    pub counts: Option<Vec<KeyCounts>>,
}

/// A person concerned by a batch: the name its views show, and whether anything listens
/// for its news (a webhook, or a mail address when mail is on).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct PersonRow {
    /// Account id.
    pub id: String,
    /// Account name.
    pub name: String,
    /// Has a webhook, or a mail address (when asked with `mail`).
    pub listens: bool,
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

/// A place in the analysts' feed: the key `(tx_id, position)` of the last event read.
/// The feed is ordered by this key; on SQLite `tx_id` is always 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedCursor {
    /// The event's transaction key.
    pub tx_id: i64,
    /// The event's global position.
    pub position: i64,
}

impl FeedCursor {
    /// Before the first event.
    pub const START: Self = Self {
        tx_id: -1,
        position: 0,
    };
}

impl From<&StoredEvent> for FeedCursor {
    fn from(e: &StoredEvent) -> Self {
        Self {
            tx_id: e.tx_id,
            position: e.position,
        }
    }
}

/// How far the feed lags behind what has committed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedLag {
    /// Committed public events that readers cannot see yet, because an older transaction
    /// (anywhere in the database cluster) is still running.
    pub held_events: i64,
    /// Age in seconds of the oldest of them (0 when none is held).
    pub seconds: f64,
    /// Events of transactions with a key below this are all readable (SQLite: all).
    pub horizon: i64,
    /// The key of the next transaction to begin: at or below every later one (SQLite: 0).
    pub next: i64,
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

/// The operations of one transaction (or one connection, for reads).
pub trait Tx {
    /// Inserts an account; [`StoreError::Duplicate`] when the name is taken.
    ///
    /// # Errors
    /// Duplicate name, database failure.
    fn insert_account(&mut self, row: &AccountRow) -> Result<(), StoreError>;
    /// A registered (non-guest), not deleted account by name, case-insensitively.
    ///
    /// # Errors
    /// Database failure.
    fn account_by_name(&mut self, name: &str) -> Result<Option<AccountRow>, StoreError>;
    /// An account by id.
    ///
    /// # Errors
    /// Database failure.
    fn account_by_id(&mut self, id: &str) -> Result<Option<AccountRow>, StoreError>;
    /// Replaces an account's roles.
    ///
    /// # Errors
    /// Database failure.
    fn set_roles(&mut self, id: &str, roles: &str) -> Result<(), StoreError>;
    /// What a group-commit batch reads before it decides: the senders' accounts and the
    /// games' index rows (those that exist, in no particular order), and, where the
    /// backend does so in the same round trip (PostgreSQL), the people concerned and the
    /// command count (see [`BatchReads`]).
    ///
    /// # Errors
    /// Database failure.
    fn batch_reads(&mut self, query: &BatchQuery<'_>) -> Result<BatchReads, StoreError>;
    /// A setting.
    ///
    /// # Errors
    /// Database failure.
    fn setting(&mut self, key: &str) -> Result<Option<String>, StoreError>;
    /// Inserts a setting; [`StoreError::Duplicate`] when it exists.
    ///
    /// # Errors
    /// Duplicate, database failure.
    fn insert_setting(&mut self, key: &str, value: &str) -> Result<(), StoreError>;
    /// Creates a game's index row and appends its first events.
    ///
    /// # Errors
    /// Database failure.
    fn create_game(
        &mut self,
        row: &GameRow,
        index: &GameIndex,
        events: &[NewEvent],
    ) -> Result<(), StoreError>;
    /// The game's index row.
    ///
    /// # Errors
    /// Database failure.
    fn game(&mut self, id: &str) -> Result<Option<GameRow>, StoreError>;
    /// The id of the game whose invite code is `code`.
    ///
    /// # Errors
    /// Database failure.
    fn game_by_invite_code(&mut self, code: &str) -> Result<Option<String>, StoreError>;
    /// All events of a game in order.
    ///
    /// # Errors
    /// Database failure.
    fn load_events(&mut self, game: &str) -> Result<Vec<StoredEvent>, StoreError>;
    /// A game's index row and its events after `after` (0: all), in order, read in one
    /// statement (one snapshot, one round trip); `None` when there is no such game.
    ///
    /// # Errors
    /// Database failure.
    fn game_and_events_after(
        &mut self,
        game: &str,
        after: i32,
    ) -> Result<Option<(GameRow, Vec<StoredEvent>)>, StoreError>;
    /// All events of a game after `after`, in order.
    ///
    /// # Errors
    /// Database failure.
    fn load_events_after(&mut self, game: &str, after: i32)
    -> Result<Vec<StoredEvent>, StoreError>;
    /// Events of a game after `after` that one of `audiences` may read, at most `limit`.
    ///
    /// # Errors
    /// Database failure.
    fn events_page(
        &mut self,
        game: &str,
        after: i32,
        audiences: &[String],
        limit: i64,
    ) -> Result<Vec<StoredEvent>, StoreError>;
    /// Appends events at `expected + 1 …` if the game is still at version `expected`, and
    /// rewrites its index. [`StoreError::Conflict`] when another write came first; nothing
    /// is written then.
    ///
    /// # Errors
    /// Conflict, database failure.
    fn append(
        &mut self,
        game: &str,
        expected: i32,
        index: &GameIndex,
        events: &[NewEvent],
    ) -> Result<(), StoreError>;
    /// [`Tx::append`] for several games at once (each at most once), in one statement on
    /// PostgreSQL: whether each append was made, in order. An append whose game moved on
    /// writes nothing, and the others are made all the same.
    ///
    /// # Errors
    /// Database failure.
    fn append_many(&mut self, appends: &[Append<'_>]) -> Result<Vec<bool>, StoreError>;
    /// The events of each game `(id, after)` after `after`, ordered by game and seq (one
    /// statement on PostgreSQL).
    ///
    /// # Errors
    /// Database failure.
    fn events_after_many(&mut self, after: &[(&str, i32)]) -> Result<Vec<StoredEvent>, StoreError>;
    /// The stored first response to a command with this idempotency key.
    ///
    /// # Errors
    /// Database failure.
    fn idempotent_response(
        &mut self,
        game: &str,
        account: &str,
        key: &str,
    ) -> Result<Option<IdempotentRow>, StoreError>;
    /// Forgets one idempotency key (an expired one, before the key is used anew).
    ///
    /// # Errors
    /// Database failure.
    fn forget_idempotency_key(
        &mut self,
        game: &str,
        account: &str,
        key: &str,
    ) -> Result<(), StoreError>;
    /// Forgets the idempotency keys stored before `before`.
    ///
    /// # Errors
    /// Database failure.
    fn prune_idempotency_keys(&mut self, before: NaiveDateTime) -> Result<usize, StoreError>;
    /// Stores the first response to a command with this key.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the key was stored concurrently, database failure.
    fn save_idempotent_response(
        &mut self,
        game: &str,
        account: &str,
        key: &str,
        request_hash: &str,
        status: i32,
        response: &serde_json::Value,
    ) -> Result<(), StoreError>;
    /// Public events of all games after `after`, in feed order: commit order, gapless
    /// (PostgreSQL: only events of transactions below the oldest one still running, in
    /// `(tx_id, position)` order; SQLite: position order, its writers are serialised).
    ///
    /// # Errors
    /// Database failure.
    fn feed_page(&mut self, after: FeedCursor, limit: i64) -> Result<Vec<StoredEvent>, StoreError>;
    /// The feed cursor just after the event at `position` (`None`: no such event).
    ///
    /// # Errors
    /// Database failure.
    fn feed_cursor(&mut self, position: i64) -> Result<Option<FeedCursor>, StoreError>;
    /// How far the feed lags behind what has committed (always nothing on SQLite).
    ///
    /// # Errors
    /// Database failure.
    fn feed_lag(&mut self) -> Result<FeedLag, StoreError>;
    /// Games in which some seat's move deadline is at or before `now`.
    ///
    /// # Errors
    /// Database failure.
    fn expired_games(&mut self, now: NaiveDateTime, limit: i64) -> Result<Vec<String>, StoreError>;
    /// Games for a list, newest first, after the cursor id.
    ///
    /// # Errors
    /// Database failure.
    fn list_games(&mut self, query: &ListQuery<'_>) -> Result<Vec<GameSummaryRow>, StoreError>;
    /// The webhook operations on the same transaction (the outbox is written beside the
    /// events that cause a notification).
    fn webhooks(&mut self) -> &mut dyn super::webhooks::WebhookTx;
    /// The score-pad operations on the same connection.
    fn pads(&mut self) -> &mut dyn super::pads::PadTx;
    /// The player-platform operations (results, ratings) on the same connection.
    fn platform(&mut self) -> &mut dyn super::platform::PlatformTx;
    /// The account lifecycle and mail-reminder operations on the same connection.
    fn account_mail(&mut self) -> &mut dyn super::accounts::AccountMailTx;
    /// Serialises the transactions that name `key` until this one ends (PostgreSQL: an
    /// advisory lock; SQLite's write transactions are serialised anyway).
    ///
    /// # Errors
    /// Database failure.
    fn lock_named(&mut self, key: &str) -> Result<(), StoreError>;
    /// Public lobbies of a ruleset with a free seat, oldest first.
    ///
    /// # Errors
    /// Database failure.
    fn open_public_lobbies(&mut self, ruleset: &str, limit: i64)
    -> Result<Vec<String>, StoreError>;
    /// Sets (or clears) when a rematch's reserved seats are released.
    ///
    /// # Errors
    /// Database failure.
    fn set_reserved_until(
        &mut self,
        game: &str,
        until: Option<NaiveDateTime>,
    ) -> Result<(), StoreError>;
    /// Games whose reserved seats are due to be released at `now`.
    ///
    /// # Errors
    /// Database failure.
    fn due_reservations(
        &mut self,
        now: NaiveDateTime,
        limit: i64,
    ) -> Result<Vec<String>, StoreError>;
    /// How many games `account` hosts that are still in the lobby.
    ///
    /// # Errors
    /// Database failure.
    fn open_lobbies(&mut self, account: &str) -> Result<i64, StoreError>;
    /// Stores a stream ticket (by its hash) issued under the account's token version
    /// `token_version`, and forgets expired ones.
    ///
    /// # Errors
    /// Database failure.
    fn insert_stream_ticket(
        &mut self,
        ticket_hash: &str,
        account: &str,
        token_version: i32,
        game: &str,
        expires_at: NaiveDateTime,
    ) -> Result<(), StoreError>;
    /// Redeems a stream ticket for `game`: deletes it and returns its account and the token
    /// version it was issued under when it exists, is for this game and has not expired at
    /// `now`. A ticket works once.
    ///
    /// # Errors
    /// Database failure.
    fn redeem_stream_ticket(
        &mut self,
        ticket_hash: &str,
        game: &str,
        now: NaiveDateTime,
    ) -> Result<Option<(String, i32)>, StoreError>;
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

diesel::define_sql_function! {
    /// SQL `lower()`, which the case-insensitive name index is built on.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

diesel::define_sql_function! {
    /// PostgreSQL: the feed key of the current transaction (migration `000040_feed_xid`).
    fn feed_tx() -> diesel::sql_types::BigInt;
}

fn now() -> NaiveDateTime {
    chrono::Utc::now().naive_utc()
}

fn is_unique_violation(e: &DieselError) -> bool {
    matches!(
        e,
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)
    )
}

/// A unique violation as [`StoreError::Duplicate`], anything else as a query error.
pub(super) fn duplicate_or(e: DieselError) -> StoreError {
    if is_unique_violation(&e) {
        StoreError::Duplicate
    } else {
        StoreError::Query(e)
    }
}

fn conflict_or(e: DieselError) -> StoreError {
    if is_unique_violation(&e) {
        StoreError::Conflict
    } else {
        StoreError::Query(e)
    }
}

macro_rules! impl_tx {
    ($conn:ty) => {
        impl Tx for $conn {
            fn insert_account(&mut self, row: &AccountRow) -> Result<(), StoreError> {
                diesel::insert_into(accounts::table)
                    .values(row.clone())
                    .execute(self)
                    .map_err(duplicate_or)?;
                Ok(())
            }

            fn account_by_name(&mut self, name: &str) -> Result<Option<AccountRow>, StoreError> {
                Ok(accounts::table
                    .filter(accounts::guest.eq(false))
                    .filter(accounts::deleted_at.is_null())
                    .filter(lower(accounts::name).eq(name.to_lowercase()))
                    .select(AccountRow::as_select())
                    .first(self)
                    .optional()?)
            }

            fn account_by_id(&mut self, id: &str) -> Result<Option<AccountRow>, StoreError> {
                Ok(accounts::table
                    .find(id)
                    .select(AccountRow::as_select())
                    .first(self)
                    .optional()?)
            }

            fn batch_reads(&mut self, query: &BatchQuery<'_>) -> Result<BatchReads, StoreError> {
                ReadTogether::batch_reads(self, query)
            }

            fn set_roles(&mut self, id: &str, roles: &str) -> Result<(), StoreError> {
                diesel::update(accounts::table.find(id))
                    .set(accounts::roles.eq(roles))
                    .execute(self)?;
                Ok(())
            }

            fn setting(&mut self, key: &str) -> Result<Option<String>, StoreError> {
                Ok(settings::table
                    .find(key)
                    .select(settings::value)
                    .first(self)
                    .optional()?)
            }

            fn insert_setting(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
                diesel::insert_into(settings::table)
                    .values((settings::key.eq(key), settings::value.eq(value)))
                    .execute(self)
                    .map_err(duplicate_or)?;
                Ok(())
            }

            fn create_game(
                &mut self,
                row: &GameRow,
                index: &GameIndex,
                events: &[NewEvent],
            ) -> Result<(), StoreError> {
                diesel::insert_into(games::table)
                    .values(row.clone())
                    .execute(self)
                    .map_err(conflict_or)?;
                insert_events(self, &row.id, 0, events)?;
                write_seats(self, &row.id, index)
            }

            fn game(&mut self, id: &str) -> Result<Option<GameRow>, StoreError> {
                Ok(games::table
                    .find(id)
                    .select(GameRow::as_select())
                    .first(self)
                    .optional()?)
            }

            fn game_by_invite_code(&mut self, code: &str) -> Result<Option<String>, StoreError> {
                Ok(games::table
                    .filter(games::invite_code.eq(code))
                    .select(games::id)
                    .first(self)
                    .optional()?)
            }

            fn load_events(&mut self, game: &str) -> Result<Vec<StoredEvent>, StoreError> {
                Ok(events::table
                    .filter(events::game_id.eq(game))
                    .order(events::seq.asc())
                    .select(StoredEvent::as_select())
                    .load(self)?)
            }

            fn game_and_events_after(
                &mut self,
                game: &str,
                after: i32,
            ) -> Result<Option<(GameRow, Vec<StoredEvent>)>, StoreError> {
                let rows: Vec<(GameRow, Option<StoredEvent>)> = games::table
                    .left_join(
                        events::table.on(events::game_id.eq(games::id).and(events::seq.gt(after))),
                    )
                    .filter(games::id.eq(game))
                    .order(events::seq.asc())
                    .select((GameRow::as_select(), events::all_columns.nullable()))
                    .load(self)?;
                let Some((row, _)) = rows.first() else {
                    return Ok(None);
                };
                let row = row.clone();
                Ok(Some((
                    row,
                    rows.into_iter().filter_map(|(_, e)| e).collect(),
                )))
            }

            fn load_events_after(
                &mut self,
                game: &str,
                after: i32,
            ) -> Result<Vec<StoredEvent>, StoreError> {
                Ok(events::table
                    .filter(events::game_id.eq(game))
                    .filter(events::seq.gt(after))
                    .order(events::seq.asc())
                    .select(StoredEvent::as_select())
                    .load(self)?)
            }

            fn events_page(
                &mut self,
                game: &str,
                after: i32,
                audiences: &[String],
                limit: i64,
            ) -> Result<Vec<StoredEvent>, StoreError> {
                Ok(events::table
                    .filter(events::game_id.eq(game))
                    .filter(events::seq.gt(after))
                    .filter(events::audience.eq_any(audiences))
                    .order(events::seq.asc())
                    .limit(limit)
                    .select(StoredEvent::as_select())
                    .load(self)?)
            }

            fn append(
                &mut self,
                game: &str,
                expected: i32,
                index: &GameIndex,
                events: &[NewEvent],
            ) -> Result<(), StoreError> {
                let made = Appends::append_rows(
                    self,
                    &[Append {
                        game,
                        expected,
                        index,
                        events,
                    }],
                    now(),
                )?;
                if made == [true] {
                    Ok(())
                } else {
                    Err(StoreError::Conflict)
                }
            }

            fn append_many(&mut self, appends: &[Append<'_>]) -> Result<Vec<bool>, StoreError> {
                if appends.is_empty() {
                    return Ok(Vec::new());
                }
                Appends::append_rows(self, appends, now())
            }

            fn events_after_many(
                &mut self,
                after: &[(&str, i32)],
            ) -> Result<Vec<StoredEvent>, StoreError> {
                if after.is_empty() {
                    return Ok(Vec::new());
                }
                EventsAfter::events_after(self, after)
            }

            fn idempotent_response(
                &mut self,
                game: &str,
                account: &str,
                key: &str,
            ) -> Result<Option<IdempotentRow>, StoreError> {
                let row: Option<(i32, JsonValue, Option<String>, NaiveDateTime)> =
                    idempotency_keys::table
                        .find((game, account, key))
                        .select((
                            idempotency_keys::status,
                            idempotency_keys::response,
                            idempotency_keys::request_hash,
                            idempotency_keys::created_at,
                        ))
                        .first(self)
                        .optional()?;
                Ok(row.map(
                    |(status, response, request_hash, created_at)| IdempotentRow {
                        status,
                        response: response.0,
                        request_hash,
                        created_at,
                    },
                ))
            }

            fn forget_idempotency_key(
                &mut self,
                game: &str,
                account: &str,
                key: &str,
            ) -> Result<(), StoreError> {
                diesel::delete(idempotency_keys::table.find((game, account, key))).execute(self)?;
                Ok(())
            }

            fn prune_idempotency_keys(
                &mut self,
                before: NaiveDateTime,
            ) -> Result<usize, StoreError> {
                Ok(diesel::delete(
                    idempotency_keys::table.filter(idempotency_keys::created_at.lt(before)),
                )
                .execute(self)?)
            }

            fn save_idempotent_response(
                &mut self,
                game: &str,
                account: &str,
                key: &str,
                request_hash: &str,
                status: i32,
                response: &serde_json::Value,
            ) -> Result<(), StoreError> {
                diesel::insert_into(idempotency_keys::table)
                    .values((
                        idempotency_keys::game_id.eq(game),
                        idempotency_keys::account_id.eq(account),
                        idempotency_keys::key.eq(key),
                        idempotency_keys::request_hash.eq(request_hash),
                        idempotency_keys::status.eq(status),
                        idempotency_keys::response.eq(JsonValue(response.clone())),
                        idempotency_keys::created_at.eq(now()),
                    ))
                    .execute(self)
                    .map_err(conflict_or)?;
                Ok(())
            }

            fn feed_page(
                &mut self,
                after: FeedCursor,
                limit: i64,
            ) -> Result<Vec<StoredEvent>, StoreError> {
                Feed::page(self, after, limit)
            }

            fn feed_cursor(&mut self, position: i64) -> Result<Option<FeedCursor>, StoreError> {
                let tx_id: Option<i64> = events::table
                    .find(position)
                    .select(events::tx_id)
                    .first(self)
                    .optional()?;
                Ok(tx_id.map(|tx_id| FeedCursor { tx_id, position }))
            }

            fn feed_lag(&mut self) -> Result<FeedLag, StoreError> {
                Feed::lag(self)
            }

            fn expired_games(
                &mut self,
                now: NaiveDateTime,
                limit: i64,
            ) -> Result<Vec<String>, StoreError> {
                Ok(game_seats::table
                    .filter(game_seats::deadline_at.le(now))
                    .select(game_seats::game_id)
                    .distinct()
                    .limit(limit)
                    .load(self)?)
            }

            fn list_games(&mut self, q: &ListQuery<'_>) -> Result<Vec<GameSummaryRow>, StoreError> {
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
                let rows: Vec<GameRow> = query.load(self)?;
                let ids: Vec<&str> = rows.iter().map(|g| g.id.as_str()).collect();
                let seats: Vec<SeatRow> = game_seats::table
                    .filter(game_seats::game_id.eq_any(&ids))
                    .order((game_seats::game_id, game_seats::seat))
                    .select(SeatRow::as_select())
                    .load(self)?;
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
            }

            fn webhooks(&mut self) -> &mut dyn super::webhooks::WebhookTx {
                self
            }

            fn pads(&mut self) -> &mut dyn super::pads::PadTx {
                self
            }

            fn platform(&mut self) -> &mut dyn super::platform::PlatformTx {
                self
            }

            fn account_mail(&mut self) -> &mut dyn super::accounts::AccountMailTx {
                self
            }

            fn lock_named(&mut self, key: &str) -> Result<(), StoreError> {
                Locks::lock(self, key)
            }

            fn open_public_lobbies(
                &mut self,
                ruleset: &str,
                limit: i64,
            ) -> Result<Vec<String>, StoreError> {
                Ok(games::table
                    .filter(games::status.eq("lobby"))
                    .filter(games::public.eq(true))
                    .filter(games::ruleset.eq(ruleset))
                    .filter(games::free_seats.gt(0))
                    .order(games::id.asc())
                    .limit(limit)
                    .select(games::id)
                    .load(self)?)
            }

            fn set_reserved_until(
                &mut self,
                game: &str,
                until: Option<NaiveDateTime>,
            ) -> Result<(), StoreError> {
                diesel::update(games::table.find(game))
                    .set(games::reserved_until.eq(until))
                    .execute(self)?;
                Ok(())
            }

            fn due_reservations(
                &mut self,
                now: NaiveDateTime,
                limit: i64,
            ) -> Result<Vec<String>, StoreError> {
                Ok(games::table
                    .filter(games::reserved_until.le(now))
                    .select(games::id)
                    .limit(limit)
                    .load(self)?)
            }

            fn open_lobbies(&mut self, account: &str) -> Result<i64, StoreError> {
                Ok(games::table
                    .filter(games::host_account.eq(account))
                    .filter(games::status.eq("lobby"))
                    .count()
                    .get_result(self)?)
            }

            fn insert_stream_ticket(
                &mut self,
                ticket_hash: &str,
                account: &str,
                token_version: i32,
                game: &str,
                expires_at: NaiveDateTime,
            ) -> Result<(), StoreError> {
                diesel::delete(stream_tickets::table.filter(stream_tickets::expires_at.lt(now())))
                    .execute(self)?;
                diesel::insert_into(stream_tickets::table)
                    .values((
                        stream_tickets::ticket_hash.eq(ticket_hash),
                        stream_tickets::account_id.eq(account),
                        stream_tickets::game_id.eq(game),
                        stream_tickets::expires_at.eq(expires_at),
                        stream_tickets::token_version.eq(token_version),
                    ))
                    .execute(self)?;
                Ok(())
            }

            fn redeem_stream_ticket(
                &mut self,
                ticket_hash: &str,
                game: &str,
                now: NaiveDateTime,
            ) -> Result<Option<(String, i32)>, StoreError> {
                let found: Option<(String, String, NaiveDateTime, i32)> = stream_tickets::table
                    .find(ticket_hash)
                    .select((
                        stream_tickets::account_id,
                        stream_tickets::game_id,
                        stream_tickets::expires_at,
                        stream_tickets::token_version,
                    ))
                    .first(self)
                    .optional()?;
                let Some((account, for_game, expires_at, token_version)) = found else {
                    return Ok(None);
                };
                // Deleting is the redemption: of two concurrent redeemers only one deletes
                // the row (the other's DELETE matches nothing).
                let deleted =
                    diesel::delete(stream_tickets::table.find(ticket_hash)).execute(self)?;
                Ok((deleted == 1 && for_game == game && expires_at > now)
                    .then_some((account, token_version)))
            }
        }

        impl InsertEvents for $conn {
            fn insert_events_impl(
                &mut self,
                game: &str,
                expected: i32,
                events: &[NewEvent],
            ) -> Result<(), StoreError> {
                let at = now();
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
                    .execute(self)
                    .map_err(conflict_or)?;
                Ok(())
            }

            fn write_seats_impl(
                &mut self,
                game: &str,
                index: &GameIndex,
            ) -> Result<(), StoreError> {
                Seats::write(self, game, index)
            }
        }
    };
}

/// The feed's order and the append's compare-and-set, per backend.
trait Feed {
    fn page(&mut self, after: FeedCursor, limit: i64) -> Result<Vec<StoredEvent>, StoreError>;
    fn lag(&mut self) -> Result<FeedLag, StoreError>;
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

/// The events of several games after a version each, per backend.
trait EventsAfter {
    fn events_after(&mut self, after: &[(&str, i32)]) -> Result<Vec<StoredEvent>, StoreError>;
}

#[derive(diesel::QueryableByName)]
struct Lag {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    held: i64,
    #[diesel(sql_type = diesel::sql_types::Double)]
    seconds: f64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    horizon: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    next: i64,
}

impl Feed for diesel::pg::PgConnection {
    /// One statement, so the horizon and the rows come from the same snapshot: every
    /// transaction below `feed_horizon()` has ended, and every later one gets a larger
    /// `tx_id`, so nothing can commit behind the cursor. `feed_page()` (migration
    /// `000040_feed_xid`) is a keyset range scan of the partial index
    /// `events_feed (tx_id, position)`, whatever the table's statistics say.
    fn page(&mut self, after: FeedCursor, limit: i64) -> Result<Vec<StoredEvent>, StoreError> {
        use diesel::sql_types::BigInt;
        Ok(diesel::sql_query(
            "SELECT position, event_id, game_id, seq, event_type, schema_version, audience, \
             data, recorded_at, tx_id FROM feed_page($1, $2, $3)",
        )
        .bind::<BigInt, _>(after.tx_id)
        .bind::<BigInt, _>(after.position)
        .bind::<BigInt, _>(limit)
        .load(self)?)
    }

    fn lag(&mut self) -> Result<FeedLag, StoreError> {
        let row: Lag = diesel::sql_query(
            "SELECT count(*) AS held, COALESCE(EXTRACT(EPOCH FROM \
             (now() AT TIME ZONE 'UTC') - min(recorded_at))::float8, 0) AS seconds, \
             feed_horizon() AS horizon, feed_horizon() \
             - pg_snapshot_xmin(pg_current_snapshot())::text::bigint \
             + pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS next \
             FROM events WHERE audience = 'public' AND tx_id >= feed_horizon()",
        )
        .get_result(self)?;
        Ok(FeedLag {
            held_events: row.held,
            seconds: row.seconds.max(0.0),
            horizon: row.horizon,
            next: row.next,
        })
    }
}

impl Feed for diesel::sqlite::SqliteConnection {
    /// Writers are serialised: AUTOINCREMENT positions are in commit order.
    fn page(&mut self, after: FeedCursor, limit: i64) -> Result<Vec<StoredEvent>, StoreError> {
        Ok(events::table
            .filter(events::position.gt(after.position))
            .filter(events::audience.eq("public"))
            .order(events::position.asc())
            .limit(limit)
            .select(StoredEvent::as_select())
            .load(self)?)
    }

    fn lag(&mut self) -> Result<FeedLag, StoreError> {
        Ok(FeedLag {
            held_events: 0,
            seconds: 0.0,
            horizon: i64::MAX,
            next: 0,
        })
    }
}

impl Appends for diesel::pg::PgConnection {
    /// One statement for any number of games: the compare-and-sets, the events and the
    /// changed seats as data-modifying CTEs that write only for the games whose
    /// compare-and-set matched. A command's cost on PostgreSQL is mostly round trips (each
    /// one two context switches, on the server's and on the backend's side; `perf` put a
    /// quarter of the server's CPU in switching), so this is one statement for a whole
    /// batch of commands ([`crate::games`]'s group commit) instead of three per command;
    /// the text is the same for any number of games, events or seats (arrays), so the
    /// statement stays prepared.
    ///
    /// The row lock orders concurrent appends to one game; `last_tx <= feed_tx()` makes
    /// the feed agree: an append whose transaction id was taken before the previous
    /// append's (it wrote something else first) would sort before it, so it conflicts
    /// and is retried in a new transaction instead. Games are locked in id order, so two
    /// batches that share games wait for each other instead of deadlocking. Seats: a
    /// game's seats are fixed when it is created, so only rows that differ are rewritten.
    fn append_rows(
        &mut self,
        appends: &[Append<'_>],
        at: NaiveDateTime,
    ) -> Result<Vec<bool>, StoreError> {
        use diesel::sql_types::{Array, Bool, Integer, Nullable, Text, Timestamp};
        let mut order: Vec<&Append<'_>> = appends.iter().collect();
        order.sort_by_key(|a| a.game);
        let games: Vec<&str> = order.iter().map(|a| a.game).collect();
        let expected: Vec<i32> = order.iter().map(|a| a.expected).collect();
        let versions: Vec<i32> = order
            .iter()
            .map(|a| a.expected + i32::try_from(a.events.len()).unwrap_or(i32::MAX))
            .collect();
        let statuses: Vec<&str> = order.iter().map(|a| a.index.status.as_str()).collect();
        let public: Vec<Option<bool>> = order.iter().map(|a| a.index.public).collect();
        let free: Vec<i32> = order.iter().map(|a| a.index.free_seats).collect();
        let events: Vec<(&str, i32, &NewEvent)> = order
            .iter()
            .flat_map(|a| (1..).zip(a.events).map(|(n, e)| (a.game, n, e)))
            .collect();
        let event_games: Vec<&str> = events.iter().map(|(g, _, _)| *g).collect();
        let ids: Vec<String> = events
            .iter()
            .map(|_| uuid::Uuid::now_v7().to_string())
            .collect();
        let offsets: Vec<i32> = events.iter().map(|(_, n, _)| *n).collect();
        let types: Vec<&str> = events
            .iter()
            .map(|(_, _, e)| e.event_type.as_str())
            .collect();
        let schemas: Vec<i32> = events.iter().map(|(_, _, e)| e.schema_version).collect();
        let audiences: Vec<&str> = events.iter().map(|(_, _, e)| e.audience.as_str()).collect();
        let data: Vec<JsonValue> = events
            .iter()
            .map(|(_, _, e)| JsonValue(e.data.clone()))
            .collect();
        let seats: Vec<&SeatRow> = order.iter().flat_map(|a| &a.index.seats).collect();
        debug_assert!(
            order
                .iter()
                .all(|a| a.index.seats.iter().all(|s| s.game_id == a.game))
        );
        let seat_games: Vec<&str> = seats.iter().map(|s| s.game_id.as_str()).collect();
        let seat_numbers: Vec<i32> = seats.iter().map(|s| s.seat).collect();
        let accounts: Vec<Option<&str>> = seats.iter().map(|s| s.account_id.as_deref()).collect();
        let awaiting: Vec<bool> = seats.iter().map(|s| s.awaiting).collect();
        let actions: Vec<Option<&str>> = seats.iter().map(|s| s.action.as_deref()).collect();
        let deadlines: Vec<Option<NaiveDateTime>> = seats.iter().map(|s| s.deadline_at).collect();
        let made: Vec<AppendedGame> = super::prepared::prepared(
            "WITH input AS ( \
                 SELECT * FROM unnest($1::text[], $2::int4[], $3::int4[], $4::text[], \
                                      $5::bool[], $6::int4[]) WITH ORDINALITY \
                        AS i(game, expected, version, status, public, free_seats, ord)), \
             stamp AS (SELECT $7::timestamp AS at, feed_tx() AS tx), \
             locked AS ( \
                 SELECT g.id FROM games g JOIN input i ON g.id = i.game \
                  ORDER BY i.ord FOR UPDATE OF g), \
             cas AS ( \
                 UPDATE games g SET version = i.version, status = i.status, \
                        updated_at = stamp.at, public = COALESCE(i.public, g.public), \
                        free_seats = i.free_seats, last_tx = stamp.tx \
                   FROM input i, stamp, (SELECT count(*) FROM locked) l \
                  WHERE g.id = i.game AND g.version = i.expected AND g.last_tx <= stamp.tx \
              RETURNING g.id, i.expected, stamp.at, stamp.tx), \
             appended AS ( \
                 INSERT INTO events (event_id, game_id, seq, event_type, schema_version, \
                                     audience, data, recorded_at, tx_id) \
                 SELECT e.event_id, cas.id, cas.expected + e.n, e.event_type, \
                        e.schema_version, e.audience, e.data, cas.at, cas.tx \
                   FROM unnest($8::text[], $9::text[], $10::int4[], $11::text[], \
                               $12::int4[], $13::text[], $14::jsonb[]) WITH ORDINALITY \
                        AS e(game, event_id, n, event_type, schema_version, audience, data, \
                             ord) \
                   JOIN cas ON cas.id = e.game \
                  ORDER BY e.ord), \
             seated AS ( \
                 INSERT INTO game_seats AS s (game_id, seat, account_id, awaiting, action, \
                                              deadline_at) \
                 SELECT cas.id, n.seat, n.account_id, n.awaiting, n.action, n.deadline_at \
                   FROM unnest($15::text[], $16::int4[], $17::text[], $18::bool[], \
                               $19::text[], $20::timestamp[]) \
                        AS n(game, seat, account_id, awaiting, action, deadline_at) \
                   JOIN cas ON cas.id = n.game \
                 ON CONFLICT (game_id, seat) DO UPDATE \
                    SET account_id = excluded.account_id, awaiting = excluded.awaiting, \
                        action = excluded.action, deadline_at = excluded.deadline_at \
                  WHERE s.account_id IS DISTINCT FROM excluded.account_id \
                     OR s.awaiting IS DISTINCT FROM excluded.awaiting \
                     OR s.action IS DISTINCT FROM excluded.action \
                     OR s.deadline_at IS DISTINCT FROM excluded.deadline_at) \
             SELECT id FROM cas",
        )
        .bind::<Array<Text>, _>(&games)
        .bind::<Array<Integer>, _>(&expected)
        .bind::<Array<Integer>, _>(&versions)
        .bind::<Array<Text>, _>(&statuses)
        .bind::<Array<Nullable<Bool>>, _>(&public)
        .bind::<Array<Integer>, _>(&free)
        .bind::<Timestamp, _>(at)
        .bind::<Array<Text>, _>(&event_games)
        .bind::<Array<Text>, _>(&ids)
        .bind::<Array<Integer>, _>(&offsets)
        .bind::<Array<Text>, _>(&types)
        .bind::<Array<Integer>, _>(&schemas)
        .bind::<Array<Text>, _>(&audiences)
        .bind::<Array<super::json::Jsonb>, _>(&data)
        .bind::<Array<Text>, _>(&seat_games)
        .bind::<Array<Integer>, _>(&seat_numbers)
        .bind::<Array<Nullable<Text>>, _>(&accounts)
        .bind::<Array<Bool>, _>(&awaiting)
        .bind::<Array<Nullable<Text>>, _>(&actions)
        .bind::<Array<Nullable<Timestamp>>, _>(&deadlines)
        .load(self)
        .map_err(conflict_or)?;
        Ok(appends
            .iter()
            .map(|a| made.iter().any(|m| m.id == a.game))
            .collect())
    }
}

#[derive(diesel::QueryableByName)]
struct AppendedGame {
    #[diesel(sql_type = diesel::sql_types::Text)]
    id: String,
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
                insert_events(self, a.game, a.expected, a.events)?;
                write_seats(self, a.game, a.index)?;
            }
            made.push(updated == 1);
        }
        Ok(made)
    }
}

impl EventsAfter for diesel::pg::PgConnection {
    /// One statement for any number of games (arrays, so it stays prepared).
    fn events_after(&mut self, after: &[(&str, i32)]) -> Result<Vec<StoredEvent>, StoreError> {
        use diesel::sql_types::{Array, Integer, Text};
        let games: Vec<&str> = after.iter().map(|(g, _)| *g).collect();
        let versions: Vec<i32> = after.iter().map(|(_, v)| *v).collect();
        Ok(super::prepared::prepared(
            "SELECT e.position, e.event_id, e.game_id, e.seq, e.event_type, e.schema_version, \
                    e.audience, e.data, e.recorded_at, e.tx_id \
               FROM unnest($1::text[], $2::int4[]) AS q(game, after) \
               JOIN events e ON e.game_id = q.game AND e.seq > q.after \
              ORDER BY e.game_id, e.seq",
        )
        .bind::<Array<Text>, _>(&games)
        .bind::<Array<Integer>, _>(&versions)
        .load(self)?)
    }
}

impl EventsAfter for diesel::sqlite::SqliteConnection {
    /// In process: [`Tx::load_events_after`] per game.
    fn events_after(&mut self, after: &[(&str, i32)]) -> Result<Vec<StoredEvent>, StoreError> {
        let mut all = Vec::new();
        for (game, version) in after {
            all.extend(Tx::load_events_after(self, game, *version)?);
        }
        Ok(all)
    }
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

/// The group commit's reads before deciding ([`Tx::batch_reads`]). On PostgreSQL every
/// statement is a round trip, which the batch's leader makes while the next batch waits,
/// so they are one statement there; SQLite runs in the process and keeps the plain loads.
trait ReadTogether {
    fn batch_reads(&mut self, query: &BatchQuery<'_>) -> Result<BatchReads, StoreError>;
}

#[derive(diesel::QueryableByName)]
struct BatchJson {
    #[diesel(sql_type = diesel::sql_types::Text)]
    accounts: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    games: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    counts: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    people: String,
}

impl ReadTogether for diesel::pg::PgConnection {
    /// One statement; each part a JSON array (the rows differ in shape).
    /// - `acc`: the accounts without their password hashes (not needed to check a token,
    ///   so kept out of the server's memory).
    /// - `hits`: a command counts when its token holds, by the test of
    ///   `accounts::admit` (the account exists, is not deleted, and has the token's
    ///   version); the batch admits by that same test on the same rows. The counters are
    ///   written in key order, so that two transactions counting the same accounts wait
    ///   for each other instead of deadlocking.
    /// - `listens`: what `webhooks_of_accounts` and `mail_recipients` would find: a
    ///   webhook of the account, or a mail address when mail is on.
    fn batch_reads(&mut self, query: &BatchQuery<'_>) -> Result<BatchReads, StoreError> {
        use diesel::sql_types::{Array, BigInt, Bool, Integer, Nullable, Text};
        let keys: Vec<&str> = query.count.iter().map(|(k, _, _)| k.as_str()).collect();
        let senders: Vec<&str> = query.count.iter().map(|(_, a, _)| *a).collect();
        let versions: Vec<Option<i32>> = query.count.iter().map(|(_, _, v)| *v).collect();
        let row: BatchJson = super::prepared::prepared(
            "WITH acc AS ( \
                 SELECT id, name, NULL::text AS password_hash, guest, roles, created_at, \
                        token_version, deleted_at, registered_at \
                   FROM accounts WHERE id = ANY($1::text[])), \
             g AS ( \
                 SELECT id, ruleset, name, status, host_account, version, created_at, \
                        updated_at, public, invite_code, free_seats \
                   FROM games WHERE id = ANY($2::text[])), \
             hits AS ( \
                 SELECT c.key, count(*)::int4 AS add \
                   FROM unnest($3::text[], $4::text[], $5::int4[]) AS c(key, account, version) \
                   LEFT JOIN acc ON acc.id = c.account \
                  WHERE c.version IS NULL \
                     OR (acc.deleted_at IS NULL AND acc.token_version = c.version) \
                  GROUP BY c.key), \
             up AS ( \
                 INSERT INTO rate_counters (key, window_start, count) \
                 SELECT key, $6::bigint, add FROM hits ORDER BY key \
                 ON CONFLICT (key, window_start) \
                 DO UPDATE SET count = rate_counters.count + EXCLUDED.count \
                 RETURNING key, window_start, count), \
             people AS ( \
                 SELECT s.account_id AS id FROM game_seats s JOIN g ON s.game_id = g.id \
                  WHERE s.account_id IS NOT NULL \
                 UNION SELECT id FROM acc) \
             SELECT (SELECT COALESCE(json_agg(acc), '[]') FROM acc)::text AS accounts, \
                    (SELECT COALESCE(json_agg(g), '[]') FROM g)::text AS games, \
                    (SELECT COALESCE(json_agg(json_build_object( \
                         'key', up.key, 'current', up.count, \
                         'previous', COALESCE(r.count, 0))), '[]') \
                       FROM up LEFT JOIN rate_counters r \
                         ON r.key = up.key AND r.window_start = up.window_start - $7::bigint \
                    )::text AS counts, \
                    (SELECT COALESCE(json_agg(json_build_object( \
                         'id', a.id, 'name', a.name, 'listens', \
                         EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = a.id) \
                         OR ($8::bool AND EXISTS (SELECT 1 FROM mail_settings m \
                              WHERE m.account_id = a.id AND m.address IS NOT NULL)))), '[]') \
                       FROM people p JOIN accounts a ON a.id = p.id)::text AS people",
        )
        .bind::<Array<Text>, _>(query.accounts)
        .bind::<Array<Text>, _>(query.games)
        .bind::<Array<Text>, _>(&keys)
        .bind::<Array<Text>, _>(&senders)
        .bind::<Array<Nullable<Integer>>, _>(&versions)
        .bind::<BigInt, _>(query.window.0)
        .bind::<BigInt, _>(query.window.1)
        .bind::<Bool, _>(query.mail)
        .get_result(self)?;
        // A part that does not parse is a row diesel could not have read either. The error
        // names the kind and place only: serde's message may quote a value (a private
        // game's invite code), and this error is logged.
        let parse = |e: serde_json::Error| {
            StoreError::Query(DieselError::DeserializationError(
                format!(
                    "the batch's reads did not parse ({:?} error at column {})",
                    e.classify(),
                    e.column()
                )
                .into(),
            ))
        };
        Ok(BatchReads {
            accounts: serde_json::from_str(&row.accounts).map_err(parse)?,
            games: serde_json::from_str(&row.games).map_err(parse)?,
            people: Some(serde_json::from_str(&row.people).map_err(parse)?),
            counts: Some(serde_json::from_str(&row.counts).map_err(parse)?),
        })
    }
}

impl ReadTogether for diesel::sqlite::SqliteConnection {
    fn batch_reads(&mut self, query: &BatchQuery<'_>) -> Result<BatchReads, StoreError> {
        Ok(BatchReads {
            accounts: accounts::table
                .filter(accounts::id.eq_any(query.accounts))
                .select(AccountRow::as_select())
                .load(self)?,
            games: games::table
                .filter(games::id.eq_any(query.games))
                .select(GameRow::as_select())
                .load(self)?,
            people: None,
            counts: None,
        })
    }
}

/// Serialises transactions by name, where the backend needs it.
trait Locks {
    fn lock(&mut self, key: &str) -> Result<(), StoreError>;
}

impl Locks for diesel::pg::PgConnection {
    /// A transaction-scoped advisory lock on the key's hash: released at commit.
    fn lock(&mut self, key: &str) -> Result<(), StoreError> {
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
            .bind::<diesel::sql_types::Text, _>(key)
            .execute(self)?;
        Ok(())
    }
}

impl Locks for diesel::sqlite::SqliteConnection {
    /// Write transactions start with `BEGIN IMMEDIATE`: one at a time already.
    fn lock(&mut self, _key: &str) -> Result<(), StoreError> {
        Ok(())
    }
}

/// Helpers shared by `create_game` and `append`.
trait InsertEvents {
    fn insert_events_impl(
        &mut self,
        game: &str,
        expected: i32,
        events: &[NewEvent],
    ) -> Result<(), StoreError>;
    fn write_seats_impl(&mut self, game: &str, index: &GameIndex) -> Result<(), StoreError>;
}

fn insert_events<C: InsertEvents>(
    conn: &mut C,
    game: &str,
    expected: i32,
    events: &[NewEvent],
) -> Result<(), StoreError> {
    conn.insert_events_impl(game, expected, events)
}

fn write_seats<C: InsertEvents>(
    conn: &mut C,
    game: &str,
    index: &GameIndex,
) -> Result<(), StoreError> {
    conn.write_seats_impl(game, index)
}

impl_tx!(diesel::pg::PgConnection);
impl_tx!(diesel::sqlite::SqliteConnection);
