//! Webhooks: an account registers URLs; when it becomes that account's turn in a game (or
//! one of its games ends, or a rematch keeps a seat for it) the server POSTs a signed JSON
//! notification there.
//!
//! Notifications go through the durable outbox ([`crate::outbox`]): [`enqueue`] writes
//! `webhook_deliveries` rows (channel `webhook`) in the same transaction as the game events
//! that cause them, so a notification exists exactly when its cause was committed; the
//! outbox's worker sends them, `delivered` on a 2xx answer, retried otherwise. A delivery
//! keeps its id (payload `id`, header `Stammtisch-Delivery`) across attempts, so receivers
//! drop duplicates by it.
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

pub mod targets;

use chrono::{NaiveDateTime, Utc};
use hmac::{Hmac, Mac};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::Sha256;

use rules::Game;

pub use targets::{CheckedResolver, Targets, UrlRefusal};

use crate::outbox::{Announcements, GAME_FINISHED, TIME_RUNNING_LOW, YOUR_TURN};
use crate::store::json::JsonValue;
use crate::store::{CHANNEL_WEBHOOK, DeliveryRow, PENDING, Store, StoreError, Tx, WebhookRow};

/// The largest "time running low" threshold: 30 days, in minutes.
pub const MAX_LOW_TIME_MINUTES: u32 = 43_200;

/// The account's webhook choices.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct WebhookChoices {
    /// A `time_running_low` notification when a move asked of the account has less than
    /// this many minutes left (its deadline or clock); `null`: off (the default).
    #[schema(required = true)]
    pub low_time_minutes: Option<u32>,
}

/// A change of the webhook choices; absent fields stay.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookChoicesChange {
    /// 1–43200 minutes (30 days); `0` switches `time_running_low` off.
    #[schema(minimum = 0, maximum = 43200)]
    #[serde(default, deserialize_with = "crate::mail::whole_number")]
    pub low_time_minutes: Option<u32>,
}

/// At most this many webhooks per account.
pub const MAX_WEBHOOKS_PER_ACCOUNT: usize = 10;
/// The longest accepted webhook URL.
pub const MAX_URL_LENGTH: usize = 2048;
/// Kind of a notification that a rematch keeps a seat for the account.
pub const REMATCH_OFFERED: &str = "rematch_offered";
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
    /// A choice out of range.
    #[error("{0}")]
    Invalid(String),
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
    /// The webhook's id (a UUID), as in `DELETE /v1/webhooks/{id}`.
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
    /// The webhook's id (a UUID), as in `DELETE /v1/webhooks/{id}`.
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

    /// The account's webhook choices.
    ///
    /// # Errors
    /// Storage failure.
    pub fn choices(&self, account: &str) -> Result<WebhookChoices, WebhookError> {
        let row = self.store.read(|tx| tx.vacation(account))?;
        Ok(WebhookChoices {
            low_time_minutes: row
                .and_then(|r| r.webhook_low_time_minutes)
                .and_then(|m| u32::try_from(m).ok()),
        })
    }

    /// Changes the account's webhook choices. A new threshold applies to the moves asked
    /// from then on and to the notifications already waiting (they come due anew).
    ///
    /// # Errors
    /// A threshold over [`MAX_LOW_TIME_MINUTES`], storage failure.
    pub fn choose(
        &self,
        account: &str,
        change: &WebhookChoicesChange,
    ) -> Result<WebhookChoices, WebhookError> {
        if let Some(minutes) = change.low_time_minutes {
            if minutes > MAX_LOW_TIME_MINUTES {
                return Err(WebhookError::Invalid(format!(
                    "low_time_minutes must be 0–{MAX_LOW_TIME_MINUTES}"
                )));
            }
            let stored = (minutes > 0).then(|| i32::try_from(minutes).unwrap_or(i32::MAX));
            self.store
                .write(|tx| tx.set_webhook_low_time(account, stored))?;
        }
        self.choices(account)
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

/// Writes the webhook notifications that a change of a game to `after` announces, in the
/// transaction that appends the change (`version` is the game's version after it):
///
/// - `your_turn`, per webhook of each person asked to act in `after` who was not asked the
///   same in `before` (other actions, or the same actions at a later point of the game: a
///   new turn). Older pending `your_turn` deliveries of that person for the game are
///   dropped, superseded by the new one.
/// - `time_running_low`, per webhook of each such person who chose a threshold
///   (`low_time_minutes`) when the seat has a deadline (a move deadline, or the flag-fall of
///   its clock): due that many minutes before it (at once when less is left). Older pending
///   ones of that person for the game are dropped. The outbox's worker drops it when the
///   move is no longer asked, and puts it off when the deadline moved later (vacation, an
///   absence, a pause).
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
    let asked: Vec<&str> = news.turns.iter().map(|t| t.account).collect();
    let thresholds: Vec<(String, i32)> = if asked.is_empty() {
        Vec::new()
    } else {
        tx.vacations(&asked)?
            .into_iter()
            .filter_map(|v| Some((v.id, v.webhook_low_time_minutes?)))
            .collect()
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
        for kind in [YOUR_TURN, TIME_RUNNING_LOW] {
            tx.drop_pending(
                game_id,
                ask.account,
                kind,
                CHANNEL_WEBHOOK,
                "superseded by a newer turn",
                now,
            )?;
        }
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
        rows.extend(mine.iter().map(|h| row(h, YOUR_TURN, payload.clone())));
        let threshold = thresholds
            .iter()
            .find(|(a, _)| a == ask.account)
            .map(|(_, m)| *m);
        if let (Some(minutes), Some(at)) = (threshold, deadline) {
            let due = (at.naive_utc() - chrono::TimeDelta::minutes(i64::from(minutes))).max(now);
            payload.insert("kind".into(), TIME_RUNNING_LOW.into());
            payload.insert("low_time_minutes".into(), minutes.into());
            rows.extend(mine.iter().map(|h| {
                let mut r = row(h, TIME_RUNNING_LOW, payload.clone());
                r.next_attempt_at = due;
                r
            }));
        }
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
        subscription_id: None,
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
    let kept = crate::outbox::kept_seats(game);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
