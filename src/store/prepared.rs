//! Hand-written SQL that the connection keeps prepared.
//!
//! diesel's `sql_query` marks itself unsafe to cache, and so do some query-builder
//! statements (every `UPDATE`, a multi-row `INSERT`): PostgreSQL then parses and plans them
//! anew on every call, which on the command path cost more than the statements' own work
//! (docs/scaling.md, second pass). [`prepared`] is `sql_query` without that mark: diesel
//! caches the statement by its text, so each connection prepares it once. Use it only for
//! text that does not vary with the data (else every variant is cached).
//!
//! The text names its parameters `$1`, `$2`, … in order, each once (a statement that needs
//! one twice selects it in a CTE); `.bind` supplies them in the same order. diesel writes
//! the placeholders itself (`$n` on PostgreSQL, `?` on SQLite), so the text's are replaced.

use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::HasSqlType;
use diesel::{QueryResult, RunQueryDsl};

/// SQL text with `$1`, `$2`, … placeholders, in order, each once.
#[derive(Debug, Clone, Copy)]
#[must_use]
pub struct Prepared {
    sql: &'static str,
}

/// `sql_query` whose prepared statement the connection keeps.
pub fn prepared(sql: &'static str) -> Prepared {
    debug_assert!(
        placeholders(sql)
            .enumerate()
            .all(|(i, (_, _, n))| n == i + 1),
        "placeholders must be $1, $2, … in order, each once: {sql}"
    );
    Prepared { sql }
}

/// A statement with its first `index` parameters bound.
#[derive(Debug, Clone, Copy)]
#[must_use]
pub struct Bound<Q, V, ST> {
    query: Q,
    value: V,
    index: usize,
    sql: &'static str,
    sql_type: PhantomData<ST>,
}

impl Prepared {
    /// Binds `$1`.
    pub fn bind<ST, V>(self, value: V) -> Bound<Self, V, ST> {
        Bound {
            query: self,
            value,
            index: 1,
            sql: self.sql,
            sql_type: PhantomData,
        }
    }
}

impl<Q, V, ST> Bound<Q, V, ST> {
    /// Binds the next parameter.
    pub fn bind<ST2, V2>(self, value: V2) -> Bound<Self, V2, ST2> {
        let (index, sql) = (self.index + 1, self.sql);
        Bound {
            query: self,
            value,
            index,
            sql,
            sql_type: PhantomData,
        }
    }
}

/// The placeholders of `sql`: (start, end, number). diesel builds the text on every
/// execution (its statement cache is keyed by it), so this finds the `$` signs with
/// `match_indices` (memchr) rather than looking at every byte.
fn placeholders(sql: &str) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    sql.match_indices('$').filter_map(move |(start, _)| {
        let digits = sql[start + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let end = start + 1 + digits;
        let number = sql.get(start + 1..end)?.parse().ok()?;
        Some((start, end, number))
    })
}

impl QueryId for Prepared {
    type QueryId = ();
    // No static id: diesel's statement cache then keys the statement by its text.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q, V, ST> QueryId for Bound<Q, V, ST> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<DB: Backend> QueryFragment<DB> for Prepared {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        // With parameters, the bound levels write the text piece by piece.
        if placeholders(self.sql).next().is_none() {
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
    /// The text up to this level's placeholder, the parameter, and after the last one
    /// the rest of the text.
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.query.walk_ast(out.reborrow())?;
        let mut marks = placeholders(self.sql).skip(self.index.saturating_sub(2));
        let from = if self.index == 1 {
            0
        } else {
            marks.next().map_or(self.sql.len(), |(_, end, _)| end)
        };
        let Some((start, end, number)) = marks.next() else {
            return Err(diesel::result::Error::QueryBuilderError(
                format!("more parameters bound than the text has: {}", self.sql).into(),
            ));
        };
        // A value bound to the wrong place would be a wrong statement, not an error.
        if number != self.index {
            return Err(diesel::result::Error::QueryBuilderError(
                format!("${number} where ${} belongs: {}", self.index, self.sql).into(),
            ));
        }
        out.push_sql(&self.sql[from..start]);
        out.push_bind_param::<ST, V>(&self.value)?;
        if marks.next().is_none() {
            out.push_sql(&self.sql[end..]);
        }
        Ok(())
    }
}

impl Query for Prepared {
    type SqlType = diesel::sql_types::Untyped;
}

impl<Q, V, ST> Query for Bound<Q, V, ST> {
    type SqlType = diesel::sql_types::Untyped;
}

impl<Conn> RunQueryDsl<Conn> for Prepared {}

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
        let q = prepared("SELECT $1 AS a WHERE b = $2 AND c > 3")
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
        let q = prepared("SELECT 1");
        assert_eq!(
            debug_query::<Pg, _>(&q).to_string(),
            "SELECT 1 -- binds: []"
        );
        let q = prepared("SELECT $1").bind::<Integer, _>(1);
        assert_eq!(
            debug_query::<Sqlite, _>(&q).to_string(),
            "SELECT ? -- binds: [1]"
        );
    }

    #[test]
    fn placeholders_out_of_order_are_refused() {
        use std::fmt::Write;
        let swapped = Prepared {
            sql: "SELECT $2, $1",
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
    fn more_binds_than_placeholders_are_refused() {
        use std::fmt::Write;
        let over = prepared("SELECT $1")
            .bind::<Integer, _>(1)
            .bind::<Integer, _>(2);
        let mut sql = String::new();
        assert!(
            write!(sql, "{}", debug_query::<Pg, _>(&over)).is_err(),
            "{sql}"
        );
    }
}
