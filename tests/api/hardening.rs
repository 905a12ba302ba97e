//! Hardening: privacy before preconditions, rate limits counted across replicas,
//! slow bodies cut off, durable SQLite commits, idempotency keys that expire and refuse
//! reuse, problem+json for every refusal, and configuration that refuses bad values.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::both;
use crate::support::{Backend, EventStream, TestDb, TestServer, cards, seated_game, sql};

fn stale_if_match_to_a_private_game_is_not_found_for_outsiders(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let game = seated_game(&api, &host, &[], 1, &json!({}));
    let path = format!("/v1/games/{game}/commands");
    let card = cards(&api.view(&host, &game)["you"]["hand"])[0];
    let play = json!({ "type": "play_card", "card": card });
    let outsider = api.guest("outsider");
    for tag in ["\"1\"", "\"999\"", "*"] {
        let r = api.post_with(&path, Some(&outsider.token), &play, &[("If-Match", tag)]);
        r.assert_problem(404, "not_found");
        assert!(r.body.get("current_version").is_none(), "{}", r.text);
    }
    // A seated player learns the version from a stale tag, as before.
    let version = api.view(&host, &game)["version"].as_i64().unwrap();
    let stale = format!("\"{}\"", version - 1);
    let r = api.post_with(&path, Some(&host.token), &play, &[("If-Match", &stale)]);
    r.assert_problem(409, "version_conflict");
    assert_eq!(r.body["current_version"], version);
    // A weak tag never matches (If-Match compares strongly), so it is refused.
    let weak = format!("W/\"{version}\"");
    api.post_with(&path, Some(&host.token), &play, &[("If-Match", &weak)])
        .assert_problem(400, "invalid_if_match");
    // `*` asks only that the game exists.
    let r = api.post_with(&path, Some(&host.token), &play, &[("If-Match", "*")]);
    assert_eq!(r.status, 200, "{}", r.text);
}

/// A server with `limits` set and the other limits off.
fn limited(backend: Backend, limits: &[(&str, &str)]) -> TestServer {
    TestServer::start_with_env(TestDb::new(backend), backend, limits)
}

fn retry_after(r: &crate::support::Reply) -> u64 {
    r.header("retry-after")
        .expect("429 carries Retry-After")
        .parse()
        .expect("seconds")
}

fn guests_are_limited_per_client_address(backend: Backend) {
    let server = limited(backend, &[("LIMIT_GUESTS_PER_HOUR", "3")]);
    let api = server.client();
    for i in 0..3 {
        api.guest(&format!("guest{i}"));
    }
    let r = api.post("/v1/guests", None, &json!({ "name": "guest3" }));
    r.assert_problem(429, "too_many_guests");
    assert!((1..=7200).contains(&retry_after(&r)));
    // Registered accounts are not guests; they are not counted here.
    let r = api.post(
        "/v1/accounts",
        None,
        &json!({ "name": "regular", "password": "long enough" }),
    );
    assert_eq!(r.status, 201, "{}", r.text);
}

fn games_and_open_lobbies_are_limited_per_account(backend: Backend) {
    let server = limited(
        backend,
        &[("LIMIT_OPEN_LOBBIES", "2"), ("LIMIT_GAMES_PER_HOUR", "3")],
    );
    let api = server.client();
    let host = api.guest("host");
    let body = json!({ "ruleset": "6-nimmt", "players": 2 });
    let create = |api: &crate::support::Api| {
        api.create_game(&host, &body)["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let start = |game: &str| {
        api.ok(&host, game, &json!({ "type": "add_bot" }));
        api.ok(&host, game, &json!({ "type": "start" }));
    };
    let first = create(&api);
    let second = create(&api);
    let r = api.post("/v1/games", Some(&host.token), &body);
    r.assert_problem(429, "too_many_open_lobbies");
    retry_after(&r);
    // Starting a lobby frees a place; others' lobbies do not count.
    start(&first);
    let other = api.guest("other");
    api.create_game(&other, &body);
    api.create_game(&other, &body);
    create(&api);
    // Three games an hour (the refused one did not count): the next is refused even with
    // a free lobby place.
    start(&second);
    let r = api.post("/v1/games", Some(&host.token), &body);
    r.assert_problem(429, "too_many_games");
    assert!(retry_after(&r) >= 1);
}

fn commands_and_failed_logins_are_counted_across_replicas(backend: Backend) {
    let limits = [
        ("LIMIT_COMMANDS_PER_MINUTE", "6"),
        ("LIMIT_FAILED_LOGINS", "4"),
    ];
    let server = limited(backend, &limits);
    // On PostgreSQL a second replica shares the counts; on SQLite one process owns the file,
    // so the same server stands in for it.
    let replica = (backend == Backend::Postgres).then(|| server.replica(&limits));
    let a = server.client();
    let b = replica
        .as_ref()
        .map_or_else(|| server.client(), |r| r.client());
    let host = a.guest("host");
    let game = a.create_game(&host, &json!({ "ruleset": "6-nimmt", "players": 3 }));
    let game = game["id"].as_str().unwrap().to_owned();
    // Six commands, alternating replicas, then the seventh is refused on either.
    for i in 0..6 {
        let api = if i % 2 == 0 { &a } else { &b };
        let cmd = if i % 2 == 0 {
            json!({ "type": "add_bot" })
        } else {
            json!({ "type": "remove_seat", "seat": 1 })
        };
        let r = api.command(&host, &game, &cmd);
        assert_eq!(r.status, 200, "command {i}: {}", r.text);
    }
    for api in [&a, &b] {
        let r = api.command(&host, &game, &json!({ "type": "add_bot" }));
        r.assert_problem(429, "too_many_commands");
        assert!((1..=120).contains(&retry_after(&r)));
    }
    // The refused commands changed nothing.
    assert_eq!(
        a.view(&host, &game)["version"],
        b.view(&host, &game)["version"]
    );

    // Failed logins: four per name, whichever replica they reach.
    let r = a.post(
        "/v1/accounts",
        None,
        &json!({ "name": "lena_l", "password": "right password" }),
    );
    assert_eq!(r.status, 201);
    for i in 0..4 {
        let api = if i % 2 == 0 { &a } else { &b };
        let r = api.post(
            "/v1/tokens",
            None,
            &json!({ "name": "lena_l", "password": "wrong" }),
        );
        r.assert_problem(401, "invalid_credentials");
    }
    for api in [&a, &b] {
        let r = api.post(
            "/v1/tokens",
            None,
            &json!({ "name": "lena_l", "password": "right password" }),
        );
        r.assert_problem(429, "rate_limited");
    }
}

fn concurrent_streams_are_limited_per_account(backend: Backend) {
    // Keep-alives every 500 ms: a server notices a closed connection when it writes.
    let limits = [("LIMIT_STREAMS", "2"), ("STREAM_KEEPALIVE_MS", "500")];
    let server = limited(backend, &limits);
    let replica = (backend == Backend::Postgres).then(|| server.replica(&limits));
    let api = server.client();
    let other_base = replica
        .as_ref()
        .map_or(api.base.clone(), |r| r.base.clone());
    let me = api.guest("watcher");
    let game = seated_game(&api, &me, &[], 1, &json!({}));
    let path = format!("/v1/games/{game}/stream");
    let timeout = Duration::from_secs(20);
    let first = EventStream::open(&api.base, &path, &me.token, None, timeout);
    let second = EventStream::open(&other_base, &path, &me.token, None, timeout);
    for base in [&api.base, &other_base] {
        EventStream::try_open(base, &path, Some(&me.token), None, timeout)
            .err()
            .expect("a third stream is refused")
            .assert_problem(429, "too_many_streams");
    }
    // Another account is not affected.
    let other = api.guest("other");
    let public = api.create_game(
        &other,
        &json!({ "ruleset": "6-nimmt", "players": 2, "public": true }),
    );
    let public = public["id"].as_str().unwrap();
    drop(EventStream::open(
        &api.base,
        &format!("/v1/games/{public}/stream"),
        &other.token,
        None,
        timeout,
    ));
    // Closing one gives its place back (the server notices the closed connection on its
    // next write or poll, so allow it a few seconds).
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match EventStream::try_open(&api.base, &path, Some(&me.token), None, timeout) {
            Ok(_) => break,
            Err(r) if Instant::now() < deadline => {
                r.assert_problem(429, "too_many_streams");
                std::thread::sleep(Duration::from_millis(300));
            }
            Err(r) => panic!("the closed stream's place never came back: {}", r.text),
        }
    }
    drop(second);
}

fn a_body_that_arrives_too_slowly_is_cut_off(backend: Backend) {
    let server = limited(backend, &[("BODY_TIMEOUT_MS", "700")]);
    let api = server.client();
    let me = api.guest("slow");
    let addr = api.base.trim_start_matches("http://").to_owned();
    let mut tcp = TcpStream::connect(&addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let body = json!({ "ruleset": "6-nimmt", "players": 2 }).to_string();
    let head = format!(
        "POST /v1/games HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        me.token,
        body.len()
    );
    tcp.write_all(head.as_bytes()).unwrap();
    tcp.write_all(&body.as_bytes()[..5]).unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\r\n\r\n{") {
        let n = tcp
            .read(&mut buf)
            .expect("the server answers instead of waiting forever");
        assert!(n > 0, "closed without an answer");
        answer.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&answer).to_lowercase();
    assert!(text.starts_with("http/1.1 408"), "{text}");
    assert!(text.contains("application/problem+json"), "{text}");
    assert!(text.contains("request_timeout"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "cut off after the body timeout, not never"
    );
    // Nothing was created.
    let listed = api.get("/v1/games?mine=true", Some(&me.token)).body;
    assert_eq!(listed["items"], json!([]));
}

#[test]
fn sqlite_syncs_every_commit_by_default_and_the_setting_is_checked() {
    let server = TestServer::start(Backend::Sqlite);
    let log = server.log_text();
    assert!(
        log.contains("synchronous=\"full\""),
        "the pragma read back from a connection is FULL: {log}"
    );
    let relaxed = TestServer::start_with_env(
        TestDb::new(Backend::Sqlite),
        Backend::Sqlite,
        &[("SQLITE_SYNCHRONOUS", "normal")],
    );
    assert!(relaxed.log_text().contains("synchronous=\"normal\""));
    let db = TestDb::new(Backend::Sqlite);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stammtisch"))
        .args(["migrate"])
        .env("DATABASE_URL", &db.url)
        .env("SQLITE_SYNCHRONOUS", "sometimes")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("SQLITE_SYNCHRONOUS"));
}

fn idempotency_keys_refuse_another_request_and_expire_after_a_day(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let game = seated_game(&api, &host, &[], 1, &json!({}));
    let path = format!("/v1/games/{game}/commands");
    let hand = cards(&api.view(&host, &game)["you"]["hand"]);
    let play = |card: u64| json!({ "type": "play_card", "card": card });
    let key = [("Idempotency-Key", "turn-1")];
    let first = api.post_with(&path, Some(&host.token), &play(hand[0]), &key);
    assert_eq!(first.status, 200, "{}", first.text);
    let again = api.post_with(&path, Some(&host.token), &play(hand[0]), &key);
    assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
    assert_eq!(again.body, first.body);
    // The same key for another command: refused, nothing applied, not a silent replay.
    let version = api.view(&host, &game)["version"].clone();
    let other = api.post_with(&path, Some(&host.token), &play(hand[1]), &key);
    other.assert_problem(422, "idempotency_key_reused");
    assert_eq!(api.view(&host, &game)["version"], version);
    // A day later the key is free: the command is applied, not replayed.
    sql(
        &server,
        &format!(
            "UPDATE idempotency_keys SET created_at = '2000-01-01 00:00:00' WHERE key = 'turn-1' \
             AND game_id = '{game}'"
        ),
    );
    let legal = api.view(&host, &game)["legal"][0].clone();
    let later = api.post_with(&path, Some(&host.token), &legal, &key);
    assert_eq!(later.status, 200, "{}", later.text);
    assert_eq!(later.header("idempotent-replayed"), None);
    assert_ne!(later.body["version"], version);
}

fn every_refusal_is_problem_json(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let me = api.guest("prober");
    let game = seated_game(&api, &me, &[], 1, &json!({}));
    let send = |method: reqwest::Method, path: &str| {
        crate::support::Reply::from_response(
            api.http
                .request(method, api.url(path))
                .bearer_auth(&me.token)
                .send()
                .unwrap(),
        )
    };
    // A wrong method on a route: 405 with the methods it answers.
    for (method, path, allow) in [
        (reqwest::Method::DELETE, "/v1/games".to_owned(), "GET, POST"),
        (
            reqwest::Method::PUT,
            format!("/v1/games/{game}"),
            "GET, PATCH",
        ),
        (
            reqwest::Method::GET,
            format!("/v1/games/{game}/stream-tickets"),
            "POST",
        ),
        (reqwest::Method::POST, "/v1/me".to_owned(), "DELETE, GET"),
    ] {
        let r = send(method.clone(), &path);
        r.assert_problem(405, "method_not_allowed");
        let mut got: Vec<String> = r
            .header("allow")
            .unwrap_or_default()
            .split(", ")
            .map(str::to_owned)
            .collect();
        let mut want: Vec<String> = allow.split(", ").map(str::to_owned).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{method} {path}");
    }
    // The docs UI's own 404s, unknown routes.
    for path in ["/docs/no-such-file.js", "/v2/games", "/v1/games/x/y/z"] {
        send(reqwest::Method::GET, path).assert_problem(404, "not_found");
    }
}

#[test]
fn bad_configuration_refuses_to_start_with_a_clear_message() {
    let db = TestDb::new(Backend::Sqlite);
    for (name, value, expect) in [
        ("TOKEN_TTL_SECONDS", "one day", "TOKEN_TTL_SECONDS"),
        ("STREAM_POLL_MS", "-5", "STREAM_POLL_MS"),
        (
            "LIMIT_COMMANDS_PER_MINUTE",
            "lots",
            "LIMIT_COMMANDS_PER_MINUTE",
        ),
        ("TRUST_FORWARDED_FOR", "maybe", "TRUST_FORWARDED_FOR"),
        ("STAND_IN_STRATEGY", "genius", "STAND_IN_STRATEGY"),
        ("WEBHOOK_ALLOW_LOOPBACK", "yes", "WEBHOOK_ALLOW_LOOPBACK"),
        ("WEBHOOK_TIMEOUT_MS", "50", "at least 100"),
        ("WEBHOOK_BACKOFF_MS", "soon", "WEBHOOK_BACKOFF_MS"),
        ("WEBHOOK_CONCURRENCY", "0", "at least 1"),
        ("DATABASE_POOL_TIMEOUT_MS", "0", "DATABASE_POOL_TIMEOUT_MS"),
        ("DATABASE_URL", "mysql://localhost/db", "DATABASE_URL"),
        (
            "DATABASE_URL",
            "postgres://postgres@127.0.0.1:1/none",
            "connect",
        ),
    ] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_stammtisch"));
        cmd.arg("serve")
            .env("DATABASE_URL", &db.url)
            .env("BIND_ADDR", "127.0.0.1:0")
            .env(name, value);
        let out = cmd.output().unwrap();
        assert!(!out.status.success(), "{name}={value} must not start");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{name}={value}: {err}");
    }
}

both!(
    stale_if_match_to_a_private_game_is_not_found_for_outsiders,
    guests_are_limited_per_client_address,
    games_and_open_lobbies_are_limited_per_account,
    commands_and_failed_logins_are_counted_across_replicas,
    concurrent_streams_are_limited_per_account,
    a_body_that_arrives_too_slowly_is_cut_off,
    idempotency_keys_refuse_another_request_and_expire_after_a_day,
    every_refusal_is_problem_json,
);
