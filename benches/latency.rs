//! Command latency against PostgreSQL as a game's event stream grows.
//!
//! Plays 2-person 6-nimmt games through the service (the same load → decide → append path
//! the HTTP handlers use) on a fresh PostgreSQL database and times every `play_card`.
//! Prints the median latency of commands on streams of about 10 events and of about 1,000.
//! Run: `cargo bench --bench latency` (PostgreSQL at `STAMMTISCH_TEST_PG_URL`, default
//! `postgres://postgres@127.0.0.1:5432/postgres`; `GAMES`, default 12).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

use diesel::{Connection, RunQueryDsl};

use rules::{Command, EndCondition, Options, Ruleset, Setup};
use stammtisch::games::{CommandOutcome, CommandRequest, CreateRequest, Service};
use stammtisch::notify::Notifier;
use stammtisch::store::Store;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    let admin = std::env::var("STAMMTISCH_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let games: usize = std::env::var("GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let name = format!("stammtisch_bench_{}", uuid::Uuid::new_v4().simple());
    let mut conn =
        diesel::PgConnection::establish(&admin).expect("PostgreSQL is needed for this benchmark");
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .unwrap();
    let url = format!(
        "{}/{name}",
        admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b)
    );
    let store = Store::connect(&url).unwrap();
    store.migrate().unwrap();
    let cached = std::env::var("NO_CACHE").is_err();
    let service = if cached {
        Service::new(store.clone(), Notifier::new())
    } else {
        Service::new(store.clone(), Notifier::new()).without_cache()
    };
    let (mut short, mut long) = (Vec::new(), Vec::new());
    for g in 0..games {
        let options = Options {
            end: EndCondition::Rounds(50),
            ..Ruleset::SixNimmt.default_options()
        };
        let body = service
            .create(CreateRequest {
                account: "anna",
                name: "anna",
                setup: Setup {
                    ruleset: Ruleset::SixNimmt,
                    options,
                    players: 2,
                },
                game_name: None,
                deal: None,
                move_deadline_seconds: None,
                time_control: None,
                public: true,
            })
            .unwrap();
        let id = body.id.clone();
        let run = |account: &str, command: Command| -> (i32, Duration) {
            let start = Instant::now();
            let outcome = service
                .execute(&CommandRequest {
                    game: &id,
                    account,
                    name: account,
                    command,
                    if_match: None,
                    idempotency_key: None,
                    invite_code: None,
                    token_version: None,
                    announced: None,
                })
                .unwrap();
            let elapsed = start.elapsed();
            match outcome {
                CommandOutcome::Applied(body) => (body.version, elapsed),
                CommandOutcome::Replayed { .. } => unreachable!("no idempotency keys here"),
            }
        };
        run("bert", Command::Join {});
        run("anna", Command::Start {});
        let mut version = 0;
        while version < 1100 {
            for account in ["anna", "bert"] {
                let view = service.view(&id, account).unwrap();
                let Some(cmd) = view
                    .view
                    .legal
                    .iter()
                    .find(|c| !matches!(c, Command::Resign {}))
                    .cloned()
                else {
                    continue;
                };
                let before = view.version;
                let (after, took) = run(account, cmd);
                version = after;
                if (10..=60).contains(&before) {
                    short.push(took);
                } else if (1000..=1100).contains(&before) {
                    long.push(took);
                }
            }
        }
        eprintln!("game {}/{games} played to {version} events", g + 1);
    }
    let (s, l) = (median(short.clone()), median(long.clone()));
    println!(
        "command latency on PostgreSQL, 2-person 6-nimmt, {games} games, state cache {}",
        if cached { "on" } else { "off (NO_CACHE)" }
    );
    println!(
        "  stream of 10–60 events:      median {:>8.2} ms over {} commands",
        s.as_secs_f64() * 1e3,
        short.len()
    );
    println!(
        "  stream of 1000–1100 events:  median {:>8.2} ms over {} commands",
        l.as_secs_f64() * 1e3,
        long.len()
    );
    println!(
        "  ratio long / short: {:.2} (target ≤ 1.2)",
        l.as_secs_f64() / s.as_secs_f64()
    );
    // The analysts' feed: every public event, read in pages and written as NDJSON lines.
    let start = Instant::now();
    let (mut after, mut exported, mut bytes) = (0i64, 0usize, 0usize);
    let analytics = stammtisch::analytics::Analytics::new(store.clone());
    loop {
        let page = analytics.feed(after, 1000).unwrap();
        let Some(last) = page.last() else { break };
        after = last.position;
        for e in &page {
            let line = serde_json::json!({
                "position": e.position, "game_id": e.game_id, "seq": e.seq, "type": e.event_type,
                "at": e.recorded_at.and_utc().to_rfc3339(), "data": e.data,
            })
            .to_string();
            bytes += line.len() + 1;
            exported += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "feed export: {exported} public events ({:.1} MB of NDJSON) in {secs:.2} s = {:.0} events/s",
        bytes as f64 / 1e6,
        exported as f64 / secs
    );
    drop(service);
    diesel::sql_query(format!("DROP DATABASE {name} WITH (FORCE)"))
        .execute(&mut conn)
        .ok();
}
