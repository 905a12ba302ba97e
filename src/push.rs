//! Web Push: a person's browsers subscribe (the `PushSubscription` a browser's push
//! manager gives out: a push service endpoint, the browser's P-256 public key and its auth
//! secret), the person chooses what it is told, and the server sends notifications to the
//! push services, which wake the browsers' service workers.
//!
//! Notifications go through the durable outbox ([`crate::outbox`], channel `push`):
//! [`enqueue`] and [`enqueue_rematch`] write a row per subscription in the transaction that
//! appends the game change causing it, and the outbox's worker sends them on a lane of its
//! own with the same leases, retries, backoff and give-up as webhooks and mail. The
//! notification is rendered when it is sent ([`render`]): a short JSON of public facts
//! only (the kind, the game and its ruleset, a title and body in the subscription's
//! language, the link `#/games/<id>`) — never cards, selections, chips or seeds.
//!
//! Sending ([`deliver`]): the JSON is encrypted for the browser (RFC 8291, `aes128gcm`,
//! by the `web-push-native` crate) and POSTed with a VAPID `Authorization` (RFC 8292: an
//! ES256 JWT for the endpoint's origin, signed with the server's key, which
//! [`VapidKeys`] holds), `TTL`, `Urgency` and, for "your turn", a `Topic`. A push service
//! that answers 404 or 410 no longer knows the subscription: it is removed. 429 and 5xx are
//! retried after the outbox's backoff, or the service's `Retry-After` when longer; other
//! 4xx are given up at once.
//!
//! Coalescing: a browser gets at most one "your turn" per window (`PUSH_COALESCE_SECONDS`).
//! The first is sent at once; a turn within the window waits until it ends, and turns
//! that come while one waits join it: it is one notification, saying how many games wait
//! ("3 games wait for you"), with the link of the newest ask that still waits (dropped
//! when none of the games it stands for waits any more).
//!
//! Endpoints are checked like webhook targets ([`crate::webhooks::targets`]): `https`, a
//! public address; plain `http` only to loopback and only with `WEBHOOK_ALLOW_LOOPBACK`.
//! Blocking: call from `web::block` or a thread of its own. Knows no HTTP routes.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, URL_SAFE_NO_PAD};
use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};
use p256::pkcs8::EncodePrivateKey as _;
use serde::Serialize;
use serde_json::{Map, Value, json};

use rules::Game;

use crate::mail::DEADLINE_SOON;
use crate::outbox::{Announcements, Attempt, GAME_FINISHED, YOUR_TURN};
use crate::store::json::JsonValue;
use crate::store::{
    CHANNEL_PUSH, DeliveryRow, ListQuery, PENDING, PushSettingsRow, PushSubscriptionRow, Store,
    StoreError, Tx,
};
use crate::webhooks::REMATCH_OFFERED;
use crate::webhooks::targets::{self, Targets, UrlRefusal};

/// At most this many subscriptions (browsers) per account.
pub const MAX_SUBSCRIPTIONS_PER_ACCOUNT: usize = 10;
/// The longest accepted endpoint.
pub const MAX_ENDPOINT_LENGTH: usize = 2048;
/// After a "your turn" to a browser, later ones wait this long and come as one, unless
/// `PUSH_COALESCE_SECONDS` says otherwise.
pub const DEFAULT_COALESCE_WINDOW: Duration = Duration::from_secs(30);
/// How long a push service keeps a notification for a browser that is offline (`TTL`).
pub const TTL: Duration = Duration::from_secs(24 * 3600);
/// How long a VAPID JWT is valid (RFC 8292 allows at most 24 hours).
pub const VAPID_VALIDITY: Duration = Duration::from_secs(12 * 3600);
/// The longest `Retry-After` a push service's answer can postpone a retry by.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);
/// The `Topic` of "your turn": a push service replaces an undelivered one with the next,
/// and the service worker shows it under this tag, replacing the one shown before.
pub const TOPIC_YOUR_TURN: &str = "your-turn";
/// The most games a "your turn" counts.
const MAX_COUNTED_GAMES: i64 = 100;
/// The subject of the VAPID JWT when neither `VAPID_SUBJECT` nor an `https` `PUBLIC_URL`
/// is set.
pub const DEFAULT_SUBJECT: &str = "mailto:noreply@localhost";

/// Base64url that accepts padding or none (browsers send none; some libraries pad).
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The server's VAPID key pair (RFC 8292): a P-256 key whose public half browsers subscribe
/// with (`applicationServerKey`) and whose private half signs every push request.
#[derive(Clone)]
pub struct VapidKeys {
    /// The private key as jsonwebtoken signs with it (PKCS#8).
    signing: jsonwebtoken::EncodingKey,
    /// The public key: the uncompressed point (65 bytes), base64url without padding.
    public: String,
    /// The JWT's `sub`: a `mailto:` or `https:` contact for the push services.
    subject: String,
}

impl std::fmt::Debug for VapidKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VapidKeys")
            .field("public", &self.public)
            .field("subject", &self.subject)
            .finish_non_exhaustive()
    }
}

impl VapidKeys {
    /// The keys of a private key given as base64url of its 32 bytes (what
    /// `web-push generate-vapid-keys` prints, `VAPID_PRIVATE_KEY`).
    ///
    /// # Errors
    /// Not base64url, not 32 bytes, or not a valid P-256 private key.
    pub fn from_private(private: &str, subject: &str) -> Result<Self, String> {
        let bytes = LENIENT
            .decode(private.trim())
            .map_err(|_| "not base64url".to_owned())?;
        if bytes.len() != 32 {
            return Err(format!("{} bytes; a P-256 private key has 32", bytes.len()));
        }
        let secret = p256::SecretKey::from_slice(&bytes)
            .map_err(|_| "not a P-256 private key".to_owned())?;
        let pkcs8 = secret
            .to_pkcs8_der()
            .map_err(|e| format!("cannot encode the key: {e}"))?;
        let public = URL_SAFE_NO_PAD.encode(secret.public_key().to_sec1_bytes());
        Ok(Self {
            signing: jsonwebtoken::EncodingKey::from_ec_der(pkcs8.as_bytes()),
            public,
            subject: subject.to_owned(),
        })
    }

    /// A new private key, base64url of its 32 bytes (drawn from the operating system).
    #[must_use]
    pub fn generate_private() -> String {
        loop {
            let bytes: [u8; 32] = rand::random();
            // Almost every 32 bytes are a valid scalar (below the group order, not zero).
            if p256::SecretKey::from_slice(&bytes).is_ok() {
                return URL_SAFE_NO_PAD.encode(bytes);
            }
        }
    }

    /// The public key browsers subscribe with: base64url (no padding) of the uncompressed
    /// point.
    #[must_use]
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// The `Authorization` header of a push request to `endpoint` at `now`:
    /// `vapid t=<JWT>, k=<public key>`, the JWT with `aud` the endpoint's origin, `exp`
    /// [`VAPID_VALIDITY`] from now and `sub` the contact.
    ///
    /// # Errors
    /// An endpoint that is not a URL, or a failed signature.
    pub fn authorization(&self, endpoint: &str, now: DateTime<Utc>) -> Result<String, String> {
        let origin = url::Url::parse(endpoint)
            .map_err(|e| format!("endpoint: {e}"))?
            .origin()
            .ascii_serialization();
        let exp = now.timestamp()
            + i64::try_from(VAPID_VALIDITY.as_secs()).unwrap_or(i64::from(u16::MAX));
        let claims = json!({ "aud": origin, "exp": exp, "sub": self.subject });
        let token = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256),
            &claims,
            &self.signing,
        )
        .map_err(|e| format!("VAPID signature: {e}"))?;
        Ok(format!("vapid t={token}, k={}", self.public))
    }
}

/// Why a push use case failed.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The endpoint is not an `https` URL (or plain `http` where that is not allowed).
    #[error("{0}")]
    InvalidEndpoint(String),
    /// The endpoint names, or its host resolves to, an address pushes may not reach.
    #[error("{0}")]
    EndpointNotAllowed(String),
    /// `keys.p256dh` or `keys.auth` is not what a browser gives.
    #[error("{0}")]
    InvalidKeys(String),
    /// A choice out of range.
    #[error("{0}")]
    Invalid(String),
    /// The account has [`MAX_SUBSCRIPTIONS_PER_ACCOUNT`] subscriptions already.
    #[error("an account may subscribe at most {MAX_SUBSCRIPTIONS_PER_ACCOUNT} browsers")]
    TooMany,
    /// No such subscription, or not the caller's.
    #[error("push subscription not found")]
    NotFound,
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A browser's push subscription, as `PushSubscription.toJSON()` gives it.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSubscription {
    /// The push service's URL for this browser: `https://`, at most 2048 characters, a
    /// public address (`push_endpoint_not_allowed` otherwise).
    #[schema(max_length = 2048, pattern = "^https://[^\\s]+$")]
    pub endpoint: String,
    /// As the browser gives it; not used (the push service tells when a subscription
    /// ended, by answering 404 or 410).
    #[serde(default, rename = "expirationTime")]
    #[schema(nullable)]
    pub expiration_time: Option<f64>,
    /// The browser's keys.
    pub keys: SubscriptionKeys,
    /// The language of the notifications' texts; default: the request's
    /// `Accept-Language`.
    #[serde(default)]
    #[schema(nullable = false)]
    pub language: Option<Language>,
}

/// The language of a browser's notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// English.
    En,
    /// German.
    De,
}

impl Language {
    /// The language's tag.
    #[must_use]
    pub fn tag(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::De => "de",
        }
    }
}

/// The browser's keys of a push subscription (base64url, padding optional).
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionKeys {
    /// The browser's P-256 public key: the uncompressed point, 65 bytes (a point on the
    /// curve, `invalid_push_keys` otherwise).
    #[schema(pattern = "^[A-Za-z0-9_-]{87}=?$")]
    pub p256dh: String,
    /// The browser's auth secret: 16 bytes.
    #[schema(pattern = "^[A-Za-z0-9_-]{22}(==)?$")]
    pub auth: String,
}

/// A push subscription as its owner sees it (without its keys).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SubscriptionBody {
    /// The subscription's id (a UUID), as in `DELETE /v1/me/push-subscriptions/{id}`.
    pub id: String,
    /// The push service's URL for the browser.
    pub endpoint: String,
    /// The language of its notifications, `en` or `de`.
    pub language: String,
    /// When it was subscribed (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
}

/// An account's push choices.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PushSettings {
    /// A notification when it becomes the account's turn (several waiting games come as
    /// one notification).
    pub your_turn: bool,
    /// A notification when a move deadline is less than this many hours away (`null`:
    /// off).
    #[schema(required = true)]
    pub deadline_hours: Option<u32>,
    /// A notification when a game of the account ends.
    pub game_finished: bool,
    /// A notification when a rematch keeps a seat for the account.
    pub rematch_offered: bool,
    /// How many browsers the account has subscribed.
    pub subscriptions: u32,
}

/// A change of the push choices; absent fields stay.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PushChoices {
    /// A notification when it becomes the account's turn.
    pub your_turn: Option<bool>,
    /// A notification when a move deadline is less than this many hours away, 1–720; `0`
    /// switches it off.
    #[schema(minimum = 0, maximum = 720)]
    #[serde(default, deserialize_with = "crate::mail::whole_number")]
    pub deadline_hours: Option<u32>,
    /// A notification when a game of the account ends.
    pub game_finished: Option<bool>,
    /// A notification when a rematch keeps a seat for the account.
    pub rematch_offered: Option<bool>,
}

fn defaults(account: &str, now: NaiveDateTime) -> PushSettingsRow {
    PushSettingsRow {
        account_id: account.to_owned(),
        your_turn: true,
        deadline_hours: None,
        game_finished: true,
        rematch_offered: true,
        updated_at: now,
    }
}

fn rfc3339(t: NaiveDateTime) -> String {
    t.and_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn body_of(row: &PushSubscriptionRow) -> SubscriptionBody {
    SubscriptionBody {
        id: row.id.clone(),
        endpoint: row.endpoint.clone(),
        language: row.language.clone(),
        created_at: rfc3339(row.created_at),
    }
}

/// Whether `url` names a loopback host (an address literal, or `localhost`).
fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// Checks an endpoint: an `https` URL (plain `http` only to a loopback host, and only when
/// `targets` allows loopback), then as a webhook URL is checked ([`targets::check_url`]:
/// no credentials, whitespace or fragment, at most [`MAX_ENDPOINT_LENGTH`] characters, no
/// forbidden address nor a name resolving to one). Returns it normalised. Blocking (a name
/// lookup).
///
/// # Errors
/// [`PushError::InvalidEndpoint`] or [`PushError::EndpointNotAllowed`].
pub fn validate_endpoint(endpoint: &str, targets: Targets) -> Result<String, PushError> {
    let not_https = || PushError::InvalidEndpoint("endpoint must be an https:// URL".into());
    let parsed = url::Url::parse(endpoint.trim()).map_err(|_| not_https())?;
    let plain_allowed = parsed.scheme() == "http" && targets.allow_loopback && is_loopback(&parsed);
    if parsed.scheme() != "https" && !plain_allowed {
        return Err(not_https());
    }
    match targets::check_url(endpoint, MAX_ENDPOINT_LENGTH, targets) {
        Ok(url) => Ok(url.into()),
        Err(UrlRefusal::Invalid(why)) => Err(PushError::InvalidEndpoint(
            why.replacen("url", "endpoint", 1),
        )),
        Err(UrlRefusal::NotAllowed(why)) => Err(PushError::EndpointNotAllowed(why)),
    }
}

/// Checks a subscription's keys: `p256dh` a P-256 public key (the uncompressed point, 65
/// bytes), `auth` 16 bytes, both base64url. Returns them as base64url without padding.
///
/// # Errors
/// [`PushError::InvalidKeys`] saying which is wrong.
pub fn validate_keys(keys: &SubscriptionKeys) -> Result<(String, String), PushError> {
    let p256dh = LENIENT
        .decode(keys.p256dh.trim())
        .ok()
        .filter(|b| b.len() == 65 && b[0] == 4)
        .filter(|b| web_push_native::p256::PublicKey::from_sec1_bytes(b).is_ok())
        .ok_or_else(|| {
            PushError::InvalidKeys(
                "keys.p256dh must be a P-256 public key: the uncompressed point (65 bytes), \
                 base64url"
                    .into(),
            )
        })?;
    let auth = LENIENT
        .decode(keys.auth.trim())
        .ok()
        .filter(|b| b.len() == 16)
        .ok_or_else(|| PushError::InvalidKeys("keys.auth must be 16 bytes, base64url".into()))?;
    Ok((URL_SAFE_NO_PAD.encode(p256dh), URL_SAFE_NO_PAD.encode(auth)))
}

/// The push use cases for the HTTP layer: the public key, subscriptions, choices.
#[derive(Clone)]
pub struct Push {
    store: Store,
    targets: Targets,
    public_key: String,
    clock: crate::clock::Clock,
}

impl Push {
    /// The service over `store`, taking only endpoints that `targets` allows; browsers
    /// subscribe with `public_key` (base64url of the VAPID public key).
    #[must_use]
    pub fn new(store: Store, targets: Targets, public_key: &str) -> Self {
        Self {
            store,
            targets,
            public_key: public_key.to_owned(),
            clock: crate::clock::Clock::system(),
        }
    }

    /// The same service reading the time from `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: crate::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The VAPID public key browsers subscribe with (`applicationServerKey`).
    #[must_use]
    pub fn public_key(&self) -> &str {
        &self.public_key
    }

    /// Subscribes a browser for `account` (texts in `language` unless the body names
    /// one). The same browser again (its endpoint) keeps its subscription with the new
    /// keys: `false`; a new one: `true`. An endpoint another account subscribed moves to
    /// this one (the browser changed hands). Blocking (a name lookup).
    ///
    /// # Errors
    /// An invalid or forbidden endpoint, invalid keys, too many subscriptions, storage
    /// failure.
    pub fn subscribe(
        &self,
        account: &str,
        new: &NewSubscription,
        language: &str,
    ) -> Result<(SubscriptionBody, bool), PushError> {
        let language: &str = match new.language {
            Some(chosen) => chosen.tag(),
            None => language,
        };
        let endpoint = validate_endpoint(&new.endpoint, self.targets)?;
        let (p256dh, auth) = validate_keys(&new.keys)?;
        let now = self.clock.naive();
        self.store.write(|tx| {
            tx.lock_account(account)?;
            let mine = tx.push_subscriptions_of(account)?;
            if let Some(same) = mine.iter().find(|s| s.endpoint == endpoint) {
                let row = PushSubscriptionRow {
                    p256dh,
                    auth,
                    language: language.to_owned(),
                    ..same.clone()
                };
                tx.update_push_subscription(&row)?;
                return Ok((body_of(&row), false));
            }
            if mine.len() >= MAX_SUBSCRIPTIONS_PER_ACCOUNT {
                return Err(PushError::TooMany);
            }
            if let Some(other) = tx.push_subscription_by_endpoint(&endpoint)? {
                tx.remove_push_subscription(&other.id, "the browser subscribed again", now)?;
            }
            let row = PushSubscriptionRow {
                id: uuid::Uuid::now_v7().to_string(),
                account_id: account.to_owned(),
                endpoint,
                p256dh,
                auth,
                language: language.to_owned(),
                quiet_until: None,
                created_at: now,
            };
            tx.insert_push_subscription(&row)?;
            Ok((body_of(&row), true))
        })
    }

    /// The account's subscriptions, oldest first, without their keys.
    ///
    /// # Errors
    /// Storage failure.
    pub fn list(&self, account: &str) -> Result<Vec<SubscriptionBody>, PushError> {
        let rows = self.store.read(|tx| tx.push_subscriptions_of(account))?;
        Ok(rows.iter().map(body_of).collect())
    }

    /// Removes one of the account's subscriptions; its pending notifications are dropped.
    ///
    /// # Errors
    /// [`PushError::NotFound`] for an unknown id or another account's, storage failure.
    pub fn unsubscribe(&self, account: &str, id: &str) -> Result<(), PushError> {
        let now = self.clock.naive();
        self.store.write(|tx| {
            if !tx.owns_push_subscription(account, id)? {
                return Err(PushError::NotFound);
            }
            tx.remove_push_subscription(id, "the browser was unsubscribed", now)?;
            Ok(())
        })
    }

    fn body(
        tx: &mut Tx<'_>,
        account: &str,
        now: NaiveDateTime,
    ) -> Result<PushSettings, StoreError> {
        let row = tx
            .push_settings(account)?
            .unwrap_or_else(|| defaults(account, now));
        let subscriptions = tx.push_subscriptions_of(account)?.len();
        Ok(PushSettings {
            your_turn: row.your_turn,
            deadline_hours: row.deadline_hours.and_then(|h| u32::try_from(h).ok()),
            game_finished: row.game_finished,
            rematch_offered: row.rematch_offered,
            subscriptions: u32::try_from(subscriptions).unwrap_or(u32::MAX),
        })
    }

    /// The account's push choices.
    ///
    /// # Errors
    /// Storage failure.
    pub fn settings(&self, account: &str) -> Result<PushSettings, PushError> {
        let now = self.clock.naive();
        Ok(self.store.read(|tx| Self::body(tx, account, now))?)
    }

    /// Changes the account's push choices.
    ///
    /// # Errors
    /// `deadline_hours` over [`crate::mail::MAX_DEADLINE_HOURS`], storage failure.
    pub fn choose(&self, account: &str, choices: &PushChoices) -> Result<PushSettings, PushError> {
        let hours = choices
            .deadline_hours
            .map(crate::mail::deadline_hours_choice)
            .transpose()
            .map_err(PushError::Invalid)?;
        let now = self.clock.naive();
        Ok(self.store.write(|tx| {
            let mut row = tx
                .push_settings(account)?
                .unwrap_or_else(|| defaults(account, now));
            if let Some(v) = choices.your_turn {
                row.your_turn = v;
            }
            if let Some(h) = hours {
                row.deadline_hours = h;
            }
            if let Some(v) = choices.game_finished {
                row.game_finished = v;
            }
            if let Some(v) = choices.rematch_offered {
                row.rematch_offered = v;
            }
            row.updated_at = now;
            tx.save_push_settings(&row)?;
            Self::body(tx, account, now)
        })?)
    }
}

/// A pending push of `kind` to `sub`, due at `due`.
fn push_row(
    sub: &PushSubscriptionRow,
    game_id: &str,
    version: i32,
    kind: &str,
    mut payload: Map<String, Value>,
    due: NaiveDateTime,
    now: NaiveDateTime,
) -> DeliveryRow {
    let id = uuid::Uuid::now_v7().to_string();
    payload.insert("kind".into(), kind.into());
    DeliveryRow {
        id,
        webhook_id: None,
        account_id: sub.account_id.clone(),
        game_id: game_id.to_owned(),
        kind: kind.to_owned(),
        game_version: version,
        payload: JsonValue(Value::Object(payload)),
        status: PENDING.to_owned(),
        attempts: 0,
        next_attempt_at: due,
        last_error: None,
        created_at: now,
        finished_at: None,
        channel: CHANNEL_PUSH.to_owned(),
        subscription_id: Some(sub.id.clone()),
    }
}

/// The games a `your_turn` row stands for: those of the rows it joined, and its own.
fn announced_games(d: &DeliveryRow) -> Vec<String> {
    let mut games: Vec<String> = d
        .payload
        .0
        .get("games")
        .and_then(Value::as_array)
        .map(|g| {
            g.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if !games.contains(&d.game_id) {
        games.push(d.game_id.clone());
    }
    games
}

/// When a new "your turn" of `game_id` to `sub` is due, and the games it stands for: with
/// the ones still unsent to it, which it replaces (dropped; the new one keeps their
/// earliest due time and stands for their games too), else at once, or when the
/// subscription's quiet window ends; a row not joining another starts a new window of
/// `window`.
fn your_turn_due(
    tx: &mut Tx<'_>,
    sub: &PushSubscriptionRow,
    game_id: &str,
    window: Duration,
    now: NaiveDateTime,
) -> Result<(NaiveDateTime, Vec<String>), StoreError> {
    let unsent = tx.unsent_pushes(&sub.id, YOUR_TURN)?;
    let mut games: Vec<String> = unsent.iter().flat_map(announced_games).collect();
    games.retain(|g| g != game_id);
    games.sort_unstable();
    games.dedup();
    games.push(game_id.to_owned());
    if let Some(due) = unsent.iter().map(|d| d.next_attempt_at).min() {
        let ids: Vec<&str> = unsent.iter().map(|d| d.id.as_str()).collect();
        tx.drop_deliveries(&ids, "joined a newer your_turn", now)?;
        return Ok((due, games));
    }
    let due = sub.quiet_until.map_or(now, |quiet| quiet.max(now));
    tx.set_push_quiet_until(
        &sub.id,
        due + TimeDelta::from_std(window).unwrap_or(TimeDelta::MAX),
    )?;
    Ok((due, games))
}

/// Writes the pushes that a change of a game to `after` announces (`news`), in the
/// transaction that appends it (`version`: the game's version after it), to every
/// subscription of the people concerned, as they chose:
///
/// - a new ask: `your_turn` (coalesced per subscription, see the module documentation),
///   and `deadline_soon` due `deadline_hours` before the seat's deadline (older pending
///   ones of the game are dropped);
/// - the game ended: `game_finished` to every seated person.
///
/// # Errors
/// Storage failure.
pub fn enqueue(
    tx: &mut Tx<'_>,
    game_id: &str,
    version: i32,
    after: &Game,
    news: &Announcements<'_>,
    window: Duration,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    if news.is_empty() {
        return Ok(());
    }
    let accounts = news.accounts();
    let subscriptions = tx.push_subscriptions_of_accounts(&accounts)?;
    if subscriptions.is_empty() {
        return Ok(());
    }
    let stored = tx.push_settings_of(&accounts)?;
    let choices = |account: &str| {
        stored
            .iter()
            .find(|s| s.account_id == account)
            .cloned()
            .unwrap_or_else(|| defaults(account, now))
    };
    let common = |seat: u8| {
        let mut payload = Map::new();
        payload.insert("game_id".into(), game_id.into());
        payload.insert("game_version".into(), version.into());
        payload.insert("ruleset".into(), after.setup.ruleset.name().into());
        payload.insert("game_name".into(), after.name.clone().into());
        payload.insert("seat".into(), seat.into());
        payload
    };
    let mut rows = Vec::new();
    for ask in &news.turns {
        let mine: Vec<&PushSubscriptionRow> = subscriptions
            .iter()
            .filter(|s| s.account_id == ask.account)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let chosen = choices(ask.account);
        let deadline = after
            .deadlines
            .iter()
            .filter(|d| d.seat == ask.seat)
            .map(|d| d.at)
            .min();
        let mut payload = common(ask.seat);
        payload.insert("actions".into(), ask.actions.clone().into());
        if let Some(at) = deadline {
            payload.insert("deadline_at".into(), rfc3339(at.naive_utc()).into());
        }
        tx.drop_pending(
            game_id,
            ask.account,
            DEADLINE_SOON,
            CHANNEL_PUSH,
            "superseded by a newer turn",
            now,
        )?;
        for sub in mine {
            if chosen.your_turn {
                // Rows written before in this transaction (another game of a batch) are in
                // the table already: `insert_deliveries` runs per game change.
                let (due, games) = your_turn_due(tx, sub, game_id, window, now)?;
                let mut payload = payload.clone();
                payload.insert("games".into(), games.into());
                rows.push(push_row(
                    sub, game_id, version, YOUR_TURN, payload, due, now,
                ));
            }
            if let (Some(hours), Some(at)) = (chosen.deadline_hours, deadline) {
                let due = (at - TimeDelta::hours(i64::from(hours)))
                    .naive_utc()
                    .max(now);
                rows.push(push_row(
                    sub,
                    game_id,
                    version,
                    DEADLINE_SOON,
                    payload.clone(),
                    due,
                    now,
                ));
            }
        }
    }
    for (seat, account) in &news.finished {
        if !choices(account).game_finished {
            continue;
        }
        let mut payload = common(*seat);
        let winners = after
            .winners
            .iter()
            .filter_map(|w| after.seats.get(usize::from(*w)));
        let people: Vec<&str> = winners.clone().filter_map(|s| s.account()).collect();
        let bots: Vec<&str> = winners.filter_map(rules::Seat::name).collect();
        payload.insert("winner_accounts".into(), people.into());
        payload.insert("winner_bots".into(), bots.into());
        for sub in subscriptions.iter().filter(|s| s.account_id == *account) {
            rows.push(push_row(
                sub,
                game_id,
                version,
                GAME_FINISHED,
                payload.clone(),
                now,
                now,
            ));
        }
    }
    tx.insert_deliveries(&rows)
}

/// Tells the people for whom a rematch keeps a seat that it waits for them (kind
/// `rematch_offered`, with the new game), on each of their subscriptions, as they chose.
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
    let subscriptions = tx.push_subscriptions_of_accounts(&accounts)?;
    if subscriptions.is_empty() {
        return Ok(());
    }
    let stored = tx.push_settings_of(&accounts)?;
    let mut rows = Vec::new();
    for (seat, account) in kept {
        let wanted = stored
            .iter()
            .find(|s| s.account_id == account)
            .is_none_or(|s| s.rematch_offered);
        if !wanted {
            continue;
        }
        for sub in subscriptions.iter().filter(|s| s.account_id == account) {
            let mut payload = Map::new();
            payload.insert("game_id".into(), game_id.into());
            payload.insert("game_version".into(), version.into());
            payload.insert("ruleset".into(), game.setup.ruleset.name().into());
            payload.insert("game_name".into(), game.name.clone().into());
            payload.insert("seat".into(), seat.into());
            payload.insert("rematch_of".into(), game.rematch_of.clone().into());
            rows.push(push_row(
                sub,
                game_id,
                version,
                REMATCH_OFFERED,
                payload,
                now,
                now,
            ));
        }
    }
    tx.insert_deliveries(&rows)
}

/// A push ready to be encrypted and sent.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The subscription it goes to.
    pub subscription_id: String,
    /// The push service's URL.
    pub endpoint: String,
    /// The browser's public key (base64url).
    pub p256dh: String,
    /// The browser's auth secret (base64url).
    pub auth: String,
    /// The JSON the service worker gets, before encryption.
    pub payload: String,
    /// `Urgency` (RFC 8030): `low`, `normal` or `high`.
    pub urgency: &'static str,
    /// `Topic` (RFC 8030), if any.
    pub topic: Option<&'static str>,
}

fn text<'a>(payload: &'a Value, key: &str) -> Option<&'a str> {
    payload.get(key).and_then(Value::as_str)
}

/// How a game is named in a notification: `"name" (ruleset)`, or the ruleset alone.
fn game_label(name: Option<&str>, ruleset: &str) -> String {
    match name {
        Some(name) => format!("\"{}\" ({ruleset})", rules::text::printable(name)),
        None => ruleset.to_owned(),
    }
}

/// The actions asked, in words (`play a card`, `pass or take`).
fn actions_text(actions: &[&str], de: bool) -> String {
    let words: Vec<&str> = actions
        .iter()
        .map(|a| match (*a, de) {
            ("play_card", false) => "play a card",
            ("play_card", true) => "spiel eine Karte",
            ("take_row", false) => "take a row",
            ("take_row", true) => "nimm eine Reihe",
            ("start", false) => "start the game",
            ("start", true) => "starte das Spiel",
            ("pass", false) => "pass",
            ("pass", true) => "schieb",
            ("take", false) => "take the card",
            ("take", true) => "nimm die Karte",
            ("draft_card", false) => "draft a card",
            ("draft_card", true) => "wähle eine Karte",
            ("keep_card", false) => "keep a card",
            ("keep_card", true) => "behalte eine Karte",
            (other, _) => other,
        })
        .collect();
    words.join(if de { " oder " } else { " or " })
}

/// The notification of a due push row to `sub`, or `None` when it should be dropped: the
/// account no longer wants this kind, or (`your_turn`) none of the games it was written
/// for waits any more. A `your_turn` tells of every game waiting for the account now: one
/// game by name, several by their number, linking to the newest ask that still waits.
///
/// # Errors
/// Storage failure.
pub fn render(
    tx: &mut Tx<'_>,
    d: &DeliveryRow,
    sub: &PushSubscriptionRow,
) -> Result<Option<Outgoing>, StoreError> {
    let now = tx.now();
    let chosen = tx
        .push_settings(&d.account_id)?
        .unwrap_or_else(|| defaults(&d.account_id, now));
    let wanted = match d.kind.as_str() {
        YOUR_TURN => chosen.your_turn,
        DEADLINE_SOON => chosen.deadline_hours.is_some(),
        GAME_FINISHED => chosen.game_finished,
        REMATCH_OFFERED => chosen.rematch_offered,
        _ => false,
    };
    if !wanted {
        return Ok(None);
    }
    let de = sub.language == "de";
    let p = &d.payload.0;
    let ruleset = text(p, "ruleset").unwrap_or("game");
    let label = game_label(text(p, "game_name"), ruleset);
    let mut body = Map::new();
    body.insert("id".into(), d.id.clone().into());
    body.insert("kind".into(), d.kind.clone().into());
    let (game, title, line, urgency, topic) = match d.kind.as_str() {
        YOUR_TURN => {
            let waiting = tx.list_games(&ListQuery {
                account: &d.account_id,
                mine: true,
                awaiting: true,
                status: None,
                ruleset: None,
                before_id: None,
                min_free_seats: None,
                limit: MAX_COUNTED_GAMES,
            })?;
            // The latest ask this notification stands for that still waits; none: the
            // person has moved in all of them, and the other waiting games were told of
            // before.
            let Some(newest) = announced_games(d)
                .iter()
                .rev()
                .find_map(|id| waiting.iter().find(|g| g.game.id == *id))
            else {
                return Ok(None);
            };
            let game = newest.game.id.clone();
            let label = game_label(newest.game.name.as_deref(), &newest.game.ruleset);
            body.insert("ruleset".into(), newest.game.ruleset.clone().into());
            body.insert("games_waiting".into(), waiting.len().into());
            let (title, line) = if waiting.len() == 1 {
                let action = newest
                    .seats
                    .iter()
                    .find(|s| s.account_id.as_deref() == Some(&d.account_id))
                    .and_then(|s| s.action.clone())
                    .unwrap_or_default();
                let actions: Vec<&str> = action.split(',').filter(|a| !a.is_empty()).collect();
                let what = actions_text(&actions, de);
                if de {
                    ("Du bist am Zug".to_owned(), format!("{label}: {what}."))
                } else {
                    ("Your turn".to_owned(), format!("{label}: {what}."))
                }
            } else {
                let n = waiting.len();
                if de {
                    (
                        format!("{n} Partien warten auf dich"),
                        format!("Zuletzt: {label}"),
                    )
                } else {
                    (
                        format!("{n} games wait for you"),
                        format!("Newest: {label}"),
                    )
                }
            };
            (game, title, line, "normal", Some(TOPIC_YOUR_TURN))
        }
        DEADLINE_SOON => {
            if let Some(at) = text(p, "deadline_at") {
                body.insert("deadline_at".into(), at.into());
            }
            let (title, line) = if de {
                (
                    "Deine Zugfrist läuft bald ab".to_owned(),
                    format!("{label}: zieh bald, sonst zieht der Server für dich."),
                )
            } else {
                (
                    "Your move deadline is near".to_owned(),
                    format!("{label}: move soon, or the server moves for you."),
                )
            };
            (d.game_id.clone(), title, line, "high", None)
        }
        GAME_FINISHED => {
            let winners = crate::mail::winner_names(tx, p)?;
            let (title, line) = if de {
                (
                    "Partie beendet".to_owned(),
                    format!("{label}: gewonnen von {winners}."),
                )
            } else {
                (
                    "Game over".to_owned(),
                    format!("{label}: won by {winners}."),
                )
            };
            (d.game_id.clone(), title, line, "low", None)
        }
        REMATCH_OFFERED => {
            let (title, line) = if de {
                (
                    "Revanche".to_owned(),
                    format!("{label}: ein Platz wird für dich frei gehalten."),
                )
            } else {
                (
                    "Rematch".to_owned(),
                    format!("{label}: a seat is kept for you."),
                )
            };
            (d.game_id.clone(), title, line, "normal", None)
        }
        _ => return Ok(None),
    };
    if !body.contains_key("ruleset") {
        body.insert("ruleset".into(), ruleset.into());
    }
    body.insert("game_id".into(), game.clone().into());
    body.insert("title".into(), title.into());
    body.insert("body".into(), line.into());
    body.insert("url".into(), format!("#/games/{game}").into());
    let tag = topic.map_or_else(|| format!("{}:{game}", d.kind), str::to_owned);
    body.insert("tag".into(), tag.into());
    body.insert("lang".into(), sub.language.clone().into());
    Ok(Some(Outgoing {
        subscription_id: sub.id.clone(),
        endpoint: sub.endpoint.clone(),
        p256dh: sub.p256dh.clone(),
        auth: sub.auth.clone(),
        payload: Value::Object(body).to_string(),
        urgency,
        topic,
    }))
}

/// The wait a `Retry-After` value asks for at `now` (seconds, or an HTTP date), at most
/// [`MAX_RETRY_AFTER`].
#[must_use]
pub fn retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => (DateTime::parse_from_rfc2822(value)
            .ok()?
            .with_timezone(&Utc)
            - now)
            .to_std()
            .unwrap_or(Duration::ZERO),
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// Encrypts a push for its browser (RFC 8291, `aes128gcm`).
///
/// # Errors
/// Keys that do not decode (they were checked when stored), a failed encryption.
fn encrypt(message: &Outgoing) -> Result<Vec<u8>, String> {
    let public = LENIENT
        .decode(&message.p256dh)
        .ok()
        .and_then(|b| web_push_native::p256::PublicKey::from_sec1_bytes(&b).ok())
        .ok_or("the subscription's p256dh is not a P-256 public key")?;
    let auth = LENIENT
        .decode(&message.auth)
        .ok()
        .and_then(web_push_native::Auth::from_exact_iter)
        .ok_or("the subscription's auth is not 16 bytes")?;
    web_push_native::encrypt(message.payload.clone().into_bytes(), &public, &auth)
        .map_err(|e| format!("encryption: {e}"))
}

/// Sends one push at `now`: encrypted, with the VAPID `Authorization`, `TTL`, `Urgency`
/// and `Topic`, through `agent` (the outbox's, which connects only to addresses the target
/// policy allows). What the push service's answer means for the delivery: 2xx delivered;
/// 404 or 410 the subscription is gone; 429 or 5xx another attempt, after `Retry-After`
/// when given; another status refused for good.
#[must_use]
pub fn deliver(
    agent: &ureq::Agent,
    keys: &VapidKeys,
    message: &Outgoing,
    now: DateTime<Utc>,
) -> Attempt {
    let failed = |error: String| Attempt::Failed {
        error,
        retry_after: None,
    };
    let body = match encrypt(message) {
        Ok(body) => body,
        Err(e) => return Attempt::Refused(e),
    };
    let authorization = match keys.authorization(&message.endpoint, now) {
        Ok(a) => a,
        Err(e) => return Attempt::Refused(e),
    };
    let mut request = agent
        .post(&message.endpoint)
        .header("Content-Type", "application/octet-stream")
        .header("Content-Encoding", "aes128gcm")
        .header("Authorization", authorization)
        .header("TTL", TTL.as_secs().to_string())
        .header("Urgency", message.urgency);
    if let Some(topic) = message.topic {
        request = request.header("Topic", topic);
    }
    let response = match request.send(&body[..]) {
        Ok(r) => r,
        Err(e) => return failed(e.to_string()),
    };
    let status = response.status();
    let code = status.as_u16();
    if status.is_success() {
        Attempt::Delivered
    } else if code == 404 || code == 410 {
        Attempt::Gone(format!(
            "the push service answered {status}: the subscription has ended"
        ))
    } else if code == 429 || status.is_server_error() {
        Attempt::Failed {
            error: format!("the push service answered {status}"),
            retry_after: response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| retry_after(v, now)),
        }
    } else {
        Attempt::Refused(format!("the push service refused the request: {status}"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates_and_is_bounded() {
        let now = DateTime::parse_from_rfc3339("2026-12-05T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(
            retry_after("Sat, 05 Dec 2026 10:01:30 GMT", now),
            Some(Duration::from_secs(90))
        );
        assert_eq!(
            retry_after("Sat, 05 Dec 2026 09:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("999999999", now), Some(MAX_RETRY_AFTER));
        assert_eq!(retry_after("soon", now), None);
    }

    #[test]
    fn a_vapid_key_signs_for_the_endpoints_origin() {
        let private = VapidKeys::generate_private();
        let keys = VapidKeys::from_private(&private, "mailto:ops@example.org").unwrap();
        assert_eq!(URL_SAFE_NO_PAD.decode(keys.public_key()).unwrap().len(), 65);
        let now = Utc::now();
        let header = keys
            .authorization("https://push.example.net:8443/send/abc?x=1", now)
            .unwrap();
        let (token, k) = header
            .strip_prefix("vapid t=")
            .and_then(|r| r.split_once(", k="))
            .unwrap();
        assert_eq!(k, keys.public_key());
        let public = URL_SAFE_NO_PAD.decode(k).unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.set_audience(&["https://push.example.net:8443"]);
        validation.set_required_spec_claims(&["exp", "aud", "sub"]);
        let claims = jsonwebtoken::decode::<Value>(
            token,
            &jsonwebtoken::DecodingKey::from_ec_der(&public),
            &validation,
        )
        .unwrap()
        .claims;
        assert_eq!(claims["sub"], "mailto:ops@example.org");
        assert_eq!(claims["exp"].as_i64().unwrap(), now.timestamp() + 12 * 3600);
        // Another key does not verify it.
        let other =
            VapidKeys::from_private(&VapidKeys::generate_private(), "mailto:x@y.z").unwrap();
        let other_public = URL_SAFE_NO_PAD.decode(other.public_key()).unwrap();
        assert!(
            jsonwebtoken::decode::<Value>(
                token,
                &jsonwebtoken::DecodingKey::from_ec_der(&other_public),
                &validation,
            )
            .is_err()
        );
        for bad in ["", "not base64!", "AAAA", &"A".repeat(43)] {
            assert!(
                VapidKeys::from_private(bad, "mailto:x@y.z").is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn endpoints_are_https_and_public_and_loopback_http_only_in_development() {
        let dev = Targets {
            allow_loopback: true,
        };
        let prod = Targets::default();
        assert!(validate_endpoint("https://93.184.215.14/push/abc", prod).is_ok());
        for (url, targets) in [
            ("http://93.184.215.14/push/abc", prod),
            ("http://93.184.215.14/push/abc", dev),
            ("ftp://93.184.215.14/", prod),
            ("push", prod),
            ("http://127.0.0.1:9/p", prod),
        ] {
            assert!(
                matches!(
                    validate_endpoint(url, targets),
                    Err(PushError::InvalidEndpoint(_))
                ),
                "{url}"
            );
        }
        for url in [
            "https://127.0.0.1/p",
            "https://10.0.0.1/p",
            "https://[::1]/p",
        ] {
            assert!(
                matches!(
                    validate_endpoint(url, prod),
                    Err(PushError::EndpointNotAllowed(_))
                ),
                "{url}"
            );
        }
        assert!(validate_endpoint("http://127.0.0.1:9/p", dev).is_ok());
        assert!(validate_endpoint("http://localhost:9/p", dev).is_ok());
        assert!(matches!(
            validate_endpoint("https://10.0.0.1/p", dev),
            Err(PushError::EndpointNotAllowed(_))
        ));
    }
}
