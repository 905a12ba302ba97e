//! Joining a private game by its invite code alone (`POST /v1/invites/{code}/join`), the
//! way one player passes the 10 characters on to another: seats like `join` with the code,
//! and a code that names no game is not found. What the link shows before anyone signs in
//! (`GET /v1/invites/{code}`): the game, who invites and its seats, nothing hidden.

use serde_json::{Value, json};

use crate::both;
use crate::support::{Backend, Reply, TestServer, play_randomly};

fn the_invite_code_alone_seats_a_player(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.guest("anna");
    let ben = api.guest("ben");
    let cara = api.guest("cara");
    let game = api.create_game(&anna, &json!({ "ruleset": "6-nimmt", "players": 3 }));
    let id = game["id"].as_str().unwrap();
    let code = game["invite_code"].as_str().unwrap();
    let path = format!("/v1/invites/{code}/join");

    // Without a token: not signed in.
    api.post(&path, None, &json!({}))
        .assert_problem(401, "unauthorized");
    let joined = api.post(&path, Some(&ben.token), &json!({}));
    assert_eq!(joined.status, 200, "{}", joined.text);
    assert_eq!(
        joined.header("location").as_deref(),
        Some(format!("/v1/games/{id}").as_str())
    );
    assert_eq!(joined.body["id"], id);
    assert_eq!(joined.body["seats"][1]["account_id"], ben.id.as_str());
    assert_eq!(
        joined.body["invite_code"], code,
        "a seated player sees the code"
    );
    assert_eq!(
        joined.header("etag").as_deref(),
        Some(format!("\"{}\"", joined.body["version"]).as_str())
    );
    // The game's log says who sat down, as with `join` (by account id: events carry no
    // names).
    let events = api.events(&anna, id);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "seat_taken" && e["data"]["account"] == ben.id.as_str())
    );
    // Twice: already seated.
    api.post(&path, Some(&ben.token), &json!({}))
        .assert_problem(422, "already_seated");

    // A code that names no game, in any spelling, is not found (and says nothing more).
    for wrong in [
        "ZZZZZZZZZZ".to_owned(),
        code.to_lowercase(),
        format!("{code}X"),
        "A".repeat(40),
        "bad%20code".to_owned(),
    ]
    .into_iter()
    .filter(|w| w != code)
    {
        api.post(
            &format!("/v1/invites/{wrong}/join"),
            Some(&cara.token),
            &json!({}),
        )
        .assert_problem(404, "not_found");
    }

    // In German too, naming what was not found.
    let de = api.post_with(
        "/v1/invites/ZZZZZZZZZ2/join",
        Some(&cara.token),
        &json!({}),
        &[("accept-language", "de")],
    );
    de.assert_problem(404, "not_found");
    assert_eq!(de.body["detail"], "Die Einladung wurde nicht gefunden.");

    // The last seat, then a full table, then a started game.
    let third = api.post(&path, Some(&cara.token), &json!({}));
    assert_eq!(third.status, 200, "{}", third.text);
    assert_eq!(third.body["seats"][2]["account_id"], cara.id.as_str());
    let dora = api.guest("dora");
    api.post(&path, Some(&dora.token), &json!({}))
        .assert_problem(422, "game_full");
    api.ok(&anna, id, &json!({ "type": "start" }));
    api.post(&path, Some(&dora.token), &json!({}))
        .assert_problem(422, "not_in_lobby");
    // A public game has no code to join by.
    let open = api.create_game(
        &anna,
        &json!({ "ruleset": "11-nimmt", "players": 2, "public": true }),
    );
    assert!(open["invite_code"].is_null());
}

/// Every field the preview has: anything more would be something an invite link says to a
/// stranger that nobody decided it should.
const PREVIEW_FIELDS: [&str; 10] = [
    "free_seats",
    "game_id",
    "host",
    "name",
    "options",
    "players",
    "preset",
    "ruleset",
    "seats_taken",
    "status",
];

fn preview_fields(body: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = body
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

fn the_invite_link_shows_who_invites_to_which_game_without_a_token(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.guest("anna");
    let ben = api.guest("ben");
    let game = api.create_game(
        &anna,
        &json!({ "ruleset": "6-nimmt", "players": 4, "preset": "taktik", "name": "Freitagsrunde" }),
    );
    let id = game["id"].as_str().unwrap();
    let code = game["invite_code"].as_str().unwrap();
    let path = format!("/v1/invites/{code}");

    // No token at all: the link shows the game, its host and its seats.
    let r = api.get(&path, None);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("application/json"))
    );
    assert_eq!(preview_fields(&r.body), PREVIEW_FIELDS, "{}", r.text);
    assert_eq!(r.body["game_id"], id);
    assert_eq!(r.body["ruleset"], "6-nimmt");
    assert_eq!(r.body["preset"], "taktik");
    assert_eq!(
        r.body["options"], game["options"],
        "the options the game shows"
    );
    assert_eq!(r.body["name"], "Freitagsrunde");
    assert_eq!(r.body["host"], "anna");
    assert_eq!(r.body["status"], "lobby");
    assert_eq!(r.body["players"], 4);
    assert_eq!(r.body["seats_taken"], 1);
    assert_eq!(r.body["free_seats"], 3);

    // A person and a bot sit down: the count follows. Any token (or a German reader) gets
    // the same answer.
    api.ok(&ben, id, &json!({ "type": "join", "invite_code": code }));
    api.ok(
        &anna,
        id,
        &json!({ "type": "add_bot", "strategy": "random" }),
    );
    let cara = api.guest("cara");
    let seen = api.get(&path, Some(&cara.token));
    assert_eq!(seen.status, 200, "{}", seen.text);
    assert_eq!(seen.body["seats_taken"], 3);
    assert_eq!(seen.body["free_seats"], 1);
    let de = Reply::from_response(
        api.http
            .get(api.url(&path))
            .header("accept-language", "de")
            .send()
            .unwrap(),
    );
    assert_eq!(de.body, seen.body);

    // Another ruleset has no variant; nor has a 6-nimmt combination no preset makes.
    for (body, preset) in [
        (json!({ "ruleset": "11-nimmt", "players": 3 }), Value::Null),
        (
            json!({ "ruleset": "6-nimmt", "players": 3, "options": { "placement": "both_ends", "deck": "tactical" } }),
            Value::Null,
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 3 }),
            json!("standard"),
        ),
    ] {
        let other = api.create_game(&ben, &body);
        let code = other["invite_code"].as_str().unwrap();
        let r = api.get(&format!("/v1/invites/{code}"), None);
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.body["ruleset"], body["ruleset"]);
        assert_eq!(r.body["preset"], preset, "{body}");
        assert_eq!(r.body["host"], "ben");
        assert!(r.body["name"].is_null());
    }
}

both!(the_invite_code_alone_seats_a_player);
both!(the_invite_link_shows_who_invites_to_which_game_without_a_token);

/// A code that names no game answers as joining by it does, byte for byte, so neither
/// endpoint tells more than the other; a game's code that is not this game's is no
/// different.
fn an_unknown_invite_code_is_not_found_as_joining_answers(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.guest("anna");
    let game = api.create_game(&anna, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    let code = game["invite_code"].as_str().unwrap();
    let dora = api.guest("dora");
    for wrong in [
        "ZZZZZZZZZZ".to_owned(),
        code.to_lowercase(),
        format!("{code}X"),
        "A".repeat(40),
        "bad%20code".to_owned(),
    ] {
        for lang in ["en", "de"] {
            let shown = Reply::from_response(
                api.http
                    .get(api.url(&format!("/v1/invites/{wrong}")))
                    .header("accept-language", lang)
                    .send()
                    .unwrap(),
            );
            shown.assert_problem(404, "not_found");
            let joined = api.post_with(
                &format!("/v1/invites/{wrong}/join"),
                Some(&dora.token),
                &json!({}),
                &[("accept-language", lang)],
            );
            joined.assert_problem(404, "not_found");
            assert_eq!(shown.text, joined.text, "{wrong} ({lang})");
            assert_eq!(shown.header("content-type"), joined.header("content-type"));
            if lang == "de" {
                assert_eq!(shown.body["detail"], "Die Einladung wurde nicht gefunden.");
            }
        }
    }
    // Asking changed nothing: the game still has one free seat and its one person.
    let after = api.view(&anna, game["id"].as_str().unwrap());
    assert_eq!(after["version"], game["version"]);
}

/// A private game's hidden things stay hidden from the link: no hand, no seed or
/// commitment, no prepared deal, no invite code, no other seat's name; a started and a
/// finished game still answer, saying so. A deleted host shows as the views show them.
fn the_invite_preview_hides_the_play_and_follows_the_game(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.guest("anna");
    let ben = api.guest("bennoseat");
    // A prepared deal with cards no ordinary field could carry (rows 91–94, hands 1–10 and
    // 11–20).
    let deal = json!({
        "rows": [[91], [92], [93], [94]],
        "hands": [
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]
        ]
    });
    let game = api.create_game(
        &anna,
        &json!({
            "ruleset": "6-nimmt", "players": 2, "deal": deal,
            "options": { "end": { "rounds": 1 } }
        }),
    );
    let id = game["id"].as_str().unwrap().to_owned();
    let code = game["invite_code"].as_str().unwrap().to_owned();
    let path = format!("/v1/invites/{code}");
    let hidden = |r: &Reply| {
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(preview_fields(&r.body), PREVIEW_FIELDS, "{}", r.text);
        let options = r.body["options"].as_object().unwrap();
        let mut option_keys: Vec<&str> = options.keys().map(String::as_str).collect();
        option_keys.sort_unstable();
        assert_eq!(
            option_keys,
            ["deal", "deck", "end", "placement"],
            "{}",
            r.text
        );
        assert!(options.values().all(|v| !v.is_array()), "{}", r.text);
        // Beside the game's id (a UUID, whose digits may be anything).
        let mut rest = r.body.clone();
        rest["game_id"] = Value::Null;
        let rest = rest.to_string();
        for secret in [&code, "bennoseat", "91", "94", "commitment", "seed", "hand"] {
            assert!(!rest.contains(secret), "{secret} in {rest}");
        }
    };
    hidden(&api.get(&path, None));

    api.ok(&ben, &id, &json!({ "type": "join", "invite_code": code }));
    api.ok(&anna, &id, &json!({ "type": "start" }));
    let started = api.get(&path, None);
    hidden(&started);
    assert_eq!(started.body["status"], "active");
    assert_eq!(started.body["seats_taken"], 2);
    assert_eq!(started.body["free_seats"], 0);

    let end = play_randomly(&api, &[anna.clone(), ben.clone()], &id, 7);
    assert_eq!(end["status"], "finished");
    let finished = api.get(&path, None);
    hidden(&finished);
    assert_eq!(finished.body["status"], "finished");
    assert_eq!(finished.body["host"], "anna");

    // The host deletes their account: the link says what the game's views say.
    let r = Reply::from_response(
        api.http
            .delete(api.url("/v1/me"))
            .bearer_auth(&anna.token)
            .json(&json!({}))
            .send()
            .unwrap(),
    );
    assert_eq!(r.status, 204, "{}", r.text);
    let shown = api.view(&ben, &id)["seats"][0]["name"].clone();
    assert_eq!(shown, "deleted player");
    let gone = api.get(&path, None);
    assert_eq!(gone.status, 200, "{}", gone.text);
    assert_eq!(gone.body["host"], shown);
}

both!(
    an_unknown_invite_code_is_not_found_as_joining_answers,
    the_invite_preview_hides_the_play_and_follows_the_game,
);
