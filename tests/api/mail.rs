//! E-mail reminders: an address verified by a single-use link (only the token's hash is
//! stored), the reminder choices, mails through the durable outbox with retries, dropped
//! when no longer true, a daily digest, and nothing hidden in any mail.
//!
//! A small SMTP sink runs in the test process: a `TcpListener` on 127.0.0.1 speaking just
//! enough SMTP (greeting, EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT). It records every
//! message and can refuse the next messages to a recipient with `451` (a temporary failure),
//! so the server must try again later.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::accounts::texts;
use crate::both;
use crate::support::{Api, Backend, Player, Reply, TestDb, TestServer, sql};

const PUBLIC: &str = "https://play.example.org";

/// One message the sink accepted.
#[derive(Debug, Clone)]
struct Mail {
    to: Vec<String>,
    /// Header lines (lower-case names) and the body after the blank line.
    headers: String,
    body: String,
}

impl Mail {
    fn subject(&self) -> String {
        self.headers
            .lines()
            .find_map(|l| l.strip_prefix("Subject: "))
            .unwrap_or_default()
            .to_owned()
    }
}

#[derive(Default)]
struct SinkState {
    accepted: Vec<Mail>,
    /// Recipient → how many more messages to refuse.
    refuse: HashMap<String, usize>,
    refused: HashMap<String, usize>,
    /// How long the sink waits before each reply (a slow mail server).
    slow: Duration,
}

struct Sink {
    url: String,
    state: Arc<Mutex<SinkState>>,
}

impl Sink {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("smtp://{}", listener.local_addr().unwrap());
        let state: Arc<Mutex<SinkState>> = Arc::default();
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &state);
                });
            }
        });
        Self { url, state }
    }

    fn refuse(&self, to: &str, times: usize) {
        self.state.lock().unwrap().refuse.insert(to.into(), times);
    }

    fn slow(&self, delay: Duration) {
        self.state.lock().unwrap().slow = delay;
    }

    fn refused(&self, to: &str) -> usize {
        self.state
            .lock()
            .unwrap()
            .refused
            .get(to)
            .copied()
            .unwrap_or(0)
    }

    fn to(&self, address: &str) -> Vec<Mail> {
        self.state
            .lock()
            .unwrap()
            .accepted
            .iter()
            .filter(|m| m.to.iter().any(|t| t == address))
            .cloned()
            .collect()
    }

    /// Waits until `address` has at least `n` mails (at most 30 s) and returns them.
    fn wait_for(&self, address: &str, n: usize) -> Vec<Mail> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.to(address);
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{address} got {} mails, expected {n}: {got:?}",
                got.len()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn serve(stream: TcpStream, state: &Mutex<SinkState>) -> std::io::Result<()> {
    let slow = state.lock().unwrap().slow;
    let mut out = Slow(stream.try_clone()?, slow);
    let mut input = BufReader::new(stream);
    out.write_all(b"220 sink ESMTP\r\n")?;
    let mut to = Vec::new();
    loop {
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let upper = line.trim_end().to_ascii_uppercase();
        if upper.starts_with("EHLO") || upper.starts_with("HELO") {
            out.write_all(b"250-sink\r\n250 8BITMIME\r\n")?;
        } else if upper.starts_with("MAIL FROM") {
            to.clear();
            out.write_all(b"250 ok\r\n")?;
        } else if upper.starts_with("RCPT TO") {
            let addr = line
                .trim_end()
                .split_once(':')
                .map(|(_, a)| a.trim().trim_start_matches('<').trim_end_matches('>'))
                .unwrap_or_default()
                .to_owned();
            to.push(addr);
            out.write_all(b"250 ok\r\n")?;
        } else if upper == "DATA" {
            out.write_all(b"354 go on\r\n")?;
            let mut data = String::new();
            loop {
                let mut l = String::new();
                if input.read_line(&mut l)? == 0 {
                    return Ok(());
                }
                if l == ".\r\n" || l == ".\n" {
                    break;
                }
                data.push_str(l.strip_prefix('.').unwrap_or(&l));
            }
            let refuse = {
                let mut s = state.lock().unwrap();
                let hit = to
                    .iter()
                    .find(|t| s.refuse.get(*t).is_some_and(|n| *n > 0))
                    .cloned();
                if let Some(t) = &hit {
                    *s.refuse.get_mut(t).unwrap() -= 1;
                    *s.refused.entry(t.clone()).or_default() += 1;
                }
                hit.is_some()
            };
            if refuse {
                out.write_all(b"451 try again later\r\n")?;
            } else {
                let data = data.replace("\r\n", "\n");
                let (headers, body) = data.split_once("\n\n").unwrap_or((&data, ""));
                let body = if headers.contains("Content-Transfer-Encoding: quoted-printable") {
                    quoted_printable(body)
                } else {
                    body.to_owned()
                };
                state.lock().unwrap().accepted.push(Mail {
                    to: to.clone(),
                    headers: headers.to_owned(),
                    body,
                });
                out.write_all(b"250 queued\r\n")?;
            }
        } else if upper == "QUIT" {
            out.write_all(b"221 bye\r\n")?;
            return Ok(());
        } else {
            // RSET, NOOP and anything else.
            out.write_all(b"250 ok\r\n")?;
        }
    }
}

/// A connection's writer that waits before each reply (each `write_all` is one reply).
struct Slow(TcpStream, Duration);

impl Slow {
    fn write_all(&mut self, reply: &[u8]) -> std::io::Result<()> {
        std::thread::sleep(self.1);
        self.0.write_all(reply)
    }
}

/// Decodes a quoted-printable body (RFC 2045: `=` at a line's end joins it with the next,
/// `=XX` is a byte in hex).
fn quoted_printable(body: &str) -> String {
    let joined = body.replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = joined
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        if let (b'=', Some(b)) = (bytes[i], hex) {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

fn mail_server(backend: Backend, sink: &Sink, extra: &[(&str, &str)]) -> TestServer {
    let mut env = vec![
        ("SMTP_URL", sink.url.as_str()),
        ("MAIL_FROM", "Stammtisch <noreply@example.org>"),
        ("PUBLIC_URL", PUBLIC),
        ("WEBHOOK_BACKOFF_MS", "200"),
    ];
    env.extend_from_slice(extra);
    TestServer::start_with_env(TestDb::new(backend), backend, &env)
}

fn send(api: &Api, method: &str, path: &str, token: &str, body: Option<&Value>) -> Reply {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = api.http.request(method, api.url(path)).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(b);
    }
    Reply::from_response(req.send().unwrap())
}

/// `POST /v1/me/mail/address`: asks for a verification link to `address`.
fn ask_address(api: &Api, token: &str, address: &str) -> Reply {
    send(
        api,
        "POST",
        "/v1/me/mail/address",
        token,
        Some(&json!({ "address": address })),
    )
}

/// The token of the newest verification link `address` got.
fn link_token(sink: &Sink, address: &str, n: usize) -> String {
    link_token_under(PUBLIC, sink, address, n)
}

/// The token of the `n`th verification link `address` got, which must point under `base`.
fn link_token_under(base: &str, sink: &Sink, address: &str, n: usize) -> String {
    let mails = sink.wait_for(address, n);
    let body = &mails[n - 1].body;
    let prefix = format!("{base}/#/mail/verify/");
    let start = body
        .find(&prefix)
        .unwrap_or_else(|| panic!("no link: {body}"))
        + prefix.len();
    body[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect()
}

/// Adds and verifies `address` for `player`; returns how many mails it has now.
fn verify(api: &Api, sink: &Sink, player: &Player, address: &str) {
    let before = sink.to(address).len();
    let r = ask_address(api, &player.token, address);
    assert_eq!(r.status, 202, "{}", r.text);
    let token = link_token(sink, address, before + 1);
    let r = confirm(api, &token);
    assert_eq!(r.status, 200, "{}", r.text);
}

/// What the web client's confirmation page sends when its button is pressed.
fn confirm(api: &Api, token: &str) -> Reply {
    api.post("/v1/mail/verify", None, &json!({ "token": token }))
}

/// `GET /v1/mail/verify?token=…` (the link of mails sent before the confirmation page), not
/// following the redirect: its status and `Location`.
fn open_old_link(api: &Api, query: &str) -> Reply {
    let http = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    Reply::from_response(
        http.get(api.url(&format!("/v1/mail/verify{query}")))
            .send()
            .unwrap(),
    )
}

fn choose(api: &Api, player: &Player, choices: &Value) -> Value {
    let r = send(api, "PATCH", "/v1/me/mail", &player.token, Some(choices));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body
}

/// Every ASCII digit in a mail body must come from the allowed strings (the game's id, a
/// deadline, the ruleset's name): no card, chip count, score or seed is ever written.
fn assert_no_hidden(mail: &Mail, allowed: &[&str]) {
    let mut body = mail.body.clone();
    for a in allowed {
        body = body.replace(a, "");
    }
    assert!(
        !body.chars().any(|c| c.is_ascii_digit()),
        "a number in a mail: {}",
        mail.body
    );
}

fn outbox(server: &TestServer, account: &str, kind: &str) -> Vec<String> {
    texts(
        server,
        &format!(
            "SELECT status || ':' || CAST(attempts AS TEXT) AS v FROM webhook_deliveries \
             WHERE channel = 'mail' AND account_id = '{account}' AND kind = '{kind}' \
             ORDER BY created_at"
        ),
    )
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Without `PUBLIC_URL` the verification link, and the old link's redirect, name the
/// address the server listens on (the tests bind to any free port), as the reminders'
/// links do: not the configured port 0.
fn without_public_url_the_link_names_the_port_the_server_listens_on(backend: Backend) {
    let sink = Sink::start();
    let server = TestServer::start_with_env(
        TestDb::new(backend),
        backend,
        &[
            ("SMTP_URL", sink.url.as_str()),
            ("MAIL_FROM", "Stammtisch <noreply@example.org>"),
        ],
    );
    let api = server.client();
    assert!(!api.base.ends_with(":0"), "{}", api.base);
    let anna = api.account("anna");
    let r = ask_address(&api, &anna.token, "anna@example.org");
    assert_eq!(r.status, 202, "{}", r.text);
    let token = link_token_under(&api.base, &sink, "anna@example.org", 1);
    assert!(token.len() >= 32, "{token}");
    let r = open_old_link(&api, &format!("?token={token}"));
    assert_eq!(r.status, 303, "{}", r.text);
    assert_eq!(
        r.header("location").as_deref(),
        Some(format!("{}/#/mail/verify/{token}", api.base).as_str())
    );
    // The link works: the page's confirmation takes it.
    let r = api.post("/v1/mail/verify", None, &json!({ "token": token }));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["address"], "anna@example.org");
    // The outbox's reminders name the same address.
    let bert = api.guest("bert");
    let game = quick_game(&api, &anna, &bert);
    let mails = sink.wait_for("anna@example.org", 2);
    let link = format!("{}/#/games/{game}", api.base);
    assert!(mails[1].body.contains(&link), "{link} in {}", mails[1].body);
}

fn an_address_is_verified_by_a_single_use_link(backend: Backend) {
    let sink = Sink::start();
    let server = mail_server(backend, &sink, &[]);
    let api = server.client();
    let anna = api.account("anna");
    let r = api.get("/v1/me/mail", Some(&anna.token));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["enabled"], true);
    assert_eq!(r.body["address"], Value::Null);

    for bad in [
        "not an address",
        "a@b",
        "<x@example.org>",
        "x@example.org, y@example.org",
    ] {
        ask_address(&api, &anna.token, bad).assert_problem(422, "validation_failed");
    }
    let r = ask_address(&api, &anna.token, "anna@example.org");
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.body["pending_address"], "anna@example.org");
    assert_eq!(r.body["address"], Value::Null);
    let token = link_token(&sink, "anna@example.org", 1);
    assert!(token.len() >= 32, "{token}");
    // Only the token's hash is stored.
    let stored = texts(&server, "SELECT token_hash AS v FROM mail_verifications");
    assert_eq!(stored, [hex::encode(Sha256::digest(token.as_bytes()))]);

    // Opening the link confirms nothing: a mail scanner that fetches it gets the web
    // client's page (the route is a fragment: the server sees only `/`), and the link of
    // mails sent before the page only redirects there.
    let page = api.http.get(format!("{}/", api.base)).send().unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let r = open_old_link(&api, &format!("?token={token}"));
    assert_eq!(r.status, 303, "{}", r.text);
    assert_eq!(
        r.header("location").as_deref(),
        Some(format!("{PUBLIC}/#/mail/verify/{token}").as_str())
    );
    assert_eq!(r.header("cache-control").as_deref(), Some("no-store"));
    for bad in ["?token=", "?token=not-hex%0d%0aX:1", "?token=zz"] {
        open_old_link(&api, bad).assert_problem(404, "not_found");
    }
    open_old_link(&api, "").assert_problem(400, "invalid_query");
    let r = api.get("/v1/me/mail", Some(&anna.token));
    assert_eq!(r.body["address"], Value::Null);
    assert_eq!(r.body["pending_address"], "anna@example.org");

    for unknown in ["00ff", "not-hex", ""] {
        confirm(&api, unknown).assert_problem(404, "not_found");
    }
    api.post("/v1/mail/verify", None, &json!({ "token": token, "x": 1 }))
        .assert_problem(422, "validation_failed");
    let r = confirm(&api, &token);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["address"], "anna@example.org");
    // Single use.
    confirm(&api, &token).assert_problem(404, "not_found");
    let r = api.get("/v1/me/mail", Some(&anna.token));
    assert_eq!(r.body["address"], "anna@example.org");
    assert_eq!(r.body["pending_address"], Value::Null);
    assert_eq!(r.body["your_turn"], true);

    // An expired link does not work.
    let r = ask_address(&api, &anna.token, "anna2@example.org");
    assert_eq!(r.status, 202, "{}", r.text);
    let late = link_token(&sink, "anna2@example.org", 1);
    sql(
        &server,
        "UPDATE mail_verifications SET expires_at = '2000-01-01 00:00:00'",
    );
    confirm(&api, &late).assert_problem(404, "not_found");
    assert_eq!(
        api.get("/v1/me/mail", Some(&anna.token)).body["address"],
        "anna@example.org"
    );

    // Choices.
    send(
        &api,
        "PATCH",
        "/v1/me/mail",
        &anna.token,
        Some(&json!({ "deadline_hours": 1000 })),
    )
    .assert_problem(422, "validation_failed");
    let body = choose(
        &api,
        &anna,
        &json!({ "deadline_hours": 3, "game_finished": false }),
    );
    assert_eq!(body["deadline_hours"], 3);
    assert_eq!(body["game_finished"], false);
    assert_eq!(body["your_turn"], true);
    // A whole number written as a float is one; a fraction is refused.
    assert_eq!(
        choose(&api, &anna, &json!({ "deadline_hours": 4.0 }))["deadline_hours"],
        4
    );
    send(
        &api,
        "PATCH",
        "/v1/me/mail",
        &anna.token,
        Some(&json!({ "deadline_hours": 2.5 })),
    )
    .assert_problem(422, "validation_failed");
    let body = choose(&api, &anna, &json!({ "deadline_hours": 0 }));
    assert_eq!(body["deadline_hours"], Value::Null);

    // Removing the address.
    let r = send(&api, "DELETE", "/v1/me/mail/address", &anna.token, None);
    assert_eq!(r.status, 204, "{}", r.text);
    assert_eq!(
        api.get("/v1/me/mail", Some(&anna.token)).body["address"],
        Value::Null
    );
}

fn mail_is_off_without_smtp(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.account("anna");
    let r = api.get("/v1/me/mail", Some(&anna.token));
    assert_eq!(r.body["enabled"], false);
    ask_address(&api, &anna.token, "anna@example.org").assert_problem(409, "mail_disabled");
}

fn reminders_arrive_without_hidden_information(backend: Backend) {
    let sink = Sink::start();
    let server = mail_server(backend, &sink, &[]);
    let api = server.client();
    let anna = api.account("anna");
    let bert = api.guest("bert");
    verify(&api, &sink, &anna, "anna@example.org");
    verify(&api, &sink, &bert, "bert@example.org");
    // Anna: turns, deadlines less than 2 hours away, the end. Bert: the end only.
    choose(
        &api,
        &anna,
        &json!({ "deadline_hours": 2, "game_finished": false }),
    );
    choose(&api, &bert, &json!({ "your_turn": false }));
    let game = api.create_game(
        &anna,
        &json!({
            "ruleset": "6-nimmt", "players": 2, "name": "Friday table",
            "move_deadline_seconds": 3600, "options": { "end": { "rounds": 1 } }
        }),
    );
    let id = game["id"].as_str().unwrap().to_owned();
    api.join(&bert, &id);
    let started = Instant::now();
    let view = api.ok(&anna, &id, &json!({ "type": "start" }));
    let deadline = view["seats"][0]["deadline_at"].as_str().unwrap().to_owned();

    // "Your turn" (to start the full lobby, then to play a card) and, the deadline being an
    // hour away, "deadline near": to anna only.
    wait_until("anna's turn and deadline mails", || {
        let mails = sink.to("anna@example.org");
        // The deadline mail names the action too: wait for the turn mail itself.
        mails
            .iter()
            .any(|m| m.subject().starts_with("Your turn") && m.body.contains("play_card"))
            && mails.iter().any(|m| m.subject().contains("deadline"))
    });
    // A figure, not an assertion: the worker looks at the outbox every 200 ms.
    eprintln!(
        "figure: start command sent -> \"your turn\" and \"deadline near\" mails in the sink: {} ms",
        started.elapsed().as_millis()
    );
    let mails = sink.to("anna@example.org");
    let turn = mails
        .iter()
        .find(|m| m.subject().starts_with("Your turn") && m.body.contains("play_card"))
        .unwrap_or_else(|| panic!("{mails:?}"));
    assert_eq!(turn.subject(), "Your turn in \"Friday table\" (6-nimmt)");
    assert!(
        turn.headers.contains("To: anna@example.org"),
        "{}",
        turn.headers
    );
    assert!(
        turn.headers
            .contains("From: Stammtisch <noreply@example.org>")
    );
    assert!(turn.body.contains("Hello anna,"), "{}", turn.body);
    assert!(turn.body.contains("play_card"), "{}", turn.body);
    assert!(
        turn.body.contains(&format!("{PUBLIC}/#/games/{id}")),
        "{}",
        turn.body
    );
    assert!(turn.body.contains(&deadline), "{}", turn.body);
    let near = mails
        .iter()
        .find(|m| m.subject().contains("deadline"))
        .unwrap_or_else(|| panic!("{mails:?}"));
    let allowed = [id.as_str(), deadline.as_str(), "6-nimmt"];
    assert_no_hidden(turn, &allowed);
    assert_no_hidden(near, &allowed);
    // Bert chose no turn mails.
    assert_eq!(sink.to("bert@example.org").len(), 1, "only the link");

    // The whole game: anna gets no second mail for a turn she is still asked; both get
    // the end.
    let people = [anna.clone(), bert.clone()];
    let end = crate::support::play_randomly(&api, &people, &id, 3);
    let bert_mails = sink.wait_for("bert@example.org", 2);
    let ended = &bert_mails[1];
    assert_eq!(ended.subject(), "\"Friday table\" (6-nimmt) has ended");
    let winners: Vec<&str> = end["winners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            end["seats"][w.as_u64().unwrap() as usize]["name"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(
        ended
            .body
            .contains(&format!("Won by: {}.", winners.join(", "))),
        "{}",
        ended.body
    );
    assert_no_hidden(ended, &[id.as_str(), "6-nimmt"]);
    // Anna chose no end mail; her turn mails carry nothing hidden either.
    wait_until("the outbox to settle", || {
        outbox(&server, &anna.id, "your_turn")
            .iter()
            .all(|s| !s.starts_with("pending"))
    });
    for m in sink.to("anna@example.org").iter().skip(1) {
        assert!(!m.subject().contains("ended"), "{}", m.subject());
        let mut allowed: Vec<String> = vec![id.clone(), "6-nimmt".into()];
        for l in m.body.lines() {
            if let Some(at) = l.strip_prefix("Move before ") {
                allowed.push(
                    at.trim_end_matches("; after that the server moves for you.")
                        .into(),
                );
            }
        }
        let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
        assert_no_hidden(m, &allowed);
    }
    // A mail was written once per ask, never twice (exactly-once intent).
    let delivered = outbox(&server, &anna.id, "your_turn");
    let sent = sink
        .to("anna@example.org")
        .iter()
        .filter(|m| m.subject().starts_with("Your turn"))
        .count();
    assert_eq!(
        delivered
            .iter()
            .filter(|s| s.starts_with("delivered"))
            .count(),
        sent
    );
}

/// A two-person 6 nimmt! game by quick play, `first` then `second`: it starts by itself
/// when full, and the first ask of both is to play a card. Its id.
fn quick_game(api: &Api, first: &Player, second: &Player) -> String {
    let quick = json!({ "ruleset": "6-nimmt", "players": 2 });
    let r = api.post("/v1/games/quick", Some(&first.token), &quick);
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_str().unwrap().to_owned();
    let r = api.post("/v1/games/quick", Some(&second.token), &quick);
    assert_eq!(r.body["id"], id.as_str(), "{}", r.text);
    assert_eq!(r.body["status"], "active", "{}", r.text);
    id
}

fn refused_mails_are_retried_and_stale_ones_dropped(backend: Backend) {
    let sink = Sink::start();
    let server = mail_server(backend, &sink, &[]);
    let api = server.client();
    let anna = api.account("anna");
    let bert = api.guest("bert");
    verify(&api, &sink, &anna, "anna@example.org");
    verify(&api, &sink, &bert, "bert@example.org");
    // Anna's server refuses twice, then accepts; bert's refuses until further notice.
    sink.refuse("anna@example.org", 2);
    sink.refuse("bert@example.org", 1_000);
    let id = quick_game(&api, &anna, &bert);
    let mails = sink.wait_for("anna@example.org", 2);
    assert!(mails[1].subject().starts_with("Your turn"), "{mails:?}");
    assert_eq!(sink.refused("anna@example.org"), 2);
    // (The worker records the outcome right after the sink's answer.)
    wait_until("anna's reminder to be recorded after 3 attempts", || {
        outbox(&server, &anna.id, "your_turn") == ["delivered:3"]
    });

    // Bert's mail waits for a retry; he moves meanwhile, so it is no longer true.
    wait_until("a refused mail to bert", || {
        sink.refused("bert@example.org") >= 1
    });
    let card = crate::support::cards(&api.view(&bert, &id)["you"]["hand"])[0];
    api.ok(&bert, &id, &json!({ "type": "play_card", "card": card }));
    wait_until("bert's reminder to be dropped", || {
        outbox(&server, &bert.id, "your_turn")
            .first()
            .is_some_and(|s| s.starts_with("dropped"))
    });
    assert_eq!(sink.to("bert@example.org").len(), 1, "only the link");
}

/// lettre's timeout bounds each step of an SMTP conversation, not the whole of it: a server
/// that takes most of the timeout for every reply makes a conversation several timeouts
/// long. A mail's lease covers that, so no other claim takes the mail while it is being
/// sent and it goes out once. (With the lease of a webhook, twice the timeout, the mail was
/// claimed again mid-conversation: a second attempt counted, and the mail sent twice.)
fn a_slow_mail_server_gets_each_mail_once(backend: Backend) {
    let sink = Sink::start();
    let server = mail_server(backend, &sink, &[("WEBHOOK_TIMEOUT_MS", "1000")]);
    let api = server.client();
    let anna = api.account("anna");
    let bert = api.guest("bert");
    verify(&api, &sink, &anna, "anna@example.org");
    // Each of the conversation's seven replies takes 500 ms (each well within the 1 s
    // timeout): 3.5 s in all, more than twice the timeout.
    sink.slow(Duration::from_millis(500));
    quick_game(&api, &anna, &bert);
    let mails = sink.wait_for("anna@example.org", 2);
    assert!(mails[1].subject().starts_with("Your turn"), "{mails:?}");
    // (The worker records the outcome right after the sink's answer.)
    wait_until("anna's reminder to be recorded", || {
        outbox(&server, &anna.id, "your_turn")
            .first()
            .is_some_and(|s| s.starts_with("delivered"))
    });
    assert_eq!(outbox(&server, &anna.id, "your_turn"), ["delivered:1"]);
    assert_eq!(
        sink.to("anna@example.org").len(),
        2,
        "the link and one reminder"
    );
}

fn the_digest_lists_the_games_awaiting(backend: Backend) {
    let sink = Sink::start();
    let server = mail_server(backend, &sink, &[("MAIL_DIGEST_SECONDS", "3600")]);
    let api = server.client();
    let anna = api.account("anna");
    let bert = api.guest("bert");
    verify(&api, &sink, &anna, "anna@example.org");
    choose(&api, &anna, &json!({ "digest": true }));
    let mut ids = Vec::new();
    for _ in 0..2 {
        ids.push(crate::support::start_game(
            &api,
            &[anna.clone(), bert.clone()],
            &json!({ "ruleset": "6-nimmt", "players": 2 }),
            &[],
        ));
    }
    // (Asked to start each full lobby, then to play: the digest lists what is asked when
    // it is due, an hour after the first ask.)
    server.advance_clock(3600);
    let mails = sink.wait_for("anna@example.org", 2);
    let digest = &mails[1];
    assert_eq!(digest.subject(), "Games awaiting your move: 2");
    for id in &ids {
        assert!(
            digest.body.contains(&format!("{PUBLIC}/#/games/{id}")),
            "{}",
            digest.body
        );
    }
    let allowed: Vec<&str> = ids.iter().map(String::as_str).chain(["6-nimmt"]).collect();
    assert_no_hidden(digest, &allowed);
    // One digest for both games (written at the first ask); no turn mails.
    wait_until("the digest to be recorded", || {
        outbox(&server, &anna.id, "digest") == ["delivered:1"]
    });
    assert!(outbox(&server, &anna.id, "your_turn").is_empty());
}

fn deletion_removes_the_address(backend: Backend) {
    let sink = Sink::start();
    let server = mail_server(backend, &sink, &[]);
    let api = server.client();
    let anna = api.guest("anna");
    verify(&api, &sink, &anna, "anna@example.org");
    let r = send(&api, "DELETE", "/v1/me", &anna.token, Some(&json!({})));
    assert_eq!(r.status, 204, "{}", r.text);
    let left = texts(
        &server,
        &format!(
            "SELECT COALESCE(address, '') AS v FROM mail_settings WHERE account_id = '{}'",
            anna.id
        ),
    );
    assert!(left.is_empty(), "{left:?}");
}

/// Verification mails are counted per account and per recipient: neither one account
/// nor many accounts can bomb an address.
fn verification_mails_are_limited_per_account_and_recipient(backend: Backend) {
    let sink = Sink::start();
    let server = mail_server(backend, &sink, &[("LIMIT_MAILS_PER_HOUR", "2")]);
    let api = server.client();
    let anna = api.guest("anna");
    let ask = |p: &Player, address: &str| ask_address(&api, &p.token, address);
    for _ in 0..2 {
        assert_eq!(ask(&anna, "victim@example.org").status, 202);
    }
    let r = ask(&anna, "victim@example.org");
    r.assert_problem(429, "too_many_mails");
    assert!(r.header("retry-after").is_some());
    // The same account to another address: the account's count is used up.
    ask(&anna, "other@example.org").assert_problem(429, "too_many_mails");
    // Another account to the same address: the recipient's count is used up.
    let bert = api.guest("bert");
    ask(&bert, "VICTIM@example.org").assert_problem(429, "too_many_mails");
    // Another account to another address still gets its link.
    assert_eq!(ask(&bert, "bert@example.org").status, 202);
    sink.wait_for("bert@example.org", 1);
    assert_eq!(sink.to("victim@example.org").len(), 2);
    assert!(sink.to("other@example.org").is_empty());
}

both!(
    without_public_url_the_link_names_the_port_the_server_listens_on,
    verification_mails_are_limited_per_account_and_recipient,
    an_address_is_verified_by_a_single_use_link,
    mail_is_off_without_smtp,
    reminders_arrive_without_hidden_information,
    refused_mails_are_retried_and_stale_ones_dropped,
    a_slow_mail_server_gets_each_mail_once,
    the_digest_lists_the_games_awaiting,
    deletion_removes_the_address,
);

/// Mail has sender capacity of its own: a "your turn" mail goes out while ten webhooks of
/// another account hang on receivers that never answer (and long before the server gives
/// up on them).
fn mail_does_not_wait_behind_hanging_webhooks(backend: Backend) {
    use crate::webhooks::{Hanging, register, wait_hanging};
    let sink = Sink::start();
    let server = mail_server(
        backend,
        &sink,
        &[
            ("WEBHOOK_ALLOW_LOOPBACK", "true"),
            ("WEBHOOK_TIMEOUT_MS", "60000"),
        ],
    );
    let api = server.client();
    let anna = api.account("anna");
    let bert = api.guest("bert");
    verify(&api, &sink, &anna, "anna@example.org");
    let hanging: Vec<Hanging> = (0..10).map(|_| Hanging::start()).collect();
    let mallory = api.guest("mallory");
    let max = api.guest("max");
    for (i, h) in hanging.iter().enumerate() {
        register(&api, &mallory, &h.url(&format!("/m{i}")));
    }
    let two = json!({ "ruleset": "6-nimmt", "players": 2 });
    // Mallory is asked to start: her webhooks hang.
    let game = api.create_game(&mallory, &two)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.join(&max, &game);
    wait_hanging(&hanging, 1);
    // Then anna is asked to start.
    let game = api.create_game(&anna, &two)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.join(&bert, &game);
    let mails = sink.wait_for("anna@example.org", 2);
    assert!(mails[1].subject().starts_with("Your turn"), "{mails:?}");
    assert!(
        hanging.iter().all(|h| h.ended().is_empty()),
        "the mail came only after hanging webhooks were given up"
    );
}

both!(mail_does_not_wait_behind_hanging_webhooks);

/// `SMTP_URL` naming the mail server by name: the server looks the name up itself (within
/// the timeout) and reaches the mail server at what it resolves to.
fn a_mail_server_named_by_name_is_reached_at_its_address(backend: Backend) {
    let sink = Sink::start();
    let by_name = sink.url.replace("127.0.0.1", "localhost");
    assert_ne!(by_name, sink.url);
    let server = mail_server(backend, &sink, &[("SMTP_URL", by_name.as_str())]);
    let api = server.client();
    let anna = api.account("anna");
    verify(&api, &sink, &anna, "anna@example.org");
    let bert = api.guest("bert");
    quick_game(&api, &anna, &bert);
    let mails = sink.wait_for("anna@example.org", 2);
    assert!(mails[1].subject().starts_with("Your turn"), "{mails:?}");
}

both!(a_mail_server_named_by_name_is_reached_at_its_address);

/// A `Mailer` for the sink, its server named `mail.example.test` and looked up by `resolve`.
fn mailer_by_name(sink: &Sink, resolve: stammtisch::lookup::Resolve) -> stammtisch::mail::Mailer {
    let config = stammtisch::mail::MailConfig {
        smtp_url: sink.url.replace("127.0.0.1", "mail.example.test"),
        from: "Stammtisch <noreply@example.org>".into(),
        public_url: PUBLIC.into(),
        digest_interval: Duration::from_secs(86_400),
        timeout: Duration::from_millis(300),
        bound: Arc::default(),
    };
    stammtisch::mail::Mailer::new(&config)
        .unwrap()
        .with_resolver(resolve)
}

fn a_mail(to: &str) -> stammtisch::mail::Outgoing {
    stammtisch::mail::Outgoing {
        to: to.into(),
        subject: "Hello".into(),
        body: "Hello there.\n".into(),
    }
}

/// The system's resolver takes no timeout: a lookup that hangs must not hold a mail's send
/// past its timeout (a mail's lease counts on every step being bounded; past the lease
/// another claim could send it a second time). The attempt fails, nothing is sent, and the
/// outbox tries again later.
#[test]
fn a_mail_server_name_that_does_not_resolve_in_time_fails_the_attempt() {
    fn hangs(_: &str, _: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
        std::thread::sleep(Duration::from_secs(3_600));
        Ok(Vec::new())
    }
    let sink = Sink::start();
    let err = mailer_by_name(&sink, hangs)
        .send(&a_mail("anna@example.org"))
        .unwrap_err();
    assert!(
        err.contains("mail.example.test did not resolve within 300 ms"),
        "{err}"
    );
    assert!(sink.to("anna@example.org").is_empty());
}

/// A name with several addresses: the next is tried only when the one before refused the
/// connection (nothing was said to it), and at most two (each connection may take the
/// whole timeout, and the mail's lease counts two). 127.0.0.2 and 127.0.0.3 are loopback
/// addresses the sink does not listen on.
#[test]
fn the_second_address_is_tried_when_the_first_refuses_the_connection() {
    fn second_listens(_: &str, port: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
        Ok(vec![
            ([127, 0, 0, 2], port).into(),
            ([127, 0, 0, 1], port).into(),
        ])
    }
    fn third_listens(_: &str, port: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
        Ok(vec![
            ([127, 0, 0, 2], port).into(),
            ([127, 0, 0, 3], port).into(),
            ([127, 0, 0, 1], port).into(),
        ])
    }
    let sink = Sink::start();
    mailer_by_name(&sink, second_listens)
        .send(&a_mail("anna@example.org"))
        .unwrap();
    assert_eq!(sink.to("anna@example.org").len(), 1);
    let err = mailer_by_name(&sink, third_listens)
        .send(&a_mail("bert@example.org"))
        .unwrap_err();
    assert!(err.starts_with("127.0.0.3:"), "{err}");
    assert!(sink.to("bert@example.org").is_empty());
}
