//! `bench-api working-set`: N active games played in turn (every game one move, then every
//! game again), so the server's state cache holds a working set of N games; it prints the
//! cache's hit rate over the played passes (the server's `/metrics`), the command latency,
//! the server's RSS and the cache's estimated bytes.
//!
//! Owns its server process and scratch database. Games are 2-person 6-nimmt games, each
//! of a pair of guests out of a pool of pairs (a game per pair would make 2N guests).

use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::client::{Api, Dice, PlayStats, Player, Sent, Table, http_client};
use crate::procfs;
use crate::server::{Backend, Database, Launch, Server};
use crate::stats::{fmt_ms, numbers, percentile};

/// Flags of `bench-api working-set`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Backends, comma-separated: `sqlite`, `postgres`.
    #[arg(long, default_value = "sqlite,postgres")]
    backends: String,
    /// Active games (the working set).
    #[arg(long, default_value_t = 100_000)]
    games: usize,
    /// Passes of play over all games after the first (one move per game per pass).
    #[arg(long, default_value_t = 2)]
    passes: usize,
    /// Concurrent clients; each plays its share of the games in turn.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// The server's `STATE_CACHE_MB` values to run, comma-separated (each a fresh run).
    #[arg(long, default_value = "256")]
    cache_mb: String,
}

/// A number of `/metrics`.
async fn metric(api: &Api, name: &str) -> anyhow::Result<u64> {
    let r = api.get("/metrics", None).await?;
    let text = String::from_utf8_lossy(&r.body);
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .with_context(|| format!("{name} missing from /metrics"))
}

/// One client's share: creates its games, then plays one move of each in turn per pass,
/// recording the play phase's command latencies (µs).
async fn client(
    api: Api,
    pairs: Vec<[Player; 2]>,
    games: usize,
    passes: usize,
    seed: u64,
    ready: std::sync::Arc<tokio::sync::Barrier>,
) -> anyhow::Result<(Vec<u32>, PlayStats)> {
    let mut tables = Vec::with_capacity(games);
    let mut ignore = |_: Sent| {};
    for i in 0..games {
        let players = pairs[i % pairs.len()].clone();
        tables.push(Table::start(&api, players, false, &mut ignore).await?);
    }
    // The first pass makes every game's state the latest the server wrote; the measured
    // passes start together.
    ready.wait().await;
    let mut dice = Dice::new(seed);
    let mut stats = PlayStats::default();
    let mut latencies = Vec::with_capacity(games * passes);
    let mut record = |s: Sent| {
        latencies.push(u32::try_from(s.latency.as_micros()).unwrap_or(u32::MAX));
    };
    for _ in 0..passes {
        for table in &mut tables {
            if !table.finished() {
                table.step(&api, &mut dice, &mut stats, &mut record).await?;
            }
        }
    }
    Ok((latencies, stats))
}

/// Runs every backend × cache size.
///
/// # Errors
/// A server that does not start, a failed request.
pub fn run(args: &Args, launch: &Launch, pg_admin: &str) -> anyhow::Result<()> {
    if args.games == 0 || args.clients == 0 || args.passes == 0 {
        bail!("--games, --clients and --passes must be at least 1");
    }
    let cache_sizes = numbers(&args.cache_mb, "--cache-mb")?;
    println!(
        "bench-api working-set: {} active 2-person 6-nimmt games, {} passes of one move each, \
         {} clients; server {}; {} cores; load before {}",
        args.games,
        args.passes,
        args.clients,
        launch.binary.display(),
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        procfs::load_average()
    );
    for backend in args.backends.split(',') {
        let backend = Backend::parse(backend.trim())?;
        for &mb in &cache_sizes {
            measure(args, launch, pg_admin, backend, mb)?;
        }
    }
    Ok(())
}

fn measure(
    args: &Args,
    launch: &Launch,
    pg_admin: &str,
    backend: Backend,
    cache_mb: u64,
) -> anyhow::Result<()> {
    let db = Database::fresh(backend, pg_admin)?;
    let server = Server::start_with(
        launch,
        &db.url,
        &db.dir.path.join("server.log"),
        &[("STATE_CACHE_MB", &cache_mb.to_string())],
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let api = Api {
        http: http_client(),
        base: server.base.clone(),
    };
    let pid = server.pid;
    let clients = args.clients;
    let games = args.games;
    let passes = args.passes;
    runtime.block_on(async move {
        // 200 pairs of guests host every game between them.
        let mut pairs = Vec::new();
        for i in 0..200.min(games) {
            pairs.push([
                api.guest(&format!("ws-a{i}")).await?,
                api.guest(&format!("ws-b{i}")).await?,
            ]);
        }
        let ready = std::sync::Arc::new(tokio::sync::Barrier::new(clients + 1));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..clients {
            let share = games / clients + usize::from(c < games % clients);
            let mine: Vec<[Player; 2]> = pairs.iter().skip(c).step_by(clients).cloned().collect();
            let mine = if mine.is_empty() { pairs.clone() } else { mine };
            tasks.push(tokio::spawn(client(
                api.clone(),
                mine,
                share,
                passes,
                c as u64 + 1,
                ready.clone(),
            )));
        }
        // Wait for every game to be created, reporting progress.
        let progress = {
            let api = api.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    if let Ok(n) = metric(&api, "stammtisch_games_created_total").await {
                        eprintln!(
                            "  … {n} games created after {:.0} s",
                            started.elapsed().as_secs_f64()
                        );
                    }
                }
            })
        };
        ready.wait().await;
        progress.abort();
        let set_up = started.elapsed();
        let hits_before = metric(&api, "stammtisch_state_cache_hits_total").await?;
        let misses_before = metric(&api, "stammtisch_state_cache_misses_total").await?;
        let play = Instant::now();
        let mut latencies = Vec::new();
        let mut stats = PlayStats::default();
        for t in tasks {
            let (l, s) = t.await??;
            latencies.extend(l);
            stats.reads += s.reads;
            stats.refused += s.refused;
        }
        let played = play.elapsed();
        let hits = metric(&api, "stammtisch_state_cache_hits_total").await? - hits_before;
        let misses = metric(&api, "stammtisch_state_cache_misses_total").await? - misses_before;
        let entries = metric(&api, "stammtisch_state_cache_entries").await?;
        let bytes = metric(&api, "stammtisch_state_cache_bytes").await?;
        latencies.sort_unstable();
        let loads = hits + misses;
        println!(
            "{:<8} STATE_CACHE_MB={cache_mb:<4} {games} games set up in {:.0} s; {} passes: \
             {} commands in {:.1} s ({:.0}/s), p50 {} ms, p99 {} ms; cache hit rate {:.1} % \
             ({hits} of {loads} loads), {entries} states cached, {:.1} MB estimated; server \
             RSS {:.0} MB; {} reads, {} refused guesses",
            backend.name(),
            set_up.as_secs_f64(),
            passes,
            latencies.len(),
            played.as_secs_f64(),
            latencies.len() as f64 / played.as_secs_f64(),
            fmt_ms(percentile(&latencies, 50.0)),
            fmt_ms(percentile(&latencies, 99.0)),
            if loads == 0 {
                0.0
            } else {
                100.0 * hits as f64 / loads as f64
            },
            bytes as f64 / 1e6,
            procfs::rss_kib(pid).unwrap_or(0) as f64 / 1024.0,
            stats.reads,
            stats.refused,
        );
        anyhow::Ok(())
    })?;
    drop(server);
    Ok(())
}
