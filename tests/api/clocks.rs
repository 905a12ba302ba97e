//! Clocks (issue 28): time controls, banks and increments, what happens at zero, pauses,
//! restarts and replicas. Every expected bank is computed from the instants the server
//! recorded (`at` of `clocks_set`, `clocks_at` of a view), never from the wall clock; the
//! tests move the server's test clock to make flags fall.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, TestServer, cards};

fn ms(instant: &Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(instant.as_str().unwrap())
        .unwrap()
        .timestamp_millis()
}

/// The `clocks_set` events of a game as `p` sees them, oldest first.
fn clocks_sets(api: &Api, p: &Player, game: &str) -> Vec<Value> {
    api.events(p, game)
        .into_iter()
        .filter(|e| e["type"] == "clocks_set")
        .map(|e| e["data"].clone())
        .collect()
}

fn of_type(api: &Api, p: &Player, game: &str, kind: &str) -> Vec<Value> {
    api.events(p, game)
        .into_iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

fn clock(snapshot: &Value, seat: usize) -> &Value {
    &snapshot["clocks"][seat]
}

fn remaining(snapshot: &Value, seat: usize) -> i64 {
    clock(snapshot, seat)["remaining_ms"].as_i64().unwrap()
}

fn running(snapshot: &Value, seat: usize) -> bool {
    clock(snapshot, seat)["running"].as_bool().unwrap()
}

/// A seat's bank at `at` (ms) by a snapshot: running clocks count down, never below zero.
fn projected(snapshot: &Value, seat: usize, at: i64) -> i64 {
    let bank = remaining(snapshot, seat);
    if running(snapshot, seat) {
        (bank - (at - ms(&snapshot["at"]))).max(0)
    } else {
        bank
    }
}

fn wait_for(api: &Api, p: &Player, game: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let view = api.view(p, game);
        if done(&view) {
            return view;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}: {view}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn live(initial: u32, increment: u32, max: Option<u32>) -> Value {
    let mut tc =
        json!({"kind": "live", "initial_seconds": initial, "increment_seconds": increment});
    if let Some(max) = max {
        tc["max_seconds"] = json!(max);
    }
    tc
}

/// Creates and starts a game of `people` with `body` (ruleset, players, time_control).
fn started(api: &Api, people: &[Player], body: &Value, bots: usize) -> String {
    let game = api.create_game(&people[0], body);
    let id = game["id"].as_str().unwrap().to_owned();
    for p in &people[1..] {
        api.join(p, &id);
    }
    for _ in 0..bots {
        api.ok(
            &people[0],
            &id,
            &json!({"type": "add_bot", "strategy": "random"}),
        );
    }
    api.ok(&people[0], &id, &json!({"type": "start"}));
    id
}

fn first_card(view: &Value) -> u64 {
    cards(&view["you"]["hand"])[0]
}

fn creating_shows_the_time_control_and_starting_runs_the_clocks(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let ann = api.guest("Ann");
    let ben = api.guest("Ben");
    let tc = live(180, 5, Some(180));
    let body = json!({"ruleset": "6-nimmt", "players": 2, "time_control": tc, "public": true});
    let created = api.create_game(&ann, &body);
    assert_eq!(
        created["time_control"],
        json!({"kind": "live", "initial_seconds": 180, "increment_seconds": 5, "max_seconds": 180, "at_zero": "bot_moves", "vacation": false})
    );
    assert!(
        created.get("clocks").is_none(),
        "no clocks before the start"
    );
    let id = created["id"].as_str().unwrap().to_owned();
    let lobby = api.get("/v1/games?status=lobby", Some(&ben.token));
    let item = lobby.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(item["time_control"], created["time_control"]);
    api.join(&ben, &id);
    let view = api.ok(&ann, &id, &json!({"type": "start"}));
    assert_eq!(view["clocks"].as_array().unwrap().len(), 2);
    let sets = clocks_sets(&api, &ann, &id);
    assert_eq!(sets.len(), 1, "{sets:?}");
    let start = &sets[0];
    for seat in 0..2 {
        assert_eq!(remaining(start, seat), 180_000);
        assert!(running(start, seat), "both choose at once");
    }
    // The view's clocks are the last clocks_set's, counted down to clocks_at.
    let at = ms(&view["clocks_at"]);
    for seat in 0..2 {
        assert_eq!(
            view["clocks"][seat]["remaining_ms"].as_i64().unwrap(),
            projected(start, seat, at)
        );
        // The flag falls when the bank is spent.
        assert_eq!(
            ms(&view["seats"][seat]["deadline_at"]),
            ms(&start["at"]) + 180_000
        );
    }
    let tcs = of_type(&api, &ben, &id, "time_control_set");
    assert_eq!(tcs.len(), 1);
    assert_eq!(tcs[0]["data"]["time_control"], created["time_control"]);
}

both!(creating_shows_the_time_control_and_starting_runs_the_clocks);

/// 6 nimmt!: both choose at once; the seat that chose stops with its bank charged and the
/// increment added (capped), the other keeps running; the third person's stays untouched
/// by the others' moves.
fn a_choice_stops_only_its_seat_and_adds_the_increment_capped(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = [api.guest("Ann"), api.guest("Ben"), api.guest("Cid")];
    let body = json!({"ruleset": "6-nimmt", "players": 3, "time_control": live(180, 5, Some(182))});
    let id = started(&api, &people, &body, 0);
    server.advance_clock(10);
    let view = api.view(&people[0], &id);
    api.ok(
        &people[0],
        &id,
        &json!({"type": "play_card", "card": first_card(&view)}),
    );
    let sets = clocks_sets(&api, &people[0], &id);
    assert_eq!(sets.len(), 2, "{sets:?}");
    let (start, after) = (&sets[0], &sets[1]);
    let at = ms(&after["at"]);
    assert!(at - ms(&start["at"]) >= 10_000);
    // Seat 0: charged, plus 5 s, at most 182 s.
    assert_eq!(
        remaining(after, 0),
        (projected(start, 0, at) + 5_000).min(182_000)
    );
    assert!(!running(after, 0));
    // Seats 1 and 2 still choose: charged alike, still running, no increment.
    for seat in 1..3 {
        assert_eq!(remaining(after, seat), projected(start, seat, at));
        assert!(running(after, seat));
    }
    // A second choice charges the seats still choosing only.
    server.advance_clock(20);
    let view = api.view(&people[1], &id);
    api.ok(
        &people[1],
        &id,
        &json!({"type": "play_card", "card": first_card(&view)}),
    );
    let sets = clocks_sets(&api, &people[0], &id);
    let (before, after) = (&sets[1], &sets[2]);
    let at = ms(&after["at"]);
    assert_eq!(
        remaining(after, 0),
        remaining(before, 0),
        "seat 0 stood still"
    );
    assert_eq!(
        remaining(after, 1),
        (projected(before, 1, at) + 5_000).min(182_000)
    );
    assert!(remaining(after, 1) < 182_000 - 25_000 + 5_000);
    assert_eq!(remaining(after, 2), projected(before, 2, at));
    assert!(running(after, 2) && !running(after, 1) && !running(after, 0));
}

both!(a_choice_stops_only_its_seat_and_adds_the_increment_capped);

/// `bot_moves`: at zero the server moves for the seat (cause `clock`), the seat's bank
/// becomes the increment, and the run-out is counted.
fn at_zero_the_server_moves_for_the_seat(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = [api.guest("Ann"), api.guest("Ben")];
    let body = json!({"ruleset": "6-nimmt", "players": 2, "time_control": live(30, 7, None)});
    let id = started(&api, &people, &body, 0);
    let view = api.view(&people[0], &id);
    api.ok(
        &people[0],
        &id,
        &json!({"type": "play_card", "card": first_card(&view)}),
    );
    server.advance_clock(40);
    wait_for(&api, &people[0], &id, "the clock move", |v| {
        v["round"] == 1 && cards(&v["you"]["hand"]).len() == 9 && v["seats"][1]["hand_size"] == 9
    });
    let ran_out = of_type(&api, &people[0], &id, "clock_ran_out");
    assert_eq!(ran_out.len(), 1, "{ran_out:?}");
    assert_eq!(ran_out[0]["data"], json!({"seat": 1, "timeouts": 1}));
    let moved: Vec<Value> = api
        .events(&people[1], &id)
        .into_iter()
        .filter(|e| e["data"]["cause"] == "clock")
        .collect();
    assert!(
        moved
            .iter()
            .any(|e| e["type"] == "card_selected" && e["data"]["seat"] == 1),
        "{moved:?}"
    );
    let last = clocks_sets(&api, &people[0], &id).pop().unwrap();
    assert_eq!(
        remaining(&last, 1),
        7_000,
        "the bank after a run-out is the increment"
    );
    // The clocks that run are those of the seats asked to act now.
    let view = api.view(&people[0], &id);
    for seat in 0..2u64 {
        let asked = view["awaiting"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["seat"] == seat);
        assert_eq!(running(&last, seat as usize), asked, "{view}");
    }
}

both!(at_zero_the_server_moves_for_the_seat);
