//! Faults against the real binary.
//!
//! - `kill -9` of the server under concurrent load (SQLite and PostgreSQL): clients play
//!   2-player 6-nimmt games (two people, or one person and a bot) until the server is
//!   killed; after a restart every acknowledged (200) command's effect is in the event log,
//!   and every game is played to its end.
//! - A restart of a PostgreSQL cluster the test starts itself (`initdb` into a temporary
//!   directory, its own port and socket directory; never the shared cluster): while it is
//!   down, commands and `/readyz` are answered `503 database_unavailable` with `Retry-After`
//!   quickly (never a 500, never a hang); once it is back, commands succeed again without a
//!   server restart and nothing acknowledged is lost.
//!
//! Load is bounded (four clients, 127.0.0.1 only) and so is time; the figures each test
//! observes (commands acknowledged, time to a 503, time to recovery) are printed (see them
//! with `--nocapture`), never asserted beyond generous limits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::both;
use crate::clusters::PgCluster;
use crate::support::{
    Api, Backend, Player, Reply, TestDb, TestServer, play_randomly, start_game, wait_until,
};

/// A command the server acknowledged with 200.
#[derive(Clone, Debug)]
struct Ack {
    game: String,
    player: Player,
    command: Value,
    /// The game's version in the answer.
    version: i64,
}

/// A game and the people who play it (one person: a bot has the other seat).
#[derive(Clone)]
struct Seated {
    game: String,
    people: Vec<Player>,
}

/// What the clients saw: acknowledged commands and the status of every other answer.
#[derive(Default)]
struct Seen {
    acks: Vec<Ack>,
    /// Status → count, for answers other than 200 (with an example body).
    other: HashMap<u16, (usize, String)>,
    /// Requests the server never answered (it was killed, or refused the connection).
    unanswered: usize,
}

/// The rules of a game the clients play: 2 seats, 5 rounds (about 55 moves a person).
fn two_player_game() -> Value {
    json!({ "ruleset": "6-nimmt", "players": 2, "options": { "end": { "rounds": 5 } } })
}

/// Two games of two people and two of one person against a bot.
fn seat_games(api: &Api, tag: &str) -> Vec<Seated> {
    let mut games = Vec::new();
    for i in 0..2 {
        let a = api.guest(&format!("{tag}a{i}"));
        let b = api.guest(&format!("{tag}b{i}"));
        let people = vec![a, b];
        let game = start_game(api, &people, &two_player_game(), &[]);
        games.push(Seated { game, people });
    }
    for i in 0..2 {
        let solo = api.guest(&format!("{tag}s{i}"));
        let people = vec![solo];
        let game = start_game(api, &people, &two_player_game(), &["random"]);
        games.push(Seated { game, people });
    }
    games
}

/// Sends a request; `None` when the server does not answer.
fn send(req: reqwest::blocking::RequestBuilder) -> Option<Reply> {
    req.send().ok().map(Reply::from_response)
}

/// Plays `seated` with random legal moves until `stop` is set or the game ends; records
/// what the server answered. Never panics on a failed request: the server may be gone.
fn play_until_stopped(
    base: &str,
    seated: &Seated,
    stop: &AtomicBool,
    seen: &Mutex<Seen>,
    mut rng: u64,
) {
    let http = Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let game = &seated.game;
    while !stop.load(Ordering::SeqCst) {
        for p in &seated.people {
            let view = send(
                http.get(format!("{base}/v1/games/{game}"))
                    .bearer_auth(&p.token),
            );
            let Some(view) = view else {
                seen.lock().unwrap().unanswered += 1;
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            if view.status != 200 {
                record_other(seen, &view);
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            if view.body["status"] == "finished" {
                return;
            }
            let moves: Vec<&Value> = view.body["legal"]
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
            let command = moves[usize::try_from(rng % moves.len() as u64).unwrap()].clone();
            let answer = send(
                http.post(format!("{base}/v1/games/{game}/commands"))
                    .bearer_auth(&p.token)
                    .json(&command),
            );
            match answer {
                None => seen.lock().unwrap().unanswered += 1,
                Some(r) if r.status == 200 => seen.lock().unwrap().acks.push(Ack {
                    game: game.clone(),
                    player: p.clone(),
                    command,
                    version: r.body["version"].as_i64().unwrap(),
                }),
                Some(r) => {
                    record_other(seen, &r);
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
    }
}

fn record_other(seen: &Mutex<Seen>, r: &Reply) {
    let mut seen = seen.lock().unwrap();
    let entry = seen
        .other
        .entry(r.status)
        .or_insert_with(|| (0, r.text.clone()));
    entry.0 += 1;
}

/// Starts a client thread per game against `base`.
fn start_clients(
    base: &str,
    games: &[Seated],
    stop: &Arc<AtomicBool>,
    seen: &Arc<Mutex<Seen>>,
) -> Vec<std::thread::JoinHandle<()>> {
    games
        .iter()
        .enumerate()
        .map(|(i, seated)| {
            let (base, seated) = (base.to_owned(), seated.clone());
            let (stop, seen) = (Arc::clone(stop), Arc::clone(seen));
            std::thread::spawn(move || {
                play_until_stopped(&base, &seated, &stop, &seen, 0x9E37_79B9 + i as u64);
            })
        })
        .collect()
}

/// Waits until the clients together have `n` acknowledged commands (at most `secs`).
fn wait_for_acks(seen: &Mutex<Seen>, n: usize, secs: u64) {
    let start = Instant::now();
    loop {
        {
            let seen = seen.lock().unwrap();
            if seen.acks.len() >= n {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "only {} commands acknowledged in {secs} s; other answers: {:?}",
                seen.acks.len(),
                seen.other
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every acknowledged command's effect is in its game's event log, as its player sees it:
/// the game has at least the version the command answered with, each `play_card` left a `card_selected` of that card
/// for the player's seat and each `take_row` a chosen `card_placed` into that row (counted,
/// since a card comes back in a later round).
fn assert_acknowledged_commands_present(api: &Api, acks: &[Ack]) {
    let mut by_player: HashMap<(String, String), Vec<&Ack>> = HashMap::new();
    for ack in acks {
        by_player
            .entry((ack.game.clone(), ack.player.id.clone()))
            .or_default()
            .push(ack);
    }
    for ((game, _), acks) in by_player {
        let player = &acks[0].player;
        let view = api.view(player, &game);
        let seat = view["you"]["seat"].as_u64().unwrap();
        // The game's version counts every event, also those this player may not see.
        let last = view["version"].as_i64().unwrap();
        let events = api.events(player, &game);
        let count = |wanted: &dyn Fn(&Value) -> bool| events.iter().filter(|e| wanted(e)).count();
        let mut expected: HashMap<String, usize> = HashMap::new();
        for ack in &acks {
            assert!(
                ack.version <= last,
                "{game}: a command acknowledged at version {} but the game is at {last}",
                ack.version
            );
            *expected.entry(ack.command.to_string()).or_default() += 1;
        }
        for (command, n) in expected {
            let command: Value = serde_json::from_str(&command).unwrap();
            let found = match command["type"].as_str().unwrap() {
                "play_card" => count(&|e| {
                    e["type"] == "card_selected"
                        && e["data"]["seat"] == seat
                        && e["data"]["card"] == command["card"]
                }),
                "take_row" => count(&|e| {
                    e["type"] == "card_placed"
                        && e["data"]["seat"] == seat
                        && e["data"]["chosen"] == true
                        && e["data"]["row"] == command["row"]
                }),
                other => panic!("the clients do not send {other}"),
            };
            assert!(
                found >= n,
                "{game}: {command} was acknowledged {n} times, its effect is in the log {found} times"
            );
        }
    }
}

/// Plays every game to its end through `api`.
fn finish_all(api: &Api, games: &[Seated]) {
    for (i, seated) in games.iter().enumerate() {
        let end = play_randomly(api, &seated.people, &seated.game, 7 + i as u64);
        assert_eq!(end["status"], "finished");
        assert!(end["winners"].as_array().is_some_and(|w| !w.is_empty()));
    }
}

/// `kill -9` of the server while four clients play: nothing acknowledged is lost, every
/// game can be played to its end after a restart.
fn kill_nine_under_load_loses_no_acknowledged_command(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let games = seat_games(&api, "k");
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let clients = start_clients(&server.base, &games, &stop, &seen);
    wait_for_acks(&seen, 150, 120);
    // `restart` kills the process with SIGKILL while the clients are sending, then starts a
    // new one on the same database.
    let server = server.restart();
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.join().unwrap();
    }
    let seen = seen.lock().unwrap();
    assert!(
        seen.other.keys().all(|s| *s < 500),
        "server errors before the kill: {:?}",
        seen.other
    );
    let api = server.client();
    assert_acknowledged_commands_present(&api, &seen.acks);
    eprintln!(
        "kill -9 on {backend:?}: {} commands acknowledged before the kill, all present after \
         the restart; {} requests unanswered",
        seen.acks.len(),
        seen.unanswered
    );
    finish_all(&api, &games);
}

/// A log line without its colour codes.
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A request that must be answered `503 database_unavailable` with `Retry-After`, within
/// `limit`; returns how long it took.
fn unavailable_within(what: &str, limit: Duration, request: impl FnOnce() -> Reply) -> Duration {
    let start = Instant::now();
    let r = request();
    let took = start.elapsed();
    r.assert_problem(503, "database_unavailable");
    assert!(r.header("retry-after").is_some(), "{what}: no Retry-After");
    assert!(took < limit, "{what}: answered after {took:?}");
    took
}

/// Stops and starts a PostgreSQL cluster of the test's own under a running server: requests
/// fail fast with 503 while it is down; afterwards commands succeed again without a server
/// restart, and nothing acknowledged is lost.
#[test]
fn a_postgres_restart_is_survived_without_restarting_the_server() {
    let cluster = PgCluster::new();
    let server = TestServer::start_with_env(
        TestDb::at(&cluster.url()),
        Backend::Postgres,
        &[("DATABASE_POOL_TIMEOUT_MS", "2000")],
    );
    let api = server.client();
    assert_eq!(api.get("/readyz", None).status, 200);
    let games = seat_games(&api, "p");
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let clients = start_clients(&server.base, &games, &stop, &seen);
    wait_for_acks(&seen, 40, 120);

    // Stop PostgreSQL while the clients play (their queries break mid-way or find no
    // database).
    cluster.pg_ctl("stop");
    let down = Instant::now();
    let acks_before = seen.lock().unwrap().acks.len();
    let limit = Duration::from_secs(5);
    let ready = unavailable_within("/readyz", Duration::from_secs(3), || {
        api.get("/readyz", None)
    });
    let seated = &games[0];
    let card = json!({ "type": "play_card", "card": 1 });
    let command = unavailable_within("a command", limit, || {
        api.command(&seated.people[0], &seated.game, &card)
    });
    let read = unavailable_within("a view", limit, || {
        api.get(
            &format!("/v1/games/{}", seated.game),
            Some(&seated.people[0].token),
        )
    });
    // Keep it down a little longer under load: until each client has been refused a few
    // more times.
    let refused = |seen: &Seen| seen.other.get(&503).map_or(0, |o| o.0);
    let refused_before = refused(&seen.lock().unwrap());
    wait_until(
        "more refusals while PostgreSQL is down",
        Duration::from_secs(30),
        || refused(&seen.lock().unwrap()) >= refused_before + 4 * games.len(),
    );
    let outage = down.elapsed();

    cluster.pg_ctl("start");
    let up = Instant::now();
    let ready_again = loop {
        if api.get("/readyz", None).status == 200 {
            break up.elapsed();
        }
        assert!(
            up.elapsed() < Duration::from_secs(30),
            "/readyz never recovered"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let acks_at_restart = seen.lock().unwrap().acks.len();
    let acked_again = loop {
        if seen.lock().unwrap().acks.len() > acks_at_restart + 5 {
            break up.elapsed();
        }
        assert!(
            up.elapsed() < Duration::from_secs(60),
            "no command succeeded after PostgreSQL came back: {:?}",
            seen.lock().unwrap().other
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.join().unwrap();
    }
    let seen = seen.lock().unwrap();
    // Only successes and 503s (and no request went unanswered: the server never went away).
    assert!(
        seen.other.keys().all(|s| *s == 503),
        "answers other than 200 and 503: {:?}",
        seen.other
    );
    if let Some((_, body)) = seen.other.get(&503) {
        let body: Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["code"], "database_unavailable", "{body}");
    }
    assert_eq!(seen.unanswered, 0);
    assert_acknowledged_commands_present(&api, &seen.acks);
    finish_all(&api, &games);
    let log = server.log_text();
    assert!(
        !log.contains("panicked") && !log.contains("internal error"),
        "the server log has a panic or an internal error:\n{log}"
    );
    // Why requests were refused, as the server logged it (one warning each, no backtrace).
    let mut causes: Vec<String> = log
        .lines()
        .map(strip_ansi)
        .filter(|l| l.contains("database unavailable"))
        .filter_map(|l| l.split("cause=").nth(1).map(str::to_owned))
        .map(|c| c.chars().take(70).collect())
        .collect();
    causes.sort_unstable();
    causes.dedup();
    eprintln!(
        "PostgreSQL restart: {acks_before} commands acknowledged before the stop, {} in all, \
         all present; down {outage:.1?}; 503 after {ready:.2?} (/readyz), {command:.2?} \
         (command), {read:.2?} (view); {} client answers were 503; after the start /readyz \
         was ready in {ready_again:.2?} and commands succeeded again within {acked_again:.2?}; \
         causes logged: {causes:#?}",
        seen.acks.len(),
        seen.other.get(&503).map_or(0, |o| o.0),
    );
}

both!(kill_nine_under_load_loses_no_acknowledged_command);
