//! Hand-written SQL that the connection keeps prepared.
//!
//! diesel's `sql_query` marks itself unsafe to cache, and so do some query-builder
//! statements (every `UPDATE`, a multi-row `INSERT`): PostgreSQL then parses and plans them
//! anew on every call, which on the command path cost more than the statements' own work
//! (docs/scaling.md, second pass). [`prepared!`](crate::prepared) is `sql_query` without
//! that mark: each connection prepares the statement once and keeps it.
//!
//! The text names its parameters `$1`, `$2`, … in order, each once (a statement that needs
//! one twice selects it in a CTE); `.bind` supplies them in the same order. diesel writes
//! the placeholders itself (`$n` on PostgreSQL, `?` on SQLite), so the text's are replaced.
//!
//! Each use of the macro is a type of its own (its *site*), which is the statement's key in
//! diesel's statement cache, and finds its placeholders once, when it first runs. Keyed by
//! its text instead, every execution built the text anew, hashed it and found every level's
//! placeholder by scanning the text from its start: on the command path's two statements
//! (20 parameters in 3 KB of text) that was 15–20 % of the server's CPU per command
//! (docs/scaling.md, "The server's part of a lone command").
use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::HasSqlType;
use diesel::{QueryResult, RunQueryDsl};

/// A statement that the connection keeps prepared: `prepared!("… $1 … $2 …")`, then one
/// `.bind::<SqlType, _>(value)` per placeholder, in order. The text must be a constant
/// (a literal or a `const`): it must not vary with the data, else every variant would be
/// kept.
#[macro_export]
macro_rules! prepared {
    ($sql:expr $(,)?) => {{
        /// This use's key in diesel's statement cache.
        struct Site;
        const SQL: &str = $sql;
        static MARKS: ::std::sync::OnceLock<::std::boxed::Box<[$crate::store::prepared::Mark]>> =
            ::std::sync::OnceLock::new();
        $crate::store::prepared::Prepared::<Site>::at(
            SQL,
            MARKS.get_or_init(|| $crate::store::prepared::marks(SQL)),
        )
    }};
}

/// A placeholder in a statement's text: where it starts and ends, and its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    start: usize,
    end: usize,
    number: usize,
}

/// SQL text with `$1`, `$2`, … placeholders, in order, each once; `S` is the site of the
/// [`prepared!`](crate::prepared) that made it.
#[must_use]
pub struct Prepared<S> {
    sql: &'static str,
    marks: &'static [Mark],
    site: PhantomData<fn() -> S>,
}

impl<S> Clone for Prepared<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Prepared<S> {}

impl<S> std::fmt::Debug for Prepared<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared").field("sql", &self.sql).finish()
    }
}

/// A statement with its first `index` parameters bound.
#[derive(Debug, Clone, Copy)]
#[must_use]
pub struct Bound<Q, V, ST> {
    query: Q,
    value: V,
    index: usize,
    sql: &'static str,
    marks: &'static [Mark],
    sql_type: PhantomData<ST>,
}

impl<S> Prepared<S> {
    /// The statement `sql` with its placeholders `marks` (see [`prepared!`](crate::prepared),
    /// which finds them once per site). Public for the macro only.
    #[doc(hidden)]
    pub fn at(sql: &'static str, marks: &'static [Mark]) -> Self {
        debug_assert!(
            marks.iter().enumerate().all(|(i, m)| m.number == i + 1),
            "placeholders must be $1, $2, … in order, each once: {sql}"
        );
        Self {
            sql,
            marks,
            site: PhantomData,
        }
    }

    /// Binds `$1`.
    pub fn bind<ST, V>(self, value: V) -> Bound<Self, V, ST> {
        Bound {
            query: self,
            value,
            index: 1,
            sql: self.sql,
            marks: self.marks,
            sql_type: PhantomData,
        }
    }
}

impl<Q, V, ST> Bound<Q, V, ST> {
    /// Binds the next parameter.
    pub fn bind<ST2, V2>(self, value: V2) -> Bound<Self, V2, ST2> {
        let (index, sql, marks) = (self.index + 1, self.sql, self.marks);
        Bound {
            query: self,
            value,
            index,
            sql,
            marks,
            sql_type: PhantomData,
        }
    }
}

/// The placeholders of `sql`, in the order they appear (found with `match_indices`, which
/// uses memchr, rather than by looking at every byte). Public for the macro only.
#[doc(hidden)]
#[must_use]
pub fn marks(sql: &str) -> Box<[Mark]> {
    sql.match_indices('$')
        .filter_map(|(start, _)| {
            let digits = sql[start + 1..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let end = start + 1 + digits;
            let number = sql.get(start + 1..end)?.parse().ok()?;
            Some(Mark { start, end, number })
        })
        .collect()
}

impl<S: 'static> QueryId for Prepared<S> {
    // The site: one statement text per type, so the statement cache needs neither the text
    // nor its hash to find the statement.
    type QueryId = S;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<Q: QueryId, V, ST: 'static> QueryId for Bound<Q, V, ST> {
    type QueryId = (Q::QueryId, ST);
    const HAS_STATIC_QUERY_ID: bool = Q::HAS_STATIC_QUERY_ID;
}

impl<S, DB: Backend> QueryFragment<DB> for Prepared<S> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        // With parameters, the bound levels write the text piece by piece.
        if self.marks.is_empty() {
            out.push_sql(self.sql);
        }
        Ok(())
    }
}

impl<Q, V, ST, DB> QueryFragment<DB> for Bound<Q, V, ST>
where
    DB: Backend + HasSqlType<ST>,
    Q: QueryFragment<DB>,
    V: ToSql<ST, DB>,
{
    /// The text from the placeholder before this level's to this level's, the parameter,
    /// and after the last one the rest of the text.
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.query.walk_ast(out.reborrow())?;
        let Some(mark) = self.index.checked_sub(1).and_then(|i| self.marks.get(i)) else {
            return Err(diesel::result::Error::QueryBuilderError(
                format!("more parameters bound than the text has: {}", self.sql).into(),
            ));
        };
        // A value bound to the wrong place would be a wrong statement, not an error.
        if mark.number != self.index {
            return Err(diesel::result::Error::QueryBuilderError(
                format!(
                    "${} where ${} belongs: {}",
                    mark.number, self.index, self.sql
                )
                .into(),
            ));
        }
        let from = self
            .index
            .checked_sub(2)
            .and_then(|i| self.marks.get(i))
            .map_or(0, |before| before.end);
        // Marks that are not this text's (only `Prepared::at` by hand can make them) are
        // refused, not sliced out of bounds.
        let piece = |range: std::ops::Range<usize>| {
            self.sql.get(range).ok_or_else(|| {
                diesel::result::Error::QueryBuilderError(
                    format!("placeholders that are not the text's: {}", self.sql).into(),
                )
            })
        };
        out.push_sql(piece(from..mark.start)?);
        out.push_bind_param::<ST, V>(&self.value)?;
        if self.index == self.marks.len() {
            out.push_sql(piece(mark.end..self.sql.len())?);
        }
        Ok(())
    }
}

impl<S> Query for Prepared<S> {
    type SqlType = diesel::sql_types::Untyped;
}

impl<Q, V, ST> Query for Bound<Q, V, ST> {
    type SqlType = diesel::sql_types::Untyped;
}

impl<Conn, S> RunQueryDsl<Conn> for Prepared<S> {}

impl<Conn, Q, V, ST> RunQueryDsl<Conn> for Bound<Q, V, ST> {}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::debug_query;
    use diesel::pg::Pg;
    use diesel::sql_types::{Integer, Text};
    use diesel::sqlite::Sqlite;

    #[test]
    fn the_text_is_rebuilt_with_the_backends_placeholders() {
        let q = crate::prepared!("SELECT $1 AS a WHERE b = $2 AND c > 3")
            .bind::<Text, _>("x")
            .bind::<Integer, _>(7);
        assert_eq!(
            debug_query::<Pg, _>(&q).to_string(),
            "SELECT $1 AS a WHERE b = $2 AND c > 3 -- binds: [\"x\", 7]"
        );
        assert_eq!(
            debug_query::<Sqlite, _>(&q).to_string(),
            "SELECT ? AS a WHERE b = ? AND c > 3 -- binds: [\"x\", 7]"
        );
    }

    #[test]
    fn text_without_parameters_is_kept_and_a_trailing_placeholder_works() {
        let q = crate::prepared!("SELECT 1");
        assert_eq!(
            debug_query::<Pg, _>(&q).to_string(),
            "SELECT 1 -- binds: []"
        );
        let q = crate::prepared!("SELECT $1").bind::<Integer, _>(1);
        assert_eq!(
            debug_query::<Sqlite, _>(&q).to_string(),
            "SELECT ? -- binds: [1]"
        );
    }

    #[test]
    fn placeholders_out_of_order_are_refused() {
        use std::fmt::Write;
        // Built by hand: the macro's debug check would refuse the text first.
        struct Site;
        let marks: &'static [Mark] = Box::leak(marks("SELECT $2, $1"));
        let swapped = Prepared::<Site> {
            sql: "SELECT $2, $1",
            marks,
            site: PhantomData,
        }
        .bind::<Integer, _>(1)
        .bind::<Integer, _>(2);
        let mut sql = String::new();
        assert!(
            write!(sql, "{}", debug_query::<Pg, _>(&swapped)).is_err(),
            "{sql}"
        );
    }

    #[test]
    fn marks_of_another_text_are_refused_not_sliced() {
        use std::fmt::Write;
        struct Site;
        let longer: &'static [Mark] = Box::leak(marks("SELECT 1234567890, $1"));
        let wrong = Prepared::<Site> {
            sql: "SELECT $1",
            marks: longer,
            site: PhantomData,
        }
        .bind::<Integer, _>(1);
        let mut sql = String::new();
        assert!(
            write!(sql, "{}", debug_query::<Pg, _>(&wrong)).is_err(),
            "{sql}"
        );
    }

    #[test]
    fn more_binds_than_placeholders_are_refused() {
        use std::fmt::Write;
        let over = crate::prepared!("SELECT $1")
            .bind::<Integer, _>(1)
            .bind::<Integer, _>(2);
        let mut sql = String::new();
        assert!(
            write!(sql, "{}", debug_query::<Pg, _>(&over)).is_err(),
            "{sql}"
        );
    }

    #[test]
    fn each_site_is_a_statement_of_its_own_and_finds_its_placeholders_once() {
        use diesel::query_builder::QueryId;
        let a = crate::prepared!("SELECT $1").bind::<Integer, _>(1);
        let b = crate::prepared!("SELECT $1").bind::<Integer, _>(1);
        fn id_of<T: QueryId>(_: &T) -> Option<std::any::TypeId> {
            T::query_id()
        }
        let (ia, ib) = (id_of(&a), id_of(&b));
        assert!(ia.is_some() && ib.is_some());
        assert_ne!(ia, ib, "two sites are two statements, whatever their text");
        assert_eq!(
            &*marks("SELECT $1, x$2 || '$' || $10"),
            [
                Mark {
                    start: 7,
                    end: 9,
                    number: 1
                },
                Mark {
                    start: 12,
                    end: 14,
                    number: 2
                },
                Mark {
                    start: 25,
                    end: 28,
                    number: 10
                },
            ]
        );
    }
}
