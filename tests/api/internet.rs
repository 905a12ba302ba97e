//! The account surface against anonymous callers on the internet — logins that
//! cannot exhaust the server, limits that do not race, cannot be spoofed and never let one
//! person lock another out, and names nobody can borrow.

use std::sync::Barrier;

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Reply, TestDb, TestServer};

fn server(backend: Backend, env: &[(&str, &str)]) -> TestServer {
    TestServer::start_with_env(TestDb::new(backend), backend, env)
}

/// POST `path` with `body` as if from `address` (through a trusted proxy).
fn post_from(api: &Api, address: &str, path: &str, token: Option<&str>, body: &Value) -> Reply {
    let mut req = api
        .http
        .post(api.url(path))
        .header("X-Forwarded-For", address)
        .json(body);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    Reply::from_response(req.send().unwrap())
}

fn login_from(api: &Api, address: &str, name: &str, password: &str) -> Reply {
    post_from(
        api,
        address,
        "/v1/tokens",
        None,
        &json!({ "name": name, "password": password }),
    )
}

fn register(api: &Api, name: &str, password: &str) {
    let r = api.post(
        "/v1/accounts",
        None,
        &json!({ "name": name, "password": password }),
    );
    assert_eq!(r.status, 201, "{}", r.text);
}

/// Runs `n` requests at once (released together by a barrier); their statuses and codes.
fn at_once(n: usize, request: impl Fn(usize) -> Reply + Sync) -> Vec<(u16, String)> {
    at_once_replies(n, request)
        .into_iter()
        .map(|r| {
            let code = r.body["code"].as_str().unwrap_or_default().to_owned();
            (r.status, code)
        })
        .collect()
}

fn at_once_replies(n: usize, request: impl Fn(usize) -> Reply + Sync) -> Vec<Reply> {
    let barrier = Barrier::new(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (barrier, request) = (&barrier, &request);
                s.spawn(move || {
                    barrier.wait();
                    request(i)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// 30 wrong passwords at once against a limit of 5 get exactly five 401s: the
/// attempt is reserved before the password is checked.
fn parallel_wrong_passwords_pass_the_limit_no_more_often_than_it_allows(backend: Backend) {
    // The per-name-and-address limit alone: the per-address one (20 by default) counts the
    // refused attempts too, so with it on, a checked attempt can also be refused by it.
    let server = server(
        backend,
        &[
            ("LIMIT_FAILED_LOGINS", "5"),
            ("LIMIT_FAILED_LOGINS_PER_ADDRESS", "0"),
        ],
    );
    let api = server.client();
    register(&api, "lena_l", "right password");
    let answers = at_once(30, |_| {
        api.post(
            "/v1/tokens",
            None,
            &json!({ "name": "lena_l", "password": "wrong password" }),
        )
    });
    let unauthorized = answers.iter().filter(|(s, _)| *s == 401).count();
    // On a loaded machine an attempt that passed the limit may find every hashing slot
    // taken and be answered `503 server_busy` instead of being checked: it still used one
    // of the five, so it is counted with them.
    let busy = answers
        .iter()
        .filter(|(s, c)| *s == 503 && c == "server_busy")
        .count();
    let limited = answers
        .iter()
        .filter(|(s, c)| *s == 429 && c == "rate_limited")
        .count();
    assert_eq!((unauthorized + busy, limited), (5, 25), "{answers:?}");
}

/// Failures count per name and address; the owner from their own address
/// still gets in; an address that guesses many names is refused for all of them; the
/// address is the one the proxy appended, not what the client wrote.
fn failures_from_one_address_never_lock_the_owner_out(backend: Backend) {
    let server = server(
        backend,
        &[
            ("TRUST_FORWARDED_FOR", "true"),
            ("LIMIT_FAILED_LOGINS", "3"),
            ("LIMIT_FAILED_LOGINS_PER_ADDRESS", "6"),
        ],
    );
    let api = server.client();
    register(&api, "owner_o", "the right one");
    // The attacker writes a fresh left-most entry each time; its proxy appends its address.
    let attacker = |i: usize| format!("10.9.{i}.1, 203.0.113.66");
    for i in 0..3 {
        login_from(&api, &attacker(i), "owner_o", "guess")
            .assert_problem(401, "invalid_credentials");
    }
    // Locked for the attacker, even with the right password and another written entry...
    login_from(&api, &attacker(9), "owner_o", "the right one").assert_problem(429, "rate_limited");
    // ...but not for the owner at home.
    let r = login_from(&api, "198.51.100.7", "owner_o", "the right one");
    assert_eq!(r.status, 200, "{}", r.text);
    // Guessing other names from the attacker's address: six failures in all (the refused
    // attempt counted too), then every name is refused from there, and still not from
    // elsewhere.
    for i in 0..2 {
        login_from(&api, "203.0.113.66", &format!("name_{i}"), "guess")
            .assert_problem(401, "invalid_credentials");
    }
    login_from(&api, "203.0.113.66", "name_9", "guess").assert_problem(429, "rate_limited");
    let r = login_from(&api, "198.51.100.7", "owner_o", "the right one");
    assert_eq!(r.status, 200, "{}", r.text);
    // IPv6 addresses count per /64: another address in the attacker's /64 is the attacker.
    for i in 0..3 {
        login_from(&api, &format!("2001:db8:7:7::{i}"), "owner_o", "guess")
            .assert_problem(401, "invalid_credentials");
    }
    login_from(&api, "2001:db8:7:7:ffff::1", "owner_o", "the right one")
        .assert_problem(429, "rate_limited");
    let r = login_from(&api, "2001:db8:7:8::1", "owner_o", "the right one");
    assert_eq!(r.status, 200, "{}", r.text);
}

/// Without `TRUST_FORWARDED_FOR` the headers are ignored; with it, varying the
/// left-most entry does not make a new guest address.
fn per_address_limits_cannot_be_dodged_with_forwarded_headers(backend: Backend) {
    for trust in ["false", "true"] {
        let server = server(
            backend,
            &[
                ("TRUST_FORWARDED_FOR", trust),
                ("LIMIT_GUESTS_PER_HOUR", "2"),
            ],
        );
        let api = server.client();
        let guest = |i: usize| {
            post_from(
                &api,
                &format!("192.0.2.{i}, 203.0.113.9"),
                "/v1/guests",
                None,
                &json!({ "name": format!("g{trust}{i}") }),
            )
        };
        assert_eq!(guest(1).status, 201);
        assert_eq!(guest(2).status, 201);
        guest(3).assert_problem(429, "too_many_guests");
    }
}

/// Wrong current passwords behind a token count as failed logins.
fn password_checks_behind_a_token_are_limited(backend: Backend) {
    let server = server(backend, &[("LIMIT_FAILED_LOGINS", "3")]);
    let api = server.client();
    let p = api.account("tomas");
    let change = |current: &str| {
        api.post(
            "/v1/me/password",
            Some(&p.token),
            &json!({ "current_password": current, "new_password": "a new password" }),
        )
    };
    for _ in 0..3 {
        change("wrong guess").assert_problem(403, "wrong_password");
    }
    change(&format!("password-of-{}", p.name)).assert_problem(429, "rate_limited");
    // Deletion checks the same password and shares the count.
    let mut req = api.http.delete(api.url("/v1/me")).bearer_auth(&p.token);
    req = req.json(&json!({ "password": "another guess" }));
    Reply::from_response(req.send().unwrap()).assert_problem(429, "rate_limited");
    // Nothing changed: the account and its password are as they were.
    assert_eq!(api.get("/v1/me", Some(&p.token)).status, 200);
}

/// Registrations per address.
fn registration_is_limited_per_address(backend: Backend) {
    let server = server(backend, &[("LIMIT_ACCOUNTS_PER_HOUR", "3")]);
    let api = server.client();
    for i in 0..3 {
        register(&api, &format!("person_{i}"), "long enough");
    }
    let r = api.post(
        "/v1/accounts",
        None,
        &json!({ "name": "person_3", "password": "long enough" }),
    );
    r.assert_problem(429, "too_many_accounts");
    assert!(r.header("retry-after").is_some());
    let r = api.post(
        "/v1/tokens",
        None,
        &json!({ "name": "person_3", "password": "long enough" }),
    );
    r.assert_problem(401, "invalid_credentials");
}

/// A name or password longer than any can be is refused before it is counted or
/// hashed (a 60 KB name made PostgreSQL answer 500).
fn over_long_credentials_are_refused_before_any_work(backend: Backend) {
    let server = server(backend, &[("LIMIT_FAILED_LOGINS_PER_ADDRESS", "2")]);
    let api = server.client();
    let long = "n".repeat(60_000);
    for _ in 0..3 {
        let r = api.post(
            "/v1/tokens",
            None,
            &json!({ "name": long, "password": "whatever it is" }),
        );
        r.assert_problem(422, "validation_failed");
        let r = api.post(
            "/v1/tokens",
            None,
            &json!({ "name": "someone", "password": "p".repeat(129) }),
        );
        r.assert_problem(422, "validation_failed");
    }
    // None of them counted: two ordinary failures still answer 401.
    for _ in 0..2 {
        let r = api.post(
            "/v1/tokens",
            None,
            &json!({ "name": "someone", "password": "wrong" }),
        );
        r.assert_problem(401, "invalid_credentials");
    }
    let r = api.post(
        "/v1/tokens",
        None,
        &json!({ "name": "someone", "password": "wrong" }),
    );
    r.assert_problem(429, "rate_limited");
}

/// With one hashing slot and no wait, simultaneous logins that find it taken are
/// answered `503 server_busy` with `Retry-After` at once, and nothing else breaks.
fn logins_without_a_hashing_slot_get_503_with_retry_after(backend: Backend) {
    let server = server(
        backend,
        &[
            ("PASSWORD_HASH_THREADS", "1"),
            ("PASSWORD_HASH_WAIT_MS", "1"),
            ("LIMIT_FAILED_LOGINS", "0"),
            ("LIMIT_FAILED_LOGINS_PER_ADDRESS", "0"),
        ],
    );
    let api = server.client();
    let replies = at_once_replies(16, |i| {
        api.post(
            "/v1/tokens",
            None,
            &json!({ "name": format!("nobody_{i}"), "password": "guess" }),
        )
    });
    let busy: Vec<&Reply> = replies.iter().filter(|r| r.status == 503).collect();
    let unauthorized = replies.iter().filter(|r| r.status == 401).count();
    assert!(!busy.is_empty(), "no 503 among 16 simultaneous logins");
    assert!(unauthorized >= 1);
    assert_eq!(busy.len() + unauthorized, 16);
    for r in busy {
        r.assert_problem(503, "server_busy");
        assert_eq!(r.header("retry-after").as_deref(), Some("1"));
    }
    // Once the flood is over, logins are answered again.
    let r = api.post(
        "/v1/tokens",
        None,
        &json!({ "name": "nobody", "password": "guess" }),
    );
    r.assert_problem(401, "invalid_credentials");
}

/// The largest resident set the process ever had (`VmHWM`), in MiB.
fn peak_rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kib / 1024
}

/// 96 logins with unknown names from 32 connections at once, every one reaching
/// the hasher (no per-address limit): the server's peak memory stays far below what 32
/// simultaneous Argon2 hashes of ~19 MiB take, and a
/// signed-in player is served throughout. Memory is asserted; times are only printed (the
/// release figures come from `scripts/bench-login-flood`).
fn a_login_flood_keeps_memory_bounded(backend: Backend) {
    let server = server(
        backend,
        &[
            ("LIMIT_FAILED_LOGINS", "0"),
            ("LIMIT_FAILED_LOGINS_PER_ADDRESS", "0"),
        ],
    );
    let api = server.client();
    let player = api.account("player_p");
    let done = std::sync::atomic::AtomicBool::new(false);
    let (answers, player_statuses) = std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut statuses = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                statuses.push(api.get("/v1/me", Some(&player.token)).status);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            statuses
        });
        let answers: Vec<(u16, String)> = (0..3)
            .flat_map(|round| {
                at_once(32, |i| {
                    api.post(
                        "/v1/tokens",
                        None,
                        &json!({ "name": format!("flood_{round}_{i}"), "password": "a guess" }),
                    )
                })
            })
            .collect();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (answers, watcher.join().unwrap())
    });
    let peak = peak_rss_mib(server.pid());
    println!(
        "login flood ({backend:?}): 96 attempts, {} × 401, {} × 503; peak RSS {peak} MiB; the player's {} requests all 200: {}",
        answers.iter().filter(|(s, _)| *s == 401).count(),
        answers.iter().filter(|(s, _)| *s == 503).count(),
        player_statuses.len(),
        player_statuses.iter().all(|s| *s == 200)
    );
    for (status, code) in &answers {
        assert!(
            *status == 401 || (*status == 503 && code == "server_busy"),
            "{status} {code}"
        );
    }
    assert!(!player_statuses.is_empty());
    assert!(
        player_statuses.iter().all(|s| *s == 200),
        "{player_statuses:?}"
    );
    // 32 hashes at once need over 600 MiB; two hashing threads need about 40.
    assert!(peak < 250, "peak RSS {peak} MiB");
}

/// A name belongs to one live account, guest or registered, case-insensitively;
/// a guest who registers loses the tokens it had as a guest.
fn names_are_unique_across_guests_and_accounts(backend: Backend) {
    let server = server(backend, &[]);
    let api = server.client();
    register(&api, "Anna", "long enough");
    let r = api.post("/v1/guests", None, &json!({ "name": "anna" }));
    r.assert_problem(409, "name_taken");
    let guest = api.guest("bert");
    let r = api.post("/v1/guests", None, &json!({ "name": "BERT" }));
    r.assert_problem(409, "name_taken");
    let r = api.post(
        "/v1/accounts",
        None,
        &json!({ "name": "Bert", "password": "long enough" }),
    );
    r.assert_problem(409, "name_taken");
    // Registering under a name another guest holds is refused too.
    let cara = api.guest("cara");
    let r = api.post(
        "/v1/me/register",
        Some(&cara.token),
        &json!({ "name": "bert", "password": "long enough" }),
    );
    r.assert_problem(409, "name_taken");
    // The guest registers under its own name: the old token stops working.
    let r = api.post(
        "/v1/me/register",
        Some(&guest.token),
        &json!({ "password": "long enough" }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let fresh = r.body["access_token"].as_str().unwrap().to_owned();
    api.get("/v1/me", Some(&guest.token))
        .assert_problem(401, "unauthorized");
    assert_eq!(api.get("/v1/me", Some(&fresh)).status, 200);
    // A deleted account's name is free again.
    let dora = api.guest("dora");
    let mut req = api.http.delete(api.url("/v1/me")).bearer_auth(&dora.token);
    req = req.json(&json!({}));
    assert_eq!(Reply::from_response(req.send().unwrap()).status, 204);
    api.guest("dora");
}

/// Control and invisible format characters are refused in game names and
/// score-pad players' names (a game name with CR/LF stood on its own lines in mails).
fn names_with_line_breaks_or_format_characters_are_refused(backend: Backend) {
    let server = server(backend, &[]);
    let api = server.client();
    let anna = api.guest("anna");
    for name in [
        "Runde\r\nBcc: x@example.org",
        "tab\there",
        "\u{202E}gnalb",
        "zero\u{200B}width",
    ] {
        let r = api.post(
            "/v1/games",
            Some(&anna.token),
            &json!({ "ruleset": "6-nimmt", "players": 2, "name": name }),
        );
        r.assert_problem(422, "validation_failed");
        let r = api.post(
            "/v1/scorepads",
            Some(&anna.token),
            &json!({ "ruleset": "6-nimmt", "players": ["Anna", name] }),
        );
        r.assert_problem(422, "invalid_players");
    }
    let mine = api.get("/v1/games?mine=true", Some(&anna.token));
    assert_eq!(mine.body["items"], json!([]), "{}", mine.text);
    let r = api.post(
        "/v1/games",
        Some(&anna.token),
        &json!({ "ruleset": "6-nimmt", "players": 2, "name": "Stammtisch am Freitag – ümlaut" }),
    );
    assert_eq!(r.status, 201, "{}", r.text);
}

both!(
    a_login_flood_keeps_memory_bounded,
    parallel_wrong_passwords_pass_the_limit_no_more_often_than_it_allows,
    failures_from_one_address_never_lock_the_owner_out,
    per_address_limits_cannot_be_dodged_with_forwarded_headers,
    password_checks_behind_a_token_are_limited,
    registration_is_limited_per_address,
    over_long_credentials_are_refused_before_any_work,
    logins_without_a_hashing_slot_get_503_with_retry_after,
    names_are_unique_across_guests_and_accounts,
    names_with_line_breaks_or_format_characters_are_refused,
);
