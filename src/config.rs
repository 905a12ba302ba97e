//! Typed configuration from the environment, with documented defaults.

use std::time::Duration;

/// Server configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// `DATABASE_URL`: `sqlite://PATH`, a plain SQLite path, or `postgres://…`.
    /// Default: the SQLite file `stammtisch.db` in the working directory.
    pub database_url: String,
    /// `BIND_ADDR`, default `127.0.0.1:8080`. Port 0 picks a free port.
    pub bind_addr: String,
    /// `JWT_SECRET`; default: generated on first start and kept in the database.
    pub jwt_secret: Option<String>,
    /// `TOKEN_TTL_SECONDS`, default 86400 (one day).
    pub token_ttl: Duration,
    /// `STREAM_POLL_MS`, default 2000: how often a live stream re-reads the events table
    /// when no wake-up hint arrives.
    pub stream_poll: Duration,
    /// `STREAM_KEEPALIVE_MS`, default 15000: silence after which a stream sends a comment.
    pub stream_keep_alive: Duration,
}

impl Config {
    /// Reads the environment.
    #[must_use]
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self {
            database_url: var("DATABASE_URL").unwrap_or_else(|| "sqlite://stammtisch.db".into()),
            bind_addr: var("BIND_ADDR").unwrap_or_else(|| "127.0.0.1:8080".into()),
            jwt_secret: var("JWT_SECRET"),
            token_ttl: Duration::from_secs(
                var("TOKEN_TTL_SECONDS")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(86_400),
            ),
            stream_poll: Duration::from_millis(
                var("STREAM_POLL_MS")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(2_000),
            ),
            stream_keep_alive: Duration::from_millis(
                var("STREAM_KEEPALIVE_MS")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(15_000),
            ),
        }
    }
}
