//! The event store and the read models beside it, on PostgreSQL or SQLite.
//!
//! Owns every SQL statement of the server. Backend differences stay in this module: each
//! operation is a method of [`Tx`], written once and compiled for both connection types
//! (see [`tx`]); the services see only [`Tx`] and [`Store`].

mod accounts;
mod analytics;
mod appends;
mod batch;
mod commands;
mod counters;
mod games;
pub mod json;
mod outbox;
mod pads;
mod platform;
pub mod prepared;
mod push;
pub mod replica;
pub mod schema;
mod tournaments;
pub mod tx;
mod vacation;
pub mod wakeups;

use std::str::FromStr;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::connection::{Instrumentation, InstrumentationEvent};
use diesel::pg::PgConnection;
use diesel::r2d2::{
    ConnectionManager, CustomizeConnection, ManageConnection, Pool, PooledConnection,
    R2D2Connection,
};
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, RunQueryDsl};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::clock::Clock;

pub use accounts::{AccountRow, DELETED_NAME, MailSettingsRow, MailVerificationRow};
pub use analytics::{FeedCursor, FeedLag};
pub use batch::{ReadsAndAppends, Speculative};
pub use commands::{BatchQuery, BatchReads, IdempotentAnswer, IdempotentRow, KeyCounts, PersonRow};
pub use games::{
    Append, GameIndex, GameRow, GameSummaryRow, ListQuery, NewEvent, SeatRow, StoredEvent,
};
pub use outbox::{
    CHANNEL_MAIL, CHANNEL_PUSH, CHANNEL_WEBHOOK, DELIVERED, DROPPED, DeliveryRow, Due, FAILED,
    PENDING, SeatAsk, WebhookRow,
};
pub use pads::{NewPadEvent, PadRow, StoredPadEvent};
pub use platform::{BoardRow, RatingRow, ResultRow, StatsRow};
pub use push::{PushSettingsRow, PushSubscriptionRow};
pub use tournaments::{
    NewTournamentEvent, StoredTournamentEvent, TournamentListFilter, TournamentRow,
    TournamentUpdate,
};
pub use tx::Tx;
pub use vacation::VacationRow;

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
    /// The database could not be reached by a transaction this operation shared (a
    /// group-commit batch): the cause is the one that transaction reported.
    #[error("the database was unavailable to the transaction this shared: {0}")]
    Unavailable(String),
}

/// A transaction's failure: the caller's own error, or the database's (BEGIN, COMMIT,
/// ROLLBACK), which diesel's transaction API hands back through `From`.
enum TxError<E> {
    Inner(E),
    Database(diesel::result::Error),
}

impl<E> From<diesel::result::Error> for TxError<E> {
    fn from(e: diesel::result::Error) -> Self {
        Self::Database(e)
    }
}

impl StoreError {
    /// Whether the database could not be reached or the connection broke: no connection
    /// within the pool wait, a connection that cannot be established, or a query that failed
    /// because its connection is gone ([`connection_lost`]). Such a failure is the outage's,
    /// not the request's (HTTP: `503 database_unavailable`).
    #[must_use]
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Pool(_) | Self::Connect(_) | Self::Unavailable(_) => true,
            Self::Query(e) => connection_lost(e),
            Self::Conflict | Self::Duplicate | Self::Migration(_) | Self::UnsupportedUrl => false,
        }
    }
}

/// Whether a query failed because its connection is gone, judged by the error's kind (never
/// its message): diesel reports a connection that closed (`ClosedConnection`, also for the
/// SQLSTATE classes of connection failures) or a query that could not be sent
/// (`UnableToSendCommand`, e.g. "no connection to the server"), and a transaction manager
/// left broken by such a failure. The pool discards a connection that failed so (the
/// store's r2d2 manager watches every query) instead of handing it to the next request.
#[must_use]
pub fn connection_lost(e: &diesel::result::Error) -> bool {
    use diesel::result::{DatabaseErrorKind, Error};
    match e {
        Error::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        )
        | Error::BrokenTransactionManager => true,
        Error::RollbackErrorOnCommit {
            rollback_error,
            commit_error,
        } => connection_lost(rollback_error) || connection_lost(commit_error),
        _ => false,
    }
}

/// How long a request waits for a connection by default (`DATABASE_POOL_TIMEOUT_MS`).
pub const DEFAULT_POOL_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest `/readyz` waits for a connection.
const PING_TIMEOUT: Duration = Duration::from_millis(800);

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
    Pg(Pool<Manager<PgConnection>>),
    Sqlite(Pool<Manager<SqliteConnection>>),
}

/// Notes on its connection that a query failed because the connection is gone
/// ([`connection_lost`]).
#[derive(Debug, Default)]
struct Watch {
    lost: bool,
}

impl Instrumentation for Watch {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        if let InstrumentationEvent::FinishQuery { error: Some(e), .. } = event
            && connection_lost(e)
        {
            self.lost = true;
        }
    }
}

/// diesel's r2d2 connection manager, which also discards a connection once one of its
/// queries failed for a connection-level reason: every connection carries a [`Watch`], and
/// `has_broken` (asked when a connection comes back to the pool) reads it. So a broken
/// connection is dropped when it fails, not handed to the next request; correctness does
/// not depend on r2d2's test query at checkout.
#[derive(Debug)]
struct Manager<C: 'static> {
    inner: ConnectionManager<C>,
}

impl<C> Manager<C> {
    fn new(url: &str) -> Self {
        Self {
            inner: ConnectionManager::new(url),
        }
    }
}

impl<C> ManageConnection for Manager<C>
where
    C: R2D2Connection + Send + 'static,
{
    type Connection = C;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<C, Self::Error> {
        let mut conn = self.inner.connect()?;
        conn.set_instrumentation(Watch::default());
        Ok(conn)
    }

    fn is_valid(&self, conn: &mut C) -> Result<(), Self::Error> {
        self.inner.is_valid(conn)
    }

    fn has_broken(&self, conn: &mut C) -> bool {
        let lost = conn
            .instrumentation()
            .downcast_ref::<Watch>()
            .is_some_and(|w| w.lost);
        lost || self.inner.has_broken(conn)
    }
}

#[derive(diesel::QueryableByName)]
struct FeedTop {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    restored: bool,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    top: i64,
}

/// The feed orders events by `tx_id = feed_base + transaction id` (migration
/// `000040_feed_xid`). A restore into a new cluster starts transaction ids low again, below
/// the restored events' and games' `tx_id`s: new events would sort before old ones, and the
/// games' compare-and-set (`last_tx <= feed_tx()`) would refuse every append. When a stored
/// key is at or above every id the cluster has handed out, this raises `feed_base` above it
/// (replacing the two functions), so new keys start after the restored ones. Run at start,
/// before the server takes traffic. Returns the new base, if it changed.
fn raise_feed_base(conn: &mut PgConnection) -> Result<Option<i64>, StoreError> {
    conn.transaction(|conn| {
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext('stammtisch feed base'))")
            .execute(conn)?;
        // Every transaction that ever ran here is below the snapshot's xmax; a stored key
        // at or above base + xmax comes from elsewhere.
        let top: FeedTop = diesel::sql_query(
            "SELECT GREATEST((SELECT max(tx_id) FROM events WHERE audience = 'public'), \
             (SELECT max(last_tx) FROM games), 0) AS top, \
             GREATEST((SELECT max(tx_id) FROM events WHERE audience = 'public'), \
             (SELECT max(last_tx) FROM games), 0) >= feed_horizon() \
             - pg_snapshot_xmin(pg_current_snapshot())::text::bigint \
             + pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS restored",
        )
        .get_result(conn)?;
        if !top.restored {
            return Ok(None);
        }
        let base = top.top.saturating_add(1);
        conn.batch_execute(&format!(
            "CREATE OR REPLACE FUNCTION feed_tx() RETURNS BIGINT LANGUAGE sql STABLE \
             PARALLEL SAFE AS $$ SELECT {base}::bigint + pg_current_xact_id()::text::bigint $$; \
             CREATE OR REPLACE FUNCTION feed_horizon() RETURNS BIGINT LANGUAGE sql STABLE \
             PARALLEL SAFE AS $$ SELECT {base}::bigint \
             + pg_snapshot_xmin(pg_current_snapshot())::text::bigint $$;"
        ))?;
        Ok(Some(base))
    })
}

/// A pool of connections to one database.
#[derive(Clone)]
pub struct Store {
    pools: Pools,
    /// PostgreSQL: the connections for key lookups ([`PgKeysSession`]), apart from the
    /// others, whose statements need plans for their actual values (`deadline_at <= $1`).
    keys: Option<Pool<Manager<PgConnection>>>,
    /// Rate-limit counters and leases on SQLite (see [`counters`]).
    memory: std::sync::Arc<counters::MemoryCounters>,
    /// SQLite: this process's writers take turns here before `BEGIN IMMEDIATE`. SQLite's
    /// own wait for a locked database (the busy handler) sleeps in steps that grow to
    /// 100 ms, so an unlucky writer waits that long for a lock that was free much sooner
    /// (docs/scaling.md, "SQLite: writers take turns in the process"); a mutex hands the
    /// turn on as soon as the writer before commits. Other processes on the same file
    /// (`migrate`, `grant-role`) still meet the busy timeout.
    writers: std::sync::Arc<std::sync::Mutex<()>>,
    /// The server's clock: a transaction reads the time from it when it begins.
    clock: Clock,
    /// A PostgreSQL streaming replica for reads that may be a little behind
    /// (`DATABASE_READ_URL`; see [`replica`]).
    replica: Option<replica::Replica>,
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

/// How long a PostgreSQL connection of the pool may sit idle inside a transaction before
/// the server ends it. The server never waits on anything outside the database within a
/// transaction; a transaction left open (a bug, a stuck thread) would hold the analysts'
/// feed back for every reader (docs/architecture.md, "The analysts' feed").
pub const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(15);

/// Sets the session settings of every new PostgreSQL connection.
#[derive(Debug)]
struct PgSession;

impl CustomizeConnection<PgConnection, diesel::r2d2::Error> for PgSession {
    fn on_acquire(&self, conn: &mut PgConnection) -> Result<(), diesel::r2d2::Error> {
        // No JIT: the server's statements are short, and a generic plan's estimate (`LIMIT
        // $3` taken as a tenth of the table) crosses `jit_above_cost` on a large table, so
        // PostgreSQL compiled the analysts' feed page for 130 ms to read 500 rows in 1.5 ms
        // (3×10⁷ events; docs/scaling.md, "A year of data").
        conn.batch_execute(&format!(
            "SET idle_in_transaction_session_timeout = {}; SET jit = off",
            IDLE_IN_TRANSACTION_TIMEOUT.as_millis()
        ))
        .map_err(diesel::r2d2::Error::QueryError)
    }
}

/// The session settings of the connections for statements that find their rows by key
/// (the command path, [`Store::by_keys`] and [`Store::write_by_keys`]): generic plans, and
/// no sequential scans or hash and merge joins. Set once per connection, so a command
/// needs no `SET LOCAL` (nor a transaction to hold one).
#[derive(Debug)]
struct PgKeysSession;

impl CustomizeConnection<PgConnection, diesel::r2d2::Error> for PgKeysSession {
    fn on_acquire(&self, conn: &mut PgConnection) -> Result<(), diesel::r2d2::Error> {
        PgSession.on_acquire(conn)?;
        conn.batch_execute(
            "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; \
             SET enable_hashjoin = off; SET enable_mergejoin = off",
        )
        .map_err(diesel::r2d2::Error::QueryError)
    }
}

/// SQLite's `synchronous` pragma.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SqliteSynchronous {
    /// Sync the WAL at every commit.
    #[default]
    Full,
    /// Sync at checkpoints only.
    Normal,
}

impl FromStr for SqliteSynchronous {
    type Err = &'static str;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "full" => Ok(Self::Full),
            "normal" => Ok(Self::Normal),
            _ => Err("use full or normal"),
        }
    }
}

/// How to open a store.
#[derive(Debug, Clone, Copy)]
pub struct StoreOptions {
    /// SQLite's `synchronous` pragma (ignored on PostgreSQL).
    pub sqlite_synchronous: SqliteSynchronous,
    /// How long a request waits for a connection (`DATABASE_POOL_TIMEOUT_MS`).
    pub pool_timeout: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            sqlite_synchronous: SqliteSynchronous::default(),
            pool_timeout: DEFAULT_POOL_TIMEOUT,
        }
    }
}

impl Store {
    /// Connects to `url` (`postgres://…`, `postgresql://…`, `sqlite://PATH` or a plain path)
    /// with the default options (pool wait [`DEFAULT_POOL_TIMEOUT`]).
    ///
    /// # Errors
    /// An unsupported URL or a database that cannot be reached.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, StoreOptions::default())
    }

    /// Connects to `url` with `options`; a request waits at most `options.pool_timeout` for
    /// a connection before it fails with [`StoreError::Pool`] (so requests fail fast
    /// during an outage).
    ///
    /// # Errors
    /// An unsupported URL or a database that cannot be reached.
    pub fn connect_with(url: &str, options: StoreOptions) -> Result<Self, StoreError> {
        let timeout = options.pool_timeout;
        let mut keys = None;
        let pools = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            // Fail fast with the real error instead of r2d2's generic timeout.
            PgConnection::establish(url)?;
            // Connections are opened when needed (no idle minimum): a short pool wait never
            // turns a slow start into a failed one, and no connection is being opened in the
            // background when a short command (`migrate`, `grant-role`) exits (libpq's TLS
            // teardown at exit crashes a thread that is still connecting).
            let pool = |session: Box<dyn CustomizeConnection<PgConnection, _>>| {
                Pool::builder()
                    .max_size(16)
                    .min_idle(Some(0))
                    .connection_timeout(timeout)
                    // No `SELECT 1` round trip per checkout: a connection whose query failed
                    // for a connection-level reason is discarded when it comes back
                    // (`Manager::has_broken`), and the next request's query fails fast.
                    .test_on_check_out(false)
                    .connection_customizer(session)
                    .build(Manager::<PgConnection>::new(url))
            };
            keys = Some(pool(Box::new(PgKeysSession))?);
            Pools::Pg(pool(Box::new(PgSession))?)
        } else if url.contains("://") && !url.starts_with("sqlite://") {
            return Err(StoreError::UnsupportedUrl);
        } else {
            let path = url.strip_prefix("sqlite://").unwrap_or(url);
            let manager = Manager::<SqliteConnection>::new(path);
            Pools::Sqlite(
                Pool::builder()
                    .max_size(8)
                    .connection_timeout(timeout)
                    .test_on_check_out(false)
                    .connection_customizer(Box::new(SqlitePragmas {
                        synchronous: match options.sqlite_synchronous {
                            SqliteSynchronous::Full => "FULL",
                            SqliteSynchronous::Normal => "NORMAL",
                        },
                    }))
                    .build(manager)?,
            )
        };
        Ok(Self {
            pools,
            keys,
            memory: std::sync::Arc::default(),
            writers: std::sync::Arc::default(),
            clock: Clock::system(),
            replica: None,
        })
    }

    /// The store with reads that allow it going to the PostgreSQL replica at `url`
    /// ([`Store::read_replica`]).
    ///
    /// # Errors
    /// The primary is SQLite, `url` is not PostgreSQL's, or its pool cannot be built.
    pub fn with_replica(mut self, url: &str, timeout: Duration) -> Result<Self, StoreError> {
        if !matches!(self.pools, Pools::Pg(_)) {
            return Err(StoreError::UnsupportedUrl);
        }
        self.replica = Some(replica::Replica::connect(url, timeout)?);
        Ok(self)
    }

    /// Whether reads may go to a replica (so that writes need fencing).
    #[must_use]
    pub fn has_replica(&self) -> bool {
        self.replica.is_some()
    }

    /// Notes that `account` just wrote: its reads go to the primary until the replica has
    /// replayed what is committed now. Nothing without a replica.
    ///
    /// # Errors
    /// The primary cannot be reached.
    pub fn fence_reads(&self, account: &str) -> Result<(), StoreError> {
        let (Some(replica), Pools::Pg(pool)) = (&self.replica, &self.pools) else {
            return Ok(());
        };
        let mut conn = pool.get()?;
        replica.fence(&mut conn, account)
    }

    /// Where reads went (zeros without a replica).
    #[must_use]
    pub fn replica_stats(&self) -> replica::ReplicaStats {
        self.replica
            .as_ref()
            .map(replica::Replica::stats)
            .unwrap_or_default()
    }

    /// [`Store::read`] on the replica when there is one that has replayed `reader`'s last
    /// write (`None`: a read no one's own write fences); on the primary otherwise. For
    /// reads that may be a little behind: lists, the analysts' feed, leaderboards,
    /// profiles. A read that fails on a replica that no longer answers (it went away after
    /// its pooled connection was opened) is made again on the primary.
    ///
    /// # Errors
    /// As [`Store::read`].
    pub fn read_replica<T, E>(
        &self,
        reader: Option<&str>,
        f: impl Fn(&mut Tx<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        if let Some(replica) = &self.replica
            && let Some(mut conn) = replica.connection_for(reader)
        {
            let read = f(&mut Tx::pg(&mut conn, self.clock.naive()));
            if read.is_ok() || replica.answers(&mut conn) {
                return read;
            }
            tracing::warn!("the replica stopped answering; the read went to the primary");
        }
        self.read(f)
    }

    /// The store with `clock` as the time its transactions begin at (the server's one
    /// clock; the system clock by default).
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Which backend this store uses.
    #[must_use]
    pub fn backend(&self) -> Backend {
        match self.pools {
            Pools::Pg(_) => Backend::Postgres,
            Pools::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// Gathers the planner's statistics after a bulk load (`stammtisch fill`). PostgreSQL
    /// plans a table it has never analysed from default guesses (a game's events estimated
    /// at 160,000 rows at 3×10⁷ events), and autovacuum analyses a table that grew by
    /// millions of rows only minutes later. SQLite: nothing (its planner takes the
    /// indexes without statistics; the volume figures were measured so).
    ///
    /// # Errors
    /// Database failure.
    pub fn analyze(&self) -> Result<(), StoreError> {
        if let Pools::Pg(p) = &self.pools {
            p.get()?.batch_execute("ANALYZE")?;
        }
        Ok(())
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
        result.map_err(|e| StoreError::Migration(e.to_string()))?;
        if let Pools::Pg(p) = &self.pools {
            let mut conn = p.get()?;
            if let Some(base) = raise_feed_base(&mut conn)? {
                tracing::warn!(
                    base,
                    "events come from a cluster with later transaction ids (a restore): the \
                     analysts' feed now orders new events after them"
                );
            }
        }
        Ok(())
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
    /// lock instead of failing on upgrade). Rolls back when `f` fails. The one entry point
    /// for writes: games, accounts, score pads, the outbox and the platform all go through
    /// it.
    ///
    /// # Errors
    /// Whatever `f` returns, or a store error (no connection, BEGIN or COMMIT failed)
    /// converted into `E`.
    pub fn write<T, E>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.write_planned(false, f)
    }

    /// [`Store::write`] for a transaction whose statements all find rows by key (the
    /// command path, the ratings projection): on PostgreSQL they run on connections that
    /// use generic plans (`plan_cache_mode = force_generic_plan` for their session,
    /// `PgKeysSession`). PostgreSQL otherwise plans some prepared statements anew on every
    /// call, when a plan for the actual values looks cheaper than
    /// the generic one: `id = ANY($1)` and the game's row joined with its newer events were
    /// planned on every call (docs/scaling.md, second pass). Not for every transaction: a
    /// generic plan is right for key lookups only; for `deadline_at <= $1` it scanned every
    /// seat row instead of the few that are due. Key lookups also rule out
    /// sequential scans and hash or merge joins here: the generic plan of the batched
    /// append (arrays of games joined with `games`) otherwise hashed a sequential scan of
    /// the whole table on every call, as the planner guesses ten array elements against a
    /// never-analysed table.
    ///
    /// # Errors
    /// As [`Store::write`].
    pub fn write_by_keys<T, E>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.write_planned(true, f)
    }

    fn write_planned<T, E>(
        &self,
        generic_plans: bool,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let outcome = match &self.pools {
            Pools::Pg(p) => {
                let pool = match &self.keys {
                    Some(keys) if generic_plans => keys,
                    _ => p,
                };
                let mut conn = pool.get().map_err(StoreError::from)?;
                let now = self.clock.naive();
                (*conn).transaction(|c| f(&mut Tx::pg(c, now)).map_err(TxError::Inner))
            }
            Pools::Sqlite(p) => {
                // The turn first, then a connection: a writer waiting for its turn holds
                // no connection that a reader could use.
                let _turn = self
                    .writers
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let mut conn = p.get().map_err(StoreError::from)?;
                let now = self.clock.naive();
                (*conn)
                    .immediate_transaction(|c| f(&mut Tx::sqlite(c, now)).map_err(TxError::Inner))
            }
        };
        outcome.map_err(|e| match e {
            TxError::Inner(e) => e,
            TxError::Database(e) => StoreError::from(e).into(),
        })
    }

    /// Runs `f` where every statement finds its rows by key, as [`Store::write_by_keys`],
    /// but on PostgreSQL without a transaction around them: each statement is atomic on its
    /// own, and what must happen together goes in [`Tx::atomically`]. For the group
    /// commit's batches, whose one write is a single statement (the compare-and-set append)
    /// unless someone listens: `BEGIN` and `COMMIT` were half of a lone command's four
    /// round trips (docs/scaling.md, "A lone command's round trips"). SQLite: one write
    /// transaction, as [`Store::write`] (in process, no round trips to save).
    ///
    /// # Errors
    /// As [`Store::write`].
    pub fn by_keys<T, E>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        match &self.keys {
            Some(keys) => {
                let mut conn = keys.get().map_err(StoreError::from)?;
                f(&mut Tx::pg(&mut conn, self.clock.naive()))
            }
            None => self.write_planned(true, f),
        }
    }

    /// Runs `f` on a connection, without a transaction of its own (single reads).
    ///
    /// # Errors
    /// Whatever `f` returns, or a pool error converted into `E`.
    pub fn read<T, E>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        match &self.pools {
            Pools::Pg(p) => {
                let mut conn: PooledConnection<_> = p.get().map_err(StoreError::from)?;
                f(&mut Tx::pg(&mut conn, self.clock.naive()))
            }
            Pools::Sqlite(p) => {
                let mut conn: PooledConnection<_> = p.get().map_err(StoreError::from)?;
                f(&mut Tx::sqlite(&mut conn, self.clock.naive()))
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

    /// The `jit` setting of a connection of each PostgreSQL pool: the primary's, the key
    /// lookups' and the replica's (when there is one); empty on SQLite. Each must say
    /// `off` (`PgSession`); the server logs them when it starts. Each pool's answer on
    /// its own: a replica that cannot be reached is no reason not to start (its reads go
    /// to the primary).
    pub fn pg_jit(&self) -> Vec<(&'static str, Result<String, StoreError>)> {
        #[derive(diesel::QueryableByName)]
        struct Setting {
            #[diesel(sql_type = diesel::sql_types::Text)]
            jit: String,
        }
        fn jit<M>(pool: &Pool<M>) -> Result<String, StoreError>
        where
            M: diesel::r2d2::ManageConnection<Connection = PgConnection>,
        {
            let row: Setting = diesel::sql_query("SELECT current_setting('jit') AS jit")
                .get_result(&mut *pool.get()?)?;
            Ok(row.jit)
        }
        let Pools::Pg(primary) = &self.pools else {
            return Vec::new();
        };
        let mut settings = vec![("primary", jit(primary))];
        if let Some(keys) = &self.keys {
            settings.push(("keys", jit(keys)));
        }
        if let Some(replica) = &self.replica {
            settings.push(("replica", jit(replica.pool())));
        }
        settings
    }

    /// Whether the database answers a trivial query, waiting at most 800 ms for a
    /// connection (or the pool wait, when shorter).
    #[must_use]
    pub fn ping(&self) -> bool {
        let wait = |timeout: Duration| timeout.min(PING_TIMEOUT);
        // `R2D2Connection::ping` is the backend's own trivial query (`SELECT 1`).
        let result: Result<(), StoreError> = match &self.pools {
            Pools::Pg(p) => p
                .get_timeout(wait(p.connection_timeout()))
                .map_err(Into::into)
                .and_then(|mut c| c.ping().map_err(Into::into)),
            Pools::Sqlite(p) => p
                .get_timeout(wait(p.connection_timeout()))
                .map_err(Into::into)
                .and_then(|mut c| c.ping().map_err(Into::into)),
        };
        result.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use diesel::result::{DatabaseErrorKind, Error};

    use super::{StoreError, connection_lost};

    fn db(kind: DatabaseErrorKind) -> Error {
        Error::DatabaseError(kind, Box::new("message text is never read".to_owned()))
    }

    #[test]
    fn connection_failures_are_told_by_kind() {
        assert!(connection_lost(&db(DatabaseErrorKind::ClosedConnection)));
        assert!(connection_lost(&db(DatabaseErrorKind::UnableToSendCommand)));
        assert!(connection_lost(&Error::BrokenTransactionManager));
        assert!(connection_lost(&Error::RollbackErrorOnCommit {
            rollback_error: Box::new(db(DatabaseErrorKind::ClosedConnection)),
            commit_error: Box::new(Error::NotFound),
        }));
        for not_lost in [
            db(DatabaseErrorKind::UniqueViolation),
            db(DatabaseErrorKind::SerializationFailure),
            db(DatabaseErrorKind::Unknown),
            Error::NotFound,
            Error::RollbackTransaction,
        ] {
            assert!(!connection_lost(&not_lost), "{not_lost:?}");
        }
        assert!(StoreError::Query(db(DatabaseErrorKind::ClosedConnection)).is_unavailable());
        assert!(!StoreError::Query(Error::NotFound).is_unavailable());
        assert!(!StoreError::Conflict.is_unavailable());
        assert!(
            StoreError::Connect(diesel::ConnectionError::BadConnection("down".into()))
                .is_unavailable()
        );
    }
}
