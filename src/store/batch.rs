//! The command path's one statement on PostgreSQL: a group-commit batch's reads (the
//! senders' accounts, their command count, the games' rows, the people concerned), a guard
//! on what was read, and the compare-and-set append, in one round trip.
//!
//! A batch whose games are all cached decides on the cached states before it reads and
//! sends its appends with its reads ([`Tx::batch_reads_and_append`]): the appends are made
//! only if what the statement reads lets every command through — each sender's token
//! holds, no count is over the limit, nobody concerned listens (their outbox rows would
//! have to be written with the events) — and each game is still at its cached version
//! (the compare-and-set). So a lone command is one round trip instead of two; when the
//! guard refuses, the statement has written nothing but the count and the batch goes on
//! from its reads as before. The same statement with no appends is the batch's reads
//! ([`Tx::batch_reads`]), and with no reads the append ([`Tx::append_many`]): one text, one
//! prepared statement, one place to change.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel::result::Error as DieselError;

use super::StoreError;
use super::accounts::AccountRow;
use super::commands::{BatchQuery, BatchReads};
use super::games::{Append, GameRow, NewEvent, SeatRow};
use super::json::JsonValue;
use super::schema::{accounts, games};
use super::tx::{Conn, Tx, conflict_or, on};

/// Appends a batch decided on its cached states, to make in its reads' statement only if
/// those reads let every command through ([`Tx::batch_reads_and_append`]).
#[derive(Debug, Clone, Copy)]
pub struct Speculative<'a> {
    /// The appends (each game at most once).
    pub appends: &'a [Append<'a>],
    /// The senders whose tokens are still to be checked: account and token version (the
    /// test of `accounts::admit`: the account exists, is not deleted, has that version).
    pub tokens: &'a [(&'a str, i32)],
    /// The command limit per window, against which the counted keys' hits of this window
    /// and the one before are checked (the verdict of `limits::Window`); 0: no limit.
    pub limit: u32,
}

impl Speculative<'_> {
    /// Nothing to append.
    pub(super) const NONE: Speculative<'static> = Speculative {
        appends: &[],
        tokens: &[],
        limit: 0,
    };
}

/// What [`Tx::batch_reads_and_append`] did: the batch's reads, and whether each append was
/// made (in the order given), or `None` when the reads refused the appends (nothing but the
/// count was written).
#[derive(Debug)]
pub struct ReadsAndAppends {
    /// As [`Tx::batch_reads`] reads them.
    pub reads: BatchReads,
    /// Per append, whether it was made; `None`: the guard refused them all.
    pub made: Option<Vec<bool>>,
}

impl Tx<'_> {
    /// The batch's reads ([`Tx::batch_reads`]) and, in the same statement where the backend
    /// can ([`Tx::appends_with_reads`]), `speculative`'s appends, made only if the reads let
    /// every command through (see the module's doc). Where it cannot (SQLite), the reads
    /// alone, and `made` is `None`.
    ///
    /// # Errors
    /// Database failure.
    pub fn batch_reads_and_append(
        &mut self,
        query: &BatchQuery<'_>,
        speculative: &Speculative<'_>,
    ) -> Result<ReadsAndAppends, StoreError> {
        let at = self.now;
        on!(self, |c| ReadTogether::reads_and_appends(
            c,
            query,
            speculative,
            at
        ))
    }

    /// Whether [`Tx::batch_reads_and_append`] can append with the reads: on PostgreSQL,
    /// where that saves a round trip; SQLite runs in the process (nothing to save), so a
    /// batch there reads first and decides after.
    #[must_use]
    pub fn appends_with_reads(&self) -> bool {
        match self.conn {
            Conn::Pg(_) => <diesel::pg::PgConnection as ReadTogether>::APPENDS_WITH_READS,
            Conn::Sqlite(_) => {
                <diesel::sqlite::SqliteConnection as ReadTogether>::APPENDS_WITH_READS
            }
        }
    }
}

/// The group commit's reads before deciding, and the appends that may go with them
/// ([`Tx::batch_reads_and_append`]). On PostgreSQL every statement is a round trip, which
/// the batch's leader makes while the next batch waits, so reads and appends are one
/// statement there; SQLite runs in the process and keeps the plain loads, and a batch there
/// decides after reading (there is no round trip to save).
trait ReadTogether {
    /// Whether the appends can go with the reads.
    const APPENDS_WITH_READS: bool;

    fn reads_and_appends(
        &mut self,
        query: &BatchQuery<'_>,
        speculative: &Speculative<'_>,
        at: NaiveDateTime,
    ) -> Result<ReadsAndAppends, StoreError>;
}

impl ReadTogether for diesel::pg::PgConnection {
    const APPENDS_WITH_READS: bool = true;

    fn reads_and_appends(
        &mut self,
        query: &BatchQuery<'_>,
        speculative: &Speculative<'_>,
        at: NaiveDateTime,
    ) -> Result<ReadsAndAppends, StoreError> {
        let (reads, made) = one_statement(self, query, speculative, at)?;
        Ok(ReadsAndAppends { reads, made })
    }
}

impl ReadTogether for diesel::sqlite::SqliteConnection {
    const APPENDS_WITH_READS: bool = false;

    /// The reads only (`speculative` is never appended: `made` is `None`).
    fn reads_and_appends(
        &mut self,
        query: &BatchQuery<'_>,
        _speculative: &Speculative<'_>,
        _at: NaiveDateTime,
    ) -> Result<ReadsAndAppends, StoreError> {
        let reads = BatchReads {
            accounts: accounts::table
                .filter(accounts::id.eq_any(query.accounts))
                .select(AccountRow::as_select())
                .load(self)?,
            games: games::table
                .filter(games::id.eq_any(query.games))
                .select(GameRow::as_select())
                .load(self)?,
            people: None,
            counts: None,
        };
        Ok(ReadsAndAppends { reads, made: None })
    }
}

/// The appends on PostgreSQL (no reads, nothing to guard): whether each was made.
pub(super) fn appends_pg(
    conn: &mut diesel::pg::PgConnection,
    appends: &[Append<'_>],
    at: NaiveDateTime,
) -> Result<Vec<bool>, StoreError> {
    let speculative = Speculative {
        appends,
        ..Speculative::NONE
    };
    let (_, made) = one_statement(conn, &BatchQuery::NONE, &speculative, at)?;
    // With nothing read nothing is refused.
    Ok(made.unwrap_or_else(|| vec![false; appends.len()]))
}

#[derive(diesel::QueryableByName)]
struct BatchJson {
    #[diesel(sql_type = diesel::sql_types::Text)]
    accounts: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    games: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    counts: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    people: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    made: String,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    ok: bool,
}

/// The statement. Its parts, as CTEs:
/// - `acc`: the accounts without their password hashes (not needed to check a token, so
///   kept out of the server's memory).
/// - `hits`, `up`, `tally`: a command counts when its token holds, by the test of
///   `accounts::admit` (the account exists, is not deleted, and has the token's version);
///   the batch admits by that same test on the same rows. The counters are written in key
///   order, so that two statements counting the same accounts wait for each other instead
///   of deadlocking. The counters' table is unlogged: a count needs no WAL flush.
/// - `people`, `heard`: what `webhooks_of_accounts`, `push_subscriptions_of_accounts` and
///   `mail_recipients` would find for everyone seated (by the stored seats) and the
///   senders: a webhook or a push subscription, or a mail address when mail is on.
/// - `guard`: every token to check holds, no counted key's hits of this window and the
///   last are over the limit (the limit's own verdict on the same counts), and nobody in
///   `heard` listens. It only lets the appends through; the server still judges every
///   command from the reads, and on the same rows comes to the same answer.
/// - `input` … `seated`: the append, for the games whose compare-and-set on their index
///   row matches (so losers are found before any event or global position is written: a
///   concurrent writer holds the row lock until commit, after which the update matches
///   nothing). The row lock orders concurrent appends to one game; `last_tx <= feed_tx()`
///   makes the feed agree: an append whose transaction id was taken before the previous
///   append's would sort before it, so it conflicts and is retried in a new transaction
///   instead. Games are locked in id order, so two batches that share games wait for each
///   other instead of deadlocking. Seats: a game's seats are fixed when it is created, so
///   only rows that differ are rewritten. `stamp` takes the transaction id only when
///   something is appended: a statement that only reads (or only counts, in an unlogged
///   table) then has no commit to flush.
///
/// The text is the same for any number of accounts, games, events or seats (arrays), so
/// the statement stays prepared.
fn one_statement(
    conn: &mut diesel::pg::PgConnection,
    query: &BatchQuery<'_>,
    speculative: &Speculative<'_>,
    at: NaiveDateTime,
) -> Result<(BatchReads, Option<Vec<bool>>), StoreError> {
    use diesel::sql_types::{Array, BigInt, Bool, Integer, Nullable, Text, Timestamp};
    let keys: Vec<&str> = query.count.iter().map(|(k, _, _)| k.as_str()).collect();
    let senders: Vec<&str> = query.count.iter().map(|(_, a, _)| *a).collect();
    let versions: Vec<Option<i32>> = query.count.iter().map(|(_, _, v)| *v).collect();
    let token_accounts: Vec<&str> = speculative.tokens.iter().map(|(a, _)| *a).collect();
    let token_versions: Vec<i32> = speculative.tokens.iter().map(|(_, v)| *v).collect();
    let limit = i32::try_from(speculative.limit).unwrap_or(i32::MAX);
    let a = AppendArrays::of(speculative.appends);
    let row: BatchJson = crate::prepared!(
        "WITH acc AS ( \
             SELECT id, name, NULL::text AS password_hash, guest, roles, created_at, \
                    token_version, deleted_at, registered_at \
               FROM accounts WHERE id = ANY($1::text[])), \
         game_rows AS ( \
             SELECT id, ruleset, name, status, host_account, version, created_at, \
                    updated_at, public, invite_code, free_seats, time_control \
               FROM games WHERE id = ANY($2::text[])), \
         hits AS ( \
             SELECT c.key, count(*)::int4 AS add \
               FROM unnest($3::text[], $4::text[], $5::int4[]) AS c(key, account, version) \
               LEFT JOIN acc ON acc.id = c.account \
              WHERE c.version IS NULL \
                 OR (acc.deleted_at IS NULL AND acc.token_version = c.version) \
              GROUP BY c.key), \
         up AS ( \
             INSERT INTO rate_counters (key, window_start, count) \
             SELECT key, $6::bigint, add FROM hits ORDER BY key \
             ON CONFLICT (key, window_start) \
             DO UPDATE SET count = rate_counters.count + EXCLUDED.count \
             RETURNING key, window_start, count), \
         tally AS ( \
             SELECT up.key, up.count AS current, COALESCE(r.count, 0) AS previous \
               FROM up LEFT JOIN rate_counters r \
                 ON r.key = up.key AND r.window_start = up.window_start - $7::bigint), \
         people AS ( \
             SELECT s.account_id AS id FROM game_seats s JOIN game_rows ON s.game_id = game_rows.id \
              WHERE s.account_id IS NOT NULL \
             UNION SELECT id FROM acc), \
         heard AS ( \
             SELECT a.id, a.name, \
                    EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = a.id) \
                    OR EXISTS (SELECT 1 FROM push_subscriptions ps WHERE ps.account_id = a.id) \
                    OR ($8::bool AND EXISTS (SELECT 1 FROM mail_settings m \
                         WHERE m.account_id = a.id AND m.address IS NOT NULL)) AS listens \
               FROM people p JOIN accounts a ON a.id = p.id), \
         guard AS ( \
             SELECT NOT EXISTS ( \
                        SELECT 1 FROM unnest($9::text[], $10::int4[]) AS t(account, version) \
                          LEFT JOIN acc ON acc.id = t.account \
                         WHERE acc.id IS NULL OR acc.deleted_at IS NOT NULL \
                            OR acc.token_version <> t.version) \
                    AND NOT EXISTS ( \
                        SELECT 1 FROM tally WHERE tally.current + tally.previous > $11::int4) \
                    AND NOT EXISTS (SELECT 1 FROM heard WHERE heard.listens) AS ok), \
         input AS ( \
             SELECT * FROM unnest($12::text[], $13::int4[], $14::int4[], $15::text[], \
                                  $16::bool[], $17::int4[]) WITH ORDINALITY \
                    AS i(game, expected, version, status, public, free_seats, ord) \
              WHERE (SELECT ok FROM guard)), \
         stamp AS ( \
             SELECT $18::timestamp AS at, feed_tx() AS tx WHERE EXISTS (SELECT 1 FROM input)), \
         locked AS ( \
             SELECT g.id FROM games g JOIN input i ON g.id = i.game \
              ORDER BY i.ord FOR UPDATE OF g), \
         cas AS ( \
             UPDATE games g SET version = i.version, status = i.status, \
                    updated_at = stamp.at, public = COALESCE(i.public, g.public), \
                    free_seats = i.free_seats, last_tx = stamp.tx \
               FROM input i, stamp, (SELECT count(*) FROM locked) l \
              WHERE g.id = i.game AND g.version = i.expected AND g.last_tx <= stamp.tx \
          RETURNING g.id, i.expected, stamp.at, stamp.tx), \
         appended AS ( \
             INSERT INTO events (event_id, game_id, seq, event_type, schema_version, \
                                 audience, data, recorded_at, tx_id) \
             SELECT e.event_id, cas.id, cas.expected + e.n, e.event_type, \
                    e.schema_version, e.audience, e.data, cas.at, cas.tx \
               FROM unnest($19::text[], $20::text[], $21::int4[], $22::text[], \
                           $23::int4[], $24::text[], $25::jsonb[]) WITH ORDINALITY \
                    AS e(game, event_id, n, event_type, schema_version, audience, data, \
                         ord) \
               JOIN cas ON cas.id = e.game \
              ORDER BY e.ord), \
         seated AS ( \
             INSERT INTO game_seats AS s (game_id, seat, account_id, awaiting, action, \
                                          deadline_at) \
             SELECT cas.id, n.seat, n.account_id, n.awaiting, n.action, n.deadline_at \
               FROM unnest($26::text[], $27::int4[], $28::text[], $29::bool[], \
                           $30::text[], $31::timestamp[]) \
                    AS n(game, seat, account_id, awaiting, action, deadline_at) \
               JOIN cas ON cas.id = n.game \
             ON CONFLICT (game_id, seat) DO UPDATE \
                SET account_id = excluded.account_id, awaiting = excluded.awaiting, \
                    action = excluded.action, deadline_at = excluded.deadline_at \
              WHERE s.account_id IS DISTINCT FROM excluded.account_id \
                 OR s.awaiting IS DISTINCT FROM excluded.awaiting \
                 OR s.action IS DISTINCT FROM excluded.action \
                 OR s.deadline_at IS DISTINCT FROM excluded.deadline_at) \
         SELECT (SELECT COALESCE(json_agg(acc), '[]') FROM acc)::text AS accounts, \
                (SELECT COALESCE(json_agg(game_rows), '[]') FROM game_rows)::text AS games, \
                (SELECT COALESCE(json_agg(tally), '[]') FROM tally)::text AS counts, \
                (SELECT COALESCE(json_agg(heard), '[]') FROM heard)::text AS people, \
                (SELECT COALESCE(json_agg(cas.id), '[]') FROM cas)::text AS made, \
                (SELECT ok FROM guard) AS ok",
    )
    .bind::<Array<Text>, _>(query.accounts)
    .bind::<Array<Text>, _>(query.games)
    .bind::<Array<Text>, _>(&keys)
    .bind::<Array<Text>, _>(&senders)
    .bind::<Array<Nullable<Integer>>, _>(&versions)
    .bind::<BigInt, _>(query.window.0)
    .bind::<BigInt, _>(query.window.1)
    .bind::<Bool, _>(query.mail)
    .bind::<Array<Text>, _>(&token_accounts)
    .bind::<Array<Integer>, _>(&token_versions)
    .bind::<Integer, _>(limit)
    .bind::<Array<Text>, _>(&a.games)
    .bind::<Array<Integer>, _>(&a.expected)
    .bind::<Array<Integer>, _>(&a.versions)
    .bind::<Array<Text>, _>(&a.statuses)
    .bind::<Array<Nullable<Bool>>, _>(&a.public)
    .bind::<Array<Integer>, _>(&a.free)
    .bind::<Timestamp, _>(at)
    .bind::<Array<Text>, _>(&a.event_games)
    .bind::<Array<Text>, _>(&a.ids)
    .bind::<Array<Integer>, _>(&a.offsets)
    .bind::<Array<Text>, _>(&a.types)
    .bind::<Array<Integer>, _>(&a.schemas)
    .bind::<Array<Text>, _>(&a.audiences)
    .bind::<Array<super::json::Jsonb>, _>(&a.data)
    .bind::<Array<Text>, _>(&a.seat_games)
    .bind::<Array<Integer>, _>(&a.seat_numbers)
    .bind::<Array<Nullable<Text>>, _>(&a.accounts)
    .bind::<Array<Bool>, _>(&a.awaiting)
    .bind::<Array<Nullable<Text>>, _>(&a.actions)
    .bind::<Array<Nullable<Timestamp>>, _>(&a.deadlines)
    .get_result(conn)
    .map_err(conflict_or)?;
    // A part that does not parse is a row diesel could not have read either. The error
    // names the kind and place only: serde's message may quote a value (a private game's
    // invite code), and this error is logged.
    let parse = |e: serde_json::Error| {
        StoreError::Query(DieselError::DeserializationError(
            format!(
                "the batch's statement's answer did not parse ({:?} error at column {})",
                e.classify(),
                e.column()
            )
            .into(),
        ))
    };
    let reads = BatchReads {
        accounts: serde_json::from_str(&row.accounts).map_err(parse)?,
        games: serde_json::from_str(&row.games).map_err(parse)?,
        people: Some(serde_json::from_str(&row.people).map_err(parse)?),
        counts: Some(serde_json::from_str(&row.counts).map_err(parse)?),
    };
    let made: Vec<String> = serde_json::from_str(&row.made).map_err(parse)?;
    let made = row.ok.then(|| {
        speculative
            .appends
            .iter()
            .map(|a| made.iter().any(|m| m == a.game))
            .collect()
    });
    Ok((reads, made))
}

/// The appends as the statement's arrays, in the order the games are locked (by id).
struct AppendArrays<'a> {
    games: Vec<&'a str>,
    expected: Vec<i32>,
    versions: Vec<i32>,
    statuses: Vec<&'a str>,
    public: Vec<Option<bool>>,
    free: Vec<i32>,
    event_games: Vec<&'a str>,
    ids: Vec<String>,
    offsets: Vec<i32>,
    types: Vec<&'a str>,
    schemas: Vec<i32>,
    audiences: Vec<&'a str>,
    data: Vec<JsonValue>,
    seat_games: Vec<&'a str>,
    seat_numbers: Vec<i32>,
    accounts: Vec<Option<&'a str>>,
    awaiting: Vec<bool>,
    actions: Vec<Option<&'a str>>,
    deadlines: Vec<Option<NaiveDateTime>>,
}

impl<'a> AppendArrays<'a> {
    fn of(appends: &'a [Append<'a>]) -> Self {
        let mut order: Vec<&Append<'a>> = appends.iter().collect();
        order.sort_by_key(|a| a.game);
        let events: Vec<(&str, i32, &NewEvent)> = order
            .iter()
            .flat_map(|a| (1..).zip(a.events).map(|(n, e)| (a.game, n, e)))
            .collect();
        let seats: Vec<&SeatRow> = order.iter().flat_map(|a| &a.index.seats).collect();
        debug_assert!(
            order
                .iter()
                .all(|a| a.index.seats.iter().all(|s| s.game_id == a.game))
        );
        Self {
            games: order.iter().map(|a| a.game).collect(),
            expected: order.iter().map(|a| a.expected).collect(),
            versions: order
                .iter()
                .map(|a| a.expected + i32::try_from(a.events.len()).unwrap_or(i32::MAX))
                .collect(),
            statuses: order.iter().map(|a| a.index.status.as_str()).collect(),
            public: order.iter().map(|a| a.index.public).collect(),
            free: order.iter().map(|a| a.index.free_seats).collect(),
            event_games: events.iter().map(|(g, _, _)| *g).collect(),
            ids: events
                .iter()
                .map(|_| uuid::Uuid::now_v7().to_string())
                .collect(),
            offsets: events.iter().map(|(_, n, _)| *n).collect(),
            types: events
                .iter()
                .map(|(_, _, e)| e.event_type.as_str())
                .collect(),
            schemas: events.iter().map(|(_, _, e)| e.schema_version).collect(),
            audiences: events.iter().map(|(_, _, e)| e.audience.as_str()).collect(),
            data: events
                .iter()
                .map(|(_, _, e)| JsonValue(e.data.clone()))
                .collect(),
            seat_games: seats.iter().map(|s| s.game_id.as_str()).collect(),
            seat_numbers: seats.iter().map(|s| s.seat).collect(),
            accounts: seats.iter().map(|s| s.account_id.as_deref()).collect(),
            awaiting: seats.iter().map(|s| s.awaiting).collect(),
            actions: seats.iter().map(|s| s.action.as_deref()).collect(),
            deadlines: seats.iter().map(|s| s.deadline_at).collect(),
        }
    }
}
