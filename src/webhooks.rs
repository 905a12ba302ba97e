//! Webhooks: an account registers URLs; when it becomes that account's turn in a game (or
//! one of its games ends) the server POSTs a signed JSON notification there.
//!
//! Notifications go through a durable outbox: [`enqueue`] writes `webhook_deliveries` rows
//! in the same transaction as the game events that cause them, so a notification exists
//! exactly when its cause was committed. The worker of each replica ([`spawn_worker`]) has
//! a lane per channel (webhooks, mail), each with its own sender capacity: a lane claims
//! the due rows its [`Gate`] admits (bounded per account and per URL, none to a paused URL),
//! checks that the game still asks for the move a row announces (otherwise the row is
//! `dropped`), and sends each on a thread of its own, which records the outcome: `delivered`
//! on a 2xx answer, another attempt after an exponential backoff otherwise, `failed` after
//! [`MAX_ATTEMPTS`]. No send waits for another, so a slow receiver holds back only its own
//! deliveries. A delivery keeps its id (payload `id`, header `Stammtisch-Delivery`) across
//! attempts, so receivers drop duplicates by it.
//!
//! Signature: `Stammtisch-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
//! `"<t>.<body>"`, keyed with the webhook's secret (the hex text as ASCII bytes); see
//! [`sign`].
//!
//! Payloads carry public information only: the game, its version and ruleset, the seat,
//! the actions asked and the deadline, or the winners — never cards, selections, chips or
//! seeds. Blocking: call from `web::block` or a thread of its own. Knows no HTTP routes.
//!
//! Targets: a URL may not name or resolve to a private, loopback, link-local, metadata or
//! otherwise internal address ([`targets`]); registration checks it, and every delivery
//! checks the resolved addresses again and connects to exactly those.

pub mod gate;
pub mod targets;

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use chrono::{NaiveDateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use serde::Serialize;
use serde_json::{Map, Value, json};
use sha2::Sha256;

use rules::{Game, Status};

pub use gate::{Gate, LaneLimits};
pub use targets::{CheckedResolver, Targets, UrlRefusal};

use crate::store::json::JsonValue;
use crate::store::{
    CHANNEL_MAIL, CHANNEL_WEBHOOK, DELIVERED, DROPPED, DeliveryRow, Due, FAILED, PENDING, Store,
    StoreError, Tx, WebhookRow,
};

/// At most this many webhooks per account.
pub const MAX_WEBHOOKS_PER_ACCOUNT: usize = 10;
/// A delivery is given up (`failed`) after this many attempts.
pub const MAX_ATTEMPTS: i32 = 10;
/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(600);
/// The longest accepted webhook URL.
pub const MAX_URL_LENGTH: usize = 2048;
/// Notification kind: the account must act in a game.
pub const YOUR_TURN: &str = "your_turn";
/// Kind of a notification that a rematch keeps a seat for the account.
pub const REMATCH_OFFERED: &str = "rematch_offered";
/// Notification kind: a game the account sits in has ended.
pub const GAME_FINISHED: &str = "game_finished";
/// Header with the delivery id.
pub const DELIVERY_HEADER: &str = "Stammtisch-Delivery";
/// Header with the timestamp and the signature.
pub const SIGNATURE_HEADER: &str = "Stammtisch-Signature";

/// Why a webhook use case failed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The URL is not an absolute `http://` or `https://` URL.
    #[error("{0}")]
    InvalidUrl(String),
    /// The URL names, or its host resolves to, an address webhooks may not reach.
    #[error("{0}")]
    NotAllowed(String),
    /// The account has [`MAX_WEBHOOKS_PER_ACCOUNT`] webhooks already.
    #[error("an account may register at most {MAX_WEBHOOKS_PER_ACCOUNT} webhooks")]
    TooMany,
    /// No such webhook, or not the caller's.
    #[error("webhook not found")]
    NotFound,
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<diesel::result::Error> for WebhookError {
    fn from(e: diesel::result::Error) -> Self {
        Self::Store(StoreError::Query(e))
    }
}

/// A webhook as its owner sees it (the secret is shown only at registration).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct WebhookBody {
    /// Id.
    pub id: String,
    /// Where notifications are POSTed.
    pub url: String,
    /// Registration time (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
}

/// A webhook just registered, with its secret (shown this once only).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CreatedWebhook {
    /// Id.
    pub id: String,
    /// Where notifications are POSTed.
    pub url: String,
    /// The HMAC-SHA256 key of `Stammtisch-Signature` (64 hex characters, used as text).
    pub secret: String,
    /// Registration time (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
}

fn rfc3339(t: NaiveDateTime) -> String {
    t.and_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn body_of(row: WebhookRow) -> WebhookBody {
    WebhookBody {
        id: row.id,
        url: row.url,
        created_at: rfc3339(row.created_at),
    }
}

/// Checks a webhook URL: absolute, `http` or `https`, with a host, without credentials,
/// whitespace or a fragment, at most [`MAX_URL_LENGTH`] characters, and naming no address
/// (nor a name resolving to one) that `targets` forbids; see [`targets::check_url`].
/// Returns the URL as deliveries will call it (normalised). Blocking (a name lookup).
///
/// # Errors
/// [`WebhookError::InvalidUrl`] or [`WebhookError::NotAllowed`] saying what is wrong.
pub fn validate_url(url: &str, targets: Targets) -> Result<String, WebhookError> {
    match targets::check_url(url, MAX_URL_LENGTH, targets) {
        Ok(url) => Ok(url.into()),
        Err(UrlRefusal::Invalid(why)) => Err(WebhookError::InvalidUrl(why)),
        Err(UrlRefusal::NotAllowed(why)) => Err(WebhookError::NotAllowed(why)),
    }
}

/// The webhook use cases for the HTTP layer: register, list, delete. Holds the store and
/// the address policy, so handlers never see either.
#[derive(Clone)]
pub struct Webhooks {
    store: Store,
    targets: Targets,
    clock: crate::clock::Clock,
}

impl Webhooks {
    /// The service over `store`, registering only URLs that `targets` allows.
    #[must_use]
    pub fn new(store: Store, targets: Targets) -> Self {
        Self {
            store,
            targets,
            clock: crate::clock::Clock::system(),
        }
    }

    /// The same service stamping new webhooks with `clock`'s time.
    #[must_use]
    pub fn with_clock(mut self, clock: crate::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Registers a webhook for `account`; the URL is checked against the address policy.
    /// Blocking (a name lookup).
    ///
    /// # Errors
    /// An invalid or forbidden URL, too many webhooks, storage failure.
    pub fn register(&self, account: &str, url: &str) -> Result<CreatedWebhook, WebhookError> {
        let url = validate_url(url, self.targets)?;
        let row = WebhookRow {
            id: uuid::Uuid::now_v7().to_string(),
            account_id: account.to_owned(),
            url,
            secret: crate::fairness::new_seed(),
            created_at: self.clock.naive(),
        };
        self.store.write(|tx| {
            tx.lock_account(account)?;
            if tx.webhooks_of(account)?.len() >= MAX_WEBHOOKS_PER_ACCOUNT {
                return Err(WebhookError::TooMany);
            }
            tx.insert_webhook(&row)?;
            Ok(())
        })?;
        Ok(CreatedWebhook {
            id: row.id,
            url: row.url,
            secret: row.secret,
            created_at: rfc3339(row.created_at),
        })
    }

    /// The account's webhooks, oldest first, without secrets.
    ///
    /// # Errors
    /// Storage failure.
    pub fn list(&self, account: &str) -> Result<Vec<WebhookBody>, WebhookError> {
        let rows = self.store.read(|tx| tx.webhooks_of(account))?;
        Ok(rows.into_iter().map(body_of).collect())
    }

    /// Deletes one of the account's webhooks with its pending deliveries.
    ///
    /// # Errors
    /// [`WebhookError::NotFound`] for an unknown id or another account's webhook, storage
    /// failure.
    pub fn delete(&self, account: &str, id: &str) -> Result<(), WebhookError> {
        if self.store.write(|tx| tx.delete_webhook(account, id))? {
            Ok(())
        } else {
            Err(WebhookError::NotFound)
        }
    }
}

/// What a seat holds and has done, as the seat itself sees it: it changes when the seat
/// acts (a card played or taken, chips paid, a new deal), and not when others act. An ask
/// with the same actions but another fingerprint is a new ask (the next turn).
fn fingerprint(game: &Game, seat: u8, account: &str) -> Value {
    let view = game.view_for(Some(account));
    let mut seat_view = view
        .seats
        .get(usize::from(seat))
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(Value::Null);
    if let Some(object) = seat_view.as_object_mut() {
        object.remove("deadline_at");
    }
    json!({
        "round": view.round,
        "you": serde_json::to_value(&view.you).unwrap_or(Value::Null),
        "seat": seat_view,
    })
}

/// The people asked to act in `after` who were not asked the same in `before` (other
/// actions, or the same actions at a later point of the game: a new turn). Webhooks and
/// mails announce exactly these.
#[must_use]
pub fn new_asks<'a>(before: &Game, after: &'a Game) -> Vec<rules::PersonAsk<'a>> {
    let asked_before = before.person_asks();
    after
        .person_asks()
        .into_iter()
        .filter(|ask| {
            let same = asked_before.iter().any(|b| {
                b.seat == ask.seat && b.account == ask.account && b.actions == ask.actions
            }) && fingerprint(before, ask.seat, ask.account)
                == fingerprint(after, ask.seat, ask.account);
            !same
        })
        .collect()
}

/// The seated people `(seat, account)` of a game that `after` finished (empty unless this
/// change ended it).
#[must_use]
pub fn finished_seats<'a>(before: &Game, after: &'a Game) -> Vec<(u8, &'a str)> {
    if after.status() == Status::Finished && before.status() != Status::Finished {
        after
            .seats
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((u8::try_from(i).ok()?, s.account()?)))
            .collect()
    } else {
        Vec::new()
    }
}

/// What a change of a game announces, worked out once per append for every channel
/// (webhooks and mail reminders): the people newly asked to act ([`new_asks`], which renders
/// views, so it is not worth doing twice) and the seated people of a game the change ended.
pub struct Announcements<'a> {
    /// New asks.
    pub turns: Vec<rules::PersonAsk<'a>>,
    /// `(seat, account)` of every seated person, when the change ended the game.
    pub finished: Vec<(u8, &'a str)>,
}

impl<'a> Announcements<'a> {
    /// What the change from `before` to `after` announces.
    #[must_use]
    pub fn of(before: &Game, after: &'a Game) -> Self {
        Self {
            turns: new_asks(before, after),
            finished: finished_seats(before, after),
        }
    }

    /// Nothing to announce.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty() && self.finished.is_empty()
    }

    /// Everyone concerned, sorted, once each.
    #[must_use]
    pub fn accounts(&self) -> Vec<&'a str> {
        let mut accounts: Vec<&str> = self
            .turns
            .iter()
            .map(|t| t.account)
            .chain(self.finished.iter().map(|(_, a)| *a))
            .collect();
        accounts.sort_unstable();
        accounts.dedup();
        accounts
    }
}

/// Writes the webhook notifications that a change of a game to `after` announces, in the
/// transaction that appends the change (`version` is the game's version after it):
///
/// - `your_turn`, per webhook of each person asked to act in `after` who was not asked the
///   same in `before` (other actions, or the same actions at a later point of the game: a
///   new turn). Older pending `your_turn` deliveries of that person for the game are
///   dropped, superseded by the new one.
/// - `game_finished`, per webhook of every seated person, when `after` is finished and
///   `before` was not.
///
/// # Errors
/// Storage failure.
pub fn enqueue(
    tx: &mut Tx<'_>,
    game_id: &str,
    version: i32,
    after: &Game,
    news: &Announcements<'_>,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    if news.is_empty() {
        return Ok(());
    }
    let hooks = tx.webhooks_of_accounts(&news.accounts())?;
    if hooks.is_empty() {
        return Ok(());
    }
    let common = |kind: &str, seat: u8| {
        let mut payload = Map::new();
        payload.insert("kind".into(), kind.into());
        payload.insert("game_id".into(), game_id.into());
        payload.insert("game_version".into(), version.into());
        payload.insert("ruleset".into(), after.setup.ruleset.name().into());
        payload.insert("seat".into(), seat.into());
        payload.insert("created_at".into(), rfc3339(now).into());
        payload
    };
    let row = |hook: &WebhookRow, kind: &str, payload: Map<String, Value>| {
        webhook_row(hook, game_id, kind, version, payload, now)
    };
    let mut rows = Vec::new();
    for ask in &news.turns {
        let mine: Vec<&WebhookRow> = hooks
            .iter()
            .filter(|h| h.account_id == ask.account)
            .collect();
        if mine.is_empty() {
            continue;
        }
        tx.drop_pending(
            game_id,
            ask.account,
            YOUR_TURN,
            CHANNEL_WEBHOOK,
            "superseded by a newer your_turn",
            now,
        )?;
        let mut payload = common(YOUR_TURN, ask.seat);
        payload.insert("actions".into(), ask.actions.clone().into());
        let deadline = after
            .deadlines
            .iter()
            .filter(|d| d.seat == ask.seat)
            .map(|d| d.at)
            .min();
        if let Some(at) = deadline {
            payload.insert(
                "deadline_at".into(),
                at.with_timezone(&Utc)
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                    .into(),
            );
        }
        rows.extend(mine.into_iter().map(|h| row(h, YOUR_TURN, payload.clone())));
    }
    for (seat, account) in &news.finished {
        let mut payload = common(GAME_FINISHED, *seat);
        payload.insert("winners".into(), after.winners.clone().into());
        rows.extend(
            hooks
                .iter()
                .filter(|h| h.account_id == *account)
                .map(|h| row(h, GAME_FINISHED, payload.clone())),
        );
    }
    tx.insert_deliveries(&rows)
}

/// A pending webhook delivery of `hook`, due now; its id goes into the payload as `id`
/// (receivers drop duplicates by it).
fn webhook_row(
    hook: &WebhookRow,
    game_id: &str,
    kind: &str,
    version: i32,
    mut payload: Map<String, Value>,
    now: NaiveDateTime,
) -> DeliveryRow {
    let id = uuid::Uuid::now_v7().to_string();
    payload.insert("id".into(), id.clone().into());
    DeliveryRow {
        id,
        webhook_id: Some(hook.id.clone()),
        account_id: hook.account_id.clone(),
        game_id: game_id.to_owned(),
        kind: kind.to_owned(),
        game_version: version,
        payload: JsonValue(Value::Object(payload)),
        status: PENDING.to_owned(),
        attempts: 0,
        next_attempt_at: now,
        last_error: None,
        created_at: now,
        finished_at: None,
        channel: CHANNEL_WEBHOOK.to_owned(),
    }
}

/// Tells the people for whom a rematch keeps a seat that it waits for them (kind
/// `rematch_offered`, with the new game's id and the finished game's).
///
/// # Errors
/// Storage failure.
pub fn enqueue_rematch(
    tx: &mut Tx<'_>,
    game_id: &str,
    version: i32,
    game: &Game,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let kept: Vec<(u8, &str)> = game
        .seats
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((u8::try_from(i).ok()?, s.reserved_for.as_deref()?)))
        .collect();
    let accounts: Vec<&str> = kept.iter().map(|(_, a)| *a).collect();
    if accounts.is_empty() {
        return Ok(());
    }
    let hooks = tx.webhooks_of_accounts(&accounts)?;
    let mut rows = Vec::new();
    for (seat, account) in kept {
        for hook in hooks.iter().filter(|h| h.account_id == account) {
            let mut payload = Map::new();
            payload.insert("kind".into(), REMATCH_OFFERED.into());
            payload.insert("game_id".into(), game_id.into());
            payload.insert("game_version".into(), version.into());
            payload.insert("ruleset".into(), game.setup.ruleset.name().into());
            payload.insert("seat".into(), seat.into());
            payload.insert("rematch_of".into(), game.rematch_of.clone().into());
            payload.insert("created_at".into(), rfc3339(now).into());
            rows.push(webhook_row(
                hook,
                game_id,
                REMATCH_OFFERED,
                version,
                payload,
                now,
            ));
        }
    }
    tx.insert_deliveries(&rows)
}

/// `hex(HMAC-SHA256(secret, "<timestamp>.<body>"))`, the `v1` of `Stammtisch-Signature`.
/// The key is the secret's text (its ASCII bytes), as shown at registration.
#[must_use]
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes keys of any length; `new_from_slice` cannot fail for it.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return String::new();
    };
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// How many deliveries the worker of one replica sends at once, and when it pauses a
/// failing webhook URL (see [`gate`]): `WEBHOOK_CONCURRENCY`, `MAIL_CONCURRENCY`,
/// `WEBHOOK_PER_TARGET`, `WEBHOOK_PER_ACCOUNT`, `WEBHOOK_BREAKER_FAILURES` and
/// `WEBHOOK_BREAKER_PAUSE_MS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryLimits {
    /// Webhook POSTs in flight at once (at least 1).
    pub concurrency: usize,
    /// Mails in flight at once, beside the webhooks (at least 1).
    pub mail_concurrency: usize,
    /// Deliveries to one webhook URL in flight at once (`0`: no limit).
    pub per_target: usize,
    /// Deliveries of one account in flight at once, per lane (`0`: no limit).
    pub per_account: usize,
    /// Failed attempts in a row that pause a webhook URL (`0`: never paused).
    pub breaker_failures: u32,
    /// The first pause of a failing URL; doubling with each further trip, up to
    /// [`MAX_BACKOFF`].
    pub breaker_pause: Duration,
}

impl Default for DeliveryLimits {
    fn default() -> Self {
        Self {
            concurrency: 32,
            mail_concurrency: 4,
            per_target: 2,
            per_account: 4,
            breaker_failures: 3,
            breaker_pause: Duration::from_secs(30),
        }
    }
}

impl DeliveryLimits {
    /// The limits of the webhook lane.
    #[must_use]
    pub fn webhook_lane(&self) -> LaneLimits {
        LaneLimits {
            concurrency: self.concurrency.max(1),
            per_account: self.per_account,
            per_target: self.per_target,
            breaker_failures: self.breaker_failures,
            pause: self.breaker_pause,
        }
    }

    /// The limits of the mail lane: all mail goes to the one mail server, so there is no
    /// per-target limit or breaker (a failing server fails every mail alike, and each mail
    /// follows the retry schedule).
    #[must_use]
    pub fn mail_lane(&self) -> LaneLimits {
        LaneLimits {
            concurrency: self.mail_concurrency.max(1),
            per_account: self.per_account,
            per_target: 0,
            breaker_failures: 0,
            pause: self.breaker_pause,
        }
    }
}

/// How the delivery worker runs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The wait after a first failed attempt; it doubles with each further failure, up to
    /// [`MAX_BACKOFF`] (`WEBHOOK_BACKOFF_MS`, see [`crate::config::Config`]).
    pub backoff: Duration,
    /// The limit of one POST, connect to last byte (`WEBHOOK_TIMEOUT_MS`).
    pub timeout: Duration,
    /// Which addresses a delivery may connect to (`WEBHOOK_ALLOW_LOOPBACK`).
    pub targets: Targets,
    /// How often the outbox is looked at when nothing ends meanwhile (200 ms).
    pub poll: Duration,
    /// How much is sent at once, per account and per URL, and when a URL is paused.
    pub limits: DeliveryLimits,
    /// E-mail reminders (`SMTP_URL` set), sent from the same outbox; `None`: mail rows
    /// are dropped.
    pub mail: Option<crate::mail::MailConfig>,
    /// What due dates, leases, backoffs, pauses and signature timestamps are measured
    /// against (the system clock unless the server runs with a test clock).
    pub clock: crate::clock::Clock,
}

impl WorkerConfig {
    /// The worker's settings from the server configuration.
    #[must_use]
    pub fn from_config(config: &crate::config::Config) -> Self {
        Self {
            backoff: config.webhook_backoff,
            timeout: config.webhook_timeout,
            targets: config.webhook_targets,
            poll: Duration::from_millis(200),
            limits: config.delivery_limits,
            mail: config.mail.clone(),
            clock: crate::clock::Clock::system(),
        }
    }

    /// How long a claimed delivery stays invisible to other workers: twice the POST
    /// timeout, so a lease never ends while its POST can still be under way.
    #[must_use]
    pub fn lease(&self) -> Duration {
        self.timeout.saturating_mul(2)
    }

    /// The wait before attempt `attempts + 1`, after `attempts` failed ones.
    #[must_use]
    pub fn backoff_after(&self, attempts: i32) -> Duration {
        let doublings = u32::try_from(attempts.saturating_sub(1))
            .unwrap_or(0)
            .min(30);
        self.backoff
            .saturating_mul(1u32 << doublings)
            .min(MAX_BACKOFF)
    }
}

fn delta(d: Duration) -> TimeDelta {
    TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX)
}

/// Where a leased delivery goes.
enum Target {
    /// A webhook POST.
    Hook {
        /// The URL.
        url: String,
        /// The HMAC key.
        secret: String,
    },
    /// A mail, rendered.
    Mail(crate::mail::Outgoing),
}

/// A delivery a worker has leased, with where it goes.
struct Claimed {
    delivery: DeliveryRow,
    target: Target,
}

impl Claimed {
    /// The URL a webhook delivery goes to (`None`: a mail), the key of the per-target limit
    /// and of the breaker.
    fn url(&self) -> Option<&str> {
        match &self.target {
            Target::Hook { url, .. } => Some(url),
            Target::Mail(_) => None,
        }
    }
}

/// The actions a `your_turn` payload announces (`["play_card"]`, `["pass", "take"]`).
pub(crate) fn announced_actions(payload: &Value) -> Option<Vec<&str>> {
    payload
        .get("actions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
}

/// Whether the game still asks the delivery's account for the actions its `your_turn`
/// payload announces: the seat is awaited with the same actions, and the game has not gone
/// back to before the notification.
fn still_asked(tx: &mut Tx<'_>, d: &DeliveryRow) -> Result<bool, StoreError> {
    let announced = announced_actions(&d.payload.0).map(|a| a.join(","));
    let Some(ask) = tx.seat_ask(&d.game_id, &d.account_id)? else {
        return Ok(false);
    };
    Ok(ask.awaiting
        && ask.action.is_some()
        && ask.action == announced
        && ask.version >= d.game_version)
}

/// Runs `f` with the outbox filter of a lane on `channel` whose gate is `gate`: the
/// channel's due rows but those of accounts and URLs that have no room in the gate.
fn with_due<T>(gate: &Gate, channel: &str, f: impl FnOnce(&Due<'_>) -> T) -> T {
    let skip_accounts = gate.full_accounts();
    let skip_urls = gate.full_targets();
    f(&Due {
        channel,
        skip_accounts: &skip_accounts,
        skip_urls: &skip_urls,
    })
}

/// What one claim did: the deliveries leased to be sent now, and how many other due rows
/// it settled (dropped, or postponed while their URL is paused).
struct Claim {
    leased: Vec<Claimed>,
    settled: usize,
}

/// Takes the due deliveries of `channel` that `gate` admits now (as many as the lane has
/// room for, at most `per_account` of an account and `per_target` to a URL in flight): drops
/// the `your_turn` ones the game no longer asks for, postpones those whose URL is paused
/// (without counting an attempt), counts an attempt for the others and leases them; those
/// the gate does not admit stay due. PostgreSQL skips rows another replica holds (`FOR
/// UPDATE SKIP LOCKED`), so no delivery is sent twice at the same time. `gate` is this
/// claim's copy of the lane's gate; the leased deliveries are started in it.
///
/// Mails (channel `mail`) are rendered here ([`crate::mail::render`]); one no longer
/// wanted (no address, the choice switched off, an empty digest) is dropped too, and so is
/// every mail while mail is off.
fn claim(
    full: &mut Tx<'_>,
    config: &WorkerConfig,
    channel: &str,
    gate: &mut Gate,
) -> Result<Claim, StoreError> {
    let now = config.clock.naive();
    let mut done = Claim {
        leased: Vec::new(),
        settled: 0,
    };
    let free = gate.free();
    if free == 0 {
        return Ok(done);
    }
    // Rows the gate turns away in this claim (an account or URL filled by the rows before)
    // still take room in the window; the next claim skips them in the query.
    let window = i64::try_from(free.saturating_mul(4).clamp(16, 256)).unwrap_or(256);
    let due = with_due(gate, channel, |due| full.due_deliveries(due, now, window))?;
    if due.is_empty() {
        return Ok(done);
    }
    let hook_ids: Vec<&str> = due.iter().filter_map(|d| d.webhook_id.as_deref()).collect();
    let hooks = full.webhooks_by_id(&hook_ids)?;
    let lease_until = now + delta(config.lease());
    for mut delivery in due {
        if gate.free() == 0 {
            break;
        }
        let asks_move = delivery.kind == YOUR_TURN || delivery.kind == crate::mail::DEADLINE_SOON;
        if asks_move && !still_asked(full, &delivery)? {
            full.finish_delivery(
                &delivery.id,
                DROPPED,
                Some("the game no longer asks for this move"),
                now,
            )?;
            tracing::debug!(
                delivery = delivery.id,
                "dropped a notification for a move no longer asked"
            );
            done.settled += 1;
            continue;
        }
        let hook = if delivery.channel == CHANNEL_MAIL {
            None
        } else {
            // The foreign key deletes deliveries with their webhook, so this always finds one.
            let Some(hook) = hooks
                .iter()
                .find(|h| Some(h.id.as_str()) == delivery.webhook_id.as_deref())
            else {
                continue;
            };
            Some(hook)
        };
        let url = hook.map(|h| h.url.as_str());
        if let Some(until) = url.and_then(|url| gate.paused_until(url, now)) {
            full.postpone_delivery(&delivery.id, until)?;
            tracing::debug!(
                delivery = delivery.id,
                %until,
                "postponed a delivery while its target is paused"
            );
            done.settled += 1;
            continue;
        }
        if !gate.admits(url, &delivery.account_id, now) {
            continue;
        }
        let target = if let Some(hook) = hook {
            Target::Hook {
                url: hook.url.clone(),
                secret: hook.secret.clone(),
            }
        } else {
            let rendered = match &config.mail {
                Some(mail) => crate::mail::render(full, &delivery, &mail.public_url)?,
                None => None,
            };
            let Some(mail) = rendered else {
                full.finish_delivery(
                    &delivery.id,
                    DROPPED,
                    Some("no longer wanted (address, choice or inbox changed, or mail is off)"),
                    now,
                )?;
                done.settled += 1;
                continue;
            };
            Target::Mail(mail)
        };
        full.lease_delivery(&delivery.id, lease_until)?;
        delivery.attempts += 1;
        gate.start(url, &delivery.account_id);
        done.leased.push(Claimed { delivery, target });
    }
    Ok(done)
}

/// Sends one delivery (a POST or a mail); `Err` describes a failed attempt.
fn send(
    agent: &ureq::Agent,
    mailer: Option<&crate::mail::Mailer>,
    clock: &crate::clock::Clock,
    c: &Claimed,
) -> Result<(), String> {
    let (url, secret) = match &c.target {
        Target::Hook { url, secret } => (url, secret),
        Target::Mail(mail) => {
            return match mailer {
                Some(mailer) => mailer.send(mail),
                None => Err("mail is not configured".into()),
            };
        }
    };
    let body = serde_json::to_string(&c.delivery.payload.0).map_err(|e| e.to_string())?;
    let timestamp = clock.timestamp();
    let signature = sign(secret, timestamp, body.as_bytes());
    let response = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header(DELIVERY_HEADER, &c.delivery.id)
        .header(SIGNATURE_HEADER, format!("t={timestamp},v1={signature}"))
        .send(body.as_str())
        .map_err(|e| e.to_string())?;
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("the receiver answered {status}"))
    }
}

/// Records the outcome of an attempt.
fn record(
    store: &Store,
    config: &WorkerConfig,
    c: &Claimed,
    outcome: Result<(), String>,
) -> Result<(), StoreError> {
    let now = config.clock.naive();
    let id = c.delivery.id.as_str();
    store.write(|tx| match outcome {
        Ok(()) => tx.finish_delivery(id, DELIVERED, None, now),
        Err(error) => {
            let error: String = error.chars().take(500).collect();
            if c.delivery.attempts >= MAX_ATTEMPTS {
                tracing::warn!(delivery = id, error, "giving up a webhook delivery");
                tx.finish_delivery(id, FAILED, Some(&error), now)
            } else {
                let wait = config.backoff_after(c.delivery.attempts);
                tracing::info!(
                    delivery = id,
                    error,
                    ?wait,
                    "webhook delivery failed; will retry"
                );
                tx.retry_delivery(id, now + delta(wait), &error)
            }
        }
    })
}

/// The HTTP client of the worker: the configured timeout, no redirects, no proxy (so the
/// address checked is the address connected to), non-2xx statuses as answers rather than
/// errors, and the [`CheckedResolver`] of the configured targets.
#[must_use]
pub fn agent(config: &WorkerConfig) -> ureq::Agent {
    let http = ureq::Agent::config_builder()
        .timeout_global(Some(config.timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .user_agent(concat!("stammtisch-webhooks/", env!("CARGO_PKG_VERSION")))
        .build();
    ureq::Agent::with_parts(
        http,
        ureq::unversioned::transport::DefaultConnector::default(),
        CheckedResolver::new(config.targets),
    )
}

/// What every sender of a replica shares.
struct Worker {
    store: Store,
    config: WorkerConfig,
    agent: ureq::Agent,
    mailer: Option<crate::mail::Mailer>,
}

/// The in-flight deliveries of a lane, and a count of the sends ended so far (it wakes the
/// lane's claimer, so a freed slot is used at once rather than at the next poll).
struct LaneState {
    gate: Gate,
    ended: u64,
}

/// One sender lane: the deliveries of one outbox channel, with sender capacity of its own,
/// so mail never waits for webhooks, nor webhooks for mail. Its claimer thread claims what
/// the lane's [`Gate`] admits and starts a thread per delivery; each send ends on its own
/// and frees its slot, so a slow receiver holds back only what waits for its own slots.
struct Lane {
    channel: &'static str,
    state: Mutex<LaneState>,
    changed: Condvar,
}

impl Lane {
    fn new(channel: &'static str, limits: LaneLimits) -> Arc<Self> {
        Arc::new(Self {
            channel,
            state: Mutex::new(LaneState {
                gate: Gate::new(limits),
                ended: 0,
            }),
            changed: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, LaneState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims until nothing more is due or admitted, waiting a poll interval (or until a
    /// send ends) in between; until shutdown.
    fn run(self: &Arc<Self>, worker: &Arc<Worker>, shutdown: &tokio::sync::watch::Receiver<bool>) {
        while !*shutdown.borrow() {
            let ended = self.lock().ended;
            match self.dispatch(worker) {
                Ok(progress) if progress > 0 => continue,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(channel = self.channel, error = %crate::telemetry::Chain(&e), "could not claim deliveries");
                }
            }
            let state = self.lock();
            if state.ended == ended {
                let _ = self
                    .changed
                    .wait_timeout_while(state, worker.config.poll, |s| s.ended == ended);
            }
        }
    }

    /// One claim: starts a sender per leased delivery; returns how many due rows it leased
    /// or settled.
    fn dispatch(self: &Arc<Self>, worker: &Arc<Worker>) -> Result<usize, StoreError> {
        let now = worker.config.clock.naive();
        // A copy: the claim must not hold the lock (senders end meanwhile, which only frees
        // room), and a claim that fails leaves the lane's gate untouched.
        let mut gate = {
            let state = self.lock();
            if state.gate.free() == 0 {
                return Ok(0);
            }
            state.gate.clone()
        };
        let any = with_due(&gate, self.channel, |due| {
            worker.store.read(|tx| tx.any_due(due, now))
        })?;
        if !any {
            return Ok(0);
        }
        let claim = worker
            .store
            .write(|tx| claim(tx, &worker.config, self.channel, &mut gate))?;
        {
            let mut state = self.lock();
            for c in &claim.leased {
                state.gate.start(c.url(), &c.delivery.account_id);
            }
        }
        let progress = claim.settled + claim.leased.len();
        for c in claim.leased {
            self.spawn_send(worker, c);
        }
        Ok(progress)
    }

    /// Sends and records one delivery on a thread of its own.
    fn spawn_send(self: &Arc<Self>, worker: &Arc<Worker>, c: Claimed) {
        let slot = Slot {
            lane: Arc::clone(self),
            url: c.url().map(str::to_owned),
            account: c.delivery.account_id.clone(),
        };
        let worker = Arc::clone(worker);
        let spawned = std::thread::Builder::new()
            .name(format!("{}-send", self.channel))
            .spawn(move || {
                let clock = &worker.config.clock;
                let outcome = send(&worker.agent, worker.mailer.as_ref(), clock, &c);
                // The breaker learns the outcome before it is recorded: once the outbox
                // shows a failure, the pause it caused is in force.
                slot.outcome(outcome.is_ok(), clock.naive());
                if let Err(e) = record(&worker.store, &worker.config, &c, outcome) {
                    tracing::warn!(delivery = c.delivery.id, error = %crate::telemetry::Chain(&e), "could not record a delivery");
                }
            });
        // On failure the closure, and with it the slot, is dropped: the slot is freed and
        // the lease ends in time, as after a crash.
        if let Err(e) = spawned {
            tracing::error!(error = %crate::telemetry::Chain(&e), "cannot start a delivery");
        }
    }
}

/// A started delivery's place in its lane, freed when its sender ends, whichever way.
struct Slot {
    lane: Arc<Lane>,
    url: Option<String>,
    account: String,
}

impl Slot {
    /// Tells the lane's breaker how the attempt went, at `now`.
    fn outcome(&self, ok: bool, now: NaiveDateTime) {
        self.lane.lock().gate.outcome(self.url.as_deref(), ok, now);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut state = self.lane.lock();
        state.gate.release(self.url.as_deref(), &self.account);
        state.ended = state.ended.wrapping_add(1);
        drop(state);
        self.lane.changed.notify_all();
    }
}

/// Sends due deliveries on threads of their own, until shutdown: one claimer thread per
/// lane (webhooks, mail) looks at the outbox every 200 ms and whenever a send ends, and
/// starts a thread per delivery it leases. Every replica runs one of each; leases (and
/// `SKIP LOCKED` on PostgreSQL) keep them from sending the same delivery at once.
pub fn spawn_worker(
    store: Store,
    config: WorkerConfig,
    shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mailer = config
        .mail
        .as_ref()
        .and_then(|m| match crate::mail::Mailer::new(m) {
            Ok(mailer) => Some(mailer),
            Err(e) => {
                tracing::error!(error = e, "cannot send mail");
                None
            }
        });
    let lanes = [
        (
            "webhooks",
            Lane::new(CHANNEL_WEBHOOK, config.limits.webhook_lane()),
        ),
        ("mail", Lane::new(CHANNEL_MAIL, config.limits.mail_lane())),
    ];
    let worker = Arc::new(Worker {
        agent: agent(&config),
        store,
        config,
        mailer,
    });
    for (name, lane) in lanes {
        let worker = Arc::clone(&worker);
        let shutdown = shutdown.clone();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || lane.run(&worker, &shutdown));
        if let Err(e) = spawned {
            tracing::error!(lane = name, error = %crate::telemetry::Chain(&e), "cannot start a delivery worker");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn backoff_doubles_from_the_base_up_to_ten_minutes() {
        let config = WorkerConfig {
            backoff: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
            targets: Targets::default(),
            poll: Duration::from_millis(200),
            limits: DeliveryLimits::default(),
            mail: None,
            clock: crate::clock::Clock::system(),
        };
        let waits: Vec<u64> = (1..=12)
            .map(|n| config.backoff_after(n).as_secs())
            .collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600]);
        assert_eq!(config.backoff_after(i32::MAX), MAX_BACKOFF);
        assert_eq!(config.lease(), Duration::from_secs(20));
    }

    #[test]
    fn the_signature_is_hmac_sha256_of_timestamp_dot_body() {
        // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?".
        let data = b"what do ya want for nothing?";
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap_or_else(|_| unreachable!());
        mac.update(data);
        assert_eq!(
            hex::encode(mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let mut mac = Hmac::<Sha256>::new_from_slice(b"s3cret").unwrap_or_else(|_| unreachable!());
        mac.update(b"1700000000.{\"a\":1}");
        let expected = hex::encode(mac.finalize().into_bytes());
        assert_eq!(sign("s3cret", 1_700_000_000, b"{\"a\":1}"), expected);
        assert_ne!(sign("s3cret", 1_700_000_001, b"{\"a\":1}"), expected);
        assert_ne!(sign("other", 1_700_000_000, b"{\"a\":1}"), expected);
    }

    #[test]
    fn only_absolute_http_urls_with_a_host_are_accepted() {
        let dev = Targets {
            allow_loopback: true,
        };
        for ok in [
            "http://127.0.0.1:8080/hook",
            "https://93.184.215.14",
            "https://93.184.215.14/a/b?c=d",
            "http://[::1]:9000/",
        ] {
            assert!(validate_url(ok, dev).is_ok(), "{ok}");
        }
        assert_eq!(
            validate_url("https://93.184.215.14", dev).unwrap(),
            "https://93.184.215.14/"
        );
        for bad in [
            "",
            "ftp://example.org/",
            "example.org",
            "//example.org/x",
            "https://",
            "https://u:p@example.org/",
            "https://example.org/#x",
            "https://exa mple.org/",
            "mailto:someone@example.org",
        ] {
            assert!(
                matches!(validate_url(bad, dev), Err(WebhookError::InvalidUrl(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            validate_url("http://127.0.0.1:8080/hook", Targets::default()),
            Err(WebhookError::NotAllowed(_))
        ));
    }
}
