//! A JSON column that is `jsonb` on PostgreSQL and `TEXT` on SQLite.
//!
//! The SQL type is named [`Jsonb`] on purpose: `diesel print-schema` reads the PostgreSQL
//! schema and writes `data -> Jsonb`; `diesel.toml` imports this type after
//! `diesel::sql_types::*`, and an explicit import shadows the glob, so the generated
//! `schema.rs` uses this portable type with no patch.

use std::io::Write;

use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{SqlType, Text};
use diesel::sqlite::{Sqlite, SqliteValue};

/// The SQL type of a JSON payload column.
#[derive(Debug, Clone, Copy, Default, SqlType, diesel::query_builder::QueryId)]
#[diesel(postgres_type(oid = 3802, array_oid = 3807))]
#[diesel(sqlite_type(name = "Text"))]
pub struct Jsonb;

/// A JSON value stored in a [`Jsonb`] column.
#[derive(Debug, Clone, PartialEq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Jsonb)]
pub struct JsonValue(pub serde_json::Value);

/// The version byte that prefixes jsonb in PostgreSQL's binary protocol.
const JSONB_VERSION: u8 = 1;

impl ToSql<Jsonb, Pg> for JsonValue {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(&[JSONB_VERSION])?;
        serde_json::to_writer(out, &self.0)?;
        Ok(IsNull::No)
    }
}

impl FromSql<Jsonb, Pg> for JsonValue {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        match value.as_bytes().split_first() {
            Some((&JSONB_VERSION, rest)) => Ok(Self(serde_json::from_slice(rest)?)),
            _ => Err("unsupported jsonb encoding".into()),
        }
    }
}

impl ToSql<Jsonb, Sqlite> for JsonValue {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(serde_json::to_string(&self.0)?);
        Ok(IsNull::No)
    }
}

impl FromSql<Jsonb, Sqlite> for JsonValue {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        Ok(Self(serde_json::from_str(&text)?))
    }
}
