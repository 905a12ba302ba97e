//! Reads from a PostgreSQL streaming replica (`DATABASE_READ_URL`), without going back in
//! time for a person who just wrote.
//!
//! PostgreSQL's own replication carries the primary's WAL to a hot standby, which answers
//! reads a little behind. Most reads do not mind (a lobby list a few milliseconds old is a
//! lobby list), but a person who just created a game and then lists their games must see
//! it. So after a person's successful write the HTTP layer notes the primary's WAL position
//! for their account ([`Replica::fence`]); a read for that account goes to the replica
//! only once the replica has replayed up to there (`pg_last_wal_replay_lsn()`), and to the
//! primary until then. A replica that cannot be reached is skipped the same way: the read
//! goes to the primary.
//!
//! The fences live in this process (bounded, forgotten after [`FENCE_TTL`]); a person
//! whose requests a load balancer spreads over several server processes keeps the promise
//! only where they wrote (docs/known-gaps.md).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use diesel::pg::PgConnection;
use diesel::r2d2::{ConnectionManager as Manager, Pool, PooledConnection};
use diesel::sql_types::{Bool, Text};
use diesel::{QueryableByName, RunQueryDsl};

use super::StoreError;

/// How long a person's write fences their reads. A replica further behind than this is
/// broken, not late.
pub const FENCE_TTL: Duration = Duration::from_secs(600);

/// The most accounts fenced at once (the least recent are forgotten first).
const MAX_FENCES: u64 = 1_000_000;

/// Counters of where reads went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplicaStats {
    /// Reads the replica answered.
    pub reads: u64,
    /// Reads that went to the primary because the replica had not replayed the reader's
    /// last write yet, or could not be reached.
    pub fallbacks: u64,
}

#[derive(QueryableByName)]
struct Lsn {
    #[diesel(sql_type = Text)]
    lsn: String,
}

#[derive(QueryableByName)]
struct CaughtUp {
    #[diesel(sql_type = Bool)]
    caught_up: bool,
}

/// The replica's pool and the fences of the people who wrote.
#[derive(Clone)]
pub struct Replica {
    pool: Pool<Manager<PgConnection>>,
    fences: moka::sync::Cache<String, Arc<str>>,
    reads: Arc<AtomicU64>,
    fallbacks: Arc<AtomicU64>,
}

impl Replica {
    /// A pool on the replica at `url` (connections are opened when needed).
    ///
    /// # Errors
    /// A URL that is not PostgreSQL's, or a pool that cannot be built.
    pub fn connect(url: &str, timeout: Duration) -> Result<Self, StoreError> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(StoreError::UnsupportedUrl);
        }
        let pool = Pool::builder()
            .max_size(16)
            .min_idle(Some(0))
            .connection_timeout(timeout)
            .test_on_check_out(false)
            // The primary's session settings (no JIT): the same statements run here.
            .connection_customizer(Box::new(super::PgSession))
            .build(Manager::<PgConnection>::new(url))?;
        Ok(Self {
            pool,
            fences: moka::sync::Cache::builder()
                .max_capacity(MAX_FENCES)
                .time_to_live(FENCE_TTL)
                .build(),
            reads: Arc::default(),
            fallbacks: Arc::default(),
        })
    }

    /// The replica's pool.
    pub(super) fn pool(&self) -> &Pool<Manager<PgConnection>> {
        &self.pool
    }

    /// Notes the primary's WAL position (read on `primary` after the write committed) as
    /// what `account`'s next reads must see.
    ///
    /// # Errors
    /// The query failed.
    pub fn fence(&self, primary: &mut PgConnection, account: &str) -> Result<(), StoreError> {
        let at: Lsn =
            diesel::sql_query("SELECT pg_current_wal_lsn()::text AS lsn").get_result(primary)?;
        self.fences.insert(account.to_owned(), Arc::from(at.lsn));
        Ok(())
    }

    /// A replica connection that may answer a read for `reader` (`None`: a read that no
    /// one's own write fences, e.g. the analysts' feed): `None` when the replica has not
    /// replayed the reader's last write yet or cannot be reached.
    pub fn connection_for(
        &self,
        reader: Option<&str>,
    ) -> Option<PooledConnection<Manager<PgConnection>>> {
        let conn = self.pool.get().ok().and_then(|mut conn| {
            let Some(lsn) = reader.and_then(|r| self.fences.get(r)) else {
                return Some(conn);
            };
            // On a server that is not a standby the replay position is null: it is the
            // primary itself (or a copy that is not following it, which is misconfigured
            // either way), so it has what was written.
            let ok: Result<CaughtUp, _> = diesel::sql_query(
                "SELECT COALESCE(pg_last_wal_replay_lsn() >= $1::pg_lsn, NOT pg_is_in_recovery()) \
                 AS caught_up",
            )
            .bind::<Text, _>(&*lsn)
            .get_result(&mut conn);
            ok.is_ok_and(|c| c.caught_up).then_some(conn)
        });
        let counter = if conn.is_some() {
            &self.reads
        } else {
            &self.fallbacks
        };
        counter.fetch_add(1, Ordering::Relaxed);
        conn
    }

    /// Whether the replica still answers on `conn` (after a read on it failed). A read
    /// it no longer answers is counted as one that went to the primary.
    pub fn answers(&self, conn: &mut PgConnection) -> bool {
        let answers = diesel::RunQueryDsl::execute(diesel::sql_query("SELECT 1"), conn).is_ok();
        if !answers {
            self.reads.fetch_sub(1, Ordering::Relaxed);
            self.fallbacks.fetch_add(1, Ordering::Relaxed);
        }
        answers
    }

    /// Where reads went so far.
    #[must_use]
    pub fn stats(&self) -> ReplicaStats {
        ReplicaStats {
            reads: self.reads.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
        }
    }
}
