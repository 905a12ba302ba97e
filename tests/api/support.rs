//! Test support: a real server process on a fresh database, and a small HTTP client.
//!
//! Every test gets its own database: a new SQLite file in a temporary directory, or a new
//! PostgreSQL database (created from `STAMMTISCH_TEST_PG_URL`, default
//! `postgres://postgres@127.0.0.1:5432/postgres`, as a copy of a migrated template) dropped
//! when the server is dropped.
//! A PostgreSQL that cannot be reached fails the test; nothing is skipped.

#![allow(dead_code)] // each test module uses a different part of the kit

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use diesel::{Connection, RunQueryDsl};
use reqwest::blocking::{Client, Response};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// Which database a test server uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Runs one test body on both backends: `both!(name);` makes `name::sqlite` and `name::postgres`.
#[macro_export]
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn sqlite() {
                    super::$name($crate::support::Backend::Sqlite);
                }
                #[test]
                fn postgres() {
                    super::$name($crate::support::Backend::Postgres);
                }
            }
        )*
    };
}

fn admin_url() -> String {
    std::env::var("STAMMTISCH_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// The name of a PostgreSQL database with every migration applied, made once (per set of
/// migrations: the name carries a hash of `migrations/postgres`) and then copied for each
/// test by `CREATE DATABASE … TEMPLATE`, which is much faster than migrating every test's
/// database. Made under a temporary name and renamed when complete, so a run that dies
/// half-way leaves no half-migrated template behind.
fn migrated_template(admin: &str) -> String {
    static TEMPLATE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            use std::hash::{Hash, Hasher};
            let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres");
            let mut files: Vec<PathBuf> = walk(std::path::Path::new(dir));
            files.sort();
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            for file in &files {
                file.strip_prefix(dir).unwrap().hash(&mut hasher);
                std::fs::read(file).unwrap().hash(&mut hasher);
            }
            let name = format!("stammtisch_template_{:016x}", hasher.finish());
            let mut conn = diesel::PgConnection::establish(admin).unwrap_or_else(|e| {
                panic!("PostgreSQL is required for this test and unreachable at {admin}: {e}")
            });
            #[derive(diesel::QueryableByName)]
            struct Found {
                #[diesel(sql_type = diesel::sql_types::Integer)]
                #[allow(dead_code)]
                one: i32,
            }
            let exists = !diesel::sql_query(format!(
                "SELECT 1 AS one FROM pg_database WHERE datname = '{name}'"
            ))
            .load::<Found>(&mut conn)
            .unwrap()
            .is_empty();
            if exists {
                return name;
            }
            let building = format!("{name}_{}", uuid::Uuid::new_v4().simple());
            diesel::sql_query(format!("CREATE DATABASE {building}"))
                .execute(&mut conn)
                .unwrap();
            let base = admin.rsplit_once('/').map_or(admin, |(b, _)| b);
            let out = Command::new(env!("CARGO_BIN_EXE_stammtisch"))
                .arg("migrate")
                .env("DATABASE_URL", format!("{base}/{building}"))
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "migrating the template failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // Another test process may have won the race: then its template is used.
            if diesel::sql_query(format!("ALTER DATABASE {building} RENAME TO {name}"))
                .execute(&mut conn)
                .is_err()
            {
                let _ =
                    diesel::sql_query(format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"))
                        .execute(&mut conn);
            }
            name
        })
        .clone()
}

/// Every file below `dir`.
fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A database made for one test.
pub struct TestDb {
    pub url: String,
    pg_name: Option<String>,
    dir: PathBuf,
}

impl TestDb {
    pub fn new(backend: Backend) -> Self {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("stammtisch-test-{id}"));
        std::fs::create_dir_all(&dir).unwrap();
        match backend {
            Backend::Sqlite => Self {
                url: format!("sqlite://{}", dir.join("test.db").display()),
                pg_name: None,
                dir,
            },
            Backend::Postgres => {
                let name = format!("stammtisch_test_{id}");
                let admin = admin_url();
                let mut conn = diesel::PgConnection::establish(&admin).unwrap_or_else(|e| {
                    panic!("PostgreSQL is required for this test and unreachable at {admin}: {e}")
                });
                let template = migrated_template(&admin);
                diesel::sql_query(format!("CREATE DATABASE {name} TEMPLATE {template}"))
                    .execute(&mut conn)
                    .unwrap();
                let base = admin
                    .rsplit_once('/')
                    .map_or(admin.as_str(), |(b, _)| b)
                    .to_owned();
                Self {
                    url: format!("{base}/{name}"),
                    pg_name: Some(name),
                    dir,
                }
            }
        }
    }
}

impl TestDb {
    /// A database the test made elsewhere (e.g. on a PostgreSQL cluster of its own), at
    /// `url`; nothing is dropped afterwards but the temporary directory for the logs.
    pub fn at(url: &str) -> Self {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("stammtisch-test-{id}"));
        std::fs::create_dir_all(&dir).unwrap();
        Self {
            url: url.to_owned(),
            pg_name: None,
            dir,
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(name) = &self.pg_name
            && let Ok(mut conn) = diesel::PgConnection::establish(&admin_url())
        {
            let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .execute(&mut conn);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A running server process.
pub struct TestServer {
    pub base: String,
    pub backend: Backend,
    child: Child,
    pub log: PathBuf,
    pub db: TestDb,
    /// The extra environment it was started with (kept across `restart`).
    env: Vec<(String, String)>,
}

impl TestServer {
    pub fn start(backend: Backend) -> Self {
        Self::start_on(TestDb::new(backend), backend)
    }

    pub fn start_on(db: TestDb, backend: Backend) -> Self {
        Self::start_with_env(db, backend, &[])
    }

    /// Starts with extra environment variables (e.g. `JWT_SECRET`).
    pub fn start_with_env(db: TestDb, backend: Backend, env: &[(&str, &str)]) -> Self {
        let log = db
            .dir
            .join(format!("server-{}.log", uuid::Uuid::new_v4().simple()));
        let (child, base) = spawn(&db.url, &log, env);
        Self {
            base,
            backend,
            child,
            log,
            db,
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    /// Stops the process and starts a new one on the same database, with the same extra
    /// environment.
    pub fn restart(self) -> Self {
        let env = self.env.clone();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        self.restart_with_env(&env)
    }

    /// Stops the process (kill -9) and starts a new one on the same database with `env`
    /// as its extra environment.
    pub fn restart_with_env(mut self, env: &[(&str, &str)]) -> Self {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let log = self
            .db
            .dir
            .join(format!("server-{}.log", uuid::Uuid::new_v4().simple()));
        let (child, base) = spawn(&self.db.url, &log, env);
        self.child = child;
        self.base = base;
        self.log = log;
        self.env = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn client(&self) -> Api {
        Api {
            base: self.base.clone(),
            http: Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            codes: Default::default(),
        }
    }

    /// Moves the server's test clock forward by `seconds` (`POST /test/clock`), which
    /// answers once its deadline sweeper has acted on what came due: deadline moves, clock
    /// run-outs, released reservations and tournament steps are written when this returns.
    /// (The outbox's deliveries are not: wait for what the receiver gets.) Returns what
    /// the pass did (`deadline_moves`, `reservations_released`, `tournament_steps`).
    pub fn advance_clock(&self, seconds: u64) -> Value {
        let reply = self
            .client()
            .post("/test/clock", None, &json!({ "advance_seconds": seconds }));
        assert_eq!(reply.status, 200, "moving the test clock: {}", reply.text);
        reply.body["swept"].clone()
    }

    /// One pass of the deadline sweeper without moving the clock (after a restart, for
    /// the deadlines that passed while the server was down).
    pub fn sweep(&self) -> Value {
        self.advance_clock(0)
    }

    /// Settles the outbox (`POST /test/outbox`): when it returns, every delivery due at
    /// the test clock's time has reached its receiver and its outcome is recorded, so a
    /// delivery a receiver has not got was not due. Fails the test if a send still hangs.
    pub fn settle_outbox(&self) -> Value {
        let reply = self.client().post("/test/outbox", None, &json!({}));
        assert_eq!(reply.status, 200, "settling the outbox: {}", reply.text);
        assert_eq!(
            reply.body["in_flight"], 0,
            "a delivery was still being sent: {}",
            reply.text
        );
        reply.body
    }

    /// One claim of the outbox, without waiting for any send (`POST /test/outbox?wait=false`):
    /// what it claimed and the sends in flight after it. `claimed: 0` says that nothing due
    /// could start now (where receivers hang on purpose and a settle would wait for them).
    pub fn claim_outbox_once(&self) -> (u64, u64) {
        let reply = self
            .client()
            .post("/test/outbox?wait=false", None, &json!({}));
        assert_eq!(reply.status, 200, "claiming the outbox: {}", reply.text);
        (
            reply.body["claimed"].as_u64().unwrap(),
            reply.body["in_flight"].as_u64().unwrap(),
        )
    }

    /// The server's log so far (standard error).
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `game` as `p` sees it after `TestServer::advance_clock` (or `sweep`), whose sweeper's
/// pass has acted by the time it returns: `done` must hold at once, or the test fails
/// naming `what`.
pub fn after_sweep(
    api: &Api,
    p: &Player,
    game: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let view = api.view(p, game);
    assert!(
        done(&view),
        "{what} had not happened when the sweeper's pass returned: {view}"
    );
    view
}

/// Polls `done` every 25 ms until it holds; fails the test, naming `what`, when it does not
/// within `within`.
pub fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < within, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Starts the server binary with `DATABASE_URL=url` on a free port.
pub fn spawn(url: &str, log: &PathBuf, env: &[(&str, &str)]) -> (Child, String) {
    let stderr = std::fs::File::create(log).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stammtisch"));
    cmd.arg("serve")
        .env("DATABASE_URL", url)
        .env("BIND_ADDR", "127.0.0.1:0")
        .env("RUST_LOG", "info")
        .env_remove("JWT_SECRET")
        // Tests create many accounts and games from one address; the limit tests set
        // their own limits.
        .env("LIMIT_GUESTS_PER_HOUR", "0")
        .env("LIMIT_GAMES_PER_HOUR", "0")
        .env("LIMIT_OPEN_LOBBIES", "0")
        .env("LIMIT_COMMANDS_PER_MINUTE", "0")
        .env("LIMIT_STREAMS", "0")
        .env("LIMIT_ACCOUNTS_PER_HOUR", "0")
        .env("LIMIT_LOGINS_PER_MINUTE", "0")
        .env("LIMIT_MAILS_PER_HOUR", "0")
        // A clock the tests can move forward (`TestServer::advance_clock`), so that they
        // see deadlines and retries come due without sleeping; it runs with the system
        // time until a test moves it. An empty value in `env` switches it off.
        .env("STAMMTISCH_TEST_CLOCK", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr));
    for (k, v) in env {
        cmd.env(k, v);
    }
    #[expect(
        clippy::zombie_processes,
        reason = "the caller owns the child and waits for it on drop"
    )]
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            Instant::now() < deadline,
            "server did not start; log: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(addr) = line.strip_prefix("listening on ") {
                    let base = addr.trim().to_owned();
                    // Keep draining stdout so the server never blocks on a full pipe.
                    std::thread::spawn(move || for _ in lines.by_ref() {});
                    return (child, base);
                }
            }
            _ => panic!(
                "server exited before listening; log: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            ),
        }
    }
}

/// A response: status, headers, JSON body (or `Value::Null`) and the raw text.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Reply {
    pub fn from_response(r: Response) -> Self {
        Self::from(r)
    }

    fn from(r: Response) -> Self {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Self {
            status,
            headers,
            body,
            text,
        }
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// Asserts a problem+json answer with this status and code.
    pub fn assert_problem(&self, status: u16, code: &str) {
        assert_eq!(
            self.status, status,
            "expected {status} {code}, got {}: {}",
            self.status, self.text
        );
        assert_eq!(self.body["code"], code, "body: {}", self.text);
        let ct = self.header("content-type").unwrap_or_default();
        assert!(
            ct.starts_with("application/problem+json"),
            "content-type {ct}"
        );
        assert_eq!(self.body["status"], status);
        assert!(
            self.body["title"].is_string()
                && self.body["type"].is_string()
                && self.body["detail"].is_string()
        );
    }
}

/// An HTTP client bound to a server. It remembers the invite codes of the games it
/// created, so `join` can present them.
#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub http: Client,
    pub codes: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
}

/// A guest or account with its token.
#[derive(Clone, Debug)]
pub struct Player {
    pub id: String,
    pub name: String,
    pub token: String,
}

impl Api {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub fn get(&self, path: &str, token: Option<&str>) -> Reply {
        let mut req = self.http.get(self.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        Reply::from(req.send().unwrap())
    }

    pub fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.post_with(path, token, body, &[])
    }

    pub fn post_with(
        &self,
        path: &str,
        token: Option<&str>,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut req = self.http.post(self.url(path)).json(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Reply::from(req.send().unwrap())
    }

    /// `PATCH` with a JSON body and a bearer token.
    pub fn patch(&self, path: &str, token: &str, body: &Value) -> Reply {
        let req = self
            .http
            .patch(self.url(path))
            .json(body)
            .bearer_auth(token);
        Reply::from(req.send().unwrap())
    }

    /// `PUT` with a JSON body and a bearer token.
    pub fn put(&self, path: &str, token: &str, body: &Value) -> Reply {
        let req = self.http.put(self.url(path)).json(body).bearer_auth(token);
        Reply::from(req.send().unwrap())
    }

    /// The server's time (its test clock, moved by nothing).
    pub fn server_now(&self) -> chrono::DateTime<chrono::Utc> {
        let r = self.post("/test/clock", None, &json!({ "advance_seconds": 0 }));
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["now"].as_str().unwrap().parse().unwrap()
    }

    /// `DELETE` with a bearer token.
    pub fn delete(&self, path: &str, token: &str) -> Reply {
        let req = self.http.delete(self.url(path)).bearer_auth(token);
        Reply::from(req.send().unwrap())
    }

    pub fn post_raw(
        &self,
        path: &str,
        token: Option<&str>,
        body: Vec<u8>,
        content_type: &str,
    ) -> Reply {
        let mut req = self
            .http
            .post(self.url(path))
            .header("content-type", content_type)
            .body(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        Reply::from(req.send().unwrap())
    }

    /// A guest named `name`, or `name-2`, `name-3`, … when a live account holds the name
    /// already (names are unique across guests and accounts; tests that play several
    /// tables on one server reuse names).
    pub fn guest(&self, name: &str) -> Player {
        for n in 1.. {
            let tried = if n == 1 {
                name.to_owned()
            } else {
                format!("{name}-{n}")
            };
            let r = self.post("/v1/guests", None, &json!({ "name": tried }));
            if r.status == 409 && r.body["code"] == "name_taken" && n < 100 {
                continue;
            }
            assert_eq!(r.status, 201, "{}", r.text);
            return Player {
                id: r.body["account"]["id"].as_str().unwrap().into(),
                name: tried,
                token: r.body["access_token"].as_str().unwrap().into(),
            };
        }
        unreachable!("the loop returns or panics")
    }

    /// Registers an account (password `password-of-<name>`) and logs it in.
    pub fn account(&self, name: &str) -> Player {
        let password = format!("password-of-{name}");
        let r = self.post(
            "/v1/accounts",
            None,
            &json!({ "name": name, "password": password }),
        );
        assert_eq!(r.status, 201, "{}", r.text);
        let id = r.body["id"].as_str().unwrap().to_owned();
        let r = self.post(
            "/v1/tokens",
            None,
            &json!({ "name": name, "password": password }),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        Player {
            id,
            name: name.into(),
            token: r.body["access_token"].as_str().unwrap().into(),
        }
    }

    /// Creates a game; returns its view.
    pub fn create_game(&self, host: &Player, body: &Value) -> Value {
        let r = self.post("/v1/games", Some(&host.token), body);
        assert_eq!(r.status, 201, "{}", r.text);
        if let (Some(id), Some(code)) = (r.body["id"].as_str(), r.body["invite_code"].as_str()) {
            self.codes
                .lock()
                .unwrap()
                .insert(id.to_owned(), code.to_owned());
        }
        r.body
    }

    /// Joins a game, with its invite code when this client created it privately.
    pub fn join(&self, player: &Player, game: &str) -> Value {
        let code = self.codes.lock().unwrap().get(game).cloned();
        let cmd = match code {
            Some(code) => json!({ "type": "join", "invite_code": code }),
            None => json!({ "type": "join" }),
        };
        self.ok(player, game, &cmd)
    }

    pub fn command(&self, player: &Player, game: &str, cmd: &Value) -> Reply {
        self.post(
            &format!("/v1/games/{game}/commands"),
            Some(&player.token),
            cmd,
        )
    }

    /// Sends a command that must succeed; returns the new view.
    pub fn ok(&self, player: &Player, game: &str, cmd: &Value) -> Value {
        let r = self.command(player, game, cmd);
        assert_eq!(
            r.status, 200,
            "command {cmd} by {}: {}",
            player.name, r.text
        );
        r.body
    }

    /// The ids of the games `GET /v1/games?{query}` lists for `viewer` (its first page).
    pub fn listed(&self, viewer: &Player, query: &str) -> Vec<String> {
        let r = self.get(&format!("/v1/games?{query}"), Some(&viewer.token));
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|g| g["id"].as_str().map(str::to_owned))
            .collect()
    }

    pub fn view(&self, player: &Player, game: &str) -> Value {
        let r = self.get(&format!("/v1/games/{game}"), Some(&player.token));
        assert_eq!(r.status, 200, "{}", r.text);
        r.body
    }

    /// All events the player may see, following the pages.
    pub fn events(&self, player: &Player, game: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            let r = self.get(
                &format!("/v1/games/{game}/events?after={after}&limit=500"),
                Some(&player.token),
            );
            assert_eq!(r.status, 200, "{}", r.text);
            let items = r.body["items"].as_array().unwrap().clone();
            out.extend(items);
            match r.body["next_cursor"].as_str() {
                Some(c) => after = c.parse().unwrap(),
                None => return out,
            }
        }
    }
}

/// Card numbers of a JSON array.
pub fn cards(v: &Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// Creates a game for `host` with `humans` joining and `bots` bots, starts it.
pub fn seated_game(
    api: &Api,
    host: &Player,
    others: &[Player],
    bots: usize,
    extra: &Value,
) -> String {
    let players = 1 + others.len() + bots;
    let mut body = json!({ "ruleset": "6-nimmt", "players": players });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    let game = api.create_game(host, &body);
    let id = game["id"].as_str().unwrap().to_owned();
    for p in others {
        api.join(p, &id);
    }
    for _ in 0..bots {
        api.ok(
            host,
            &id,
            &json!({ "type": "add_bot", "strategy": "random" }),
        );
    }
    api.ok(host, &id, &json!({ "type": "start" }));
    id
}

/// Another server process on the same database (a second replica).
pub struct Replica {
    pub base: String,
    child: Child,
    log: PathBuf,
}

impl Replica {
    pub fn client(&self) -> Api {
        Api {
            base: self.base.clone(),
            http: Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            codes: Default::default(),
        }
    }
}

impl Replica {
    /// What the replica logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TestServer {
    /// Starts a second server process on this server's database.
    pub fn replica(&self, env: &[(&str, &str)]) -> Replica {
        let log = self
            .db
            .dir
            .join(format!("replica-{}.log", uuid::Uuid::new_v4().simple()));
        let (child, base) = spawn(&self.db.url, &log, env);
        Replica { base, child, log }
    }
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct Frame {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: Value,
    /// A comment line (keep-alive) instead of an event.
    pub comment: bool,
}

/// A live `text/event-stream` response, read frame by frame. Every read waits at most
/// `read_timeout`; a longer silence fails the test.
pub struct EventStream {
    reader: BufReader<Response>,
}

impl EventStream {
    pub fn open(
        base: &str,
        path: &str,
        token: &str,
        last_event_id: Option<&str>,
        read_timeout: Duration,
    ) -> Self {
        Self::try_open(base, path, Some(token), last_event_id, read_timeout)
            .unwrap_or_else(|r| panic!("stream refused: {} {}", r.status, r.text))
    }

    /// Opens a stream (with a bearer token, or none for `?ticket=` URLs); the refusal
    /// when the server does not answer 200.
    pub fn try_open(
        base: &str,
        path: &str,
        token: Option<&str>,
        last_event_id: Option<&str>,
        read_timeout: Duration,
    ) -> Result<Self, Box<Reply>> {
        let client = Client::builder().timeout(read_timeout).build().unwrap();
        let mut req = client.get(format!("{base}{path}"));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let resp = req.send().unwrap();
        if resp.status().as_u16() != 200 {
            return Err(Box::new(Reply::from(resp)));
        }
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        assert!(ct.starts_with("text/event-stream"), "content-type {ct}");
        Ok(Self {
            reader: BufReader::new(resp),
        })
    }

    /// The next frame; `None` when the server closed the stream.
    pub fn next_frame(&mut self) -> Option<Frame> {
        let mut frame = Frame {
            id: None,
            event: None,
            data: Value::Null,
            comment: false,
        };
        let mut any = false;
        loop {
            let mut line = String::new();
            let n = self
                .reader
                .read_line(&mut line)
                .expect("the stream went silent for too long");
            if n == 0 {
                return any.then_some(frame);
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if any {
                    return Some(frame);
                }
                continue;
            }
            any = true;
            if line.starts_with(':') {
                frame.comment = true;
            } else if let Some(v) = line.strip_prefix("id: ") {
                frame.id = Some(v.to_owned());
            } else if let Some(v) = line.strip_prefix("event: ") {
                frame.event = Some(v.to_owned());
            } else if let Some(v) = line.strip_prefix("data: ") {
                frame.data = serde_json::from_str(v).unwrap();
            }
        }
    }

    /// The next event frame, skipping comments.
    pub fn next_event(&mut self) -> Option<Frame> {
        loop {
            let f = self.next_frame()?;
            if !f.comment {
                return Some(f);
            }
        }
    }
}

impl TestServer {
    /// Sends SIGTERM and waits for the process to exit; returns whether it exited cleanly.
    pub fn terminate(&mut self) -> bool {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            assert!(
                Instant::now() < deadline,
                "the server did not stop after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Creates a game with `body` for `people[0]`, lets the others join and the host seat
/// `bots` (strategies), and starts it.
pub fn start_game(api: &Api, people: &[Player], body: &Value, bots: &[&str]) -> String {
    let game = api.create_game(&people[0], body);
    let id = game["id"].as_str().unwrap().to_owned();
    for p in &people[1..] {
        api.join(p, &id);
    }
    for strategy in bots {
        api.ok(
            &people[0],
            &id,
            &json!({ "type": "add_bot", "strategy": strategy }),
        );
    }
    let view = api.ok(&people[0], &id, &json!({ "type": "start" }));
    assert_eq!(view["status"], "active");
    id
}

/// Sends random legal game moves (xorshift from `seed`) for the people until the game is
/// finished; returns the final view.
pub fn play_randomly(api: &Api, people: &[Player], game: &str, seed: u64) -> Value {
    let mut rng = seed | 1;
    for _ in 0..10_000 {
        let mut moved = false;
        for p in people {
            let view = api.view(p, game);
            if view["status"] == "finished" {
                return view;
            }
            let moves: Vec<&Value> = view["legal"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["type"] != "resign")
                .collect();
            if moves.is_empty() {
                continue;
            }
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let cmd = moves[usize::try_from(rng % moves.len() as u64).unwrap()].clone();
            api.ok(p, game, &cmd);
            moved = true;
        }
        assert!(
            moved,
            "nobody can move in an unfinished game: {}",
            api.view(&people[0], game)
        );
    }
    panic!("the game did not finish");
}

/// Plays `turns` turns for `me` in a 6-nimmt game: the lowest hand card each turn, and the
/// first row offered when a `take_row` is asked.
pub fn play_turns(api: &Api, me: &Player, game: &str, turns: u64) {
    for _ in 0..turns {
        let card = cards(&api.view(me, game)["you"]["hand"])[0];
        let view = api.ok(me, game, &json!({ "type": "play_card", "card": card }));
        if let Some(take) = view["legal"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "take_row")
        {
            api.ok(me, game, &take.clone());
        }
    }
}

/// Runs a command of the `stammtisch` binary (`grant-role …`, `rebuild-ratings`) against the
/// test's database; asserts that it succeeds and returns what it printed.
pub fn run_command(server: &TestServer, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_stammtisch"))
        .args(args)
        .env("DATABASE_URL", &server.db.url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stammtisch {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A connection of its own to a test's SQLite database (`sqlite://PATH` or a plain path).
/// The server may be writing (its projection, a delivery): the connection waits for the lock
/// as the server's own connections do, instead of failing with "database is locked".
pub fn sqlite(url: &str) -> diesel::SqliteConnection {
    let mut c = diesel::SqliteConnection::establish(url.trim_start_matches("sqlite://")).unwrap();
    diesel::sql_query("PRAGMA busy_timeout = 10000")
        .execute(&mut c)
        .unwrap();
    c
}

/// Runs one SQL statement on the test's database directly.
pub fn sql(server: &TestServer, statement: &str) {
    raw_execute(server.backend, &server.db.url, statement).unwrap();
}

/// Runs one statement on a connection of its own to a test database of either backend
/// (for what the API does not show: a stored row, an `UPDATE` the database refuses).
pub fn raw_execute(backend: Backend, url: &str, statement: &str) -> diesel::QueryResult<usize> {
    match backend {
        Backend::Postgres => {
            diesel::sql_query(statement).execute(&mut diesel::PgConnection::establish(url).unwrap())
        }
        Backend::Sqlite => diesel::sql_query(statement).execute(&mut sqlite(url)),
    }
}

/// The rows of one query on a connection of its own to a test database of either backend.
pub fn raw_rows<T>(backend: Backend, url: &str, query: &str) -> Vec<T>
where
    T: diesel::QueryableByName<diesel::pg::Pg>
        + diesel::QueryableByName<diesel::sqlite::Sqlite>
        + 'static,
{
    match backend {
        Backend::Postgres => {
            diesel::sql_query(query).load(&mut diesel::PgConnection::establish(url).unwrap())
        }
        Backend::Sqlite => diesel::sql_query(query).load(&mut sqlite(url)),
    }
    .unwrap()
}

/// A number of `/metrics` (a counter or gauge without labels).
pub fn metric(api: &Api, name: &str) -> u64 {
    let m = api.get("/metrics", None);
    assert_eq!(m.status, 200);
    m.text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} missing from /metrics:\n{}", m.text))
}
