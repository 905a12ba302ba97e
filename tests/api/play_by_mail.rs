//! Play by mail: the inbox, move deadlines (also across a restart and with two replicas),
//! public games and spectators, resigning.

use serde_json::{Value, json};

use crate::both;
use crate::support::{
    Api, Backend, Player, TestServer, after_sweep, cards, play_turns, seated_game,
};

fn deadline_events(api: &Api, p: &Player, game: &str) -> Vec<Value> {
    api.events(p, game)
        .into_iter()
        .filter(|e| e["data"]["cause"] == "deadline")
        .collect()
}

/// The deadline moves themselves: selections made for a seat.
fn deadline_selections(api: &Api, p: &Player, game: &str) -> Vec<Value> {
    deadline_events(api, p, game)
        .into_iter()
        .filter(|e| e["type"] == "card_selected" || e["type"] == "selection_made")
        .collect()
}

fn the_inbox_lists_exactly_the_games_awaiting_the_caller(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let me = api.guest("mei");
    let other = api.guest("other");
    let plain = seated_game(&api, &me, std::slice::from_ref(&other), 0, &json!({}));
    let acted = seated_game(&api, &me, std::slice::from_ref(&other), 0, &json!({}));
    let card = cards(&api.view(&me, &acted)["you"]["hand"])[0];
    api.ok(&me, &acted, &json!({ "type": "play_card", "card": card }));
    let lobby = api.create_game(&me, &json!({ "ruleset": "6-nimmt", "players": 3 }));
    let late = seated_game(
        &api,
        &me,
        std::slice::from_ref(&other),
        0,
        &json!({ "move_deadline_seconds": 3000 }),
    );
    let soon = seated_game(
        &api,
        &me,
        std::slice::from_ref(&other),
        0,
        &json!({ "move_deadline_seconds": 2000 }),
    );
    let inbox = api.get("/v1/games?awaiting=me", Some(&me.token));
    assert_eq!(inbox.status, 200, "{}", inbox.text);
    let ids: Vec<&str> = inbox.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![soon.as_str(), late.as_str(), plain.as_str()],
        "earliest deadline first, then the rest"
    );
    for item in inbox.body["items"].as_array().unwrap() {
        assert_eq!(item["your_actions"], json!(["play_card"]));
        assert_eq!(item["your_turn"], true);
    }
    assert!(inbox.body["items"][0]["deadline_at"].is_string());
    assert!(inbox.body["items"][2]["deadline_at"].is_null());
    assert!(!ids.contains(&acted.as_str()) && !ids.contains(&lobby["id"].as_str().unwrap()));
    let theirs = api.get("/v1/games?awaiting=me", Some(&other.token));
    assert_eq!(
        theirs.body["items"].as_array().unwrap().len(),
        4,
        "the other player has not acted anywhere"
    );
    // Paging the inbox keeps its order.
    let first = api.get("/v1/games?awaiting=me&limit=2", Some(&me.token));
    let cursor = first.body["next_cursor"].as_str().unwrap().to_owned();
    let second = api.get(
        &format!("/v1/games?awaiting=me&limit=2&cursor={cursor}"),
        Some(&me.token),
    );
    assert_eq!(second.body["items"][0]["id"], plain.as_str());
    assert!(second.body["next_cursor"].is_null());
}

fn a_passed_deadline_moves_once_for_the_late_player(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let late = api.guest("late");
    let game = seated_game(
        &api,
        &host,
        std::slice::from_ref(&late),
        0,
        &json!({ "move_deadline_seconds": 3 }),
    );
    let view = api.view(&host, &game);
    assert_eq!(view["move_deadline_seconds"], 3);
    assert!(
        view["seats"][0]["deadline_at"].is_string() && view["seats"][1]["deadline_at"].is_string()
    );
    let card = cards(&view["you"]["hand"])[0];
    let after = api.ok(&host, &game, &json!({ "type": "play_card", "card": card }));
    assert!(
        after["seats"][0]["deadline_at"].is_null(),
        "a seat that acted has no deadline"
    );
    server.advance_clock(3);
    let resolved = after_sweep(&api, &late, &game, "the deadline move", |v| {
        v["seats"][1]["hand_size"] == 9
    });
    assert_eq!(
        resolved["seats"][0]["hand_size"], 9,
        "the turn was revealed and resolved"
    );
    // Recorded as such, exactly once: the private selection and its public shadow. A
    // second pass at the same time finds nothing more to do for that deadline.
    server.sweep();
    let mine: Vec<Value> = deadline_selections(&api, &late, &game);
    let types: Vec<&str> = mine.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, vec!["card_selected", "selection_made"], "{mine:?}");
    assert!(mine.iter().all(|e| e["data"]["seat"] == 1));
    let public: Vec<Value> = deadline_selections(&api, &host, &game);
    assert_eq!(
        public.len(),
        1,
        "the host sees the public shadow only: {public:?}"
    );
    assert_eq!(public[0]["type"], "selection_made");
    // The new turn has fresh deadlines for both.
    let now = api.view(&host, &game);
    // Whoever is asked next (both seats for a new turn, or one for a take_row) has a fresh deadline.
    let asked = now["awaiting"].as_array().unwrap();
    assert!(!asked.is_empty());
    for a in asked {
        let seat = a["seat"].as_u64().unwrap() as usize;
        assert!(now["seats"][seat]["deadline_at"].is_string(), "{now}");
    }
}

fn a_missed_take_row_takes_the_cheapest_row(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let late = api.guest("late");
    // Rows cost 7, 3, 5 and 1 bullheads; the late player's 1 is below every row.
    let deal = json!({
        "rows": [[55], [10], [22], [3]],
        "hands": [[60, 61, 62, 63, 64, 65, 66, 67, 68, 69], [1, 70, 71, 72, 73, 74, 75, 76, 77, 78]]
    });
    let body =
        json!({ "ruleset": "6-nimmt", "players": 2, "deal": deal, "move_deadline_seconds": 1 });
    let game = api.create_game(&host, &body)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.join(&late, &game);
    api.ok(&host, &game, &json!({ "type": "start" }));
    api.ok(&host, &game, &json!({ "type": "play_card", "card": 60 }));
    let view = api.ok(&late, &game, &json!({ "type": "play_card", "card": 1 }));
    assert_eq!(
        view["awaiting"],
        json!([{ "seat": 1, "action": "take_row" }])
    );
    // The clock passes the 1 s deadline. Later turns expire as well (on real time, after a
    // second), so the log, not a view, tells what happened.
    server.advance_clock(1);
    after_sweep(&api, &late, &game, "the deadline take_row", |v| {
        v["table"]["revealed"] == json!([])
    });
    let placed: Vec<Value> = deadline_events(&api, &host, &game)
        .into_iter()
        .filter(|e| e["type"] == "card_placed")
        .collect();
    // Later turns expire too (nobody plays); the first take is the one we caused.
    assert!(!placed.is_empty());
    assert_eq!(placed[0]["data"]["seat"], 1);
    assert_eq!(placed[0]["data"]["row"], 3);
    assert_eq!(placed[0]["data"]["taken"], json!([3]));
}

fn a_deadline_that_passes_while_the_server_is_down_is_honoured_after_restart(backend: Backend) {
    let mut server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let late = api.guest("late");
    let game = seated_game(
        &api,
        &host,
        std::slice::from_ref(&late),
        0,
        &json!({ "move_deadline_seconds": 2 }),
    );
    let card = cards(&api.view(&host, &game)["you"]["hand"])[0];
    api.ok(&host, &game, &json!({ "type": "play_card", "card": card }));
    assert!(server.terminate());
    server = server.restart();
    // The restarted server never saw the move that set the deadline: it finds the deadline
    // in the store once its clock has passed it.
    server.advance_clock(3);
    let api2 = server.client();
    let done = after_sweep(&api2, &late, &game, "the overdue move after restart", |v| {
        v["seats"][1]["hand_size"] == 9
    });
    assert_eq!(done["seats"][0]["hand_size"], 9);
    // The overdue move was made once. (Later turns have deadlines of their own, which a
    // slow machine may let pass too: count the first turn only.)
    let first_turn: Vec<Value> = api2
        .events(&host, &game)
        .into_iter()
        .take_while(|e| e["type"] != "cards_revealed")
        .filter(|e| e["data"]["cause"] == "deadline" && e["type"] == "selection_made")
        .collect();
    assert_eq!(first_turn.len(), 1, "{first_turn:?}");
}

fn public_games_are_listed_and_watchable_private_ones_are_not(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let stranger = api.guest("stranger");
    let private = seated_game(&api, &host, std::slice::from_ref(&guest), 0, &json!({}));
    let listed = |p: &Player| -> Vec<String> {
        api.get("/v1/games", Some(&p.token)).body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!listed(&stranger).contains(&private));
    api.get(&format!("/v1/games/{private}"), Some(&stranger.token))
        .assert_problem(404, "not_found");
    api.get(
        &format!("/v1/games/{private}/events"),
        Some(&stranger.token),
    )
    .assert_problem(404, "not_found");
    let r = api
        .http
        .patch(api.url(&format!("/v1/games/{private}")))
        .bearer_auth(&guest.token)
        .json(&json!({ "public": true }))
        .send()
        .unwrap();
    assert_eq!(
        r.status().as_u16(),
        422,
        "only the host may make a game public"
    );
    let r = api
        .http
        .patch(api.url(&format!("/v1/games/{private}")))
        .bearer_auth(&host.token)
        .json(&json!({ "public": true }))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(listed(&stranger).contains(&private));
    let watched = api.view(&stranger, &private);
    assert_eq!(watched["you"], Value::Null, "a spectator has no seat");
    assert_eq!(watched["legal"], json!([]));
    assert!(
        watched["invite_code"].is_null(),
        "the invite code is for players"
    );
    let hands: Vec<u64> = cards(&api.view(&host, &private)["you"]["hand"])
        .into_iter()
        .chain(cards(&api.view(&guest, &private)["you"]["hand"]))
        .collect();
    let text = watched.to_string();
    for e in api.events(&stranger, &private) {
        assert!(
            e["type"] != "hand_dealt" && e["type"] != "card_selected",
            "{e}"
        );
    }
    assert!(
        hands
            .iter()
            .all(|c| !watched["table"].to_string().contains(&format!("[{c}]"))),
        "{text}"
    );
}

fn resigning_hands_the_seat_to_a_bot(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let quitter = api.guest("quitter");
    let game = seated_game(
        &api,
        &host,
        std::slice::from_ref(&quitter),
        0,
        &json!({ "options": { "end": { "rounds": 1 } } }),
    );
    let view = api.ok(&quitter, &game, &json!({ "type": "resign" }));
    assert_eq!(view["seats"][1]["bot"], true);
    assert_eq!(view["seats"][1]["resigned"], true);
    assert_eq!(view["seats"][1]["selected"], true, "the bot chose at once");
    api.command(&quitter, &game, &json!({ "type": "play_card", "card": 1 }))
        .assert_problem(422, "resigned");
    play_turns(&api, &host, &game, 10);
    assert_eq!(
        api.view(&host, &game)["status"],
        "finished",
        "the bot played the seat to the end"
    );
}

both!(
    the_inbox_lists_exactly_the_games_awaiting_the_caller,
    a_passed_deadline_moves_once_for_the_late_player,
    a_missed_take_row_takes_the_cheapest_row,
    a_deadline_that_passes_while_the_server_is_down_is_honoured_after_restart,
    public_games_are_listed_and_watchable_private_ones_are_not,
    resigning_hands_the_seat_to_a_bot,
);

#[test]
fn deadlines_fire_exactly_once_with_two_replicas() {
    let server = TestServer::start(Backend::Postgres);
    let replica = server.replica(&[]);
    let api = server.client();
    let other = replica.client();
    let host = api.guest("host");
    let late = api.guest("late");
    let game = seated_game(
        &api,
        &host,
        std::slice::from_ref(&late),
        0,
        &json!({ "move_deadline_seconds": 1 }),
    );
    // Nobody plays: both replicas' clocks pass the deadlines at the same moment, turn after
    // turn, and their sweepers' passes race for the same moves. (A turn whose lowest card
    // must take a row has a second deadline, so three turns take three passes or more.)
    let mut passes = 0;
    while api.view(&host, &game)["seats"][0]["hand_size"]
        .as_u64()
        .unwrap()
        > 7
    {
        passes += 1;
        assert!(passes <= 12, "three turns not played in {passes} passes");
        std::thread::scope(|s| {
            for base in [&api, &other] {
                s.spawn(move || {
                    let r = base.post("/test/clock", None, &json!({ "advance_seconds": 1 }));
                    assert_eq!(r.status, 200, "{}", r.text);
                });
            }
        });
    }
    let events = api.events(&host, &game);
    let shadows: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "selection_made")
        .collect();
    let reveals = events
        .iter()
        .filter(|e| e["type"] == "cards_revealed")
        .count();
    assert!(reveals >= 3);
    // Two selections per revealed turn, plus at most two of the turn in progress: a
    // deadline that fired on both replicas would add a third to some turn.
    assert!(
        (2 * reveals..=2 * reveals + 2).contains(&shadows.len()),
        "{} selections for {reveals} turns",
        shadows.len()
    );
    // The host's own log: one private selection per turn, never a second one (a replaced
    // selection, which a double-fired deadline would cause, emits card_selected again).
    let own = events
        .iter()
        .filter(|e| e["type"] == "card_selected")
        .count();
    assert!(
        (reveals..=reveals + 1).contains(&own),
        "{own} private selections for {reveals} turns"
    );
    // Each seat selected exactly once per revealed turn: never twice for one deadline.
    for turn in 0..reveals {
        let in_turn: Vec<&&Value> = shadows.iter().skip(2 * turn).take(2).collect();
        let mut seats: Vec<u64> = in_turn
            .iter()
            .map(|e| e["data"]["seat"].as_u64().unwrap())
            .collect();
        seats.sort_unstable();
        assert_eq!(seats, vec![0, 1], "turn {turn}: one selection per seat");
    }
    let versions: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]));
}

/// The inbox sorts by the time left: a clock game's deadline is its flag fall, so the
/// game with the smaller bank comes first, then move deadlines by their instant, games
/// without a deadline last (newest first).
fn the_inbox_sorts_clock_games_by_the_time_left(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let me = api.guest("mei");
    let other = api.guest("other");
    let clock = |seconds: u32| {
        json!({ "time_control": { "kind": "live", "initial_seconds": seconds,
                                  "increment_seconds": 0 } })
    };
    let plain = seated_game(&api, &me, std::slice::from_ref(&other), 0, &json!({}));
    let long = seated_game(&api, &me, std::slice::from_ref(&other), 0, &clock(3000));
    let deadline = seated_game(
        &api,
        &me,
        std::slice::from_ref(&other),
        0,
        &json!({ "move_deadline_seconds": 600 }),
    );
    let short = seated_game(&api, &me, std::slice::from_ref(&other), 0, &clock(300));
    let inbox = api.get("/v1/games?awaiting=me", Some(&me.token));
    assert_eq!(inbox.status, 200, "{}", inbox.text);
    let ids: Vec<&str> = inbox.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![
            short.as_str(),
            deadline.as_str(),
            long.as_str(),
            plain.as_str()
        ],
        "least time left first, games without a deadline last"
    );
    let view = api.view(&me, &short);
    let instant = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap())
            .unwrap()
            .timestamp_millis()
    };
    assert_eq!(
        instant(&inbox.body["items"][0]["deadline_at"]),
        instant(&view["seats"][0]["deadline_at"]),
        "the flag fall"
    );
}

both!(the_inbox_sorts_clock_games_by_the_time_left);
