//! nimm-oder-schieb over HTTP: complete games and matches with bots, take and pass through
//! prepared draw piles, and hidden chips and removed cards.

use serde_json::{Value, json};

use crate::both;
use crate::support::{Backend, TestServer, play_randomly, start_game};

fn values(cards: &Value) -> Vec<u64> {
    cards
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["value"].as_u64().unwrap())
        .collect()
}

fn a_match_with_bots_plays_to_the_end(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = vec![api.guest("ida"), api.guest("jon")];
    let game = start_game(
        &api,
        &people,
        &json!({ "ruleset": "nimm-oder-schieb", "players": 4, "options": { "games": 2 } }),
        &["heuristic", "random"],
    );
    let view = play_randomly(&api, &people, &game, 77);
    assert_eq!(view["status"], "finished");
    let events = api.events(&people[0], &game);
    let ended: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "nos_game_ended")
        .collect();
    assert_eq!(ended.len(), 2, "a match of two games");
    let started: Vec<u64> = events
        .iter()
        .filter(|e| e["type"] == "nos_game_started")
        .map(|e| e["data"]["first_seat"].as_u64().unwrap())
        .collect();
    assert_eq!(
        started,
        vec![0, 1],
        "game g is started by seat g mod players"
    );
    assert_eq!(
        events.iter().filter(|e| e["type"] == "card_taken").count(),
        48,
        "24 cards per game"
    );
    assert!(
        events.iter().all(|e| e["type"] != "draw_pile_set"),
        "the pile order is server-only"
    );
    // Totals are the sums of the games; each game's chips are conserved (4 × 11).
    let totals: Vec<i64> = view["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_i64().unwrap())
        .collect();
    for (s, total) in totals.iter().enumerate() {
        let sum: i64 = ended
            .iter()
            .map(|e| e["data"]["scores"][s].as_i64().unwrap())
            .sum();
        assert_eq!(sum, *total);
    }
    for e in &ended {
        let chips: u64 = e["data"]["chips"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(chips, 44);
        assert_eq!(e["data"]["removed"].as_array().unwrap().len(), 9);
    }
    // Winners: lowest total, then more chips kept over the match, then shared.
    let kept: Vec<u64> = (0..4)
        .map(|s| {
            ended
                .iter()
                .map(|e| e["data"]["chips"][s].as_u64().unwrap())
                .sum()
        })
        .collect();
    let best = (0..4)
        .map(|s| (totals[s], std::cmp::Reverse(kept[s])))
        .min()
        .unwrap();
    let expected: Vec<usize> = (0..4)
        .filter(|s| (totals[*s], std::cmp::Reverse(kept[*s])) == best)
        .collect();
    assert_eq!(view["winners"], json!(expected));
    assert_eq!(
        view["table"]["removed"].as_array().unwrap().len(),
        9,
        "the last game's removed cards, revealed"
    );
    let card = &view["table"]["removed"][0];
    assert!(card["suit"].is_string() && card["rank"].is_string() && card["label"].is_string());
}

/// A pile: 3 at the top, then 4, … (24 cards); 27–35 are removed.
fn pile() -> Vec<u64> {
    (3..=26).collect()
}

fn passing_pays_and_taking_collects_the_pot(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = vec![api.guest("kai"), api.guest("lea"), api.guest("mia")];
    let game = start_game(
        &api,
        &people,
        &json!({ "ruleset": "nimm-oder-schieb", "players": 3, "deal": { "draw_pile": pile() } }),
        &[],
    );
    let v = api.view(&people[0], &game);
    assert_eq!(
        v["table"]["open_card"],
        json!({ "value": 3, "suit": "clubs", "rank": "3", "label": "3♣" })
    );
    assert_eq!(v["table"]["pot"], 0);
    assert_eq!(v["table"]["draw_pile_size"], 23);
    assert_eq!(v["you"]["chips"], 11);
    assert_eq!(
        v["awaiting"],
        json!([{ "seat": 0, "action": "pass" }, { "seat": 0, "action": "take" }])
    );
    api.command(&people[1], &game, &json!({ "type": "take" }))
        .assert_problem(422, "not_your_turn");
    api.command(
        &people[0],
        &game,
        &json!({ "type": "play_card", "card": 3 }),
    )
    .assert_problem(422, "unknown_command");
    api.ok(&people[0], &game, &json!({ "type": "pass" }));
    let v = api.ok(&people[1], &game, &json!({ "type": "pass" }));
    assert_eq!(v["table"]["pot"], 2);
    assert_eq!(v["you"]["chips"], 10);
    let v = api.ok(&people[2], &game, &json!({ "type": "take" }));
    assert_eq!(values(&v["seats"][2]["cards"]), vec![3]);
    assert_eq!(v["you"]["chips"], 13, "11 + the 2 on the card");
    assert_eq!(v["table"]["open_card"]["value"], 4);
    assert_eq!(v["table"]["pot"], 0);
    assert_eq!(
        v["awaiting"][0]["seat"], 2,
        "the taker acts on the next card"
    );
    // Hidden chips: nobody sees another seat's count.
    let other = api.view(&people[0], &game);
    assert!(
        other["seats"][2].get("chips").is_none(),
        "{}",
        other["seats"][2]
    );
    assert!(other["seats"][1].get("chips").is_none());
    assert_eq!(other["seats"][0]["chips"], 10);
}

fn a_player_without_chips_must_take(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = vec![api.guest("nia"), api.guest("olaf"), api.guest("pia")];
    let game = start_game(
        &api,
        &people,
        &json!({ "ruleset": "nimm-oder-schieb", "players": 3, "options": { "chips": "open" },
                 "deal": { "draw_pile": pile() } }),
        &[],
    );
    // Everyone passes the 3 around until nia has no chips left (11 rounds of passing).
    for _ in 0..11 {
        for p in &people {
            api.ok(p, &game, &json!({ "type": "pass" }));
        }
    }
    let v = api.view(&people[1], &game);
    assert_eq!(v["table"]["pot"], 33);
    assert_eq!(
        v["seats"][0]["chips"], 0,
        "open chips are shown to everyone"
    );
    // `awaiting` is public and never tells who is out of chips; `legal` tells the seat.
    assert_eq!(
        v["awaiting"],
        json!([{ "seat": 0, "action": "pass" }, { "seat": 0, "action": "take" }])
    );
    let mine = api.view(&people[0], &game);
    assert_eq!(
        mine["legal"],
        json!([{ "type": "take" }, { "type": "resign" }])
    );
    api.command(&people[0], &game, &json!({ "type": "pass" }))
        .assert_problem(422, "no_chips");
    let v = api.ok(&people[0], &game, &json!({ "type": "take" }));
    assert_eq!(v["you"]["chips"], 33);
}

fn removed_cards_and_hidden_chips_reach_nobody_before_the_end(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = vec![api.guest("quin"), api.guest("rita"), api.guest("sven")];
    let game = start_game(
        &api,
        &people,
        &json!({ "ruleset": "nimm-oder-schieb", "players": 3, "deal": { "draw_pile": pile() } }),
        &[],
    );
    let removed: Vec<u64> = (27..=35).collect();
    let mut rng = 5u64;
    loop {
        for p in &people {
            let view = api.view(p, &game);
            let finished = view["status"] == "finished";
            let mut bodies = vec![
                view.clone(),
                json!(api.events(p, &game)),
                api.get("/v1/games?mine=true", Some(&p.token)).body,
            ];
            if !finished {
                for seat in view["seats"].as_array().unwrap() {
                    if seat["account_id"] != p.id.as_str() {
                        assert!(
                            seat.get("chips").is_none(),
                            "{} sees another seat's chips: {seat}",
                            p.name
                        );
                    }
                }
                bodies.push(
                    api.command(p, &game, &json!({ "type": "keep_card", "card": 27 }))
                        .body,
                );
                for body in &bodies {
                    assert_no_card_value(body, &removed, &p.name);
                }
            } else {
                assert_eq!(values(&view["table"]["removed"]), removed);
                return;
            }
            let moves: Vec<&Value> = view["legal"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["type"] != "resign")
                .collect();
            if let Some(m) = moves.get(usize::try_from(rng % 2).unwrap_or(0) % moves.len().max(1)) {
                api.ok(p, &game, m);
            }
            rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        }
    }
}

/// No card object (`{"value": …}`) and no event card field carries a removed value.
fn assert_no_card_value(v: &Value, removed: &[u64], who: &str) {
    match v {
        Value::Object(o) => {
            for key in ["value", "card"] {
                if let Some(n) = o.get(key).and_then(Value::as_u64) {
                    assert!(
                        !removed.contains(&n),
                        "{who} received removed card {n}: {v}"
                    );
                }
            }
            for key in ["pile", "removed"] {
                assert!(
                    o.get(key)
                        .is_none_or(|x| x.as_array().is_none_or(Vec::is_empty)),
                    "{who} got {key}: {v}"
                );
            }
            o.values()
                .for_each(|x| assert_no_card_value(x, removed, who));
        }
        Value::Array(a) => a.iter().for_each(|x| assert_no_card_value(x, removed, who)),
        _ => {}
    }
}

both!(
    a_match_with_bots_plays_to_the_end,
    passing_pays_and_taking_collects_the_pot,
    a_player_without_chips_must_take,
    removed_cards_and_hidden_chips_reach_nobody_before_the_end,
);
