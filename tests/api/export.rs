//! `stammtisch export` (docs/analytics.md, "Exports (Parquet)"): a small history played over
//! HTTP is exported to Parquet twice (the second run goes on where the first stopped), and
//! DuckDB reads the files (`tests/export/query.py` with the venv of `scripts/export-venv`):
//! the documented queries answer what the games' own views and the analysts' feed say, every
//! event of the feed is in the files exactly once, and no hidden event, account or game name
//! is in any file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::analytics::{analyst, read_feed, settle};
use crate::both;
use crate::support::{Api, Backend, Player, TestDb, TestServer, play_randomly, start_game};

/// Event types the feed never shows.
const HIDDEN_TYPES: [&str; 5] = [
    "hand_dealt",
    "card_selected",
    "seed_recorded",
    "draw_pile_set",
    "deal_prepared",
];

/// `target/export-venv/bin/python`, which has DuckDB; the test fails without it.
fn python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/export-venv/bin/python");
    assert!(
        python.is_file(),
        "DuckDB for the export test is missing ({}): run scripts/export-venv (scripts/setup, \
         the first step of ./scripts/test, runs it)",
        python.display()
    );
    python
}

/// The documented DuckDB queries and every table of the export in `dir`, as JSON.
fn duckdb(dir: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/export/query.py");
    let out = Command::new(python())
        .arg(script)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "query.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What a run of the binary said.
struct Ran {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `stammtisch export ARGS` on the database at `url`.
fn export(url: &str, args: &[&str]) -> Ran {
    let out = Command::new(env!("CARGO_BIN_EXE_stammtisch"))
        .arg("export")
        .args(args)
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let ran = Ran {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !ran.stderr.contains("panicked"),
        "the export panicked: {}",
        ran.stderr
    );
    ran
}

/// Runs an export that must succeed; returns its one-line summary.
fn export_ok(url: &str, args: &[&str]) -> String {
    let ran = export(url, args);
    assert!(ran.ok, "export {args:?} failed: {}", ran.stderr);
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one summary line: {}", ran.stdout);
    lines[0].to_owned()
}

/// Every file below `dir` with its bytes, by path relative to `dir`.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, into: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, into);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                into.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut found = BTreeMap::new();
    walk(dir, dir, &mut found);
    found
}

fn parquet_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    files(dir)
        .into_iter()
        .filter(|(p, _)| p.ends_with(".parquet"))
        .collect()
}

/// The feed's data as the export must show it: no `account` at any depth, no game name.
fn redacted(event_type: &str, data: &Value) -> Value {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| *k != "account" && *k != "account_id")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    let mut data = strip(data);
    if event_type == "game_created" {
        data["name"] = Value::Null;
    }
    data
}

/// A finished game: its final view (from a person's seat) and its ruleset.
struct Finished {
    id: String,
    view: Value,
}

/// Plays `body` with `people` (the first hosts) and `bots` to the end, people moving at
/// random from `seed`; with no seed the host resigns at once and the bots finish.
fn play(api: &Api, people: &[Player], body: &Value, bots: &[&str], seed: Option<u64>) -> Finished {
    let id = start_game(api, people, body, bots);
    let view = match seed {
        Some(seed) => play_randomly(api, people, &id, seed),
        None => {
            api.ok(&people[0], &id, &json!({ "type": "resign" }));
            api.view(&people[0], &id)
        }
    };
    assert_eq!(view["status"], "finished", "{view}");
    Finished { id, view }
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Who played a seat, as the documented query names it, from the game's view.
fn played_by(seat: &Value) -> String {
    if seat["resigned"] == true {
        "resigned".into()
    } else if seat["bot"] == true {
        seat["strategy"].as_str().unwrap().into()
    } else {
        "person".into()
    }
}

fn instant(at: &Value) -> chrono::DateTime<chrono::Utc> {
    at.as_str().unwrap().parse().unwrap()
}

/// Asserts that the documented queries' rows are `expected`: the same keys in the same order,
/// numbers within `tolerance[column]` (what the query's rounding allows), the rest equal.
fn assert_rows(name: &str, got: &Value, expected: &[Value], tolerance: &[(&str, f64)]) {
    let got = got.as_array().unwrap();
    assert_eq!(
        got.len(),
        expected.len(),
        "{name}: {got:#?}\nexpected {expected:#?}"
    );
    for (g, e) in got.iter().zip(expected) {
        for (column, want) in e.as_object().unwrap() {
            let have = &g[column];
            match tolerance.iter().find(|(c, _)| c == column) {
                Some((_, t)) => assert!(
                    (num(have) - num(want)).abs() <= *t,
                    "{name}.{column}: {have} against the server's {want}\nrow {g}"
                ),
                None => assert_eq!(have, want, "{name}.{column} in {g}"),
            }
        }
    }
}

fn exporting_played_games_to_parquet_answers_the_documented_duckdb_queries(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let ada = analyst(&server, &api);
    let url = server.db.url.clone();
    let out = server.log.with_file_name("export");
    let out_arg = out.display().to_string();

    // People with names that occur nowhere else; one hosts a public game named after her.
    let zora = api.guest("zwiebelfisch");
    let quinn = api.guest("quarkstrudel");
    let rhea = api.guest("rhabarbella");
    let kai = api.guest("kohlrabiene");
    let pia = api.guest("pastinakus");
    let fritz = api.guest("schnittlauchs");
    let gina = api.guest("muskatnuss");
    let everyone = [&zora, &quinn, &rhea, &kai, &pia, &fritz, &gina];
    let public_name = "Runde bei zwiebelfisch am Marktplatz";

    let mut finished = vec![
        play(
            &api,
            &[zora.clone(), quinn.clone()],
            &json!({ "ruleset": "6-nimmt", "players": 4, "public": true, "name": public_name,
                     "options": { "end": { "rounds": 1 } } }),
            &["random", "heuristic"],
            Some(7),
        ),
        play(
            &api,
            std::slice::from_ref(&rhea),
            &json!({ "ruleset": "6-nimmt", "players": 3, "options": { "end": { "rounds": 1 } } }),
            &["random", "random"],
            Some(11),
        ),
        play(
            &api,
            std::slice::from_ref(&kai),
            &json!({ "ruleset": "11-nimmt", "players": 3, "options": { "end": { "rounds": 1 } } }),
            &["heuristic", "random"],
            Some(13),
        ),
        play(
            &api,
            std::slice::from_ref(&pia),
            &json!({ "ruleset": "x-nimmt", "players": 3, "options": { "deals": 1 } }),
            &["heuristic", "heuristic"],
            Some(17),
        ),
        // Her person resigns at once: the bots finish the game.
        play(
            &api,
            std::slice::from_ref(&quinn),
            &json!({ "ruleset": "nimm-oder-schieb", "players": 3 }),
            &["random", "heuristic"],
            None,
        ),
    ];
    // A running game: its hands are dealt, and must not get out.
    let running = start_game(
        &api,
        std::slice::from_ref(&fritz),
        &json!({ "ruleset": "6-nimmt", "players": 3 }),
        &["random", "heuristic"],
    );
    assert_eq!(api.view(&fritz, &running)["status"], "active");

    // The first export, in batches of 40 events: several part files per month.
    settle(&api);
    let first = export(&url, &["--out", &out_arg, "--batch-events", "40"]);
    assert!(first.ok, "{}", first.stderr);
    let batches = first
        .stderr
        .lines()
        .filter(|l| l.starts_with("export: "))
        .count();
    assert!(batches >= 3, "a progress line per batch: {}", first.stderr);
    assert!(
        first.stdout.starts_with("exported ") && first.stdout.contains("finished games"),
        "{}",
        first.stdout
    );
    let after_first = parquet_files(&out);
    let first_events = duckdb(&out)["tables"]["events"].as_array().unwrap().len();
    assert!(
        first.stdout.contains(&format!(
            "exported {first_events} events and 5 finished games"
        )),
        "{}",
        first.stdout
    );

    // The instant between the two halves of the history (the server's clock records events).
    let between = api.server_now().to_rfc3339();
    // One more game, then the second run goes on from the state.
    finished.push(play(
        &api,
        std::slice::from_ref(&gina),
        &json!({ "ruleset": "6-nimmt", "players": 4, "options": { "end": { "rounds": 1 } } }),
        &["random", "heuristic", "random"],
        Some(19),
    ));
    settle(&api);
    let second = export_ok(&url, &["--out", &out_arg]);
    assert!(
        second.contains("and 1 finished games") && second.contains("(resumed)"),
        "{second}"
    );
    let after_second = parquet_files(&out);
    for (path, bytes) in &after_first {
        assert_eq!(
            after_second.get(path),
            Some(bytes),
            "the second run rewrote or removed {path}"
        );
    }
    assert!(after_second.len() > after_first.len(), "new part files");
    // Nothing new: a third run writes nothing.
    let third = export_ok(&url, &["--out", &out_arg]);
    assert!(
        third.starts_with("exported 0 events and 0 finished games into 0 files"),
        "{third}"
    );
    assert_eq!(parquet_files(&out), after_second);

    // A range: --to stops before the second half (a later run without it goes on), --from
    // keeps only the second half and its one finished game.
    let total: usize = first_events
        + second
            .strip_prefix("exported ")
            .and_then(|r| r.split(' ').next())
            .unwrap()
            .parse::<usize>()
            .unwrap();
    let until = out.with_file_name("until");
    let until_arg = until.display().to_string();
    let to = export_ok(&url, &["--out", &until_arg, "--to", &between]);
    assert!(
        to.starts_with(&format!(
            "exported {first_events} events and 5 finished games"
        )),
        "{to}"
    );
    let rest = export_ok(&url, &["--out", &until_arg]);
    assert!(
        rest.contains(&format!("holds {total} events (resumed)")),
        "{rest}"
    );
    let since = out.with_file_name("since");
    let since_arg = since.display().to_string();
    let from = export_ok(&url, &["--out", &since_arg, "--from", &between]);
    assert!(
        from.starts_with(&format!(
            "exported {} events and 1 finished games",
            total - first_events
        )),
        "{from}"
    );

    let answer = duckdb(&out);
    let tables = &answer["tables"];
    let events = tables["events"].as_array().unwrap();

    // Every event of the feed, once, with its data less accounts and names.
    let mut feed = Vec::new();
    read_feed(&api, &ada, &mut 0, &mut feed);
    assert_eq!(
        events.len(),
        feed.len(),
        "as many rows as the feed has events"
    );
    let keys: BTreeSet<(String, i64)> = events
        .iter()
        .map(|e| {
            (
                e["game"].as_str().unwrap().to_owned(),
                e["seq"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(keys.len(), events.len(), "no (game, seq) twice");
    let by_position: BTreeMap<i64, &Value> = events
        .iter()
        .map(|e| (e["position"].as_i64().unwrap(), e))
        .collect();
    assert_eq!(by_position.len(), events.len(), "no position twice");
    let state: Value =
        serde_json::from_slice(&std::fs::read(out.join("_export_state.json")).unwrap()).unwrap();
    assert_eq!(state["events"], events.len());
    let rulesets: BTreeMap<String, String> = finished
        .iter()
        .map(|g| (g.id.clone(), g.view["ruleset"].as_str().unwrap().to_owned()))
        .chain([(running.clone(), "6-nimmt".to_owned())])
        .collect();
    for item in &feed {
        let row = by_position[&item["position"].as_i64().unwrap()];
        assert_eq!(row["game"], item["game_id"]);
        assert_eq!(row["seq"], item["seq"]);
        assert_eq!(row["type"], item["type"]);
        assert_eq!(row["ruleset"], rulesets[item["game_id"].as_str().unwrap()]);
        assert_eq!(
            instant(&row["at"]).timestamp_micros(),
            instant(&item["at"]).timestamp_micros(),
            "{row} against {item}"
        );
        let data: Value = serde_json::from_str(row["data"].as_str().unwrap()).unwrap();
        assert_eq!(
            data,
            redacted(item["type"].as_str().unwrap(), &item["data"]),
            "{item}"
        );
        let month = instant(&item["at"]).format("%Y-%m").to_string();
        assert_eq!(row["month"], month, "partitioned by the month of `at`");
    }
    let types: BTreeSet<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    for hidden in HIDDEN_TYPES {
        assert!(!types.contains(hidden), "{hidden} in the export");
    }
    assert!(
        events.iter().any(|e| e["game"] == running.as_str()),
        "the running game's public events are exported"
    );
    assert!(
        feed.iter()
            .any(|e| e["type"] == "game_created" && e["data"]["name"] == public_name),
        "the feed shows the public game's name (which the export leaves out)"
    );

    // The typed columns, as DuckDB reads them.
    let columns = |table: &str| -> Vec<(String, String)> {
        answer["columns"][table]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c[0].as_str().unwrap().into(), c[1].as_str().unwrap().into()))
            .collect()
    };
    let expect = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).into(), (*b).into()))
            .collect()
    };
    assert_eq!(
        columns("events"),
        expect(&[
            ("game", "VARCHAR"),
            ("position", "BIGINT"),
            ("seq", "INTEGER"),
            ("type", "VARCHAR"),
            ("at", "TIMESTAMP WITH TIME ZONE"),
            ("ruleset", "VARCHAR"),
            ("data", "VARCHAR"),
            ("month", "VARCHAR"),
        ])
    );
    assert_eq!(
        columns("seats"),
        expect(&[
            ("game", "VARCHAR"),
            ("seat", "INTEGER"),
            ("kind", "VARCHAR"),
            ("strategy", "VARCHAR"),
            ("resigned", "BOOLEAN"),
            ("month", "VARCHAR"),
        ])
    );

    // games, seats and results: the finished games only, as their views say.
    let games = tables["games"].as_array().unwrap();
    let ids: BTreeSet<&str> = games.iter().map(|g| g["game"].as_str().unwrap()).collect();
    let expected_ids: BTreeSet<&str> = finished.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(
        ids, expected_ids,
        "one row per finished game, no running one"
    );
    assert_eq!(games.len(), finished.len());
    let seats = tables["seats"].as_array().unwrap();
    let results = tables["results"].as_array().unwrap();
    for g in &finished {
        let view = &g.view;
        let row = games.iter().find(|r| r["game"] == g.id.as_str()).unwrap();
        assert_eq!(row["ruleset"], view["ruleset"]);
        assert_eq!(row["players"], view["players"]);
        assert_eq!(row["rules_version"], view["rules_version"]);
        assert_eq!(row["rounds"], view["scores"].as_array().unwrap().len());
        let winners: Vec<u64> = view["winners"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_u64().unwrap())
            .collect();
        let totals: Vec<i64> = view["totals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_i64().unwrap())
            .collect();
        for (i, seat) in view["seats"].as_array().unwrap().iter().enumerate() {
            let of = |rows: &[Value]| -> Value {
                rows.iter()
                    .find(|r| r["game"] == g.id.as_str() && r["seat"] == i)
                    .unwrap_or_else(|| panic!("no row for seat {i} of {}", g.id))
                    .clone()
            };
            let s = of(seats);
            let resigned = seat["resigned"] == true;
            let person = seat["account_id"].is_string() || resigned;
            assert_eq!(s["kind"], if person { "person" } else { "bot" }, "{s}");
            assert_eq!(s["resigned"], resigned);
            if !person {
                assert_eq!(s["strategy"], seat["strategy"]);
            }
            let r = of(results);
            assert_eq!(r["penalty"], totals[i], "{r} against {view}");
            assert_eq!(r["winner"], winners.contains(&(i as u64)), "{r}");
            let place = 1 + totals.iter().filter(|&&t| t < totals[i]).count();
            assert_eq!(r["place"], place);
        }
    }
    assert!(
        finished.iter().any(|g| g.view["seats"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["resigned"] == true)),
        "the history has a resigned seat"
    );

    // The documented queries against the server's figures.
    // penalty_by_seat: the views' totals.
    let mut penalties: BTreeMap<(String, i64, i64), Vec<f64>> = BTreeMap::new();
    for g in &finished {
        for (seat, total) in g.view["totals"].as_array().unwrap().iter().enumerate() {
            penalties
                .entry((
                    g.view["ruleset"].as_str().unwrap().into(),
                    g.view["players"].as_i64().unwrap(),
                    seat as i64,
                ))
                .or_default()
                .push(num(total));
        }
    }
    let expected: Vec<Value> = penalties
        .iter()
        .map(|((ruleset, players, seat), totals)| {
            json!({ "ruleset": ruleset, "players": players, "seat": seat,
                    "games": totals.len(), "mean_penalty": mean(totals) })
        })
        .collect();
    let queries = &answer["queries"];
    assert_rows(
        "penalty_by_seat",
        &queries["penalty_by_seat"],
        &expected,
        &[("mean_penalty", 0.0051)],
    );
    // win_rate_by_strategy: the views' seats and winners.
    let mut wins: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for g in &finished {
        let winners = g.view["winners"].as_array().unwrap();
        for (i, seat) in g.view["seats"].as_array().unwrap().iter().enumerate() {
            let won = winners.iter().any(|w| w.as_u64() == Some(i as u64));
            wins.entry(played_by(seat))
                .or_default()
                .push(f64::from(u8::from(won)));
        }
    }
    assert!(
        wins.contains_key("random") && wins.contains_key("heuristic"),
        "two strategies"
    );
    let expected: Vec<Value> = wins
        .iter()
        .map(|(by, won)| {
            json!({ "played_by": by, "seats": won.len(),
                    "wins": won.iter().sum::<f64>() as i64, "win_rate": mean(won) })
        })
        .collect();
    assert_rows(
        "win_rate_by_strategy",
        &queries["win_rate_by_strategy"],
        &expected,
        &[("win_rate", 0.00051)],
    );
    // game_length_by_ruleset: the views' rounds, the feed's moves and times.
    let mut lengths: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
    for g in &finished {
        let of_game: Vec<&Value> = feed
            .iter()
            .filter(|e| e["game_id"] == g.id.as_str())
            .collect();
        let at = |t: &str| instant(&of_game.iter().find(|e| e["type"] == t).unwrap()["at"]);
        let moves = of_game
            .iter()
            .filter(|e| {
                ["card_placed", "card_taken", "passed"].contains(&e["type"].as_str().unwrap())
            })
            .count();
        let seconds = (at("game_finished") - at("game_created"))
            .num_microseconds()
            .unwrap() as f64
            / 1e6;
        lengths
            .entry(g.view["ruleset"].as_str().unwrap().into())
            .or_default()
            .push((
                g.view["scores"].as_array().unwrap().len() as f64,
                moves as f64,
                seconds,
            ));
    }
    let expected: Vec<Value> = lengths
        .iter()
        .map(|(ruleset, games)| {
            let column =
                |f: fn(&(f64, f64, f64)) -> f64| mean(&games.iter().map(f).collect::<Vec<_>>());
            json!({ "ruleset": ruleset, "games": games.len(),
                    "mean_rounds": column(|g| g.0), "mean_moves": column(|g| g.1),
                    "mean_seconds": column(|g| g.2) })
        })
        .collect();
    assert_rows(
        "game_length_by_ruleset",
        &queries["game_length_by_ruleset"],
        &expected,
        &[
            ("mean_rounds", 0.0051),
            ("mean_moves", 0.051),
            ("mean_seconds", 0.06),
        ],
    );
    assert_eq!(lengths.len(), 4, "four rulesets");

    // Nothing personal or hidden in any file's bytes, nor in what DuckDB reads from them.
    let decoded = tables.to_string();
    let mut secrets: Vec<String> = everyone
        .iter()
        .flat_map(|p| [p.name.clone(), p.id.clone()])
        .collect();
    secrets.push(ada.id.clone());
    secrets.push(public_name.into());
    for (path, bytes) in files(&out) {
        let text = String::from_utf8_lossy(&bytes);
        for secret in secrets.iter().map(String::as_str).chain(HIDDEN_TYPES) {
            assert!(!text.contains(secret), "{secret} in {path}");
            assert!(!decoded.contains(secret), "{secret} in the exported rows");
        }
    }

    // A run that stopped half-way left files of its batch: the next run removes them.
    let stray = out.join("events/month=2000-01/part-1.parquet");
    std::fs::create_dir_all(stray.parent().unwrap()).unwrap();
    std::fs::write(&stray, b"half a file").unwrap();
    let mut state = state;
    state["pending"] = json!(["events/month=2000-01/part-1.parquet"]);
    std::fs::write(out.join("_export_state.json"), state.to_string()).unwrap();
    let ran = export(&url, &["--out", &out_arg]);
    assert!(ran.ok, "{}", ran.stderr);
    assert!(!stray.exists(), "the unfinished batch's file is removed");
    assert!(ran.stderr.contains("unfinished batch"), "{}", ran.stderr);
    assert_eq!(parquet_files(&out), after_second);

    eprintln!(
        "export on {backend:?}: {} events, {} bytes of Parquet in {} files; first run: {}",
        events.len(),
        after_second.values().map(Vec::len).sum::<usize>(),
        after_second.len(),
        first.stdout.trim()
    );
    for (name, rows) in queries.as_object().unwrap() {
        eprintln!("{name}: {rows}");
    }
}

fn the_export_refuses_bad_arguments_and_directories_with_a_message(backend: Backend) {
    let db = TestDb::new(backend);
    let dir = std::env::temp_dir().join(format!("stammtisch-export-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("export");
    let out_arg = out.display().to_string();

    let ran = export(&db.url, &["--out", &out_arg, "--from", "yesterday"]);
    assert!(
        !ran.ok && ran.stderr.contains("--from") && ran.stderr.contains("RFC 3339"),
        "{}",
        ran.stderr
    );
    let ran = export(
        &db.url,
        &[
            "--out",
            &out_arg,
            "--from",
            "2027-01-02T00:00:00Z",
            "--to",
            "2027-01-01T00:00:00+01:00",
        ],
    );
    assert!(
        !ran.ok && ran.stderr.contains("is not before --to"),
        "{}",
        ran.stderr
    );
    assert!(!out.exists(), "nothing written for refused arguments");

    let file = dir.join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let under_file = file.join("export").display().to_string();
    let ran = export(&db.url, &["--out", &under_file]);
    assert!(
        !ran.ok && ran.stderr.contains("cannot create the export directory"),
        "{}",
        ran.stderr
    );

    // An empty feed exports nothing; the directory then keeps its --from.
    let summary = export_ok(&db.url, &["--out", &out_arg]);
    assert!(summary.starts_with("exported 0 events"), "{summary}");
    let ran = export(
        &db.url,
        &["--out", &out_arg, "--from", "2027-01-01T00:00:00Z"],
    );
    assert!(
        !ran.ok && ran.stderr.contains("use the same --from"),
        "{}",
        ran.stderr
    );

    std::fs::write(out.join("_export_state.json"), b"{ not json").unwrap();
    let ran = export(&db.url, &["--out", &out_arg]);
    assert!(
        !ran.ok && ran.stderr.contains("not an export state"),
        "{}",
        ran.stderr
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

both!(
    exporting_played_games_to_parquet_answers_the_documented_duckdb_queries,
    the_export_refuses_bad_arguments_and_directories_with_a_message,
);
