//! PostgreSQL clusters of a test's own (`initdb` into a temporary directory, own port and
//! socket directory; never the shared cluster), and streaming standbys of them
//! (`pg_basebackup`).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Finds a PostgreSQL server program: on `PATH`, else in the Debian directory of 15.
fn pg_program(name: &str) -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain([Path::new("/usr/lib/postgresql/15/bin").join(name)])
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} (PostgreSQL 15) is required for this test"))
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A PostgreSQL cluster of the test's own, in a temporary directory, on its own port and
/// socket directory; stopped (immediately) and removed when dropped.
pub struct PgCluster {
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl PgCluster {
    pub fn new() -> Self {
        let cluster = Self::empty();
        let data = cluster.data();
        cluster.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        cluster.pg_ctl("start");
        cluster
    }

    /// A hot standby of `primary`, streaming its WAL: `pg_basebackup -R` (the primary's
    /// `initdb` defaults allow replication connections from 127.0.0.1), started on a port of
    /// its own.
    pub fn standby_of(primary: &PgCluster) -> Self {
        let cluster = Self::empty();
        let data = cluster.data();
        let port = primary.port.to_string();
        cluster.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                &data,
                "-R",
                "-X",
                "stream",
                "--no-sync",
            ],
        );
        cluster.pg_ctl("start");
        cluster
    }

    /// A directory and port, nothing in them yet.
    fn empty() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "stammtisch-pgfault-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        // initdb and postgres refuse to run as root: run them as the postgres user, which
        // must own the directory.
        let as_postgres = running_as_root();
        if as_postgres {
            let chown = Command::new("chown")
                .arg("postgres:")
                .arg(&dir)
                .status()
                .unwrap();
            assert!(chown.success(), "chown postgres: {}", dir.display());
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self {
            dir,
            port,
            as_postgres,
        }
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn run(&self, program: &str, args: &[&str]) {
        let program = pg_program(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        };
        let out = cmd.args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `pg_ctl start|stop|…` on this cluster, waiting for it to finish.
    pub fn pg_ctl(&self, action: &str) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=60",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("postgres.log").display().to_string();
        let data = self.data();
        let mut args = vec!["-D", &data, "-w", "-t", "60"];
        match action {
            "start" => args.extend(["-o", &options, "-l", &log, "start"]),
            "stop" => args.extend(["-m", "fast", "stop"]),
            "kill" => args.extend(["-m", "immediate", "stop"]),
            other => panic!("pg_ctl {other}?"),
        }
        self.run("pg_ctl", &args);
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.data();
        let _ = Command::new(if self.as_postgres { "runuser" } else { "true" })
            .args(if self.as_postgres {
                vec!["-u", "postgres", "--"]
            } else {
                vec![]
            })
            .arg(pg_program("pg_ctl"))
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
