//! Rule scenarios over prepared deals, through HTTP.

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, TestServer, cards};

/// A two-player game with a prepared deal; returns (api-owned server, players, game id).
fn prepared(api: &Api, rows: [u64; 4], hands: &[&[u64]], end: &Value) -> (Vec<Player>, String) {
    let names = ["host", "second", "third", "fourth"];
    let players: Vec<Player> = names[..hands.len()].iter().map(|n| api.guest(n)).collect();
    let deal = json!({ "rows": rows.iter().map(|c| vec![*c]).collect::<Vec<_>>(), "hands": hands });
    let game = api.create_game(
        &players[0],
        &json!({ "ruleset": "6-nimmt", "players": hands.len(), "deal": deal, "options": { "end": end } }),
    );
    assert_eq!(game["prepared_deal"], true);
    let id = game["id"].as_str().unwrap().to_owned();
    for p in &players[1..] {
        api.join(p, &id);
    }
    api.ok(&players[0], &id, &json!({ "type": "start" }));
    (players, id)
}

fn play(api: &Api, p: &Player, game: &str, card: u64) -> Value {
    api.ok(p, game, &json!({ "type": "play_card", "card": card }))
}

fn rows(view: &Value) -> Vec<Vec<u64>> {
    view["table"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| cards(&r["cards"]))
        .collect()
}

const HAND_A: [u64; 10] = [11, 12, 13, 14, 15, 16, 17, 18, 19, 20];
const HAND_B: [u64; 10] = [51, 52, 53, 54, 55, 56, 57, 58, 59, 60];

fn a_card_goes_to_the_row_with_the_nearest_lower_end(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let (p, game) = prepared(
        &api,
        [10, 50, 70, 90],
        &[&HAND_A, &HAND_B],
        &json!({ "rounds": 1 }),
    );
    let view = api.view(&p[0], &game);
    assert_eq!(rows(&view), vec![vec![10], vec![50], vec![70], vec![90]]);
    assert_eq!(cards(&view["you"]["hand"]), HAND_A.to_vec());
    play(&api, &p[0], &game, 11);
    let view = play(&api, &p[1], &game, 51);
    // 11 → row ending 10; 51 → row ending 50 (not 10, which is lower but farther).
    assert_eq!(
        rows(&view),
        vec![vec![10, 11], vec![50, 51], vec![70], vec![90]]
    );
}

fn the_sixth_card_takes_the_five(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let (p, game) = prepared(
        &api,
        [10, 50, 70, 90],
        &[&HAND_A, &HAND_B],
        &json!({ "rounds": 1 }),
    );
    for (a, b) in [(11, 51), (12, 52), (13, 53), (14, 54)] {
        play(&api, &p[0], &game, a);
        play(&api, &p[1], &game, b);
    }
    let view = api.view(&p[0], &game);
    assert_eq!(rows(&view)[0], vec![10, 11, 12, 13, 14]);
    play(&api, &p[0], &game, 15);
    let view = play(&api, &p[1], &game, 55);
    assert_eq!(rows(&view), vec![vec![15], vec![55], vec![70], vec![90]]);
    let seats = view["seats"].as_array().unwrap();
    assert_eq!(cards(&seats[0]["taken"]), vec![10, 11, 12, 13, 14]);
    assert_eq!(seats[0]["round_bullheads"], 3 + 5 + 1 + 1 + 1);
    assert_eq!(cards(&seats[1]["taken"]), vec![50, 51, 52, 53, 54]);
    assert_eq!(seats[1]["round_bullheads"], 3 + 1 + 1 + 1 + 1);
    let placed: Vec<Value> = api
        .events(&p[1], &game)
        .into_iter()
        .filter(|e| e["type"] == "card_placed" && e["data"]["card"] == 15)
        .collect();
    assert_eq!(placed.len(), 1);
    assert_eq!(placed[0]["data"]["taken"], json!([10, 11, 12, 13, 14]));
    assert_eq!(placed[0]["data"]["chosen"], false);
}

fn a_card_below_every_row_waits_for_take_row(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let low: [u64; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 20];
    let (p, game) = prepared(
        &api,
        [10, 50, 70, 90],
        &[&low, &HAND_B],
        &json!({ "rounds": 1 }),
    );
    play(&api, &p[0], &game, 1);
    let view = play(&api, &p[1], &game, 51);
    // Resolution paused: nothing placed yet, both cards revealed, only seat 0 asked.
    assert_eq!(
        view["awaiting"],
        json!([{ "seat": 0, "action": "take_row" }])
    );
    assert_eq!(
        view["table"]["revealed"],
        json!([{ "seat": 0, "card": 1 }, { "seat": 1, "card": 51 }])
    );
    assert_eq!(rows(&view), vec![vec![10], vec![50], vec![70], vec![90]]);
    assert_eq!(
        view["legal"],
        json!([{ "type": "resign" }]),
        "seat 1 may only resign while seat 0 chooses"
    );
    let refused = api.command(&p[1], &game, &json!({ "type": "play_card", "card": 52 }));
    refused.assert_problem(422, "not_your_turn");
    let legal = api.view(&p[0], &game)["legal"].clone();
    assert!(
        legal
            .as_array()
            .unwrap()
            .contains(&json!({ "type": "take_row", "row": 2 }))
    );
    api.command(&p[0], &game, &json!({ "type": "take_row", "row": 7 }))
        .assert_problem(422, "no_such_row");
    let view = api.ok(&p[0], &game, &json!({ "type": "take_row", "row": 2 }));
    assert_eq!(rows(&view), vec![vec![10], vec![50, 51], vec![1], vec![90]]);
    assert_eq!(cards(&view["seats"][0]["taken"]), vec![70]);
    assert_eq!(view["seats"][0]["round_bullheads"], 3);
    assert_eq!(
        view["awaiting"].as_array().unwrap().len(),
        2,
        "the next turn begins"
    );
}

fn several_cards_are_placed_in_one_turn_in_ascending_order(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let c: [u64; 10] = [21, 22, 23, 24, 25, 26, 27, 28, 29, 30];
    let d: [u64; 10] = [71, 72, 73, 74, 75, 76, 77, 78, 79, 80];
    let (p, game) = prepared(
        &api,
        [10, 50, 70, 90],
        &[&HAND_A, &HAND_B, &c, &d],
        &json!({ "rounds": 1 }),
    );
    // Sent in descending order; resolved ascending: 11 then 21 both onto row 0.
    play(&api, &p[3], &game, 71);
    play(&api, &p[2], &game, 21);
    play(&api, &p[1], &game, 51);
    let view = play(&api, &p[0], &game, 11);
    assert_eq!(
        rows(&view),
        vec![vec![10, 11, 21], vec![50, 51], vec![70, 71], vec![90]]
    );
    let placed: Vec<u64> = api
        .events(&p[0], &game)
        .into_iter()
        .filter(|e| e["type"] == "card_placed")
        .map(|e| e["data"]["card"].as_u64().unwrap())
        .collect();
    assert_eq!(placed, vec![11, 21, 51, 71]);
}

fn a_selection_can_be_replaced_before_the_reveal_but_not_after(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let (p, game) = prepared(
        &api,
        [10, 50, 70, 90],
        &[&HAND_A, &HAND_B],
        &json!({ "rounds": 1 }),
    );
    let view = play(&api, &p[0], &game, 11);
    assert_eq!(view["you"]["selected"], 11);
    let view = play(&api, &p[0], &game, 12);
    assert_eq!(view["you"]["selected"], 12);
    let other = api.view(&p[1], &game);
    assert_eq!(other["seats"][0]["selected"], true);
    assert_eq!(other["you"]["selected"], Value::Null);
    let view = play(&api, &p[1], &game, 51);
    assert_eq!(
        rows(&view)[0],
        vec![10, 12],
        "the replacement was played, not the first choice"
    );
    let me = api.view(&p[0], &game);
    assert!(
        cards(&me["you"]["hand"]).contains(&11),
        "the replaced card stays in hand"
    );
    api.command(&p[0], &game, &json!({ "type": "play_card", "card": 12 }))
        .assert_problem(422, "card_not_in_hand");
    // Others learnt of the replacement nothing but one selection.
    let made = api
        .events(&p[1], &game)
        .into_iter()
        .filter(|e| e["type"] == "selection_made")
        .count();
    assert_eq!(
        made, 2,
        "one selection_made per seat, none for the replacement"
    );
}

fn the_game_ends_with_shared_winners_on_a_tie(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let a: [u64; 10] = [5, 21, 36, 43, 48, 51, 73, 81, 92, 100];
    let b: [u64; 10] = [10, 13, 26, 35, 38, 53, 57, 93, 98, 99];
    let (p, game) = prepared(&api, [60, 50, 3, 8], &[&a, &b], &json!({ "rounds": 1 }));
    let mut view = Value::Null;
    for turn in 0..10 {
        play(&api, &p[0], &game, a[turn]);
        view = play(&api, &p[1], &game, b[turn]);
    }
    assert_eq!(view["status"], "finished");
    assert_eq!(view["totals"], json!([7, 7]));
    assert_eq!(view["winners"], json!([0, 1]));
    assert_eq!(view["scores"], json!([[7, 7]]));
    assert_eq!(view["legal"], json!([]));
    assert_eq!(view["awaiting"], json!([]));
}

fn the_game_ends_after_the_round_in_which_the_limit_is_reached(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let (p, game) = prepared(
        &api,
        [10, 50, 70, 90],
        &[&HAND_A, &HAND_B],
        &json!({ "points": 5 }),
    );
    let mut view = Value::Null;
    for turn in 0..10 {
        play(&api, &p[0], &game, HAND_A[turn]);
        view = play(&api, &p[1], &game, HAND_B[turn]);
    }
    // Seat 0 took 11 bullheads and seat 1 took 7 with the fifth pair alone: both past 5.
    assert_eq!(view["status"], "finished", "{view}");
    assert_eq!(view["scores"].as_array().unwrap().len(), 1);
    let totals: Vec<u64> = view["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap())
        .collect();
    let expected_winner = u64::from(totals[1] < totals[0]);
    assert_eq!(view["winners"], json!([expected_winner]));
}

fn a_shuffled_second_round_follows_a_prepared_first(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let (p, game) = prepared(
        &api,
        [10, 50, 70, 90],
        &[&HAND_A, &HAND_B],
        &json!({ "rounds": 2 }),
    );
    for turn in 0..10 {
        play(&api, &p[0], &game, HAND_A[turn]);
        play(&api, &p[1], &game, HAND_B[turn]);
    }
    let view = api.view(&p[0], &game);
    assert_eq!(view["round"], 2);
    assert_eq!(view["status"], "active");
    assert_eq!(cards(&view["you"]["hand"]).len(), 10);
    assert_ne!(
        cards(&view["you"]["hand"]),
        HAND_A.to_vec(),
        "round 2 is shuffled"
    );
    assert_eq!(view["scores"].as_array().unwrap().len(), 1);
}

both!(
    a_card_goes_to_the_row_with_the_nearest_lower_end,
    the_sixth_card_takes_the_five,
    a_card_below_every_row_waits_for_take_row,
    several_cards_are_placed_in_one_turn_in_ascending_order,
    a_selection_can_be_replaced_before_the_reveal_but_not_after,
    the_game_ends_with_shared_winners_on_a_tie,
    the_game_ends_after_the_round_in_which_the_limit_is_reached,
    a_shuffled_second_round_follows_a_prepared_first,
);
