//! `stammtisch export`: the analysts' feed as Parquet files in a directory, for DuckDB,
//! pandas, Spark and the like (docs/analytics.md, "Exports (Parquet)").
//!
//! What goes out is what the feed shows and nothing else: the events come page by page from
//! [`Analytics::feed_from`] (public events only, so no hand, selection, draw pile or seed
//! of a running game; a private game's name hidden), and a finished game's seats and
//! scores are folded from its public events ([`Analytics::public_log`]). On top of the
//! feed's rule the export leaves out what points at a person: every `account` field
//! (`seat_taken`, a rematch's reservations) and every game's name, since files outlive a
//! game's visibility (`redact`).
//!
//! The directory holds, Hive-partitioned by month (`month=YYYY-MM`):
//! - `events/`: one row per event, by the month of its `at`;
//! - `games/`, `seats/`, `results/`: one row per finished game, per seat of it, per seat's
//!   result, by the month the game finished (written when its `game_finished` is exported).
//!
//! Rows are collected in batches of a bounded number of events; each batch's files are
//! written under temporary names and renamed, then the state file `_export_state.json`
//! (the feed cursor after the batch) is replaced atomically. A run goes on from the cursor,
//! so it writes new part files only. Files of a batch that did not complete are listed in
//! the state as pending and removed by the next run before it writes the batch again.
//! Knows no HTTP and no SQL: reads go through [`Analytics`].

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{
    ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use chrono::{DateTime, NaiveDateTime, Utc};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::analytics::{Analytics, AnalyticsError, FeedCursor, ReadEvent};

/// The state file's name in the export directory.
pub const STATE_FILE: &str = "_export_state.json";

/// The state file's format: a run refuses a state it cannot read rather than guess.
const STATE_FORMAT: u32 = 1;

/// What to export, and where.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The export directory (made when missing).
    pub out: PathBuf,
    /// Only events recorded at or after this instant (fixed for a directory: a resumed run
    /// must ask for the same).
    pub from: Option<DateTime<Utc>>,
    /// Stop at the first event (in feed order) recorded at or after this instant; the
    /// next run goes on from there.
    pub to: Option<DateTime<Utc>>,
    /// Events per batch: the most a run holds in memory, and the most rows of a file.
    pub batch_events: usize,
    /// Events per read of the feed.
    pub page_events: i64,
}

impl ExportOptions {
    /// Options with the default batch (50,000 events) and page (1,000 events) sizes.
    #[must_use]
    pub fn new(out: PathBuf) -> Self {
        Self {
            out,
            from: None,
            to: None,
            batch_events: 50_000,
            page_events: 1_000,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Events this run exported.
    pub events: u64,
    /// Finished games this run exported (rows of `games`).
    pub games: u64,
    /// Parquet files this run wrote.
    pub files: u64,
    /// Their size in bytes.
    pub bytes: u64,
    /// Events in the directory after the run, this run's and every earlier run's.
    pub total_events: u64,
    /// The run went on from an earlier run's state.
    pub resumed: bool,
    /// The feed position the next run goes on after (0: nothing read yet).
    pub position: i64,
}

/// Why an export stopped. A stopped export leaves the directory as the last completed
/// batch left it; the next run goes on from there.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A file or directory could not be made, written, read or renamed.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was tried.
        action: &'static str,
        /// On what.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The state file is not one this version wrote.
    #[error("{} is not an export state this version can read: {detail}", path.display())]
    BadState {
        /// The state file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The directory holds an export of another `--from`: going on would leave a gap or
    /// export events twice.
    #[error(
        "{} holds an export {}; this run asks for {} (use the same --from, or another directory)",
        dir.display(), describe_from(*stored), describe_from(*asked)
    )]
    FromChanged {
        /// The export directory.
        dir: PathBuf,
        /// The `--from` the directory was exported with.
        stored: Option<DateTime<Utc>>,
        /// The `--from` of this run.
        asked: Option<DateTime<Utc>>,
    },
    /// A finished game's public events do not fold into seats and results.
    #[error("game {game}: {detail}")]
    BadGame {
        /// The game's id.
        game: String,
        /// What did not fit.
        detail: String,
    },
    /// Reading the feed failed.
    #[error("reading the analysts' feed")]
    Analytics(#[from] AnalyticsError),
    /// Writing a Parquet file failed.
    #[error("writing Parquet")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// Building the Arrow columns failed.
    #[error("building Arrow columns")]
    Arrow(#[from] arrow_schema::ArrowError),
}

fn describe_from(from: Option<DateTime<Utc>>) -> String {
    from.map_or_else(
        || "from the start of the feed (no --from)".to_owned(),
        |f| format!("--from {}", f.to_rfc3339()),
    )
}

/// The state file: where the next run goes on, and what a half-written batch left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    /// [`STATE_FORMAT`].
    format: u32,
    /// The `--from` of the directory's export.
    from: Option<DateTime<Utc>>,
    /// The feed cursor after the last completed batch: its transaction key
    /// (PostgreSQL; 0 on SQLite, -1 before the first event) …
    tx_id: i64,
    /// … and the position of its last event.
    position: i64,
    /// Events exported so far.
    events: u64,
    /// Finished games exported so far.
    games: u64,
    /// Parquet files written so far.
    files: u64,
    /// Files (relative to the directory) of a batch being written: present only while a
    /// run writes them; a run that finds some removes them and writes the batch again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pending: Vec<String>,
}

impl State {
    fn new(from: Option<DateTime<Utc>>) -> Self {
        Self {
            format: STATE_FORMAT,
            from,
            tx_id: FeedCursor::START.tx_id,
            position: FeedCursor::START.position,
            events: 0,
            games: 0,
            files: 0,
            pending: Vec::new(),
        }
    }

    fn cursor(&self) -> FeedCursor {
        FeedCursor {
            tx_id: self.tx_id,
            position: self.position,
        }
    }
}

/// Exports the feed after the directory's state into `options.out`, writing a line per
/// batch to `progress`.
///
/// # Errors
/// An unusable directory or state file, another `--from` than the directory's, storage
/// failure, a file that cannot be written.
pub fn export(
    analytics: &Analytics,
    options: &ExportOptions,
    progress: &mut dyn Write,
) -> Result<Summary, ExportError> {
    let dir = options.out.clone();
    fs::create_dir_all(&dir).map_err(|source| ExportError::Io {
        action: "create the export directory",
        path: dir.clone(),
        source,
    })?;
    let state_path = dir.join(STATE_FILE);
    let stored = read_state(&state_path)?;
    let resumed = stored.is_some();
    let mut state = stored.unwrap_or_else(|| State::new(options.from));
    if state.from != options.from {
        return Err(ExportError::FromChanged {
            dir,
            stored: state.from,
            asked: options.from,
        });
    }
    // A batch that did not complete: its files hold rows the state does not count.
    for rel in std::mem::take(&mut state.pending) {
        let path = dir.join(&rel);
        match fs::remove_file(&path) {
            Ok(()) => {
                let _ = writeln!(progress, "export: removed {rel} of an unfinished batch");
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(ExportError::Io {
                    action: "remove",
                    path,
                    source,
                });
            }
        }
    }
    // Written before anything is read: an unwritable directory fails at once.
    write_state(&state_path, &state)?;
    let mut run = Run {
        analytics,
        dir: &dir,
        state_path: &state_path,
        state,
        batch: Batch::default(),
        summary: Summary {
            resumed,
            ..Summary::default()
        },
        started: Instant::now(),
        progress,
    };
    let page_events = options.page_events.max(1);
    let batch_events = options.batch_events.max(1);
    let mut cursor = run.state.cursor();
    'feed: loop {
        let page = analytics.feed_from(cursor, page_events)?;
        let full = i64::try_from(page.len()).unwrap_or(i64::MAX) >= page_events;
        for event in page {
            let at = event.recorded_at.and_utc();
            if options.to.is_some_and(|to| at >= to) {
                break 'feed;
            }
            cursor = FeedCursor::from(&event);
            if options.from.is_some_and(|from| at < from) {
                continue;
            }
            run.batch.push(event);
            if run.batch.events.len() >= batch_events {
                run.flush(cursor)?;
            }
        }
        if !full {
            break;
        }
    }
    run.flush(cursor)?;
    run.summary.total_events = run.state.events;
    run.summary.position = run.state.position;
    Ok(run.summary)
}

/// One run's working set.
struct Run<'a> {
    analytics: &'a Analytics,
    dir: &'a Path,
    state_path: &'a Path,
    state: State,
    batch: Batch,
    summary: Summary,
    started: Instant,
    progress: &'a mut dyn Write,
}

/// The events of a batch, redacted, in feed order.
#[derive(Default)]
struct Batch {
    events: Vec<EventRow>,
    /// `(game, seq, position)` of the batch's `game_finished` events.
    finished: Vec<(String, i32, i64)>,
}

impl Batch {
    fn push(&mut self, event: ReadEvent) {
        let mut data = event.data;
        redact(&event.event_type, &mut data);
        if event.event_type == "game_finished" {
            self.finished
                .push((event.game_id.clone(), event.seq, event.position));
        }
        self.events.push(EventRow {
            game: event.game_id,
            position: event.position,
            seq: event.seq,
            event_type: event.event_type,
            at: event.recorded_at,
            data: data.to_string(),
        });
    }
}

/// A row of `events`.
struct EventRow {
    game: String,
    position: i64,
    seq: i32,
    event_type: String,
    at: NaiveDateTime,
    data: String,
}

impl Run<'_> {
    /// Writes the batch's files, then the state after `cursor`. An empty batch only moves
    /// the state's cursor (past events before `--from`).
    fn flush(&mut self, cursor: FeedCursor) -> Result<(), ExportError> {
        let batch = std::mem::take(&mut self.batch);
        if batch.events.is_empty() {
            if cursor != self.state.cursor() {
                self.state.tx_id = cursor.tx_id;
                self.state.position = cursor.position;
                write_state(self.state_path, &self.state)?;
            }
            return Ok(());
        }
        let mut ids: Vec<String> = batch.events.iter().map(|e| e.game.clone()).collect();
        ids.sort_unstable();
        ids.dedup();
        let rulesets = self.analytics.rulesets(&ids)?;
        let mut finished = Vec::with_capacity(batch.finished.len());
        for (game, seq, position) in &batch.finished {
            let log = self.analytics.public_log(game, *seq)?;
            let folded = fold(&log).map_err(|detail| ExportError::BadGame {
                game: game.clone(),
                detail,
            })?;
            finished.push((*position, folded));
        }

        // Every file of the batch, named before any is written (the pending list).
        let mut by_month: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, e) in batch.events.iter().enumerate() {
            by_month.entry(month(e.at)).or_default().push(i);
        }
        let mut games_by_month: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, (_, g)) in finished.iter().enumerate() {
            games_by_month
                .entry(month(g.finished_at))
                .or_default()
                .push(i);
        }
        let part = |table: &str, month: &str, first: i64| {
            format!("{table}/month={month}/part-{first}.parquet")
        };
        let mut pending = Vec::new();
        for (m, rows) in &by_month {
            let first = rows.first().map_or(0, |&i| batch.events[i].position);
            pending.push(part("events", m, first));
        }
        for (m, rows) in &games_by_month {
            let first = rows.first().map_or(0, |&i| finished[i].0);
            for table in ["games", "seats", "results"] {
                pending.push(part(table, m, first));
            }
        }
        self.state.pending.clone_from(&pending);
        write_state(self.state_path, &self.state)?;

        let mut files = 0u64;
        let mut bytes = 0u64;
        let mut written = pending.iter();
        for rows in by_month.values() {
            let table = events_table(&batch.events, rows, &rulesets)?;
            if let Some(rel) = written.next() {
                bytes += write_parquet(self.dir, rel, &table)?;
                files += 1;
            }
        }
        for rows in games_by_month.values() {
            let games: Vec<&Finished> = rows.iter().map(|&i| &finished[i].1).collect();
            for table in [
                games_table(&games)?,
                seats_table(&games)?,
                results_table(&games)?,
            ] {
                if let Some(rel) = written.next() {
                    bytes += write_parquet(self.dir, rel, &table)?;
                    files += 1;
                }
            }
        }

        // The renames are durable before the state says the batch is done.
        let mut directories: Vec<&Path> = pending
            .iter()
            .filter_map(|rel| Path::new(rel).parent())
            .collect();
        directories.sort_unstable();
        directories.dedup();
        for d in directories {
            sync_directory(&self.dir.join(d))?;
        }

        let events = batch.events.len() as u64;
        let games = finished.len() as u64;
        self.state.tx_id = cursor.tx_id;
        self.state.position = cursor.position;
        self.state.events += events;
        self.state.games += games;
        self.state.files += files;
        self.state.pending.clear();
        write_state(self.state_path, &self.state)?;
        self.summary.events += events;
        self.summary.games += games;
        self.summary.files += files;
        self.summary.bytes += bytes;
        let seconds = self.started.elapsed().as_secs_f64();
        let _ = writeln!(
            self.progress,
            "export: {events} events and {games} finished games in {files} files ({bytes} bytes); \
             {} events this run, {:.1} s",
            self.summary.events, seconds
        );
        Ok(())
    }
}

/// `YYYY-MM` of an instant (UTC).
fn month(at: NaiveDateTime) -> String {
    at.format("%Y-%m").to_string()
}

/// Leaves out of an event's data what points at a person: every `account` and
/// `account_id` field, at any depth (`seat_taken`, a rematch's `reservations`), and the
/// game's `name` (its host's free text; the feed shows it for games public now, but a file
/// keeps it after the game turns private). Seats stay known by their index.
fn redact(event_type: &str, data: &mut Value) {
    strip_accounts(data);
    if event_type == "game_created"
        && let Some(name) = data.get_mut("name")
    {
        *name = Value::Null;
    }
}

fn strip_accounts(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.remove("account");
            fields.remove("account_id");
            fields.values_mut().for_each(strip_accounts);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_accounts),
        _ => {}
    }
}

/// Who played a seat of a finished game.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SeatInfo {
    /// `person` or `bot`: who sat down (a resigned person stays a person).
    kind: &'static str,
    /// A seated bot's strategy.
    strategy: Option<String>,
    /// The person resigned, or the seat was handed to a bot by its clock.
    resigned: bool,
}

/// A finished game folded from its public events.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Finished {
    game: String,
    ruleset: String,
    players: i32,
    rules_version: i32,
    /// The options in force, as JSON.
    options: String,
    tournament: Option<String>,
    created_at: NaiveDateTime,
    finished_at: NaiveDateTime,
    /// Rounds scored (`round_ended`; a game of a match, `nos_game_ended`).
    rounds: i32,
    seats: Vec<SeatInfo>,
    /// Penalty per seat: the sum of its round scores (lower is better).
    totals: Vec<i64>,
    winners: Vec<usize>,
}

impl Finished {
    /// A seat's place: 1 plus the seats with a lower total (equal totals share a place).
    fn place(&self, seat: usize) -> i32 {
        let mine = self.totals.get(seat).copied().unwrap_or(0);
        let better = self.totals.iter().filter(|&&t| t < mine).count();
        i32::try_from(better).unwrap_or(i32::MAX).saturating_add(1)
    }
}

fn seat_of(data: &Value) -> Result<usize, String> {
    data.get("seat")
        .and_then(Value::as_u64)
        .and_then(|s| usize::try_from(s).ok())
        .ok_or_else(|| format!("an event without a seat: {data}"))
}

fn int_of(data: &Value, key: &str) -> Result<i64, String> {
    data.get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("no integer {key} in {data}"))
}

/// Folds a finished game's public events (in `seq` order, through `game_finished`).
fn fold(log: &[ReadEvent]) -> Result<Finished, String> {
    let first = log.first().ok_or("no events")?;
    if first.event_type != "game_created" {
        return Err(format!("the first public event is {}", first.event_type));
    }
    let created = &first.data;
    let players = usize::try_from(int_of(created, "players")?).map_err(|e| e.to_string())?;
    let mut game = Finished {
        game: first.game_id.clone(),
        ruleset: created
            .get("ruleset")
            .and_then(Value::as_str)
            .ok_or("game_created without a ruleset")?
            .to_owned(),
        players: i32::try_from(players).map_err(|e| e.to_string())?,
        rules_version: i32::try_from(int_of(created, "rules_version")?)
            .map_err(|e| e.to_string())?,
        options: created
            .get("options")
            .cloned()
            .unwrap_or_default()
            .to_string(),
        tournament: created
            .pointer("/tournament/tournament")
            .and_then(Value::as_str)
            .map(str::to_owned),
        created_at: first.recorded_at,
        finished_at: first.recorded_at,
        rounds: 0,
        seats: Vec::new(),
        totals: vec![0; players],
        winners: Vec::new(),
    };
    let mut seats: Vec<Option<SeatInfo>> = vec![None; players];
    let mut finished = false;
    for e in &log[1..] {
        let data = &e.data;
        let seat = |seats: &[Option<SeatInfo>]| -> Result<usize, String> {
            let seat = seat_of(data)?;
            if seat < seats.len() {
                Ok(seat)
            } else {
                Err(format!("seat {seat} of {players}"))
            }
        };
        match e.event_type.as_str() {
            "seat_taken" => {
                let s = seat(&seats)?;
                seats[s] = Some(SeatInfo {
                    kind: "person",
                    strategy: None,
                    resigned: false,
                });
            }
            "bot_added" => {
                let s = seat(&seats)?;
                seats[s] = Some(SeatInfo {
                    kind: "bot",
                    strategy: data
                        .get("strategy")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    resigned: false,
                });
            }
            "seat_left" | "seat_removed" => {
                let s = seat(&seats)?;
                seats[s] = None;
            }
            "seat_resigned" | "seat_handed_to_bot" => {
                let s = seat(&seats)?;
                if let Some(info) = seats[s].as_mut() {
                    info.resigned = true;
                }
            }
            "round_ended" | "nos_game_ended" => {
                let scores = data
                    .get("scores")
                    .and_then(Value::as_array)
                    .ok_or_else(|| format!("{} without scores", e.event_type))?;
                if scores.len() != players {
                    return Err(format!("{} scores for {players} seats", scores.len()));
                }
                for (total, score) in game.totals.iter_mut().zip(scores) {
                    *total += score.as_i64().ok_or("a score that is no integer")?;
                }
                game.rounds += 1;
            }
            "game_finished" => {
                game.winners = data
                    .get("winners")
                    .and_then(Value::as_array)
                    .ok_or("game_finished without winners")?
                    .iter()
                    .filter_map(Value::as_u64)
                    .filter_map(|w| usize::try_from(w).ok())
                    .collect();
                game.finished_at = e.recorded_at;
                finished = true;
            }
            _ => {}
        }
    }
    if !finished {
        return Err("no game_finished".into());
    }
    game.seats = seats
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.ok_or_else(|| format!("seat {i} is empty at the end")))
        .collect::<Result<_, _>>()?;
    Ok(game)
}

/// The time zone of every timestamp column (Parquet: adjusted to UTC).
const UTC: &str = "UTC";

fn utc_micros() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
}

fn micros(at: NaiveDateTime) -> i64 {
    at.and_utc().timestamp_micros()
}

fn table(fields: Vec<Field>, columns: Vec<ArrayRef>) -> Result<RecordBatch, ExportError> {
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

/// `events`: game, position, seq, type, at, ruleset, data.
fn events_table(
    events: &[EventRow],
    rows: &[usize],
    rulesets: &std::collections::HashMap<String, String>,
) -> Result<RecordBatch, ExportError> {
    let rows: Vec<&EventRow> = rows.iter().map(|&i| &events[i]).collect();
    table(
        vec![
            Field::new("game", DataType::Utf8, false),
            Field::new("position", DataType::Int64, false),
            Field::new("seq", DataType::Int32, false),
            Field::new("type", DataType::Utf8, false),
            Field::new("at", utc_micros(), false),
            Field::new("ruleset", DataType::Utf8, true),
            Field::new("data", DataType::Utf8, false),
        ],
        vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|e| &e.game))),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|e| e.position),
            )),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|e| e.seq))),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|e| &e.event_type),
            )),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(rows.iter().map(|e| micros(e.at)))
                    .with_timezone(UTC),
            ),
            Arc::new(StringArray::from_iter(
                rows.iter().map(|e| rulesets.get(&e.game)),
            )),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|e| &e.data))),
        ],
    )
}

/// `games`: game, ruleset, players, rules_version, options, tournament, created_at,
/// finished_at, rounds.
fn games_table(games: &[&Finished]) -> Result<RecordBatch, ExportError> {
    table(
        vec![
            Field::new("game", DataType::Utf8, false),
            Field::new("ruleset", DataType::Utf8, false),
            Field::new("players", DataType::Int32, false),
            Field::new("rules_version", DataType::Int32, false),
            Field::new("options", DataType::Utf8, false),
            Field::new("tournament", DataType::Utf8, true),
            Field::new("created_at", utc_micros(), false),
            Field::new("finished_at", utc_micros(), false),
            Field::new("rounds", DataType::Int32, false),
        ],
        vec![
            Arc::new(StringArray::from_iter_values(games.iter().map(|g| &g.game))),
            Arc::new(StringArray::from_iter_values(
                games.iter().map(|g| &g.ruleset),
            )),
            Arc::new(Int32Array::from_iter_values(
                games.iter().map(|g| g.players),
            )),
            Arc::new(Int32Array::from_iter_values(
                games.iter().map(|g| g.rules_version),
            )),
            Arc::new(StringArray::from_iter_values(
                games.iter().map(|g| &g.options),
            )),
            Arc::new(StringArray::from_iter(
                games.iter().map(|g| g.tournament.as_deref()),
            )),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    games.iter().map(|g| micros(g.created_at)),
                )
                .with_timezone(UTC),
            ),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    games.iter().map(|g| micros(g.finished_at)),
                )
                .with_timezone(UTC),
            ),
            Arc::new(Int32Array::from_iter_values(games.iter().map(|g| g.rounds))),
        ],
    )
}

/// Every seat of the games, with its game: `(game, seat index)`.
fn seats_of<'a>(games: &'a [&'a Finished]) -> Vec<(&'a Finished, usize)> {
    games
        .iter()
        .flat_map(|g| (0..g.seats.len()).map(move |s| (*g, s)))
        .collect()
}

fn index(seat: usize) -> i32 {
    i32::try_from(seat).unwrap_or(i32::MAX)
}

/// `seats`: game, seat, kind, strategy, resigned.
fn seats_table(games: &[&Finished]) -> Result<RecordBatch, ExportError> {
    let rows = seats_of(games);
    let info = |(g, s): &(&Finished, usize)| g.seats.get(*s).cloned();
    table(
        vec![
            Field::new("game", DataType::Utf8, false),
            Field::new("seat", DataType::Int32, false),
            Field::new("kind", DataType::Utf8, false),
            Field::new("strategy", DataType::Utf8, true),
            Field::new("resigned", DataType::Boolean, false),
        ],
        vec![
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(g, _)| &g.game),
            )),
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|(_, s)| index(*s)),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| info(r).map_or("person", |i| i.kind)),
            )),
            Arc::new(StringArray::from_iter(
                rows.iter().map(|r| info(r).and_then(|i| i.strategy)),
            )),
            Arc::new(BooleanArray::from_iter(
                rows.iter()
                    .map(|r| Some(info(r).is_some_and(|i| i.resigned))),
            )),
        ],
    )
}

/// `results`: game, seat, penalty, place, winner, players, ruleset, rounds.
fn results_table(games: &[&Finished]) -> Result<RecordBatch, ExportError> {
    let rows = seats_of(games);
    table(
        vec![
            Field::new("game", DataType::Utf8, false),
            Field::new("seat", DataType::Int32, false),
            Field::new("penalty", DataType::Int64, false),
            Field::new("place", DataType::Int32, false),
            Field::new("winner", DataType::Boolean, false),
            Field::new("players", DataType::Int32, false),
            Field::new("ruleset", DataType::Utf8, false),
            Field::new("rounds", DataType::Int32, false),
        ],
        vec![
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(g, _)| &g.game),
            )),
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|(_, s)| index(*s)),
            )),
            Arc::new(Int64Array::from_iter_values(
                rows.iter()
                    .map(|(g, s)| g.totals.get(*s).copied().unwrap_or(0)),
            )),
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|(g, s)| g.place(*s)),
            )),
            Arc::new(BooleanArray::from_iter(
                rows.iter().map(|(g, s)| Some(g.winners.contains(s))),
            )),
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|(g, _)| g.players),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(g, _)| &g.ruleset),
            )),
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|(g, _)| g.rounds),
            )),
        ],
    )
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ExportError {
    let path = path.to_path_buf();
    move |source| ExportError::Io {
        action,
        path,
        source,
    }
}

/// Writes `table` to `dir/rel` (Snappy-compressed Parquet): under a temporary name that
/// no `*.parquet` pattern matches, synced, then renamed (the caller syncs the directory).
/// Returns the file's size.
fn write_parquet(dir: &Path, rel: &str, table: &RecordBatch) -> Result<u64, ExportError> {
    let path = dir.join(rel);
    let parent = path.parent().unwrap_or(dir);
    fs::create_dir_all(parent).map_err(io("create the directory", parent))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = parent.join(format!(".{name}.tmp"));
    let file = File::create(&temporary).map_err(io("create", &temporary))?;
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!("stammtisch {}", env!("CARGO_PKG_VERSION")))
        .build();
    let mut writer = ArrowWriter::try_new(&file, table.schema(), Some(properties))?;
    writer.write(table)?;
    writer.close()?;
    file.sync_all().map_err(io("sync", &temporary))?;
    let bytes = file
        .metadata()
        .map_err(io("read the size of", &temporary))?
        .len();
    fs::rename(&temporary, &path).map_err(io("rename into place", &path))?;
    Ok(bytes)
}

/// The directory's state, `None` when it has none yet.
fn read_state(path: &Path) -> Result<Option<State>, ExportError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ExportError::Io {
                action: "read",
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let state: State = serde_json::from_str(&text).map_err(|e| ExportError::BadState {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    if state.format != STATE_FORMAT {
        return Err(ExportError::BadState {
            path: path.to_path_buf(),
            detail: format!(
                "format {} (this version writes {STATE_FORMAT})",
                state.format
            ),
        });
    }
    Ok(Some(state))
}

/// Replaces the state file atomically: a temporary file, synced, renamed over it, and the
/// directory synced.
fn write_state(path: &Path, state: &State) -> Result<(), ExportError> {
    let temporary = path.with_extension("json.tmp");
    let mut text = serde_json::to_string_pretty(state).map_err(|e| ExportError::BadState {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    text.push('\n');
    let mut file = File::create(&temporary).map_err(io("create", &temporary))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io("write", &temporary))?;
    fs::rename(&temporary, path).map_err(io("replace", path))?;
    sync_directory(path.parent().unwrap_or(Path::new(".")))
}

/// Makes the renames in `dir` durable (on Unix a directory is synced like a file; elsewhere
/// a rename is left to the file system).
fn sync_directory(dir: &Path) -> Result<(), ExportError> {
    #[cfg(unix)]
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("sync the directory", dir))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn event(seq: i32, event_type: &str, data: Value) -> ReadEvent {
        ReadEvent {
            position: i64::from(seq) * 10,
            game_id: "g".into(),
            seq,
            event_type: event_type.into(),
            audience: "public".into(),
            stored_schema_version: 1,
            recorded_at: DateTime::from_timestamp(1_800_000_000 + i64::from(seq) * 60, 0)
                .unwrap()
                .naive_utc(),
            data,
            tx_id: 0,
        }
    }

    #[test]
    fn redacting_drops_accounts_at_any_depth_and_the_games_name() {
        let mut created = json!({
            "name": "Annas Runde", "players": 3,
            "reservations": [{ "seat": 1, "account": "acc-1" }],
        });
        redact("game_created", &mut created);
        assert_eq!(
            created,
            json!({ "name": null, "players": 3, "reservations": [{ "seat": 1 }] })
        );
        let mut taken = json!({ "seat": 2, "account": "acc-2" });
        redact("seat_taken", &mut taken);
        assert_eq!(taken, json!({ "seat": 2 }));
        // A bot's name is no person's: it stays.
        let mut bot = json!({ "seat": 1, "strategy": "random", "name": "Bot 2" });
        redact("bot_added", &mut bot);
        assert_eq!(bot["name"], "Bot 2");
    }

    fn game() -> Vec<ReadEvent> {
        vec![
            event(
                1,
                "game_created",
                json!({ "ruleset": "6-nimmt", "players": 3, "rules_version": 2,
                        "options": { "end": { "rounds": 2 } }, "name": null }),
            ),
            event(2, "seat_taken", json!({ "seat": 0 })),
            event(3, "bot_added", json!({ "seat": 1, "strategy": "random" })),
            event(
                4,
                "bot_added",
                json!({ "seat": 2, "strategy": "heuristic" }),
            ),
            event(5, "seat_removed", json!({ "seat": 2 })),
            event(6, "bot_added", json!({ "seat": 2, "strategy": "expert" })),
            event(7, "round_ended", json!({ "round": 1, "scores": [5, 3, 0] })),
            event(8, "seat_resigned", json!({ "seat": 0 })),
            event(9, "round_ended", json!({ "round": 2, "scores": [0, 2, 8] })),
            event(
                10,
                "game_finished",
                json!({ "winners": [0, 1], "seed": "00" }),
            ),
        ]
    }

    #[test]
    fn a_finished_games_seats_totals_places_and_winners_fold_from_its_events() {
        let g = fold(&game()).unwrap();
        assert_eq!(g.ruleset, "6-nimmt");
        assert_eq!((g.players, g.rules_version, g.rounds), (3, 2, 2));
        assert_eq!(g.options, r#"{"end":{"rounds":2}}"#);
        assert_eq!(g.totals, vec![5, 5, 8]);
        assert_eq!(g.winners, vec![0, 1]);
        assert_eq!(
            (g.place(0), g.place(1), g.place(2)),
            (1, 1, 3),
            "equal totals share a place"
        );
        let kinds: Vec<_> = g
            .seats
            .iter()
            .map(|s| (s.kind, s.strategy.as_deref(), s.resigned))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("person", None, true),
                ("bot", Some("random"), false),
                ("bot", Some("expert"), false)
            ]
        );
        assert_eq!(g.finished_at - g.created_at, chrono::TimeDelta::minutes(9));
    }

    #[test]
    fn a_game_without_its_end_or_with_an_empty_seat_is_refused() {
        let mut log = game();
        log.pop();
        assert_eq!(fold(&log).unwrap_err(), "no game_finished");
        let mut log = game();
        log.remove(5);
        assert_eq!(fold(&log).unwrap_err(), "seat 2 is empty at the end");
    }

    #[test]
    fn the_state_survives_a_round_trip_and_another_format_is_refused() {
        let dir = std::env::temp_dir().join(format!("stammtisch-export-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(STATE_FILE);
        assert_eq!(read_state(&path).unwrap(), None);
        let mut state = State::new(Some(DateTime::from_timestamp(1_800_000_000, 0).unwrap()));
        state.position = 42;
        state.pending = vec!["events/month=2027-01/part-1.parquet".into()];
        write_state(&path, &state).unwrap();
        assert_eq!(read_state(&path).unwrap(), Some(state));
        fs::write(&path, r#"{"format": 9}"#).unwrap();
        assert!(matches!(
            read_state(&path),
            Err(ExportError::BadState { .. })
        ));
        fs::remove_dir_all(&dir).unwrap();
    }
}
