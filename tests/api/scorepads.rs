//! Score pads for all four rulesets and the Nimm oder schieb hand calculator, through HTTP.

use std::sync::{Arc, Barrier};

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, Reply, TestServer, raw_execute, raw_rows};

const CALCULATOR: &str = "/v1/rulesets/nimm-oder-schieb/score";

/// The seed's worked example (seed 000): 6, 8 9 10, 13 14 15, 23 24, 33 with 6 chips.
const SEED_VALUES: [u64; 10] = [6, 8, 9, 10, 13, 14, 15, 23, 24, 33];
const SEED_LABELS: [&str; 10] = ["6♣", "8♣", "9♣", "10♣", "K♣", "A♦", "2♦", "10♦", "J♦", "7♥"];

fn delete(api: &Api, path: &str, token: Option<&str>, headers: &[(&str, &str)]) -> Reply {
    let mut req = api.http.delete(api.url(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        body,
        text,
    }
}

fn score(api: &Api, p: &Player, body: &Value) -> Reply {
    api.post(CALCULATOR, Some(&p.token), body)
}

fn values_of(runs: &Value) -> Vec<Vec<u64>> {
    runs.as_array()
        .unwrap()
        .iter()
        .map(|run| {
            run.as_array()
                .unwrap()
                .iter()
                .map(|c| c["value"].as_u64().unwrap())
                .collect()
        })
        .collect()
}

/// Creates a pad that must be accepted; returns its body.
fn create(api: &Api, p: &Player, body: &Value) -> Value {
    let r = api.post("/v1/scorepads", Some(&p.token), body);
    assert_eq!(r.status, 201, "{body}: {}", r.text);
    let id = r.body["id"].as_str().unwrap();
    assert_eq!(
        r.header("location").as_deref(),
        Some(format!("/v1/scorepads/{id}").as_str())
    );
    assert_eq!(r.header("etag").as_deref(), Some("\"1\""));
    r.body
}

fn refused_pad(api: &Api, p: &Player, body: &Value, code: &str) -> Reply {
    let r = api.post("/v1/scorepads", Some(&p.token), body);
    r.assert_problem(422, code);
    r
}

fn id_of(pad: &Value) -> String {
    pad["id"].as_str().unwrap().to_owned()
}

fn round(api: &Api, p: &Player, pad: &str, scores: &Value) -> Reply {
    api.post(
        &format!("/v1/scorepads/{pad}/rounds"),
        Some(&p.token),
        &json!({ "scores": scores }),
    )
}

/// Records a round that must be accepted; returns the standings.
fn ok_round(api: &Api, p: &Player, pad: &str, scores: &Value) -> Value {
    let r = round(api, p, pad, scores);
    assert_eq!(r.status, 200, "{scores}: {}", r.text);
    assert_eq!(
        r.header("etag"),
        Some(format!("\"{}\"", r.body["version"])),
        "ETag is the version"
    );
    r.body
}

fn refused_round(api: &Api, p: &Player, pad: &str, scores: &Value, code: &str) -> Reply {
    let r = round(api, p, pad, scores);
    r.assert_problem(422, code);
    r
}

fn take_back(api: &Api, p: &Player, pad: &str) -> Reply {
    delete(
        api,
        &format!("/v1/scorepads/{pad}/rounds/last"),
        Some(&p.token),
        &[],
    )
}

fn get(api: &Api, p: &Player, pad: &str) -> Value {
    let r = api.get(&format!("/v1/scorepads/{pad}"), Some(&p.token));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body
}

fn calculator_scores_the_seed_example(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("dan");
    let by_values = score(&api, &p, &json!({ "cards": SEED_VALUES, "chips": 6 }));
    assert_eq!(by_values.status, 200, "{}", by_values.text);
    assert_eq!(by_values.body["total"], 77);
    assert_eq!(by_values.body["card_points"], 83);
    assert_eq!(by_values.body["chips"], 6);
    assert_eq!(
        values_of(&by_values.body["runs"]),
        vec![
            vec![6],
            vec![8, 9, 10],
            vec![13, 14, 15],
            vec![23, 24],
            vec![33]
        ]
    );
    assert_eq!(
        by_values.body["runs"][3],
        json!([
            { "value": 23, "suit": "diamonds", "rank": "10", "label": "10♦" },
            { "value": 24, "suit": "diamonds", "rank": "J", "label": "J♦" }
        ])
    );
    assert_eq!(
        by_values.body["runs"][2][0],
        json!({ "value": 13, "suit": "clubs", "rank": "K", "label": "K♣" }),
        "a run crosses from clubs to diamonds"
    );
    assert_eq!(by_values.body["runs"][4][0]["label"], "7♥");

    let by_labels = score(&api, &p, &json!({ "cards": SEED_LABELS, "chips": 6 }));
    assert_eq!(by_labels.status, 200, "{}", by_labels.text);
    assert_eq!(by_labels.body, by_values.body, "labels score like values");

    // Mixed and in any order.
    let mixed = json!([33, "J♦", 6, "10♦", 15, "A♦", "K♣", 10, "9♣", 8]);
    let r = score(&api, &p, &json!({ "cards": mixed, "chips": 6 }));
    assert_eq!(r.body, by_values.body, "{}", r.text);

    // No cards at all, and every card of a long run.
    let r = score(&api, &p, &json!({ "cards": [], "chips": 11 }));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (&r.body["runs"], &r.body["card_points"], &r.body["total"]),
        (&json!([]), &json!(0), &json!(-11))
    );
    let run: Vec<u64> = (3..=26).collect();
    let r = score(&api, &p, &json!({ "cards": run, "chips": 55 }));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(values_of(&r.body["runs"]), vec![run]);
    assert_eq!(
        (&r.body["card_points"], &r.body["total"]),
        (&json!(3), &json!(-52))
    );
}

fn calculator_refusals(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("dan");
    let refused = |body: Value, detail_has: &[&str]| {
        let r = score(&api, &p, &body);
        r.assert_problem(422, "validation_failed");
        let detail = r.body["detail"].as_str().unwrap().to_owned();
        for part in detail_has {
            assert!(
                detail.contains(part),
                "{body}: detail {detail:?} should name {part:?}"
            );
        }
    };
    refused(
        json!({ "cards": [6, "11♣"], "chips": 0 }),
        &["cards[1]", "unknown label", "11♣"],
    );
    refused(
        json!({ "cards": ["10♥"], "chips": 0 }),
        &["unknown label", "10♥"],
    );
    refused(
        json!({ "cards": ["2♣"], "chips": 0 }),
        &["unknown label", "2♣"],
    );
    refused(
        json!({ "cards": ["Q♠"], "chips": 0 }),
        &["unknown label", "Q♠"],
    );
    refused(json!({ "cards": [""], "chips": 0 }), &["unknown label"]);
    refused(
        json!({ "cards": [2], "chips": 0 }),
        &["cards[0]", "out of range", "2"],
    );
    refused(
        json!({ "cards": [3, 36], "chips": 0 }),
        &["cards[1]", "out of range", "36"],
    );
    refused(
        json!({ "cards": [-5], "chips": 0 }),
        &["out of range", "-5"],
    );
    refused(
        json!({ "cards": [3.5], "chips": 0 }),
        &["cards[0]", "whole number"],
    );
    refused(json!({ "cards": [true], "chips": 0 }), &["cards[0]"]);
    refused(json!({ "cards": [[3]], "chips": 0 }), &["cards[0]"]);
    refused(
        json!({ "cards": [23, 5, "10♦"], "chips": 0 }),
        &["cards[2]", "duplicate", "10♦", "cards[0]"],
    );
    refused(json!({ "cards": [7, 7], "chips": 0 }), &["duplicate", "7♣"]);
    let too_many: Vec<u64> = (3..=27).collect();
    refused(
        json!({ "cards": too_many, "chips": 0 }),
        &["at most 24", "25"],
    );
    refused(json!({ "cards": [3], "chips": -1 }), &["chips", "-1"]);
    refused(json!({ "cards": [3], "chips": 56 }), &["chips", "56"]);
    refused(json!({ "cards": [3], "chips": 1.5 }), &["chips"]);
    refused(json!({ "cards": [3] }), &["chips"]);
    refused(json!({ "chips": 3 }), &["cards"]);
    refused(
        json!({ "cards": [3], "chips": 1, "bonus": 2 }),
        &["unknown field", "bonus"],
    );
    refused(json!([[3], 1]), &["object"]);
    let malformed = api.post_raw(
        CALCULATOR,
        Some(&p.token),
        b"{\"cards\": [3".to_vec(),
        "application/json",
    );
    assert_eq!(malformed.status, 400, "{}", malformed.text);
    let anonymous = api.post(CALCULATOR, None, &json!({ "cards": [3], "chips": 0 }));
    anonymous.assert_problem(401, "unauthorized");
    assert!(anonymous.header("www-authenticate").is_some());
    let forged = api.post(
        CALCULATOR,
        Some("not.a.jwt"),
        &json!({ "cards": [3], "chips": 0 }),
    );
    forged.assert_problem(401, "unauthorized");
}

fn six_nimmt_pad_to_points(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("keeper");
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "6-nimmt", "players": ["Anna", "Ben", "Carla"], "end": { "points": 33 } }),
    );
    assert_eq!(pad["ruleset"], "6-nimmt");
    assert_eq!(pad["players"], json!(["Anna", "Ben", "Carla"]));
    assert_eq!(pad["end"], json!({ "points": 33 }));
    assert_eq!(pad["rounds"], json!([]));
    assert_eq!(pad["totals"], json!([0, 0, 0]));
    assert_eq!(pad["finished"], false);
    assert_eq!(pad["winners"], Value::Null);
    assert_eq!(pad["version"], 1);
    let id = id_of(&pad);
    assert_eq!(get(&api, &p, &id), pad, "GET shows what POST answered");

    let s = ok_round(&api, &p, &id, &json!([10, 0, 22]));
    assert_eq!(s["totals"], json!([10, 0, 22]));
    assert_eq!(s["rounds"], json!([[10, 0, 22]]));
    assert_eq!(s["version"], 2);
    assert_eq!(s["finished"], false);
    assert_eq!(s["winners"], Value::Null);
    assert_eq!(
        s["standings"],
        json!([
            { "place": 1, "player": 1, "name": "Ben", "total": 0 },
            { "place": 2, "player": 0, "name": "Anna", "total": 10 },
            { "place": 3, "player": 2, "name": "Carla", "total": 22 }
        ])
    );
    // Zero is an entry. (With 3 players at least 14 of the 34 cards in play are taken.)
    let s = ok_round(&api, &p, &id, &json!([0, 14, 0]));
    assert_eq!(s["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(s["totals"], json!([10, 14, 22]));
    let s = ok_round(&api, &p, &id, &json!([12, 5, 10]));
    assert_eq!(s["totals"], json!([22, 19, 32]));
    assert_eq!(s["finished"], false, "32 is below 33");
    let s = ok_round(&api, &p, &id, &json!([1, 2, 11]));
    assert_eq!(s["totals"], json!([23, 21, 43]));
    assert_eq!(s["finished"], true, "Carla passed 33");
    assert_eq!(s["winners"], json!([1]));
    assert_eq!(s["version"], 5);
    assert_eq!(get(&api, &p, &id), s);

    // Finished: nothing more is written, until the last round is taken back.
    refused_round(&api, &p, &id, &json!([0, 0, 0]), "pad_finished");
    assert_eq!(get(&api, &p, &id)["version"], 5);
    let r = take_back(&api, &p, &id);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("etag").as_deref(), Some("\"6\""));
    assert_eq!(
        r.body["finished"], false,
        "taking the last round back reopens"
    );
    assert_eq!(r.body["winners"], Value::Null);
    assert_eq!(r.body["totals"], json!([22, 19, 32]));
    assert_eq!(r.body["rounds"].as_array().unwrap().len(), 3);
    let s = ok_round(&api, &p, &id, &json!([0, 30, 0]));
    assert_eq!(s["totals"], json!([22, 49, 32]));
    assert_eq!(s["finished"], true);
    assert_eq!(s["winners"], json!([0]));
    assert_eq!(get(&api, &p, &id), s);
}

fn six_nimmt_refusals(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("keeper");
    let two = json!(["Anna", "Ben"]);
    // Creation.
    let pad = create(&api, &p, &json!({ "ruleset": "6-nimmt", "players": two }));
    assert_eq!(pad["end"], json!({ "points": 66 }), "the default end");
    for points in [33, 100] {
        create(
            &api,
            &p,
            &json!({ "ruleset": "6-nimmt", "players": two, "end": { "points": points } }),
        );
    }
    create(
        &api,
        &p,
        &json!({ "ruleset": "6-nimmt", "players": two, "end": { "rounds": 50 } }),
    );
    for end in [
        json!({ "points": 50 }),
        json!({ "points": 0 }),
        json!({ "rounds": 0 }),
        json!({ "rounds": 51 }),
    ] {
        refused_pad(
            &api,
            &p,
            &json!({ "ruleset": "6-nimmt", "players": two, "end": end }),
            "invalid_end",
        );
    }
    let ten: Vec<String> = (0..10).map(|i| format!("P{i}")).collect();
    create(&api, &p, &json!({ "ruleset": "6-nimmt", "players": ten }));
    let eleven: Vec<String> = (0..11).map(|i| format!("P{i}")).collect();
    for players in [
        json!(["Solo"]),
        json!(eleven),
        json!(["Anna", "anna"]),
        json!(["Anna", ""]),
        json!(["Anna", "x".repeat(33)]),
    ] {
        refused_pad(
            &api,
            &p,
            &json!({ "ruleset": "6-nimmt", "players": players }),
            "invalid_players",
        );
    }
    for bad in [
        json!({ "ruleset": "7-nimmt", "players": two }),
        json!({ "ruleset": "6-nimmt", "players": two, "colour": "red" }),
        json!({ "ruleset": "6-nimmt", "players": two, "end": { "points": 66, "rounds": 2 } }),
        json!({ "ruleset": "6-nimmt", "players": two, "end": { "points": -66 } }),
        json!({ "ruleset": "6-nimmt", "players": "Anna, Ben" }),
        json!({ "players": two }),
    ] {
        refused_pad(&api, &p, &bad, "validation_failed");
    }
    let malformed = api.post_raw(
        "/v1/scorepads",
        Some(&p.token),
        b"{\"ruleset\":".to_vec(),
        "application/json",
    );
    assert_eq!(malformed.status, 400, "{}", malformed.text);

    // Rounds.
    let id = id_of(&pad);
    take_back(&api, &p, &id).assert_problem(422, "no_round_to_take_back");
    let r = refused_round(&api, &p, &id, &json!([-1, 5]), "impossible_round");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("an entry is never below 0"),
        "{}",
        r.text
    );
    // 2 players: 24 cards in play, of which 4 to 20 are taken (at most the 20 with the
    // most bullheads, 79).
    let r = refused_round(&api, &p, &id, &json!([37, 43]), "impossible_round");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("a round gives between 4 and 79 in all"),
        "{}",
        r.text
    );
    refused_round(&api, &p, &id, &json!([80, 0]), "impossible_round");
    refused_round(&api, &p, &id, &json!([0, 0]), "impossible_round");
    refused_round(&api, &p, &id, &json!([5]), "wrong_number_of_scores");
    refused_round(&api, &p, &id, &json!([5, 5, 5]), "wrong_number_of_scores");
    refused_round(&api, &p, &id, &json!([]), "wrong_number_of_scores");
    for bad in [
        json!([1.5, 2]),
        json!(["1", 2]),
        json!([null, 2]),
        json!([3_000_000_000_i64, 0]),
    ] {
        refused_round(&api, &p, &id, &bad, "validation_failed");
    }
    let extra = api.post(
        &format!("/v1/scorepads/{id}/rounds"),
        Some(&p.token),
        &json!({ "scores": [1, 2], "round": 1 }),
    );
    extra.assert_problem(422, "validation_failed");
    assert_eq!(get(&api, &p, &id)["version"], 1, "refusals change nothing");
    // The bound itself is possible (played in crates/rules/tests/pad_bounds.rs).
    let s = ok_round(&api, &p, &id, &json!([79, 0]));
    assert_eq!(s["totals"], json!([79, 0]));
    assert_eq!(s["finished"], true, "66 reached");
    assert_eq!(s["winners"], json!([1]));
}

fn eleven_nimmt_pad(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("keeper");
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "11-nimmt", "players": ["Anna", "Ben"] }),
    );
    assert_eq!(pad["end"], json!({ "points": 66 }));
    let nine: Vec<String> = (0..9).map(|i| format!("P{i}")).collect();
    create(&api, &p, &json!({ "ruleset": "11-nimmt", "players": nine }));
    let ten: Vec<String> = (0..10).map(|i| format!("P{i}")).collect();
    refused_pad(
        &api,
        &p,
        &json!({ "ruleset": "11-nimmt", "players": ten }),
        "invalid_players",
    );
    for end in [
        json!({ "points": 0 }),
        json!({ "points": 1000 }),
        json!({ "rounds": 51 }),
    ] {
        refused_pad(
            &api,
            &p,
            &json!({ "ruleset": "11-nimmt", "players": ["A", "B"], "end": end }),
            "invalid_end",
        );
    }
    // Any limit 1–999, not only the 6-nimmt board's three.
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "11-nimmt", "players": ["Anna", "Ben"], "end": { "points": 40 } }),
    );
    let id = id_of(&pad);
    let r = refused_round(&api, &p, &id, &json!([70, 8]), "impossible_round");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("a round gives between 4 and 77 in all"),
        "{}",
        r.text
    );
    refused_round(&api, &p, &id, &json!([0, -2]), "impossible_round");
    let s = ok_round(&api, &p, &id, &json!([30, 20]));
    assert_eq!(s["finished"], false);
    let s = ok_round(&api, &p, &id, &json!([12, 25]));
    assert_eq!(s["totals"], json!([42, 45]));
    assert_eq!(s["finished"], true);
    assert_eq!(s["winners"], json!([0]));
    // The bound is accepted: the 20 cards with the most bullheads of 1–100.
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "11-nimmt", "players": ["Anna", "Ben"], "end": { "rounds": 1 } }),
    );
    let s = ok_round(&api, &p, &id_of(&pad), &json!([70, 7]));
    assert_eq!((&s["finished"], &s["winners"]), (&json!(true), &json!([1])));
}

fn x_nimmt_pad(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("keeper");
    refused_pad(
        &api,
        &p,
        &json!({ "ruleset": "x-nimmt", "players": ["A", "B"], "end": { "points": 66 } }),
        "invalid_end",
    );
    refused_pad(
        &api,
        &p,
        &json!({ "ruleset": "x-nimmt", "players": ["A", "B", "C", "D", "E"] }),
        "invalid_players",
    );
    refused_pad(
        &api,
        &p,
        &json!({ "ruleset": "x-nimmt", "players": ["A"] }),
        "invalid_players",
    );
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "x-nimmt", "players": ["Anna", "Ben"] }),
    );
    assert_eq!(pad["end"], json!({ "rounds": 2 }), "two deals by default");
    let id = id_of(&pad);
    // 2 players: 19 cards in play, at most 16 off the table, the X stack counted twice:
    // a round scores at most twice the 16 highest bullhead values, 136.
    let r = refused_round(&api, &p, &id, &json!([300, 0]), "impossible_round");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("Anna cannot have 300 bullheads in one round: in X nimmt! with 2 players, one player gets between 0 and 136"),
        "{}",
        r.text
    );
    refused_round(&api, &p, &id, &json!([100, 37]), "impossible_round");
    refused_round(&api, &p, &id, &json!([-1, 0]), "impossible_round");
    ok_round(&api, &p, &id, &json!([100, 36]));
    let s = ok_round(&api, &p, &id, &json!([0, 0]));
    assert_eq!(s["finished"], true, "after two rounds");
    assert_eq!(s["winners"], json!([1]));

    // A shared win.
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "x-nimmt", "players": ["Anna", "Ben", "Carla", "Dan"] }),
    );
    let id = id_of(&pad);
    let s = ok_round(&api, &p, &id, &json!([3, 7, 3, 10]));
    assert_eq!(s["finished"], false);
    let s = ok_round(&api, &p, &id, &json!([4, 1, 4, 1]));
    assert_eq!(s["totals"], json!([7, 8, 7, 11]));
    assert_eq!(s["finished"], true);
    assert_eq!(
        s["winners"],
        json!([0, 2]),
        "equal lowest totals share the win"
    );
    let places: Vec<(u64, u64)> = s["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["place"].as_u64().unwrap(), e["player"].as_u64().unwrap()))
        .collect();
    assert_eq!(places, vec![(1, 0), (1, 2), (3, 1), (4, 3)]);
}

fn nimm_oder_schieb_pad(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("keeper");
    refused_pad(
        &api,
        &p,
        &json!({ "ruleset": "nimm-oder-schieb", "players": ["A", "B"] }),
        "invalid_players",
    );
    let eight: Vec<String> = (0..8).map(|i| format!("P{i}")).collect();
    refused_pad(
        &api,
        &p,
        &json!({ "ruleset": "nimm-oder-schieb", "players": eight }),
        "invalid_players",
    );
    refused_pad(
        &api,
        &p,
        &json!({ "ruleset": "nimm-oder-schieb", "players": ["A", "B", "C"], "end": { "points": 100 } }),
        "invalid_end",
    );
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "nimm-oder-schieb", "players": ["Anna", "Ben", "Carla"], "end": { "rounds": 2 } }),
    );
    let id = id_of(&pad);
    // 3 players hold 33 chips together: an entry lies within 3 − 33 ..= 323, a round's sum
    // within 3 − 33 ..= 564 − 33.
    refused_round(&api, &p, &id, &json!([-34, 40, 40]), "impossible_round");
    refused_round(&api, &p, &id, &json!([565, -33, 0]), "impossible_round");
    let r = refused_round(&api, &p, &id, &json!([-33, 0, 0]), "impossible_round");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("between -30 and 323"),
        "{}",
        r.text
    );
    refused_round(&api, &p, &id, &json!([400, 100, 32]), "impossible_round");
    refused_round(&api, &p, &id, &json!([324, 37, -1]), "impossible_round");
    // Entries within the bounds that no split of the cards and chips gives at once: two
    // players with 11 chips each beside a hand of 300 points.
    let r = refused_round(&api, &p, &id, &json!([-11, -11, 300]), "impossible_round");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("beside the other entries"),
        "{}",
        r.text
    );
    refused_round(&api, &p, &id, &json!([77, 60]), "wrong_number_of_scores");
    // The seed's hand (77) beside two others; negative entries are normal here.
    let s = ok_round(&api, &p, &id, &json!([77, 60, -5]));
    assert_eq!(s["finished"], false);
    let s = ok_round(&api, &p, &id, &json!([-30, 0, 0]));
    assert_eq!(s["totals"], json!([47, 60, -5]));
    assert_eq!(s["finished"], true);
    assert_eq!(s["winners"], json!([2]));
    let r = take_back(&api, &p, &id);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (&r.body["finished"], &r.body["totals"]),
        (&json!(false), &json!([77, 60, -5]))
    );
    // The extremes played in crates/rules/tests/pad_bounds.rs.
    let s = ok_round(&api, &p, &id, &json!([323, 38, -1]));
    assert_eq!(s["totals"], json!([400, 98, -6]));

    // One game by default; a shared win; seven players hold 49 chips.
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "nimm-oder-schieb", "players": ["Anna", "Ben", "Carla"] }),
    );
    assert_eq!(pad["end"], json!({ "rounds": 1 }));
    let s = ok_round(&api, &p, &id_of(&pad), &json!([20, 20, 30]));
    assert_eq!(
        (&s["finished"], &s["winners"]),
        (&json!(true), &json!([0, 1]))
    );
    let seven: Vec<String> = (0..7).map(|i| format!("P{i}")).collect();
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "nimm-oder-schieb", "players": seven }),
    );
    let id = id_of(&pad);
    refused_round(
        &api,
        &p,
        &id,
        &json!([-50, 0, 0, 0, 0, 0, 60]),
        "impossible_round",
    );
    refused_round(
        &api,
        &p,
        &id,
        &json!([-49, 0, 0, 0, 0, 0, 3]),
        "impossible_round",
    );
    refused_round(
        &api,
        &p,
        &id,
        &json!([-47, 0, 0, 0, 0, 0, 1]),
        "impossible_round",
    );
    // One player with all 49 chips and one run from 3: 3 − 49.
    let s = ok_round(&api, &p, &id, &json!([-46, 0, 0, 0, 0, 0, 0]));
    assert_eq!(s["winners"], json!([0]));
}

fn pads_belong_to_their_creator(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let owner = api.guest("owner");
    let other = api.guest("other");
    let pad = create(
        &api,
        &owner,
        &json!({ "ruleset": "6-nimmt", "players": ["Anna", "Ben"] }),
    );
    let id = id_of(&pad);
    ok_round(&api, &owner, &id, &json!([1, 3]));
    let unknown = uuid::Uuid::new_v4().to_string();
    let missing = api.get(&format!("/v1/scorepads/{unknown}"), Some(&other.token));
    missing.assert_problem(404, "not_found");
    let foreign = api.get(&format!("/v1/scorepads/{id}"), Some(&other.token));
    foreign.assert_problem(404, "not_found");
    assert_eq!(
        foreign.body, missing.body,
        "another's pad looks exactly like no pad"
    );
    round(&api, &other, &id, &json!([1, 3])).assert_problem(404, "not_found");
    take_back(&api, &other, &id).assert_problem(404, "not_found");
    api.get("/v1/scorepads/not-a-uuid", Some(&owner.token))
        .assert_problem(404, "not_found");
    assert_eq!(
        get(&api, &owner, &id)["version"],
        2,
        "the other account changed nothing"
    );

    // No token, no pad.
    for r in [
        api.post(
            "/v1/scorepads",
            None,
            &json!({ "ruleset": "6-nimmt", "players": ["A", "B"] }),
        ),
        api.get(&format!("/v1/scorepads/{id}"), None),
        round(
            &api,
            &Player {
                token: "not.a.jwt".into(),
                ..owner.clone()
            },
            &id,
            &json!([1, 3]),
        ),
        api.post(
            &format!("/v1/scorepads/{id}/rounds"),
            None,
            &json!({ "scores": [1, 3] }),
        ),
        delete(&api, &format!("/v1/scorepads/{id}/rounds/last"), None, &[]),
    ] {
        r.assert_problem(401, "unauthorized");
        assert!(r.header("www-authenticate").is_some());
    }
    assert_eq!(get(&api, &owner, &id)["rounds"], json!([[1, 3]]));
}

fn if_match_pins_the_version(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("keeper");
    let id = id_of(&create(
        &api,
        &p,
        &json!({ "ruleset": "6-nimmt", "players": ["Anna", "Ben"] }),
    ));
    let path = format!("/v1/scorepads/{id}/rounds");
    let r = api.post_with(
        &path,
        Some(&p.token),
        &json!({ "scores": [1, 3] }),
        &[("If-Match", "\"1\"")],
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let stale = api.post_with(
        &path,
        Some(&p.token),
        &json!({ "scores": [1, 3] }),
        &[("If-Match", "\"1\"")],
    );
    stale.assert_problem(409, "version_conflict");
    assert_eq!(stale.body["current_version"], 2);
    let bad = api.post_with(
        &path,
        Some(&p.token),
        &json!({ "scores": [1, 3] }),
        &[("If-Match", "soon")],
    );
    bad.assert_problem(400, "invalid_if_match");
    let last = format!("/v1/scorepads/{id}/rounds/last");
    delete(&api, &last, Some(&p.token), &[("If-Match", "\"1\"")])
        .assert_problem(409, "version_conflict");
    let r = delete(&api, &last, Some(&p.token), &[("If-Match", "\"2\"")]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (&r.body["version"], &r.body["rounds"]),
        (&json!(3), &json!([]))
    );
}

fn concurrent_rounds_are_all_recorded(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("keeper");
    let id = id_of(&create(
        &api,
        &p,
        &json!({ "ruleset": "6-nimmt", "players": ["Anna", "Ben"], "end": { "rounds": 50 } }),
    ));
    let n = 12;
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (api, p, id, barrier) = (api.clone(), p.clone(), id.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                round(&api, &p, &id, &json!([i, 4]))
            })
        })
        .collect();
    for h in handles {
        let r = h.join().unwrap();
        assert_eq!(r.status, 200, "{}", r.text);
    }
    let pad = get(&api, &p, &id);
    assert_eq!(pad["version"], 1 + n);
    let mut firsts: Vec<u64> = pad["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_u64().unwrap())
        .collect();
    firsts.sort_unstable();
    assert_eq!(firsts, (0..n as u64).collect::<Vec<_>>(), "no round lost");
    assert_eq!(pad["totals"][1], 4 * n);
}

#[derive(diesel::QueryableByName)]
struct EventType {
    #[diesel(sql_type = diesel::sql_types::Text)]
    event_type: String,
}

fn event_types(backend: Backend, url: &str) -> Vec<String> {
    let q = "SELECT event_type FROM scorepad_events ORDER BY pad_id, seq";
    let rows: Vec<EventType> = raw_rows(backend, url, q);
    rows.into_iter().map(|r| r.event_type).collect()
}

fn corrections_are_events_and_events_are_append_only(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("keeper");
    let id = id_of(&create(
        &api,
        &p,
        &json!({ "ruleset": "6-nimmt", "players": ["Anna", "Ben"] }),
    ));
    ok_round(&api, &p, &id, &json!([1, 3]));
    assert_eq!(take_back(&api, &p, &id).status, 200);
    let url = server.db.url.clone();
    assert_eq!(
        event_types(backend, &url),
        ["pad_created", "round_recorded", "round_taken_back"]
    );
    assert!(
        raw_execute(
            backend,
            &url,
            "UPDATE scorepad_events SET event_type = 'forged'"
        )
        .is_err()
    );
    assert!(raw_execute(backend, &url, "DELETE FROM scorepad_events").is_err());
    assert_eq!(event_types(backend, &url).len(), 3);
    // The pad survives a restart: it is rebuilt from its events.
    let server = server.restart();
    let api = server.client();
    let pad = get(&api, &p, &id);
    assert_eq!((&pad["version"], &pad["rounds"]), (&json!(3), &json!([])));
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

fn count(backend: Backend, url: &str, q: &str) -> i64 {
    let rows: Vec<Count> = raw_rows(backend, url, q);
    rows[0].n
}

/// Asserts a 429 with the code and a `Retry-After` of at least a second.
fn assert_limited(r: &Reply, code: &str) {
    r.assert_problem(429, code);
    let wait: u64 = r
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no Retry-After: {:?}", r.headers));
    assert!(wait >= 1, "Retry-After {wait}");
}

fn pads_and_rounds_count_against_the_limits(backend: Backend) {
    let server = TestServer::start_with_env(
        crate::support::TestDb::new(backend),
        backend,
        &[
            ("LIMIT_GAMES_PER_HOUR", "3"),
            ("LIMIT_COMMANDS_PER_MINUTE", "4"),
        ],
    );
    let api = server.client();
    let p = api.guest("counter");
    let body = json!({ "ruleset": "6-nimmt", "players": ["Anna", "Ben"], "end": { "rounds": 50 } });
    // A refused pad is not counted; three pads are, the fourth is over the hourly limit.
    refused_pad(
        &api,
        &p,
        &json!({ "ruleset": "6-nimmt", "players": ["Anna"] }),
        "invalid_players",
    );
    let pads: Vec<String> = (0..3).map(|_| id_of(&create(&api, &p, &body))).collect();
    assert_limited(
        &api.post("/v1/scorepads", Some(&p.token), &body),
        "too_many_scorepads",
    );
    // Counted per account, and apart from games.
    let other = api.guest("other");
    create(&api, &other, &body);
    let game = api.post(
        "/v1/games",
        Some(&p.token),
        &json!({ "ruleset": "6-nimmt", "players": 2 }),
    );
    assert_eq!(game.status, 201, "{}", game.text);
    // Rounds and corrections are commands: four in the minute, then 429, and the pad is
    // unchanged by the refusal.
    ok_round(&api, &p, &pads[0], &json!([1, 3]));
    ok_round(&api, &p, &pads[0], &json!([2, 5]));
    assert_eq!(take_back(&api, &p, &pads[0]).status, 200);
    ok_round(&api, &p, &pads[1], &json!([4, 1]));
    assert_limited(
        &round(&api, &p, &pads[2], &json!([1, 3])),
        "too_many_commands",
    );
    assert_limited(&take_back(&api, &p, &pads[0]), "too_many_commands");
    assert_eq!(get(&api, &p, &pads[2])["version"], 1);
    assert_eq!(get(&api, &p, &pads[0])["version"], 4);
    // Another account's budget is its own.
    let theirs = id_of(&create(&api, &other, &body));
    ok_round(&api, &other, &theirs, &json!([1, 3]));
}

fn a_deleted_accounts_pads_and_rounds_are_deleted_with_it(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let owner = api.account("padowner");
    let other = api.guest("keeper");
    let body = json!({ "ruleset": "6-nimmt", "players": ["Anna", "Ben"], "end": { "rounds": 50 } });
    let mine: Vec<String> = (0..2)
        .map(|_| id_of(&create(&api, &owner, &body)))
        .collect();
    ok_round(&api, &owner, &mine[0], &json!([1, 3]));
    ok_round(&api, &owner, &mine[0], &json!([2, 2]));
    assert_eq!(take_back(&api, &owner, &mine[0]).status, 200);
    ok_round(&api, &owner, &mine[1], &json!([5, 1]));
    let theirs = id_of(&create(&api, &other, &body));
    ok_round(&api, &other, &theirs, &json!([1, 3]));
    let url = server.db.url.clone();
    let owned = format!(
        "SELECT count(*) AS n FROM scorepads WHERE owner = '{}'",
        owner.id
    );
    let rounds =
        |pad: &str| format!("SELECT count(*) AS n FROM scorepad_events WHERE pad_id = '{pad}'");
    assert_eq!(count(backend, &url, &owned), 2);
    assert_eq!(count(backend, &url, &rounds(&mine[0])), 4);

    let r = api
        .http
        .delete(api.url("/v1/me"))
        .bearer_auth(&owner.token)
        .json(&json!({ "password": "password-of-padowner" }))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);

    for pad in &mine {
        let path = format!("/v1/scorepads/{pad}");
        api.get(&path, Some(&owner.token))
            .assert_problem(401, "unauthorized");
        api.get(&path, Some(&other.token))
            .assert_problem(404, "not_found");
        assert_eq!(count(backend, &url, &rounds(pad)), 0, "rounds of {pad}");
    }
    assert_eq!(count(backend, &url, &owned), 0);
    // Another account's pad stays, and stays append-only.
    assert_eq!(get(&api, &other, &theirs)["version"], 2);
    assert_eq!(count(backend, &url, &rounds(&theirs)), 2);
    assert!(raw_execute(backend, &url, "DELETE FROM scorepad_events").is_err());
    assert_eq!(count(backend, &url, &rounds(&theirs)), 2);
}

/// The refusal of an impossible round is a sentence with the player's name and the bounds,
/// in the language asked for; the code stays `impossible_round`.
fn an_impossible_round_reads_as_a_sentence_in_both_languages(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let p = api.guest("keeper");
    let pad = create(
        &api,
        &p,
        &json!({ "ruleset": "6-nimmt", "players": ["Anna", "Ben", "Carla", "Dan"] }),
    );
    let id = id_of(&pad);
    let path = format!("/v1/scorepads/{id}/rounds");
    let body = json!({ "scores": [300, 0, 0, 0] });
    let en = api.post_with(&path, Some(&p.token), &body, &[("Accept-Language", "en")]);
    en.assert_problem(422, "impossible_round");
    assert_eq!(
        en.body["detail"],
        "Anna cannot have 300 bullheads in one round: in 6 nimmt! with 4 players, one player \
         gets between 0 and 107 in a round.",
        "{}",
        en.text
    );
    assert_eq!(en.header("content-language").as_deref(), Some("en"));
    let de = api.post_with(
        &path,
        Some(&p.token),
        &body,
        &[("Accept-Language", "de-AT, en;q=0.5")],
    );
    de.assert_problem(422, "impossible_round");
    assert_eq!(
        de.body["detail"],
        "Anna kann in einer Runde nicht 300 Hornochsen haben: In 6 nimmt! mit 4 Spielern \
         bekommt ein Spieler in einer Runde zwischen 0 und 107.",
        "{}",
        de.text
    );
    assert_eq!(de.body["title"], "Unmögliche Runde");
    assert_eq!(de.header("content-language").as_deref(), Some("de"));
    // A sum out of bounds names no player; in German too.
    let de = api.post_with(
        &path,
        Some(&p.token),
        &json!({ "scores": [0, 0, 0, 0] }),
        &[("Accept-Language", "de")],
    );
    de.assert_problem(422, "impossible_round");
    assert!(
        de.body["detail"].as_str().unwrap().starts_with(
            "Zusammen ergeben diese Einträge 0 Hornochsen, aber in 6 nimmt! mit 4 Spielern"
        ),
        "{}",
        de.text
    );
    // Nimm oder schieb speaks of points, and of the cards and chips when no split fits.
    let nos = create(
        &api,
        &p,
        &json!({ "ruleset": "nimm-oder-schieb", "players": ["Anna", "Ben", "Carla"] }),
    );
    let path = format!("/v1/scorepads/{}/rounds", id_of(&nos));
    let body = json!({ "scores": [-11, -11, 300] });
    let en = api.post_with(&path, Some(&p.token), &body, &[("Accept-Language", "en")]);
    en.assert_problem(422, "impossible_round");
    let detail = en.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("points beside the other entries: no way of sharing the 24 cards in play and the 33 chips among 3 players"),
        "{detail}"
    );
    let de = api.post_with(&path, Some(&p.token), &body, &[("Accept-Language", "de")]);
    let detail = de.body["detail"].as_str().unwrap();
    assert!(
        detail.contains(
            "Punkte haben: Keine Verteilung der 24 Karten im Spiel und der 33 Chips auf 3 Spieler"
        ),
        "{detail}"
    );
    assert_eq!(get(&api, &p, &id)["version"], 1, "refusals change nothing");
}

both!(
    pads_and_rounds_count_against_the_limits,
    a_deleted_accounts_pads_and_rounds_are_deleted_with_it,
    calculator_scores_the_seed_example,
    calculator_refusals,
    six_nimmt_pad_to_points,
    six_nimmt_refusals,
    eleven_nimmt_pad,
    x_nimmt_pad,
    nimm_oder_schieb_pad,
    pads_belong_to_their_creator,
    if_match_pins_the_version,
    concurrent_rounds_are_all_recorded,
    corrections_are_events_and_events_are_append_only,
    an_impossible_round_reads_as_a_sentence_in_both_languages,
);
