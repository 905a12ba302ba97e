//! `bench-api streams`: many open live streams on one public game, what they cost the
//! server while idle, and how fast a move reaches all of them.
//!
//! Owns the stream clients: one lightweight task per connection on a single-threaded tokio
//! runtime, speaking just enough HTTP/1.1 to send the request, check the `200` and find the
//! `id:` lines of the server-sent events (nothing else of a frame is parsed). It starts and
//! stops its own server process per configuration and never changes the server. The
//! `floor` configuration opens the same streams to `bench-api fanout-floor` (`floor.rs`)
//! instead, the least any server with a TCP connection per stream needs on this machine.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;

use crate::client::{Api, Player, http_client};
use crate::procfs;
use crate::server::{Backend, Database, Launch, Server, pg_backend_pids};
use crate::stats::{fmt_ms, percentile};

/// Flags of `bench-api streams`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Backends, comma-separated: `sqlite`, `postgres`, and `floor`, the bare fan-out
    /// reference (`bench-api fanout-floor`: a process that only holds the connections and
    /// writes each move's bytes to all of them from one thread per core; what any server
    /// with a TCP connection per stream needs on this machine, timed by the same clients).
    #[arg(long, value_delimiter = ',', default_value = "sqlite,postgres,floor")]
    backends: Vec<String>,
    /// Bytes of the frame `floor` writes per move (what a spectator of the server read per
    /// move, chunk framing included, was 245–318 bytes, mostly 312–318: `bytes per
    /// stream-move` in the server's lines).
    #[arg(long, default_value_t = 315)]
    floor_frame_bytes: usize,
    /// Numbers of open streams, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,4000,10000")]
    streams: Vec<usize>,
    /// Seconds after the last stream opened before the idle measurement starts.
    #[arg(long, default_value_t = 3.0)]
    settle_seconds: f64,
    /// Seconds of idle measurement (server CPU with every stream open and no move).
    #[arg(long, default_value_t = 15.0)]
    idle_seconds: f64,
    /// Moves to time (each by a seated player, `--gap-seconds` apart).
    #[arg(long, default_value_t = 5)]
    moves: usize,
    /// Streams being opened at the same time.
    #[arg(long, default_value_t = 128)]
    connect_concurrency: usize,
    /// Seconds a stream may take to open (connect and response head).
    #[arg(long, default_value_t = 30.0)]
    open_timeout: f64,
    /// Seconds to wait for every stream to see a move.
    #[arg(long, default_value_t = 60.0)]
    move_timeout: f64,
    /// Seconds between the end of one timed move and the next.
    #[arg(long, default_value_t = 1.0)]
    gap_seconds: f64,
    /// Lower the server's soft limit on open files to this (e.g. 1024, a common default)
    /// to see what happens when streams exceed it; by default it inherits this tool's limit,
    /// raised to the hard limit.
    #[arg(long)]
    server_nofile: Option<u64>,
    /// Runs of each configuration.
    #[arg(long, default_value_t = 1)]
    runs: usize,
}

/// What a stream task reports.
enum Msg {
    /// The `200` head arrived.
    Opened,
    /// The stream could not be opened.
    Refused(String),
    /// The highest event `id` in one read, when that read returned, and its size.
    Seq {
        idx: usize,
        seq: i64,
        at: Instant,
        bytes: usize,
    },
    /// The server closed the stream (or the connection failed).
    Closed { idx: usize },
}

/// Finds `id: N` lines in the raw bytes of a chunked `text/event-stream` body. Chunk-size
/// lines never start with `id: `, and the server writes each frame as one chunk.
#[derive(Default)]
struct IdScanner {
    line_start: bool,
    matched: usize,
    number: Option<i64>,
}

impl IdScanner {
    const PREFIX: &'static [u8] = b"id: ";

    /// The highest id completed in `bytes`, if any.
    fn feed(&mut self, bytes: &[u8]) -> Option<i64> {
        let mut best = None;
        for &b in bytes {
            if let Some(n) = self.number {
                if b.is_ascii_digit() {
                    self.number = Some(n.saturating_mul(10).saturating_add(i64::from(b - b'0')));
                    continue;
                }
                best = best.max(Some(n));
                self.number = None;
            }
            if b == b'\n' {
                self.line_start = true;
                self.matched = 0;
                continue;
            }
            if self.line_start || self.matched > 0 {
                if Self::PREFIX.get(self.matched) == Some(&b) {
                    self.matched += 1;
                    self.line_start = false;
                    if self.matched == Self::PREFIX.len() {
                        self.number = Some(0);
                        self.matched = 0;
                    }
                    continue;
                }
                self.matched = 0;
                self.line_start = false;
            }
        }
        best
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// One open stream.
/// Connects, sends the request and reads the response head: the stream, the head bytes
/// and where the body starts in them; or why not.
async fn open(addr: SocketAddr, request: &[u8]) -> Result<(TcpStream, Vec<u8>, usize), String> {
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    stream
        .write_all(request)
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut buf = [0u8; 1024];
    let mut head = Vec::new();
    let body_start = loop {
        match stream.read(&mut buf).await {
            Ok(0) => return Err("closed before the response head".into()),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) => return Err(format!("read: {e}")),
        }
        if let Some(p) = find(&head, b"\r\n\r\n") {
            break p + 4;
        }
        if head.len() > 16 * 1024 {
            return Err("response head too long".into());
        }
    };
    if !head.starts_with(b"HTTP/1.1 200") {
        let line = head.split(|b| *b == b'\r').next().unwrap_or_default();
        return Err(String::from_utf8_lossy(line).into_owned());
    }
    Ok((stream, head, body_start))
}

/// One open stream.
async fn watch(
    idx: usize,
    addr: SocketAddr,
    request: Arc<Vec<u8>>,
    tx: mpsc::UnboundedSender<Msg>,
    permit: OwnedSemaphorePermit,
    open_timeout: Duration,
) {
    let (mut stream, head, body_start) =
        match tokio::time::timeout(open_timeout, open(addr, &request)).await {
            Ok(Ok(opened)) => opened,
            Ok(Err(why)) => {
                let _ = tx.send(Msg::Refused(why));
                return;
            }
            Err(_) => {
                let _ = tx.send(Msg::Refused(format!(
                    "no response head within {} s (not accepted?)",
                    open_timeout.as_secs()
                )));
                return;
            }
        };
    let mut buf = [0u8; 2048];
    drop(permit);
    let _ = tx.send(Msg::Opened);
    let mut scanner = IdScanner {
        line_start: true,
        ..IdScanner::default()
    };
    if let Some(seq) = scanner.feed(&head[body_start..]) {
        let _ = tx.send(Msg::Seq {
            idx,
            seq,
            at: Instant::now(),
            bytes: head.len() - body_start,
        });
    }
    drop(head);
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => {
                let _ = tx.send(Msg::Closed { idx });
                return;
            }
            Ok(n) => {
                let at = Instant::now();
                if let Some(seq) = scanner.feed(&buf[..n]) {
                    let _ = tx.send(Msg::Seq {
                        idx,
                        seq,
                        at,
                        bytes: n,
                    });
                }
            }
        }
    }
}

/// What the streams are opened to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// The server on a fresh database.
    Server(Backend),
    /// `bench-api fanout-floor`, the bare fan-out reference.
    Floor,
}

impl Target {
    fn parse(s: &str) -> anyhow::Result<Self> {
        if s == "floor" {
            Ok(Self::Floor)
        } else {
            Backend::parse(s).map(Self::Server)
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Server(backend) => backend.name(),
            Self::Floor => "floor",
        }
    }
}

/// What one configuration measured.
struct Outcome {
    target: Target,
    streams: usize,
    run: usize,
    load_before: String,
    server_nofile: u64,
    opened: usize,
    refused: usize,
    first_refusal: Option<String>,
    open_seconds: f64,
    idle_server_cpu: f64,
    idle_pg_cpu: Option<f64>,
    idle_client_cpu: f64,
    rss_before_mb: f64,
    rss_idle_mb: f64,
    moves: usize,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    /// Each move's own p99 over the streams, sorted: whether the run's p99 is every move's
    /// or a few slow moves' (with 20 moves, one move is 5 % of the stream-moves).
    move_p99s_ms: Vec<f64>,
    post_p50_ms: f64,
    missed: usize,
    closed: usize,
    move_server_cpu_s: f64,
    move_pg_cpu_s: Option<f64>,
    move_client_cpu_s: f64,
    bytes_per_stream_move: f64,
}

/// Runs every backend × stream count and prints a line each and a markdown table.
///
/// # Errors
/// A server that does not start, PostgreSQL missing, a failed setup request.
pub fn run(args: &Args, launch: &Launch, pg_admin: &str) -> anyhow::Result<()> {
    let targets = args
        .backends
        .iter()
        .map(|b| Target::parse(b))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let max = args.streams.iter().copied().max().unwrap_or(0);
    let limit = rlimit::increase_nofile_limit(u64::MAX).context("raising the open-file limit")?;
    println!(
        "bench-api streams: one public 2-person 6-nimmt game, N spectator streams from one process \
         (open-file limit {limit}); server {} (rate limits {:?}); floor frame {} bytes",
        launch.binary.display(),
        launch.limits,
        args.floor_frame_bytes
    );
    if limit < max as u64 + 200 {
        eprintln!(
            "warning: the open-file limit {limit} is below {max} streams (hard limit: `ulimit -Hn`)"
        );
    }
    let mut outcomes = Vec::new();
    for run in 1..=args.runs {
        for &target in &targets {
            for &n in &args.streams {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                let outcome = runtime.block_on(measure(target, n, run, args, launch, pg_admin))?;
                drop(runtime);
                print_line(&outcome);
                outcomes.push(outcome);
            }
        }
    }
    print_table(&outcomes);
    print_against_floor(&outcomes);
    Ok(())
}

fn print_line(o: &Outcome) {
    println!(
        "{:<8} streams={:<6} run {}: opened {} in {:.1} s{}; idle: server CPU {:.1}% of a core \
         (PostgreSQL backends {}), RSS {:.0} → {:.0} MB (+{:.0}); move → every stream: p50 {} p99 {} max {} ms over {} moves \
         (the POST itself p50 {} ms; {} stream-moves missed, {} streams closed; per move: server \
         {:.3} CPU-s, PostgreSQL backends {}, this client {:.3} CPU-s; {:.0} bytes per stream-move); \
         idle client CPU {:.1}%; server open-file limit {}; load before {}",
        o.target.name(),
        o.streams,
        o.run,
        o.opened,
        o.open_seconds,
        if o.refused > 0 {
            format!(
                ", {} refused (first: {})",
                o.refused,
                o.first_refusal.as_deref().unwrap_or("?")
            )
        } else {
            String::new()
        },
        o.idle_server_cpu,
        o.idle_pg_cpu.map_or("–".into(), |c| format!("{c:.1}%")),
        o.rss_before_mb,
        o.rss_idle_mb,
        o.rss_idle_mb - o.rss_before_mb,
        fmt_ms(o.p50_ms),
        fmt_ms(o.p99_ms),
        fmt_ms(o.max_ms),
        o.moves,
        fmt_ms(o.post_p50_ms),
        o.missed,
        o.closed,
        o.move_server_cpu_s,
        o.move_pg_cpu_s
            .map_or("–".into(), |c| format!("{c:.3} CPU-s")),
        o.move_client_cpu_s,
        o.bytes_per_stream_move,
        o.idle_client_cpu,
        o.server_nofile,
        o.load_before
    );
    if let (Some(low), Some(high)) = (o.move_p99s_ms.first(), o.move_p99s_ms.last()) {
        let mid = o.move_p99s_ms[o.move_p99s_ms.len() / 2];
        println!(
            "{:<8} streams={:<6} run {}: each move's own p99: lowest {} ms, median {} ms, highest {} ms",
            o.target.name(),
            o.streams,
            o.run,
            fmt_ms(*low),
            fmt_ms(mid),
            fmt_ms(*high),
        );
    }
}

fn print_table(outcomes: &[Outcome]) {
    println!();
    println!(
        "| backend | streams | run | opened | idle server CPU % | idle PG backends CPU % | RSS before MB | RSS idle MB | move p50 ms | p99 ms | max ms | missed | closed | POST p50 ms | server CPU-s per move | client CPU-s per move | load before |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for o in outcomes {
        println!(
            "| {} | {} | {} | {} | {:.1} | {} | {:.0} | {:.0} | {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {} |",
            o.target.name(),
            o.streams,
            o.run,
            o.opened,
            o.idle_server_cpu,
            o.idle_pg_cpu.map_or("–".into(), |c| format!("{c:.1}")),
            o.rss_before_mb,
            o.rss_idle_mb,
            fmt_ms(o.p50_ms),
            fmt_ms(o.p99_ms),
            fmt_ms(o.max_ms),
            o.missed,
            o.closed,
            fmt_ms(o.post_p50_ms),
            o.move_server_cpu_s,
            o.move_client_cpu_s,
            o.load_before
        );
    }
}

/// Each server configuration's p99 and CPU per move beside the floor's at the same number
/// of streams in the same run.
fn print_against_floor(outcomes: &[Outcome]) {
    for o in outcomes.iter().filter(|o| o.target != Target::Floor) {
        let Some(floor) = outcomes
            .iter()
            .find(|f| f.target == Target::Floor && f.streams == o.streams && f.run == o.run)
        else {
            continue;
        };
        println!(
            "{} × {} (run {}): move p99 {} ms against the floor's {} ms ({:.2}×); CPU-s per move, server + client: {:.3} against the floor's {:.3}",
            o.target.name(),
            o.streams,
            o.run,
            fmt_ms(o.p99_ms),
            fmt_ms(floor.p99_ms),
            if floor.p99_ms > 0.0 {
                o.p99_ms / floor.p99_ms
            } else {
                0.0
            },
            o.move_server_cpu_s + o.move_client_cpu_s,
            floor.move_server_cpu_s + floor.move_client_cpu_s
        );
    }
}

fn mb(pid: u32) -> f64 {
    procfs::rss_kib(pid).map_or(0.0, |k| k as f64 / 1024.0)
}

/// A legal move of a seat that must act (read through the views, not timed).
/// A seat that may move, its move, and the game's version before it.
async fn next_move(
    api: &Api,
    players: &[Player; 2],
    game: &str,
) -> anyhow::Result<(usize, Value, i64)> {
    for (seat, player) in players.iter().enumerate() {
        let view = api.view(player, game).await?;
        if view.status == "finished" {
            bail!("the game finished; use fewer --moves");
        }
        if view.awaiting.iter().any(|a| a.seat == seat)
            && let Some(cmd) = view.legal.iter().find(|c| c["type"] != "resign")
        {
            return Ok((seat, cmd.clone(), i64::from(view.version)));
        }
    }
    bail!("nobody can move")
}

/// The floor process (killed on drop; it also ends when its standard input closes).
struct Floor {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    addr: SocketAddr,
}

impl Floor {
    fn start() -> anyhow::Result<Self> {
        use std::io::BufRead;
        let exe = std::env::current_exe().context("the bench's own binary")?;
        let mut child = std::process::Command::new(exe)
            .arg("fanout-floor")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .context("starting bench-api fanout-floor")?;
        let stdin = child.stdin.take().context("the floor's stdin")?;
        let stdout = child.stdout.take().context("the floor's stdout")?;
        let mut line = String::new();
        std::io::BufReader::new(stdout).read_line(&mut line)?;
        let addr = line
            .trim()
            .strip_prefix("listening ")
            .with_context(|| format!("the floor said {line:?}"))?
            .parse()?;
        Ok(Self { child, stdin, addr })
    }

    /// Asks for one frame with `id: seq` on every connection.
    fn write(&mut self, seq: i64, bytes: usize) -> anyhow::Result<()> {
        use std::io::Write;
        writeln!(self.stdin, "move {seq} {bytes}")?;
        self.stdin.flush()?;
        Ok(())
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the streams are open and how a move is made there.
enum Source<'a> {
    /// A seated player's legal move over HTTP.
    Server {
        server: &'a mut Server,
        db: &'a Database,
        api: Api,
        players: [Player; 2],
        game: String,
    },
    /// A line to the floor process.
    Floor {
        floor: &'a mut Floor,
        bytes: usize,
        version: i64,
    },
}

impl Source<'_> {
    fn pid(&self) -> u32 {
        match self {
            Self::Server { server, .. } => server.pid,
            Self::Floor { floor, .. } => floor.child.id(),
        }
    }

    fn addr(&self) -> SocketAddr {
        match self {
            Self::Server { server, .. } => server.addr,
            Self::Floor { floor, .. } => floor.addr,
        }
    }

    /// The PostgreSQL backends serving the server's database (opened on demand, so looked
    /// up again when needed); none for SQLite and the floor.
    fn pg_backends(&self, pg_admin: &str) -> Vec<u32> {
        match self {
            Self::Server { db, .. } => db
                .pg
                .as_ref()
                .map(|pg| pg_backend_pids(pg_admin, &pg.name))
                .unwrap_or_default(),
            Self::Floor { .. } => Vec::new(),
        }
    }

    /// Chooses the next move (not timed); `send` then makes it.
    async fn choose(&self) -> anyhow::Result<Option<(usize, Value, i64)>> {
        match self {
            Self::Server {
                api, players, game, ..
            } => next_move(api, players, game).await.map(Some),
            Self::Floor { .. } => Ok(None),
        }
    }

    /// Makes the chosen move; the first seq it writes. A stream has the move once it reads
    /// that seq or a later one: the move's last event may be one a spectator never sees
    /// (the hands of the next deal), so waiting for the version the move left would wait
    /// for the next move, and count this one as missed.
    async fn send(&mut self, chosen: Option<(usize, Value, i64)>) -> anyhow::Result<i64> {
        match (self, chosen) {
            (
                Self::Server {
                    api, players, game, ..
                },
                Some((seat, cmd, before)),
            ) => {
                let reply = api.command(&players[seat], game, &cmd).await?;
                let after = i64::from(reply.view(200)?.version);
                if after <= before {
                    bail!("the move at version {before} wrote nothing");
                }
                Ok(before + 1)
            }
            (
                Self::Floor {
                    floor,
                    bytes,
                    version,
                },
                _,
            ) => {
                *version += 1;
                floor.write(*version, *bytes)?;
                Ok(*version)
            }
            (Self::Server { .. }, None) => bail!("no move chosen"),
        }
    }
}

async fn measure(
    target: Target,
    n: usize,
    run: usize,
    args: &Args,
    launch: &Launch,
    pg_admin: &str,
) -> anyhow::Result<Outcome> {
    let backend = match target {
        Target::Server(backend) => backend,
        Target::Floor => {
            let mut floor = Floor::start()?;
            let request = Arc::new(
                format!(
                    "GET /floor HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n",
                    floor.addr
                )
                .into_bytes(),
            );
            let source = Source::Floor {
                floor: &mut floor,
                bytes: args.floor_frame_bytes,
                version: 0,
            };
            return measure_on(source, request, target, n, run, args, pg_admin).await;
        }
    };
    let db = Database::fresh(backend, pg_admin)?;
    let log = db.dir.path.join("server.log");
    let mut server = Server::start(launch, &db.url, &log)?;
    if let Some(soft) = args.server_nofile {
        let (_, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE)?;
        let pid = i32::try_from(server.pid)?;
        rlimit::prlimit(pid, rlimit::Resource::NOFILE, Some((soft, hard)), None)
            .context("lowering the server's open-file limit")?;
    }
    let result = async {
        let api = Api {
            http: http_client(),
            base: server.base.clone(),
        };
        let players = [api.guest("anna").await?, api.guest("bert").await?];
        let spectator = api.guest("spectator").await?;
        let created = api.create_game(&players[0], true).await?.view(201)?;
        let game = created.id.clone();
        api.command(&players[1], &game, &serde_json::json!({ "type": "join" }))
            .await?
            .view(200)?;
        let started = api
            .command(&players[0], &game, &serde_json::json!({ "type": "start" }))
            .await?
            .view(200)?;
        let request = Arc::new(
            format!(
                "GET /v1/games/{game}/stream HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\n\
                 Accept: text/event-stream\r\nLast-Event-ID: {}\r\n\r\n",
                server.addr, spectator.auth, started.version
            )
            .into_bytes(),
        );
        let source = Source::Server {
            server: &mut server,
            db: &db,
            api,
            players,
            game,
        };
        measure_on(source, request, target, n, run, args, pg_admin).await
    }
    .await;
    result.map_err(|e| {
        let state = match server.exit_status() {
            Some(status) => format!("the server exited ({status})"),
            None => "the server still runs".into(),
        };
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let kept =
            std::env::temp_dir().join(format!("bench-api-server-{}.log", crate::server::unique()));
        let kept = match std::fs::write(&kept, &text) {
            Ok(()) => format!(" (whole log: {})", kept.display()),
            Err(_) => String::new(),
        };
        let tail: Vec<&str> = text.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        e.context(format!(
            "{} streams on {}: {state}; the end of its log{kept}:\n{}",
            n,
            backend.name(),
            tail.join("\n")
        ))
    })
}

async fn measure_on(
    mut source: Source<'_>,
    request: Arc<Vec<u8>>,
    target: Target,
    n: usize,
    run: usize,
    args: &Args,
    pg_admin: &str,
) -> anyhow::Result<Outcome> {
    let (pid, addr) = (source.pid(), source.addr());
    let server_nofile = procfs::open_file_limit(pid).unwrap_or(0);
    let load_before = procfs::load_average();
    let rss_before_mb = mb(pid);

    // Open the streams, `connect_concurrency` at a time.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(args.connect_concurrency.max(1)));
    let mut tasks = JoinSet::new();
    let opening = Instant::now();
    for idx in 0..n {
        let permit = gate.clone().acquire_owned().await?;
        tasks.spawn(watch(
            idx,
            addr,
            request.clone(),
            tx.clone(),
            permit,
            Duration::from_secs_f64(args.open_timeout),
        ));
    }
    drop(tx);
    let (mut opened, mut refused, mut first_refusal, mut closed) = (0, 0, None, 0);
    let mut alive = vec![true; n];
    while opened + refused < n {
        match rx.recv().await {
            Some(Msg::Opened) => opened += 1,
            Some(Msg::Refused(why)) => {
                refused += 1;
                first_refusal.get_or_insert(why);
            }
            Some(Msg::Closed { idx }) => {
                alive[idx] = false;
                closed += 1;
            }
            Some(Msg::Seq { .. }) => {}
            None => break,
        }
    }
    let open_seconds = opening.elapsed().as_secs_f64();
    eprintln!(
        "{} × {n}: {opened} streams open after {open_seconds:.1} s, {refused} refused{}",
        target.name(),
        first_refusal
            .as_deref()
            .map(|f| format!(" (first: {f})"))
            .unwrap_or_default()
    );

    // Idle: every stream open, no move.
    tokio::time::sleep(Duration::from_secs_f64(args.settle_seconds)).await;
    let idle_pg = procfs::CpuWindow::start(&source.pg_backends(pg_admin));
    let (server0, self0) = (
        procfs::cpu_seconds_of(&[pid]),
        procfs::cpu_seconds("self").unwrap_or(0.0),
    );
    let idle_start = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(args.idle_seconds)).await;
    let idle = idle_start.elapsed().as_secs_f64();
    let idle_server_cpu = procfs::percent_of_core(server0, procfs::cpu_seconds_of(&[pid]), idle);
    let idle_client_cpu =
        procfs::percent_of_core(self0, procfs::cpu_seconds("self").unwrap_or(0.0), idle);
    let backends = source.pg_backends(pg_admin);
    let idle_pg_cpu = (!backends.is_empty())
        .then(|| procfs::percent_of_core(0.0, idle_pg.seconds(&backends), idle));
    let rss_idle_mb = mb(pid);

    // Moves: from just before the POST until each open stream has read an event of the move.
    let mut latencies = Vec::new();
    let mut move_p99s_ms = Vec::new();
    let mut posts = Vec::new();
    let (mut missed, mut bytes_read, mut stream_moves) = (0, 0usize, 0usize);
    let (mut move_server_cpu_s, mut move_client_cpu_s, mut move_pg_cpu_s) = (0.0, 0.0, 0.0);
    for _ in 0..args.moves {
        let chosen = source.choose().await?;
        while let Ok(msg) = rx.try_recv() {
            if let Msg::Closed { idx } = msg {
                alive[idx] = false;
                closed += 1;
            }
        }
        let pg0 = procfs::CpuWindow::start(&backends);
        let (server0, self0) = (
            procfs::cpu_seconds_of(&[pid]),
            procfs::cpu_seconds("self").unwrap_or(0.0),
        );
        let t0 = Instant::now();
        let first = source.send(chosen).await?;
        posts.push(u32::try_from(t0.elapsed().as_micros()).unwrap_or(u32::MAX));
        let mut seen = vec![false; n];
        let this_move = latencies.len();
        let mut waiting = alive.iter().filter(|a| **a).count();
        let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(args.move_timeout);
        while waiting > 0 {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(Msg::Seq {
                    idx,
                    seq,
                    at,
                    bytes,
                })) => {
                    if alive[idx] && !seen[idx] {
                        bytes_read += bytes;
                    }
                    if seq >= first && alive[idx] && !seen[idx] {
                        seen[idx] = true;
                        waiting -= 1;
                        stream_moves += 1;
                        let us = at.saturating_duration_since(t0).as_micros();
                        latencies.push(u32::try_from(us).unwrap_or(u32::MAX));
                    }
                }
                Ok(Some(Msg::Closed { idx })) => {
                    if alive[idx] {
                        alive[idx] = false;
                        closed += 1;
                        if !seen[idx] {
                            waiting -= 1;
                            missed += 1;
                        }
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        missed += waiting;
        let mut mine = latencies[this_move..].to_vec();
        mine.sort_unstable();
        move_p99s_ms.push(percentile(&mine, 99.0));
        move_server_cpu_s += procfs::cpu_seconds_of(&[pid]) - server0;
        move_client_cpu_s += procfs::cpu_seconds("self").unwrap_or(0.0) - self0;
        move_pg_cpu_s += pg0.seconds(&backends);
        tokio::time::sleep(Duration::from_secs_f64(args.gap_seconds)).await;
    }
    if let Source::Server { server, .. } = &mut source
        && !server.alive()
    {
        eprintln!("warning: the server exited during the run");
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    latencies.sort_unstable();
    posts.sort_unstable();
    let moves = args.moves.max(1) as f64;
    Ok(Outcome {
        target,
        streams: n,
        run,
        load_before,
        server_nofile,
        opened,
        refused,
        first_refusal,
        open_seconds,
        idle_server_cpu,
        idle_pg_cpu,
        idle_client_cpu,
        rss_before_mb,
        rss_idle_mb,
        moves: args.moves,
        p50_ms: percentile(&latencies, 50.0),
        p99_ms: percentile(&latencies, 99.0),
        max_ms: percentile(&latencies, 100.0),
        move_p99s_ms: {
            move_p99s_ms.sort_by(f64::total_cmp);
            move_p99s_ms
        },
        post_p50_ms: percentile(&posts, 50.0),
        missed,
        closed,
        move_server_cpu_s: move_server_cpu_s / moves,
        move_client_cpu_s: move_client_cpu_s / moves,
        move_pg_cpu_s: (!backends.is_empty()).then_some(move_pg_cpu_s / moves),
        bytes_per_stream_move: bytes_read as f64 / stream_moves.max(1) as f64,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn finds_event_ids_across_chunk_lines_and_split_reads() {
        let mut s = IdScanner {
            line_start: true,
            ..IdScanner::default()
        };
        let body =
            b"3a\r\nid: 9\nevent: selection_made\ndata: {\"seq\":9,\"x\":\"id: 77\"}\n\n\r\n";
        assert_eq!(s.feed(body), Some(9));
        // A keep-alive carries no id.
        assert_eq!(s.feed(b"f\r\n: keep-alive\n\n\r\n"), None);
        // Split in the middle of the prefix and of the number.
        assert_eq!(s.feed(b"40\r\ni"), None);
        assert_eq!(s.feed(b"d: 1"), None);
        assert_eq!(s.feed(b"2\nevent: x\n\n\r\n41\r\nid: 13\n"), Some(13));
    }
}
