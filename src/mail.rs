//! E-mail reminders for play by mail: an account adds an address, proves it with a link
//! carrying a single-use token that expires (only its SHA-256 is stored), and chooses what
//! it is told: "your turn", "a move deadline is less than N hours away", "a game ended", or
//! one daily digest of the games awaiting it instead of the turn and deadline mails.
//!
//! Reminders go through the durable outbox ([`crate::outbox`], `webhook_deliveries`,
//! channel `mail`): [`enqueue`] writes them in the transaction that appends the game change
//! that causes them, so they exist exactly when their cause was committed, and the outbox's
//! worker sends them on a lane of their own with the same leases, retries, backoff and
//! give-up as webhooks. A reminder is dropped instead of sent when it is no longer true at the time it
//! is due: the move was made, the address or the choice went, the inbox is empty. A deadline
//! reminder is written at once with its due time in the future (`deadline − N hours`).
//!
//! A mail is plain text rendered when it is sent ([`render`]) from the stored payload (game,
//! ruleset, actions asked, deadline, winners' names) and the account's name: public facts
//! only — never cards, selections, chips or seeds — with a link to the game in the web
//! client (`PUBLIC_URL/#/games/<id>`). Off when `SMTP_URL` is unset. Blocking: call from
//! `web::block` or a thread of its own. Knows no HTTP.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use chrono::{NaiveDateTime, TimeDelta};
use lettre::message::{Mailbox, header::ContentType};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::{Message, SmtpTransport, Transport};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use rules::Game;

use crate::outbox::{Announcements, GAME_FINISHED, YOUR_TURN, announced_actions};
use crate::store::json::JsonValue;
use crate::store::{
    CHANNEL_MAIL, DeliveryRow, ListQuery, MailSettingsRow, MailVerificationRow, PENDING, Store,
    StoreError, Tx,
};

/// Reminder kind: a move deadline is less than the chosen hours away.
pub const DEADLINE_SOON: &str = "deadline_soon";
/// Reminder kind: the daily list of games awaiting the account.
pub const DIGEST: &str = "digest";
/// How long a verification link works.
pub const VERIFY_TTL: Duration = Duration::from_secs(24 * 3600);
/// The largest "deadline in less than N hours" (30 days, the longest move deadline).
pub const MAX_DEADLINE_HOURS: u32 = 720;

/// A chosen "deadline in less than `hours` hours" as stored: `None` for 0 (off). Mail
/// reminders and push notifications take the same choice.
///
/// # Errors
/// The sentence for hours over [`MAX_DEADLINE_HOURS`].
pub fn deadline_hours_choice(hours: u32) -> Result<Option<i32>, String> {
    if hours > MAX_DEADLINE_HOURS {
        return Err(format!("deadline_hours must be 0–{MAX_DEADLINE_HOURS}"));
    }
    Ok((hours > 0).then(|| i32::try_from(hours).unwrap_or(i32::MAX)))
}
/// The longest accepted address.
pub const MAX_ADDRESS_LENGTH: usize = 254;

/// How mail is sent (`SMTP_URL`, `MAIL_FROM`, `PUBLIC_URL`, `MAIL_DIGEST_SECONDS`).
#[derive(Debug, Clone)]
pub struct MailConfig {
    /// `smtp://host:port` (plain), `smtp://host?tls=required` (STARTTLS) or
    /// `smtps://host` (TLS), with optional `user:password@`.
    pub smtp_url: String,
    /// The sender, e.g. `Stammtisch <noreply@example.org>`.
    pub from: String,
    /// The base of links in mails, e.g. `https://play.example.org` (no trailing slash), as
    /// configured; [`MailConfig::link_base`] is what the links use.
    pub public_url: String,
    /// The time between an ask and the digest that lists it (a day by default).
    pub digest_interval: Duration,
    /// The limit of one SMTP conversation.
    pub timeout: Duration,
    /// The address the server was bound to, for links when `PUBLIC_URL` is unset
    /// ([`MailConfig::listening_on`]); shared by every clone of this configuration (the
    /// mail service's and the outbox worker's).
    pub bound: Arc<std::sync::OnceLock<String>>,
}

impl MailConfig {
    /// Links in mails point at `base` (`http://host:port`, the address the server was
    /// bound to) instead of `public_url`, which names port 0 when the server binds to any
    /// free port. For a server without `PUBLIC_URL` only; the first call counts, for every
    /// clone of this configuration.
    pub fn listening_on(&self, base: String) {
        let _ = self.bound.set(base);
    }

    /// Where links in mails point: the bound address when set, else `public_url`.
    #[must_use]
    pub fn link_base(&self) -> &str {
        self.bound
            .get()
            .map_or(self.public_url.as_str(), String::as_str)
    }
}

/// A mail ready to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The recipient's address.
    pub to: String,
    /// The subject line.
    pub subject: String,
    /// Plain-text body.
    pub body: String,
}

/// Why a mail use case failed.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// The server sends no mail (`SMTP_URL` is unset).
    #[error("this server sends no e-mail")]
    Disabled,
    /// Not an e-mail address, or a setting out of range.
    #[error("{0}")]
    Invalid(String),
    /// The verification link is unknown, used or expired.
    #[error("the verification link is unknown, used or expired")]
    InvalidToken,
    /// The mail server refused or could not be reached.
    #[error("the mail could not be sent; try again later")]
    Send(String),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Sends mail over SMTP (lettre).
///
/// lettre resolves the server's name with the system's resolver, which no timeout bounds;
/// a mail's lease counts on every step being bounded (a mail whose lease ran out while its
/// conversation still went on could be claimed and sent a second time). So the name is
/// looked up here within the timeout ([`crate::lookup`]) and lettre is given an address:
/// the first the name resolves to, and the next only when the one before refused the
/// connection or could not be reached (nothing was said to it, so nothing can have been
/// sent), at most [`SMTP_ADDRESSES`]. TLS still checks the certificate against the name.
pub struct Mailer {
    server: SmtpServer,
    timeout: Duration,
    from: Mailbox,
    resolve: crate::lookup::Resolve,
}

/// How many of the addresses a name resolves to a mail tries (see [`Mailer`]).
pub const SMTP_ADDRESSES: usize = 2;

/// What `SMTP_URL` says, read as lettre reads it (`SmtpTransport::from_url`, which cannot
/// be used with an address in place of the name: it would check the certificate against
/// the address, and names an IPv6 address in brackets, which no lookup takes), read once:
/// each mail's transport is built from it.
struct SmtpServer {
    host: url::Host<String>,
    port: u16,
    /// The encryption, its settings for `host` (root certificates included) made once.
    tls: Tls,
    credentials: Option<Credentials>,
    hello: Option<ClientId>,
}

impl SmtpServer {
    fn parse(raw: &str) -> Result<Self, String> {
        // lettre's own reading first: what it refuses, this refuses.
        SmtpTransport::from_url(raw).map_err(|e| format!("SMTP_URL: {e}"))?;
        let url = url::Url::parse(raw).map_err(|e| format!("SMTP_URL: {e}"))?;
        let host = url.host().ok_or("SMTP_URL: no host")?.to_owned();
        let asked = url
            .query_pairs()
            .find(|(k, _)| k == "tls")
            .map(|(_, v)| v.into_owned());
        use lettre::transport::smtp::{SMTP_PORT, SUBMISSION_PORT, SUBMISSIONS_PORT};
        let parameters =
            || TlsParameters::new(host.to_string()).map_err(|e| format!("SMTP_URL: {e}"));
        let (tls, port) = match (url.scheme(), asked.as_deref()) {
            ("smtps", _) => (Tls::Wrapper(parameters()?), SUBMISSIONS_PORT),
            (_, Some("required")) => (Tls::Required(parameters()?), SUBMISSION_PORT),
            (_, Some("opportunistic")) => (Tls::Opportunistic(parameters()?), SUBMISSION_PORT),
            _ => (Tls::None, SMTP_PORT),
        };
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(std::borrow::Cow::into_owned)
                .map_err(|e| format!("SMTP_URL: {e}"))
        };
        let credentials = match url.password() {
            Some(password) => Some(Credentials::new(decode(url.username())?, decode(password)?)),
            None => None,
        };
        let hello = (url.path().len() > 1)
            .then(|| ClientId::Domain(url.path().trim_matches('/').to_owned()));
        Ok(Self {
            host,
            port: url.port().unwrap_or(port),
            tls,
            credentials,
            hello,
        })
    }

    /// A transport to `address`; TLS checks the certificate against the URL's host.
    fn transport(&self, address: IpAddr, timeout: Duration) -> SmtpTransport {
        let mut builder = SmtpTransport::builder_dangerous(address.to_string())
            .port(self.port)
            .timeout(Some(timeout))
            .tls(self.tls.clone());
        if let Some(credentials) = &self.credentials {
            builder = builder.credentials(credentials.clone());
        }
        if let Some(hello) = &self.hello {
            builder = builder.hello_name(hello.clone());
        }
        builder.build()
    }
}

impl Mailer {
    /// A mailer for the configured server and sender.
    ///
    /// # Errors
    /// An SMTP URL or sender lettre refuses.
    pub fn new(config: &MailConfig) -> Result<Self, String> {
        let server = SmtpServer::parse(&config.smtp_url)?;
        let from = config.from.parse().map_err(|e| format!("MAIL_FROM: {e}"))?;
        Ok(Self {
            server,
            timeout: config.timeout,
            from,
            resolve: crate::lookup::system,
        })
    }

    /// The same mailer looking names up with `resolve` instead of the system's resolver
    /// (tests: a resolver that hangs, a name with several addresses).
    #[must_use]
    pub fn with_resolver(mut self, resolve: crate::lookup::Resolve) -> Self {
        self.resolve = resolve;
        self
    }

    /// Sends one plain-text mail; `Err` describes a failed attempt.
    ///
    /// # Errors
    /// An address lettre refuses, a server name that does not resolve within the timeout,
    /// a refusing or unreachable server.
    pub fn send(&self, mail: &Outgoing) -> Result<(), String> {
        let to: Mailbox = mail.to.parse().map_err(|e| format!("recipient: {e}"))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(mail.body.clone())
            .map_err(|e| e.to_string())?;
        let addresses = match &self.server.host {
            url::Host::Ipv4(ip) => vec![IpAddr::V4(*ip)],
            url::Host::Ipv6(ip) => vec![IpAddr::V6(*ip)],
            url::Host::Domain(name) => {
                crate::lookup::lookup_with(self.resolve, name, self.server.port, self.timeout)
                    .ok_or_else(|| {
                        format!(
                            "the mail server's name {name} did not resolve within {} ms",
                            self.timeout.as_millis()
                        )
                    })?
                    .iter()
                    .map(SocketAddr::ip)
                    .collect()
            }
        };
        let mut last = String::from("the mail server's name resolved to no address");
        for address in addresses.into_iter().take(SMTP_ADDRESSES) {
            match self.server.transport(address, self.timeout).send(&message) {
                Ok(_) => return Ok(()),
                Err(e) if never_connected(&e) => last = format!("{address}: {e}"),
                Err(e) => return Err(e.to_string()),
            }
        }
        Err(last)
    }
}

/// Whether a failed send failed before its connection was made, so that nothing was said
/// to the server: the connection was refused or the address could not be reached. (A
/// timeout may also come later in the conversation, so it does not count.)
fn never_connected(e: &lettre::transport::smtp::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::HostUnreachable
                    | std::io::ErrorKind::NetworkUnreachable
                    | std::io::ErrorKind::AddrNotAvailable
            );
        }
        source = s.source();
    }
    false
}

/// An account's mail settings as it sees them.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct MailSettings {
    /// Whether this server sends e-mail at all.
    pub enabled: bool,
    /// The verified address reminders go to (`null`: none, nothing is sent).
    #[schema(required = true)]
    pub address: Option<String>,
    /// An address whose verification link was sent and not yet used.
    #[schema(required = true)]
    pub pending_address: Option<String>,
    /// A mail when it becomes the account's turn.
    pub your_turn: bool,
    /// A mail when a move deadline is less than this many hours away (`null`: off).
    #[schema(required = true)]
    pub deadline_hours: Option<u32>,
    /// A mail when a game of the account ends.
    pub game_finished: bool,
    /// One mail a day listing the games awaiting the account, instead of the turn and
    /// deadline mails.
    pub digest: bool,
}

/// A change of the reminder choices; absent fields stay.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MailChoices {
    /// A mail when it becomes the account's turn.
    pub your_turn: Option<bool>,
    /// A mail when a move deadline is less than this many hours away, 1–720; `0` switches
    /// it off.
    #[schema(minimum = 0, maximum = 720)]
    #[serde(default, deserialize_with = "whole_number")]
    pub deadline_hours: Option<u32>,
    /// A mail when a game of the account ends.
    pub game_finished: Option<bool>,
    /// One mail a day listing the games awaiting the account instead of the turn and
    /// deadline mails.
    pub digest: Option<bool>,
}

/// A whole number (of hours or minutes), also when written as `3.0` (JSON does not tell
/// integers from other numbers).
pub(crate) fn whole_number<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<u32>, D::Error> {
    use serde::de::Error;
    let Some(x) = <Option<f64> as serde::Deserialize>::deserialize(d)? else {
        return Ok(None);
    };
    if x.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&x) {
        return Err(D::Error::custom("expected a whole number"));
    }
    // Whole and in range: the conversion is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(Some(x as u32))
}

fn defaults(account: &str, now: NaiveDateTime) -> MailSettingsRow {
    MailSettingsRow {
        account_id: account.to_owned(),
        address: None,
        your_turn: true,
        deadline_hours: None,
        game_finished: true,
        digest: false,
        updated_at: now,
    }
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Checks an address: one `@` between a non-empty local part and a domain with a dot, no
/// spaces, control characters or angle brackets, at most [`MAX_ADDRESS_LENGTH`]
/// characters, and accepted by lettre.
///
/// # Errors
/// [`MailError::Invalid`] saying what is wrong.
pub fn validate_address(address: &str) -> Result<String, MailError> {
    let address = address.trim();
    let bad = || MailError::Invalid("not an e-mail address".into());
    if address.len() > MAX_ADDRESS_LENGTH
        || address
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | ',' | ';'))
    {
        return Err(bad());
    }
    let (local, domain) = address.split_once('@').ok_or_else(bad)?;
    if local.is_empty() || domain.contains('@') || !domain.contains('.') {
        return Err(bad());
    }
    address
        .parse::<lettre::Address>()
        .map(|_| address.to_owned())
        .map_err(|_| bad())
}

/// The mail settings service.
#[derive(Clone)]
pub struct Mail {
    store: Store,
    config: Option<MailConfig>,
    mailer: Option<Arc<Mailer>>,
    clock: crate::clock::Clock,
}

impl Mail {
    /// The service; without a configuration (`SMTP_URL` unset) mail is off.
    ///
    /// # Errors
    /// A configuration lettre refuses.
    pub fn new(store: Store, config: Option<MailConfig>) -> Result<Self, String> {
        let mailer = config.as_ref().map(Mailer::new).transpose()?.map(Arc::new);
        Ok(Self {
            store,
            config,
            mailer,
            clock: crate::clock::Clock::system(),
        })
    }

    /// The same service reading the time (settings changes, verification links) from
    /// `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: crate::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Whether mail is on.
    #[must_use]
    pub fn enabled(&self) -> bool {
        self.mailer.is_some()
    }

    fn body(&self, tx: &mut Tx<'_>, account: &str) -> Result<MailSettings, StoreError> {
        let now = self.clock.naive();
        let row = tx
            .mail_settings(account)?
            .unwrap_or_else(|| defaults(account, now));
        let pending = tx
            .verification_of(account)?
            .filter(|v| v.expires_at > now)
            .map(|v| v.address);
        Ok(MailSettings {
            enabled: self.enabled(),
            address: row.address,
            pending_address: pending,
            your_turn: row.your_turn,
            deadline_hours: row.deadline_hours.and_then(|h| u32::try_from(h).ok()),
            game_finished: row.game_finished,
            digest: row.digest,
        })
    }

    /// The account's settings.
    ///
    /// # Errors
    /// Storage failure.
    pub fn settings(&self, account: &str) -> Result<MailSettings, MailError> {
        Ok(self.store.read(|tx| self.body(tx, account))?)
    }

    /// Changes the account's reminder choices.
    ///
    /// # Errors
    /// `deadline_hours` over [`MAX_DEADLINE_HOURS`], storage failure.
    pub fn choose(&self, account: &str, choices: &MailChoices) -> Result<MailSettings, MailError> {
        let hours = choices
            .deadline_hours
            .map(deadline_hours_choice)
            .transpose()
            .map_err(MailError::Invalid)?;
        let now = self.clock.naive();
        Ok(self.store.write(|tx| {
            let mut row = tx
                .mail_settings(account)?
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
            if let Some(v) = choices.digest {
                row.digest = v;
            }
            row.updated_at = now;
            tx.save_mail_settings(&row)?;
            self.body(tx, account)
        })?)
    }

    /// Sends a verification link for `address` to it (now, not through the outbox: the
    /// token must never be stored, only its hash). The address is used once the link is
    /// opened; until then the previous one (if any) stays.
    ///
    /// # Errors
    /// Mail off, an invalid address, a mail server that refuses, storage failure.
    pub fn request_address(&self, account: &str, address: &str) -> Result<MailSettings, MailError> {
        let (Some(config), Some(mailer)) = (&self.config, &self.mailer) else {
            return Err(MailError::Disabled);
        };
        let address = validate_address(address)?;
        let token = crate::fairness::new_seed();
        let now = self.clock.naive();
        let row = MailVerificationRow {
            token_hash: token_hash(&token),
            account_id: account.to_owned(),
            address: address.clone(),
            expires_at: now + TimeDelta::from_std(VERIFY_TTL).unwrap_or(TimeDelta::MAX),
            created_at: now,
        };
        let name = self.store.write(|tx| {
            tx.insert_verification(&row)?;
            Ok::<_, StoreError>(
                tx.account_names(&[account])?
                    .into_iter()
                    .next()
                    .map(|(_, n)| n)
                    .unwrap_or_default(),
            )
        })?;
        // The web client's page, which asks before it confirms: a mail scanner that opens
        // the link confirms nothing.
        let link = format!("{}{}", config.link_base(), confirmation_path(&token));
        let mail = Outgoing {
            to: address,
            subject: "Confirm your e-mail address for Stammtisch".into(),
            body: format!(
                "Hello {name},\n\nplease confirm that reminders of your Stammtisch games may go \
                 to this address: open this link within 24 hours and press \"Confirm\":\n\n\
                 {link}\n\nIf you did not ask for this, ignore this mail; nothing will be sent \
                 to you.\n"
            ),
        };
        mailer.send(&mail).map_err(|e| {
            tracing::warn!(error = e, "could not send a verification mail");
            MailError::Send(e)
        })?;
        self.settings(account)
    }

    /// Removes the account's address (and any pending verification); its pending mails
    /// are dropped.
    ///
    /// # Errors
    /// Storage failure.
    pub fn remove_address(&self, account: &str) -> Result<(), MailError> {
        let now = self.clock.naive();
        self.store.write(|tx| {
            if let Some(mut row) = tx.mail_settings(account)? {
                row.address = None;
                row.updated_at = now;
                tx.save_mail_settings(&row)?;
            }
            tx.delete_verifications(account)?;
            tx.drop_pending_mails(account, "the address was removed", now)?;
            Ok::<_, StoreError>(())
        })?;
        Ok(())
    }

    /// The web client's confirmation page for a token as a link carries it (hex, at most
    /// 256 characters): under `PUBLIC_URL` when mail is on, else from the server's root.
    /// `None` for anything else (nothing else can be a token this server sent). Looks
    /// nothing up and changes nothing.
    #[must_use]
    pub fn confirmation_page(&self, token: &str) -> Option<String> {
        let base = self.config.as_ref().map_or("", MailConfig::link_base);
        link_token(token).then(|| format!("{base}{}", confirmation_path(token)))
    }

    /// Uses a verification token (once): its address becomes the account's. Returns the
    /// verified address.
    ///
    /// # Errors
    /// An unknown, used or expired token, storage failure.
    pub fn verify(&self, token: &str) -> Result<String, MailError> {
        // Anything else is no token this server sent: refused before a write transaction.
        if !link_token(token) {
            return Err(MailError::InvalidToken);
        }
        let now = self.clock.naive();
        self.store.write(|tx| {
            let Some(v) = tx.take_verification(&token_hash(token))? else {
                return Err(MailError::InvalidToken);
            };
            if v.expires_at <= now {
                return Err(MailError::InvalidToken);
            }
            let mut row = tx
                .mail_settings(&v.account_id)?
                .unwrap_or_else(|| defaults(&v.account_id, now));
            row.address = Some(v.address.clone());
            row.updated_at = now;
            tx.save_mail_settings(&row)?;
            Ok(v.address)
        })
    }
}

/// Whether `token` has the shape of a verification link's token (hex, at most 256
/// characters; the server sends 64): nothing else can be one.
fn link_token(token: &str) -> bool {
    !token.is_empty() && token.len() <= 256 && token.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The path of the web client's page that confirms an address (its hash route).
fn confirmation_path(token: &str) -> String {
    format!("/#/mail/verify/{token}")
}

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn mail_row(
    account: &str,
    game_id: &str,
    version: i32,
    kind: &str,
    payload: Map<String, Value>,
    due: NaiveDateTime,
    now: NaiveDateTime,
) -> DeliveryRow {
    let id = uuid::Uuid::now_v7().to_string();
    let mut payload = payload;
    payload.insert("id".into(), id.clone().into());
    payload.insert("kind".into(), kind.into());
    DeliveryRow {
        id,
        webhook_id: None,
        account_id: account.to_owned(),
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
        channel: CHANNEL_MAIL.to_owned(),
        subscription_id: None,
    }
}

/// Writes the reminders that a change of a game to `after` announces (`news`), in the
/// transaction that appends it (`version`: the game's version after it), for the people
/// with a verified address:
///
/// - a new ask ([`crate::outbox::new_asks`]): `your_turn` now, and `deadline_soon` due
///   `deadline_hours` before the seat's deadline (older pending ones of the game are
///   dropped); for a digest account instead a `digest` due after the digest interval,
///   unless one is pending already;
/// - the game ended: `game_finished` to every seated person who chose it.
///
/// # Errors
/// Storage failure.
pub fn enqueue(
    tx: &mut Tx<'_>,
    game_id: &str,
    version: i32,
    after: &Game,
    news: &Announcements<'_>,
    digest_interval: Duration,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    if news.is_empty() {
        return Ok(());
    }
    let recipients = tx.mail_recipients(&news.accounts())?;
    if recipients.is_empty() {
        return Ok(());
    }
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
        let Some(r) = recipients.iter().find(|r| r.account_id == ask.account) else {
            continue;
        };
        if r.digest {
            if !tx.has_pending(ask.account, DIGEST)?
                && !rows
                    .iter()
                    .any(|d: &DeliveryRow| d.account_id == ask.account && d.kind == DIGEST)
            {
                let due = now + TimeDelta::from_std(digest_interval).unwrap_or(TimeDelta::MAX);
                rows.push(mail_row(ask.account, "", 0, DIGEST, Map::new(), due, now));
            }
            continue;
        }
        let deadline = after
            .deadlines
            .iter()
            .filter(|d| d.seat == ask.seat)
            .map(|d| d.at)
            .min();
        let mut payload = common(ask.seat);
        payload.insert("actions".into(), ask.actions.clone().into());
        if let Some(at) = deadline {
            payload.insert("deadline_at".into(), rfc3339(at).into());
        }
        for kind in [YOUR_TURN, DEADLINE_SOON] {
            tx.drop_pending(
                game_id,
                ask.account,
                kind,
                CHANNEL_MAIL,
                "superseded by a newer turn",
                now,
            )?;
        }
        if r.your_turn {
            rows.push(mail_row(
                ask.account,
                game_id,
                version,
                YOUR_TURN,
                payload.clone(),
                now,
                now,
            ));
        }
        if let (Some(hours), Some(at)) = (r.deadline_hours, deadline) {
            let due = (at - TimeDelta::hours(i64::from(hours)))
                .naive_utc()
                .max(now);
            rows.push(mail_row(
                ask.account,
                game_id,
                version,
                DEADLINE_SOON,
                payload,
                due,
                now,
            ));
        }
    }
    for (seat, account) in &news.finished {
        let Some(r) = recipients.iter().find(|r| r.account_id == *account) else {
            continue;
        };
        if !r.game_finished {
            continue;
        }
        let mut payload = common(*seat);
        let winners = after
            .winners
            .iter()
            .filter_map(|w| after.seats.get(usize::from(*w)));
        let accounts: Vec<&str> = winners.clone().filter_map(|s| s.account()).collect();
        let bots: Vec<&str> = winners.filter_map(rules::Seat::name).collect();
        payload.insert("winner_accounts".into(), accounts.into());
        payload.insert("winner_bots".into(), bots.into());
        rows.push(mail_row(
            account,
            game_id,
            version,
            GAME_FINISHED,
            payload,
            now,
            now,
        ));
    }
    tx.insert_deliveries(&rows)
}

fn text<'a>(payload: &'a Value, key: &str) -> Option<&'a str> {
    payload.get(key).and_then(Value::as_str)
}

fn game_title(payload: &Value) -> String {
    let ruleset = text(payload, "ruleset").unwrap_or("game");
    match text(payload, "game_name") {
        // Names from before line breaks were refused must not start lines of their own.
        Some(name) => format!("\"{}\" ({ruleset})", rules::text::printable(name)),
        None => format!("a game of {ruleset}"),
    }
}

fn footer(public_url: &str) -> String {
    format!(
        "\n-- \nYou get this mail because you chose it in your Stammtisch reminder settings \
         ({public_url}/). To stop all mails, remove your address there.\n"
    )
}

/// The mail of a due outbox row, or `None` when it should be dropped: the account has no
/// verified address or no longer wants this kind, or (a digest) no game awaits it. The
/// worker has already dropped turn and deadline reminders whose move is no longer asked.
///
/// # Errors
/// Storage failure.
pub fn render(
    tx: &mut Tx<'_>,
    d: &DeliveryRow,
    public_url: &str,
) -> Result<Option<Outgoing>, StoreError> {
    let Some(settings) = tx.mail_settings(&d.account_id)? else {
        return Ok(None);
    };
    let Some(to) = settings.address.clone() else {
        return Ok(None);
    };
    let wanted = match d.kind.as_str() {
        YOUR_TURN => settings.your_turn && !settings.digest,
        DEADLINE_SOON => settings.deadline_hours.is_some() && !settings.digest,
        GAME_FINISHED => settings.game_finished,
        DIGEST => settings.digest,
        _ => false,
    };
    if !wanted {
        return Ok(None);
    }
    let name = tx
        .account_names(&[d.account_id.as_str()])?
        .into_iter()
        .next()
        .map_or_else(String::new, |(_, n)| n);
    let p = &d.payload.0;
    let link = format!("{public_url}/#/games/{}", d.game_id);
    let title = game_title(p);
    let actions = announced_actions(p)
        .map(|a| a.join(" or "))
        .unwrap_or_default();
    let deadline = text(p, "deadline_at")
        .map(|at| format!("\nMove before {at}; after that the server moves for you.\n"));
    let (subject, body) = match d.kind.as_str() {
        YOUR_TURN => (
            format!("Your turn in {title}"),
            format!(
                "Hello {name},\n\nit is your turn in {title}: {actions}.\n{}\nOpen the game: \
                 {link}\n",
                deadline.unwrap_or_default()
            ),
        ),
        DEADLINE_SOON => (
            format!("Your move deadline in {title} is near"),
            format!(
                "Hello {name},\n\nyou have not moved yet in {title} ({actions}).\n{}\nOpen the \
                 game: {link}\n",
                deadline.unwrap_or_default()
            ),
        ),
        GAME_FINISHED => {
            let winners = winner_names(tx, p)?;
            (
                format!("{title} has ended"),
                format!(
                    "Hello {name},\n\n{title} has ended. Won by: {winners}.\n\nSee the result: \
                     {link}\n"
                ),
            )
        }
        DIGEST => {
            let games = tx.list_games(&ListQuery {
                account: &d.account_id,
                mine: true,
                awaiting: true,
                status: None,
                ruleset: None,
                before_id: None,
                min_free_seats: None,
                limit: 50,
            })?;
            if games.is_empty() {
                return Ok(None);
            }
            let mut lines = String::new();
            for g in &games {
                let seat = g
                    .seats
                    .iter()
                    .find(|s| s.account_id.as_deref() == Some(&d.account_id));
                let title = match &g.game.name {
                    Some(n) => format!("\"{}\" ({})", rules::text::printable(n), g.game.ruleset),
                    None => format!("a game of {}", g.game.ruleset),
                };
                let action = seat
                    .and_then(|s| s.action.clone())
                    .unwrap_or_default()
                    .replace(',', " or ");
                let until = seat
                    .and_then(|s| s.deadline_at)
                    .map_or_else(String::new, |at| {
                        format!(", before {}", rfc3339(at.and_utc()))
                    });
                lines.push_str(&format!(
                    "- {title}: {action}{until}\n  {public_url}/#/games/{}\n",
                    g.game.id
                ));
            }
            (
                format!("Games awaiting your move: {}", games.len()),
                format!("Hello {name},\n\nthese games wait for your move:\n\n{lines}"),
            )
        }
        _ => return Ok(None),
    };
    Ok(Some(Outgoing {
        to,
        subject,
        body: body + &footer(public_url),
    }))
}

/// The winners of a finished game by their current names (accounts) or bot names.
pub(crate) fn winner_names(tx: &mut Tx<'_>, payload: &Value) -> Result<String, StoreError> {
    let list = |key: &str| -> Vec<String> {
        payload
            .get(key)
            .and_then(Value::as_array)
            .map(|w| {
                w.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let accounts = list("winner_accounts");
    let ids: Vec<&str> = accounts.iter().map(String::as_str).collect();
    let names = tx.account_names(&ids)?;
    let mut shown: Vec<String> = ids
        .iter()
        .map(|id| {
            names
                .iter()
                .find(|(i, _)| i == id)
                .map_or_else(|| crate::store::DELETED_NAME.to_owned(), |(_, n)| n.clone())
        })
        .collect();
    shown.extend(list("winner_bots"));
    Ok(shown.join(", "))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `SMTP_URL` is read as lettre's `from_url` reads it: the scheme and `tls` choose the
    /// encryption and the default port, the user and password are percent-decoded, the
    /// path names the `EHLO`, and an address in brackets is an IPv6 address, not a name.
    #[test]
    fn smtp_urls_are_read_as_lettre_reads_them() {
        let s = SmtpServer::parse("smtps://mailer:p%40ss@mail.example.org").unwrap();
        assert_eq!(s.host, url::Host::Domain("mail.example.org".to_owned()));
        assert!(matches!(s.tls, Tls::Wrapper(_)));
        assert_eq!(s.port, 465);
        assert_eq!(
            s.credentials,
            Some(Credentials::new("mailer".into(), "p@ss".into()))
        );
        assert_eq!(s.hello, None);
        let s = SmtpServer::parse("smtp://mail.example.org?tls=required").unwrap();
        assert!(matches!(s.tls, Tls::Required(_)));
        assert_eq!((s.port, s.credentials), (587, None));
        let s = SmtpServer::parse("smtp://mail.example.org:2525?tls=opportunistic").unwrap();
        assert!(matches!(s.tls, Tls::Opportunistic(_)));
        assert_eq!(s.port, 2525);
        let s = SmtpServer::parse("smtp://[::1]:2525/relay.example.org").unwrap();
        assert_eq!(
            s.host,
            url::Host::<String>::Ipv6(std::net::Ipv6Addr::LOCALHOST)
        );
        assert!(matches!(s.tls, Tls::None));
        assert_eq!(s.port, 2525);
        assert_eq!(s.hello, Some(ClientId::Domain("relay.example.org".into())));
        // What lettre refuses is refused.
        assert!(SmtpServer::parse("http://mail.example.org").is_err());
        assert!(SmtpServer::parse("smtp://mail.example.org?tls=sometimes").is_err());
    }
}
