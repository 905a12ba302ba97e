//! Scratch databases and server processes for one benchmark configuration.
//!
//! Owns: a temporary directory, a fresh SQLite file or a fresh PostgreSQL database (created
//! through `psql` and dropped again, like `tests/api/support.rs` does), and the server
//! processes it starts (killed on drop). It talks to 127.0.0.1 only and never touches a
//! database it did not create.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};

/// Which database the server runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A fresh SQLite file in a temporary directory.
    Sqlite,
    /// A fresh database on the PostgreSQL server of `--pg-url`.
    Postgres,
}

impl Backend {
    /// The name used in flags and tables.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }

    /// Parses `sqlite`, `postgres` (or `pg`).
    ///
    /// # Errors
    /// An unknown name.
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        match s {
            "sqlite" => Ok(Self::Sqlite),
            "postgres" | "pg" | "postgresql" => Ok(Self::Postgres),
            _ => bail!("unknown backend {s:?} (sqlite or postgres)"),
        }
    }
}

/// What is left to clean up if the tool is interrupted (Ctrl-C, SIGTERM): the server
/// processes, scratch databases and directories that exist now.
struct Leftovers {
    pids: Vec<u32>,
    databases: Vec<(String, String)>,
    dirs: Vec<PathBuf>,
}

static LEFTOVERS: Mutex<Leftovers> = Mutex::new(Leftovers {
    pids: Vec::new(),
    databases: Vec::new(),
    dirs: Vec::new(),
});

fn leftovers(f: impl FnOnce(&mut Leftovers)) {
    if let Ok(mut l) = LEFTOVERS.lock() {
        f(&mut l);
    }
}

/// On SIGINT or SIGTERM: kill the servers started so far, drop the scratch databases,
/// remove the scratch directories, and exit with 130.
///
/// # Errors
/// A handler that cannot be installed.
pub fn clean_up_on_interrupt() -> anyhow::Result<()> {
    ctrlc::set_handler(|| {
        eprintln!("interrupted: stopping the servers and dropping the scratch databases");
        let taken = LEFTOVERS.lock().map(|mut l| {
            (
                std::mem::take(&mut l.pids),
                std::mem::take(&mut l.databases),
                std::mem::take(&mut l.dirs),
            )
        });
        if let Ok((pids, databases, dirs)) = taken {
            for pid in pids {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
            for (admin, name) in databases {
                let _ = psql(
                    &admin,
                    &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                );
            }
            for dir in dirs {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        std::process::exit(130);
    })
    .context("installing the interrupt handler")
}

/// A unique suffix for scratch names: process id and nanoseconds.
#[must_use]
pub fn unique() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}_{nanos}", std::process::id())
}

/// Runs one SQL text through `psql` on `url`; returns its unaligned, tuples-only output.
///
/// # Errors
/// `psql` missing or the SQL failing.
pub fn psql(url: &str, sql: &str) -> anyhow::Result<String> {
    let out = Command::new("psql")
        .args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            sql,
        ])
        .output()
        .context("running psql (is the PostgreSQL client installed?)")?;
    if !out.status.success() {
        bail!(
            "psql failed on {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Process ids of the PostgreSQL backends connected to `database` (to read their CPU time;
/// PostgreSQL runs on this machine).
#[must_use]
pub fn pg_backend_pids(admin: &str, database: &str) -> Vec<u32> {
    psql(
        admin,
        &format!("SELECT pid FROM pg_stat_activity WHERE datname = '{database}'"),
    )
    .map(|out| out.lines().filter_map(|l| l.trim().parse().ok()).collect())
    .unwrap_or_default()
}

/// `postgres://…/postgres` with the database name replaced.
#[must_use]
pub fn url_of_database(admin: &str, name: &str) -> String {
    let base = admin.rsplit_once('/').map_or(admin, |(b, _)| b);
    format!("{base}/{name}")
}

/// A scratch PostgreSQL database, dropped (with its connections) on drop.
pub struct PgDatabase {
    admin: String,
    /// Its name.
    pub name: String,
    /// A URL to it.
    pub url: String,
}

impl PgDatabase {
    /// Creates a database named `prefix_<unique>`.
    ///
    /// # Errors
    /// PostgreSQL unreachable.
    pub fn create(admin: &str, prefix: &str) -> anyhow::Result<Self> {
        let name = format!("{prefix}_{}", unique());
        psql(admin, &format!("CREATE DATABASE {name}"))
            .with_context(|| format!("PostgreSQL is needed at {admin}"))?;
        leftovers(|l| l.databases.push((admin.to_owned(), name.clone())));
        Ok(Self {
            admin: admin.to_owned(),
            url: url_of_database(admin, &name),
            name,
        })
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        leftovers(|l| l.databases.retain(|(_, n)| *n != self.name));
        if let Err(e) = psql(
            &self.admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        ) {
            eprintln!(
                "warning: could not drop scratch database {}: {e}",
                self.name
            );
        }
    }
}

/// A temporary directory, removed on drop.
pub struct TempDir {
    /// Its path.
    pub path: PathBuf,
}

impl TempDir {
    /// Creates `$TMPDIR/stammtisch-bench-<unique>`.
    ///
    /// # Errors
    /// The directory cannot be made.
    pub fn new() -> anyhow::Result<Self> {
        let path = std::env::temp_dir().join(format!("stammtisch-bench-{}", unique()));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        leftovers(|l| l.dirs.push(path.clone()));
        Ok(Self { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        leftovers(|l| l.dirs.retain(|d| *d != self.path));
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A fresh database for one configuration.
pub struct Database {
    /// The `DATABASE_URL` for the server.
    pub url: String,
    /// Kept for the drop.
    pub pg: Option<PgDatabase>,
    /// Where the SQLite file and the server logs live.
    pub dir: TempDir,
}

impl Database {
    /// A fresh SQLite file or PostgreSQL database.
    ///
    /// # Errors
    /// PostgreSQL unreachable, no temporary directory.
    pub fn fresh(backend: Backend, pg_admin: &str) -> anyhow::Result<Self> {
        let dir = TempDir::new()?;
        Ok(match backend {
            Backend::Sqlite => Self {
                url: format!("sqlite://{}", dir.path.join("bench.db").display()),
                pg: None,
                dir,
            },
            Backend::Postgres => {
                let pg = PgDatabase::create(pg_admin, "stammtisch_bench")?;
                Self {
                    url: pg.url.clone(),
                    pg: Some(pg),
                    dir,
                }
            }
        })
    }
}

/// The server's rate limits (`LIMIT_*`) as `counted` (every limit at 1,000,000,000: the
/// counting runs as in production, nothing is refused), `off` (0: no counting at all) or
/// `defaults` (none set: the server's own). The defaults (e.g. 600 commands per account and
/// minute, 20 streams per account) would refuse most benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Limits {
    /// Counted but never reached.
    Counted,
    /// Switched off.
    Off,
    /// The server's defaults (what its environment does not set).
    Defaults,
}

impl Limits {
    /// The environment that sets every limit.
    #[must_use]
    pub fn env(self) -> Vec<(&'static str, &'static str)> {
        let value = match self {
            Self::Counted => "1000000000",
            Self::Off => "0",
            Self::Defaults => return Vec::new(),
        };
        [
            "LIMIT_GUESTS_PER_HOUR",
            "LIMIT_GAMES_PER_HOUR",
            "LIMIT_OPEN_LOBBIES",
            "LIMIT_COMMANDS_PER_MINUTE",
            "LIMIT_STREAMS",
            "LIMIT_FAILED_LOGINS",
            "LIMIT_FAILED_LOGINS_PER_ADDRESS",
            "LIMIT_LOGINS_PER_MINUTE",
            "LIMIT_ACCOUNTS_PER_HOUR",
            "LIMIT_MAILS_PER_HOUR",
        ]
        .into_iter()
        .map(|k| (k, value))
        .collect()
    }
}

/// How to start the server.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The server binary (a release build).
    pub binary: PathBuf,
    /// `RUST_LOG` for the server.
    pub rust_log: String,
    /// Its rate limits.
    pub limits: Limits,
}

/// A running server process, killed on drop.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// `127.0.0.1:PORT`.
    pub addr: std::net::SocketAddr,
    /// Its process id.
    pub pid: u32,
    /// From spawn to the "listening on" line.
    pub listening_after: Duration,
}

impl Server {
    /// Starts `serve` on `database_url` at a free port of 127.0.0.1 and waits (at most 60 s)
    /// for its "listening on" line. Standard error goes to `log`.
    ///
    /// # Errors
    /// The binary is missing or the server exits or stays silent.
    pub fn start(launch: &Launch, database_url: &str, log: &Path) -> anyhow::Result<Self> {
        Self::start_with(launch, database_url, log, &[])
    }

    /// [`Server::start`] with more environment variables for the server.
    ///
    /// # Errors
    /// The binary is missing or the server exits or stays silent.
    pub fn start_with(
        launch: &Launch,
        database_url: &str,
        log: &Path,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        if !launch.binary.exists() {
            bail!(
                "server binary {} not found (run `cargo build --release` first, or set STAMMTISCH_BIN)",
                launch.binary.display()
            );
        }
        let stderr = std::fs::File::create(log)?;
        let started = Instant::now();
        let mut child = Command::new(&launch.binary)
            .arg("serve")
            .env("DATABASE_URL", database_url)
            .env("BIND_ADDR", "127.0.0.1:0")
            .env("RUST_LOG", &launch.rust_log)
            .envs(launch.limits.env())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .with_context(|| format!("starting {}", launch.binary.display()))?;
        let pid = child.id();
        leftovers(|l| l.pids.push(pid));
        let stdout = child.stdout.take().context("server stdout")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            for line in lines.by_ref() {
                let Ok(line) = line else { break };
                if let Some(addr) = line.strip_prefix("listening on ") {
                    let _ = tx.send(addr.trim().to_owned());
                    break;
                }
            }
            // Keep draining so that the server never blocks on a full pipe.
            for _ in lines {}
        });
        let base = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(base) => base,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                leftovers(|l| l.pids.retain(|p| *p != pid));
                bail!(
                    "the server did not start; its log:\n{}",
                    std::fs::read_to_string(log).unwrap_or_default()
                );
            }
        };
        let listening_after = started.elapsed();
        let addr = base
            .strip_prefix("http://")
            .unwrap_or(&base)
            .parse()
            .with_context(|| format!("server address {base}"))?;
        Ok(Self {
            child,
            base,
            addr,
            pid,
            listening_after,
        })
    }

    /// Whether the process still runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// How the process ended, if it did.
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        leftovers(|l| l.pids.retain(|p| *p != self.pid));
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
