//! Joining a private game by its invite code alone (`POST /v1/invites/{code}/join`), the
//! way one player passes the 10 characters on to another: seats like `join` with the code,
//! and a code that names no game is not found.

use serde_json::json;

use crate::both;
use crate::support::{Backend, TestServer};

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

both!(the_invite_code_alone_seats_a_player);
