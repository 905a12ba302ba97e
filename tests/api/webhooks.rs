//! Webhooks: registration, signed `your_turn` and `game_finished` notifications, retries
//! with the same delivery id, no duplicates across a restart mid-delivery, nothing sent for
//! a move the game no longer asks for, and payloads without hidden information.
//!
//! A local receiver (a `TcpListener` on 127.0.0.1 with a thread per connection) answers each
//! request according to a script and records method, path, headers, body and its answer; the
//! servers that call it run with `WEBHOOK_ALLOW_LOOPBACK=true`. Without that setting,
//! loopback, private, link-local, metadata and other internal targets are refused at
//! registration and again when a delivery connects.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use diesel::{Connection, RunQueryDsl};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, TestDb, TestServer};

/// The setting that lets webhooks reach the local receiver.
pub(crate) const LOOPBACK: (&str, &str) = ("WEBHOOK_ALLOW_LOOPBACK", "true");

/// A server whose webhooks may reach loopback addresses.
pub(crate) fn dev_server(backend: Backend, env: &[(&str, &str)]) -> TestServer {
    let mut env = env.to_vec();
    env.push(LOOPBACK);
    TestServer::start_with_env(TestDb::new(backend), backend, &env)
}

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Request {
    path: String,
    /// Header names in lower case.
    headers: HashMap<String, String>,
    body: String,
    /// The status the receiver answered (or tried to answer) with.
    answered: u16,
    /// The attempt of this delivery id, from 1.
    nth: usize,
    at: Instant,
}

impl Request {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }

    fn delivery(&self) -> &str {
        self.header("stammtisch-delivery")
    }

    fn payload(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    fn ok(&self) -> bool {
        (200..300).contains(&self.answered)
    }
}

/// How the receiver answers the `nth` request of a delivery id: status and a delay.
type Script = Arc<dyn Fn(usize) -> (u16, Duration) + Send + Sync>;

/// A local webhook receiver.
struct Receiver {
    base: String,
    log: Arc<Mutex<Vec<Request>>>,
}

impl Receiver {
    fn start(script: impl Fn(usize) -> (u16, Duration) + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let log: Arc<Mutex<Vec<Request>>> = Arc::default();
        let script: Script = Arc::new(script);
        let shared = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let log = Arc::clone(&shared);
                let script = Arc::clone(&script);
                std::thread::spawn(move || serve(stream, &log, &script));
            }
        });
        Self { base, log }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    /// Waits until `done` holds for the requests so far; fails after `secs` seconds.
    fn wait(&self, what: &str, secs: u64, done: impl Fn(&[Request]) -> bool) -> Vec<Request> {
        let start = Instant::now();
        loop {
            let requests = self.requests();
            if done(&requests) {
                return requests;
            }
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "timed out waiting for {what}; received: {:#?}",
                requests
                    .iter()
                    .map(|r| (&r.path, r.answered, &r.body))
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

/// Reads one HTTP/1.1 request, records it, answers by the script, closes the connection.
fn serve(stream: TcpStream, log: &Mutex<Vec<Request>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    assert_eq!(parts.next(), Some("POST"), "request line {line:?}");
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap();
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
    }
    let length: usize = headers
        .get("content-length")
        .expect("a request with Content-Length")
        .parse()
        .unwrap();
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let delivery = headers
        .get("stammtisch-delivery")
        .cloned()
        .unwrap_or_default();
    let (status, delay) = {
        let mut log = log.lock().unwrap();
        let nth = 1 + log.iter().filter(|r| r.delivery() == delivery).count();
        let (status, delay) = script(nth);
        log.push(Request {
            path,
            headers,
            body: String::from_utf8(body).unwrap(),
            answered: status,
            nth,
            at: Instant::now(),
        });
        (status, delay)
    };
    std::thread::sleep(delay);
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} Scripted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    let _ = stream.flush();
}

/// A receiver that reads each request and never answers: it holds the connection open
/// until the server gives up on it (its timeout) and closes it, or the test ends.
pub(crate) struct Hanging {
    base: String,
    log: Arc<Mutex<HangLog>>,
}

#[derive(Default)]
struct HangLog {
    /// When each request had arrived in full.
    arrived: Vec<Instant>,
    /// When the server closed a connection it had sent a request on.
    ended: Vec<Instant>,
}

impl Hanging {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let log: Arc<Mutex<HangLog>> = Arc::default();
        let shared = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let log = Arc::clone(&shared);
                std::thread::spawn(move || hang(stream, &log));
            }
        });
        Self { base, log }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Requests received so far.
    pub(crate) fn arrived(&self) -> usize {
        self.log.lock().unwrap().arrived.len()
    }

    /// When the server gave up on requests (closed their connections).
    pub(crate) fn ended(&self) -> Vec<Instant> {
        self.log.lock().unwrap().ended.clone()
    }
}

/// Reads one request, records it, and then only waits for the server to close.
fn hang(stream: TcpStream, log: &Mutex<HangLog>) {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    log.lock().unwrap().arrived.push(Instant::now());
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
    log.lock().unwrap().ended.push(Instant::now());
}

/// Waits until the hanging receivers together got at least `n` requests; fails after 30 s.
pub(crate) fn wait_hanging(hanging: &[Hanging], n: usize) {
    let start = Instant::now();
    loop {
        let got: usize = hanging.iter().map(Hanging::arrived).sum();
        if got >= n {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the hanging receivers got {got} requests, expected {n}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Checks `Stammtisch-Signature` against the secret, the body and the clock.
fn assert_signed(r: &Request, secret: &str) {
    assert_eq!(r.header("content-type"), "application/json");
    let sig = r.header("stammtisch-signature");
    let (t, v1) = sig
        .strip_prefix("t=")
        .and_then(|s| s.split_once(",v1="))
        .unwrap_or_else(|| panic!("signature header {sig:?}"));
    let t: i64 = t.parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(
        (now - t).abs() <= 60,
        "timestamp {t} is not fresh (now {now})"
    );
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{}", r.body).as_bytes());
    let expected = hex::encode(mac.finalize().into_bytes());
    assert_eq!(v1, expected, "signature of {}", r.body);
    let mut wrong = Hmac::<sha2::Sha256>::new_from_slice(b"another secret").unwrap();
    wrong.update(format!("{t}.{}", r.body).as_bytes());
    assert_ne!(v1, hex::encode(wrong.finalize().into_bytes()));
    assert_eq!(
        r.payload()["id"],
        r.delivery(),
        "the payload id is the delivery header"
    );
}

/// Registers a webhook; returns its id and secret.
pub(crate) fn register(api: &Api, p: &Player, url: &str) -> (String, String) {
    let r = api.post("/v1/webhooks", Some(&p.token), &json!({ "url": url }));
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        r.header("location").as_deref(),
        Some(format!("/v1/webhooks/{id}").as_str())
    );
    (id, r.body["secret"].as_str().unwrap().to_owned())
}

/// The outbox rows, as the database has them: id → (status, attempts, last_error).
pub(crate) fn outbox(
    backend: Backend,
    url: &str,
) -> HashMap<String, (String, i32, Option<String>)> {
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        id: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        status: String,
        #[diesel(sql_type = diesel::sql_types::Integer)]
        attempts: i32,
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
        last_error: Option<String>,
    }
    let q = "SELECT id, status, attempts, last_error FROM webhook_deliveries";
    let rows: Vec<Row> = crate::support::raw_rows(backend, url, q);
    rows.into_iter()
        .map(|r| (r.id, (r.status, r.attempts, r.last_error)))
        .collect()
}

/// A claim of the outbox now (`POST /test/outbox?wait=false`) starts nothing, and exactly
/// `in_flight` sends are under way: the hanging ones `beside` names.
fn assert_nothing_more_starts(server: &TestServer, in_flight: u64, beside: &str) {
    assert_eq!(
        server.claim_outbox_once(),
        (0, in_flight),
        "a claim beside {beside} started another"
    );
}

/// Waits (at most 30 s) until `n` deliveries are recorded as delivered (their sends ended).
fn wait_delivered(backend: Backend, url: &str, n: usize) {
    let delivered = || {
        let rows = outbox(backend, url);
        rows.values().filter(|r| r.0 == "delivered").count()
    };
    crate::support::wait_until(
        &format!("{n} deliveries recorded as delivered"),
        Duration::from_secs(30),
        || delivered() >= n,
    );
}

/// Waits (at most 20 s) until `n` pending deliveries are due no earlier than `after`: put
/// off, not attempted.
fn wait_until_put_off(backend: Backend, url: &str, n: usize, after: chrono::NaiveDateTime) {
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let q = "SELECT count(*) AS n FROM webhook_deliveries \
             WHERE status = 'pending' AND next_attempt_at > $1";
    let start = Instant::now();
    loop {
        let query = diesel::sql_query(q).bind::<diesel::sql_types::Timestamp, _>(after);
        let row: Row = match backend {
            Backend::Postgres => {
                query.get_result(&mut diesel::PgConnection::establish(url).unwrap())
            }
            Backend::Sqlite => query.get_result(&mut crate::support::sqlite(url)),
        }
        .unwrap();
        if usize::try_from(row.n).unwrap() >= n {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{} of {n} deliveries put off: {:?}",
            row.n,
            outbox(backend, url)
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

pub(crate) fn wait_for_status(backend: Backend, url: &str, id: &str, status: &str) {
    let start = Instant::now();
    loop {
        let rows = outbox(backend, url);
        if rows.get(id).is_some_and(|r| r.0 == status) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "delivery {id} never became {status}: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Settles the outbox (`TestServer::settle_outbox`) and checks that it holds nothing
/// pending (each row delivered, dropped or failed), then moves the server's clock an hour
/// on, past every backoff and lease, and settles it again: whatever the worker would still
/// send has been sent by then.
pub(crate) fn settle_and_skip_an_hour(server: &TestServer) {
    server.settle_outbox();
    let rows = outbox(server.backend, &server.db.url);
    assert!(
        rows.values().all(|r| r.0 != "pending"),
        "the outbox did not settle: {rows:?}"
    );
    server.advance_clock(3600);
    server.settle_outbox();
}

/// Waits until the outbox records a failed attempt of `id` (so its retry is scheduled from
/// the clock as it is now, not from a clock the test moved meanwhile).
pub(crate) fn wait_for_failed_attempt(server: &TestServer, id: &str, attempts: i32) {
    let start = Instant::now();
    loop {
        let rows = outbox(server.backend, &server.db.url);
        if rows
            .get(id)
            .is_some_and(|r| r.1 == attempts && r.0 == "pending" && r.2.is_some())
        {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "delivery {id} never recorded attempt {attempts} as failed: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A private 2-player 6-nimmt game of one round hosted by `host`, `other` seated (not
/// started). `deal`: a prepared first deal.
pub(crate) fn lobby(api: &Api, host: &Player, other: &Player, deal: Option<Value>) -> String {
    let mut body =
        json!({ "ruleset": "6-nimmt", "players": 2, "options": { "end": { "rounds": 1 } } });
    if let Some(deal) = deal {
        body["deal"] = deal;
    }
    let game = api.create_game(host, &body)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.join(other, &game);
    game
}

/// The actions a view says its caller is asked now.
pub(crate) fn asked(view: &Value) -> Vec<String> {
    view["awaiting"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["seat"] == view["you"]["seat"])
        .map(|a| a["action"].as_str().unwrap().to_owned())
        .collect()
}

/// The caller's first legal game move (start, play_card, take_row) when the caller is
/// asked to act (a selection may be replaced while others choose; that is no ask).
pub(crate) fn first_move(view: &Value) -> Option<Value> {
    if asked(view).is_empty() {
        return None;
    }
    view["legal"]
        .as_array()?
        .iter()
        .find(|c| ["start", "play_card", "take_row"].contains(&c["type"].as_str().unwrap_or("")))
        .cloned()
}

/// `your_turn` requests to `path` answered with 2xx.
fn turns_to(requests: &[Request], path: &str) -> Vec<Request> {
    requests
        .iter()
        .filter(|r| r.path == path && r.ok() && r.payload()["kind"] == "your_turn")
        .cloned()
        .collect()
}

/// Plays the game to its end. Before a player with a webhook (`Some(path)`) moves, waits
/// for the `your_turn` of that ask and checks that it names what the view asks; returns the
/// final view of the first player.
fn play_waiting_for_turns(
    api: &Api,
    game: &str,
    players: &[(&Player, Option<&str>)],
    receiver: &Receiver,
) -> Value {
    let mut acted: HashMap<String, usize> = HashMap::new();
    let mut last_version: HashMap<String, i64> = HashMap::new();
    for _ in 0..500 {
        let first = api.view(players[0].0, game);
        if first["status"] == "finished" {
            return first;
        }
        for (p, path) in players {
            let view = api.view(p, game);
            let Some(cmd) = first_move(&view) else {
                continue;
            };
            if let Some(path) = path {
                let n = acted.get(&p.name).copied().unwrap_or(0) + 1;
                let requests = receiver.wait(&format!("your_turn #{n} of {}", p.name), 20, |r| {
                    turns_to(r, path).len() >= n
                });
                let turns = turns_to(&requests, path);
                assert_eq!(turns.len(), n, "one your_turn per ask of {}", p.name);
                let latest = turns[n - 1].payload();
                assert_eq!(latest["game_id"], game);
                assert_eq!(latest["seat"], view["you"]["seat"]);
                let actions: Vec<String> = latest["actions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_owned())
                    .collect();
                assert_eq!(
                    actions,
                    asked(&view),
                    "the notification names the ask: {latest}"
                );
                let version = latest["game_version"].as_i64().unwrap();
                assert!(version <= view["version"].as_i64().unwrap());
                let previous = last_version.insert(p.name.clone(), version).unwrap_or(0);
                assert!(version > previous, "turns come in game order");
            }
            api.ok(p, game, &cmd);
            *acted.entry(p.name.clone()).or_default() += 1;
            break;
        }
    }
    panic!("the game did not finish");
}

fn registration_listing_and_deletion(backend: Backend) {
    let server = dev_server(backend, &[]);
    let api = server.client();
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let r = api.post(
        "/v1/webhooks",
        Some(&anna.token),
        &json!({ "url": "https://example.org/hooks/stammtisch?x=1" }),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_str().unwrap().to_owned();
    let secret = r.body["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 64);
    assert!(secret.chars().all(|c| c.is_ascii_hexdigit()), "{secret}");
    assert_eq!(r.body["url"], "https://example.org/hooks/stammtisch?x=1");
    assert!(r.body["created_at"].is_string());
    let (second, second_secret) = register(&api, &anna, "http://127.0.0.1:9/plain");
    assert_ne!(second_secret, secret, "every webhook has its own secret");

    let r = api.get("/v1/webhooks", Some(&anna.token));
    assert_eq!(r.status, 200, "{}", r.text);
    let items = r.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["id"], id.as_str());
    assert_eq!(items[1]["id"], second.as_str());
    assert!(r.body["next_cursor"].is_null());
    assert!(
        !r.text.contains(secret) && !r.text.contains(&second_secret),
        "a listing never shows secrets: {}",
        r.text
    );
    assert!(items.iter().all(|i| i.get("secret").is_none()));

    // Another account sees and deletes nothing of anna's.
    let r = api.get("/v1/webhooks", Some(&bert.token));
    assert_eq!(r.body["items"], json!([]));
    let r = api
        .http
        .delete(api.url(&format!("/v1/webhooks/{id}")))
        .bearer_auth(&bert.token)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);

    let r = api
        .http
        .delete(api.url(&format!("/v1/webhooks/{id}")))
        .bearer_auth(&anna.token)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let r = api
        .http
        .delete(api.url(&format!("/v1/webhooks/{id}")))
        .bearer_auth(&anna.token)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 404, "deleted once");
    let r = api
        .http
        .delete(api.url("/v1/webhooks/not-a-uuid"))
        .bearer_auth(&anna.token)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let r = api.get("/v1/webhooks", Some(&anna.token));
    let ids: Vec<&str> = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [second.as_str()]);

    // Without a token: 401.
    api.post(
        "/v1/webhooks",
        None,
        &json!({ "url": "https://example.org/" }),
    )
    .assert_problem(401, "unauthorized");
    api.get("/v1/webhooks", None)
        .assert_problem(401, "unauthorized");
}

fn refused_registrations(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.guest("anna");
    let long = format!("https://example.org/{}", "a".repeat(2100));
    for url in [
        "ftp://example.org/hook",
        "example.org/hook",
        "/relative",
        "https://",
        "http://user:pw@example.org/",
        "https://example.org/a b",
        "https://example.org/#fragment",
        "javascript:alert(1)",
        "",
        long.as_str(),
    ] {
        api.post("/v1/webhooks", Some(&anna.token), &json!({ "url": url }))
            .assert_problem(422, "invalid_url");
    }
    for body in [
        json!({}),
        json!({ "url": 5 }),
        json!({ "url": "https://example.org/", "secret": "mine" }),
    ] {
        let r = api.post("/v1/webhooks", Some(&anna.token), &body);
        assert!(r.status == 400 || r.status == 422, "{body}: {}", r.text);
    }
    assert_eq!(
        api.get("/v1/webhooks", Some(&anna.token)).body["items"],
        json!([]),
        "nothing was stored"
    );

    for i in 0..10 {
        register(&api, &anna, &format!("https://example.org/{i}"));
    }
    api.post(
        "/v1/webhooks",
        Some(&anna.token),
        &json!({ "url": "https://example.org/11" }),
    )
    .assert_problem(422, "too_many_webhooks");
    let r = api.get("/v1/webhooks", Some(&anna.token));
    assert_eq!(r.body["items"].as_array().unwrap().len(), 10);
    // The limit is per account.
    let bert = api.guest("bert");
    register(&api, &bert, "https://example.org/bert");
}

fn turns_and_the_end_are_notified_signed(backend: Backend) {
    let server = dev_server(backend, &[]);
    let api = server.client();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let (_, secret) = register(&api, &anna, &receiver.url("/anna"));
    let game = lobby(&api, &anna, &bert, None);

    // The lobby is full: anna, the host, is asked to start.
    let requests = receiver.wait("the ask to start", 20, |r| !r.is_empty());
    let start = requests[0].payload();
    assert_eq!(start["kind"], "your_turn");
    assert_eq!(start["actions"], json!(["start"]));
    assert_eq!(start["ruleset"], "6-nimmt");
    assert_eq!(start["game_id"], game.as_str());

    let end = play_waiting_for_turns(
        &api,
        &game,
        &[(&anna, Some("/anna")), (&bert, None)],
        &receiver,
    );
    let requests = receiver.wait("game_finished", 20, |r| {
        r.iter().any(|r| r.payload()["kind"] == "game_finished")
    });
    let finished: Vec<&Request> = requests
        .iter()
        .filter(|r| r.payload()["kind"] == "game_finished")
        .collect();
    assert_eq!(finished.len(), 1);
    let payload = finished[0].payload();
    assert_eq!(payload["winners"], end["winners"]);
    assert_eq!(payload["game_version"], end["version"]);
    assert_eq!(payload["seat"], 0);
    assert!(payload.get("actions").is_none());

    server.settle_outbox();
    let requests = receiver.requests();
    for r in &requests {
        assert_eq!(r.path, "/anna", "bert registered nothing");
        assert_signed(r, &secret);
        assert_eq!(
            r.nth, 1,
            "every notification was delivered at the first attempt"
        );
    }
    let ids: BTreeSet<&str> = requests.iter().map(Request::delivery).collect();
    assert_eq!(
        ids.len(),
        requests.len(),
        "every notification has its own id"
    );
    let rows = outbox(backend, &server.db.url);
    assert!(
        rows.values().all(|r| r.0 == "delivered" && r.1 == 1),
        "{rows:?}"
    );
    assert_eq!(rows.len(), requests.len());
}

fn a_failed_delivery_is_retried_with_the_same_id(backend: Backend) {
    let server = dev_server(backend, &[("WEBHOOK_BACKOFF_MS", "300")]);
    let api = server.client();
    let receiver = Receiver::start(|nth| (if nth == 1 { 500 } else { 204 }, Duration::ZERO));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let (_, secret) = register(&api, &anna, &receiver.url("/hook"));
    lobby(&api, &anna, &bert, None);

    let requests = receiver.wait("a retry", 20, |r| r.len() >= 2);
    let (first, second) = (&requests[0], &requests[1]);
    assert_eq!(first.answered, 500);
    assert_eq!(second.answered, 204);
    assert_eq!(
        first.delivery(),
        second.delivery(),
        "a retry keeps the delivery id"
    );
    assert_eq!(first.body, second.body, "a retry sends the same payload");
    assert!(
        second.at.duration_since(first.at) >= Duration::from_millis(250),
        "the retry waited for the backoff"
    );
    assert_signed(first, &secret);
    assert_signed(second, &secret);

    settle_and_skip_an_hour(&server);
    assert_eq!(
        receiver.requests().len(),
        2,
        "nothing more after the success"
    );
    let rows = outbox(backend, &server.db.url);
    let row = &rows[first.delivery()];
    assert_eq!((row.0.as_str(), row.1), ("delivered", 2), "{rows:?}");
}

fn a_restart_mid_delivery_delivers_each_id_once(backend: Backend) {
    // The first attempt of every delivery is held for half a second and then answered 500;
    // the server is killed while it waits for that answer (at once, as soon as the receiver
    // has both first attempts).
    let server = dev_server(
        backend,
        &[
            ("WEBHOOK_BACKOFF_MS", "200"),
            ("WEBHOOK_TIMEOUT_MS", "1500"),
        ],
    );
    let api = server.client();
    let receiver = Receiver::start(|nth| {
        if nth == 1 {
            (500, Duration::from_millis(500))
        } else {
            (200, Duration::ZERO)
        }
    });
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let (_, secret_a) = register(&api, &anna, &receiver.url("/a"));
    let (_, secret_b) = register(&api, &anna, &receiver.url("/b"));
    let game = lobby(&api, &anna, &bert, None);
    receiver.wait("both first attempts", 20, |r| r.len() >= 2);
    let server = server.restart();
    let api = server.client();
    // Past the first attempts' leases (twice the timeout), so the new server may retry.
    server.advance_clock(3);

    let requests = receiver.wait("both deliveries", 30, |r| {
        r.iter().filter(|r| r.ok()).count() >= 2
    });
    // Past further leases and backoffs: nothing may come again.
    settle_and_skip_an_hour(&server);
    let requests = {
        let later = receiver.requests();
        assert_eq!(
            later.len(),
            requests.len(),
            "no delivery after the successes: {later:#?}"
        );
        later
    };
    let mut oks: HashMap<&str, usize> = HashMap::new();
    for r in &requests {
        assert_signed(r, if r.path == "/a" { &secret_a } else { &secret_b });
        *oks.entry(r.delivery()).or_default() += usize::from(r.ok());
    }
    assert_eq!(oks.len(), 2, "one delivery per webhook: {requests:#?}");
    assert!(
        oks.values().all(|&n| n == 1),
        "each id succeeded exactly once: {oks:?}"
    );
    let rows = outbox(backend, &server.db.url);
    assert!(
        rows.values().all(|r| r.0 == "delivered" && r.1 == 2),
        "{rows:?}"
    );

    // The restarted server notifies on: anna starts, and is asked to play.
    api.ok(&anna, &game, &json!({ "type": "start" }));
    let requests = receiver.wait("the ask to play", 30, |r| {
        r.iter()
            .filter(|r| r.ok() && r.payload()["actions"] == json!(["play_card"]))
            .count()
            >= 2
    });
    let ids: BTreeSet<&str> = requests.iter().map(Request::delivery).collect();
    assert_eq!(ids.len(), 4);
}

fn a_move_no_longer_asked_is_not_notified(backend: Backend) {
    // The receiver fails every first attempt: three in a row would pause it (the breaker is
    // tested on its own below). A retry comes a minute later by the server's clock, which
    // the test moves: nothing is retried before the test has acted.
    let server = dev_server(
        backend,
        &[
            ("WEBHOOK_BACKOFF_MS", "60000"),
            ("WEBHOOK_BREAKER_FAILURES", "0"),
        ],
    );
    let url = server.db.url.clone();
    let api = server.client();
    let receiver = Receiver::start(|nth| (if nth == 1 { 503 } else { 200 }, Duration::ZERO));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    register(&api, &anna, &receiver.url("/hook"));
    // Rows 1–4 and higher hands: nobody takes a row in the first turn.
    let deal = json!({ "rows": [[1], [2], [3], [4]], "hands": [dealt(0), dealt(1)] });
    let game = lobby(&api, &anna, &bert, Some(deal));

    // Asked to start: the first attempt fails, and anna starts before the retry.
    let requests = receiver.wait("the ask to start", 20, |r| !r.is_empty());
    let start_id = requests[0].delivery().to_owned();
    assert_eq!(requests[0].payload()["actions"], json!(["start"]));
    api.ok(&anna, &game, &json!({ "type": "start" }));

    // Asked to play: the first attempt fails, and anna plays before the retry.
    let requests = receiver.wait("the ask to play", 20, |r| r.len() >= 2);
    let play = &requests[1];
    assert_eq!(play.payload()["actions"], json!(["play_card"]));
    let play_id = play.delivery().to_owned();
    assert_ne!(play_id, start_id);
    let view = api.view(&anna, &game);
    api.ok(&anna, &game, &first_move(&view).unwrap());
    wait_for_failed_attempt(&server, &play_id, 1);
    server.advance_clock(60);
    wait_for_status(backend, &url, &play_id, "dropped");
    let rows = outbox(backend, &url);
    assert_eq!(rows[&start_id].0, "dropped", "{rows:?}");
    assert_eq!(
        rows[&play_id].2.as_deref(),
        Some("the game no longer asks for this move")
    );

    // bert plays: a new turn for anna, notified (at the second attempt).
    let view = api.view(&bert, &game);
    api.ok(&bert, &game, &first_move(&view).unwrap());
    let requests = receiver.wait("the next turn's first attempt", 20, |r| r.len() >= 3);
    wait_for_failed_attempt(&server, requests[2].delivery(), 1);
    server.advance_clock(60);
    let requests = receiver.wait("the next turn", 20, |r| r.iter().any(Request::ok));
    settle_and_skip_an_hour(&server);
    let requests_now = receiver.requests();
    assert_eq!(
        requests_now.len(),
        requests.len(),
        "nothing more: {requests_now:#?}"
    );
    let sent = |id: &str| requests_now.iter().filter(|r| r.delivery() == id).count();
    assert_eq!(sent(&start_id), 1, "the ask to start was not sent again");
    assert_eq!(sent(&play_id), 1, "the ask to play was not sent again");
    let next: Vec<&Request> = requests_now.iter().filter(|r| r.ok()).collect();
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].nth, 2);
    assert_eq!(next[0].payload()["actions"], json!(["play_card"]));
    let view = api.view(&anna, &game);
    assert_eq!(asked(&view), ["play_card"], "anna is asked again");
}

/// Seat 0 holds 21–30, seat 1 holds 41–50; the rows start 1, 2, 3, 4.
pub(crate) fn dealt(seat: usize) -> Vec<u64> {
    let start = [21, 41][seat];
    (start..start + 10).collect()
}

/// Every number in a JSON value, with the key it sits under.
pub(crate) fn numbers(v: &Value, key: &str, out: &mut Vec<(String, u64)>) {
    match v {
        Value::Number(n) => out.extend(n.as_u64().map(|n| (key.to_owned(), n))),
        Value::Array(items) => items.iter().for_each(|i| numbers(i, key, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| numbers(v, k, out)),
        _ => {}
    }
}

fn payloads_hold_no_hidden_information(backend: Backend) {
    let server = dev_server(backend, &[]);
    let api = server.client();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    register(&api, &anna, &receiver.url("/anna"));
    register(&api, &bert, &receiver.url("/bert"));
    let deal = json!({ "rows": [[1], [2], [3], [4]], "hands": [dealt(0), dealt(1)] });
    let game = lobby(&api, &anna, &bert, Some(deal));
    assert_eq!(api.view(&anna, &game)["prepared_deal"], true);

    // Each player waits for the notification of an ask before acting, so every ask is sent
    // (none is dropped) and inspected.
    let end = play_waiting_for_turns(
        &api,
        &game,
        &[(&anna, Some("/anna")), (&bert, Some("/bert"))],
        &receiver,
    );
    assert_eq!(end["status"], "finished");
    let requests = receiver.wait("game_finished for both", 20, |r| {
        r.iter()
            .filter(|r| r.payload()["kind"] == "game_finished")
            .count()
            == 2
    });
    assert!(turns_to(&requests, "/anna").len() >= 3, "anna was asked on");
    let secret: BTreeSet<u64> = dealt(0).into_iter().chain(dealt(1)).collect();
    for r in &requests {
        let payload = r.payload();
        let keys: BTreeSet<&str> = payload
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let allowed: BTreeSet<&str> = match payload["kind"].as_str().unwrap() {
            "your_turn" => [
                "id",
                "kind",
                "game_id",
                "game_version",
                "ruleset",
                "seat",
                "actions",
                "created_at",
            ]
            .into(),
            "game_finished" => [
                "id",
                "kind",
                "game_id",
                "game_version",
                "ruleset",
                "seat",
                "winners",
                "created_at",
            ]
            .into(),
            other => panic!("unknown kind {other}"),
        };
        assert_eq!(keys, allowed, "{payload}");
        let mut found = Vec::new();
        numbers(&payload, "", &mut found);
        for (key, n) in found {
            if key != "game_version" {
                assert!(!secret.contains(&n), "card {n} under {key:?} in {payload}");
            }
        }
        for word in ["hand", "selected", "seed", "chips", "taken", "deal"] {
            assert!(!r.body.contains(word), "{word} in {}", r.body);
        }
    }
}

/// Without `WEBHOOK_ALLOW_LOOPBACK`, every internal target is refused at registration with
/// `422 webhook_url_not_allowed`: address literals in any notation (WHATWG reads
/// `http://2852039166/` as 169.254.169.254), IPv4 inside IPv6, and names that resolve there
/// (`localhost`). A public address is accepted, normalised; with the setting, loopback (and
/// only loopback) is accepted.
fn internal_targets_are_refused_at_registration(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.guest("anna");
    for url in [
        "http://127.0.0.1:8080/hook",
        "http://localhost:8080/hook",
        "http://LocalHost:8080/hook",
        "http://[::1]/",
        "http://0.0.0.0/",
        "http://10.0.0.1/",
        "http://172.16.0.1/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
        "http://[fd00:ec2::254]/",
        "http://[fe80::1]/",
        "http://[ff02::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:0:a9fe:a9fe]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://2852039166/",
        "http://0xA9FEA9FE/",
        "http://0251.0376.0251.0376/",
        "http://169.254.43518/",
    ] {
        let r = api.post("/v1/webhooks", Some(&anna.token), &json!({ "url": url }));
        r.assert_problem(422, "webhook_url_not_allowed");
        assert!(
            r.body["detail"].as_str().unwrap().contains("not allowed"),
            "{url}: {}",
            r.text
        );
    }
    let r = api.post(
        "/v1/webhooks",
        Some(&anna.token),
        &json!({ "url": "http://0x5DB8D70E:8080/hook" }),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        r.body["url"], "http://93.184.215.14:8080/hook",
        "stored normalised"
    );
    assert_eq!(
        api.get("/v1/webhooks", Some(&anna.token)).body["items"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "nothing refused was stored"
    );

    let dev = dev_server(backend, &[]);
    let api = dev.client();
    let bert = api.guest("bert");
    for url in [
        "http://127.0.0.1:8080/hook",
        "http://localhost:8080/hook",
        "http://[::1]/",
    ] {
        register(&api, &bert, url);
    }
    for url in [
        "http://10.0.0.1/",
        "http://169.254.169.254/",
        "http://[fd00:ec2::254]/",
    ] {
        api.post("/v1/webhooks", Some(&bert.token), &json!({ "url": url }))
            .assert_problem(422, "webhook_url_not_allowed");
    }
}

/// A delivery checks the resolved address again when it connects: a webhook registered
/// while loopback was allowed (`localhost`, a name) is not called after a restart without
/// the setting; the attempt fails with the reason, and nothing reaches the receiver.
fn internal_targets_are_refused_at_connect_time(backend: Backend) {
    let server = dev_server(backend, &[]);
    let api = server.client();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let port = receiver
        .url("/")
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    let (hook, _) = register(&api, &anna, &format!("http://localhost:{port}/anna"));
    let server = server.restart_with_env(&[("WEBHOOK_BACKOFF_MS", "200")]);
    let api = server.client();
    lobby(&api, &anna, &bert, None);
    let start = Instant::now();
    let error = loop {
        let rows = outbox(backend, &server.db.url);
        if let Some((_, attempts, Some(error))) = rows.values().next()
            && *attempts >= 2
        {
            break error.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no failed attempt recorded: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        error.contains("localhost resolves to") && error.contains("not allowed (loopback)"),
        "{error}"
    );
    assert!(receiver.requests().is_empty(), "the receiver was called");
    assert_eq!(
        api.get("/v1/webhooks", Some(&anna.token)).body["items"][0]["id"],
        hook.as_str()
    );
}

both!(
    internal_targets_are_refused_at_registration,
    internal_targets_are_refused_at_connect_time,
    registration_listing_and_deletion,
    refused_registrations,
    turns_and_the_end_are_notified_signed,
    a_failed_delivery_is_retried_with_the_same_id,
    a_restart_mid_delivery_delivers_each_id_once,
    a_move_no_longer_asked_is_not_notified,
    payloads_hold_no_hidden_information,
);

/// How long the servers of the isolation tests wait for a webhook answer: far longer than
/// a good delivery takes, so a delivery held back until the hanging ones time out arrives
/// after the tests have given up waiting for it.
const LONG_TIMEOUT: (&str, &str) = ("WEBHOOK_TIMEOUT_MS", "60000");

/// An account with ten webhooks on receivers that take the request and never answer holds
/// back only its own deliveries: another person's `your_turn`, written after those ten were
/// sent, arrives while all of them still hang, and at most `WEBHOOK_PER_ACCOUNT` of the ten
/// are in flight at once.
fn a_hanging_receiver_holds_back_only_its_own_account(backend: Backend) {
    let server = dev_server(backend, &[LONG_TIMEOUT, ("WEBHOOK_PER_ACCOUNT", "4")]);
    let api = server.client();
    let good = Receiver::start(|_| (200, Duration::ZERO));
    let hanging: Vec<Hanging> = (0..10).map(|_| Hanging::start()).collect();
    let mallory = api.guest("mallory");
    let max = api.guest("max");
    for (i, h) in hanging.iter().enumerate() {
        register(&api, &mallory, &h.url(&format!("/m{i}")));
    }
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    register(&api, &anna, &good.url("/anna"));

    // Mallory is asked to start: ten notifications, to receivers that never answer.
    lobby(&api, &mallory, &max, None);
    wait_hanging(&hanging, 4);
    // Then anna is asked to start.
    let asked = Instant::now();
    lobby(&api, &anna, &bert, None);
    let requests = good.wait("anna's your_turn beside the hanging ones", 30, |r| {
        !r.is_empty()
    });
    let arrived = requests[0].at;
    // A figure, not an assertion: the worker looks at the outbox every 200 ms.
    eprintln!(
        "figure: anna's lobby created and joined -> her your_turn received, beside 4 hanging deliveries: {} ms",
        arrived.duration_since(asked).as_millis()
    );
    assert_eq!(requests[0].payload()["kind"], "your_turn");
    let ended: Vec<Instant> = hanging.iter().flat_map(Hanging::ended).collect();
    assert!(
        ended.iter().all(|e| *e > arrived),
        "anna's notification came only after hanging deliveries were given up"
    );
    // Mallory's others wait for her slots. Once anna's delivery is recorded, the sends in
    // flight are mallory's four hanging ones, and a claim now starts none of the rest.
    wait_delivered(backend, &server.db.url, 1);
    assert_nothing_more_starts(&server, 4, "four hanging deliveries of one account");
    let sent: usize = hanging.iter().map(Hanging::arrived).sum();
    assert_eq!(
        sent, 4,
        "at most WEBHOOK_PER_ACCOUNT deliveries of one account at once"
    );
    let rows = outbox(backend, &server.db.url);
    assert_eq!(
        rows.values()
            .filter(|r| r.0 == "pending" && r.1 == 0)
            .count(),
        6,
        "the rest wait, unattempted: {rows:?}"
    );
}

/// One URL gets at most `WEBHOOK_PER_TARGET` deliveries at once, whichever accounts they
/// belong to; the others to that URL wait, and deliveries elsewhere go on.
fn one_url_gets_a_bounded_number_of_deliveries_at_once(backend: Backend) {
    let server = dev_server(backend, &[LONG_TIMEOUT, ("WEBHOOK_PER_TARGET", "2")]);
    let api = server.client();
    let good = Receiver::start(|_| (200, Duration::ZERO));
    let slow = Hanging::start();
    for i in 0..3 {
        let host = api.guest(&format!("host{i}"));
        let guest = api.guest(&format!("guest{i}"));
        register(&api, &host, &slow.url("/shared"));
        lobby(&api, &host, &guest, None);
    }
    wait_hanging(std::slice::from_ref(&slow), 2);
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    register(&api, &anna, &good.url("/anna"));
    lobby(&api, &anna, &bert, None);
    good.wait("anna's your_turn beside the hanging ones", 30, |r| {
        !r.is_empty()
    });
    assert!(slow.ended().is_empty(), "the hanging deliveries still hang");
    // Once anna's delivery is recorded, the sends in flight are the two hanging ones to
    // the shared URL, and a claim now starts none of the rest.
    wait_delivered(backend, &server.db.url, 1);
    assert_nothing_more_starts(&server, 2, "two hanging deliveries to one URL");
    assert_eq!(
        slow.arrived(),
        2,
        "at most WEBHOOK_PER_TARGET deliveries to one URL at once"
    );
}

/// A URL whose attempts failed `WEBHOOK_BREAKER_FAILURES` times in a row is paused: its
/// deliveries (also new ones) are not attempted meanwhile and keep their attempts; after
/// the pause one probe goes, and once it succeeds every delivery waiting is sent.
fn a_failing_target_is_paused_without_using_up_attempts(backend: Backend) {
    let server = dev_server(
        backend,
        &[
            ("WEBHOOK_BACKOFF_MS", "100"),
            ("WEBHOOK_BREAKER_FAILURES", "2"),
            ("WEBHOOK_BREAKER_PAUSE_MS", "4000"),
        ],
    );
    let url = server.db.url.clone();
    let api = server.client();
    let healed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let receiver = {
        let healed = Arc::clone(&healed);
        // The second attempt gets another status, so the outbox shows when its failure is
        // recorded.
        Receiver::start(move |nth| {
            let status = if healed.load(std::sync::atomic::Ordering::SeqCst) {
                200
            } else if nth == 2 {
                503
            } else {
                500
            };
            (status, Duration::ZERO)
        })
    };
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    register(&api, &anna, &receiver.url("/hook"));
    lobby(&api, &anna, &bert, None);
    let requests = receiver.wait("two failed attempts", 20, |r| r.len() >= 2);
    let first = requests[0].delivery().to_owned();
    assert_eq!(requests[1].delivery(), first, "the same delivery, retried");
    // Once the second failure is recorded, the URL is paused.
    let start = Instant::now();
    loop {
        let rows = outbox(backend, &url);
        if let Some((_, 2, Some(error))) = rows.get(&first)
            && error.contains("503")
        {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{rows:?}");
        std::thread::sleep(Duration::from_millis(25));
    }
    // A new notification to the paused URL: anna is asked to start a second game.
    let paused_at = chrono::Utc::now().naive_utc();
    lobby(&api, &anna, &bert, None);

    // Both deliveries are put off to the end of the 4-s pause instead of being attempted
    // (with 100 ms backoff the retry was due at once): nothing is attempted, and no
    // attempt is counted.
    wait_until_put_off(backend, &url, 2, paused_at + chrono::Duration::seconds(2));
    assert_eq!(
        receiver.requests().len(),
        2,
        "nothing attempted while paused"
    );
    let rows = outbox(backend, &url);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let second = rows.keys().find(|id| **id != first).unwrap().clone();
    assert_eq!((rows[&first].0.as_str(), rows[&first].1), ("pending", 2));
    assert_eq!(
        (rows[&second].0.as_str(), rows[&second].1),
        ("pending", 0),
        "postponed, not attempted"
    );

    // The receiver recovers: after the pause both arrive, neither lost.
    healed.store(true, std::sync::atomic::Ordering::SeqCst);
    wait_for_status(backend, &url, &first, "delivered");
    wait_for_status(backend, &url, &second, "delivered");
    let rows = outbox(backend, &url);
    assert_eq!(rows[&first].1, 3, "two failures and the probe: {rows:?}");
    assert_eq!(
        rows[&second].1, 1,
        "sent once, at the first attempt: {rows:?}"
    );
    let requests = receiver.requests();
    assert_eq!(
        requests.iter().filter(|r| r.delivery() == second).count(),
        1
    );
    assert_eq!(requests.len(), 4, "{requests:#?}");
}

both!(
    a_hanging_receiver_holds_back_only_its_own_account,
    one_url_gets_a_bounded_number_of_deliveries_at_once,
    a_failing_target_is_paused_without_using_up_attempts,
);

/// The `time_running_low` rows: (id, status, game, due).
fn low_time_rows(backend: Backend, url: &str) -> Vec<(String, String, String)> {
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        id: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        status: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        game_id: String,
    }
    let q = "SELECT id, status, game_id FROM webhook_deliveries \
             WHERE kind = 'time_running_low' ORDER BY created_at";
    let rows: Vec<Row> = crate::support::raw_rows(backend, url, q);
    rows.into_iter()
        .map(|r| (r.id, r.status, r.game_id))
        .collect()
}

fn the_low_time_threshold_is_a_choice_of_the_account(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.guest("anna");
    let path = "/v1/me/webhook-choices";
    let r = api.get(path, Some(&anna.token));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body, json!({ "low_time_minutes": null }));
    for bad in [
        json!({ "low_time_minutes": 43_201 }),
        json!({ "low_time_minutes": "x" }),
        json!({ "low_time_minutes": 1.5 }),
        json!({ "low_time_minutes": -1 }),
        json!({ "other": 1 }),
    ] {
        let r = api.patch(path, &anna.token, &bad);
        assert_eq!(r.status, 422, "{bad}: {}", r.text);
        assert_eq!(r.body["code"], "validation_failed");
    }
    assert_eq!(
        api.get(path, Some(&anna.token)).body["low_time_minutes"],
        Value::Null
    );
    let r = api.patch(path, &anna.token, &json!({ "low_time_minutes": 30 }));
    assert_eq!(r.body, json!({ "low_time_minutes": 30 }));
    let r = api.patch(path, &anna.token, &json!({}));
    assert_eq!(
        r.body,
        json!({ "low_time_minutes": 30 }),
        "absent fields stay"
    );
    let bert = api.guest("bert");
    assert_eq!(
        api.get(path, Some(&bert.token)).body["low_time_minutes"],
        Value::Null,
        "per account"
    );
    let r = api.patch(path, &anna.token, &json!({ "low_time_minutes": 0 }));
    assert_eq!(
        r.body,
        json!({ "low_time_minutes": null }),
        "0 switches it off"
    );
    assert_eq!(api.get(path, None).status, 401);
}

fn time_running_low_comes_at_the_threshold_and_only_while_true(backend: Backend) {
    let server = dev_server(backend, &[]);
    let url = server.db.url.clone();
    let api = server.client();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    register(&api, &anna, &receiver.url("/anna"));
    let r = api.patch(
        "/v1/me/webhook-choices",
        &anna.token,
        &json!({ "low_time_minutes": 30 }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let body = json!({
        "ruleset": "6-nimmt", "players": 2, "move_deadline_seconds": 7200,
        "options": { "end": { "rounds": 1 } },
    });
    // In `waiting` anna will not move; in `moved` she moves at once.
    let waiting = api.create_game(&anna, &body)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let moved = api.create_game(&anna, &body)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for game in [&waiting, &moved] {
        api.join(&bert, game);
        api.ok(&anna, game, &json!({ "type": "start" }));
    }
    let view = api.view(&anna, &moved);
    api.ok(&anna, &moved, &first_move(&view).unwrap());
    // Written with the asks (in their transaction); the one of `moved` stays pending
    // until it is due, and is dropped then.
    let rows = low_time_rows(backend, &url);
    assert_eq!(rows.len(), 2, "one per game: {rows:?}");
    assert!(rows.iter().all(|r| r.1 == "pending"));

    // 50 minutes on: 70 minutes are left, more than the threshold.
    server.advance_clock(3000);
    server.settle_outbox();
    assert!(
        receiver
            .requests()
            .iter()
            .all(|r| r.payload()["kind"] != "time_running_low"),
        "not yet"
    );
    // 90 minutes on: 30 are left.
    server.advance_clock(2400);
    let requests = receiver.wait("time_running_low", 20, |r| {
        r.iter().any(|r| r.payload()["kind"] == "time_running_low")
    });
    let low: Vec<Value> = requests
        .iter()
        .map(Request::payload)
        .filter(|p| p["kind"] == "time_running_low")
        .collect();
    assert_eq!(low.len(), 1, "{low:?}");
    let p = &low[0];
    assert_eq!(p["game_id"], waiting.as_str());
    assert_eq!(p["seat"], 0);
    assert_eq!(p["actions"], json!(["play_card"]));
    assert_eq!(p["low_time_minutes"], 30);
    let view = api.view(&anna, &waiting);
    assert_eq!(p["deadline_at"], view["seats"][0]["deadline_at"]);
    assert!(p.get("hand").is_none() && p.get("cards").is_none());
    let sent_id = p["id"].as_str().unwrap().to_owned();
    let dropped = low_time_rows(backend, &url)
        .into_iter()
        .find(|r| r.2 == moved)
        .unwrap()
        .0;
    wait_for_status(backend, &url, &dropped, "dropped");
    wait_for_status(backend, &url, &sent_id, "delivered");
    assert_eq!(
        outbox(backend, &url)[&dropped].2.as_deref(),
        Some("the game no longer asks for this move")
    );
}

/// In a correspondence game the reminder follows the clock: put off while the account is
/// away (the deadline is the end of the absence), due again when it comes back early, and
/// sent with the deadline as it is then.
fn time_running_low_follows_the_clock_through_an_absence(backend: Backend) {
    let server = dev_server(backend, &[]);
    let url = server.db.url.clone();
    let api = server.client();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    let anna = api.account("anna");
    let bert = api.account("bert");
    register(&api, &anna, &receiver.url("/anna"));
    let r = api.patch(
        "/v1/me/webhook-choices",
        &anna.token,
        &json!({ "low_time_minutes": 30 }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let tc = json!({ "kind": "correspondence", "initial_seconds": 3600,
                     "increment_seconds": 0, "vacation": true });
    let body = json!({ "ruleset": "6-nimmt", "players": 2, "time_control": tc,
                       "options": { "end": { "rounds": 1 } } });
    let game = api.create_game(&anna, &body)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.join(&bert, &game);
    api.ok(&anna, &game, &json!({ "type": "start" }));
    let view = api.view(&bert, &game);
    api.ok(&bert, &game, &first_move(&view).unwrap());
    assert_eq!(low_time_rows(backend, &url).len(), 1);

    // Away for two hours: the clock stops, the seat's deadline is the end of the absence.
    let now = api.server_now();
    let until = now + chrono::Duration::hours(2);
    let r = api.put(
        "/v1/account/vacation",
        &anna.token,
        &json!({ "away_until": until.to_rfc3339_opts(chrono::SecondsFormat::Millis, true) }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    // Past the reminder's first due time (the flag fall minus 30 minutes): put off to 30
    // minutes before the absence ends, not sent.
    server.advance_clock(1900);
    let later = (now + chrono::Duration::minutes(60)).naive_utc();
    wait_until_put_off(backend, &url, 1, later);
    assert!(
        receiver
            .requests()
            .iter()
            .all(|r| r.payload()["kind"] != "time_running_low")
    );
    // Back early: the clock runs again with its hour; the reminder comes 30 minutes later.
    let r = api.put(
        "/v1/account/vacation",
        &anna.token,
        &json!({ "away_until": null }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let view = api.view(&bert, &game);
    let deadline = view["seats"][0]["deadline_at"].clone();
    assert!(deadline.is_string(), "{view}");
    server.advance_clock(1800 + 5);
    let requests = receiver.wait("time_running_low", 20, |r| {
        r.iter().any(|r| r.payload()["kind"] == "time_running_low")
    });
    let low: Vec<Value> = requests
        .iter()
        .map(Request::payload)
        .filter(|p| p["kind"] == "time_running_low")
        .collect();
    assert_eq!(low.len(), 1);
    assert_eq!(low[0]["deadline_at"], deadline, "the deadline as it is now");
}

/// A pause takes the seat's deadline away: the reminder waits (looked at again hourly)
/// instead of being dropped, and comes after the clocks run again.
fn time_running_low_waits_through_a_pause(backend: Backend) {
    let server = dev_server(backend, &[]);
    let url = server.db.url.clone();
    let api = server.client();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    register(&api, &anna, &receiver.url("/anna"));
    api.patch(
        "/v1/me/webhook-choices",
        &anna.token,
        &json!({ "low_time_minutes": 30 }),
    );
    let tc = json!({ "kind": "correspondence", "initial_seconds": 3600,
                     "increment_seconds": 0 });
    let body = json!({ "ruleset": "6-nimmt", "players": 2, "time_control": tc,
                       "options": { "end": { "rounds": 1 } } });
    let game = api.create_game(&anna, &body)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.join(&bert, &game);
    api.ok(&anna, &game, &json!({ "type": "start" }));
    let view = api.view(&bert, &game);
    api.ok(&bert, &game, &first_move(&view).unwrap());
    api.ok(&anna, &game, &json!({ "type": "propose_pause" }));
    let paused = api.ok(&bert, &game, &json!({ "type": "accept_pause" }));
    assert_eq!(paused["pause"]["paused"], true, "{paused}");
    assert!(paused["seats"][0]["deadline_at"].is_null(), "{paused}");

    // Past the reminder's due time: no deadline, so it waits (put off by an hour).
    let now = api.server_now();
    server.advance_clock(1900);
    wait_until_put_off(
        backend,
        &url,
        1,
        (now + chrono::Duration::minutes(60)).naive_utc(),
    );
    let rows = low_time_rows(backend, &url);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].1, "pending", "{rows:?}");
    assert!(
        receiver
            .requests()
            .iter()
            .all(|r| r.payload()["kind"] != "time_running_low")
    );
    // The clocks run again: the reminder comes by the new deadline, half an hour before
    // the flag falls.
    api.ok(&bert, &game, &json!({ "type": "resume" }));
    let deadline = api.view(&bert, &game)["seats"][0]["deadline_at"].clone();
    assert!(deadline.is_string());
    server.advance_clock(1800 + 5);
    let requests = receiver.wait("time_running_low", 20, |r| {
        r.iter().any(|r| r.payload()["kind"] == "time_running_low")
    });
    let low: Vec<Value> = requests
        .iter()
        .map(Request::payload)
        .filter(|p| p["kind"] == "time_running_low")
        .collect();
    assert_eq!(low.len(), 1);
    assert_eq!(low[0]["deadline_at"], deadline);
}

both!(
    time_running_low_waits_through_a_pause,
    time_running_low_follows_the_clock_through_an_absence,
    the_low_time_threshold_is_a_choice_of_the_account,
    time_running_low_comes_at_the_threshold_and_only_while_true,
);
