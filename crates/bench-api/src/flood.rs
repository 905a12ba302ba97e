//! `bench-api login-flood`: what a flood of logins does to the server.
//!
//! A signed-in player sends `GET /v1/me` and `GET /v1/games?mine=true` one after the other
//! while C connections send `POST /v1/tokens` with unknown names (each one an Argon2id check
//! of ~19 MiB) until N attempts are made. Prints the server's RSS (before, the largest
//! sample every 20 ms, `VmHWM`, after), how the attempts were answered, and the player's
//! request latencies (p50, p99, max). Two configurations per backend: `hashed` (the limits
//! as `--limits` says, by default at 1,000,000,000: every attempt reaches the hasher, as
//! from many addresses) and `defaults` (no `LIMIT_*` set: the server's own limits, one
//! address).
//!
//! Owns only its server processes and scratch databases; talks only to 127.0.0.1.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;

use crate::client::http_client;
use crate::procfs;
use crate::server::{Backend, Database, Launch, Server};
use crate::stats::{fmt_ms, percentile};

/// Flags of `bench-api login-flood`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Backends, comma-separated.
    #[arg(long, default_value = "sqlite,postgres")]
    backends: String,
    /// Login attempts in the flood.
    #[arg(long, default_value_t = 300)]
    attempts: usize,
    /// Connections that send them at once.
    #[arg(long, default_value_t = 32)]
    connections: usize,
    /// Configurations: `hashed` (per-address limits never refuse) and/or `defaults`.
    #[arg(long, default_value = "hashed,defaults")]
    configs: String,
    /// Give up a configuration after this many seconds.
    #[arg(long, default_value_t = 120)]
    max_seconds: u64,
}

/// Runs every configuration on every backend and prints one block each.
///
/// # Errors
/// A server that does not start, a player that cannot sign in.
pub fn run(args: &Args, launch: &Launch, pg_admin: &str) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    println!(
        "bench-api login-flood: {} attempts from {} connections; {}; load before {}",
        args.attempts,
        args.connections,
        launch.binary.display(),
        procfs::load_average()
    );
    for backend in args.backends.split(',') {
        let backend = Backend::parse(backend.trim())?;
        for config in args.configs.split(',') {
            let config = config.trim();
            let mut launch = launch.clone();
            match config {
                "hashed" => {}
                "defaults" => launch.limits = crate::server::Limits::Defaults,
                other => bail!("unknown configuration {other}: use hashed or defaults"),
            }
            let db = Database::fresh(backend, pg_admin)?;
            let server = Server::start(&launch, &db.url, &db.dir.path.join("server.log"))?;
            runtime.block_on(flood(args, &server, backend, config))?;
        }
    }
    Ok(())
}

async fn flood(args: &Args, server: &Server, backend: Backend, config: &str) -> anyhow::Result<()> {
    let http = http_client();
    let base = server.base.clone();
    // The signed-in player.
    let r = http
        .post(format!("{base}/v1/accounts"))
        .header("content-type", "application/json")
        .body(json!({ "name": "player_p", "password": "the player's password" }).to_string())
        .send()
        .await?;
    if r.status() != 201 {
        bail!("registration answered {}", r.status());
    }
    let r = http
        .post(format!("{base}/v1/tokens"))
        .header("content-type", "application/json")
        .body(json!({ "name": "player_p", "password": "the player's password" }).to_string())
        .send()
        .await?;
    let token: serde_json::Value = serde_json::from_str(&r.text().await?)?;
    let token = token["access_token"]
        .as_str()
        .context("no access_token")?
        .to_owned();
    let pid = server.pid;
    let before = procfs::rss_kib(pid).unwrap_or(0);
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(before));
    let sampler = {
        let (done, peak) = (done.clone(), peak.clone());
        tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                if let Some(rss) = procfs::rss_kib(pid) {
                    peak.fetch_max(rss, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let player = {
        let (done, http, base) = (done.clone(), http.clone(), base.clone());
        tokio::spawn(async move {
            let mut samples: Vec<u32> = Vec::new();
            let mut failures = 0usize;
            let mut i = 0u64;
            while !done.load(Ordering::Relaxed) {
                let path = if i.is_multiple_of(2) {
                    "/v1/me"
                } else {
                    "/v1/games?mine=true"
                };
                i += 1;
                let t = Instant::now();
                let ok = http
                    .get(format!("{base}{path}"))
                    .bearer_auth(&token)
                    .send()
                    .await
                    .is_ok_and(|r| r.status() == 200);
                samples.push(u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX));
                if !ok {
                    failures += 1;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            (samples, failures)
        })
    };
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.max_seconds);
    let mut senders = Vec::new();
    for _ in 0..args.connections {
        let (next, http, base) = (next.clone(), http_client(), base.clone());
        let attempts = args.attempts;
        senders.push(tokio::spawn(async move {
            let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= attempts || Instant::now() > deadline {
                    return statuses;
                }
                let status = http
                    .post(format!("{base}/v1/tokens"))
                    .header("content-type", "application/json")
                    .body(
                        json!({ "name": format!("flood_{i}"), "password": "a guess" }).to_string(),
                    )
                    .send()
                    .await
                    .map_or(0, |r| r.status().as_u16());
                *statuses.entry(status).or_default() += 1;
            }
        }));
    }
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    for s in senders {
        for (status, n) in s.await? {
            *statuses.entry(status).or_default() += n;
        }
    }
    let flood_seconds = started.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    let (mut samples, failures) = player.await?;
    sampler.await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = procfs::rss_kib(pid).unwrap_or(0);
    let hwm = procfs::status_kib(pid, "VmHWM").unwrap_or(0);
    samples.sort_unstable();
    let mb = |kib: u64| kib as f64 / 1024.0;
    println!(
        "{} {config}: flood {:.1} s; answers {}; RSS MB before {:.0}, peak sampled {:.0}, VmHWM {:.0}, after {:.0}; player: {} requests, {} failed, p50 {} ms, p99 {} ms, max {} ms",
        backend.name(),
        flood_seconds,
        statuses
            .iter()
            .map(|(s, n)| format!("{s}×{n}"))
            .collect::<Vec<_>>()
            .join(" "),
        mb(before),
        mb(peak.load(Ordering::Relaxed)),
        mb(hwm),
        mb(after),
        samples.len(),
        failures,
        fmt_ms(percentile(&samples, 50.0)),
        fmt_ms(percentile(&samples, 99.0)),
        fmt_ms(percentile(&samples, 100.0)),
    );
    Ok(())
}
