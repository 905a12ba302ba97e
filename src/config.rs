//! Typed configuration from the environment, with documented defaults. This is the one
//! place that reads the environment: a value that is set but cannot be parsed refuses the
//! start with a message naming the variable, instead of falling back to a default.

use std::str::FromStr;
use std::time::Duration;

use crate::store::SqliteSynchronous;
use crate::webhooks::targets::Targets;

/// Which browser origins may call the API from another origin (CORS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorsOrigins {
    /// No CORS headers at all (the default): only same-origin pages and non-browser
    /// clients can use the API.
    None,
    /// `*`: any origin, without credentials (bearer tokens are sent explicitly by the page,
    /// never as cookies, so no credentialed CORS is needed).
    Any,
    /// Exactly these origins (`scheme://host[:port]`, compared byte for byte).
    List(Vec<String>),
}

impl FromStr for CorsOrigins {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, String> {
        let items: Vec<&str> = raw
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if items.is_empty() {
            return Ok(Self::None);
        }
        if items == ["*"] {
            return Ok(Self::Any);
        }
        for item in &items {
            let valid = (item.starts_with("http://") || item.starts_with("https://"))
                && !item.ends_with('/')
                && !item.contains(['*', ' ']);
            if !valid {
                return Err(format!(
                    "{item:?} is not an origin like https://play.example.org (or use * alone)"
                ));
            }
        }
        Ok(Self::List(items.into_iter().map(str::to_owned).collect()))
    }
}

/// Server configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// `DATABASE_URL`: `sqlite://PATH`, a plain SQLite path, or `postgres://…`.
    /// Default: the SQLite file `stammtisch.db` in the working directory.
    pub database_url: String,
    /// `DATABASE_READ_URL`: a PostgreSQL streaming replica of `DATABASE_URL` (a hot
    /// standby) that lists, the analysts' feed, leaderboards and profiles read from; a
    /// person's reads go to the primary until the replica has replayed their last write.
    /// Unset by default (every read on `DATABASE_URL`).
    pub database_read_url: Option<String>,
    /// `BIND_ADDR`, default `127.0.0.1:8080`. Port 0 picks a free port.
    pub bind_addr: String,
    /// `JWT_SECRET`; default: generated on first start and kept in the database.
    pub jwt_secret: Option<String>,
    /// `TOKEN_TTL_SECONDS`, default 86400 (one day).
    pub token_ttl: Duration,
    /// `STREAM_POLL_MS`, default 2000: how often a game's shared stream reader re-reads the
    /// events table when no wake-up hint arrives.
    pub stream_poll: Duration,
    /// `STREAM_KEEPALIVE_MS`, default 15000: silence after which a stream sends a comment.
    pub stream_keep_alive: Duration,
    /// `STREAM_TICKET_SECONDS`, default 30, at most 60: how long a stream ticket is valid.
    pub stream_ticket_ttl: Duration,
    /// `STREAM_REVOCATION_CHECK_MS`, default 1000: how often each replica reads the token
    /// versions of the accounts with open streams there (one query) and ends the streams
    /// whose token was revoked (logout everywhere, a password change, a deletion).
    pub stream_revocation_check: Duration,
    /// `CORS_ORIGINS`: comma-separated exact origins allowed to call the API from a
    /// browser page on another origin, or `*`; empty by default (no CORS headers).
    pub cors_origins: CorsOrigins,
    /// `DATABASE_POOL_TIMEOUT_MS`, default 2000: how long a request waits for a database
    /// connection before it is answered `503 database_unavailable` (during an outage
    /// requests fail after this wait instead of hanging).
    pub database_pool_timeout: Duration,
    /// `WEBHOOK_BACKOFF_MS`, default 1000: the wait after a first failed webhook delivery;
    /// it doubles with each further failure, up to 10 minutes.
    pub webhook_backoff: Duration,
    /// `WEBHOOK_TIMEOUT_MS`, default 10000, at least 100: the limit of one webhook POST.
    pub webhook_timeout: Duration,
    /// `WEBHOOK_ALLOW_LOOPBACK`, default `false`: `true` lets webhooks and push endpoints
    /// reach loopback addresses (127.0.0.0/8, ::1; a push endpoint there may be plain
    /// `http`) for development and tests. Private, link-local, metadata and other internal
    /// addresses stay forbidden either way.
    pub webhook_targets: Targets,
    /// What the delivery worker sends at once (`WEBHOOK_CONCURRENCY` 32, `MAIL_CONCURRENCY`
    /// 4, `PUSH_CONCURRENCY` 8, `WEBHOOK_PER_ACCOUNT` 4, `WEBHOOK_PER_TARGET` 2, also per
    /// push endpoint) and when it pauses a failing URL or push endpoint
    /// (`WEBHOOK_BREAKER_FAILURES` 3 in a row, for `WEBHOOK_BREAKER_PAUSE_MS` 30000,
    /// doubling); `0` switches a per-account or per-target limit or the breaker off.
    pub delivery_limits: crate::outbox::DeliveryLimits,
    /// Rate limits (`0` switches one off): `LIMIT_GUESTS_PER_HOUR` (per client address,
    /// default 30), `LIMIT_GAMES_PER_HOUR` (60), `LIMIT_OPEN_LOBBIES` (10),
    /// `LIMIT_COMMANDS_PER_MINUTE` (600), `LIMIT_STREAMS` (20 open at once),
    /// `LIMIT_FAILED_LOGINS` (5 per name and client address in 5 minutes),
    /// `LIMIT_FAILED_LOGINS_PER_ADDRESS` (20 per client address in 5 minutes),
    /// `LIMIT_LOGINS_PER_MINUTE` (30 password checks per client address),
    /// `LIMIT_ACCOUNTS_PER_HOUR` (10 registrations per client address),
    /// `LIMIT_MAILS_PER_HOUR` (5 verification mails per account and per recipient). Per
    /// account unless said otherwise.
    pub limits: crate::limits::LimitConfig,
    /// `STAND_IN_STRATEGY`, default `heuristic`: the bot that plays for a person who
    /// resigned and moves for a seat whose deadline passed (`random`, `heuristic`,
    /// `expert`).
    pub stand_in: rules::BotStrategy,
    /// `STATE_CACHE_MB`, default 256: the most the cache of rebuilt games holds, by an
    /// estimate of its states' bytes (`0` switches it off: every load replays the stream).
    pub state_cache_bytes: u64,
    /// `REMATCH_WINDOW_SECONDS`, default 86400 (a day): how long a rematch keeps the
    /// seats of the finished game's people.
    pub rematch_window: Duration,
    /// Where the client address of per-address limits comes from:
    /// `TRUST_FORWARDED_FOR` (default `false`: the peer), `FORWARDED_HEADER`
    /// (`x-forwarded-for`, the default, or `forwarded`) and `TRUSTED_PROXY_HOPS` (default
    /// 1: the right-most entry, which the proxy itself appended). See `crate::address`.
    pub client_address: crate::address::ClientAddress,
    /// `PASSWORD_HASH_THREADS`, default the number of cores: password hashes (Argon2id,
    /// ~19 MiB each) that run at once.
    pub password_hash_threads: usize,
    /// `PASSWORD_HASH_WAIT_MS`, default 2000: how long a login or registration waits for a
    /// hashing slot before it is answered `503 server_busy` with `Retry-After` (at most
    /// `auth::WAITERS_PER_THREAD` requests per hashing thread wait; more are answered at
    /// once).
    pub password_hash_wait: Duration,
    /// `BODY_TIMEOUT_MS`, default 10000: a request body must arrive within this time.
    pub body_timeout: Duration,
    /// `SQLITE_SYNCHRONOUS`: `full` (default: an acknowledged move survives power loss) or
    /// `normal` (faster; in WAL mode the last commits may be lost on power loss, never
    /// corrupted).
    pub sqlite_synchronous: SqliteSynchronous,
    /// `PUBLIC_URL`: the address people reach the server (and its web client) at, for
    /// links in mails, e.g. `https://play.example.org`. Default: `http://` and the
    /// address the server listens on.
    pub public_url: Option<String>,
    /// Web Push: `VAPID_PRIVATE_KEY`, the server's VAPID private key (base64url of its 32
    /// bytes, as `web-push generate-vapid-keys` prints it); default: generated on first
    /// start and kept in the database, like the JWT secret.
    pub vapid_private_key: Option<String>,
    /// `VAPID_SUBJECT`: the contact push services see in every push (`mailto:` or
    /// `https://`); default: `PUBLIC_URL` when it is `https`, else
    /// `mailto:noreply@localhost`.
    pub vapid_subject: String,
    /// `PUSH_COALESCE_SECONDS`, default 30: after a "your turn" push to a browser, later
    /// ones wait this long and come as one ("3 games wait for you"); `0`: only those still
    /// unsent join.
    pub push_window: Duration,
    /// E-mail reminders, on when `SMTP_URL` is set (`smtp://host:port`, `smtps://host`,
    /// `smtp://host?tls=required`, credentials as `user:password@`); the sender is
    /// `MAIL_FROM` (default `Stammtisch <noreply@localhost>`), the digest comes
    /// `MAIL_DIGEST_SECONDS` (default 86400) after the first game it lists, and one SMTP
    /// conversation may take `WEBHOOK_TIMEOUT_MS`.
    pub mail: Option<crate::mail::MailConfig>,
    /// `COMMAND_BATCH_MAX`, default 32: the group commit's largest batch — commands that
    /// arrive while a batch is written are decided and appended together, in one
    /// transaction (`src/group.rs`). `0` gives every command a transaction of its own.
    pub command_batch_max: usize,
    /// `COMMAND_BATCH_LANES`, default 1: group-commit queues per replica whose batches
    /// run at the same time (a game's commands always take the same one). `0` gives every
    /// command a transaction of its own.
    pub command_batch_lanes: usize,
    /// `COMMAND_BATCH_LINGER_US`, default 1000 (at most 100000): how long a new
    /// group-commit batch waits at most for as many commands as the last batch held and
    /// for those its replica's handlers already hold (`src/group.rs`); a lone command never
    /// waits. `0`: never.
    pub command_batch_linger: Duration,
    /// `STAMMTISCH_TEST_CLOCK`, default `false`: `true` is for the HTTP tests only. The
    /// server's clock becomes the system time plus an offset that `POST /test/clock` moves
    /// forward (`crate::clock`), so that anyone who can reach the server can move every
    /// deadline, expiry and token lifetime. Never set it on a server people use.
    pub test_clock: bool,
    /// `STAMMTISCH_VACATION_DAYS`, default 14 (at most 366): the vacation days of every
    /// registered account per calendar year (UTC), spent in whole hours when a
    /// correspondence clock would run out, or taken explicitly (`PUT /v1/account/vacation`).
    /// `0`: no vacation.
    pub vacation_days: u32,
}

/// The shortest `JWT_SECRET` accepted, in bytes.
pub const MIN_JWT_SECRET_BYTES: usize = 32;

/// A variable that is set but malformed.
#[derive(Debug, thiserror::Error)]
#[error("environment variable {name}={value:?} is invalid: {reason}")]
pub struct ConfigError {
    /// The variable's name, e.g. `TOKEN_TTL_SECONDS`.
    pub name: &'static str,
    /// Its value.
    pub value: String,
    /// Why it was refused.
    pub reason: String,
}

/// Reads `name`: `None` when unset or empty.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Parses `name` when set, else `default`.
fn parsed<T>(name: &'static str, default: T) -> Result<T, ConfigError>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    match var(name) {
        None => Ok(default),
        Some(value) => value.trim().parse().map_err(|e: T::Err| ConfigError {
            name,
            reason: e.to_string(),
            value,
        }),
    }
}

/// `TRUST_FORWARDED_FOR`, `FORWARDED_HEADER`, `TRUSTED_PROXY_HOPS`.
fn client_address() -> Result<crate::address::ClientAddress, ConfigError> {
    use crate::address::{ClientAddress, ProxyHeader};
    let header: ProxyHeader = parsed("FORWARDED_HEADER", ProxyHeader::XForwardedFor)?;
    let hops: usize = parsed("TRUSTED_PROXY_HOPS", 1)?;
    if hops == 0 {
        return Err(ConfigError {
            name: "TRUSTED_PROXY_HOPS",
            value: hops.to_string(),
            reason: "must be at least 1".into(),
        });
    }
    Ok(ClientAddress {
        header: parsed("TRUST_FORWARDED_FOR", false)?.then_some(header),
        hops,
    })
}

/// `COMMAND_BATCH_LINGER_US`: 0 to 100,000 µs.
fn linger() -> Result<Duration, ConfigError> {
    const NAME: &str = "COMMAND_BATCH_LINGER_US";
    let us: u64 = parsed(NAME, 1000)?;
    if us > 100_000 {
        return Err(ConfigError {
            name: NAME,
            value: us.to_string(),
            reason: "must be at most 100000 (0.1 s)".into(),
        });
    }
    Ok(Duration::from_micros(us))
}

/// A positive whole number of `unit`s.
fn duration(
    name: &'static str,
    default: u64,
    unit: fn(u64) -> Duration,
) -> Result<Duration, ConfigError> {
    let n: u64 = parsed(name, default)?;
    if n == 0 {
        return Err(ConfigError {
            name,
            value: "0".into(),
            reason: "must be at least 1".into(),
        });
    }
    Ok(unit(n))
}

fn public_url() -> Result<Option<String>, ConfigError> {
    let Some(value) = var("PUBLIC_URL") else {
        return Ok(None);
    };
    let trimmed = value.trim().trim_end_matches('/');
    match url::Url::parse(trimmed) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
            Ok(Some(trimmed.to_owned()))
        }
        _ => Err(ConfigError {
            name: "PUBLIC_URL",
            value,
            reason: "use an http:// or https:// URL such as https://play.example.org".into(),
        }),
    }
}

fn mail(
    bind_addr: &str,
    public_url: Option<&str>,
    timeout: Duration,
) -> Result<Option<crate::mail::MailConfig>, ConfigError> {
    let Some(smtp_url) = var("SMTP_URL") else {
        return Ok(None);
    };
    let scheme_ok = url::Url::parse(smtp_url.trim())
        .is_ok_and(|u| matches!(u.scheme(), "smtp" | "smtps") && u.host().is_some());
    if !scheme_ok {
        return Err(ConfigError {
            name: "SMTP_URL",
            value: "(not shown)".into(),
            reason: "use smtp://host:port, smtps://host or smtp://host?tls=required".into(),
        });
    }
    let from = var("MAIL_FROM").unwrap_or_else(|| "Stammtisch <noreply@localhost>".into());
    if from.parse::<lettre::message::Mailbox>().is_err() {
        return Err(ConfigError {
            name: "MAIL_FROM",
            value: from,
            reason: "use an address such as Stammtisch <noreply@example.org>".into(),
        });
    }
    Ok(Some(crate::mail::MailConfig {
        smtp_url: smtp_url.trim().to_owned(),
        from,
        public_url: public_url.map_or_else(|| format!("http://{bind_addr}"), str::to_owned),
        digest_interval: duration("MAIL_DIGEST_SECONDS", 86_400, Duration::from_secs)?,
        timeout,
        bound: std::sync::Arc::default(),
    }))
}

/// `VAPID_PRIVATE_KEY`, checked.
fn vapid_private_key() -> Result<Option<String>, ConfigError> {
    let Some(key) = var("VAPID_PRIVATE_KEY") else {
        return Ok(None);
    };
    match crate::push::VapidKeys::from_private(&key, crate::push::DEFAULT_SUBJECT) {
        Ok(_) => Ok(Some(key.trim().to_owned())),
        Err(why) => Err(ConfigError {
            name: "VAPID_PRIVATE_KEY",
            value: "(not shown)".into(),
            reason: format!(
                "{why}; use base64url of a P-256 private key's 32 bytes (e.g. from \
                 `npx web-push generate-vapid-keys`), or leave it unset"
            ),
        }),
    }
}

/// `VAPID_SUBJECT`, or what `PUBLIC_URL` suggests.
fn vapid_subject(public_url: Option<&str>) -> Result<String, ConfigError> {
    match var("VAPID_SUBJECT") {
        Some(subject) => {
            let subject = subject.trim().to_owned();
            let valid = subject
                .strip_prefix("mailto:")
                .is_some_and(|a| a.contains('@') && !a.contains(char::is_whitespace))
                || url::Url::parse(&subject).is_ok_and(|u| u.scheme() == "https");
            if valid {
                Ok(subject)
            } else {
                Err(ConfigError {
                    name: "VAPID_SUBJECT",
                    value: subject,
                    reason: "use mailto:someone@example.org or an https:// URL".into(),
                })
            }
        }
        None => Ok(public_url
            .filter(|u| u.starts_with("https://"))
            .map_or_else(|| crate::push::DEFAULT_SUBJECT.to_owned(), str::to_owned)),
    }
}

fn limits() -> Result<crate::limits::LimitConfig, ConfigError> {
    let d = crate::limits::LimitConfig::default();
    Ok(crate::limits::LimitConfig {
        guests_per_hour: parsed("LIMIT_GUESTS_PER_HOUR", d.guests_per_hour)?,
        games_per_hour: parsed("LIMIT_GAMES_PER_HOUR", d.games_per_hour)?,
        open_lobbies: parsed("LIMIT_OPEN_LOBBIES", d.open_lobbies)?,
        commands_per_minute: parsed("LIMIT_COMMANDS_PER_MINUTE", d.commands_per_minute)?,
        streams: parsed("LIMIT_STREAMS", d.streams)?,
        failed_logins: parsed("LIMIT_FAILED_LOGINS", d.failed_logins)?,
        failed_logins_per_address: parsed(
            "LIMIT_FAILED_LOGINS_PER_ADDRESS",
            d.failed_logins_per_address,
        )?,
        logins_per_minute: parsed("LIMIT_LOGINS_PER_MINUTE", d.logins_per_minute)?,
        accounts_per_hour: parsed("LIMIT_ACCOUNTS_PER_HOUR", d.accounts_per_hour)?,
        mails_per_hour: parsed("LIMIT_MAILS_PER_HOUR", d.mails_per_hour)?,
    })
}

fn delivery_limits() -> Result<crate::outbox::DeliveryLimits, ConfigError> {
    let d = crate::outbox::DeliveryLimits::default();
    let at_least_one = |name: &'static str, default: usize| match parsed(name, default)? {
        0 => Err(ConfigError {
            name,
            value: "0".into(),
            reason: "must be at least 1".into(),
        }),
        n => Ok(n),
    };
    Ok(crate::outbox::DeliveryLimits {
        concurrency: at_least_one("WEBHOOK_CONCURRENCY", d.concurrency)?,
        mail_concurrency: at_least_one("MAIL_CONCURRENCY", d.mail_concurrency)?,
        push_concurrency: at_least_one("PUSH_CONCURRENCY", d.push_concurrency)?,
        per_target: parsed("WEBHOOK_PER_TARGET", d.per_target)?,
        per_account: parsed("WEBHOOK_PER_ACCOUNT", d.per_account)?,
        breaker_failures: parsed("WEBHOOK_BREAKER_FAILURES", d.breaker_failures)?,
        breaker_pause: duration("WEBHOOK_BREAKER_PAUSE_MS", 30_000, Duration::from_millis)?,
    })
}

impl Config {
    /// Reads the environment.
    ///
    /// # Errors
    /// A variable that is set but malformed.
    pub fn from_env() -> Result<Self, ConfigError> {
        let bind_addr = var("BIND_ADDR").unwrap_or_else(|| "127.0.0.1:8080".into());
        let public_url = public_url()?;
        let webhook_timeout = match duration("WEBHOOK_TIMEOUT_MS", 10_000, Duration::from_millis)? {
            t if t < Duration::from_millis(100) => {
                return Err(ConfigError {
                    name: "WEBHOOK_TIMEOUT_MS",
                    value: t.as_millis().to_string(),
                    reason: "must be at least 100".into(),
                });
            }
            t => t,
        };
        Ok(Self {
            mail: mail(&bind_addr, public_url.as_deref(), webhook_timeout)?,
            vapid_private_key: vapid_private_key()?,
            vapid_subject: vapid_subject(public_url.as_deref())?,
            push_window: Duration::from_secs(parsed("PUSH_COALESCE_SECONDS", 30)?),
            public_url,
            database_url: var("DATABASE_URL").unwrap_or_else(|| "sqlite://stammtisch.db".into()),
            database_read_url: var("DATABASE_READ_URL"),
            bind_addr,
            jwt_secret: match var("JWT_SECRET") {
                Some(secret) if secret.len() < MIN_JWT_SECRET_BYTES => {
                    return Err(ConfigError {
                        name: "JWT_SECRET",
                        value: "(not shown)".into(),
                        reason: format!(
                            "it has {} bytes; use at least {MIN_JWT_SECRET_BYTES} random bytes \
                             (e.g. `openssl rand -hex 32`)",
                            secret.len()
                        ),
                    });
                }
                secret => secret,
            },
            token_ttl: duration("TOKEN_TTL_SECONDS", 86_400, Duration::from_secs)?,
            stream_poll: duration("STREAM_POLL_MS", 2_000, Duration::from_millis)?,
            stream_keep_alive: duration("STREAM_KEEPALIVE_MS", 15_000, Duration::from_millis)?,
            stream_ticket_ttl: match duration("STREAM_TICKET_SECONDS", 30, Duration::from_secs)? {
                ttl if ttl > Duration::from_secs(60) => {
                    return Err(ConfigError {
                        name: "STREAM_TICKET_SECONDS",
                        value: ttl.as_secs().to_string(),
                        reason: "must be at most 60".into(),
                    });
                }
                ttl => ttl,
            },
            stream_revocation_check: duration(
                "STREAM_REVOCATION_CHECK_MS",
                1_000,
                Duration::from_millis,
            )?,
            cors_origins: parsed("CORS_ORIGINS", CorsOrigins::None)?,
            database_pool_timeout: duration(
                "DATABASE_POOL_TIMEOUT_MS",
                2_000,
                Duration::from_millis,
            )?,
            webhook_backoff: duration("WEBHOOK_BACKOFF_MS", 1_000, Duration::from_millis)?,
            webhook_timeout,
            webhook_targets: Targets {
                allow_loopback: parsed("WEBHOOK_ALLOW_LOOPBACK", false)?,
            },
            delivery_limits: delivery_limits()?,
            limits: limits()?,
            state_cache_bytes: parsed::<u64>("STATE_CACHE_MB", 256)?.saturating_mul(1024 * 1024),
            stand_in: match var("STAND_IN_STRATEGY") {
                None => rules::BotStrategy::Heuristic,
                Some(value) => serde_json::from_value(serde_json::Value::String(value.clone()))
                    .map_err(|_| ConfigError {
                        name: "STAND_IN_STRATEGY",
                        value,
                        reason: "use random, heuristic or expert".into(),
                    })?,
            },
            rematch_window: duration("REMATCH_WINDOW_SECONDS", 86_400, Duration::from_secs)?,
            client_address: client_address()?,
            password_hash_threads: parsed(
                "PASSWORD_HASH_THREADS",
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            )?
            .max(1),
            password_hash_wait: duration("PASSWORD_HASH_WAIT_MS", 2_000, Duration::from_millis)?,
            body_timeout: duration("BODY_TIMEOUT_MS", 10_000, Duration::from_millis)?,
            sqlite_synchronous: parsed("SQLITE_SYNCHRONOUS", SqliteSynchronous::Full)?,
            command_batch_max: parsed("COMMAND_BATCH_MAX", 32)?,
            command_batch_lanes: parsed("COMMAND_BATCH_LANES", 1)?,
            command_batch_linger: linger()?,
            test_clock: parsed("STAMMTISCH_TEST_CLOCK", false)?,
            vacation_days: match parsed("STAMMTISCH_VACATION_DAYS", 14_u32)? {
                days if days > 366 => {
                    return Err(ConfigError {
                        name: "STAMMTISCH_VACATION_DAYS",
                        value: days.to_string(),
                        reason: "must be at most 366".into(),
                    });
                }
                days => days,
            },
        })
    }

    /// The outbox worker's settings: the webhook backoff, timeout and address policy, the
    /// delivery limits and the mail server; it looks at the outbox every 200 ms and reads
    /// the system clock. Pushes need the VAPID keys, which the caller adds (they may come
    /// from the database).
    #[must_use]
    pub fn outbox_worker(&self) -> crate::outbox::worker::WorkerConfig {
        crate::outbox::worker::WorkerConfig {
            backoff: self.webhook_backoff,
            timeout: self.webhook_timeout,
            targets: self.webhook_targets,
            poll: Duration::from_millis(200),
            limits: self.delivery_limits,
            mail: self.mail.clone(),
            vapid: None,
            clock: crate::clock::Clock::system(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CorsOrigins;

    #[test]
    fn cors_origins_parse_lists_wildcard_and_refuse_paths() {
        assert_eq!("".parse(), Ok(CorsOrigins::None));
        assert_eq!(" * ".parse(), Ok(CorsOrigins::Any));
        assert_eq!(
            "https://a.example, http://127.0.0.1:3000".parse(),
            Ok(CorsOrigins::List(vec![
                "https://a.example".into(),
                "http://127.0.0.1:3000".into()
            ]))
        );
        assert!("https://a.example/".parse::<CorsOrigins>().is_err());
        assert!("a.example".parse::<CorsOrigins>().is_err());
        assert!("*, https://a.example".parse::<CorsOrigins>().is_err());
    }
}
