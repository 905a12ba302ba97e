//! The event store and the read models beside it, on PostgreSQL or SQLite.
//!
//! Owns every SQL statement of the server. Backend differences stay in this module: each
//! operation is written once in [`ops`] and compiled for both connection types; the
//! service sees only [`Tx`] and [`Store`].

mod counters;
pub mod json;
mod ops;
mod pads;
pub mod pads_schema;
pub mod schema;
mod webhooks;

use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool, PooledConnection};
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, RunQueryDsl};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

pub use ops::{
    AccountRow, GameIndex, GameRow, GameSummaryRow, IdempotentRow, ListQuery, NewEvent, SeatRow,
    StoredEvent, Tx,
};
pub use pads::{NewPadEvent, PadRow, PadTx, StoredPadEvent};
pub use webhooks::{
    DELIVERED, DROPPED, DeliveryRow, FAILED, PENDING, SeatAsk, WebhookRow, WebhookTx,
};

const PG_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

/// What can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another write changed the game first (expected version or unique `(game_id, seq)`).
    #[error("the game changed concurrently")]
    Conflict,
    /// A unique key exists already (e.g. an account name).
    #[error("a record with this key exists")]
    Duplicate,
    /// A query failed.
    #[error("database query failed")]
    Query(#[from] diesel::result::Error),
    /// No connection could be had from the pool.
    #[error("no database connection")]
    Pool(#[from] r2d2::Error),
    /// The database refused or could not be reached.
    #[error("cannot connect to the database")]
    Connect(#[from] diesel::ConnectionError),
    /// Migrations failed.
    #[error("migrations failed: {0}")]
    Migration(String),
    /// The URL names no backend we know.
    #[error("unsupported DATABASE_URL scheme (use sqlite://PATH or postgres://…)")]
    UnsupportedUrl,
}

/// Which database the server talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// PostgreSQL (production).
    Postgres,
    /// SQLite (embedded default).
    Sqlite,
}

#[derive(Clone)]
enum Pools {
    Pg(Pool<ConnectionManager<PgConnection>>),
    Sqlite(Pool<ConnectionManager<SqliteConnection>>),
}

/// A pool of connections to one database.
#[derive(Clone)]
pub struct Store {
    pools: Pools,
    /// Rate-limit counters and leases on SQLite (see [`counters`]).
    memory: std::sync::Arc<counters::MemoryCounters>,
}

/// Sets the pragmas SQLite needs for concurrent use on every new connection.
#[derive(Debug)]
struct SqlitePragmas {
    synchronous: &'static str,
}

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        conn.batch_execute(&format!(
            // busy_timeout first: the connections of a fresh pool open at once, and
            // switching to WAL needs the lock.
            "PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; \
             PRAGMA synchronous = {}; PRAGMA foreign_keys = ON;",
            self.synchronous
        ))
        .map_err(diesel::r2d2::Error::QueryError)
    }
}

/// How to open a store.
#[derive(Debug, Clone, Copy, Default)]
pub struct StoreOptions {
    /// SQLite's `synchronous` pragma (ignored on PostgreSQL).
    pub sqlite_synchronous: crate::config::SqliteSynchronous,
}

impl Store {
    /// Connects to `url` (`postgres://…`, `postgresql://…`, `sqlite://PATH` or a plain path).
    ///
    /// # Errors
    /// An unsupported URL or a database that cannot be reached.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, StoreOptions::default())
    }

    /// Connects to `url` with `options`.
    ///
    /// # Errors
    /// An unsupported URL or a database that cannot be reached.
    pub fn connect_with(url: &str, options: StoreOptions) -> Result<Self, StoreError> {
        let timeout = Duration::from_secs(10);
        let pools = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let manager = ConnectionManager::<PgConnection>::new(url);
            // Fail fast with the real error instead of r2d2's generic timeout.
            PgConnection::establish(url)?;
            Pools::Pg(
                Pool::builder()
                    .max_size(16)
                    .connection_timeout(timeout)
                    .build(manager)?,
            )
        } else if url.contains("://") && !url.starts_with("sqlite://") {
            return Err(StoreError::UnsupportedUrl);
        } else {
            let path = url.strip_prefix("sqlite://").unwrap_or(url);
            let manager = ConnectionManager::<SqliteConnection>::new(path);
            Pools::Sqlite(
                Pool::builder()
                    .max_size(8)
                    .connection_timeout(timeout)
                    .connection_customizer(Box::new(SqlitePragmas {
                        synchronous: match options.sqlite_synchronous {
                            crate::config::SqliteSynchronous::Full => "FULL",
                            crate::config::SqliteSynchronous::Normal => "NORMAL",
                        },
                    }))
                    .build(manager)?,
            )
        };
        Ok(Self {
            pools,
            memory: std::sync::Arc::default(),
        })
    }

    /// Which backend this store uses.
    #[must_use]
    pub fn backend(&self) -> Backend {
        match self.pools {
            Pools::Pg(_) => Backend::Postgres,
            Pools::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// Runs pending migrations.
    ///
    /// # Errors
    /// A migration that fails.
    pub fn migrate(&self) -> Result<(), StoreError> {
        let result = match &self.pools {
            Pools::Pg(p) => p.get()?.run_pending_migrations(PG_MIGRATIONS).map(|_| ()),
            Pools::Sqlite(p) => p
                .get()?
                .run_pending_migrations(SQLITE_MIGRATIONS)
                .map(|_| ()),
        };
        result.map_err(|e| StoreError::Migration(e.to_string()))
    }

    /// Reverts every migration, then applies them all again: proves the `down.sql` files.
    ///
    /// # Errors
    /// A migration that fails either way.
    pub fn redo_all_migrations(&self) -> Result<(), StoreError> {
        let err =
            |e: Box<dyn std::error::Error + Send + Sync>| StoreError::Migration(e.to_string());
        match &self.pools {
            Pools::Pg(p) => {
                let mut c = p.get()?;
                c.revert_all_migrations(PG_MIGRATIONS).map_err(err)?;
                c.run_pending_migrations(PG_MIGRATIONS).map_err(err)?;
            }
            Pools::Sqlite(p) => {
                let mut c = p.get()?;
                c.revert_all_migrations(SQLITE_MIGRATIONS).map_err(err)?;
                c.run_pending_migrations(SQLITE_MIGRATIONS).map_err(err)?;
            }
        }
        Ok(())
    }

    /// Runs `f` in one write transaction (SQLite: `BEGIN IMMEDIATE`, so writers queue for the
    /// lock instead of failing on upgrade). Rolls back when `f` fails.
    ///
    /// # Errors
    /// Whatever `f` returns, or a store error converted into `E`.
    pub fn write<T, E>(&self, f: impl FnOnce(&mut dyn Tx) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError> + From<diesel::result::Error>,
    {
        match &self.pools {
            Pools::Pg(p) => {
                let mut conn = p.get().map_err(StoreError::from)?;
                (*conn).transaction(|c| f(c))
            }
            Pools::Sqlite(p) => {
                let mut conn = p.get().map_err(StoreError::from)?;
                (*conn).immediate_transaction(|c| f(c))
            }
        }
    }

    /// Runs `f` on a connection, without a transaction of its own (single reads).
    ///
    /// # Errors
    /// Whatever `f` returns, or a pool error converted into `E`.
    pub fn read<T, E>(&self, f: impl FnOnce(&mut dyn Tx) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        match &self.pools {
            Pools::Pg(p) => {
                let mut conn: PooledConnection<_> = p.get().map_err(StoreError::from)?;
                f(&mut *conn)
            }
            Pools::Sqlite(p) => {
                let mut conn: PooledConnection<_> = p.get().map_err(StoreError::from)?;
                f(&mut *conn)
            }
        }
    }

    /// SQLite's `synchronous` setting as a connection reports it (`full`, `normal`, …);
    /// `None` on PostgreSQL.
    ///
    /// # Errors
    /// No connection, or the pragma cannot be read.
    pub fn sqlite_synchronous(&self) -> Result<Option<&'static str>, StoreError> {
        #[derive(diesel::QueryableByName)]
        struct Sync {
            #[diesel(sql_type = diesel::sql_types::Integer)]
            synchronous: i32,
        }
        match &self.pools {
            Pools::Pg(_) => Ok(None),
            Pools::Sqlite(p) => {
                let row: Sync =
                    diesel::sql_query("PRAGMA synchronous").get_result(&mut *p.get()?)?;
                Ok(Some(match row.synchronous {
                    0 => "off",
                    1 => "normal",
                    2 => "full",
                    _ => "extra",
                }))
            }
        }
    }

    /// Whether the database answers a trivial query.
    #[must_use]
    pub fn ping(&self) -> bool {
        let result: Result<(), StoreError> = match &self.pools {
            Pools::Pg(p) => p.get().map_err(Into::into).and_then(|mut c| {
                diesel::sql_query("SELECT 1")
                    .execute(&mut c)
                    .map(|_| ())
                    .map_err(Into::into)
            }),
            Pools::Sqlite(p) => p.get().map_err(Into::into).and_then(|mut c| {
                diesel::sql_query("SELECT 1")
                    .execute(&mut c)
                    .map(|_| ())
                    .map_err(Into::into)
            }),
        };
        result.is_ok()
    }
}
