//! Every row ruleset and 6-nimmt preset over HTTP: complete games of people with bots, the
//! x-nimmt specifics, and what `GET /v1/rulesets` says.

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, TestServer, cards, play_randomly, start_game};

fn assert_consistent_end(view: &Value) {
    assert_eq!(view["status"], "finished");
    let players = view["players"].as_u64().unwrap() as usize;
    let scores = view["scores"].as_array().unwrap();
    let totals: Vec<u64> = view["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap())
        .collect();
    for (s, total) in totals.iter().enumerate() {
        assert_eq!(
            scores.iter().map(|r| r[s].as_u64().unwrap()).sum::<u64>(),
            *total
        );
    }
    assert_eq!(totals.len(), players);
    let min = totals.iter().min().unwrap();
    let expected: Vec<Value> = (0..players)
        .filter(|s| totals[*s] == *min)
        .map(|s| json!(s))
        .collect();
    assert_eq!(view["winners"], Value::Array(expected));
    assert!(view["fairness"]["seed"].is_string());
}

/// Each person sees hands and selections of their own seat only, and no server-only event.
fn assert_private_events_stay_private(api: &Api, people: &[Player], game: &str) {
    for p in people {
        let view = api.view(p, game);
        let seat = view["you"]["seat"].clone();
        for e in api.events(p, game) {
            let ty = e["type"].as_str().unwrap();
            assert!(
                ty != "seed_recorded" && ty != "deal_prepared",
                "server-only event: {e}"
            );
            if ty == "hand_dealt" || ty == "card_selected" {
                assert_eq!(
                    e["data"]["seat"], seat,
                    "{} got another seat's {ty}",
                    p.name
                );
            }
        }
        if view["status"] != "finished" {
            assert!(view["fairness"]["seed"].is_null());
        }
    }
}

fn every_ruleset_and_preset_plays_to_the_end(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people = vec![api.guest("anna"), api.guest("bert")];
    let setups = [
        json!({ "ruleset": "6-nimmt", "players": 4, "preset": "standard", "options": { "end": { "rounds": 1 } } }),
        json!({ "ruleset": "6-nimmt", "players": 4, "preset": "taktik", "options": { "end": { "rounds": 2 } } }),
        json!({ "ruleset": "6-nimmt", "players": 4, "preset": "logik", "options": { "end": { "rounds": 2 } } }),
        json!({ "ruleset": "6-nimmt", "players": 4, "preset": "profi", "options": { "end": { "rounds": 1 } } }),
        json!({ "ruleset": "11-nimmt", "players": 4, "options": { "end": { "rounds": 1 } } }),
        json!({ "ruleset": "x-nimmt", "players": 4, "options": { "deals": 1 } }),
    ];
    for (i, setup) in setups.into_iter().enumerate() {
        let game = start_game(&api, &people, &setup, &["heuristic", "random"]);
        assert_private_events_stay_private(&api, &people, &game);
        let view = play_randomly(&api, &people, &game, 0x9e37_79b9 + i as u64);
        assert_consistent_end(&view);
        assert_private_events_stay_private(&api, &people, &game);
        assert_eq!(view["ruleset"], setup["ruleset"]);
        let rounds = view["scores"].as_array().unwrap().len();
        let expected = setup["options"]["end"]["rounds"]
            .as_u64()
            .or(setup["options"]["deals"].as_u64())
            .unwrap();
        assert_eq!(rounds as u64, expected, "{setup}");
        if setup["preset"] == "taktik" || setup["preset"] == "logik" {
            assert_eq!(view["options"]["deck"], "tactical");
        }
        if setup["preset"] == "logik" {
            let drafted = api
                .events(&people[0], &game)
                .iter()
                .filter(|e| e["type"] == "card_drafted")
                .count();
            assert_eq!(drafted, 2 * 40, "two drafts of ten cards for four players");
        }
    }
}

fn x_nimmt_keeps_cards_stacks_x_rows_and_hides_stacks_and_hands(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let (a, b) = (api.guest("alma"), api.guest("bodo"));
    let hand_a = [1, 2, 12, 40, 41, 42, 43, 44];
    let hand_b = [11, 21, 22, 50, 51, 52, 53, 54];
    let deal = json!({ "rows": [[10], [20], [30]], "hands": [hand_a, hand_b] });
    let game = start_game(
        &api,
        &[a.clone(), b.clone()],
        &json!({ "ruleset": "x-nimmt", "players": 2, "deal": deal }),
        &[],
    );
    let view = api.view(&b, &game);
    let shapes: Vec<(u64, u64)> = view["table"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["capacity"].as_u64().unwrap(),
                r["max_cards"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shapes, vec![(3, 2), (4, 3), (5, 4)]);
    assert_eq!(view["seats"][0]["hand_size"], 8);
    let play =
        |p: &Player, card: u64| api.ok(p, &game, &json!({ "type": "play_card", "card": card }));
    // Turn 1: 1 is below every row: alma takes row 2 (one card, kept automatically).
    play(&a, 1);
    let view = play(&b, 21);
    assert_eq!(
        view["awaiting"],
        json!([{ "seat": 0, "action": "take_row" }])
    );
    let view = api.ok(&a, &game, &json!({ "type": "take_row", "row": 2 }));
    assert_eq!(view["seats"][0]["x_row"], json!([30]));
    // Turn 2 and 3: 12 completes row 0 (capacity 3) and takes the two cards lying there.
    play(&a, 2);
    play(&b, 11);
    play(&a, 12);
    let view = play(&b, 22);
    assert_eq!(
        view["awaiting"],
        json!([{ "seat": 0, "action": "keep_card" }])
    );
    assert_eq!(
        view["table"]["pending_keep"],
        json!({ "seat": 0, "cards": [10, 11] })
    );
    api.command(&a, &game, &json!({ "type": "keep_card", "card": 12 }))
        .assert_problem(422, "card_not_taken");
    api.command(&b, &game, &json!({ "type": "keep_card", "card": 10 }))
        .assert_problem(422, "not_your_turn");
    // Keeping 10 (below the X row's 30) moves the X row onto the X stack; 11 goes to the hand.
    let mine = api.ok(&a, &game, &json!({ "type": "keep_card", "card": 10 }));
    assert_eq!(mine["seats"][0]["x_row"], json!([10]));
    assert_eq!(mine["seats"][0]["x_stack_size"], 1);
    assert_eq!(mine["you"]["x_stack"], json!([30]));
    assert!(cards(&mine["you"]["hand"]).contains(&11));
    assert_eq!(
        mine["seats"][0]["hand_size"], 6,
        "8 − 3 played + 1 returned"
    );
    let theirs = api.view(&b, &game);
    assert_eq!(theirs["seats"][0]["x_stack_size"], 1);
    assert_eq!(theirs["you"]["x_stack"], json!([]));
    assert!(
        !all_numbers(&theirs).contains(&30),
        "the X stack's card reaches its owner only: {theirs}"
    );
    for hidden in [40, 41, 42, 43, 44] {
        let as_json = format!("{hidden}");
        let found = all_numbers(&theirs).contains(&hidden);
        assert!(!found, "alma's hand card {as_json} reached bodo");
        for e in api.events(&b, &game) {
            assert!(
                !all_numbers(&e["data"]).contains(&hidden),
                "alma's hand card {hidden} in {e}"
            );
        }
    }
    let placed = api.view(&a, &game);
    assert_eq!(placed["table"]["rows"][1]["cards"], json!([20, 21, 22]));
}

fn all_numbers(v: &Value) -> Vec<u64> {
    match v {
        Value::Number(n) => n.as_u64().into_iter().collect(),
        Value::Array(a) => a.iter().flat_map(all_numbers).collect(),
        Value::Object(o) => o.values().flat_map(all_numbers).collect(),
        _ => Vec::new(),
    }
}

fn options_are_checked_per_ruleset(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let refused = [
        (
            json!({ "ruleset": "6-nimmt", "players": 3, "options": { "deal": "draft" } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "11-nimmt", "players": 10 }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "11-nimmt", "players": 4, "options": { "deck": "tactical" } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "x-nimmt", "players": 5 }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "x-nimmt", "players": 3, "options": { "end": { "points": 66 } } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "x-nimmt", "players": 3, "options": { "deals": 0 } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 3, "options": { "deals": 2 } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "11-nimmt", "players": 3, "preset": "profi" }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "nimm-oder-schieb", "players": 2 }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "nimm-oder-schieb", "players": 8 }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "nimm-oder-schieb", "players": 4, "options": { "end": { "points": 50 } } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "chips": "open" } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "games": 2 } }),
            "invalid_options",
        ),
        // Forms the API does not document are refused, whatever their value.
        (
            json!({ "ruleset": "x-nimmt", "players": 3, "options": { "end": { "rounds": 3 } } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "11-nimmt", "players": 3, "options": { "deck": "full" } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "nimm-oder-schieb", "players": 3, "options": { "placement": "right" } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "nimm-oder-schieb", "players": 3, "options": { "end": { "rounds": 2 } } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "x-nimmt", "players": 3, "options": { "deals": 2, "games": 2 } }),
            "invalid_options",
        ),
        (
            json!({ "ruleset": "nimm-oder-schieb", "players": 3, "deal": { "draw_pile": [3, 4, 5] } }),
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "nimm-oder-schieb", "players": 3,
                     "deal": { "rows": [[1], [2], [3], [4]], "hands": [[5], [6], [7]] } }),
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "preset": "logik",
                     "deal": { "rows": [[1], [2], [3], [4]], "hands": [[5, 6, 7, 8, 9, 10, 11, 12, 13, 14], [15, 16, 17, 18, 19, 20, 21, 22, 23, 24]] } }),
            "invalid_deal",
        ),
    ];
    for (body, code) in refused {
        api.post("/v1/games", Some(&host.token), &body)
            .assert_problem(422, code);
    }
    let taktik = api.create_game(
        &host,
        &json!({ "ruleset": "6-nimmt", "players": 3, "preset": "taktik" }),
    );
    assert_eq!(taktik["options"]["deck"], "tactical");
    // The view echoes the options in the form they are created with, defaults filled in.
    let x = api.create_game(&host, &json!({ "ruleset": "x-nimmt", "players": 3 }));
    assert_eq!(
        x["options"],
        json!({ "deals": 2 }),
        "x-nimmt plays two deals by default"
    );
    let x = api.create_game(
        &host,
        &json!({ "ruleset": "x-nimmt", "players": 3, "options": { "deals": 3 } }),
    );
    assert_eq!(x["options"], json!({ "deals": 3 }));
    let nos = api.create_game(
        &host,
        &json!({ "ruleset": "nimm-oder-schieb", "players": 3, "options": { "games": 2, "chips": "open" } }),
    );
    assert_eq!(nos["options"], json!({ "games": 2, "chips": "open" }));
    let nos = api.create_game(
        &host,
        &json!({ "ruleset": "nimm-oder-schieb", "players": 3 }),
    );
    assert_eq!(nos["options"], json!({ "games": 1, "chips": "hidden" }));
    let eleven = api.create_game(&host, &json!({ "ruleset": "11-nimmt", "players": 3 }));
    assert_eq!(eleven["options"], json!({ "end": { "points": 66 } }));
    assert_eq!(
        taktik["options"],
        json!({ "deck": "tactical", "deal": "random", "placement": "right", "end": { "points": 66 } })
    );
    let r = api.get("/v1/rulesets", None);
    let names: Vec<&str> = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["6-nimmt", "11-nimmt", "x-nimmt", "nimm-oder-schieb"]
    );
    let nos = &r.body["items"][3];
    assert_eq!(nos["players"], json!({ "min": 3, "max": 7 }));
    assert_eq!(nos["cards"].as_array().unwrap().len(), 33);
    assert_eq!(
        nos["cards"][20],
        json!({ "value": 23, "suit": "diamonds", "rank": "10", "label": "10♦" })
    );
    assert_eq!(
        nos["starting_chips"],
        json!({ "3": 11, "4": 11, "5": 11, "6": 9, "7": 7 })
    );
    assert!(nos.get("bullheads").is_none());
    assert_eq!(r.body["items"][1]["bullheads"]["55"], 5);
    assert_eq!(
        r.body["items"][1]["bullheads"].as_object().unwrap().len(),
        100
    );
    assert_eq!(r.body["items"][2]["hand_size"], 8);
    assert_eq!(r.body["items"][2]["players"], json!({ "min": 2, "max": 4 }));
}

fn the_expert_plays_for_resigned_seats_when_configured(backend: Backend) {
    let server = crate::support::TestServer::start_with_env(
        crate::support::TestDb::new(backend),
        backend,
        &[("STAND_IN_STRATEGY", "expert")],
    );
    let api = server.client();
    let anna = api.guest("anna");
    let ben = api.guest("ben");
    let game = start_game(
        &api,
        &[anna.clone(), ben.clone()],
        &json!({ "ruleset": "nimm-oder-schieb", "players": 3 }),
        &["expert"],
    );
    let view = api.ok(&ben, &game, &json!({ "type": "resign" }));
    assert_eq!(view["seats"][1]["strategy"], "expert", "{}", view["seats"]);
    assert_eq!(view["seats"][2]["strategy"], "expert");
    let end = play_randomly(&api, &[anna], &game, 9);
    assert_eq!(end["status"], "finished");
}

both!(
    the_expert_plays_for_resigned_seats_when_configured,
    every_ruleset_and_preset_plays_to_the_end,
    x_nimmt_keeps_cards_stacks_x_rows_and_hides_stacks_and_hands,
    options_are_checked_per_ruleset,
);
