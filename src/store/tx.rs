//! [`Tx`]: the handle every store operation runs on, one transaction (or, for reads, one
//! connection) on either backend.
//!
//! Each operation is a plain method of [`Tx`], written once. Its body runs inside `on!`,
//! which expands it once per backend with `c` bound to the concrete connection, so diesel
//! checks and compiles every query for PostgreSQL and for SQLite alike. Where the two
//! backends need different SQL, the method calls a small per-backend trait (for example
//! [`super::prepared`] or `Appends` in `appends.rs`), implemented for `PgConnection`
//! and `SqliteConnection` with the reason beside it.
//!
//! A transaction reads the time once, when it begins ([`Tx::now`]): the rows it writes
//! carry that time, from the server's one clock.

use chrono::NaiveDateTime;
use diesel::pg::PgConnection;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sqlite::SqliteConnection;

use super::StoreError;

/// One transaction or connection of the store, on PostgreSQL or SQLite.
pub struct Tx<'a> {
    pub(super) conn: Conn<'a>,
    /// The time the transaction began, as the server's clock tells it.
    pub(super) now: NaiveDateTime,
}

/// The connection under a [`Tx`].
pub(super) enum Conn<'a> {
    /// PostgreSQL.
    Pg(&'a mut PgConnection),
    /// SQLite.
    Sqlite(&'a mut SqliteConnection),
}

impl<'a> Tx<'a> {
    /// A handle on a PostgreSQL connection.
    pub(super) fn pg(conn: &'a mut PgConnection, now: NaiveDateTime) -> Self {
        Self {
            conn: Conn::Pg(conn),
            now,
        }
    }

    /// A handle on a SQLite connection.
    pub(super) fn sqlite(conn: &'a mut SqliteConnection, now: NaiveDateTime) -> Self {
        Self {
            conn: Conn::Sqlite(conn),
            now,
        }
    }

    /// The time this transaction began (UTC), from the server's clock.
    #[must_use]
    pub fn now(&self) -> NaiveDateTime {
        self.now
    }
}

/// `on!(self, |c| body)` runs `body` with `c` bound to the transaction's concrete
/// connection (`&mut PgConnection` or `&mut SqliteConnection`). It is not a closure: the
/// body is expanded inline once per backend, so `?` and `return` leave the enclosing
/// method, and the body may read `self.now` (but call no other method of `self`).
macro_rules! on {
    ($tx:expr, |$c:ident| $body:expr) => {
        match &mut $tx.conn {
            $crate::store::tx::Conn::Pg($c) => {
                let $c: &mut ::diesel::pg::PgConnection = $c;
                $body
            }
            $crate::store::tx::Conn::Sqlite($c) => {
                let $c: &mut ::diesel::sqlite::SqliteConnection = $c;
                $body
            }
        }
    };
}

pub(super) use on;

fn is_unique_violation(e: &DieselError) -> bool {
    matches!(
        e,
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)
    )
}

/// A unique violation as [`StoreError::Duplicate`], anything else as a query error.
pub(super) fn duplicate_or(e: DieselError) -> StoreError {
    if is_unique_violation(&e) {
        StoreError::Duplicate
    } else {
        StoreError::Query(e)
    }
}

/// A unique violation as [`StoreError::Conflict`] (another write came first), anything
/// else as a query error.
pub(super) fn conflict_or(e: DieselError) -> StoreError {
    if is_unique_violation(&e) {
        StoreError::Conflict
    } else {
        StoreError::Query(e)
    }
}

impl Tx<'_> {
    /// Runs `f` so that its statements take effect together or not at all: in a
    /// transaction of its own on a PostgreSQL connection that is in none
    /// ([`crate::store::Store::by_keys`]), else inside the transaction already open (SQLite's
    /// `by_keys`, every [`crate::store::Store::write`]).
    ///
    /// # Errors
    /// Whatever `f` returns, or `BEGIN`/`COMMIT` failing (then nothing of `f` is kept).
    pub fn atomically<T, E>(&mut self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        use diesel::connection::{AnsiTransactionManager, TransactionManager};
        let now = self.now;
        if let Conn::Pg(c) = &mut self.conn {
            let c: &mut PgConnection = c;
            let open = AnsiTransactionManager::transaction_manager_status_mut(c)
                .transaction_depth()
                .ok()
                .flatten()
                .is_some();
            if !open {
                let outcome = diesel::Connection::transaction(c, |c| {
                    f(&mut Tx::pg(c, now)).map_err(super::TxError::Inner)
                });
                return outcome.map_err(|e| match e {
                    super::TxError::Inner(e) => e,
                    super::TxError::Database(e) => StoreError::from(e).into(),
                });
            }
        }
        f(self)
    }
}
