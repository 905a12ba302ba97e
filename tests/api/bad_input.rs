//! Bad input never yields a 5xx and never changes a game: malformed or ill-typed bodies,
//! commands the rules refuse, unknown games, wrong content types, bad game set-ups and every
//! kind of unacceptable token are 4xx problems, and the game's version and every seat's view
//! stay exactly as they were.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, Reply, TestDb, TestServer};

/// The secret the token tests start the server with.
const SECRET: &str = "test-secret-of-at-least-32-bytes-for-hs256";

/// A two-seat game with a known first deal: the rows start 50, 60, 70, 80; seat 0 holds 1
/// (below every row) and 51–59, seat 1 holds 81–90. 30 is in the deck but dealt to nobody.
fn deal() -> Value {
    json!({
        "rows": [[50], [60], [70], [80]],
        "hands": [
            [1, 51, 52, 53, 54, 55, 56, 57, 58, 59],
            [81, 82, 83, 84, 85, 86, 87, 88, 89, 90],
        ],
    })
}

/// Creates and starts the two-seat game of [`deal`]; returns its id.
fn started_game(api: &Api, host: &Player, other: &Player) -> String {
    let view = api.create_game(
        host,
        &json!({ "ruleset": "6-nimmt", "players": 2, "deal": deal(), "public": true, "options": { "end": { "rounds": 1 } } }),
    );
    let id = view["id"].as_str().unwrap().to_owned();
    api.join(other, &id);
    api.ok(host, &id, &json!({ "type": "start" }));
    id
}

/// The game's version from its `ETag`, checked against the body's `version`.
fn version(api: &Api, player: &Player, game: &str) -> u64 {
    let r = api.get(&format!("/v1/games/{game}"), Some(&player.token));
    assert_eq!(r.status, 200, "{}", r.text);
    let etag = r.header("etag").expect("GET answers with an ETag");
    let v: u64 = etag.trim_matches('"').parse().unwrap();
    assert_eq!(r.body["version"], v, "ETag and version agree");
    v
}

/// What every seat sees of a game at one moment; bad input must leave all of it alone.
struct Snapshot<'a> {
    api: &'a Api,
    game: String,
    players: Vec<Player>,
    version: u64,
    views: Vec<Value>,
}

impl<'a> Snapshot<'a> {
    fn take(api: &'a Api, game: &str, players: &[Player]) -> Self {
        Self {
            api,
            game: game.to_owned(),
            players: players.to_vec(),
            version: version(api, &players[0], game),
            views: players.iter().map(|p| api.view(p, game)).collect(),
        }
    }

    /// Asserts that nothing changed since the snapshot.
    fn unchanged(&self, what: &str) {
        let now = version(self.api, &self.players[0], &self.game);
        assert_eq!(now, self.version, "{what} changed the game's version");
        for (p, before) in self.players.iter().zip(&self.views) {
            let view = self.api.view(p, &self.game);
            assert_eq!(&view, before, "{what} changed what {} sees", p.name);
        }
    }

    /// Asserts a 4xx problem (with this status and, if given, this code) and no change.
    fn refused(&self, what: &str, r: &Reply, status: u16, code: Option<&str>) {
        assert_client_error(what, r);
        match code {
            Some(code) => r.assert_problem(status, code),
            None => assert_eq!(r.status, status, "{what}: {}", r.text),
        }
        self.unchanged(what);
    }
}

/// Any 4xx problem+json with a code: never a 5xx, never a success, never a bare body.
fn assert_client_error(what: &str, r: &Reply) {
    assert!(
        (400..500).contains(&r.status),
        "{what}: expected a 4xx problem, got {}: {}",
        r.status,
        r.text
    );
    let ct = r.header("content-type").unwrap_or_default();
    assert!(
        ct.starts_with("application/problem+json"),
        "{what}: content-type {ct:?}, body {}",
        r.text
    );
    assert!(r.body["code"].is_string(), "{what}: no code in {}", r.text);
    assert_eq!(r.body["status"], r.status, "{what}: {}", r.text);
}

fn commands_path(game: &str) -> String {
    format!("/v1/games/{game}/commands")
}

fn malformed_and_ill_typed_commands_are_refused_and_change_nothing(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("hana");
    let other = api.guest("ivo");
    let game = started_game(&api, &host, &other);
    let snap = Snapshot::take(&api, &game, &[host.clone(), other]);
    let path = commands_path(&game);
    let raw = |body: &str| {
        api.post_raw(
            &path,
            Some(&host.token),
            body.as_bytes().to_vec(),
            "application/json",
        )
    };

    // Not JSON at all, or cut off.
    for body in [
        "{\"type\": \"play_card\", \"card\": ",
        "{not json}",
        "play_card 51",
        "{\"type\": \"play_card\", \"card\": 51,}",
    ] {
        snap.refused(
            &format!("malformed body {body:?}"),
            &raw(body),
            400,
            Some("malformed_json"),
        );
    }
    // An empty body is not a command either.
    let r = raw("");
    assert_client_error("an empty body", &r);
    snap.unchanged("an empty body");

    // Valid JSON that is not a command object.
    for body in ["[]", "[1, 2]", "\"play_card\"", "51", "null", "true", "{}"] {
        let r = raw(body);
        snap.refused(&format!("JSON {body}"), &r, 422, Some("validation_failed"));
    }

    // Unknown command types, and `type` of the wrong kind.
    for cmd in [
        json!({ "type": "fly" }),
        json!({ "type": "PLAY_CARD", "card": 51 }),
        json!({ "type": "playCard", "card": 51 }),
        json!({ "type": 5 }),
        json!({ "type": null }),
        json!({ "card": 51 }),
    ] {
        snap.refused(
            &format!("command {cmd}"),
            &api.command(&host, &game, &cmd),
            422,
            Some("validation_failed"),
        );
    }

    // Commands of other rulesets or options: known to the server, not to this game.
    for cmd in [
        json!({ "type": "draft_card", "card": 51 }),
        json!({ "type": "keep_card", "card": 51 }),
        json!({ "type": "pass" }),
        json!({ "type": "take" }),
    ] {
        snap.refused(
            &format!("command {cmd}"),
            &api.command(&host, &game, &cmd),
            422,
            Some("unknown_command"),
        );
    }

    // Unknown extra fields, on a move that would otherwise be legal (more in
    // `unknown_fields_are_refused_on_every_command`).
    for cmd in [
        json!({ "type": "play_card", "card": 51, "extra": 1 }),
        json!({ "type": "play_card", "card": 51, "seat": 1 }),
        json!({ "type": "play_card", "card": 51, "row": 0 }),
    ] {
        snap.refused(
            &format!("command {cmd}"),
            &api.command(&host, &game, &cmd),
            422,
            Some("validation_failed"),
        );
    }
    // A duplicate field is not a way around the checks.
    snap.refused(
        "a duplicate card field",
        &raw("{\"type\": \"play_card\", \"card\": 51, \"card\": 52}"),
        422,
        Some("validation_failed"),
    );

    // Wrong types, missing fields, out-of-range numbers.
    for card in [
        json!("ten"),
        json!("51"),
        json!(51.5),
        json!(null),
        json!(true),
        json!([51]),
        json!({ "value": 51 }),
        json!(-1),
        json!(-51),
        json!(256),
        json!(i64::MIN),
        json!(u64::MAX),
    ] {
        let cmd = json!({ "type": "play_card", "card": card });
        snap.refused(
            &format!("command {cmd}"),
            &api.command(&host, &game, &cmd),
            422,
            Some("validation_failed"),
        );
    }
    for body in [
        "{\"type\": \"play_card\", \"card\": 1e30}",
        "{\"type\": \"play_card\", \"card\": 99999999999999999999}",
        "{\"type\": \"play_card\", \"card\": -99999999999999999999}",
        "{\"type\": \"play_card\", \"card\": 5.1e1}",
        "{\"type\": \"play_card\"}",
        "{\"type\": \"take_row\"}",
        "{\"type\": \"take_row\", \"row\": -1}",
        "{\"type\": \"take_row\", \"row\": 1e30}",
        "{\"type\": \"remove_seat\", \"seat\": 99999999999999999999}",
    ] {
        snap.refused(
            &format!("body {body}"),
            &raw(body),
            422,
            Some("validation_failed"),
        );
    }

    // Cards that are not cards of this game at all.
    for card in [0, 105, 255] {
        let cmd = json!({ "type": "play_card", "card": card });
        snap.refused(
            &format!("card {card}"),
            &api.command(&host, &game, &cmd),
            422,
            Some("validation_failed"),
        );
    }

    // A 2 MB body is refused as too large without being read as a command.
    let mut big = b"{\"type\": \"play_card\", \"card\": 51, \"pad\": \"".to_vec();
    big.resize(big.len() + 2 * 1024 * 1024, b'x');
    big.extend_from_slice(b"\"}");
    snap.refused(
        "a 2 MB body",
        &api.post_raw(&path, Some(&host.token), big, "application/json"),
        413,
        Some("payload_too_large"),
    );

    // The wrong content type, with or without a body that would be a legal move.
    let legal = b"{\"type\": \"play_card\", \"card\": 51}".to_vec();
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml",
        "multipart/form-data; boundary=x",
    ] {
        let r = api.post_raw(&path, Some(&host.token), legal.clone(), ct);
        snap.refused(
            &format!("content-type {ct}"),
            &r,
            415,
            Some("unsupported_media_type"),
        );
    }
    let r = api
        .http
        .post(api.url(&path))
        .bearer_auth(&host.token)
        .body(legal)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    assert_eq!(
        status,
        415,
        "a body without a content type: {}",
        r.text().unwrap_or_default()
    );
    snap.unchanged("a body without a content type");

    // Bad headers on a legal move.
    let legal = json!({ "type": "play_card", "card": 51 });
    for value in ["banana", "\"\"", "\"nine\"", "W/\"x\"", "\"1e3\""] {
        let r = api.post_with(&path, Some(&host.token), &legal, &[("If-Match", value)]);
        snap.refused(
            &format!("If-Match {value}"),
            &r,
            400,
            Some("invalid_if_match"),
        );
    }
    let stale = (snap.version - 1).to_string();
    let r = api.post_with(
        &path,
        Some(&host.token),
        &legal,
        &[("If-Match", &format!("\"{stale}\""))],
    );
    snap.refused("a stale If-Match", &r, 409, Some("version_conflict"));
    assert_eq!(
        r.body["current_version"], snap.version,
        "the conflict names the current version"
    );
    let long_key = "k".repeat(201);
    let r = api.post_with(
        &path,
        Some(&host.token),
        &legal,
        &[("Idempotency-Key", &long_key)],
    );
    snap.refused(
        "a 201-character Idempotency-Key",
        &r,
        400,
        Some("invalid_idempotency_key"),
    );

    // The legal move itself is accepted: the refusals above were about the input alone.
    api.ok(&host, &game, &legal);
    assert_eq!(
        version(&api, &host, &game),
        snap.version + 2,
        "card_selected and selection_made"
    );
}

/// How far a fresh two-seat game has got.
#[derive(Clone, Copy, Debug)]
enum Stage {
    /// The host alone in the lobby.
    Lobby,
    /// Both seats taken, not started.
    Full,
    /// Started with the deal of [`deal`].
    Running,
}

/// A fresh game at `stage`, with its host and the other guest (seated from `Full` on).
fn fresh_game(api: &Api, stage: Stage) -> (String, Player, Player) {
    let host = api.guest("hana");
    let other = api.guest("ivo");
    let view = api.create_game(
        &host,
        &json!({ "ruleset": "6-nimmt", "players": 2, "deal": deal() }),
    );
    let id = view["id"].as_str().unwrap().to_owned();
    if !matches!(stage, Stage::Lobby) {
        api.join(&other, &id);
    }
    if matches!(stage, Stage::Running) {
        api.ok(&host, &id, &json!({ "type": "start" }));
    }
    (id, host, other)
}

/// Sends a raw command body to a fresh game at `stage`, by the host or the other guest;
/// describes what went wrong unless it was a 4xx problem that changed nothing.
fn refused_on_fresh_game(api: &Api, stage: Stage, by_host: bool, body: &str) -> Option<String> {
    let (game, host, other) = fresh_game(api, stage);
    let who = if by_host { &host } else { &other };
    let before = api.view(&host, &game);
    let r = api.post_raw(
        &commands_path(&game),
        Some(&who.token),
        body.as_bytes().to_vec(),
        "application/json",
    );
    let after = api.view(&host, &game);
    let ct = r.header("content-type").unwrap_or_default();
    if !(400..500).contains(&r.status) || !ct.starts_with("application/problem+json") {
        return Some(format!(
            "{body} in the {stage:?} stage: {} {ct} (version {} → {})",
            r.status, before["version"], after["version"]
        ));
    }
    (before != after)
        .then(|| format!("{body} in the {stage:?} stage was refused but changed the game"))
}

/// A command is a JSON object. An array listing a command's fields in order is not one and
/// must not be read as one (serde's derived deserialisers accept such sequences), nor may
/// arrays stand in for the other request bodies.
fn json_arrays_are_not_commands_or_other_bodies(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let mut accepted = Vec::new();
    for (stage, by_host, body) in [
        (Stage::Running, true, "[\"play_card\", 51]"),
        (Stage::Running, true, "[\"resign\"]"),
        (Stage::Lobby, true, "[\"add_bot\"]"),
        (Stage::Lobby, true, "[\"add_bot\", \"random\"]"),
        (Stage::Lobby, false, "[\"join\"]"),
        (Stage::Full, true, "[\"start\"]"),
        (Stage::Full, true, "[\"remove_seat\", 1]"),
    ] {
        accepted.extend(refused_on_fresh_game(&api, stage, by_host, body));
    }
    let creator = api.guest("carl");
    assert_eq!(register(&api, "arr_user", "correct horse").status, 201);
    for (path, body) in [
        (
            "/v1/games",
            "[\"6-nimmt\", 2, null, null, null, null, null]",
        ),
        ("/v1/accounts", "[\"arr_new\", \"correct horse\"]"),
        ("/v1/guests", "[\"arr_guest\"]"),
        ("/v1/tokens", "[\"arr_user\", \"correct horse\"]"),
    ] {
        let r = api.post_raw(
            path,
            Some(&creator.token),
            body.as_bytes().to_vec(),
            "application/json",
        );
        if !(400..500).contains(&r.status) {
            accepted.push(format!(
                "POST {path} {body}: {} {}",
                r.status,
                r.text.chars().take(120).collect::<String>()
            ));
        }
    }
    let r = api.get("/v1/games?mine=true", Some(&creator.token));
    if r.body["items"] != json!([]) {
        accepted.push("an array created a game".into());
    }
    assert!(
        accepted.is_empty(),
        "JSON arrays accepted as request objects:\n{}",
        accepted.join("\n")
    );
}

/// Unknown fields are refused on every command, also on those without fields of their own
/// (`join`, `leave`, `start`, `resign`), each sent where it would otherwise be legal.
fn unknown_fields_are_refused_on_every_command(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let mut accepted = Vec::new();
    for (stage, by_host, body) in [
        (
            Stage::Running,
            true,
            r#"{"type": "play_card", "card": 51, "extra": 1}"#,
        ),
        (
            Stage::Lobby,
            true,
            r#"{"type": "add_bot", "strategy": "random", "level": 9}"#,
        ),
        (
            Stage::Full,
            true,
            r#"{"type": "remove_seat", "seat": 1, "ban": true}"#,
        ),
        (Stage::Lobby, false, r#"{"type": "join", "seat": 0}"#),
        (Stage::Full, false, r#"{"type": "leave", "reason": "late"}"#),
        (Stage::Full, true, r#"{"type": "start", "now": true}"#),
        (
            Stage::Running,
            true,
            r#"{"type": "resign", "reason": "bored"}"#,
        ),
    ] {
        accepted.extend(refused_on_fresh_game(&api, stage, by_host, body));
    }
    for (path, body) in [
        (
            "/v1/guests",
            json!({ "name": "extra_guest", "roles": ["analyst"] }),
        ),
        (
            "/v1/accounts",
            json!({ "name": "extra_acct", "password": "correct horse", "guest": false }),
        ),
        (
            "/v1/tokens",
            json!({ "name": "extra_acct", "password": "correct horse", "ttl": 99_999_999 }),
        ),
    ] {
        let r = api.post(path, None, &body);
        if !(400..500).contains(&r.status) {
            accepted.push(format!("POST {path} {body}: {}", r.status));
        }
    }
    assert!(
        accepted.is_empty(),
        "unknown fields accepted:\n{}",
        accepted.join("\n")
    );
}

fn register(api: &Api, name: &str, password: &str) -> Reply {
    api.post(
        "/v1/accounts",
        None,
        &json!({ "name": name, "password": password }),
    )
}

fn commands_the_rules_refuse_change_nothing(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("hana");
    let other = api.guest("ivo");
    let outsider = api.guest("olga");
    let players = [host.clone(), other.clone()];
    let game = started_game(&api, &host, &other);
    // The outsider plays another game of their own.
    let elsewhere = api.create_game(&outsider, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    let elsewhere = elsewhere["id"].as_str().unwrap().to_owned();
    api.ok(
        &outsider,
        &elsewhere,
        &json!({ "type": "add_bot", "strategy": "random" }),
    );
    api.ok(&outsider, &elsewhere, &json!({ "type": "start" }));

    // Nobody has selected yet.
    let snap = Snapshot::take(&api, &game, &players);
    let cases = [
        (
            &host,
            json!({ "type": "play_card", "card": 81 }),
            "card_not_in_hand",
        ),
        (
            &host,
            json!({ "type": "play_card", "card": 90 }),
            "card_not_in_hand",
        ),
        (
            &host,
            json!({ "type": "play_card", "card": 30 }),
            "card_not_in_hand",
        ),
        (
            &host,
            json!({ "type": "play_card", "card": 104 }),
            "card_not_in_hand",
        ),
        (
            &other,
            json!({ "type": "play_card", "card": 51 }),
            "card_not_in_hand",
        ),
        (
            &host,
            json!({ "type": "take_row", "row": 0 }),
            "not_your_turn",
        ),
        (
            &other,
            json!({ "type": "take_row", "row": 3 }),
            "not_your_turn",
        ),
        (
            &host,
            json!({ "type": "take_row", "row": 9 }),
            "not_your_turn",
        ),
        (&host, json!({ "type": "join" }), "not_in_lobby"),
        (&other, json!({ "type": "join" }), "not_in_lobby"),
        (&outsider, json!({ "type": "join" }), "not_in_lobby"),
        (&other, json!({ "type": "leave" }), "not_in_lobby"),
        (&host, json!({ "type": "leave" }), "not_in_lobby"),
        (
            &host,
            json!({ "type": "add_bot", "strategy": "random" }),
            "not_in_lobby",
        ),
        (
            &host,
            json!({ "type": "remove_seat", "seat": 1 }),
            "not_in_lobby",
        ),
        (&host, json!({ "type": "start" }), "not_in_lobby"),
    ];
    for (who, cmd, code) in &cases {
        let r = api.command(who, &game, cmd);
        snap.refused(&format!("{cmd} by {}", who.name), &r, 422, Some(code));
    }
    // A player of another game has no say here, whatever they send.
    for cmd in [
        json!({ "type": "play_card", "card": 51 }),
        json!({ "type": "play_card", "card": 81 }),
        json!({ "type": "take_row", "row": 0 }),
        json!({ "type": "resign" }),
    ] {
        let r = api.command(&outsider, &game, &cmd);
        snap.refused(
            &format!("{cmd} by a player of another game"),
            &r,
            403,
            Some("not_a_player"),
        );
    }
    // A private game does not exist for an outsider at all.
    let private = api.create_game(&host, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    let private_id = private["id"].as_str().unwrap();
    for cmd in [
        json!({ "type": "join" }),
        json!({ "type": "join", "invite_code": "WRONG" }),
        json!({ "type": "resign" }),
    ] {
        api.command(&outsider, private_id, &cmd)
            .assert_problem(404, "not_found");
    }
    api.get(&format!("/v1/games/{private_id}"), Some(&outsider.token))
        .assert_problem(404, "not_found");
    // Unknown games: a well-formed id nobody created, and ids that are no UUIDs.
    let missing = uuid::Uuid::new_v4().to_string();
    let legal = json!({ "type": "play_card", "card": 51 });
    for id in [
        missing.as_str(),
        "not-a-uuid",
        "1",
        "00000000-0000-0000-0000-00000000000g",
        &format!("{game}x"),
    ] {
        let r = api.command(&host, id, &legal);
        snap.refused(
            &format!("a command to game {id:?}"),
            &r,
            404,
            Some("not_found"),
        );
        let r = api.get(&format!("/v1/games/{id}"), Some(&host.token));
        snap.refused(&format!("GET game {id:?}"), &r, 404, Some("not_found"));
        let r = api.get(&format!("/v1/games/{id}/events"), Some(&host.token));
        snap.refused(
            &format!("GET events of game {id:?}"),
            &r,
            404,
            Some("not_found"),
        );
    }

    // Seat 0 has selected 1 (below every row); seat 1 has not. Replacing the selection is
    // allowed, so only what is not seat 0's to do now is tried.
    api.ok(&host, &game, &json!({ "type": "play_card", "card": 1 }));
    let snap = Snapshot::take(&api, &game, &players);
    assert_eq!(snap.views[0]["you"]["selected"], 1);
    for (who, cmd, code) in [
        (
            &host,
            json!({ "type": "take_row", "row": 0 }),
            "not_your_turn",
        ),
        (
            &host,
            json!({ "type": "play_card", "card": 81 }),
            "card_not_in_hand",
        ),
        (
            &other,
            json!({ "type": "take_row", "row": 0 }),
            "not_your_turn",
        ),
        (&host, json!({ "type": "start" }), "not_in_lobby"),
    ] {
        let r = api.command(who, &game, &cmd);
        snap.refused(
            &format!("{cmd} by {} after selecting", who.name),
            &r,
            422,
            Some(code),
        );
    }

    // Seat 1 selects 81: the cards are revealed, 1 is below every row, and only seat 0's
    // take_row is awaited.
    api.ok(&other, &game, &json!({ "type": "play_card", "card": 81 }));
    let snap = Snapshot::take(&api, &game, &players);
    assert_eq!(
        snap.views[0]["awaiting"],
        json!([{ "seat": 0, "action": "take_row" }])
    );
    for (who, cmd, code) in [
        (
            &host,
            json!({ "type": "play_card", "card": 51 }),
            "not_your_turn",
        ),
        (
            &other,
            json!({ "type": "play_card", "card": 82 }),
            "not_your_turn",
        ),
        (
            &other,
            json!({ "type": "take_row", "row": 0 }),
            "not_your_turn",
        ),
        (
            &host,
            json!({ "type": "take_row", "row": 4 }),
            "no_such_row",
        ),
        (
            &host,
            json!({ "type": "take_row", "row": 255 }),
            "no_such_row",
        ),
        (
            &outsider,
            json!({ "type": "take_row", "row": 0 }),
            "not_a_player",
        ),
    ] {
        let r = api.command(who, &game, &cmd);
        let status = if code == "not_a_player" { 403 } else { 422 };
        snap.refused(
            &format!("{cmd} by {} while seat 0 must take a row", who.name),
            &r,
            status,
            Some(code),
        );
    }
    for cmd in [
        json!({ "type": "take_row", "row": 256 }),
        json!({ "type": "take_row", "row": -1 }),
        json!({ "type": "take_row", "row": "0" }),
    ] {
        let r = api.command(&host, &game, &cmd);
        snap.refused(&format!("{cmd}"), &r, 422, Some("validation_failed"));
    }
    // And the awaited move goes through.
    let view = api.ok(&host, &game, &json!({ "type": "take_row", "row": 2 }));
    assert_eq!(
        view["table"]["rows"][2]["cards"],
        json!([1]),
        "seat 0 took row 2 with its 1"
    );
    assert_eq!(view["seats"][0]["taken"], json!([70]));
}

fn bad_queries_are_client_errors(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("hana");
    let other = api.guest("ivo");
    let game = started_game(&api, &host, &other);
    let snap = Snapshot::take(&api, &game, &[host.clone(), other]);
    for (query, status, code) in [
        ("/v1/games?limit=0", 422, "validation_failed"),
        ("/v1/games?limit=501", 422, "validation_failed"),
        ("/v1/games?limit=-1", 422, "validation_failed"),
        ("/v1/games?limit=abc", 400, "invalid_query"),
        ("/v1/games?limit=99999999999999999999", 400, "invalid_query"),
        ("/v1/games?mine=maybe", 400, "invalid_query"),
        ("/v1/games?awaiting=you", 422, "validation_failed"),
        ("/v1/games?status=over", 422, "validation_failed"),
        ("/v1/games?cursor=%21%21%21", 422, "validation_failed"),
        ("/v1/games?colour=red", 400, "invalid_query"),
        (
            &format!("/v1/games/{game}/events?after=abc"),
            400,
            "invalid_query",
        ),
        (
            &format!("/v1/games/{game}/events?limit=0"),
            422,
            "validation_failed",
        ),
        (
            &format!("/v1/games/{game}/events?limit=501"),
            422,
            "validation_failed",
        ),
        (
            &format!("/v1/games/{game}/events?after=99999999999"),
            400,
            "invalid_query",
        ),
        (
            &format!("/v1/games/{game}/events?seat=1"),
            400,
            "invalid_query",
        ),
    ] {
        let r = api.get(query, Some(&host.token));
        snap.refused(&format!("GET {query}"), &r, status, Some(code));
    }
}

/// Creates with a body that must be refused; returns the reply after checking it.
fn refused_create(api: &Api, who: &Player, body: &Value, status: u16, code: &str) {
    let r = api.post("/v1/games", Some(&who.token), body);
    assert_client_error(&format!("POST /v1/games {body}"), &r);
    r.assert_problem(status, code);
    assert!(
        r.header("location").is_none(),
        "a refused game has no Location: {body}"
    );
}

fn hands(sizes: &[usize]) -> Vec<Vec<u64>> {
    let mut next = 10;
    sizes
        .iter()
        .map(|n| {
            let hand: Vec<u64> = (next..next + *n as u64).collect();
            next += *n as u64;
            hand
        })
        .collect()
}

fn bad_game_setups_are_refused_and_create_nothing(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let creator = api.guest("carl");
    let rows = json!([[1], [2], [3], [4]]);
    let good_deal = json!({ "rows": rows, "hands": hands(&[10, 10]) });
    let cases: Vec<(Value, u16, &str)> = vec![
        (
            json!({ "ruleset": "chess", "players": 2 }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-NIMMT", "players": 2 }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "", "players": 2 }),
            422,
            "validation_failed",
        ),
        (json!({ "players": 2 }), 422, "validation_failed"),
        (json!({ "ruleset": "6-nimmt" }), 422, "validation_failed"),
        (
            json!({ "ruleset": "6-nimmt", "players": 1 }),
            422,
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 0 }),
            422,
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 11 }),
            422,
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 256 }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": -2 }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": "4" }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "colour": "red" }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "colour": "red" } }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "deck": "tiny" } }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "end": { "points": 0 } } }),
            422,
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "end": { "points": 1000 } } }),
            422,
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "end": { "rounds": 0 } } }),
            422,
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "end": { "rounds": 51 } } }),
            422,
            "invalid_options",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "end": { "rounds": -1 } } }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "end": { "minutes": 10 } } }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "options": { "end": "never" } }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "preset": "chaos" }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "name": "n".repeat(65) }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "move_deadline_seconds": 0 }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "move_deadline_seconds": 2_592_001 }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 4, "move_deadline_seconds": -60 }),
            422,
            "validation_failed",
        ),
        // Prepared deals that are incomplete or impossible.
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": rows, "hands": [[10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [19, 21, 22, 23, 24, 25, 26, 27, 28, 29]] } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": [[1], [2], [3], [10]], "hands": hands(&[10, 10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": rows, "hands": hands(&[9, 10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": rows, "hands": hands(&[10, 11]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": rows, "hands": hands(&[10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": rows, "hands": hands(&[10, 10, 10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": rows, "hands": [] } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": [[1], [2], [3]], "hands": hands(&[10, 10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": [[1], [2], [3], [4], [5]], "hands": hands(&[10, 10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": [[1, 5], [2], [3], [4]], "hands": hands(&[10, 10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": [[], [2], [3], [4]], "hands": hands(&[10, 10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": [[105], [2], [3], [4]], "hands": hands(&[10, 10]) } }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": rows, "hands": [[10, 11, 12, 13, 14, 15, 16, 17, 18, 105], hands(&[10])[0]] } }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": rows, "hands": [[0, 11, 12, 13, 14, 15, 16, 17, 18, 19], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]] } }),
            422,
            "validation_failed",
        ),
        // The tactical deck of two players ends at 24.
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "preset": "taktik", "deal": { "rows": rows, "hands": hands(&[10, 10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "rows": rows, "hands": hands(&[10, 10]), "seed": "00" } }),
            422,
            "validation_failed",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": { "hands": hands(&[10, 10]) } }),
            422,
            "invalid_deal",
        ),
        (
            json!({ "ruleset": "6-nimmt", "players": 2, "deal": "random" }),
            422,
            "validation_failed",
        ),
    ];
    for (body, status, code) in &cases {
        refused_create(&api, &creator, body, *status, code);
    }
    // Two end conditions at once: serde_json calls the second key a syntax error, so 400
    // (`malformed_json`) or 422 are both fair answers.
    let r = api.post("/v1/games", Some(&creator.token), &json!({ "ruleset": "6-nimmt", "players": 4, "options": { "end": { "points": 10, "rounds": 2 } } }));
    assert_client_error("two end conditions", &r);
    assert!(
        [400, 422].contains(&r.status),
        "two end conditions: {}",
        r.text
    );
    let r = api.post_raw(
        "/v1/games",
        Some(&creator.token),
        b"{\"ruleset\": \"6-nimmt\",".to_vec(),
        "application/json",
    );
    r.assert_problem(400, "malformed_json");
    let r = api.post_raw(
        "/v1/games",
        Some(&creator.token),
        b"{\"ruleset\": \"6-nimmt\", \"players\": 2}".to_vec(),
        "text/plain",
    );
    r.assert_problem(415, "unsupported_media_type");
    let r = api.post_raw(
        "/v1/games",
        Some(&creator.token),
        b"[\"6-nimmt\", 2]".to_vec(),
        "application/json",
    );
    assert_client_error("a game as a JSON array", &r);

    // None of that created a game.
    let r = api.get("/v1/games?mine=true", Some(&creator.token));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body["items"],
        json!([]),
        "a refused set-up created a game"
    );
    // The same deal, made valid, is accepted (so the refusals were about the defects).
    let r = api.post(
        "/v1/games",
        Some(&creator.token),
        &json!({ "ruleset": "6-nimmt", "players": 2, "deal": good_deal }),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["prepared_deal"], true);
}

/// Claims as the server issues them, valid for an hour, for `player`.
fn claims(player: &Player) -> Value {
    let now = chrono::Utc::now().timestamp();
    json!({
        "sub": player.id,
        "name": player.name,
        "iss": "stammtisch",
        "aud": "stammtisch-api",
        "iat": now,
        "exp": now + 3600,
    })
}

fn sign(alg: Algorithm, claims: &Value, secret: &str) -> String {
    let key = EncodingKey::from_secret(secret.as_bytes()).unwrap();
    jsonwebtoken::encode(&Header::new(alg), claims, &key).unwrap()
}

fn with(claims: &Value, key: &str, value: Value) -> Value {
    let mut c = claims.clone();
    c[key] = value;
    c
}

fn without(claims: &Value, key: &str) -> Value {
    let mut c = claims.clone();
    c.as_object_mut().unwrap().remove(key);
    c
}

fn unsigned(header: &Value, claims: &Value) -> String {
    let part = |v: &Value| URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap());
    format!("{}.{}.", part(header), part(claims))
}

/// Sends a request with a raw `Authorization` header (or none).
fn get_with_auth(api: &Api, path: &str, auth: Option<&str>) -> Reply {
    let mut req = api.http.get(api.url(path));
    if let Some(a) = auth {
        req = req.header("Authorization", a);
    }
    let r = req.send().unwrap();
    reply(r)
}

fn post_with_auth(api: &Api, path: &str, auth: Option<&str>, body: &Value) -> Reply {
    let mut req = api.http.post(api.url(path)).json(body);
    if let Some(a) = auth {
        req = req.header("Authorization", a);
    }
    reply(req.send().unwrap())
}

fn reply(r: reqwest::blocking::Response) -> Reply {
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

fn unacceptable_tokens_get_401_with_www_authenticate(backend: Backend) {
    let server =
        TestServer::start_with_env(TestDb::new(backend), backend, &[("JWT_SECRET", SECRET)]);
    let api = server.client();
    let host = api.guest("hana");
    let other = api.guest("ivo");
    let game = started_game(&api, &host, &other);
    let snap = Snapshot::take(&api, &game, &[host.clone(), other]);
    let now = chrono::Utc::now().timestamp();
    let good = claims(&host);

    // Our own signing is right: a token made here for the host is accepted. Without this the
    // refusals below would prove nothing.
    let ours = sign(Algorithm::HS256, &good, SECRET);
    let r = get_with_auth(&api, "/v1/me", Some(&format!("Bearer {ours}")));
    assert_eq!(r.status, 200, "a correctly signed HS256 token: {}", r.text);
    assert_eq!(r.body["id"], host.id.as_str());

    let none_header = json!({ "alg": "none", "typ": "JWT" });
    let hs256_header = json!({ "alg": "HS256", "typ": "JWT" });
    let bad: Vec<(&str, Option<String>)> = vec![
        ("no Authorization header", None),
        ("an empty header", Some(String::new())),
        ("Bearer and nothing", Some("Bearer ".into())),
        ("garbage", Some("Bearer not-a-jwt".into())),
        ("three garbage parts", Some("Bearer aaa.bbb.ccc".into())),
        ("another scheme", Some(format!("Basic {ours}"))),
        ("the token without a scheme", Some(ours.clone())),
        (
            "a wrong signature",
            Some(format!(
                "Bearer {}",
                sign(Algorithm::HS256, &good, "other-secret")
            )),
        ),
        (
            "a tampered payload",
            Some(format!(
                "Bearer {}",
                tamper(&ours, &with(&good, "sub", json!(other_id(&snap))))
            )),
        ),
        (
            "an expired token",
            Some(format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    &with(
                        &with(&good, "iat", json!(now - 7200)),
                        "exp",
                        json!(now - 3600)
                    ),
                    SECRET
                )
            )),
        ),
        (
            "no exp",
            Some(format!(
                "Bearer {}",
                sign(Algorithm::HS256, &without(&good, "exp"), SECRET)
            )),
        ),
        (
            "no sub",
            Some(format!(
                "Bearer {}",
                sign(Algorithm::HS256, &without(&good, "sub"), SECRET)
            )),
        ),
        (
            "a wrong issuer",
            Some(format!(
                "Bearer {}",
                sign(Algorithm::HS256, &with(&good, "iss", json!("evil")), SECRET)
            )),
        ),
        (
            "no issuer",
            Some(format!(
                "Bearer {}",
                sign(Algorithm::HS256, &without(&good, "iss"), SECRET)
            )),
        ),
        (
            "a wrong audience",
            Some(format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    &with(&good, "aud", json!("another-api")),
                    SECRET
                )
            )),
        ),
        (
            "no audience",
            Some(format!(
                "Bearer {}",
                sign(Algorithm::HS256, &without(&good, "aud"), SECRET)
            )),
        ),
        (
            "alg none",
            Some(format!("Bearer {}", unsigned(&none_header, &good))),
        ),
        (
            "alg none with a signature",
            Some(format!(
                "Bearer {}{}",
                unsigned(&none_header, &good),
                ours.rsplit('.').next().unwrap()
            )),
        ),
        (
            "HS256 without a signature",
            Some(format!("Bearer {}", unsigned(&hs256_header, &good))),
        ),
        (
            "HS512",
            Some(format!("Bearer {}", sign(Algorithm::HS512, &good, SECRET))),
        ),
        (
            "HS384",
            Some(format!("Bearer {}", sign(Algorithm::HS384, &good, SECRET))),
        ),
    ];
    let cmd = json!({ "type": "play_card", "card": 51 });
    for (what, auth) in &bad {
        let auth = auth.as_deref();
        for (endpoint, r) in [
            ("GET /v1/me", get_with_auth(&api, "/v1/me", auth)),
            (
                "GET the game",
                get_with_auth(&api, &format!("/v1/games/{game}"), auth),
            ),
            ("GET /v1/games", get_with_auth(&api, "/v1/games", auth)),
            (
                "POST a command",
                post_with_auth(&api, &commands_path(&game), auth, &cmd),
            ),
            (
                "POST /v1/games",
                post_with_auth(
                    &api,
                    "/v1/games",
                    auth,
                    &json!({ "ruleset": "6-nimmt", "players": 2 }),
                ),
            ),
        ] {
            let label = format!("{endpoint} with {what}");
            snap.refused(&label, &r, 401, Some("unauthorized"));
            let challenge = r.header("www-authenticate").unwrap_or_default();
            assert!(
                challenge.starts_with("Bearer"),
                "{label}: WWW-Authenticate {challenge:?}"
            );
        }
    }
    // Still nothing was created by the refused POST /v1/games.
    let r = api.get("/v1/games?mine=true", Some(&host.token));
    assert_eq!(r.body["items"].as_array().unwrap().len(), 1, "{}", r.text);
}

/// The other seat's account id, from the snapshot.
fn other_id(snap: &Snapshot<'_>) -> String {
    snap.players[1].id.clone()
}

/// The token with its payload replaced and the old signature kept.
fn tamper(token: &str, claims: &Value) -> String {
    let mut parts = token.split('.');
    let header = parts.next().unwrap();
    parts.next();
    let signature = parts.next().unwrap();
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap());
    format!("{header}.{payload}.{signature}")
}

fn a_signed_token_of_an_unknown_account_is_refused_everywhere(backend: Backend) {
    let server =
        TestServer::start_with_env(TestDb::new(backend), backend, &[("JWT_SECRET", SECRET)]);
    let api = server.client();
    let host = api.guest("hana");
    let game = api.create_game(
        &host,
        &json!({ "ruleset": "6-nimmt", "players": 2, "public": true }),
    );
    let game = game["id"].as_str().unwrap();
    // Signed with the server's own secret, for an account that never existed.
    let ghost = Player {
        id: uuid::Uuid::new_v4().to_string(),
        name: "ghost".into(),
        token: String::new(),
    };
    let forged = sign(Algorithm::HS256, &claims(&ghost), SECRET);
    let ours = sign(Algorithm::HS256, &claims(&host), SECRET);
    assert_eq!(
        get_with_auth(&api, "/v1/me", Some(&format!("Bearer {ours}"))).status,
        200,
        "the same signing for a real account is accepted"
    );
    let bearer = format!("Bearer {forged}");
    for path in [
        "/v1/me",
        "/v1/games",
        &format!("/v1/games/{game}"),
        "/v1/webhooks",
    ] {
        let r = get_with_auth(&api, path, Some(&bearer));
        r.assert_problem(401, "unauthorized");
        assert!(r.header("www-authenticate").is_some(), "{path}");
    }
    for (path, body) in [
        (
            "/v1/games".to_owned(),
            json!({ "ruleset": "6-nimmt", "players": 2 }),
        ),
        (
            format!("/v1/games/{game}/commands"),
            json!({ "type": "join" }),
        ),
        (format!("/v1/games/{game}/stream-tickets"), json!({})),
        (
            "/v1/scorepads".to_owned(),
            json!({ "ruleset": "6-nimmt", "players": ["a", "b"] }),
        ),
    ] {
        let r = api
            .http
            .post(api.url(&path))
            .header("Authorization", &bearer)
            .json(&body)
            .send()
            .unwrap();
        reply(r).assert_problem(401, "unauthorized");
    }
    // Nothing was created or changed by the ghost.
    let listed = api.get("/v1/games", Some(&host.token)).body;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
    assert_eq!(api.view(&host, game)["seats"][1]["name"], Value::Null);
}

fn a_short_jwt_secret_refuses_to_start(backend: Backend) {
    let db = TestDb::new(backend);
    for short in ["a", "31-bytes-are-not-quite-enough!!"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stammtisch"))
            .arg("serve")
            .env("DATABASE_URL", &db.url)
            .env("BIND_ADDR", "127.0.0.1:0")
            .env("JWT_SECRET", short)
            .output()
            .unwrap();
        assert!(!out.status.success(), "JWT_SECRET={short} must not start");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("JWT_SECRET") && err.contains("32"), "{err}");
        if short.len() > 1 {
            assert!(!err.contains(short), "the secret is not echoed: {err}");
        }
    }
}

both!(
    a_signed_token_of_an_unknown_account_is_refused_everywhere,
    a_short_jwt_secret_refuses_to_start,
    malformed_and_ill_typed_commands_are_refused_and_change_nothing,
    json_arrays_are_not_commands_or_other_bodies,
    unknown_fields_are_refused_on_every_command,
    commands_the_rules_refuse_change_nothing,
    bad_queries_are_client_errors,
    bad_game_setups_are_refused_and_create_nothing,
    unacceptable_tokens_get_401_with_www_authenticate,
);
