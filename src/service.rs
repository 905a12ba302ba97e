//! Use cases: load a game from its events → decide → append, with bots acting in the same
//! request, optimistic concurrency, bounded retries and durable idempotency.
//!
//! Blocking: call from `web::block`. Knows no HTTP; returns [`ServiceError`].

use serde::Serialize;
use serde_json::Value;

use rules::{
    Actor, Audience, BotStrategy, Command, Deal, Event, Extras, Game, GameView, NewGame,
    SeatDeadline, Setup, Status,
};

use crate::fairness::{self, SeededDealer};
use std::collections::HashMap;

use crate::store::{
    Append, BatchReads, GameIndex, GameRow, GameSummaryRow, ListQuery, NewEvent, PersonRow,
    SeatRow, Store, StoreError, StoredEvent, Tx,
};

/// How long an idempotency key answers with its first response.
pub const IDEMPOTENCY_HOURS: i64 = 24;

/// How often a command without `If-Match` is decided again after losing a race.
const MAX_ATTEMPTS: u32 = 16;

/// The group commit's largest batch unless configured (`COMMAND_BATCH_MAX`).
const DEFAULT_BATCH_MAX: usize = 32;
/// The group commit's queues unless configured (`COMMAND_BATCH_LANES`).
const DEFAULT_LANES: usize = 1;
/// How long a new batch waits at most for more commands unless configured
/// (`COMMAND_BATCH_LINGER_US`).
const DEFAULT_LINGER: std::time::Duration = std::time::Duration::from_millis(1);

/// `count` group-commit queues of batches of at most `max` (none when either is 0), whose
/// leaders wait up to `linger` for more commands (`crate::group`).
fn lanes(
    count: usize,
    max: usize,
    linger: std::time::Duration,
) -> std::sync::Arc<[crate::group::GroupQueue<Job, JobResult>]> {
    let count = if max == 0 { 0 } else { count };
    (0..count)
        .map(|_| crate::group::GroupQueue::new(max, linger))
        .collect()
}

/// Why a use case failed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No such game.
    #[error("game not found")]
    GameNotFound,
    /// The rules refuse the command.
    #[error(transparent)]
    Rule(#[from] rules::RuleError),
    /// `If-Match` named another version.
    #[error("the game is at version {current}")]
    VersionConflict {
        /// The game's version now.
        current: i32,
    },
    /// Concurrent writers kept winning; the client may retry.
    #[error("the game is busy; try again")]
    Busy,
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
    /// Game id.
    pub id: String,
    /// Number of events in the game's stream (also the `ETag`).
    pub version: i32,
    /// Listed for and watchable by every account; a private game is seen by its players only.
    pub public: bool,
    /// The code that lets others join this private game (shown to its players only).
    #[schema(required = true)]
    pub invite_code: Option<String>,
    /// The view.
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

/// The outcome of a command.
pub enum CommandOutcome {
    /// Applied now.
    Applied(Box<GameBody>),
    /// A repeated idempotency key: the first response, verbatim.
    Replayed(Value),
}

/// A command request.
pub struct CommandRequest<'a> {
    /// Game id.
    pub game: &'a str,
    /// Caller's account id.
    pub account: &'a str,
    /// Caller's name.
    pub name: &'a str,
    /// The command.
    pub command: Command,
    /// Expected version from `If-Match`.
    pub if_match: Option<i32>,
    /// `Idempotency-Key`.
    pub idempotency_key: Option<&'a str>,
    /// The invite code sent with `join` (needed for a private game).
    pub invite_code: Option<&'a str>,
    /// The version of the caller's bearer token, when its account is still to be checked
    /// (as the `Caller` extractor does: it exists, is not deleted, has not revoked the
    /// token): then it is checked before anything else, with the command (in its batch's
    /// transaction), and `name` is the account's. `None`: the caller was checked already.
    pub token_version: Option<i32>,
    /// The command's announcement to the group commit ([`Service::announce`]), if any.
    pub announced: Option<&'a crate::group::Announced>,
}

/// Which games a list shows.
pub struct ListRequest<'a> {
    /// The caller.
    pub account: &'a str,
    /// Only the caller's games.
    pub mine: bool,
    /// The inbox: the caller's games in which the caller must act now, earliest deadline
    /// first.
    pub inbox: bool,
    /// `lobby`, `active` or `finished`.
    pub status: Option<&'a str>,
    /// A ruleset name.
    pub ruleset: Option<&'a str>,
    /// Only games with at least this many free seats (lobbies with room).
    pub min_free_seats: Option<i32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<&'a str>,
    /// Page size.
    pub limit: i64,
}

/// A page of games.
pub struct GameListPage {
    /// The games, with their seats.
    pub games: Vec<GameSummaryRow>,
    /// The cursor of the next page, `None` at the end.
    pub next_cursor: Option<String>,
}

/// What quick play looks for (the ruleset is its [`QuickTurn`]'s).
pub struct QuickRequest<'a> {
    /// The caller.
    pub account: &'a str,
    /// The caller's name.
    pub name: &'a str,
    /// Table size; any when `None` (a new table gets the ruleset's usual size).
    pub players: Option<u8>,
    /// Options; any when `None` (a new table gets the defaults).
    pub options: Option<rules::OptionsInput>,
}

/// A quick play's turn in its ruleset's queue ([`Service::quick_turn`]): held until the
/// quick play has committed, so the next one in this replica starts after it.
pub struct QuickTurn {
    ruleset: rules::Ruleset,
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

/// The quick plays of this replica, one queue per ruleset, in the order they came.
/// Waiting here costs neither a database connection nor a thread: only the head of each
/// queue takes a connection (and, on PostgreSQL, waits for the replicas' named lock), so
/// a queue longer than the pool is not refused `database_unavailable`. Clones share the
/// queues.
#[derive(Clone, Default)]
struct QuickQueues(std::sync::Arc<[std::sync::Arc<tokio::sync::Mutex<()>>; 4]>);

impl QuickQueues {
    fn of(&self, ruleset: rules::Ruleset) -> std::sync::Arc<tokio::sync::Mutex<()>> {
        let [six, eleven, x, nos] = &*self.0;
        std::sync::Arc::clone(match ruleset {
            rules::Ruleset::SixNimmt => six,
            rules::Ruleset::ElevenNimmt => eleven,
            rules::Ruleset::XNimmt => x,
            rules::Ruleset::NimmOderSchieb => nos,
        })
    }
}

/// The inbox is sorted in memory from at most this many games.
const MAX_INBOX: i64 = 2_000;

/// A game creation request.
pub struct CreateRequest<'a> {
    /// Creator's account id.
    pub account: &'a str,
    /// Creator's name.
    pub name: &'a str,
    /// Ruleset, options, seats.
    pub setup: Setup,
    /// Game name.
    pub game_name: Option<String>,
    /// Prepared first deal.
    pub deal: Option<Deal>,
    /// Seconds per move (then the server moves for a seat that lets it pass).
    pub move_deadline_seconds: Option<u32>,
    /// Listed for and watchable by every account.
    pub public: bool,
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
    rules::upcast::decode(
        &stored.event_type,
        stored.schema_version,
        stored.data.0.clone(),
    )
    .map_err(|source| ServiceError::Corrupt {
        game: stored.game_id.clone(),
        seq: stored.seq,
        source,
    })
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

/// The deadlines after a command: a person asked to act gets `now + move_deadline_seconds`,
/// unless the same ask was already running for a seat that did not act in this command.
/// `None` when nothing changed (or the game has no deadlines).
fn refresh_deadlines(
    game: &Game,
    acted: Option<u8>,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Event> {
    let seconds = game.move_deadline_seconds?;
    let mut deadlines = Vec::new();
    if game.status() == Status::Active {
        for asked in game.awaiting() {
            let person = game
                .seats
                .get(usize::from(asked.seat))
                .is_some_and(|s| !s.bot_controlled());
            if !person {
                continue;
            }
            let running = game.deadlines.iter().find(|d| {
                d.seat == asked.seat && d.action == asked.action && Some(asked.seat) != acted
            });
            // Milliseconds, as stored: a rebuilt game equals the one that wrote the event.
            let at = running.map_or_else(
                || {
                    chrono::SubsecRound::trunc_subsecs(
                        now + chrono::Duration::seconds(i64::from(seconds)),
                        3,
                    )
                },
                |d| d.at,
            );
            deadlines.push(SeatDeadline {
                seat: asked.seat,
                action: asked.action.to_owned(),
                at,
            });
        }
    }
    (deadlines != game.deadlines).then_some(Event::DeadlinesSet { deadlines })
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

/// A fresh invite code: 10 characters without look-alikes.
fn new_invite_code() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::rng();
    (0..10)
        .map(|_| char::from(ALPHABET[rand::RngExt::random_range(&mut rng, 0..ALPHABET.len())]))
        .collect()
}

/// The game service.
#[derive(Clone)]
pub struct Service {
    store: Store,
    notifier: crate::notify::Notifier,
    cache: crate::cache::StateCache,
    ticket_ttl: std::time::Duration,
    limits: crate::limits::Limits,
    stand_in: BotStrategy,
    rematch_window: std::time::Duration,
    /// E-mail reminders are written to the outbox (with this digest interval) when on.
    mail_digest: Option<std::time::Duration>,
    /// The group commit of commands (empty: a transaction per command): a queue per
    /// lane, each game always in the same lane, so batches of one replica never race each
    /// other for a game while the lanes' batches overlap.
    batches: std::sync::Arc<[crate::group::GroupQueue<Job, JobResult>]>,
    /// Quick plays waiting for their turn.
    quick: QuickQueues,
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
            batches: lanes(DEFAULT_LANES, DEFAULT_BATCH_MAX, DEFAULT_LINGER),
            limits: crate::limits::Limits::new(store.clone(), crate::limits::LimitConfig::NONE),
            quick: QuickQueues::default(),
            store,
        }
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
        tx: &mut dyn Tx,
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

    /// Writes the outbox rows (webhooks, and mails when on) that a change causes, in the
    /// change's transaction.
    fn notify_outbox(
        &self,
        tx: &mut dyn Tx,
        game_id: &str,
        version: i32,
        before: &Game,
        after: &Game,
    ) -> Result<(), StoreError> {
        let news = crate::webhooks::Announcements::of(before, after);
        crate::webhooks::enqueue(tx.webhooks(), game_id, version, after, &news)?;
        if let Some(digest) = self.mail_digest {
            crate::mail::enqueue(tx, game_id, version, after, &news, digest)?;
        }
        Ok(())
    }

    /// After an account's deletion: a bot takes over its seats in running games (`resign`,
    /// so no game waits for a player who is gone) and it leaves the lobbies it sits in (a
    /// lobby it hosts keeps it). Returns how many games it left; a game that refuses is
    /// logged and skipped.
    ///
    /// # Errors
    /// Storage failure while listing the games.
    pub fn hand_over_seats(&self, account: &str) -> Result<usize, ServiceError> {
        let mut handed = 0;
        let mut before: Option<String> = None;
        loop {
            let page = self.store.read(|tx| {
                tx.list_games(&ListQuery {
                    account,
                    mine: true,
                    awaiting: false,
                    status: None,
                    ruleset: None,
                    before_id: before.as_deref(),
                    min_free_seats: None,
                    limit: 200,
                })
            })?;
            let Some(last) = page.last() else {
                return Ok(handed);
            };
            before = Some(last.game.id.clone());
            for summary in &page {
                let command = match summary.game.status.as_str() {
                    "active" => Command::Resign {},
                    "lobby" => Command::Leave {},
                    _ => continue,
                };
                let req = CommandRequest {
                    game: &summary.game.id,
                    account,
                    name: crate::store::DELETED_NAME,
                    command,
                    if_match: None,
                    idempotency_key: None,
                    invite_code: None,
                    token_version: None,
                    announced: None,
                };
                match self.execute(&req) {
                    Ok(_) => handed += 1,
                    Err(e) => tracing::info!(
                        game = summary.game.id,
                        error = %crate::telemetry::Chain(&e),
                        "a deleted account's seat stays"
                    ),
                }
            }
        }
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

    /// The same service without the state cache: every load replays the whole stream
    /// (for measurements).
    #[must_use]
    pub fn without_cache(mut self) -> Self {
        self.cache = crate::cache::StateCache::disabled();
        self
    }

    /// A game's state and version: the cached state plus the events after it, or the whole
    /// stream when nothing is cached.
    fn load(&self, tx: &mut dyn Tx, game_id: &str) -> Result<(i32, Game), ServiceError> {
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
        tx: &mut dyn Tx,
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

    /// The game's index row, version and state, if `viewer` may see it: public games by
    /// every account, private ones by their players only (others get "not found").
    fn visible(
        &self,
        tx: &mut dyn Tx,
        game_id: &str,
        viewer: &str,
    ) -> Result<(GameRow, i32, Game), ServiceError> {
        let (row, version, game) = self.load_row(tx, game_id)?;
        if !row.public && game.seat_of(viewer).is_none() && !kept_for(&game, viewer) {
            return Err(ServiceError::GameNotFound);
        }
        if self.cache.would_keep(game_id, version) {
            self.cache.put(game_id, version, game.clone());
        }
        Ok((row, version, game))
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

    /// Creates a game; the creator takes seat 0.
    ///
    /// # Errors
    /// Invalid options or deal, storage failure.
    pub fn create(&self, req: CreateRequest<'_>) -> Result<GameBody, ServiceError> {
        let open = self
            .store
            .read(|tx| tx.open_lobbies(req.account).map_err(ServiceError::from))?;
        self.limits.game(req.account, open)?;
        let account = req.account;
        let (row, game, events) = self.new_game(req, Extras::default())?;
        self.store
            .write(|tx| insert_game(tx, &row, &game, &events))?;
        self.store
            .read(|tx| self.body(tx, &game, &row, row.version, account))
    }

    /// The index row, state and events of a new game (nothing stored yet).
    fn new_game(
        &self,
        req: CreateRequest<'_>,
        extras: Extras,
    ) -> Result<(GameRow, Game, Vec<Event>), ServiceError> {
        let seed = fairness::new_seed();
        let commitment = fairness::commitment(&seed);
        let mut events = Game::create_with(
            NewGame {
                setup: req.setup.clone(),
                name: req.game_name.clone(),
                host_account: req.account,
                host_name: req.name,
                deal: req.deal,
                seed,
                commitment,
            },
            extras,
        )?;
        if let Some(seconds) = req.move_deadline_seconds {
            events.push(Event::MoveDeadlineSet { seconds });
        }
        events.push(Event::VisibilitySet { public: req.public });
        let game = Game::from_events(&events).ok_or(ServiceError::GameNotFound)?;
        let id = uuid::Uuid::now_v7().to_string();
        let now = chrono::Utc::now().naive_utc();
        let index = index_of(&game, &id);
        let row = GameRow {
            id,
            ruleset: req.setup.ruleset.name().to_owned(),
            name: req.game_name,
            status: "lobby".into(),
            host_account: req.account.to_owned(),
            version: i32::try_from(events.len()).unwrap_or(i32::MAX),
            created_at: now,
            updated_at: now,
            public: req.public,
            invite_code: (!req.public).then(new_invite_code),
            free_seats: index.free_seats,
        };
        Ok((row, game, events))
    }

    /// Loads a game as `viewer` sees it.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn view(&self, game_id: &str, viewer: &str) -> Result<GameBody, ServiceError> {
        self.store.read(|tx| {
            let (row, version, game) = self.visible(tx, game_id, viewer)?;
            self.body(tx, &game, &row, version, viewer)
        })
    }

    /// Makes a game public or private (its host only).
    ///
    /// # Errors
    /// Unknown or invisible game, not the host, storage failure.
    pub fn set_public(
        &self,
        game_id: &str,
        account: &str,
        public: bool,
    ) -> Result<GameBody, ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            let mut committed = None;
            let result = self.store.write(|tx| {
                let (mut row, version, mut game) = self.visible(tx, game_id, account)?;
                if game.seat_of(account) != Some(game.host_seat) {
                    return Err(ServiceError::Rule(rules::RuleError::NotHost));
                }
                if row.public == public {
                    return self.body(tx, &game, &row, version, account);
                }
                // Recorded in the log (ratings and profiles read visibility from it).
                let event = Event::VisibilitySet { public };
                game.apply(&event);
                let new_version = version + 1;
                tx.append(
                    game_id,
                    version,
                    &index_of(&game, game_id),
                    &encode_all(&[event])?,
                )?;
                row.public = public;
                let response = self.body(tx, &game, &row, new_version, account)?;
                committed = Some((new_version, game));
                Ok(response)
            });
            match result {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(response) => {
                    if let Some((version, game)) = committed {
                        self.cache.put(game_id, version, game);
                        self.notifier.notify(game_id);
                    }
                    return Ok(response);
                }
                Err(e) => return Err(e),
            }
        }
        Err(ServiceError::Busy)
    }

    /// Runs a command: decide, let bots answer, append; retried on a lost race when the
    /// client did not pin a version. Commands without an idempotency key go through the
    /// group commit (see [`crate::group`]): those that arrive together are decided in
    /// order and appended in one transaction.
    ///
    /// # Errors
    /// Unknown game, a rule violation, a version conflict, storage failure.
    pub fn execute(&self, req: &CommandRequest<'_>) -> Result<CommandOutcome, ServiceError> {
        for attempt in 0..MAX_ATTEMPTS {
            // The first try counts the command against the caller's limit.
            let first = attempt == 0;
            let result = match self.lane(req.game) {
                Some(queue) if req.idempotency_key.is_none() => self.try_batched(queue, req, first),
                _ => {
                    // No batch waits for a command that goes alone.
                    if let Some(a) = req.announced {
                        let _ = a.arrive();
                    }
                    self.try_alone(req, first)
                }
            };
            match result {
                Err(ServiceError::Store(StoreError::Conflict)) => {
                    if let Some(expected) = req.if_match {
                        let current = self.current_version(req.game).unwrap_or(expected);
                        return Err(ServiceError::VersionConflict { current });
                    }
                    tracing::debug!(game = req.game, attempt, "lost a race; deciding again");
                    let jitter = rand::random_range(1..=4u64) * u64::from(attempt + 1);
                    std::thread::sleep(std::time::Duration::from_millis(jitter));
                }
                other => return other,
            }
        }
        Err(ServiceError::Busy)
    }

    /// How the group commit's batches went so far (all lanes).
    #[must_use]
    pub fn batch_stats(&self) -> crate::group::GroupStats {
        self.batches
            .iter()
            .map(crate::group::GroupQueue::stats)
            .fold(crate::group::GroupStats::default(), |a, b| {
                crate::group::GroupStats {
                    batches: a.batches + b.batches,
                    jobs: a.jobs + b.jobs,
                }
            })
    }

    /// The group-commit queue of a game's commands, if any.
    fn lane(&self, game_id: &str) -> Option<&crate::group::GroupQueue<Job, JobResult>> {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        if self.batches.len() <= 1 {
            return self.batches.first();
        }
        let n = u64::try_from(self.batches.len()).ok()?;
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(game_id);
        self.batches.get(usize::try_from(hash % n).ok()?)
    }

    /// One try of a command in a group-commit batch; the caller renders its own view.
    fn try_batched(
        &self,
        queue: &crate::group::GroupQueue<Job, JobResult>,
        req: &CommandRequest<'_>,
        count: bool,
    ) -> Result<CommandOutcome, ServiceError> {
        let done = queue.submit(
            Job::of(req, count),
            req.announced,
            |jobs, pass| self.run_batch(jobs, pass),
            || Err(ServiceError::Busy),
        )?;
        Ok(match done {
            Batched::Done(outcome) => outcome,
            Batched::Applied(a) => CommandOutcome::Applied(Box::new(self.body_named(
                &a.game,
                &a.row,
                a.version,
                req.account,
                &a.names,
            ))),
        })
    }

    /// One try of a command in a transaction of its own: the caller's account first (when
    /// not checked yet), then its limit (when `count`), then the command.
    fn try_alone(
        &self,
        req: &CommandRequest<'_>,
        count: bool,
    ) -> Result<CommandOutcome, ServiceError> {
        let (checked, resolved);
        let req = match req.token_version {
            Some(version) => {
                let row = self
                    .store
                    .read(|tx| tx.account_by_id(req.account).map_err(ServiceError::from))?;
                checked = crate::accounts::admit(row, version)?;
                resolved = CommandRequest {
                    name: &checked.name,
                    token_version: None,
                    announced: None,
                    command: req.command.clone(),
                    ..*req
                };
                &resolved
            }
            None => req,
        };
        if count {
            self.limits.command(req.account)?;
        }
        let mut committed = None;
        // Every statement of a command finds its rows by key (`write_by_keys`).
        let result = self
            .store
            .write_by_keys(|tx| self.attempt(tx, req, &mut committed));
        if let (Ok(CommandOutcome::Applied(_)), Some((version, game))) = (&result, committed) {
            self.cache.put(req.game, version, game);
            self.notifier.notify(req.game);
        }
        result
    }

    fn current_version(&self, game_id: &str) -> Result<i32, ServiceError> {
        let row = self
            .store
            .read(|tx| tx.game(game_id).map_err(ServiceError::from))?;
        row.map(|g| g.version).ok_or(ServiceError::GameNotFound)
    }

    /// Checks `req` against the game (privacy, `If-Match`) and decides it, with the bots'
    /// answers and the new deadlines: the events to append and the game after them. Reads
    /// and writes nothing.
    fn decide_on(
        &self,
        row: &GameRow,
        version: i32,
        game: &Game,
        req: &CommandRequest<'_>,
    ) -> Result<(Vec<NewEvent>, Game), ServiceError> {
        // Privacy first: to an outsider a private game does not exist, whatever the
        // request's headers say (a stale If-Match must not reveal its version).
        if !row.public && game.seat_of(req.account).is_none() {
            // The code invites; so does a seat a rematch keeps for the account.
            let invited = (req.invite_code.is_some()
                && req.invite_code == row.invite_code.as_deref())
                || kept_for(game, req.account);
            if !(matches!(req.command, Command::Join {}) && invited) {
                return Err(ServiceError::GameNotFound);
            }
        }
        if let Some(expected) = req.if_match
            && expected != version
        {
            return Err(ServiceError::VersionConflict { current: version });
        }
        let mut game = game.clone();
        let mut dealer = SeededDealer::new(game.seed().unwrap_or_default());
        let actor = Actor::Account {
            id: req.account,
            name: req.name,
        };
        let acted = game.seat_of(req.account);
        let mut events = game.decide(actor, &req.command, &mut dealer)?;
        events.iter().for_each(|e| game.apply(e));
        play_bots(&mut game, &mut dealer, &mut events, self.stand_in)?;
        if let Some(deadlines) = refresh_deadlines(&game, acted, chrono::Utc::now()) {
            game.apply(&deadlines);
            events.push(deadlines);
        }
        Ok((encode_all(&events)?, game))
    }

    fn attempt(
        &self,
        tx: &mut dyn Tx,
        req: &CommandRequest<'_>,
        committed: &mut Option<(i32, Game)>,
    ) -> Result<CommandOutcome, ServiceError> {
        let request_hash = request_hash(req);
        if let Some(key) = req.idempotency_key
            && let Some(stored) = tx.idempotent_response(req.game, req.account, key)?
        {
            let age = chrono::Utc::now().naive_utc() - stored.created_at;
            if age > chrono::Duration::hours(IDEMPOTENCY_HOURS) {
                // Past the promised 24 hours the key is free again.
                tx.forget_idempotency_key(req.game, req.account, key)?;
            } else if stored
                .request_hash
                .as_deref()
                .is_some_and(|h| h != request_hash)
            {
                return Err(ServiceError::IdempotencyKeyReused);
            } else {
                return Ok(CommandOutcome::Replayed(stored.response));
            }
        }
        let (row, version, before) = self.load_row(tx, req.game)?;
        let (encoded, game) = self.decide_on(&row, version, &before, req)?;
        let new_version = version + i32::try_from(encoded.len()).unwrap_or(i32::MAX);
        tx.append(req.game, version, &index_of(&game, req.game), &encoded)?;
        self.notify_outbox(tx, req.game, new_version, &before, &game)?;
        let response = self.body(tx, &game, &row, new_version, req.account)?;
        *committed = Some((new_version, game));
        if let Some(key) = req.idempotency_key {
            let json = serde_json::to_value(&response).map_err(ServiceError::Encode)?;
            tx.save_idempotent_response(req.game, req.account, key, &request_hash, 200, &json)?;
        }
        Ok(CommandOutcome::Applied(Box::new(response)))
    }

    /// The senders of a batch's commands, in order: each one's name, or why it is refused —
    /// a token that no longer speaks for its account (checked on the accounts of the
    /// batch's reads, as the `Caller` extractor does), then the command limit (counted on a
    /// command's first try only: by the reads' statement on PostgreSQL, here on SQLite).
    fn batch_senders(
        &self,
        jobs: &[Job],
        reads: &BatchReads,
        window: Option<&crate::limits::CommandWindow>,
    ) -> Result<Vec<Result<String, ServiceError>>, ServiceError> {
        let mut senders: Vec<Result<String, ServiceError>> = jobs
            .iter()
            .map(|j| match j.token_version {
                None => Ok(j.name.clone()),
                Some(version) => {
                    let row = reads.accounts.iter().find(|r| r.id == j.account).cloned();
                    crate::accounts::admit(row, version)
                        .map(|row| row.name)
                        .map_err(ServiceError::from)
                }
            })
            .collect();
        let Some(window) = window else {
            return Ok(senders);
        };
        // Counted: first tries whose token holds.
        let (counted, accounts): (Vec<usize>, Vec<&str>) = jobs
            .iter()
            .zip(&senders)
            .enumerate()
            .filter(|(_, (job, sender))| job.count && sender.is_ok())
            .map(|(i, (job, _))| (i, job.account.as_str()))
            .unzip();
        let verdicts = self
            .limits
            .commands_in(&accounts, window, reads.counts.as_deref())?;
        for (i, verdict) in counted.into_iter().zip(verdicts) {
            if let (Err(e), Some(sender)) = (verdict, senders.get_mut(i)) {
                *sender = Err(e.into());
            }
        }
        Ok(senders)
    }

    /// A batch of the group commit: one transaction for all its commands. When the
    /// transaction fails as a whole (a database error, or a stored event that cannot be
    /// read), nothing of it is kept and each command is tried alone, so one command's
    /// failure is never another's.
    fn run_batch(&self, jobs: Vec<Job>, pass: &dyn Fn()) -> Vec<JobResult> {
        let mut committed = Vec::new();
        match self
            .store
            .write_by_keys(|tx| self.batch_attempt(tx, &jobs, &mut committed, pass))
        {
            Ok(results) => {
                for (game_id, version, game) in committed {
                    self.notifier.notify(&game_id);
                    self.cache.put(&game_id, version, game);
                }
                results
            }
            // An outage is every command's: no point in waiting for the database again.
            Err(ServiceError::Store(e)) if e.is_unavailable() => {
                let cause = crate::telemetry::Chain(&e).to_string();
                jobs.iter()
                    .map(|_| Err(StoreError::Unavailable(cause.clone()).into()))
                    .collect()
            }
            Err(e) => {
                tracing::warn!(
                    commands = jobs.len(),
                    error = %crate::telemetry::Chain(&e),
                    "a batch failed; each command alone"
                );
                jobs.iter()
                    .map(|job| self.try_alone(&job.request(), job.count).map(Batched::Done))
                    .collect()
            }
        }
    }

    /// The batch's transaction: one statement of reads on PostgreSQL (the senders'
    /// accounts, their command count, the games' rows, and the names of the people seated
    /// and whether they have a webhook or a mail address); the events after the cached
    /// states, where a game's row is ahead of them; the commands decided in the order they
    /// came (a command sees the ones before it on the same game); one append for all
    /// games. On PostgreSQL that is four round trips with `BEGIN` and `COMMIT`, whatever the
    /// batch's size (five when a cached state is behind its game's row). A command the
    /// rules refuse writes nothing; a game that moved on meanwhile (another replica) makes
    /// its commands conflict, and they are decided again in a later batch. With only the
    /// `COMMIT` left, the next batch may start (`pass`): a command of it on a game of this
    /// one meets the row lock, and its compare-and-set fails once this one commits. The
    /// views are rendered by each command's own caller afterwards, not here, so the
    /// batches stay short.
    fn batch_attempt(
        &self,
        tx: &mut dyn Tx,
        jobs: &[Job],
        committed: &mut Vec<(String, i32, Game)>,
        pass: &dyn Fn(),
    ) -> Result<Vec<JobResult>, ServiceError> {
        let mut unchecked: Vec<&str> = jobs
            .iter()
            .filter(|j| j.token_version.is_some())
            .map(|j| j.account.as_str())
            .collect();
        unchecked.sort_unstable();
        unchecked.dedup();
        let mut ids: Vec<&str> = jobs.iter().map(|j| j.game.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        // First tries count against their senders' limit: in the reads' statement where
        // the backend can (only those whose token holds), else after them.
        let window = self.limits.command_window();
        let count: Vec<(String, &str, Option<i32>)> = match window {
            Some(_) => jobs
                .iter()
                .filter(|j| j.count)
                .map(|j| {
                    let account = j.account.as_str();
                    (
                        crate::limits::CommandWindow::key(account),
                        account,
                        j.token_version,
                    )
                })
                .collect(),
            None => Vec::new(),
        };
        let mut reads = tx.batch_reads(&crate::store::BatchQuery {
            accounts: &unchecked,
            games: &ids,
            mail: self.mail_digest.is_some(),
            count: &count,
            window: window.map_or((0, 0), |w| (w.start(), w.length())),
        })?;
        let senders = self.batch_senders(jobs, &reads, window.as_ref())?;
        let rows = std::mem::take(&mut reads.games);
        let cached: Vec<(&GameRow, Option<(i32, Game)>)> = rows
            .iter()
            .map(|row| (row, self.cache.get(&row.id)))
            .collect();
        // Only games whose row is ahead of the cached state have newer events to read.
        let wanted: Vec<(&str, i32)> = cached
            .iter()
            .filter_map(|(row, state)| {
                let after = state.as_ref().map_or(0, |(version, _)| *version);
                (row.version > after).then_some((row.id.as_str(), after))
            })
            .collect();
        let mut newer: HashMap<String, Vec<StoredEvent>> = HashMap::new();
        for event in tx.events_after_many(&wanted)? {
            newer.entry(event.game_id.clone()).or_default().push(event);
        }
        let mut tables: HashMap<&str, Table<'_>> = HashMap::new();
        for (row, state) in cached {
            let id = row.id.as_str();
            let stored = newer.remove(id).unwrap_or_default();
            let (version, game) = Self::fold(id, state, &stored)?;
            tables.insert(
                id,
                Table {
                    row,
                    loaded: version,
                    version,
                    game,
                    events: Vec::new(),
                },
            );
        }
        // Decide in order; a decided command's place holds its states and version.
        let mut decided: Vec<Result<Decided<'_>, ServiceError>> = Vec::with_capacity(jobs.len());
        for (job, sender) in jobs.iter().zip(senders) {
            let name = match sender {
                Ok(name) => name,
                Err(e) => {
                    decided.push(Err(e));
                    continue;
                }
            };
            let req = CommandRequest {
                name: &name,
                token_version: None,
                ..job.request()
            };
            let Some(table) = tables.get_mut(job.game.as_str()) else {
                decided.push(Err(ServiceError::GameNotFound));
                continue;
            };
            decided.push(
                self.decide_on(table.row, table.version, &table.game, &req)
                    .map(|(encoded, after)| {
                        table.version += i32::try_from(encoded.len()).unwrap_or(i32::MAX);
                        table.events.extend(encoded);
                        let before = std::mem::replace(&mut table.game, after.clone());
                        Decided {
                            table: job.game.as_str(),
                            version: table.version,
                            before,
                            after,
                        }
                    }),
            );
        }
        let changed: Vec<(&str, &Table<'_>, GameIndex)> = tables
            .iter()
            .filter(|(_, t)| !t.events.is_empty())
            .map(|(id, t)| (*id, t, index_of(&t.game, id)))
            .collect();
        let appends: Vec<Append<'_>> = changed
            .iter()
            .map(|(id, t, index)| Append {
                game: id,
                expected: t.loaded,
                index,
                events: &t.events,
            })
            .collect();
        let made: Vec<&str> = changed
            .iter()
            .zip(tx.append_many(&appends)?)
            .filter_map(|((id, _, _), made)| made.then_some(*id))
            .collect();
        let applied: Vec<&Decided<'_>> = decided
            .iter()
            .filter_map(|d| d.as_ref().ok())
            .filter(|d| made.contains(&d.table))
            .collect();
        // Outbox rows only where someone seated listens (a webhook, or a mail address when
        // mail is on); then each command's own announcements as alone.
        let afters: Vec<&Game> = applied.iter().map(|d| &d.after).collect();
        let seated = seated_people(&afters);
        let (listening, names) = self.seated_facts(tx, &seated, reads.people.as_deref())?;
        if listening {
            for d in &applied {
                self.notify_outbox(tx, d.table, d.version, &d.before, &d.after)?;
            }
        }
        let names = std::sync::Arc::new(names);
        let mut results = Vec::with_capacity(jobs.len());
        for d in decided {
            results.push(match d {
                Err(e) => Err(e),
                Ok(d) if !made.contains(&d.table) => Err(ServiceError::Store(StoreError::Conflict)),
                Ok(d) => {
                    let row = tables
                        .get(d.table)
                        .map(|t| t.row.clone())
                        .ok_or(ServiceError::GameNotFound)?;
                    Ok(Batched::Applied(Box::new(Unrendered {
                        game: d.after,
                        row,
                        version: d.version,
                        names: names.clone(),
                    })))
                }
            });
        }
        for id in made {
            if let Some(table) = tables.remove(id) {
                committed.push((id.to_owned(), table.version, table.game));
            }
        }
        pass();
        Ok(results)
    }

    /// Whether anyone seated listens (a webhook, or a mail address when mail is on), and
    /// the seated people's names: from the batch's first read when it covers them all
    /// (PostgreSQL; someone who joined in this batch is a sender, so covered), else read
    /// now.
    fn seated_facts(
        &self,
        tx: &mut dyn Tx,
        seated: &[&str],
        known: Option<&[PersonRow]>,
    ) -> Result<(bool, HashMap<String, String>), ServiceError> {
        if let Some(known) = known {
            let found: Vec<&PersonRow> = seated
                .iter()
                .filter_map(|id| known.iter().find(|p| p.id == *id))
                .collect();
            if found.len() == seated.len() {
                return Ok((
                    found.iter().any(|p| p.listens),
                    found
                        .iter()
                        .map(|p| (p.id.clone(), p.name.clone()))
                        .collect(),
                ));
            }
        }
        let listening = !seated.is_empty()
            && (!tx.webhooks().webhooks_of_accounts(seated)?.is_empty()
                || (self.mail_digest.is_some()
                    && !tx.account_mail().mail_recipients(seated)?.is_empty()));
        let names = tx
            .account_mail()
            .account_names(seated)?
            .into_iter()
            .collect();
        Ok((listening, names))
    }

    /// Moves for every seat of a game whose deadline has passed (`take_row`: the cheapest
    /// row; otherwise the heuristic bot's choice); those events carry `"cause": "deadline"`.
    /// Safe with any number of replicas: the append is a compare-and-set on the version, so
    /// one replica wins and the others find nothing due when they look again.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn expire(&self, game_id: &str) -> Result<usize, ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            match self
                .store
                .write(|tx| self.expire_attempt(tx, game_id, chrono::Utc::now()))
            {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(moved) => {
                    if moved > 0 {
                        self.notifier.notify(game_id);
                    }
                    return Ok(moved);
                }
                Err(e) => return Err(e),
            }
        }
        Err(ServiceError::Busy)
    }

    fn expire_attempt(
        &self,
        tx: &mut dyn Tx,
        game_id: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<usize, ServiceError> {
        let (version, mut game) = self.load(tx, game_id)?;
        let before = game.clone();
        let mut dealer = SeededDealer::new(game.seed().unwrap_or_default());
        let mut dice = BotDice(rand::rng());
        let mut encoded = Vec::new();
        let mut moved = 0;
        // Each pass moves for one overdue seat; the loop ends when none is left.
        while let Some(seat) = overdue(&game, now) {
            let Some(choice) = rules::bots::choose(&game, seat, self.stand_in, &mut dice) else {
                break;
            };
            let caused = game.decide(Actor::Deadline { seat }, &choice, &mut dealer)?;
            let mut followed = Vec::new();
            caused.iter().for_each(|e| game.apply(e));
            play_bots(&mut game, &mut dealer, &mut followed, self.stand_in)?;
            if let Some(deadlines) = refresh_deadlines(&game, Some(seat), now) {
                game.apply(&deadlines);
                followed.push(deadlines);
            }
            for event in &caused {
                encoded.push(
                    to_new_event_with_cause(event, Some("deadline"))
                        .map_err(ServiceError::Encode)?,
                );
            }
            encoded.extend(encode_all(&followed)?);
            moved += 1;
            tracing::info!(
                game = game_id,
                seat,
                action = choice.name(),
                "moved for a seat whose deadline passed"
            );
        }
        if encoded.is_empty() {
            return Ok(0);
        }
        let new_version = version + i32::try_from(encoded.len()).unwrap_or(i32::MAX);
        tx.append(game_id, version, &index_of(&game, game_id), &encoded)?;
        self.notify_outbox(tx, game_id, new_version, &before, &game)?;
        Ok(moved)
    }

    /// Issues a stream ticket: a random, single-use credential for the game's live stream,
    /// bound to `account` and `game` and to the token version `token_version` of the token
    /// that asked for it, valid for the configured time (returned in seconds). Only its hash
    /// is stored. The game must be visible to the account.
    ///
    /// # Errors
    /// Unknown or invisible game, storage failure.
    pub fn issue_stream_ticket(
        &self,
        game_id: &str,
        account: &str,
        token_version: i32,
    ) -> Result<(String, u64), ServiceError> {
        // 256 random bits, hex (the same generator as shuffle seeds).
        let ticket = fairness::new_seed();
        let ttl = self.ticket_ttl.as_secs();
        let expires_at = chrono::Utc::now().naive_utc()
            + chrono::Duration::seconds(i64::try_from(ttl).unwrap_or(60));
        self.store.write(|tx| {
            self.visible(tx, game_id, account)?;
            tx.insert_stream_ticket(
                &ticket_hash(&ticket),
                account,
                token_version,
                game_id,
                expires_at,
            )?;
            Ok::<_, ServiceError>(())
        })?;
        Ok((ticket, ttl))
    }

    /// Redeems a stream ticket for `game_id`: the account it was issued to and the token
    /// version it was issued under, once, before it expires, while the account exists and
    /// its token version is still that one; `None` for an unknown, used, expired or other
    /// game's ticket, and for one issued before a logout everywhere, a password change or
    /// the account's deletion.
    ///
    /// # Errors
    /// Storage failure.
    pub fn redeem_stream_ticket(
        &self,
        game_id: &str,
        ticket: &str,
    ) -> Result<Option<(String, i32)>, ServiceError> {
        let now = chrono::Utc::now().naive_utc();
        self.store.write(|tx| {
            let Some((account, version)) =
                tx.redeem_stream_ticket(&ticket_hash(ticket), game_id, now)?
            else {
                return Ok(None);
            };
            let row = tx.account_by_id(&account)?;
            Ok(crate::accounts::admit(row, version)
                .ok()
                .map(|_| (account, version)))
        })
    }

    /// The game a private game's invite code belongs to.
    ///
    /// # Errors
    /// No game has that code (`GameNotFound`), storage failure.
    pub fn game_of_invite(&self, code: &str) -> Result<String, ServiceError> {
        self.store
            .read(|tx| tx.game_by_invite_code(code).map_err(ServiceError::from))?
            .ok_or(ServiceError::GameNotFound)
    }

    /// Starts the rematch of a finished game for one of its people, or finds the one
    /// already started: a new game with the same ruleset, options, visibility and people
    /// (bots with their strategies), a fresh seed, the caller as host, and the other people's
    /// seats kept for them for the rematch window. The finished game records the link
    /// (`rematch_created`). Returns the game and whether it was created now.
    ///
    /// # Errors
    /// Unknown or invisible game, not a person of it, a game not finished yet, limits,
    /// storage failure.
    pub fn rematch(
        &self,
        game_id: &str,
        account: &str,
        name: &str,
    ) -> Result<(GameBody, bool), ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            let mut linked = None;
            let result = self.store.write(|tx| {
                let (row, version, old) = self.visible(tx, game_id, account)?;
                if let Some(existing) = old.rematch.clone() {
                    let (erow, eversion, egame) = self.visible(tx, &existing, account)?;
                    return Ok((self.body(tx, &egame, &erow, eversion, account)?, false));
                }
                let Some(seat) = old.seat_of(account) else {
                    return Err(ServiceError::Rule(rules::RuleError::NotAPlayer));
                };
                if old.status() != Status::Finished {
                    return Err(ServiceError::NotFinished);
                }
                let open = tx.open_lobbies(account)?;
                self.limits.game(account, open)?;
                let mut reservations = Vec::new();
                let mut bots = Vec::new();
                let others = old
                    .seats
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != usize::from(seat));
                for (new_seat, (_, s)) in (1u8..).zip(others) {
                    match &s.occupant {
                        // A deleted account's seat stays open instead of waiting for
                        // someone who cannot come back.
                        Some(rules::Occupant::Human { account: a, .. })
                            if tx
                                .account_by_id(a)?
                                .is_some_and(|row| row.deleted_at.is_none()) =>
                        {
                            reservations.push(rules::Reservation {
                                seat: new_seat,
                                account: a.clone(),
                            });
                        }
                        Some(rules::Occupant::Human { .. }) => {}
                        Some(rules::Occupant::Bot { strategy, .. }) => bots.push(*strategy),
                        None => {}
                    }
                }
                let kept = !reservations.is_empty();
                let (new_row, mut game, mut events) = self.new_game(
                    CreateRequest {
                        account,
                        name,
                        setup: old.setup.clone(),
                        game_name: old.name.clone(),
                        deal: None,
                        move_deadline_seconds: old.move_deadline_seconds,
                        public: row.public,
                    },
                    Extras {
                        rematch_of: Some(game_id.to_owned()),
                        reservations,
                        auto_start: false,
                    },
                )?;
                let mut dealer = SeededDealer::new(game.seed().unwrap_or_default());
                for strategy in bots {
                    let actor = Actor::Account { id: account, name };
                    let added = game.decide(actor, &Command::AddBot { strategy }, &mut dealer)?;
                    added.iter().for_each(|e| game.apply(e));
                    events.extend(added);
                }
                let new_row = GameRow {
                    version: i32::try_from(events.len()).unwrap_or(i32::MAX),
                    free_seats: index_of(&game, &new_row.id).free_seats,
                    ..new_row
                };
                insert_game(tx, &new_row, &game, &events)?;
                if kept {
                    let until = chrono::Utc::now().naive_utc()
                        + chrono::Duration::seconds(
                            i64::try_from(self.rematch_window.as_secs()).unwrap_or(86_400),
                        );
                    tx.set_reserved_until(&new_row.id, Some(until))?;
                }
                let link = Event::RematchCreated {
                    game: new_row.id.clone(),
                };
                let mut finished = old;
                finished.apply(&link);
                tx.append(
                    game_id,
                    version,
                    &index_of(&finished, game_id),
                    &encode_all(std::slice::from_ref(&link))?,
                )?;
                crate::webhooks::enqueue_rematch(
                    tx.webhooks(),
                    &new_row.id,
                    new_row.version,
                    &game,
                )?;
                linked = Some((version + 1, finished));
                Ok((
                    self.body(tx, &game, &new_row, new_row.version, account)?,
                    true,
                ))
            });
            match result {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(answer) => {
                    if let Some((version, finished)) = linked {
                        self.cache.put(game_id, version, finished);
                        self.notifier.notify(game_id);
                    }
                    return Ok(answer);
                }
                Err(e) => return Err(e),
            }
        }
        Err(ServiceError::Busy)
    }

    /// Frees the seats a rematch kept when nobody came for them in time.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn release_reservations(&self, game_id: &str) -> Result<(), ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            let mut released = None;
            let result = self.store.write(|tx| {
                let (version, mut game) = self.load(tx, game_id)?;
                tx.set_reserved_until(game_id, None)?;
                let waiting = game
                    .seats
                    .iter()
                    .any(|s| s.occupant.is_none() && s.reserved_for.is_some());
                if !waiting || game.status() != Status::Lobby {
                    return Ok(());
                }
                let event = Event::ReservationsReleased {};
                game.apply(&event);
                tx.append(
                    game_id,
                    version,
                    &index_of(&game, game_id),
                    &encode_all(std::slice::from_ref(&event))?,
                )?;
                released = Some((version + 1, game));
                Ok(())
            });
            match result {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(()) => {
                    if let Some((version, game)) = released {
                        self.cache.put(game_id, version, game);
                        self.notifier.notify(game_id);
                    }
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        Err(ServiceError::Busy)
    }

    /// Games whose rematch reservations are due at `now`.
    ///
    /// # Errors
    /// Storage failure.
    pub fn due_reservations(
        &self,
        now: chrono::NaiveDateTime,
    ) -> Result<Vec<String>, ServiceError> {
        Ok(self.store.read(|tx| tx.due_reservations(now, 50))?)
    }

    /// Waits for a quick play's turn in `ruleset`'s queue of this replica (first come,
    /// first served; a caller that goes away leaves the queue). Async and before any
    /// connection is taken: see [`Service::quick_play`].
    pub async fn quick_turn(&self, ruleset: rules::Ruleset) -> QuickTurn {
        QuickTurn {
            ruleset,
            _turn: self.quick.of(ruleset).lock_owned().await,
        }
    }

    /// Quick play: seats the caller at the oldest public quick-play table of the turn's
    /// ruleset that fits what they asked for and has a free seat, or opens one (public,
    /// starting by itself when full). Quick plays of a ruleset take turns, so simultaneous
    /// callers fill one table before the next is opened: in this replica by the queue the
    /// `turn` was taken from, which holds no connection while it waits; across replicas
    /// by a named lock, for which at most one connection per replica and ruleset waits.
    /// Returns the game and whether it was opened now; the turn ends with the call.
    ///
    /// # Errors
    /// Invalid players or options, limits, storage failure.
    pub fn quick_play(
        &self,
        turn: QuickTurn,
        req: &QuickRequest<'_>,
    ) -> Result<(GameBody, bool), ServiceError> {
        let ruleset = turn.ruleset;
        let players = req.players.unwrap_or_else(|| quick_players(ruleset));
        let wanted = Setup::from_input(ruleset, players, None, req.options)?;
        for _ in 0..MAX_ATTEMPTS {
            let mut committed = None;
            let result = self.store.write(|tx| {
                tx.lock_named(&format!("quick-play:{}", ruleset.name()))?;
                for id in tx.open_public_lobbies(ruleset.name(), 50)? {
                    let (row, version, game) = self.load_row(tx, &id)?;
                    let fits = game.auto_start
                        && req.players.is_none_or(|p| p == game.setup.players)
                        && (req.options.is_none() || game.setup.options == wanted.options);
                    if !fits {
                        continue;
                    }
                    if game.seat_of(req.account).is_some() {
                        return Ok((self.body(tx, &game, &row, version, req.account)?, false));
                    }
                    let join = CommandRequest {
                        game: &id,
                        account: req.account,
                        name: req.name,
                        command: Command::Join {},
                        if_match: Some(version),
                        idempotency_key: None,
                        invite_code: None,
                        token_version: None,
                        announced: None,
                    };
                    return match self.attempt(tx, &join, &mut committed)? {
                        CommandOutcome::Applied(body) => Ok((*body, false)),
                        CommandOutcome::Replayed(_) => Err(ServiceError::Busy),
                    };
                }
                let open = tx.open_lobbies(req.account)?;
                self.limits.game(req.account, open)?;
                let setup = Setup {
                    players,
                    ..wanted.clone()
                };
                let (row, game, events) = self.new_game(
                    CreateRequest {
                        account: req.account,
                        name: req.name,
                        setup,
                        game_name: None,
                        deal: None,
                        move_deadline_seconds: None,
                        public: true,
                    },
                    Extras {
                        auto_start: true,
                        ..Extras::default()
                    },
                )?;
                insert_game(tx, &row, &game, &events)?;
                Ok((self.body(tx, &game, &row, row.version, req.account)?, true))
            });
            match result {
                Err(
                    ServiceError::Store(StoreError::Conflict)
                    | ServiceError::VersionConflict { .. },
                ) => {}
                Ok(answer) => {
                    if let Some((version, game)) = committed {
                        self.cache.put(&answer.0.id, version, game);
                        self.notifier.notify(&answer.0.id);
                    }
                    return Ok(answer);
                }
                Err(e) => return Err(e),
            }
        }
        Err(ServiceError::Busy)
    }

    /// A page of games: without `mine` the caller's and the public ones, newest first and
    /// paged by id; the inbox ordered by the caller's deadline (games without one after,
    /// newest first) and paged by position. The cursor is opaque to clients.
    ///
    /// # Errors
    /// A cursor this list did not hand out, storage failure.
    pub fn list_games(&self, req: &ListRequest<'_>) -> Result<GameListPage, ServiceError> {
        use base64::Engine;
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let cursor = match req.cursor {
            None => None,
            Some(c) => Some(
                URL_SAFE_NO_PAD
                    .decode(c)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .filter(|c| !c.is_empty())
                    .ok_or(ServiceError::InvalidCursor)?,
            ),
        };
        let offset: usize = match (&cursor, req.inbox) {
            (Some(c), true) => c.parse().map_err(|_| ServiceError::InvalidCursor)?,
            _ => 0,
        };
        let before = cursor.filter(|_| !req.inbox);
        let query = ListQuery {
            account: req.account,
            mine: req.mine,
            awaiting: req.inbox,
            status: req.status,
            ruleset: req.ruleset,
            before_id: before.as_deref(),
            min_free_seats: req.min_free_seats,
            limit: if req.inbox { MAX_INBOX } else { req.limit },
        };
        let mut games = self.store.read(|tx| tx.list_games(&query))?;
        let limit = usize::try_from(req.limit).unwrap_or(usize::MAX);
        if !req.inbox {
            let next_cursor = (games.len() == limit)
                .then(|| games.last().map(|g| URL_SAFE_NO_PAD.encode(&g.game.id)))
                .flatten();
            return Ok(GameListPage { games, next_cursor });
        }
        let deadline = |row: &GameSummaryRow| {
            row.seats
                .iter()
                .find(|s| s.account_id.as_deref() == Some(req.account))
                .and_then(|s| s.deadline_at)
        };
        games.sort_by(|a, b| match (deadline(a), deadline(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => b.game.id.cmp(&a.game.id),
        });
        let games: Vec<GameSummaryRow> = games.into_iter().skip(offset).take(limit).collect();
        let next_cursor =
            (games.len() == limit).then(|| URL_SAFE_NO_PAD.encode((offset + limit).to_string()));
        Ok(GameListPage { games, next_cursor })
    }

    /// Forgets idempotency keys older than 24 hours.
    ///
    /// # Errors
    /// Storage failure.
    pub fn prune_idempotency_keys(&self) -> Result<usize, ServiceError> {
        let before = chrono::Utc::now().naive_utc() - chrono::Duration::hours(IDEMPOTENCY_HOURS);
        self.store.write(|tx| {
            tx.prune_idempotency_keys(before)
                .map_err(ServiceError::from)
        })
    }

    /// A page of a game's events as `viewer` may read them.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn events(
        &self,
        game_id: &str,
        viewer: &str,
        after: i32,
        limit: i64,
    ) -> Result<Vec<ReadEvent>, ServiceError> {
        self.store.read(|tx| {
            let (_, _, game) = self.visible(tx, game_id, viewer)?;
            let seat = game.seat_of(viewer);
            let audiences: Vec<String> = std::iter::once(Audience::Public)
                .chain(seat.map(Audience::Seat))
                .map(Audience::as_text)
                .collect();
            let rows = tx.events_page(game_id, after, &audiences, limit)?;
            Ok(rows.into_iter().map(ReadEvent::from).collect())
        })
    }

    /// A page of the game's events after `after` for live streams, for every seat at once
    /// (one read serves all of a game's streams, `crate::http::stream`): the events of every
    /// audience but the server's, who may see which ([`StreamView`]), and `upto`, the seq up
    /// to which the page covers the game (events past the last row and up to `upto` are for
    /// the server only). The caller filters each event by its viewer's audience. With
    /// `after = i32::MAX` it only reads the game's current version as `upto`.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn stream_page(
        &self,
        game_id: &str,
        after: i32,
        limit: i64,
    ) -> Result<StreamPage, ServiceError> {
        self.store.read(|tx| {
            let (row, version, game) = self.load_row(tx, game_id)?;
            if self.cache.would_keep(game_id, version) {
                self.cache.put(game_id, version, game.clone());
            }
            let view = StreamView {
                public: row.public,
                seats: game
                    .seats
                    .iter()
                    .map(|s| s.account().map(str::to_owned))
                    .collect(),
                kept: game
                    .seats
                    .iter()
                    .filter(|s| s.occupant.is_none())
                    .filter_map(|s| s.reserved_for.clone())
                    .collect(),
            };
            let audiences: Vec<String> = std::iter::once(Audience::Public)
                .chain(
                    (0..game.seats.len()).filter_map(|s| u8::try_from(s).ok().map(Audience::Seat)),
                )
                .map(Audience::as_text)
                .collect();
            let rows = tx.events_page(game_id, after, &audiences, limit)?;
            let last = rows.last().map(|r| r.seq);
            // Appends commit in seq order and this read began after `load`, so a short page
            // covers every event up to `version`; a full one only up to its last row.
            let upto = if i64::try_from(rows.len()).unwrap_or(i64::MAX) < limit {
                version.max(last.unwrap_or(0))
            } else {
                last.unwrap_or(after)
            };
            Ok(StreamPage {
                view,
                events: rows.into_iter().map(ReadEvent::from).collect(),
                upto,
            })
        })
    }
}

/// Who may see a game's live stream, and at which seat, as of one read.
#[derive(Debug, Clone)]
pub struct StreamView {
    /// Public games are visible to every account.
    pub public: bool,
    /// Each seat's account, if any.
    pub seats: Vec<Option<String>>,
    /// Accounts a free seat is kept for (a rematch).
    pub kept: Vec<String>,
}

impl StreamView {
    /// The seat of `account`.
    #[must_use]
    pub fn seat_of(&self, account: &str) -> Option<u8> {
        self.seats
            .iter()
            .position(|s| s.as_deref() == Some(account))
            .and_then(|i| u8::try_from(i).ok())
    }

    /// Whether `account` may see the game at all (as [`Service::events`] decides).
    #[must_use]
    pub fn admits(&self, account: &str) -> bool {
        self.public || self.seat_of(account).is_some() || self.kept.iter().any(|k| k == account)
    }
}

/// A page read by [`Service::stream_page`].
#[derive(Debug)]
pub struct StreamPage {
    /// Who may see what.
    pub view: StreamView,
    /// Events of every audience but the server's, in seq order.
    pub events: Vec<ReadEvent>,
    /// The page covers the game up to this seq.
    pub upto: i32,
}

/// A command waiting for a batch of the group commit (owned: the batch's leader runs it
/// on its own thread).
struct Job {
    game: String,
    account: String,
    name: String,
    command: Command,
    if_match: Option<i32>,
    invite_code: Option<String>,
    token_version: Option<i32>,
    /// Counted against the caller's command limit (its first try).
    count: bool,
}

impl Job {
    fn of(req: &CommandRequest<'_>, count: bool) -> Self {
        Self {
            game: req.game.to_owned(),
            account: req.account.to_owned(),
            name: req.name.to_owned(),
            command: req.command.clone(),
            if_match: req.if_match,
            invite_code: req.invite_code.map(str::to_owned),
            token_version: req.token_version,
            count,
        }
    }

    fn request(&self) -> CommandRequest<'_> {
        CommandRequest {
            game: &self.game,
            account: &self.account,
            name: &self.name,
            command: self.command.clone(),
            if_match: self.if_match,
            idempotency_key: None,
            invite_code: self.invite_code.as_deref(),
            token_version: self.token_version,
            announced: None,
        }
    }
}

/// A command's result from its batch.
type JobResult = Result<Batched, ServiceError>;

/// What a batch hands a command's caller.
enum Batched {
    /// Answered in full (the command was tried alone after its batch failed).
    Done(CommandOutcome),
    /// Applied; the caller renders its own view of the game.
    Applied(Box<Unrendered>),
}

/// An applied command's game, for its caller's view.
struct Unrendered {
    game: Game,
    row: GameRow,
    version: i32,
    names: std::sync::Arc<HashMap<String, String>>,
}

/// A game in a batch: as loaded, and as the batch's commands so far left it.
struct Table<'r> {
    row: &'r GameRow,
    /// The version read from the store: the append's compare-and-set.
    loaded: i32,
    version: i32,
    game: Game,
    /// The events of the batch's commands on this game, in order.
    events: Vec<NewEvent>,
}

/// A command of a batch that the rules accepted.
struct Decided<'j> {
    table: &'j str,
    /// The game's version after it.
    version: i32,
    before: Game,
    after: Game,
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
fn seat_names(tx: &mut dyn Tx, games: &[&Game]) -> Result<HashMap<String, String>, ServiceError> {
    let people = seated_people(games);
    Ok(tx
        .account_mail()
        .account_names(&people)?
        .into_iter()
        .collect())
}

/// What an idempotency key is bound to: a SHA-256 of the command and the invite code.
fn request_hash(req: &CommandRequest<'_>) -> String {
    use sha2::Digest;
    let canonical = serde_json::to_string(&(&req.command, req.invite_code)).unwrap_or_default();
    hex::encode(sha2::Sha256::digest(canonical.as_bytes()))
}

/// The stored form of a stream ticket: its SHA-256, hex.
fn ticket_hash(ticket: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(ticket.as_bytes()))
}

/// Whether a rematch keeps a seat of `game` for `account`.
fn kept_for(game: &Game, account: &str) -> bool {
    game.seats
        .iter()
        .any(|s| s.occupant.is_none() && s.reserved_for.as_deref() == Some(account))
}

/// The table size quick play opens when the caller names none.
fn quick_players(ruleset: rules::Ruleset) -> u8 {
    match ruleset {
        rules::Ruleset::XNimmt => 3,
        _ => 4,
    }
}

/// Stores a new game made by `Service::new_game`.
fn insert_game(
    tx: &mut dyn Tx,
    row: &GameRow,
    game: &Game,
    events: &[Event],
) -> Result<(), ServiceError> {
    tx.create_game(row, &index_of(game, &row.id), &encode_all(events)?)?;
    Ok(())
}

fn version_of(stored: &[StoredEvent]) -> i32 {
    stored.last().map_or(0, |e| e.seq)
}

/// The first seat whose deadline is at or before `now` and which is still asked to act.
fn overdue(game: &Game, now: chrono::DateTime<chrono::Utc>) -> Option<u8> {
    game.deadlines
        .iter()
        .filter(|d| d.at <= now)
        .map(|d| d.seat)
        .find(|seat| game.is_awaited(*seat))
}

fn encode_all(events: &[Event]) -> Result<Vec<NewEvent>, ServiceError> {
    events
        .iter()
        .map(to_new_event)
        .collect::<Result<_, _>>()
        .map_err(ServiceError::Encode)
}

/// The server's randomness for bots.
struct BotDice(rand::rngs::ThreadRng);

impl rules::bots::Random for BotDice {
    fn below(&mut self, n: usize) -> usize {
        rand::RngExt::random_range(&mut self.0, 0..n.max(1))
    }
}

/// The strategy that plays a bot-controlled seat: a seated bot's own, and the stand-in
/// for a person who resigned.
fn strategy_of(seat: &rules::Seat, stand_in: BotStrategy) -> BotStrategy {
    match &seat.occupant {
        Some(rules::Occupant::Bot { strategy, .. }) => *strategy,
        _ => stand_in,
    }
}

/// Lets every bot-controlled seat that must act choose its move, until a person must act
/// or the game ends.
fn play_bots(
    game: &mut Game,
    dealer: &mut SeededDealer,
    events: &mut Vec<Event>,
    stand_in: BotStrategy,
) -> Result<(), ServiceError> {
    let mut dice = BotDice(rand::rng());
    while let Some(seat) = game.next_bot() {
        let strategy = game
            .seats
            .get(usize::from(seat))
            .map_or(stand_in, |s| strategy_of(s, stand_in));
        let Some(choice) = rules::bots::choose(game, seat, strategy, &mut dice) else {
            break;
        };
        let produced = game.decide(Actor::Bot { seat }, &choice, dealer)?;
        produced.iter().for_each(|e| game.apply(e));
        events.extend(produced);
    }
    Ok(())
}
