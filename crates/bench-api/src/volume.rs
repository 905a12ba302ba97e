//! `bench-api volume`: the cost of the reads and writes players and analysts make as the
//! database grows (issue 30). For each backend and size it fills a fresh database with
//! `stammtisch fill` (a year of games played by the rules), rebuilds the ratings with
//! `stammtisch rebuild-ratings`, starts the server on it and measures, one request at a
//! time: the inbox (`awaiting=me`), a game view cold (first read after the start) and
//! cached (read again), the public lobby list, a leaderboard page, a profile and its history
//! page, a command (2-person games between filled accounts), the analysts' feed in events/s,
//! the start (spawn → `/readyz` 200) and the database's bytes per game.
//!
//! The accounts measured are `fill-<seed>-<n>`: three of the ten "regulars" (each at about
//! one table in a hundred, so their lists grow with the database) and typical accounts.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::client::{Api, Dice, PlayStats, Player, Sent, Table, http_client};
use crate::procfs;
use crate::server::{Backend, Database, Launch, Server, psql};
use crate::stats::{fmt_ms, numbers, percentile};

/// Flags of `bench-api volume`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Backends, comma-separated: `sqlite`, `postgres`.
    #[arg(long, default_value = "sqlite,postgres")]
    backends: String,
    /// Database sizes in games, comma-separated (each a fresh database).
    #[arg(long, default_value = "10000,100000")]
    sizes: String,
    /// Requests per read figure.
    #[arg(long, default_value_t = 200)]
    requests: usize,
    /// 2-person games played for the command figure.
    #[arg(long, default_value_t = 20)]
    tables: usize,
    /// At most this many events are read from the feed for its figure.
    #[arg(long, default_value_t = 200_000)]
    feed_events: usize,
    /// The fill's seed (its accounts are `fill-<seed>-<n>`).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

const PASSWORD: &str = "fill-password";

/// Runs every backend × size.
///
/// # Errors
/// A fill, rebuild or server that fails, a failed request.
pub fn run(args: &Args, launch: &Launch, pg_admin: &str) -> anyhow::Result<()> {
    let sizes = numbers(&args.sizes, "--sizes")?;
    if args.requests == 0 || args.tables == 0 {
        bail!("--requests and --tables must be at least 1");
    }
    println!(
        "bench-api volume: sizes {:?} games, {} requests per read, {} tables for commands; \
         server {}; {} cores; load before {}",
        sizes,
        args.requests,
        args.tables,
        launch.binary.display(),
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        procfs::load_average()
    );
    for backend in args.backends.split(',') {
        let backend = Backend::parse(backend.trim())?;
        for &games in &sizes {
            measure(args, launch, pg_admin, backend, games)?;
        }
    }
    Ok(())
}

/// Runs a `stammtisch` command on the database; its standard output.
fn stammtisch(launch: &Launch, url: &str, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(&launch.binary)
        .args(args)
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("running {} {args:?}", launch.binary.display()))?;
    if !out.status.success() {
        bail!("stammtisch {args:?} failed: {}", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The database's size in bytes.
fn database_bytes(db: &Database) -> anyhow::Result<u64> {
    if let Some(pg) = &db.pg {
        return psql(&pg.url, "SELECT pg_database_size(current_database())")?
            .trim()
            .parse()
            .context("pg_database_size");
    }
    let mut bytes = 0;
    for entry in std::fs::read_dir(&db.dir.path)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with("bench.db") {
            bytes += entry.metadata()?.len();
        }
    }
    Ok(bytes)
}

fn measure(
    args: &Args,
    launch: &Launch,
    pg_admin: &str,
    backend: Backend,
    games: u64,
) -> anyhow::Result<()> {
    let db = Database::fresh(backend, pg_admin)?;
    println!("== {} with {games} games", backend.name());
    let started = Instant::now();
    // One account per 15 games (the fill's default), named here so the reads know them.
    let accounts = (games / 15).max(40);
    let filled = stammtisch(
        launch,
        &db.url,
        &[
            "fill",
            "--games",
            &games.to_string(),
            "--accounts",
            &accounts.to_string(),
            "--seed",
            &args.seed.to_string(),
        ],
    )?;
    let fill_seconds = started.elapsed().as_secs_f64();
    println!("  fill: {filled}");
    let analyst = format!("fill-{}-10", args.seed);
    stammtisch(launch, &db.url, &["grant-role", &analyst, "analyst"])?;
    let started = Instant::now();
    let rebuilt = stammtisch(launch, &db.url, &["rebuild-ratings"])?;
    let rebuild = started.elapsed().as_secs_f64();
    // "ratings rebuilt from G finished games"; the log's size is the fill's "with E events".
    let rebuilt_games: f64 = rebuilt
        .split_whitespace()
        .find_map(|w| w.parse().ok())
        .unwrap_or(0.0);
    let log_events: f64 = filled
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .find_map(|w| {
            (w[1].trim_end_matches(',') == "events")
                .then(|| w[0].parse().ok())
                .flatten()
        })
        .unwrap_or(0.0);
    println!(
        "  rebuild-ratings: {rebuilt} in {rebuild:.1} s ({:.0} games/s; {:.0} events of the log/s)",
        rebuilt_games / rebuild.max(0.001),
        log_events / rebuild.max(0.001)
    );
    let bytes = database_bytes(&db)?;

    let spawned = Instant::now();
    let server = Server::start(launch, &db.url, &db.dir.path.join("server.log"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let api = Api {
        http: http_client(),
        base: server.base.clone(),
    };
    let pid = server.pid;
    let (ready, f) = runtime.block_on(async {
        let ready = wait_ready(&api, spawned).await?;
        let figures = reads(args, &api, &analyst, accounts).await?;
        anyhow::Ok((ready, figures))
    })?;
    println!(
        "{:<8} {games:>8} games: fill {fill_seconds:.0} s; start {} ms; db {:.1} MB ({:.0} bytes/game); \
         rebuild-ratings {rebuild:.1} s ({:.0} games/s, {:.0} events of the log/s)",
        backend.name(),
        fmt_ms(ready.as_secs_f64() * 1e3),
        bytes as f64 / 1e6,
        bytes as f64 / games as f64,
        rebuilt_games / rebuild.max(0.001),
        log_events / rebuild.max(0.001),
    );
    for (name, v) in &f.figures {
        println!(
            "  {name:<28} p50 {:>8} ms  p99 {:>8} ms  ({} requests)",
            fmt_ms(percentile(v, 50.0)),
            fmt_ms(percentile(v, 99.0)),
            v.len()
        );
    }
    println!(
        "  feed: {} events in {:.2} s ({:.0} events/s); server RSS {:.0} MB",
        f.feed_events,
        f.feed_seconds,
        f.feed_events as f64 / f.feed_seconds.max(0.001),
        procfs::rss_kib(pid).unwrap_or(0) as f64 / 1024.0
    );
    drop(server);
    Ok(())
}

/// Polls `/readyz` until 200 (at most ten minutes).
async fn wait_ready(api: &Api, spawned: Instant) -> anyhow::Result<Duration> {
    loop {
        if let Ok(r) = api.get("/readyz", None).await
            && r.status == 200
        {
            return Ok(spawned.elapsed());
        }
        if spawned.elapsed() > Duration::from_secs(600) {
            bail!("the server was not ready after ten minutes");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The figures of one database.
struct Figures {
    figures: Vec<(&'static str, Vec<u32>)>,
    feed_events: usize,
    feed_seconds: f64,
}

/// An account signed in.
struct Signed {
    player: Player,
    id: String,
}

async fn login(api: &Api, name: &str) -> anyhow::Result<Signed> {
    let r = api
        .post(
            "/v1/tokens",
            None,
            &json!({ "name": name, "password": PASSWORD }),
        )
        .await?;
    if r.status != 200 {
        bail!(
            "login {name}: status {}: {}",
            r.status,
            String::from_utf8_lossy(&r.body)
        );
    }
    let v: Value = serde_json::from_slice(&r.body)?;
    let auth = format!(
        "Bearer {}",
        v["access_token"].as_str().context("access_token")?
    );
    let me: Value = serde_json::from_slice(&api.get("/v1/me", Some(&auth)).await?.body)?;
    Ok(Signed {
        player: Player { auth },
        id: me["id"].as_str().context("/v1/me id")?.to_owned(),
    })
}

/// GETs `path` as `who`, expecting 200; the latency in µs and the body.
async fn timed(api: &Api, path: &str, who: &Player) -> anyhow::Result<(u32, Value)> {
    let t = Instant::now();
    let r = api.get(path, Some(&who.auth)).await?;
    let us = u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX);
    if r.status != 200 {
        bail!(
            "GET {path}: status {}: {}",
            r.status,
            String::from_utf8_lossy(&r.body)
        );
    }
    Ok((us, serde_json::from_slice(&r.body)?))
}

async fn reads(args: &Args, api: &Api, analyst: &str, accounts: u64) -> anyhow::Result<Figures> {
    let n = args.requests;
    // Three regulars and twenty typical accounts (numbers 11 and up, spread out).
    let mut regulars = Vec::new();
    for i in 0..3 {
        regulars.push(login(api, &format!("fill-{}-{i}", args.seed)).await?);
    }
    let mut typical = Vec::new();
    for i in 0..20 {
        let number = 11 + i * (accounts - 11) / 20;
        typical.push(login(api, &format!("fill-{}-{number}", args.seed)).await?);
    }
    let mut figures: Vec<(&'static str, Vec<u32>)> = Vec::new();

    let mut inbox = Vec::new();
    let mut inbox_regular = Vec::new();
    for k in 0..n {
        let who = &typical[k % typical.len()];
        inbox.push(timed(api, "/v1/games?awaiting=me", &who.player).await?.0);
        let who = &regulars[k % regulars.len()];
        inbox_regular.push(timed(api, "/v1/games?awaiting=me", &who.player).await?.0);
    }
    figures.push(("inbox (typical)", inbox));
    figures.push(("inbox (regular)", inbox_regular));

    // Game ids from the players' histories, each read as its player: first (cold, the
    // server has not loaded it since its start) and again (cached).
    let mut seen = std::collections::HashSet::new();
    let mut views = Vec::new();
    for who in typical.iter().chain(&regulars) {
        let (_, page) = timed(api, &format!("/v1/players/{}/games", who.id), &who.player).await?;
        for item in page["items"].as_array().into_iter().flatten() {
            if let Some(id) = item["game_id"].as_str()
                && seen.insert(id.to_owned())
            {
                views.push((id.to_owned(), &who.player));
            }
        }
    }
    views.truncate(n);
    let (mut cold, mut cached) = (Vec::new(), Vec::new());
    for (id, who) in &views {
        cold.push(timed(api, &format!("/v1/games/{id}"), who).await?.0);
        cached.push(timed(api, &format!("/v1/games/{id}"), who).await?.0);
    }
    figures.push(("game view (cold)", cold));
    figures.push(("game view (cached)", cached));

    let mut lobby = Vec::new();
    let mut board = Vec::new();
    let mut profile = Vec::new();
    let mut history = Vec::new();
    let mut profile_regular = Vec::new();
    let mut history_regular = Vec::new();
    let rulesets = ["6-nimmt", "11-nimmt", "x-nimmt", "nimm-oder-schieb"];
    for k in 0..n {
        let who = &typical[k % typical.len()];
        lobby.push(timed(api, "/v1/games?status=lobby", &who.player).await?.0);
        let ruleset = rulesets[k % rulesets.len()];
        board.push(
            timed(
                api,
                &format!("/v1/rulesets/{ruleset}/leaderboard"),
                &who.player,
            )
            .await?
            .0,
        );
        let other = &typical[(k + 1) % typical.len()];
        profile.push(
            timed(api, &format!("/v1/players/{}", other.id), &who.player)
                .await?
                .0,
        );
        history.push(
            timed(api, &format!("/v1/players/{}/games", other.id), &who.player)
                .await?
                .0,
        );
        let regular = &regulars[k % regulars.len()];
        profile_regular.push(
            timed(api, &format!("/v1/players/{}", regular.id), &who.player)
                .await?
                .0,
        );
        history_regular.push(
            timed(
                api,
                &format!("/v1/players/{}/games", regular.id),
                &who.player,
            )
            .await?
            .0,
        );
    }
    figures.push(("public lobby list", lobby));
    figures.push(("leaderboard page", board));
    figures.push(("profile (typical)", profile));
    figures.push(("history page (typical)", history));
    figures.push(("profile (regular)", profile_regular));
    figures.push(("history page (regular)", history_regular));

    // Commands: 2-person games between typical accounts, played to the end.
    let mut commands = Vec::new();
    let mut dice = Dice::new(args.seed);
    let mut stats = PlayStats::default();
    for t in 0..args.tables {
        let a = &typical[(2 * t) % typical.len()];
        let b = &typical[(2 * t + 1) % typical.len()];
        let mut record = |s: Sent| {
            commands.push(u32::try_from(s.latency.as_micros()).unwrap_or(u32::MAX));
        };
        let mut table =
            Table::start(api, [a.player.clone(), b.player.clone()], true, &mut record).await?;
        while !table.finished() {
            if !table.step(api, &mut dice, &mut stats, &mut record).await? {
                break;
            }
        }
    }
    figures.push(("command", commands));

    // The analysts' feed from its start, page by page.
    let analyst = login(api, analyst).await?;
    let started = Instant::now();
    let mut read = 0;
    let mut after: Option<String> = None;
    while read < args.feed_events {
        let path = match &after {
            Some(a) => format!("/v1/analytics/events?limit=1000&after={a}"),
            None => "/v1/analytics/events?limit=1000".to_owned(),
        };
        let (_, page) = timed(api, &path, &analyst.player).await?;
        read += page["items"].as_array().map_or(0, Vec::len);
        match page["next_cursor"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    let feed_seconds = started.elapsed().as_secs_f64();

    for (_, v) in &mut figures {
        v.sort_unstable();
    }
    Ok(Figures {
        figures,
        feed_events: read,
        feed_seconds,
    })
}
