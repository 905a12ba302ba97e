//! `bench-api api`: whole 2-person 6-nimmt games over HTTP with C concurrent clients, and
//! pgbench's one-row insert rate at the same client count in the same run.
//!
//! Owns the configurations (backend, replicas, clients), the measuring window, the
//! pgbench reference run on a scratch database, and the `pg_stat_activity` sampler. It
//! starts and stops its own server processes and never changes the server.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::client::{Api, Dice, PlayStats, Sent, Table, http_client};
use crate::procfs;
use crate::server::{Backend, Database, Launch, PgDatabase, Server, pg_backend_pids, psql};
use crate::stats::{fmt_ms, percentile};

/// Flags of `bench-api api`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Configurations: `BACKEND[xREPLICAS]:CLIENTS,CLIENTS…`, separated by spaces, e.g.
    /// `postgres:1,8,32 postgresx2:8 sqlite:1,8,32` (the default).
    #[arg(
        long,
        env = "BENCH_MATRIX",
        default_value = "postgres:1,8,32 postgresx2:8 sqlite:1,8,32"
    )]
    matrix: String,
    /// Seconds of measured play per configuration (after the warm-up).
    #[arg(long, env = "BENCH_SECONDS", default_value_t = 10.0)]
    seconds: f64,
    /// Seconds of play before measuring starts.
    #[arg(long, env = "BENCH_WARMUP", default_value_t = 2.0)]
    warmup: f64,
    /// Stop after this many measured commands instead (the time limit still applies).
    #[arg(long, env = "BENCH_COMMANDS")]
    commands: Option<u64>,
    /// Seconds of pgbench per configuration; 0 skips pgbench.
    #[arg(long, env = "BENCH_PGBENCH_SECONDS", default_value_t = 10)]
    pgbench_seconds: u64,
    /// Runs of each configuration (the machine is shared: at least 2 for reported figures).
    #[arg(long, env = "BENCH_RUNS", default_value_t = 1)]
    runs: usize,
    /// Seconds of the HTTP floor after each configuration: the same clients send only
    /// `GET /healthz` (no token, no database) to the same servers, which bounds what any
    /// command can reach through this generator and server; 0 skips it.
    #[arg(long, env = "BENCH_HTTP_FLOOR_SECONDS", default_value_t = 3.0)]
    http_floor_seconds: f64,
    /// Sample `pg_stat_activity` of the server's database every this many ms (0: never).
    #[arg(long, default_value_t = 250)]
    pg_activity_ms: u64,
}

/// One configuration of the matrix.
#[derive(Clone, Copy, Debug)]
struct Config {
    backend: Backend,
    replicas: usize,
    clients: usize,
}

impl Config {
    fn label(self) -> String {
        if self.replicas > 1 {
            format!("{} ×{}", self.backend.name(), self.replicas)
        } else {
            self.backend.name().to_owned()
        }
    }
}

fn parse_matrix(s: &str) -> anyhow::Result<Vec<Config>> {
    let mut out = Vec::new();
    for item in s.split_whitespace() {
        let (backend, clients) = item
            .split_once(':')
            .with_context(|| format!("{item:?}: expected BACKEND:CLIENTS,…"))?;
        let (backend, replicas) = match backend.split_once('x') {
            Some((b, r)) => (
                b,
                r.parse().with_context(|| format!("replicas in {item:?}"))?,
            ),
            None => (backend, 1),
        };
        if !(1..=8).contains(&replicas) {
            bail!("{item:?}: 1 to 8 replicas");
        }
        let backend = Backend::parse(backend)?;
        if backend == Backend::Sqlite && replicas > 1 {
            bail!("{item:?}: one process owns an SQLite file; replicas need postgres");
        }
        for c in clients.split(',') {
            let clients: usize = c.parse().with_context(|| format!("clients in {item:?}"))?;
            if !(1..=1024).contains(&clients) {
                bail!("{item:?}: 1 to 1024 clients");
            }
            out.push(Config {
                backend,
                replicas,
                clients,
            });
        }
    }
    if out.is_empty() {
        bail!("an empty matrix");
    }
    Ok(out)
}

/// What one run of one configuration measured.
struct Outcome {
    config: Config,
    run: usize,
    load_before: String,
    commands: u64,
    seconds: f64,
    p50_ms: f64,
    p99_ms: f64,
    events_per_command: f64,
    reads: u64,
    refused: u64,
    errors: u64,
    games: u64,
    server_cpu: f64,
    generator_cpu: f64,
    /// CPU of the PostgreSQL backends serving the server's database.
    pg_cpu: Option<f64>,
    pg_activity: Option<String>,
    /// `pg_stat_database` counters per command over the whole run.
    pg_work: Option<String>,
    pgbench_tps: Option<f64>,
    pgbench_load_before: String,
    /// Commands per group-commit batch over the whole run (the servers' `/metrics`).
    batch_mean: Option<f64>,
    /// `GET /healthz` per second with the same clients and servers.
    http_floor: Option<f64>,
}

impl Outcome {
    fn per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.commands as f64 / self.seconds
        } else {
            0.0
        }
    }

    fn floor_share(&self) -> Option<f64> {
        self.http_floor
            .filter(|f| *f > 0.0)
            .map(|f| self.per_second() / f)
    }

    fn ratio(&self) -> Option<f64> {
        self.pgbench_tps
            .filter(|t| *t > 0.0)
            .map(|t| self.per_second() / t)
    }
}

/// Runs the matrix and prints a line per run and a markdown table at the end.
///
/// # Errors
/// A server that does not start, PostgreSQL or pgbench missing.
pub fn run(args: &Args, launch: &Launch, pg_admin: &str) -> anyhow::Result<()> {
    let matrix = parse_matrix(&args.matrix)?;
    let needs_pg =
        args.pgbench_seconds > 0 || matrix.iter().any(|c| c.backend == Backend::Postgres);
    let pgbench = if args.pgbench_seconds > 0 {
        Some(Pgbench::new(pg_admin)?)
    } else {
        None
    };
    if needs_pg {
        psql(pg_admin, "SELECT 1").with_context(|| format!("PostgreSQL at {pg_admin}"))?;
    }
    println!(
        "bench-api: whole 2-person 6-nimmt games over HTTP; {} s measured after {} s warm-up{}; server {} (rate limits {:?}); {} cores",
        args.seconds,
        args.warmup,
        args.commands
            .map(|c| format!(" (or {c} commands)"))
            .unwrap_or_default(),
        launch.binary.display(),
        launch.limits,
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    let mut outcomes = Vec::new();
    for run in 1..=args.runs {
        for &config in &matrix {
            let mut outcome = measure(config, run, args, launch, pg_admin)?;
            if let Some(pgbench) = &pgbench {
                outcome.pgbench_load_before = procfs::load_average();
                outcome.pgbench_tps = Some(pgbench.tps(config.clients, args.pgbench_seconds)?);
            }
            print_line(&outcome);
            outcomes.push(outcome);
        }
    }
    print_table(&outcomes);
    Ok(())
}

fn print_line(o: &Outcome) {
    println!(
        "{:<12} clients={:<3} run {}: {:>7.0} commands/s  p50 {} ms  p99 {} ms  {:.2} events/command  \
         ({} commands in {:.1} s, {} games finished, {} reads, {} refused guesses, {} errors; \
         CPU in % of a core: server {:.0}, PostgreSQL backends {}, generator {:.0}; \
         {} commands per group-commit batch; load before {})",
        o.config.label(),
        o.config.clients,
        o.run,
        o.per_second(),
        fmt_ms(o.p50_ms),
        fmt_ms(o.p99_ms),
        o.events_per_command,
        o.commands,
        o.seconds,
        o.games,
        o.reads,
        o.refused,
        o.errors,
        o.server_cpu,
        o.pg_cpu.map_or("–".into(), |c| format!("{c:.0}")),
        o.generator_cpu,
        o.batch_mean.map_or("–".into(), |b| format!("{b:.2}")),
        o.load_before
    );
    if let Some(tps) = o.pgbench_tps {
        println!(
            "{:<12} clients={:<3} run {}: pgbench one-row insert {:>7.0} tps (load before {}); ratio commands/s ÷ tps = {:.3}",
            o.config.label(),
            o.config.clients,
            o.run,
            tps,
            o.pgbench_load_before,
            o.ratio().unwrap_or(0.0)
        );
    }
    if let (Some(floor), Some(share)) = (o.http_floor, o.floor_share()) {
        println!(
            "{:<12} clients={:<3} run {}: HTTP floor (GET /healthz, same clients and servers) {:>7.0} requests/s; commands/s ÷ floor = {:.3}",
            o.config.label(),
            o.config.clients,
            o.run,
            floor,
            share
        );
    }
    if let Some(work) = &o.pg_work {
        println!(
            "{:<12} clients={:<3} run {}: pg_stat_database per command (whole run, warm-up and reads included): {work}",
            o.config.label(),
            o.config.clients,
            o.run
        );
    }
    if let Some(activity) = &o.pg_activity {
        println!(
            "{:<12} clients={:<3} run {}: pg_stat_activity of the server's database (mean connections per sample): {activity}",
            o.config.label(),
            o.config.clients,
            o.run
        );
    }
}

fn print_table(outcomes: &[Outcome]) {
    println!();
    println!(
        "| backend | clients | run | commands/s | p50 ms | p99 ms | events/command | pgbench insert tps | ratio | HTTP floor req/s | commands ÷ floor | server CPU % | PG backends CPU % | generator CPU % | commands/batch | load before |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for o in outcomes {
        println!(
            "| {} | {} | {} | {:.0} | {} | {} | {:.2} | {} | {} | {} | {} | {:.0} | {} | {:.0} | {} | {} |",
            o.config.label(),
            o.config.clients,
            o.run,
            o.per_second(),
            fmt_ms(o.p50_ms),
            fmt_ms(o.p99_ms),
            o.events_per_command,
            o.pgbench_tps.map_or("–".into(), |t| format!("{t:.0}")),
            o.ratio().map_or("–".into(), |r| format!("{r:.3}")),
            o.http_floor.map_or("–".into(), |f| format!("{f:.0}")),
            o.floor_share().map_or("–".into(), |r| format!("{r:.3}")),
            o.server_cpu,
            o.pg_cpu.map_or("–".into(), |c| format!("{c:.0}")),
            o.generator_cpu,
            o.batch_mean.map_or("–".into(), |b| format!("{b:.2}")),
            o.load_before
        );
    }
}

/// Shared between the clients of one configuration.
struct Shared {
    stop: AtomicBool,
    measuring: AtomicBool,
    /// Commands still to measure when `--commands` is given.
    budget: Option<AtomicI64>,
    first_error: Mutex<Option<String>>,
}

/// What one client counted.
#[derive(Default)]
struct Tally {
    /// Commands in the measuring window.
    commands: u64,
    /// Commands of the whole run, warm-up included.
    all_commands: u64,
    events: i64,
    latencies_us: Vec<u32>,
    stats: PlayStats,
    errors: u64,
    games: u64,
}

fn measure(
    config: Config,
    run: usize,
    args: &Args,
    launch: &Launch,
    pg_admin: &str,
) -> anyhow::Result<Outcome> {
    let db = Database::fresh(config.backend, pg_admin)?;
    let mut servers = Vec::new();
    // One after the other: the first creates the schema and the token secret.
    for r in 0..config.replicas {
        let log = db.dir.path.join(format!("server-{r}.log"));
        servers.push(Server::start(launch, &db.url, &log)?);
    }
    let pids: Vec<u32> = servers.iter().map(|s| s.pid).collect();
    let load_before = procfs::load_average();
    let http = http_client();
    let apis: Vec<Api> = servers
        .iter()
        .map(|s| Api {
            http: http.clone(),
            base: s.base.clone(),
        })
        .collect();
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        measuring: AtomicBool::new(false),
        budget: args
            .commands
            .map(|c| AtomicI64::new(i64::try_from(c).unwrap_or(i64::MAX))),
        first_error: Mutex::new(None),
    });
    let sampler = match (&db.pg, args.pg_activity_ms) {
        (Some(pg), ms) if ms > 0 => Some(ActivitySampler::start(
            pg_admin,
            &pg.name,
            Duration::from_millis(ms),
        )?),
        _ => None,
    };
    let counters_before = db
        .pg
        .as_ref()
        .and_then(|pg| DbCounters::read(pg_admin, &pg.name));
    // The backends of the pools (which may open connections on demand), looked up without
    // blocking the clients.
    let pg_name = db.pg.as_ref().map(|pg| pg.name.clone());
    let backends = || {
        let (admin, name) = (pg_admin.to_owned(), pg_name.clone());
        async move {
            match name {
                Some(name) => tokio::task::spawn_blocking(move || pg_backend_pids(&admin, &name))
                    .await
                    .unwrap_or_default(),
                None => Vec::new(),
            }
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (tallies, seconds, server_cpu, generator_cpu, pg_cpu, batch_mean, http_floor) = runtime
        .block_on(async {
            let mut tasks = Vec::new();
            for c in 0..config.clients {
                let api = apis[c % apis.len()].clone();
                let shared = shared.clone();
                tasks.push(tokio::spawn(client(api, shared, c as u64 + 1)));
            }
            tokio::time::sleep(Duration::from_secs_f64(args.warmup)).await;
            let pg0 = procfs::CpuWindow::start(&backends().await);
            let (server0, self0) = (procfs::cpu_seconds_of(&pids), procfs::cpu_seconds("self"));
            let started = Instant::now();
            if let Some(s) = &sampler {
                s.measuring.store(true, Ordering::SeqCst);
            }
            shared.measuring.store(true, Ordering::SeqCst);
            let limit = Duration::from_secs_f64(args.seconds);
            while started.elapsed() < limit && !shared.stop.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            shared.measuring.store(false, Ordering::SeqCst);
            let seconds = started.elapsed().as_secs_f64();
            if let Some(s) = &sampler {
                s.measuring.store(false, Ordering::SeqCst);
            }
            let server_cpu =
                procfs::percent_of_core(server0, procfs::cpu_seconds_of(&pids), seconds);
            let backends_now = backends().await;
            let pg_cpu = (!backends_now.is_empty())
                .then(|| procfs::percent_of_core(0.0, pg0.seconds(&backends_now), seconds));
            let generator_cpu = procfs::percent_of_core(
                self0.unwrap_or(0.0),
                procfs::cpu_seconds("self").unwrap_or(0.0),
                seconds,
            );
            shared.stop.store(true, Ordering::SeqCst);
            let mut tallies = Vec::new();
            for t in tasks {
                if let Ok(t) = t.await {
                    tallies.push(t);
                }
            }
            let mut batched = (0.0, 0.0);
            for api in &apis {
                if let Ok(reply) = api.get("/metrics", None).await {
                    let text = String::from_utf8_lossy(&reply.body);
                    batched.0 += metric(&text, "stammtisch_batched_commands_total").unwrap_or(0.0);
                    batched.1 += metric(&text, "stammtisch_command_batches_total").unwrap_or(0.0);
                }
            }
            let batch_mean = (batched.1 > 0.0).then(|| batched.0 / batched.1);
            let http_floor = if args.http_floor_seconds > 0.0 {
                Some(http_floor(&apis, config.clients, args.http_floor_seconds).await)
            } else {
                None
            };
            (
                tallies,
                seconds,
                server_cpu,
                generator_cpu,
                pg_cpu,
                batch_mean,
                http_floor,
            )
        });
    drop(runtime);
    let pg_activity = sampler.map(ActivitySampler::finish);
    for s in &mut servers {
        if !s.alive() {
            eprintln!("warning: a server process exited during the run");
        }
    }
    // Backends flush their statistics when they exit: read them after the servers are gone.
    drop(servers);
    let all_commands: u64 = tallies.iter().map(|t| t.all_commands).sum();
    let pg_work = match (&db.pg, &counters_before) {
        (Some(pg), Some(before)) => {
            std::thread::sleep(Duration::from_millis(300));
            DbCounters::read(pg_admin, &pg.name)
                .map(|after| after.per_command(before, all_commands))
        }
        _ => None,
    };
    if let Ok(guard) = shared.first_error.lock()
        && let Some(e) = guard.as_ref()
    {
        eprintln!("first client error: {e}");
    }
    let mut latencies: Vec<u32> = tallies
        .iter()
        .flat_map(|t| t.latencies_us.iter().copied())
        .collect();
    latencies.sort_unstable();
    let commands: u64 = tallies.iter().map(|t| t.commands).sum();
    let events: i64 = tallies.iter().map(|t| t.events).sum();
    Ok(Outcome {
        config,
        run,
        load_before,
        commands,
        seconds,
        p50_ms: percentile(&latencies, 50.0),
        p99_ms: percentile(&latencies, 99.0),
        events_per_command: if commands > 0 {
            events as f64 / commands as f64
        } else {
            0.0
        },
        reads: tallies.iter().map(|t| t.stats.reads).sum(),
        refused: tallies.iter().map(|t| t.stats.refused).sum(),
        errors: tallies.iter().map(|t| t.errors).sum(),
        games: tallies.iter().map(|t| t.games).sum(),
        server_cpu,
        generator_cpu,
        pg_cpu,
        pg_activity,
        pg_work,
        pgbench_tps: None,
        pgbench_load_before: String::new(),
        batch_mean,
        http_floor,
    })
}

/// `GET /healthz` from `clients` tasks for `seconds` (after a short warm-up), spread over
/// the servers like the game clients: requests per second.
async fn http_floor(apis: &[Api], clients: usize, seconds: f64) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let counting = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicI64::new(0));
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (api, stop, counting, done) = (
            apis[c % apis.len()].clone(),
            stop.clone(),
            counting.clone(),
            done.clone(),
        );
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                match api.get("/healthz", None).await {
                    Ok(reply) if reply.status == 200 => {
                        if counting.load(Ordering::Relaxed) {
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    _ => tokio::time::sleep(Duration::from_millis(10)).await,
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    counting.store(true, Ordering::SeqCst);
    let started = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    counting.store(false, Ordering::SeqCst);
    let elapsed = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        let _ = t.await;
    }
    done.load(Ordering::SeqCst) as f64 / elapsed
}

/// The value of a counter in Prometheus text.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
}

/// One client: two guest accounts, then games until told to stop.
async fn client(api: Api, shared: Arc<Shared>, seed: u64) -> Tally {
    let mut tally = Tally::default();
    let mut dice = Dice::new(seed);
    // Guest names are unique: each client's pair has its own.
    let players = match (
        api.guest(&format!("anna{seed}")).await,
        api.guest(&format!("bert{seed}")).await,
    ) {
        (Ok(a), Ok(b)) => [a, b],
        (Err(e), _) | (_, Err(e)) => {
            note_error(&shared, &mut tally, &e);
            return tally;
        }
    };
    while !shared.stop.load(Ordering::Relaxed) {
        if let Err(e) = play(&api, &players, &shared, &mut tally, &mut dice).await {
            note_error(&shared, &mut tally, &e);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    tally
}

fn note_error(shared: &Shared, tally: &mut Tally, e: &anyhow::Error) {
    tally.errors += 1;
    if let Ok(mut first) = shared.first_error.lock()
        && first.is_none()
    {
        *first = Some(format!("{e:#}"));
    }
}

async fn play(
    api: &Api,
    players: &[crate::client::Player; 2],
    shared: &Shared,
    tally: &mut Tally,
    dice: &mut Dice,
) -> anyhow::Result<()> {
    let mut record = |sent: Sent| {
        tally.all_commands += 1;
        if !shared.measuring.load(Ordering::Relaxed) {
            return;
        }
        tally.commands += 1;
        tally.events += i64::from(sent.events);
        tally
            .latencies_us
            .push(u32::try_from(sent.latency.as_micros()).unwrap_or(u32::MAX));
        if let Some(budget) = &shared.budget
            && budget.fetch_sub(1, Ordering::Relaxed) <= 1
        {
            shared.stop.store(true, Ordering::Relaxed);
        }
    };
    let mut table = Table::start(api, players.clone(), false, &mut record).await?;
    let mut stats = PlayStats::default();
    let result = loop {
        if table.finished() {
            break Ok(true);
        }
        if shared.stop.load(Ordering::Relaxed) {
            break Ok(false);
        }
        match table.step(api, dice, &mut stats, &mut record).await {
            Ok(true) => {}
            Ok(false) => break Err(anyhow::anyhow!("nobody must act in an unfinished game")),
            Err(e) => break Err(e),
        }
    };
    tally.stats.reads += stats.reads;
    tally.stats.refused += stats.refused;
    if result? {
        tally.games += 1;
    }
    Ok(())
}

/// Cumulative counters of one database from `pg_stat_database`.
struct DbCounters {
    commits: f64,
    rollbacks: f64,
    inserted: f64,
    updated: f64,
    deleted: f64,
}

impl DbCounters {
    fn read(admin: &str, database: &str) -> Option<Self> {
        let out = psql(
            admin,
            &format!(
                "SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted \
                 FROM pg_stat_database WHERE datname = '{database}'"
            ),
        )
        .ok()?;
        let v: Vec<f64> = out
            .trim()
            .split('|')
            .filter_map(|x| x.parse().ok())
            .collect();
        match v[..] {
            [commits, rollbacks, inserted, updated, deleted] => Some(Self {
                commits,
                rollbacks,
                inserted,
                updated,
                deleted,
            }),
            _ => None,
        }
    }

    fn per_command(&self, before: &Self, commands: u64) -> String {
        let n = commands.max(1) as f64;
        format!(
            "{:.2} transactions committed, {:.3} rolled back, rows: {:.2} inserted, {:.2} updated, {:.2} deleted ({commands} commands)",
            (self.commits - before.commits) / n,
            (self.rollbacks - before.rollbacks) / n,
            (self.inserted - before.inserted) / n,
            (self.updated - before.updated) / n,
            (self.deleted - before.deleted) / n,
        )
    }
}

/// pgbench's one-row insert on a scratch table in a scratch database (dropped on drop).
struct Pgbench {
    db: PgDatabase,
    script: crate::server::TempDir,
}

impl Pgbench {
    fn new(admin: &str) -> anyhow::Result<Self> {
        Command::new("pgbench")
            .arg("--version")
            .output()
            .context("pgbench is needed (the PostgreSQL client tools)")?;
        let db = PgDatabase::create(admin, "stammtisch_pgbench")?;
        psql(
            &db.url,
            "CREATE TABLE inserts (id bigserial PRIMARY KEY, v integer NOT NULL)",
        )?;
        let script = crate::server::TempDir::new()?;
        std::fs::write(
            script.path.join("insert.sql"),
            "INSERT INTO inserts (v) VALUES (1);\n",
        )?;
        Ok(Self { db, script })
    }

    /// `pgbench -n -f insert.sql -c C -j C -T secs`; its tps.
    fn tps(&self, clients: usize, seconds: u64) -> anyhow::Result<f64> {
        let out = Command::new("pgbench")
            .arg("-n")
            .arg("-f")
            .arg(self.script.path.join("insert.sql"))
            .args(["-c", &clients.to_string(), "-j", &clients.to_string()])
            .args(["-T", &seconds.to_string()])
            .arg(&self.db.url)
            .output()
            .context("running pgbench")?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            bail!(
                "pgbench failed: {}{}",
                text,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        parse_pgbench_tps(&text).with_context(|| format!("no tps in pgbench output:\n{text}"))
    }
}

fn parse_pgbench_tps(text: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// Samples `pg_stat_activity` for one database through a single long-lived `psql`.
struct ActivitySampler {
    measuring: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<(u64, HashMap<String, u64>)>,
}

impl ActivitySampler {
    fn start(admin: &str, database: &str, every: Duration) -> anyhow::Result<Self> {
        let mut child = Command::new("psql")
            .args(["-X", "-q", "-A", "-t", "-d", admin])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting psql for pg_stat_activity")?;
        let mut stdin = child.stdin.take().context("psql stdin")?;
        let stdout = child.stdout.take().context("psql stdout")?;
        let query = format!(
            "SELECT state || coalesce(' ' || wait_event_type || ':' || wait_event, ''), count(*) \
             FROM pg_stat_activity WHERE datname = '{database}' AND backend_type = 'client backend' \
             GROUP BY 1;\n\\echo __end__\n"
        );
        let measuring = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let (m, s) = (measuring.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let mut samples = 0u64;
            let mut totals: HashMap<String, u64> = HashMap::new();
            while !s.load(Ordering::SeqCst) {
                std::thread::sleep(every);
                if !m.load(Ordering::SeqCst) {
                    continue;
                }
                if stdin.write_all(query.as_bytes()).is_err() || stdin.flush().is_err() {
                    break;
                }
                samples += 1;
                for line in lines.by_ref() {
                    let Ok(line) = line else { break };
                    if line == "__end__" {
                        break;
                    }
                    if let Some((label, n)) = line.rsplit_once('|')
                        && let Ok(n) = n.parse::<u64>()
                    {
                        *totals.entry(label.to_owned()).or_default() += n;
                    }
                }
            }
            drop(stdin);
            let _ = child.wait();
            (samples, totals)
        });
        Ok(Self {
            measuring,
            stop,
            thread,
        })
    }

    /// Stops sampling; the mean number of connections in each state, largest first.
    fn finish(self) -> String {
        self.stop.store(true, Ordering::SeqCst);
        let Ok((samples, totals)) = self.thread.join() else {
            return "sampler failed".into();
        };
        if samples == 0 {
            return "no samples".into();
        }
        let mut rows: Vec<(String, f64)> = totals
            .into_iter()
            .map(|(k, v)| (k, v as f64 / samples as f64))
            .collect();
        rows.sort_by(|a, b| b.1.total_cmp(&a.1));
        let parts: Vec<String> = rows.iter().map(|(k, v)| format!("{v:.1} {k}")).collect();
        format!("{} ({samples} samples)", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn matrix_items_name_backend_replicas_and_clients() {
        let m = parse_matrix("postgres:1,8 postgresx2:8 sqlite:32").unwrap();
        let got: Vec<(Backend, usize, usize)> = m
            .iter()
            .map(|c| (c.backend, c.replicas, c.clients))
            .collect();
        assert_eq!(
            got,
            vec![
                (Backend::Postgres, 1, 1),
                (Backend::Postgres, 1, 8),
                (Backend::Postgres, 2, 8),
                (Backend::Sqlite, 1, 32)
            ]
        );
        assert!(parse_matrix("sqlitex2:8").is_err());
        assert!(parse_matrix("mysql:8").is_err());
        assert!(parse_matrix("postgres:0").is_err());
        assert!(parse_matrix("").is_err());
    }

    #[test]
    fn reads_a_counter_from_prometheus_text() {
        let text = "# HELP stammtisch_command_batches_total x\n\
                    # TYPE stammtisch_command_batches_total counter\n\
                    stammtisch_command_batches_total 12\n\
                    stammtisch_batched_commands_total 30\n";
        assert_eq!(
            super::metric(text, "stammtisch_command_batches_total"),
            Some(12.0)
        );
        assert_eq!(
            super::metric(text, "stammtisch_batched_commands_total"),
            Some(30.0)
        );
        assert_eq!(super::metric(text, "stammtisch_games_created_total"), None);
    }

    #[test]
    fn reads_tps_from_pgbench_output() {
        let out = "number of transactions actually processed: 41234\nlatency average = 0.242 ms\n\
                   initial connection time = 2.113 ms\ntps = 4123.456789 (without initial connection time)\n";
        assert!((parse_pgbench_tps(out).unwrap() - 4_123.456_789).abs() < 1e-6);
        assert_eq!(parse_pgbench_tps("no figures"), None);
    }
}
