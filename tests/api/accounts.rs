//! The account lifecycle: a guest registers and keeps its id, games and seats; a password
//! change needs the current password and revokes older tokens; logout everywhere revokes
//! every token on every replica; deletion removes name and credentials, views show
//! "deleted player", and the event log stays as it was, naming accounts by id only.

use diesel::QueryableByName;
use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Reply, TestServer, play_randomly, start_game};

/// A request with any method and an optional JSON body.
fn send(api: &Api, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> Reply {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = api.http.request(method, api.url(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    Reply::from_response(req.send().unwrap())
}

#[derive(QueryableByName)]
struct Text {
    #[diesel(sql_type = diesel::sql_types::Text)]
    v: String,
}

/// The first column (text) of every row of a query on the server's database.
pub fn texts(server: &TestServer, statement: &str) -> Vec<String> {
    let rows: Vec<Text> = crate::support::raw_rows(server.backend, &server.db.url, statement);
    rows.into_iter().map(|r| r.v).collect()
}

fn guest_registers_keeping_games_and_seats(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let gus = api.guest("gus");
    let game = api.create_game(&gus, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    let id = game["id"].as_str().unwrap();
    assert_eq!(game["seats"][0]["name"], "gus");

    // Too short a password changes nothing.
    send(
        &api,
        "POST",
        "/v1/me/register",
        Some(&gus.token),
        Some(&json!({ "password": "short" })),
    )
    .assert_problem(422, "validation_failed");
    let r = send(
        &api,
        "POST",
        "/v1/me/register",
        Some(&gus.token),
        Some(&json!({ "name": "Gustav", "password": "gustav-secret" })),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["account"]["id"], gus.id.as_str());
    assert_eq!(r.body["account"]["name"], "Gustav");
    assert_eq!(r.body["account"]["guest"], false);
    let token = r.body["access_token"].as_str().unwrap().to_owned();

    // The same account: its seat and game, under its new name, with the new token; the
    // guest's token stopped working (whoever held it does not hold the account).
    let me = api.get("/v1/me", Some(&token));
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(me.body["id"], gus.id.as_str());
    assert_eq!(me.body["guest"], false);
    api.get("/v1/me", Some(&gus.token))
        .assert_problem(401, "unauthorized");
    let view = api.get(&format!("/v1/games/{id}"), Some(&token));
    assert_eq!(view.status, 200, "{}", view.text);
    assert_eq!(view.body["seats"][0]["account_id"], gus.id.as_str());
    assert_eq!(view.body["seats"][0]["name"], "Gustav");
    assert_eq!(view.body["you"]["seat"], 0);
    let mine = api.get("/v1/games?mine=true", Some(&token));
    assert_eq!(mine.body["items"][0]["id"], id);

    // It logs in by name and password now.
    let login = api.post(
        "/v1/tokens",
        None,
        &json!({ "name": "gustav", "password": "gustav-secret" }),
    );
    assert_eq!(login.status, 200, "{}", login.text);
    let me = api.get("/v1/me", Some(login.body["access_token"].as_str().unwrap()));
    assert_eq!(me.body["id"], gus.id.as_str());

    // Once only; and a registered name stays taken.
    send(
        &api,
        "POST",
        "/v1/me/register",
        Some(&token),
        Some(&json!({ "password": "another-secret" })),
    )
    .assert_problem(409, "already_registered");
    api.post("/v1/guests", None, &json!({ "name": "GUSTAV" }))
        .assert_problem(409, "name_taken");
    let other = api.guest("other");
    send(
        &api,
        "POST",
        "/v1/me/register",
        Some(&other.token),
        Some(&json!({ "name": "gustav", "password": "another-secret" })),
    )
    .assert_problem(409, "name_taken");
    send(
        &api,
        "POST",
        "/v1/me/register",
        Some(&other.token),
        Some(&json!({ "password": "another-secret", "extra": 1 })),
    )
    .assert_problem(422, "validation_failed");
}

fn password_change_and_logout_everywhere(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let pat = api.account("pat");
    let second = api
        .post(
            "/v1/tokens",
            None,
            &json!({ "name": "pat", "password": "password-of-pat" }),
        )
        .body["access_token"]
        .as_str()
        .unwrap()
        .to_owned();

    let change = |token: &str, current: &str, new: &str| {
        send(
            &api,
            "POST",
            "/v1/me/password",
            Some(token),
            Some(&json!({ "current_password": current, "new_password": new })),
        )
    };
    change(&pat.token, "not-the-password", "a-new-password").assert_problem(403, "wrong_password");
    change(&pat.token, "password-of-pat", "short").assert_problem(422, "validation_failed");
    // Refused changes left every token working.
    assert_eq!(api.get("/v1/me", Some(&second)).status, 200);
    let r = change(&pat.token, "password-of-pat", "a-new-password");
    assert_eq!(r.status, 200, "{}", r.text);
    let fresh = r.body["access_token"].as_str().unwrap().to_owned();
    // Older tokens are revoked; the fresh one works.
    for old in [&pat.token, &second] {
        api.get("/v1/me", Some(old))
            .assert_problem(401, "unauthorized");
    }
    assert_eq!(api.get("/v1/me", Some(&fresh)).status, 200);
    let login = |password: &str| {
        api.post(
            "/v1/tokens",
            None,
            &json!({ "name": "pat", "password": password }),
        )
    };
    login("password-of-pat").assert_problem(401, "invalid_credentials");
    let r = login("a-new-password");
    assert_eq!(r.status, 200, "{}", r.text);
    let fourth = r.body["access_token"].as_str().unwrap().to_owned();

    // A guest has no password to change.
    let guest = api.guest("gina");
    change(&guest.token, "", "a-new-password").assert_problem(409, "not_registered");

    // Logout everywhere, through a second replica: the first refuses every token too.
    let replica = server.replica(&[]);
    let api2 = replica.client();
    assert_eq!(api2.get("/v1/me", Some(&fourth)).status, 200);
    let r = send(&api2, "POST", "/v1/me/logout", Some(&fourth), None);
    assert_eq!(r.status, 204, "{}", r.text);
    for t in [&fresh, &fourth] {
        api.get("/v1/me", Some(t))
            .assert_problem(401, "unauthorized");
        api2.get("/v1/me", Some(t))
            .assert_problem(401, "unauthorized");
    }
    // A command checks the account before anything else about the request (the command
    // path resolves it inside its own blocking call): 401 whatever the body or game.
    let game = api.create_game(&guest, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    let path = format!("/v1/games/{}/commands", game["id"].as_str().unwrap());
    for (path, body) in [
        (path.as_str(), "{\"type\": \"join\"}"),
        (path.as_str(), "{\"type\": \"no-such-command\"}"),
        (path.as_str(), "[1]"),
        (path.as_str(), "{"),
        ("/v1/games/no-such-game/commands", "{\"type\": \"join\"}"),
    ] {
        for client in [&api, &api2] {
            client
                .post_raw(
                    path,
                    Some(&fourth),
                    body.as_bytes().to_vec(),
                    "application/json",
                )
                .assert_problem(401, "unauthorized");
        }
    }
    // Logging in again works, on either replica.
    let r = login("a-new-password");
    assert_eq!(r.status, 200);
    let again = r.body["access_token"].as_str().unwrap();
    assert_eq!(api2.get("/v1/me", Some(again)).status, 200);
    assert_eq!(api.get("/v1/me", Some(again)).status, 200);
    // Other accounts were not touched.
    assert_eq!(api.get("/v1/me", Some(&guest.token)).status, 200);
}

fn deletion_removes_name_and_credentials_and_keeps_the_log(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let del = api.account("delia");
    let other = api.guest("otto");
    let hook = api.post(
        "/v1/webhooks",
        Some(&del.token),
        &json!({ "url": "https://93.184.215.14/hook" }),
    );
    assert_eq!(hook.status, 201, "{}", hook.text);
    let id = start_game(
        &api,
        &[del.clone(), other.clone()],
        &json!({ "ruleset": "6-nimmt", "players": 2, "public": true }),
        &[],
    );
    let before = api.events(&other, &id);

    let delete =
        |token: &str, body: &Value| send(&api, "DELETE", "/v1/me", Some(token), Some(body));
    delete(&del.token, &json!({})).assert_problem(403, "wrong_password");
    delete(&del.token, &json!({ "password": "wrong-password" }))
        .assert_problem(403, "wrong_password");
    let r = delete(&del.token, &json!({ "password": "password-of-delia" }));
    assert_eq!(r.status, 204, "{}", r.text);

    // Credentials are gone: the token, the login; the name is free again.
    api.get("/v1/me", Some(&del.token))
        .assert_problem(401, "unauthorized");
    api.post(
        "/v1/tokens",
        None,
        &json!({ "name": "delia", "password": "password-of-delia" }),
    )
    .assert_problem(401, "invalid_credentials");
    let newcomer = api.account("delia");
    assert_ne!(newcomer.id, del.id);

    // The game goes on with the seat, shown under a neutral name and played by a bot; the
    // log is intact: what was there stays, one `seat_resigned` follows.
    let view = api.view(&other, &id);
    assert_eq!(view["seats"][0]["account_id"], del.id.as_str());
    assert_eq!(view["seats"][0]["name"], "deleted player");
    assert_eq!(view["seats"][0]["resigned"], true);
    assert_eq!(view["seats"][1]["name"], "otto");
    let after = api.events(&other, &id);
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(after[before.len()]["type"], "seat_resigned");
    assert_eq!(after[before.len()]["data"]["seat"], 0);
    crate::support::play_turns(&api, &other, &id, 1);
    assert_eq!(
        api.view(&other, &id)["awaiting"][0]["seat"],
        1,
        "the bot answered"
    );
    // The profile shows the neutral name too.
    let profile = api.get(&format!("/v1/players/{}", del.id), Some(&other.token));
    assert_eq!(profile.status, 200, "{}", profile.text);
    assert_eq!(profile.body["name"], "deleted player");

    // Stored: no password hash, no roles, no webhooks; no event mentions the name.
    let hash = texts(
        &server,
        &format!(
            "SELECT COALESCE(password_hash, '') || '|' || roles || '|' || name AS v \
             FROM accounts WHERE id = '{}'",
            del.id
        ),
    );
    assert_eq!(hash, ["||deleted player"]);
    let hooks = texts(
        &server,
        &format!(
            "SELECT id AS v FROM webhooks WHERE account_id = '{}'",
            del.id
        ),
    );
    assert!(hooks.is_empty(), "{hooks:?}");
    let data = texts(&server, "SELECT CAST(data AS TEXT) AS v FROM events");
    assert!(
        data.iter()
            .all(|d| !d.contains("delia") && !d.contains("otto")),
        "{data:?}"
    );

    // A guest deletes itself without a password.
    let r = delete(&other.token, &json!({}));
    assert_eq!(r.status, 204, "{}", r.text);
    let view = api.view(&newcomer, &id);
    assert_eq!(view["seats"][1]["name"], "deleted player");
}

/// A lobby whose host deletes their account cannot be started by anyone else: it is closed
/// to everyone else (private, no invite code, the others' seats freed), so nobody waits in it
/// or joins it.
fn a_lobby_whose_host_is_deleted_is_closed_to_everyone_else(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let del = api.account("delia");
    let otto = api.guest("otto");
    let pia = api.guest("pia");
    let listed = |game: &String| api.listed(&pia, "status=lobby").contains(game);
    // A public lobby with a person and a bot, and a private one with a person.
    let open = api.create_game(
        &del,
        &json!({ "ruleset": "6-nimmt", "players": 4, "public": true }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.join(&otto, &open);
    api.ok(
        &del,
        &open,
        &json!({ "type": "add_bot", "strategy": "random" }),
    );
    let private = api.create_game(&del, &json!({ "ruleset": "x-nimmt", "players": 3 }));
    let private_id = private["id"].as_str().unwrap().to_owned();
    let code = private["invite_code"].as_str().unwrap().to_owned();
    api.join(&otto, &private_id);
    assert!(listed(&open));
    let stored_types = |game: &str| {
        texts(
            &server,
            &format!("SELECT event_type AS v FROM events WHERE game_id = '{game}' ORDER BY seq"),
        )
    };
    let before = stored_types(&open).len();

    let r = send(
        &api,
        "DELETE",
        "/v1/me",
        Some(&del.token),
        Some(&json!({ "password": "password-of-delia" })),
    );
    assert_eq!(r.status, 204, "{}", r.text);

    // The public lobby: out of the list and private (so Otto, no longer seated, cannot see
    // it either); in the log, the host made it private and freed Otto's and the bot's seats.
    assert!(!listed(&open));
    api.get(&format!("/v1/games/{open}"), Some(&otto.token))
        .assert_problem(404, "not_found");
    let types = stored_types(&open);
    assert_eq!(
        types[before..],
        ["visibility_set", "seat_removed", "seat_removed"]
    );
    let seats = texts(
        &server,
        &format!(
            "SELECT CAST(data AS TEXT) AS v FROM events WHERE game_id = '{open}' \
             AND event_type = 'seat_removed' ORDER BY seq"
        ),
    );
    let removed: Vec<Value> = seats
        .iter()
        .map(|d| serde_json::from_str::<Value>(d).unwrap()["seat"].clone())
        .collect();
    assert_eq!(removed, [json!(1), json!(2)], "{seats:?}");
    // Otto's own list no longer has either lobby.
    let mine = api.listed(&otto, "mine=true");
    assert!(
        !mine.contains(&open) && !mine.contains(&private_id),
        "{mine:?}"
    );
    // Nobody joins either lobby any more: the public one is private now, the private one's
    // code is gone.
    api.command(&pia, &open, &json!({ "type": "join" }))
        .assert_problem(404, "not_found");
    api.post(
        &format!("/v1/invites/{code}/join"),
        Some(&pia.token),
        &json!({}),
    )
    .assert_problem(404, "not_found");
    api.command(
        &pia,
        &private_id,
        &json!({ "type": "join", "invite_code": code }),
    )
    .assert_problem(404, "not_found");
}

/// A whole game of each ruleset: no stored or served event carries a person's name (the
/// log names accounts by id), though every seat's view shows the current names.
fn no_event_carries_a_name(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let ann = api.guest("Zzannaqq");
    let ben = api.guest("Zzbenqq");
    let cid = api.guest("Zzcidqq");
    let games = [
        json!({ "ruleset": "6-nimmt", "players": 3, "options": { "end": { "rounds": 1 } } }),
        json!({ "ruleset": "11-nimmt", "players": 3, "options": { "end": { "points": 20 } } }),
        json!({ "ruleset": "x-nimmt", "players": 3, "options": { "deals": 1 } }),
        json!({ "ruleset": "nimm-oder-schieb", "players": 3 }),
    ];
    let people = [ann.clone(), ben.clone(), cid.clone()];
    for (i, body) in games.iter().enumerate() {
        let id = start_game(&api, &people, body, &[]);
        let end = play_randomly(&api, &people, &id, 7 + i as u64);
        assert_eq!(end["status"], "finished");
        assert_eq!(end["seats"][1]["name"], "Zzbenqq");
        for e in api.events(&ann, &id) {
            let text = e.to_string();
            assert!(!text.contains("Zz"), "{text}");
        }
    }
    let data = texts(&server, "SELECT CAST(data AS TEXT) AS v FROM events");
    assert!(data.len() > 20);
    assert!(data.iter().all(|d| !d.contains("Zz")), "a name in the log");
}

both!(
    guest_registers_keeping_games_and_seats,
    password_change_and_logout_everywhere,
    deletion_removes_name_and_credentials_and_keeps_the_log,
    a_lobby_whose_host_is_deleted_is_closed_to_everyone_else,
    no_event_carries_a_name,
);
