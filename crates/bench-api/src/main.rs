//! `bench-api`: the measuring instruments behind docs/scaling.md, run against the real server
//! binary.
//!
//! - `api`: whole 2-person 6-nimmt games over HTTP with C concurrent clients on SQLite,
//!   PostgreSQL or several replicas on one PostgreSQL database; commands/s, p50/p99, events
//!   per command, and pgbench's one-row insert tps at the same client count in the same run.
//! - `streams`: N open live streams on one public game: idle CPU and RSS of the server, and
//!   the time until a move has reached every stream.
//!   Beside the server it times `floor` (the hidden `fanout-floor`, `floor.rs`): a process
//!   that only writes each move's bytes to every connection, the least any server with a
//!   TCP connection per stream needs on this machine, as pgbench is for the inserts.
//! - `startup`: spawn → first `200` from `/readyz`.
//! - `volume`: databases filled with a year of play (`stammtisch fill`) at several sizes:
//!   the players' reads, a command, the feed, the ratings rebuild, the start, bytes per game.
//! - `login-flood`: RSS and a signed-in player's latency while unknown names flood
//!   `POST /v1/tokens`.
//!
//! Every subcommand starts its own server processes on fresh databases (SQLite files in a
//! temporary directory, PostgreSQL databases created and dropped again), talks only to
//! 127.0.0.1, and is bounded in time. Wrapped by `scripts/bench-api`,
//! `scripts/bench-streams` and `scripts/bench-startup`, which build the release binaries
//! first. It must not change the server: it only measures it.

mod api;
mod client;
mod flood;
mod floor;
mod procfs;
mod server;
mod startup;
mod stats;
mod streams;
mod volume;
mod working_set;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "bench-api",
    about = "Load and stream benchmarks for the Stammtisch server"
)]
struct Cli {
    /// The server binary to start (a release build).
    #[arg(
        long,
        global = true,
        env = "STAMMTISCH_BIN",
        default_value = "target/release/stammtisch"
    )]
    server: PathBuf,
    /// PostgreSQL to create scratch databases on (127.0.0.1).
    #[arg(
        long,
        global = true,
        env = "STAMMTISCH_TEST_PG_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    pg_url: String,
    /// `RUST_LOG` of the server processes.
    #[arg(long, global = true, env = "BENCH_SERVER_LOG", default_value = "warn")]
    server_log: String,
    /// The server's rate limits: `counted` (each `LIMIT_*` at 1,000,000,000, so the counting
    /// runs as in production but never refuses) or `off` (each at 0).
    #[arg(long, global = true, value_enum, default_value = "counted")]
    limits: server::Limits,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Whole games over HTTP with C clients, beside pgbench's one-row inserts.
    Api(api::Args),
    /// N open live streams: idle cost and the time a move takes to reach them.
    Streams(streams::Args),
    /// Spawn → first 200 from /readyz.
    Startup(startup::Args),
    /// A flood of logins: the server's RSS and a signed-in player's latency.
    LoginFlood(flood::Args),
    /// N active games played in turn: the state cache's hit rate and the command latency.
    WorkingSet(working_set::Args),
    /// Databases of 10⁴–10⁶ games (`stammtisch fill`): reads, a command, the feed, the
    /// ratings rebuild, the start and the bytes per game at each size.
    Volume(volume::Args),
    /// The bare fan-out reference that `streams` starts for its `floor` configuration.
    #[command(hide = true)]
    FanoutFloor(floor::Args),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let launch = server::Launch {
        binary: cli.server,
        rust_log: cli.server_log,
        limits: cli.limits,
    };
    server::clean_up_on_interrupt()?;
    let started = std::time::Instant::now();
    match &cli.command {
        Cmd::Api(args) => api::run(args, &launch, &cli.pg_url)?,
        Cmd::Streams(args) => streams::run(args, &launch, &cli.pg_url)?,
        Cmd::Startup(args) => startup::run(args, &launch, &cli.pg_url)?,
        Cmd::WorkingSet(args) => working_set::run(args, &launch, &cli.pg_url)?,
        Cmd::Volume(args) => volume::run(args, &launch, &cli.pg_url)?,
        Cmd::LoginFlood(args) => flood::run(args, &launch, &cli.pg_url)?,
        // A helper process of `streams`: no summary line on its stdout, which `streams`
        // may have closed by now.
        Cmd::FanoutFloor(args) => return floor::serve(args),
    }
    println!("(bench-api ran {:.0} s)", started.elapsed().as_secs_f64());
    Ok(())
}
