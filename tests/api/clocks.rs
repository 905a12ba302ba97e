//! Clocks (issue 28): time controls, banks and increments, what happens at zero, pauses,
//! restarts and replicas. Every expected bank is computed from the instants the server
//! recorded (`at` of `clocks_set`, `clocks_at` of a view), never from the wall clock; the
//! tests move the server's test clock to make flags fall.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::both;
use crate::support::{
    Api, Backend, EventStream, Player, TestServer, after_sweep, cards, wait_until,
};

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
    after_sweep(&api, &people[0], &id, "the clock move", |v| {
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

/// X nimmt! at zero: the server selects a card for the seat that ran out (cause `clock`), its
/// card stays hidden from the others, and the seats that had chosen do not run meanwhile.
fn x_nimmt_at_zero_the_server_selects_for_the_seat(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = [api.guest("Ann"), api.guest("Ben"), api.guest("Cleo")];
    let body = json!({"ruleset": "x-nimmt", "players": 3, "options": {"deals": 1},
                      "time_control": live(30, 5, None)});
    let id = started(&api, &people, &body, 0);
    for p in &people[..2] {
        let view = api.view(p, &id);
        api.ok(
            p,
            &id,
            &json!({"type": "play_card", "card": first_card(&view)}),
        );
    }
    let before = clocks_sets(&api, &people[0], &id).pop().unwrap();
    assert!(
        !running(&before, 0) && !running(&before, 1) && running(&before, 2),
        "{before}"
    );
    // (Not the pass's count: the sweeper's own thread may have made the move first.)
    server.advance_clock(40);
    let moved: Vec<Value> = api
        .events(&people[2], &id)
        .into_iter()
        .filter(|e| e["data"]["cause"] == "clock")
        .collect();
    assert!(
        moved
            .iter()
            .any(|e| e["type"] == "card_selected" && e["data"]["seat"] == 2),
        "{moved:?}"
    );
    let ran_out = of_type(&api, &people[0], &id, "clock_ran_out");
    assert_eq!(ran_out.len(), 1, "{ran_out:?}");
    assert_eq!(ran_out[0]["data"], json!({"seat": 2, "timeouts": 1}));
    // The others never read the server's face-down selection for Cleo, only that she chose.
    let ann_reads = api.events(&people[0], &id);
    assert!(
        !ann_reads
            .iter()
            .any(|e| e["type"] == "card_selected" && e["data"]["seat"] == 2),
        "a hidden selection leaked: {ann_reads:?}"
    );
    assert!(
        ann_reads
            .iter()
            .any(|e| e["type"] == "selection_made" && e["data"]["seat"] == 2)
    );
}

both!(x_nimmt_at_zero_the_server_selects_for_the_seat);

/// Sends the first game move (no resign, no clock command) of every person asked to act.
fn move_people(api: &Api, people: &[Player], game: &str) {
    for p in people {
        let view = api.view(p, game);
        let Some(cmd) = view["legal"].as_array().unwrap().iter().find(|c| {
            [
                "play_card",
                "take_row",
                "keep_card",
                "draft_card",
                "pass",
                "take",
            ]
            .contains(&c["type"].as_str().unwrap())
        }) else {
            continue;
        };
        let r = api.command(p, game, cmd);
        // A bot's move for a seat out of time may come first: then the move is stale.
        assert!(r.status == 200 || r.status == 422, "{}", r.text);
    }
}

fn timeouts_of(api: &Api, p: &Player, game: &str, seat: u64) -> Vec<Value> {
    of_type(api, p, game, "clock_ran_out")
        .into_iter()
        .filter(|e| e["data"]["seat"] == seat)
        .collect()
}

/// The third run-out hands the seat to a bot (`seat_handed_to_bot`, cause `timeouts`);
/// the view shows it resigned and lost on time, and ratings place it last.
fn three_run_outs_hand_the_seat_to_a_bot_and_it_places_last(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = [api.account("anna"), api.account("ben"), api.account("cara")];
    let body = json!({"ruleset": "6-nimmt", "players": 3, "public": true,
                      "options": {"end": {"rounds": 1}}, "time_control": live(30, 0, None)});
    let id = started(&api, &people, &body, 0);
    let playing = &people[..2];
    let start = Instant::now();
    loop {
        let view = api.view(&people[0], &id);
        if view["seats"][2]["lost_on_time"] == true {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{view}");
        move_people(&api, playing, &id);
        // Seat 2's first run-out needs the clock past its 30 s; the sweeper's pass has
        // written it when `advance_clock` returns, so the clock is not moved again (which
        // would run out the playing seats' clocks too). After it, seat 2's bank is the
        // increment, 0, so a pass without moving the clock runs it out whenever it is
        // asked to act.
        let first = timeouts_of(&api, &people[0], &id, 2).is_empty();
        server.advance_clock(if first { 31 } else { 0 });
        assert!(
            !timeouts_of(&api, &people[0], &id, 2).is_empty(),
            "seat 2's first run-out"
        );
    }
    let outs = timeouts_of(&api, &people[0], &id, 2);
    let counts: Vec<&Value> = outs.iter().map(|e| &e["data"]["timeouts"]).collect();
    assert_eq!(counts, [&json!(1), &json!(2), &json!(3)]);
    let handed = of_type(&api, &people[0], &id, "seat_handed_to_bot");
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0]["data"], json!({"seat": 2, "cause": "timeouts"}));
    let view = api.view(&people[2], &id);
    assert_eq!(view["seats"][2]["resigned"], true);
    assert!(
        !view["legal"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "play_card"),
        "the seat is the bot's now"
    );
    // Finish; the bot plays seat 2 and the ratings place it last.
    let start = Instant::now();
    while api.view(&people[0], &id)["status"] != "finished" {
        assert!(start.elapsed() < Duration::from_secs(60));
        move_people(&api, playing, &id);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let item = loop {
        let r = api.get(
            &format!("/v1/players/{}/games", people[2].id),
            Some(&people[2].token),
        );
        if let Some(item) = r.body["items"].as_array().and_then(|a| a.first()) {
            break item.clone();
        }
        assert!(Instant::now() < deadline, "{}", r.text);
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(item["place"], 3, "{item}");
    assert_eq!(item["won"], false);
}

/// Nimm oder schieb: only the active player's clock runs; at zero the server acts for it.
fn nimm_oder_schieb_at_zero_the_server_acts_for_the_active_player(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = [api.guest("Ann"), api.guest("Ben"), api.guest("Cid")];
    let body =
        json!({"ruleset": "nimm-oder-schieb", "players": 3, "time_control": live(30, 3, None)});
    let id = started(&api, &people, &body, 0);
    let view = api.view(&people[0], &id);
    let active = view["awaiting"][0]["seat"].as_u64().unwrap();
    let first = clocks_sets(&api, &people[0], &id).pop().unwrap();
    for seat in 0..3u64 {
        assert_eq!(running(&first, seat as usize), seat == active);
    }
    server.advance_clock(31);
    after_sweep(&api, &people[0], &id, "the clock move", |_| {
        !timeouts_of(&api, &people[0], &id, active).is_empty()
    });
    let acted: Vec<Value> = api
        .events(&people[0], &id)
        .into_iter()
        .filter(|e| e["data"]["cause"] == "clock")
        .collect();
    assert!(!acted.is_empty());
    assert!(
        acted.iter().all(|e| e["data"]["seat"] == active
            && ["passed", "card_taken"].contains(&e["type"].as_str().unwrap())),
        "{acted:?}"
    );
    let last = clocks_sets(&api, &people[0], &id).pop().unwrap();
    assert_eq!(remaining(&last, active as usize), 3_000);
}

/// 11 nimmt!, `others_decide`: the seat out of time waits flagged; it may still move (its
/// bank is then the increment); the others may hand it to a bot.
fn others_decide_flags_the_seat_and_the_others_may_hand_it_to_a_bot(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = [api.guest("Ann"), api.guest("Ben")];
    let tc = json!({"kind": "live", "initial_seconds": 30, "increment_seconds": 4, "at_zero": "others_decide"});
    let body = json!({"ruleset": "11-nimmt", "players": 2, "time_control": tc});
    let id = started(&api, &people, &body, 0);
    let flagged = |v: &Value| v["clocks"][1]["flagged"] == true;
    // Ann keeps moving, Ben lets his clock run out.
    move_people(&api, &people[..1], &id);
    server.advance_clock(31);
    let view = after_sweep(&api, &people[0], &id, "ben flagged", flagged);
    assert_eq!(view["clocks"][1]["running"], false);
    assert_eq!(view["clocks"][1]["remaining_ms"], 0);
    assert!(
        view["seats"][1]["deadline_at"].is_null(),
        "a flagged seat has no deadline"
    );
    let flag = clocks_sets(&api, &people[0], &id).pop().unwrap();
    assert_eq!(
        clock(&flag, 1),
        &json!({"seat": 1, "remaining_ms": 0, "running": false, "flagged": true}),
        "the stream shows the flag"
    );
    assert!(
        view["legal"]
            .as_array()
            .unwrap()
            .contains(&json!({"type": "hand_to_bot", "seat": 1}))
    );
    // Ben may not hand Ann (not flagged) nor himself; nothing changes.
    let version = view["version"].clone();
    for seat in [0, 1] {
        api.command(
            &people[1],
            &id,
            &json!({"type": "hand_to_bot", "seat": seat}),
        )
        .assert_problem(422, "not_flagged");
    }
    assert_eq!(api.view(&people[0], &id)["version"], version);
    // Ben moves after all: unflagged, his bank is the increment.
    move_people(&api, &people[1..], &id);
    let view = api.view(&people[0], &id);
    assert_eq!(view["clocks"][1]["flagged"], false);
    let last = clocks_sets(&api, &people[0], &id).pop().unwrap();
    assert!(!clock(&last, 1)["flagged"].as_bool().unwrap());
    // Out of time again: Ann hands his seat to a bot.
    move_people(&api, &people[..1], &id);
    server.advance_clock(31);
    after_sweep(&api, &people[0], &id, "ben flagged again", flagged);
    api.ok(&people[0], &id, &json!({"type": "hand_to_bot", "seat": 1}));
    let handed = of_type(&api, &people[0], &id, "seat_handed_to_bot");
    assert_eq!(handed[0]["data"], json!({"seat": 1, "cause": "others"}));
    let view = api.view(&people[1], &id);
    assert_eq!(view["seats"][1]["resigned"], true);
    assert_eq!(view["seats"][1]["lost_on_time"], true);
    assert_eq!(timeouts_of(&api, &people[0], &id, 1).len(), 2);
}

/// A pause by agreement in a correspondence game stops every clock until a seat resumes;
/// live games cannot pause.
fn pause_by_agreement_stops_the_clocks(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = [api.guest("Ann"), api.guest("Ben")];
    let tc = json!({"kind": "correspondence", "initial_seconds": 3600, "increment_seconds": 3600});
    let id = started(
        &api,
        &people,
        &json!({"ruleset": "6-nimmt", "players": 2, "time_control": tc}),
        0,
    );
    let view = api.ok(&people[0], &id, &json!({"type": "propose_pause"}));
    assert_eq!(
        view["pause"],
        json!({"proposed_by": 0, "accepted": [0], "paused": false})
    );
    api.command(&people[0], &id, &json!({"type": "propose_pause"}))
        .assert_problem(422, "pause_already_proposed");
    api.command(&people[1], &id, &json!({"type": "resume"}))
        .assert_problem(422, "not_paused");
    let view = api.ok(&people[1], &id, &json!({"type": "decline_pause"}));
    assert!(view.get("pause").is_none());
    api.ok(&people[1], &id, &json!({"type": "propose_pause"}));
    let view = api.ok(&people[0], &id, &json!({"type": "accept_pause"}));
    assert_eq!(view["pause"]["paused"], true);
    let paused = clocks_sets(&api, &people[0], &id).pop().unwrap();
    assert_eq!(paused["paused"], true);
    assert!(!running(&paused, 0) && !running(&paused, 1));
    assert!(view["seats"][0]["deadline_at"].is_null());
    // Hours pass, more than the banks hold; nothing runs out, the banks stand still.
    server.advance_clock(2 * 3600);
    let view = api.view(&people[0], &id);
    for seat in 0..2 {
        assert_eq!(
            view["clocks"][seat]["remaining_ms"].as_i64().unwrap(),
            remaining(&paused, seat)
        );
    }
    assert!(timeouts_of(&api, &people[0], &id, 0).is_empty());
    // Moves stay allowed while paused.
    move_people(&api, &people[..1], &id);
    let view = api.ok(&people[1], &id, &json!({"type": "resume"}));
    assert!(view.get("pause").is_none());
    let resumed = clocks_sets(&api, &people[0], &id).pop().unwrap();
    assert_eq!(resumed["paused"], false);
    assert!(running(&resumed, 1));
    assert_eq!(
        of_type(&api, &people[0], &id, "clocks_resumed")[0]["data"],
        json!({"seat": 1})
    );

    // Live games cannot pause; nothing changes.
    let live_id = started(
        &api,
        &people,
        &json!({"ruleset": "6-nimmt", "players": 2, "time_control": live(60, 0, None)}),
        0,
    );
    let before = api.view(&people[0], &live_id)["version"].clone();
    api.command(&people[0], &live_id, &json!({"type": "propose_pause"}))
        .assert_problem(422, "pause_not_allowed");
    assert_eq!(api.view(&people[0], &live_id)["version"], before);
    // Nor games without clocks.
    let plain = started(
        &api,
        &people,
        &json!({"ruleset": "6-nimmt", "players": 2}),
        0,
    );
    api.command(&people[0], &plain, &json!({"type": "propose_pause"}))
        .assert_problem(422, "no_time_control");
}

/// Bad time controls and a time control beside move deadlines are refused; no game is made.
fn bad_time_controls_are_refused(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let ann = api.guest("Ann");
    for tc in [
        json!({"kind": "live", "initial_seconds": 10}),
        json!({"kind": "live", "initial_seconds": 180, "increment_seconds": 9999}),
        json!({"kind": "live", "initial_seconds": 180, "max_seconds": 60}),
        json!({"kind": "live", "initial_seconds": 180, "vacation": true}),
        json!({"kind": "correspondence", "initial_seconds": 60}),
        json!({"kind": "sudden", "initial_seconds": 180}),
        json!({"kind": "live"}),
        json!({"kind": "live", "initial_seconds": -5}),
        json!({"kind": "live", "initial_seconds": 180, "at_zero": "nobody"}),
        json!({"kind": "live", "initial_seconds": 180, "extra": true}),
        json!("3+2"),
    ] {
        let r = api.post(
            "/v1/games",
            Some(&ann.token),
            &json!({"ruleset": "6-nimmt", "players": 2, "time_control": tc}),
        );
        r.assert_problem(422, "validation_failed");
    }
    let r = api.post(
        "/v1/games",
        Some(&ann.token),
        &json!({"ruleset": "6-nimmt", "players": 2, "move_deadline_seconds": 60,
                "time_control": live(180, 2, None)}),
    );
    r.assert_problem(422, "validation_failed");
    let mine = api.get("/v1/games?mine=true", Some(&ann.token));
    assert_eq!(
        mine.body["items"].as_array().unwrap().len(),
        0,
        "{}",
        mine.text
    );
}

both!(
    three_run_outs_hand_the_seat_to_a_bot_and_it_places_last,
    nimm_oder_schieb_at_zero_the_server_acts_for_the_active_player,
    others_decide_flags_the_seat_and_the_others_may_hand_it_to_a_bot,
    pause_by_agreement_stops_the_clocks,
    bad_time_controls_are_refused,
);

/// The view's clocks are the last `clocks_set` counted down to the view's `clocks_at`.
fn assert_view_matches_log(api: &Api, p: &Player, game: &str) -> Value {
    let view = api.view(p, game);
    let last = clocks_sets(api, p, game).pop().unwrap();
    let at = ms(&view["clocks_at"]);
    assert!(at >= ms(&last["at"]));
    for seat in 0..last["clocks"].as_array().unwrap().len() {
        assert_eq!(
            view["clocks"][seat]["remaining_ms"].as_i64().unwrap(),
            projected(&last, seat, at),
            "seat {seat}: {view}"
        );
        assert_eq!(
            view["clocks"][seat]["running"],
            clock(&last, seat)["running"]
        );
    }
    view
}

/// A restart mid-clock: the new process reads the same banks from the log and counts on
/// from the same instants; the flag still falls on time.
fn a_restart_keeps_the_remaining_times(backend: Backend) {
    let mut server = TestServer::start(backend);
    let api = server.client();
    let people = [api.guest("Ann"), api.guest("Ben")];
    let body = json!({"ruleset": "6-nimmt", "players": 2, "time_control": live(60, 2, None)});
    let id = started(&api, &people, &body, 0);
    let view = api.view(&people[0], &id);
    api.ok(
        &people[0],
        &id,
        &json!({"type": "play_card", "card": first_card(&view)}),
    );
    let before = clocks_sets(&api, &people[0], &id);
    assert_view_matches_log(&api, &people[0], &id);
    assert!(server.terminate());
    server = server.restart();
    let api = server.client();
    assert_eq!(
        clocks_sets(&api, &people[0], &id),
        before,
        "the log is the truth"
    );
    let view = assert_view_matches_log(&api, &people[1], &id);
    let flag = ms(&before[1]["at"]) + remaining(&before[1], 1);
    assert_eq!(ms(&view["seats"][1]["deadline_at"]), flag);
    // The restarted server's own clock makes the flag fall.
    server.advance_clock(61);
    after_sweep(&api, &people[0], &id, "the run-out after restart", |_| {
        timeouts_of(&api, &people[0], &id, 1).len() == 1
    });
}

/// A live stream carries every `clocks_set` (public), so a client ticks without polling;
/// neither the stream nor the clocks reveal a card another seat chose.
fn streams_and_views_carry_the_clocks_and_nothing_hidden(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = [api.guest("Ann"), api.guest("Ben")];
    let body = json!({"ruleset": "6-nimmt", "players": 2, "public": true, "time_control": live(60, 2, None)});
    let id = started(&api, &people, &body, 0);
    let watcher = api.guest("Watcher");
    let path = format!("/v1/games/{id}/stream");
    let mut stream = EventStream::open(
        &api.base,
        &path,
        &people[1].token,
        None,
        Duration::from_secs(20),
    );
    let view = api.view(&people[0], &id);
    let card = first_card(&view);
    api.ok(&people[0], &id, &json!({"type": "play_card", "card": card}));
    let mut seen: Vec<Value> = Vec::new();
    let start = Instant::now();
    while seen.iter().filter(|f| f["type"] == "clocks_set").count() < 2 {
        assert!(start.elapsed() < Duration::from_secs(20), "{seen:?}");
        if let Some(frame) = stream.next_event() {
            seen.push(frame.data);
        }
    }
    let text = serde_json::to_string(&seen).unwrap();
    assert!(
        !seen
            .iter()
            .any(|e| e["type"] == "card_selected" && e["data"]["seat"] == 0),
        "Ann's card reached Ben: {text}"
    );
    // The clocks say who has chosen (public anyway) and nothing else.
    for e in seen.iter().filter(|e| e["type"] == "clocks_set") {
        let mut keys: Vec<&String> = e["data"].as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["at", "clocks", "paused"]);
        for c in e["data"]["clocks"].as_array().unwrap() {
            let mut keys: Vec<&String> = c.as_object().unwrap().keys().collect();
            keys.sort();
            assert_eq!(keys, ["flagged", "remaining_ms", "running", "seat"]);
        }
    }
    // Ben, a spectator and Ann see the same clocks; only Ann sees her card.
    let ann = api.view(&people[0], &id);
    let ben = api.view(&people[1], &id);
    let spectator = api.view(&watcher, &id);
    let last = clocks_sets(&api, &watcher, &id).pop().unwrap();
    for v in [&ann, &ben, &spectator] {
        for seat in 0..2 {
            assert_eq!(
                v["clocks"][seat]["remaining_ms"].as_i64().unwrap(),
                projected(&last, seat, ms(&v["clocks_at"]))
            );
        }
    }
    assert_eq!(ann["you"]["selected"], card);
    assert!(ben["you"]["selected"].is_null());
    assert!(spectator["you"].is_null());
    let spectator_events = serde_json::to_string(&api.events(&watcher, &id)).unwrap();
    assert!(!spectator_events.contains("card_selected"));
    assert!(!spectator_events.contains("hand_dealt"));
}

both!(
    a_restart_keeps_the_remaining_times,
    streams_and_views_carry_the_clocks_and_nothing_hidden,
);

/// Two replicas on one PostgreSQL database agree on the remaining times, and a flag that
/// falls on both replicas runs out once.
#[test]
fn two_replicas_agree_on_the_clocks() {
    let server = TestServer::start(Backend::Postgres);
    let replica = server.replica(&[]);
    let api = server.client();
    let other = replica.client();
    let people = [api.guest("Ann"), api.guest("Ben")];
    let body = json!({"ruleset": "6-nimmt", "players": 2, "time_control": live(30, 60, None)});
    let id = started(&api, &people, &body, 0);
    let view = other.view(&people[0], &id);
    other.ok(
        &people[0],
        &id,
        &json!({"type": "play_card", "card": first_card(&view)}),
    );
    replicas_agree(&api, &other, &people[0], &id);
    assert_view_matches_log(&api, &people[1], &id);
    assert_view_matches_log(&other, &people[1], &id);
    // Both replicas' clocks pass Ben's flag.
    // Each answers once its own sweeper's pass has acted, so both passes have seen the
    // flag fall when the second answers: one of them moved for Ben, the other found
    // nothing left to do.
    let mut moves = 0;
    for base in [&api, &other] {
        let r = base.post("/test/clock", None, &json!({"advance_seconds": 31}));
        assert_eq!(r.status, 200, "{}", r.text);
        moves += r.body["swept"]["deadline_moves"].as_u64().unwrap();
    }
    // (The first replica's own thread may have made the move before its answer's pass.)
    assert!(moves <= 1, "both passes moved: {moves}");
    let outs = timeouts_of(&other, &people[0], &id, 1);
    assert_eq!(outs.len(), 1, "ran out once: {outs:?}");
    replicas_agree(&api, &other, &people[1], &id);
}

/// Both replicas read the same `clocks_set` events. The two reads are two requests, so a
/// write landing between them (a sweeper's run-out, say) can make them differ for a moment:
/// read again, a bounded number of times, until two reads taken back to back agree.
fn replicas_agree(api: &Api, other: &Api, p: &Player, game: &str) {
    wait_until(
        "the replicas to agree on the clocks",
        Duration::from_secs(30),
        || clocks_sets(api, p, game) == clocks_sets(other, p, game),
    );
}

/// A seat that resigns stops its clock; a rematch keeps the time control.
fn resigning_stops_the_clock_and_a_rematch_keeps_the_time_control(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = [api.guest("Ann"), api.guest("Ben")];
    let tc = json!({"kind": "correspondence", "initial_seconds": 86400, "increment_seconds": 86400, "max_seconds": 259_200});
    let body = json!({"ruleset": "6-nimmt", "players": 2, "options": {"end": {"rounds": 1}}, "time_control": tc});
    let id = started(&api, &people, &body, 0);
    api.ok(&people[1], &id, &json!({"type": "resign"}));
    let last = clocks_sets(&api, &people[0], &id).pop().unwrap();
    assert!(!running(&last, 1), "a bot plays the seat now: {last}");
    assert!(running(&last, 0) || api.view(&people[0], &id)["status"] == "finished");
    let start = Instant::now();
    while api.view(&people[0], &id)["status"] != "finished" {
        assert!(start.elapsed() < Duration::from_secs(60));
        move_people(&api, &people[..1], &id);
    }
    let last = clocks_sets(&api, &people[0], &id).pop().unwrap();
    assert!(
        !running(&last, 0) && !running(&last, 1),
        "the clocks stop at the end"
    );
    let r = api.post(
        &format!("/v1/games/{id}/rematch"),
        Some(&people[0].token),
        &json!({}),
    );
    assert!(r.status == 201 || r.status == 200, "{}", r.text);
    assert_eq!(
        r.body["time_control"],
        api.view(&people[0], &id)["time_control"]
    );
    assert_eq!(r.body["time_control"]["vacation"], true);
}

both!(resigning_stops_the_clock_and_a_rematch_keeps_the_time_control);
