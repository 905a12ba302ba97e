//! Rate-limit counters and stream leases.
//!
//! On PostgreSQL they live in two `UNLOGGED` tables, so every replica counts against the
//! same numbers; unlogged writes skip the WAL, so a count costs no fsync, and a crash only
//! forgets counts. On SQLite they live in this process's memory: one process owns an SQLite
//! file, so there is nobody to share them with, and the single writer stays free for moves.
//!
//! Counters are fixed windows, `(key, window_start)` → hits; a limit weighs the current
//! and the previous window together, so a burst across a window boundary is still caught.
//! Leases are rows with an expiry that their holder renews; a replica that dies leaves
//! leases that expire.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::NaiveDateTime;
use diesel::RunQueryDsl;
use diesel::pg::PgConnection;
use diesel::sql_types::{BigInt, Integer, Text, Timestamp};

use super::{Pools, Store, StoreError};

/// The in-process counters of an SQLite store.
#[derive(Default)]
pub(super) struct MemoryCounters {
    counts: Mutex<HashMap<String, HashMap<i64, i32>>>,
    leases: Mutex<HashMap<String, (String, NaiveDateTime)>>,
}

#[derive(diesel::QueryableByName)]
struct Counts {
    #[diesel(sql_type = Integer)]
    current: i32,
    #[diesel(sql_type = Integer)]
    previous: i32,
}

#[derive(diesel::QueryableByName)]
struct Held {
    #[diesel(sql_type = BigInt)]
    held: i64,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Store {
    /// Adds `add` (0 to only read) hits to `key` in the window of `length` seconds that
    /// starts at `start`, and returns the hits of that window and of the one before it.
    ///
    /// # Errors
    /// Database failure.
    pub fn count(
        &self,
        key: &str,
        start: i64,
        length: i64,
        add: i32,
    ) -> Result<(i32, i32), StoreError> {
        match &self.pools {
            Pools::Pg(pool) => {
                let mut conn = pool.get()?;
                // Prepared: on every command (see `prepared`).
                let row: Counts = crate::prepared!(
                    "WITH up AS ( \
                         INSERT INTO rate_counters (key, window_start, count) VALUES ($1, $2, $3) \
                         ON CONFLICT (key, window_start) \
                         DO UPDATE SET count = rate_counters.count + EXCLUDED.count \
                         RETURNING key, window_start, count) \
                     SELECT (SELECT count FROM up) AS current, \
                            COALESCE((SELECT r.count FROM rate_counters r, up \
                                      WHERE r.key = up.key \
                                        AND r.window_start = up.window_start - $4), 0) \
                            AS previous",
                )
                .bind::<Text, _>(key)
                .bind::<BigInt, _>(start)
                .bind::<Integer, _>(add)
                .bind::<BigInt, _>(length)
                .get_result(&mut *conn)?;
                Ok((row.current, row.previous))
            }
            Pools::Sqlite(_) => {
                let mut counts = locked(&self.memory.counts);
                if add == 0 {
                    // A read leaves no entry behind.
                    let windows = counts.get(key);
                    let at = |w: i64| windows.and_then(|ws| ws.get(&w)).copied().unwrap_or(0);
                    return Ok((at(start), at(start - length)));
                }
                let windows = counts.entry(key.to_owned()).or_default();
                windows.retain(|w, _| *w >= start - length);
                let current = windows.entry(start).or_insert(0);
                *current = current.saturating_add(add);
                let current = *current;
                Ok((
                    current,
                    windows.get(&(start - length)).copied().unwrap_or(0),
                ))
            }
        }
    }

    /// Forgets every window of `key`.
    ///
    /// # Errors
    /// Database failure.
    pub fn clear_count(&self, key: &str) -> Result<(), StoreError> {
        match &self.pools {
            Pools::Pg(pool) => {
                diesel::sql_query("DELETE FROM rate_counters WHERE key = $1")
                    .bind::<Text, _>(key)
                    .execute(&mut *pool.get()?)?;
            }
            Pools::Sqlite(_) => {
                locked(&self.memory.counts).remove(key);
            }
        }
        Ok(())
    }

    /// Forgets counter windows that started before `before` and expired leases.
    ///
    /// # Errors
    /// Database failure.
    pub fn prune_counters(&self, before: i64, now: NaiveDateTime) -> Result<(), StoreError> {
        match &self.pools {
            Pools::Pg(pool) => {
                let mut conn = pool.get()?;
                diesel::sql_query("DELETE FROM rate_counters WHERE window_start < $1")
                    .bind::<BigInt, _>(before)
                    .execute(&mut *conn)?;
                diesel::sql_query("DELETE FROM stream_leases WHERE expires_at < $1")
                    .bind::<Timestamp, _>(now)
                    .execute(&mut *conn)?;
            }
            Pools::Sqlite(_) => {
                let mut counts = locked(&self.memory.counts);
                counts
                    .values_mut()
                    .for_each(|w| w.retain(|start, _| *start >= before));
                counts.retain(|_, w| !w.is_empty());
                locked(&self.memory.leases).retain(|_, (_, expires)| *expires >= now);
            }
        }
        Ok(())
    }

    /// Takes a lease `id` for `account` until `expires_at` unless the account already
    /// holds `limit` unexpired leases. Returns whether it was taken.
    ///
    /// # Errors
    /// Database failure.
    pub fn take_lease(
        &self,
        id: &str,
        account: &str,
        limit: i64,
        now: NaiveDateTime,
        expires_at: NaiveDateTime,
    ) -> Result<bool, StoreError> {
        match &self.pools {
            Pools::Pg(pool) => {
                let mut conn = pool.get()?;
                take_pg_lease(&mut conn, id, account, limit, now, expires_at)
            }
            Pools::Sqlite(_) => {
                let mut leases = locked(&self.memory.leases);
                let held = leases
                    .values()
                    .filter(|(a, e)| a == account && *e >= now)
                    .count();
                if i64::try_from(held).unwrap_or(i64::MAX) >= limit {
                    return Ok(false);
                }
                leases.insert(id.to_owned(), (account.to_owned(), expires_at));
                Ok(true)
            }
        }
    }

    /// Extends many leases at once (one statement per call on PostgreSQL).
    ///
    /// # Errors
    /// Database failure.
    pub fn renew_leases(
        &self,
        ids: &[String],
        expires_at: NaiveDateTime,
    ) -> Result<(), StoreError> {
        match &self.pools {
            Pools::Pg(pool) => {
                diesel::sql_query("UPDATE stream_leases SET expires_at = $1 WHERE id = ANY($2)")
                    .bind::<Timestamp, _>(expires_at)
                    .bind::<diesel::sql_types::Array<Text>, _>(ids)
                    .execute(&mut *pool.get()?)?;
            }
            Pools::Sqlite(_) => {
                let mut leases = locked(&self.memory.leases);
                for id in ids {
                    if let Some(lease) = leases.get_mut(id) {
                        lease.1 = expires_at;
                    }
                }
            }
        }
        Ok(())
    }

    /// Extends a lease (or drops it, with `expires_at = None`).
    ///
    /// # Errors
    /// Database failure.
    pub fn renew_lease(
        &self,
        id: &str,
        expires_at: Option<NaiveDateTime>,
    ) -> Result<(), StoreError> {
        match (&self.pools, expires_at) {
            (Pools::Pg(pool), Some(at)) => {
                diesel::sql_query("UPDATE stream_leases SET expires_at = $2 WHERE id = $1")
                    .bind::<Text, _>(id)
                    .bind::<Timestamp, _>(at)
                    .execute(&mut *pool.get()?)?;
            }
            (Pools::Pg(pool), None) => {
                diesel::sql_query("DELETE FROM stream_leases WHERE id = $1")
                    .bind::<Text, _>(id)
                    .execute(&mut *pool.get()?)?;
            }
            (Pools::Sqlite(_), Some(at)) => {
                if let Some(lease) = locked(&self.memory.leases).get_mut(id) {
                    lease.1 = at;
                }
            }
            (Pools::Sqlite(_), None) => {
                locked(&self.memory.leases).remove(id);
            }
        }
        Ok(())
    }
}

/// Counts and inserts in one transaction, serialised per account by an advisory lock, so
/// two replicas cannot both take the last free lease.
fn take_pg_lease(
    conn: &mut PgConnection,
    id: &str,
    account: &str,
    limit: i64,
    now: NaiveDateTime,
    expires_at: NaiveDateTime,
) -> Result<bool, StoreError> {
    use diesel::Connection;
    conn.transaction(|c| {
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
            .bind::<Text, _>(account)
            .execute(c)?;
        let held: Held = diesel::sql_query(
            "SELECT count(*) AS held FROM stream_leases WHERE account_id = $1 AND expires_at >= $2",
        )
        .bind::<Text, _>(account)
        .bind::<Timestamp, _>(now)
        .get_result(c)?;
        if held.held >= limit {
            return Ok(false);
        }
        diesel::sql_query(
            "INSERT INTO stream_leases (id, account_id, expires_at) VALUES ($1, $2, $3)",
        )
        .bind::<Text, _>(id)
        .bind::<Text, _>(account)
        .bind::<Timestamp, _>(expires_at)
        .execute(c)?;
        Ok(true)
    })
}
