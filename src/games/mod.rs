//! Use cases: load a game from its events → decide → append, with bots acting in the same
//! request, optimistic concurrency, bounded retries and durable idempotency.
//!
//! Blocking: call from `web::block`. Knows no HTTP; returns [`ServiceError`]. The one async
//! part is [`live`], the live-stream engine (the HTTP layer frames its output as
//! server-sent events).

mod access;
mod away;
mod commands;
mod expiry;
mod fill;
pub mod live;
mod lobby;
mod reads;
mod tables;

pub use self::away::clocks_with_away;
use self::expiry::*;
pub use self::fill::{FillOptions, FillSummary, history_start};
pub use self::tables::TableSpec;
pub use self::{access::*, commands::*, lobby::*, reads::*};

use serde::Serialize;

use serde_json::Value;

use rules::{
    Actor, Audience, BotStrategy, Command, Deal, Event, Extras, Game, GameView, NewGame,
    SeatDeadline, Setup, Status,
};

use crate::contention::Contention;
use crate::fairness::{self, SeededDealer};

use std::collections::HashMap;

use crate::store::{
    Append, BatchReads, GameIndex, GameRow, GameSummaryRow, IdempotentAnswer, ListQuery, NewEvent,
    PersonRow, SeatRow, Store, StoreError, StoredEvent, Tx,
};

/// How long an idempotency key answers with its first response.
pub const IDEMPOTENCY_HOURS: i64 = 24;

/// Why a use case failed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No such game.
    #[error("game not found")]
    GameNotFound,
    /// No such tournament, or a private one the caller may not see.
    #[error("tournament not found")]
    TournamentNotFound,
    /// The rules refuse the command.
    #[error(transparent)]
    Rule(#[from] rules::RuleError),
    /// Another write came first (`If-Match` named another version, or retries ran out).
    #[error(transparent)]
    Contention(#[from] Contention),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A rematch needs a finished game.
    #[error("the game is not finished")]
    NotFinished,
    /// No such player (account).
    #[error("player not found")]
    PlayerNotFound,
    /// A list cursor this server did not hand out.
    #[error("invalid cursor")]
    InvalidCursor,
    /// An event or a response could not be encoded for the store.
    #[error("could not encode for the store")]
    Encode(#[source] serde_json::Error),
    /// The idempotency key was used for another request within 24 hours.
    #[error("this Idempotency-Key was used for another request")]
    IdempotencyKeyReused,
    /// Over a rate limit.
    #[error(transparent)]
    Limited(#[from] crate::limits::LimitError),
    /// The caller's token no longer speaks for its account (checked with the command).
    #[error(transparent)]
    Account(#[from] crate::accounts::AccountError),
    /// A stored event could not be read.
    #[error("stored event {seq} of game {game} is unreadable: {source}")]
    Corrupt {
        /// The game's id.
        game: String,
        /// The event's position in the game's stream.
        seq: i32,
        /// Why its payload did not decode.
        source: serde_json::Error,
    },
}

/// A game as one caller sees it: the rules' view plus its identity and version.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct GameBody {
    /// The game's id (a UUID), as in `/v1/games/{id}`.
    pub id: String,
    /// Number of events in the game's stream (also the `ETag`).
    pub version: i32,
    /// Listed for and watchable by every account; a private game is seen by its players only.
    pub public: bool,
    /// The code that lets others join this private game (shown to its players only).
    #[schema(required = true)]
    pub invite_code: Option<String>,
    /// The game as the caller may see it: seats, table, the caller's hand, scores.
    #[serde(flatten)]
    pub view: GameView,
}

/// A stored event as readers see it: its payload brought up to the current schema.
#[derive(Debug, Clone)]
pub struct ReadEvent {
    /// Global position.
    pub position: i64,
    /// The game's id.
    pub game_id: String,
    /// Position in the game's stream, from 1.
    pub seq: i32,
    /// Type name.
    pub event_type: String,
    /// `public`, `seat:N` or `server`.
    pub audience: String,
    /// The schema version the payload was stored with.
    pub stored_schema_version: i32,
    /// Time of the append (UTC).
    pub recorded_at: chrono::NaiveDateTime,
    /// Payload, in the current schema.
    pub data: Value,
    /// The feed's order key before `position` (see [`crate::store::FeedCursor`]).
    pub tx_id: i64,
}

impl From<&ReadEvent> for crate::store::FeedCursor {
    fn from(e: &ReadEvent) -> Self {
        Self {
            tx_id: e.tx_id,
            position: e.position,
        }
    }
}

impl From<StoredEvent> for ReadEvent {
    fn from(e: StoredEvent) -> Self {
        Self {
            data: rules::upcast::upcast(&e.event_type, e.schema_version, e.data.0),
            tx_id: e.tx_id,
            position: e.position,
            game_id: e.game_id,
            seq: e.seq,
            event_type: e.event_type,
            audience: e.audience,
            stored_schema_version: e.schema_version,
            recorded_at: e.recorded_at,
        }
    }
}

/// Encodes a rules event for the store.
fn to_new_event(event: &Event) -> Result<NewEvent, serde_json::Error> {
    to_new_event_with_cause(event, None)
}

/// Encodes a rules event, marking what caused it (`"cause": "deadline"`) in its data.
fn to_new_event_with_cause(
    event: &Event,
    cause: Option<&str>,
) -> Result<NewEvent, serde_json::Error> {
    let mut value = serde_json::to_value(event)?;
    let mut data = value
        .get_mut("data")
        .map(Value::take)
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    if let (Some(cause), Some(object)) = (cause, data.as_object_mut()) {
        object.insert("cause".into(), Value::String(cause.to_owned()));
    }
    Ok(NewEvent {
        event_type: event.type_name().to_owned(),
        schema_version: event.schema_version(),
        audience: event.audience().as_text(),
        data,
    })
}

/// Decodes a stored event through the rules' upcasters (`rules::upcast`).
///
/// # Errors
/// A payload that does not decode.
pub fn decode(stored: &StoredEvent) -> Result<Event, ServiceError> {
    rules::upcast::decode_ref(&stored.event_type, stored.schema_version, &stored.data.0).map_err(
        |source| ServiceError::Corrupt {
            game: stored.game_id.clone(),
            seq: stored.seq,
            source,
        },
    )
}

/// Rebuilds a game from its stored events.
fn rebuild(game_id: &str, stored: &[StoredEvent]) -> Result<Game, ServiceError> {
    let events = stored.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
    Game::from_events(&events)
        .ok_or_else(|| ServiceError::GameNotFound)
        .inspect_err(|_| {
            tracing::error!(
                game = game_id,
                "event stream does not start with game_created"
            );
        })
}

fn index_of(game: &Game, game_id: &str) -> GameIndex {
    let asks = game.person_asks();
    let seats = game
        .seats
        .iter()
        .enumerate()
        .map(|(i, seat)| {
            let s = u8::try_from(i).unwrap_or_default();
            let ask = asks.iter().find(|a| a.seat == s);
            let person = !seat.bot_controlled() && seat.account().is_some();
            let deadline_at = game
                .deadlines
                .iter()
                .filter(|d| d.seat == s)
                .map(|d| d.at.naive_utc())
                .min();
            SeatRow {
                game_id: game_id.to_owned(),
                seat: i32::from(s),
                account_id: seat.account().map(str::to_owned),
                awaiting: ask.is_some(),
                action: ask.map(|a| a.actions.join(",")),
                deadline_at: deadline_at.filter(|_| person),
            }
        })
        .collect();
    GameIndex {
        status: status_text(game.status()).to_owned(),
        public: game.public,
        // A seat kept for a rematch's player is not free to anyone else.
        free_seats: i32::try_from(
            game.seats
                .iter()
                .filter(|s| s.occupant.is_none() && s.reserved_for.is_none())
                .count(),
        )
        .unwrap_or(i32::MAX),
        seats,
    }
}

/// The status as stored and filtered on.
#[must_use]
pub fn status_text(status: Status) -> &'static str {
    match status {
        Status::Lobby => "lobby",
        Status::Active => "active",
        Status::Finished => "finished",
    }
}

/// The game service.
#[derive(Clone)]
pub struct Service {
    store: Store,
    /// Where deadlines, expiry, tickets and idempotency keys read the time.
    clock: crate::clock::Clock,
    notifier: crate::notify::Notifier,
    cache: crate::cache::StateCache,
    ticket_ttl: std::time::Duration,
    limits: crate::limits::Limits,
    stand_in: BotStrategy,
    rematch_window: std::time::Duration,
    /// E-mail reminders are written to the outbox (with this digest interval) when on.
    mail_digest: Option<std::time::Duration>,
    /// After a "your turn" push to a browser, later ones to it wait this long and come as
    /// one.
    push_window: std::time::Duration,
    /// The group commit of commands (empty: a transaction per command): a queue per
    /// lane, each game always in the same lane, so batches of one replica never race each
    /// other for a game while the lanes' batches overlap.
    batches: std::sync::Arc<[crate::group::GroupQueue<Job, JobResult>]>,
    /// How the batches decided on cached states went ([`Service::draft_stats`]).
    drafts: std::sync::Arc<Drafts>,
    /// Quick plays waiting for their turn.
    quick: QuickQueues,
    /// Vacation days per year of every registered account (`STAMMTISCH_VACATION_DAYS`).
    vacation_days: u32,
}

impl Service {
    /// A service over a store.
    #[must_use]
    pub fn new(store: Store, notifier: crate::notify::Notifier) -> Self {
        Self {
            notifier,
            cache: crate::cache::StateCache::new(),
            ticket_ttl: std::time::Duration::from_secs(30),
            stand_in: BotStrategy::Heuristic,
            rematch_window: std::time::Duration::from_secs(86_400),
            mail_digest: None,
            push_window: crate::push::DEFAULT_COALESCE_WINDOW,
            batches: lanes(DEFAULT_LANES, DEFAULT_BATCH_MAX, DEFAULT_LINGER),
            drafts: std::sync::Arc::default(),
            limits: crate::limits::Limits::new(store.clone(), crate::limits::LimitConfig::NONE),
            quick: QuickQueues::default(),
            vacation_days: crate::vacation::DEFAULT_DAYS,
            clock: crate::clock::Clock::system(),
            store,
        }
    }

    /// The same service reading the time from `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: crate::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The clock this service reads the time from, for the background workers wired at
    /// start-up.
    #[must_use]
    pub fn clock(&self) -> &crate::clock::Clock {
        &self.clock
    }

    /// The same service giving every registered account `days` vacation days a year.
    #[must_use]
    pub fn with_vacation_days(mut self, days: u32) -> Self {
        self.vacation_days = days;
        self
    }

    /// Counts a new tournament against the caller's games-per-hour limit (a tournament
    /// opens many games), as `create` counts a game.
    ///
    /// # Errors
    /// Over the limit, storage failure.
    pub fn count_new_tournament(&self, account: &str) -> Result<(), ServiceError> {
        self.limits.game(account, 0)?;
        Ok(())
    }

    /// Counts a tournament command (join, leave, start) against the caller's commands per
    /// minute, as a game command counts: each is a write that, on PostgreSQL, waits for
    /// the one lock every tournament append takes.
    ///
    /// # Errors
    /// Over the limit, storage failure.
    pub fn count_tournament_command(&self, account: &str) -> Result<(), ServiceError> {
        self.limits.command(account)?;
        Ok(())
    }

    /// The same service counting games and commands against `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: crate::limits::Limits) -> Self {
        self.limits = limits;
        self
    }

    /// A game as `viewer` sees it. A resigned seat shows the strategy that stands in for it;
    /// a person's seat shows the account's current name (the log records account ids only),
    /// `deleted player` for a deleted account.
    fn body(
        &self,
        tx: &mut Tx<'_>,
        game: &Game,
        row: &GameRow,
        version: i32,
        viewer: &str,
    ) -> Result<GameBody, ServiceError> {
        let names = seat_names(tx, &[game])?;
        Ok(self.body_named(game, row, version, viewer, &names))
    }

    /// [`Service::body`] with the seated people's names at hand.
    fn body_named(
        &self,
        game: &Game,
        row: &GameRow,
        version: i32,
        viewer: &str,
        names: &HashMap<String, String>,
    ) -> GameBody {
        let seated = game.seat_of(viewer).is_some();
        let mut view = game.view_for(Some(viewer));
        view.clocks_now(game, self.clock.now());
        for (seat, shown) in game.seats.iter().zip(view.seats.iter_mut()) {
            if seat.resigned {
                shown.strategy = Some(self.stand_in);
            }
        }
        for shown in &mut view.seats {
            if let Some(account) = &shown.account_id {
                shown.name = Some(
                    names
                        .get(account)
                        .cloned()
                        .unwrap_or_else(|| crate::store::DELETED_NAME.to_owned()),
                );
            }
        }
        GameBody {
            id: row.id.clone(),
            version,
            public: row.public,
            invite_code: row.invite_code.clone().filter(|_| seated),
            view,
        }
    }

    /// The same service with `lanes` group-commit queues whose batches hold at most `max`
    /// commands; `0` for either gives every command a transaction of its own. A new batch
    /// waits up to `linger` for as many commands as the last one held and for those
    /// announced by [`Service::announce`].
    #[must_use]
    pub fn with_group_commit(
        mut self,
        lanes_count: usize,
        max: usize,
        linger: std::time::Duration,
    ) -> Self {
        self.batches = lanes(lanes_count, max, linger);
        self
    }

    /// Announces a command for `game_id` before it reaches [`Service::execute`] (the HTTP
    /// handler, before its hand-off to a blocking thread), so that a batch being formed
    /// may wait for it; pass it in [`CommandRequest::announced`]. `None` without a group
    /// commit.
    #[must_use]
    pub fn announce(&self, game_id: &str) -> Option<crate::group::Announced> {
        self.lane(game_id).map(crate::group::GroupQueue::announce)
    }

    /// The same service with `strategy` playing for resigned seats and seats whose move
    /// deadline passed.
    #[must_use]
    pub fn with_stand_in(mut self, strategy: BotStrategy) -> Self {
        self.stand_in = strategy;
        self
    }

    /// The same service writing e-mail reminders to the outbox (mail is on), with daily
    /// digests `digest_interval` after the first game they list.
    #[must_use]
    pub fn with_mail(mut self, digest_interval: std::time::Duration) -> Self {
        self.mail_digest = Some(digest_interval);
        self
    }

    /// The same service letting a browser's "your turn" pushes that come within `window`
    /// of the last one wait and come as one.
    #[must_use]
    pub fn with_push_window(mut self, window: std::time::Duration) -> Self {
        self.push_window = window;
        self
    }

    /// The same service keeping a rematch's seats for `window`.
    #[must_use]
    pub fn with_rematch_window(mut self, window: std::time::Duration) -> Self {
        self.rematch_window = window;
        self
    }

    /// The same service with stream tickets valid for `ttl`.
    #[must_use]
    pub fn with_ticket_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.ticket_ttl = ttl;
        self
    }

    /// The same service with a state cache of `bytes` (estimated; see
    /// [`crate::cache::weight`]); `0` switches it off.
    #[must_use]
    pub fn with_cache_bytes(mut self, bytes: u64) -> Self {
        self.cache = if bytes == 0 {
            crate::cache::StateCache::disabled()
        } else {
            crate::cache::StateCache::with_capacity(bytes)
        };
        self
    }

    /// The state cache's counters (for `/metrics`).
    #[must_use]
    pub fn cache_stats(&self) -> crate::cache::CacheStats {
        self.cache.stats()
    }

    /// The same service without the state cache: every load replays the whole stream
    /// (for measurements).
    #[must_use]
    pub fn without_cache(mut self) -> Self {
        self.cache = crate::cache::StateCache::disabled();
        self
    }

    /// A game's state and version: the cached state plus the events after it, or the whole
    /// stream when nothing is cached.
    fn load(&self, tx: &mut Tx<'_>, game_id: &str) -> Result<(i32, Game), ServiceError> {
        if let Some((version, game)) = self.cache.get(game_id) {
            let newer = tx.load_events_after(game_id, version)?;
            return Self::catch_up(version, game, &newer);
        }
        let stored = tx.load_events(game_id)?;
        Self::replay(game_id, &stored)
    }

    /// [`Service::load`] with the game's index row, in one statement.
    fn load_row(
        &self,
        tx: &mut Tx<'_>,
        game_id: &str,
    ) -> Result<(GameRow, i32, Game), ServiceError> {
        let cached = self.cache.get(game_id);
        let after = cached.as_ref().map_or(0, |(version, _)| *version);
        let (row, stored) = tx
            .game_and_events_after(game_id, after)?
            .ok_or(ServiceError::GameNotFound)?;
        let (version, game) = Self::fold(game_id, cached, &stored)?;
        Ok((row, version, game))
    }

    /// A game's state from a cached one (if any) and the stored events after it.
    fn fold(
        game_id: &str,
        cached: Option<(i32, Game)>,
        stored: &[StoredEvent],
    ) -> Result<(i32, Game), ServiceError> {
        match cached {
            Some((version, game)) => Self::catch_up(version, game, stored),
            None => Self::replay(game_id, stored),
        }
    }

    /// A cached state brought up to date with the events after it.
    fn catch_up(
        version: i32,
        mut game: Game,
        newer: &[StoredEvent],
    ) -> Result<(i32, Game), ServiceError> {
        for stored in newer {
            game.apply(&decode(stored)?);
        }
        Ok((newer.last().map_or(version, |e| e.seq), game))
    }

    /// A state from a game's whole stream.
    fn replay(game_id: &str, stored: &[StoredEvent]) -> Result<(i32, Game), ServiceError> {
        if stored.is_empty() {
            return Err(ServiceError::GameNotFound);
        }
        Ok((version_of(stored), rebuild(game_id, stored)?))
    }

    /// The stream wake-ups.
    #[must_use]
    pub fn notifier(&self) -> &crate::notify::Notifier {
        &self.notifier
    }

    /// Whether the database answers (for `/readyz`): a connection within the pool's
    /// wait and a trivial query. Blocking.
    #[must_use]
    pub fn ready(&self) -> bool {
        self.store.ping()
    }

    /// The store, for wiring the other services and background workers at start-up
    /// (handlers never call it).
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.store
    }
}

/// The people seated in `games`, sorted, once each.
fn seated_people<'g>(games: &[&'g Game]) -> Vec<&'g str> {
    let mut people: Vec<&str> = games
        .iter()
        .flat_map(|g| g.seats.iter().filter_map(|s| s.account()))
        .collect();
    people.sort_unstable();
    people.dedup();
    people
}

/// The current names of the people seated in `games` (a deleted account has none).
fn seat_names(tx: &mut Tx<'_>, games: &[&Game]) -> Result<HashMap<String, String>, ServiceError> {
    let people = seated_people(games);
    Ok(tx.account_names(&people)?.into_iter().collect())
}

fn version_of(stored: &[StoredEvent]) -> i32 {
    stored.last().map_or(0, |e| e.seq)
}

fn encode_all(events: &[Event]) -> Result<Vec<NewEvent>, ServiceError> {
    events
        .iter()
        .map(to_new_event)
        .collect::<Result<_, _>>()
        .map_err(ServiceError::Encode)
}
