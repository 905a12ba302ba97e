//! What the command path needs beside the games: what the group-commit batch reads (the
//! accounts, games, people concerned and the rate count; the statement itself is in
//! `batch.rs`), idempotency keys and their stored answers, and named locks.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::accounts::AccountRow;
use super::games::GameRow;
use super::json::JsonValue;
use super::schema::idempotency_keys;
use super::tx::{Tx, conflict_or, on};

/// A stored answer to a command with an idempotency key.
#[derive(Debug, Clone)]
pub struct IdempotentRow {
    /// HTTP status of the first answer.
    pub status: i32,
    /// The first answer's body.
    pub response: serde_json::Value,
    /// SHA-256 of the request it answered (`None` for keys stored before it was kept).
    pub request_hash: Option<String>,
    /// When it was stored.
    pub created_at: NaiveDateTime,
    /// The version the command left the game at (always set: the column's migration
    /// filled it in for answers stored before).
    pub version: Option<i32>,
}

/// An idempotency key's stored answer as read: status, response, request hash, time, version.
type AnswerColumns = (i32, JsonValue, Option<String>, NaiveDateTime, Option<i32>);

/// The first answer to a command with an idempotency key, to store.
#[derive(Debug, Clone, Copy)]
pub struct IdempotentAnswer<'a> {
    /// Its HTTP status.
    pub status: i32,
    /// The version the command left the game at.
    pub version: i32,
    /// Its body.
    pub response: &'a serde_json::Value,
}

/// What a group-commit batch asks before it decides ([`Tx::batch_reads`]).
#[derive(Debug, Clone, Copy)]
pub struct BatchQuery<'a> {
    /// The senders' accounts whose tokens are to be checked.
    pub accounts: &'a [&'a str],
    /// The games.
    pub games: &'a [&'a str],
    /// Whether a mail address makes someone listen (mail is on).
    pub mail: bool,
    /// The commands to count against their senders' limit, where the backend counts in
    /// the same statement: each command's counter key, account, and the token version
    /// it must hold (`None`: checked already). Only those whose token holds are counted.
    pub count: &'a [(String, &'a str, Option<i32>)],
    /// The counting window's start and length (seconds).
    pub window: (i64, i64),
}

impl BatchQuery<'_> {
    /// Nothing to read.
    pub(super) const NONE: BatchQuery<'static> = BatchQuery {
        accounts: &[],
        games: &[],
        mail: false,
        count: &[],
        window: (0, 0),
    };
}

/// A rate counter after hits were added: this window's hits and the previous window's.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct KeyCounts {
    /// The counter's key.
    pub key: String,
    /// Hits in the window, the added ones included.
    pub current: i32,
    /// Hits in the window before.
    pub previous: i32,
}

/// What a group-commit batch reads before it decides ([`Tx::batch_reads`]).
#[derive(Debug)]
pub struct BatchReads {
    /// The senders' accounts that exist (on PostgreSQL without `password_hash`, which
    /// the token check does not need).
    pub accounts: Vec<AccountRow>,
    /// The games' index rows that exist.
    pub games: Vec<GameRow>,
    /// The people concerned: everyone seated at these games (by their stored seats) and
    /// the senders. `None` where the backend does not read them ahead (SQLite, where a
    /// read costs no round trip); the batch then reads what it needs after deciding.
    pub people: Option<Vec<PersonRow>>,
    /// The counters of the counted commands' keys after counting them (those with a
    /// command whose token holds); `None` where the backend does not count in the
    /// statement (SQLite keeps its counters in the process).
    pub counts: Option<Vec<KeyCounts>>,
}

/// A person concerned by a batch: the name its views show, and whether anything listens
/// for its news (a webhook, a push subscription, or a mail address when mail is on).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct PersonRow {
    /// Account id.
    pub id: String,
    /// Account name.
    pub name: String,
    /// Has a webhook or a push subscription, or a mail address (when asked with `mail`).
    pub listens: bool,
}

impl Tx<'_> {
    /// What a group-commit batch reads before it decides: the senders' accounts and the
    /// games' index rows (those that exist, in no particular order), and, where the
    /// backend does so in the same round trip (PostgreSQL), the people concerned and the
    /// command count (see [`BatchReads`]): [`Tx::batch_reads_and_append`] with nothing to
    /// append.
    ///
    /// # Errors
    /// Database failure.
    pub fn batch_reads(&mut self, query: &BatchQuery<'_>) -> Result<BatchReads, StoreError> {
        Ok(self
            .batch_reads_and_append(query, &super::Speculative::NONE)?
            .reads)
    }

    /// The stored first response to a command with this idempotency key.
    ///
    /// # Errors
    /// Database failure.
    pub fn idempotent_response(
        &mut self,
        game: &str,
        account: &str,
        key: &str,
    ) -> Result<Option<IdempotentRow>, StoreError> {
        on!(self, |c| {
            let row: Option<AnswerColumns> = idempotency_keys::table
                .find((game, account, key))
                .select((
                    idempotency_keys::status,
                    idempotency_keys::response,
                    idempotency_keys::request_hash,
                    idempotency_keys::created_at,
                    idempotency_keys::version,
                ))
                .first(c)
                .optional()?;
            Ok(row.map(
                |(status, response, request_hash, created_at, version)| IdempotentRow {
                    status,
                    response: response.0,
                    request_hash,
                    created_at,
                    version,
                },
            ))
        })
    }

    /// Forgets one idempotency key (an expired one, before the key is used anew).
    ///
    /// # Errors
    /// Database failure.
    pub fn forget_idempotency_key(
        &mut self,
        game: &str,
        account: &str,
        key: &str,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::delete(idempotency_keys::table.find((game, account, key))).execute(c)?;
            Ok(())
        })
    }

    /// Forgets the idempotency keys stored before `before`.
    ///
    /// # Errors
    /// Database failure.
    pub fn prune_idempotency_keys(&mut self, before: NaiveDateTime) -> Result<usize, StoreError> {
        on!(self, |c| {
            Ok(diesel::delete(
                idempotency_keys::table.filter(idempotency_keys::created_at.lt(before)),
            )
            .execute(c)?)
        })
    }

    /// Stores the first response to a command with this key.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the key was stored concurrently, database failure.
    pub fn save_idempotent_response(
        &mut self,
        game: &str,
        account: &str,
        key: &str,
        request_hash: &str,
        answer: IdempotentAnswer<'_>,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::insert_into(idempotency_keys::table)
                .values((
                    idempotency_keys::game_id.eq(game),
                    idempotency_keys::account_id.eq(account),
                    idempotency_keys::key.eq(key),
                    idempotency_keys::request_hash.eq(request_hash),
                    idempotency_keys::status.eq(answer.status),
                    idempotency_keys::response.eq(JsonValue(answer.response.clone())),
                    idempotency_keys::created_at.eq(self.now),
                    idempotency_keys::version.eq(answer.version),
                ))
                .execute(c)
                .map_err(conflict_or)?;
            Ok(())
        })
    }

    /// Serialises the transactions that name `key` until this one ends (PostgreSQL: an
    /// advisory lock; SQLite's write transactions are serialised anyway).
    ///
    /// # Errors
    /// Database failure.
    pub fn lock_named(&mut self, key: &str) -> Result<(), StoreError> {
        on!(self, |c| Locks::lock(c, key))
    }
}

/// Serialises transactions by name, where the backend needs it.
trait Locks {
    fn lock(&mut self, key: &str) -> Result<(), StoreError>;
}

impl Locks for diesel::pg::PgConnection {
    /// A transaction-scoped advisory lock on the key's hash: released at commit.
    fn lock(&mut self, key: &str) -> Result<(), StoreError> {
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
            .bind::<diesel::sql_types::Text, _>(key)
            .execute(self)?;
        Ok(())
    }
}

impl Locks for diesel::sqlite::SqliteConnection {
    /// Write transactions start with `BEGIN IMMEDIATE`: one at a time already.
    fn lock(&mut self, _key: &str) -> Result<(), StoreError> {
        Ok(())
    }
}
