//! `bench-api startup`: how long the server takes from spawn to its first `200` from
//! `/readyz`, on a fresh database and again on the same database (a restart).
//!
//! Owns only its server processes and scratch databases.

use std::time::{Duration, Instant};

use anyhow::bail;

use crate::client::http_client;
use crate::procfs;
use crate::server::{Backend, Database, Launch, Server};
use crate::stats::{fmt_ms, percentile};

/// Flags of `bench-api startup`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The database to start on: `sqlite` or `postgres`.
    #[arg(long, default_value = "sqlite")]
    backend: String,
    /// Starts to time.
    #[arg(long, default_value_t = 10)]
    runs: usize,
}

/// Spawn → first `200` from `/readyz` (polled every millisecond), and spawn → the
/// "listening on" line.
async fn time_start(
    launch: &Launch,
    db: &Database,
    log: &str,
) -> anyhow::Result<(Duration, Duration)> {
    let http = http_client();
    let t0 = Instant::now();
    let server = Server::start(launch, &db.url, &db.dir.path.join(log))?;
    let url = format!("{}/readyz", server.base);
    loop {
        if let Ok(r) = http.get(&url).send().await
            && r.status() == 200
        {
            return Ok((server.listening_after, t0.elapsed()));
        }
        if t0.elapsed() > Duration::from_secs(60) {
            bail!("/readyz did not answer 200 within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Times `runs` fresh starts and as many restarts; prints each and the medians.
///
/// # Errors
/// A server that does not start or never gets ready.
pub fn run(args: &Args, launch: &Launch, pg_admin: &str) -> anyhow::Result<()> {
    let backend = Backend::parse(&args.backend)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    println!(
        "bench-api startup: {} on {}, {} runs; load before {}",
        launch.binary.display(),
        backend.name(),
        args.runs,
        procfs::load_average()
    );
    let (mut fresh, mut again, mut listening) = (Vec::new(), Vec::new(), Vec::new());
    for i in 1..=args.runs {
        let db = Database::fresh(backend, pg_admin)?;
        let (listen, ready) = runtime.block_on(time_start(launch, &db, "first.log"))?;
        let (_, restart) = runtime.block_on(time_start(launch, &db, "second.log"))?;
        println!(
            "run {i:>2}: fresh database: listening after {} ms, ready after {} ms; restart on it: ready after {} ms",
            fmt_ms(listen.as_secs_f64() * 1e3),
            fmt_ms(ready.as_secs_f64() * 1e3),
            fmt_ms(restart.as_secs_f64() * 1e3)
        );
        let us = |d: Duration| u32::try_from(d.as_micros()).unwrap_or(u32::MAX);
        fresh.push(us(ready));
        again.push(us(restart));
        listening.push(us(listen));
    }
    for v in [&mut fresh, &mut again, &mut listening] {
        v.sort_unstable();
    }
    println!(
        "{}: spawn → /readyz 200 on a fresh database: p50 {} ms (min {}, max {}); \
         spawn → \"listening\" p50 {} ms; restart on the same database: p50 {} ms",
        backend.name(),
        fmt_ms(percentile(&fresh, 50.0)),
        fmt_ms(percentile(&fresh, 0.0)),
        fmt_ms(percentile(&fresh, 100.0)),
        fmt_ms(percentile(&listening, 50.0)),
        fmt_ms(percentile(&again, 50.0))
    );
    Ok(())
}
