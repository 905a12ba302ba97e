//! Identity: accounts, guests, tokens, the failed-login limit, `/v1/me` and roles granted
//! from the command line.

use std::process::Command;

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Reply, TestServer};

const PASSWORD: &str = "correct horse battery";

fn register(api: &Api, name: &str, password: &str) -> Reply {
    api.post(
        "/v1/accounts",
        None,
        &json!({ "name": name, "password": password }),
    )
}

fn login(api: &Api, name: &str, password: &str) -> Reply {
    api.post(
        "/v1/tokens",
        None,
        &json!({ "name": name, "password": password }),
    )
}

fn me(api: &Api, token: &str) -> Value {
    let r = api.get("/v1/me", Some(token));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body
}

fn token_of(r: &Reply) -> String {
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["access_token"].as_str().unwrap().to_owned()
}

fn accounts_are_created_and_names_are_unique_ignoring_case(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let r = register(&api, "Alice_1", PASSWORD);
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_str().expect("an id").to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "id {id}");
    assert_eq!(r.body["name"], "Alice_1");
    assert!(
        !r.text.contains(PASSWORD),
        "the password comes back: {}",
        r.text
    );
    assert!(
        !r.text.to_lowercase().contains("argon2"),
        "the hash comes back: {}",
        r.text
    );

    for taken in ["Alice_1", "alice_1", "ALICE_1", "aLiCe_1"] {
        let r = register(&api, taken, "another password");
        r.assert_problem(409, "name_taken");
    }
    // The refused registrations changed nothing: the first password still works, theirs not.
    let token = token_of(&login(&api, "Alice_1", PASSWORD));
    let account = me(&api, &token);
    assert_eq!(account["id"], id.as_str());
    assert_eq!(account["name"], "Alice_1");
    login(&api, "Alice_1", "another password").assert_problem(401, "invalid_credentials");

    // Another name is free.
    let r = register(&api, "Alice_2", PASSWORD);
    assert_eq!(r.status, 201, "{}", r.text);
    assert_ne!(r.body["id"], id.as_str());
}

fn invalid_names_and_passwords_are_refused(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let long_name = "n".repeat(33);
    for name in [
        "",
        "ab",
        long_name.as_str(),
        "has space",
        "dot.name",
        "semi;colon",
        "tab\tname",
        "Jörg",
        "名前名前",
        "emoji😀",
        "slash/name",
        "a'b",
        "<script>",
    ] {
        let r = register(&api, name, PASSWORD);
        r.assert_problem(422, "validation_failed");
        let r = api.post("/v1/guests", None, &json!({ "name": name }));
        r.assert_problem(422, "validation_failed");
    }
    let too_long = "p".repeat(129);
    let too_long_wide = "ä".repeat(129);
    for (i, password) in [
        "",
        "1234567",
        "ä234567",
        too_long.as_str(),
        too_long_wide.as_str(),
    ]
    .iter()
    .enumerate()
    {
        let name = format!("pw_refused_{i}");
        let r = register(&api, &name, password);
        r.assert_problem(422, "validation_failed");
        // Nothing was registered under that name.
        let r = register(&api, &name, PASSWORD);
        assert_eq!(
            r.status, 201,
            "{name} was taken by a refused registration: {}",
            r.text
        );
    }
    for body in [
        json!({ "name": "no_password" }),
        json!({ "password": PASSWORD }),
        json!({ "name": "typed_pw", "password": 12_345_678 }),
        json!({ "name": ["list"], "password": PASSWORD }),
        json!({ "name": "extra_field", "password": PASSWORD, "admin": true }),
        json!({ "name": "extra_role", "password": PASSWORD, "roles": ["analyst"] }),
    ] {
        let r = api.post("/v1/accounts", None, &body);
        r.assert_problem(422, "validation_failed");
    }
    // The limits themselves are allowed.
    let longest_name = "N".repeat(32);
    let longest = "p".repeat(128);
    let longest_wide = "ä".repeat(128);
    for (name, password) in [
        ("abc", PASSWORD),
        (longest_name.as_str(), PASSWORD),
        ("A-b_9", "12345678"),
        ("pw_longest", longest.as_str()),
        ("pw_wide", longest_wide.as_str()),
        ("pw_eight_wide", "ääääääää"),
    ] {
        let r = register(&api, name, password);
        assert_eq!(
            r.status,
            201,
            "{name:?} with a {}-character password: {}",
            password.chars().count(),
            r.text
        );
        assert_eq!(r.body["name"], name);
        token_of(&login(&api, name, password));
    }
}

fn tokens_need_the_right_password_and_say_nothing_else(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let r = register(&api, "tom_t", PASSWORD);
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_str().unwrap().to_owned();

    let r = login(&api, "tom_t", PASSWORD);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["token_type"], "Bearer");
    let expires_in = r.body["expires_in"]
        .as_u64()
        .expect("expires_in in seconds");
    assert!(expires_in > 0, "expires_in {expires_in}");
    let token = r.body["access_token"].as_str().unwrap();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let account = me(&api, token);
    assert_eq!(account["id"], id.as_str());
    assert_eq!(account["name"], "tom_t");
    assert_eq!(account["guest"], false);
    assert_eq!(account["roles"], json!([]));

    // A guest name exists but has no password.
    api.guest("gus_g");
    let wrong = login(&api, "tom_t", "wrong password");
    let unknown = login(&api, "nobody_here", "wrong password");
    let guest = login(&api, "gus_g", "wrong password");
    let empty = login(&api, "tom_t", "");
    for (what, r) in [
        ("a wrong password", &wrong),
        ("an unknown name", &unknown),
        ("a guest's name", &guest),
        ("an empty password", &empty),
    ] {
        r.assert_problem(401, "invalid_credentials");
        assert!(r.body.get("access_token").is_none(), "{what}: {}", r.text);
        assert_eq!(
            r.text, wrong.text,
            "{what} answers differently from a wrong password"
        );
        for h in ["www-authenticate", "content-type"] {
            assert_eq!(r.header(h), wrong.header(h), "{what}: header {h}");
        }
    }
    // The failures did not lock the right password out (fewer than five per name).
    let again = token_of(&login(&api, "tom_t", PASSWORD));
    assert_eq!(me(&api, &again)["id"], id.as_str());
}

fn repeated_failures_are_rate_limited_per_name(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    for name in ["rita_r", "otto_o"] {
        assert_eq!(register(&api, name, PASSWORD).status, 201);
    }
    for attempt in 1..=5 {
        let r = login(&api, "rita_r", &format!("guess {attempt}"));
        r.assert_problem(401, "invalid_credentials");
    }
    // Locked: even the right password is refused now, under any spelling of the name.
    for name in ["rita_r", "RITA_R"] {
        let r = login(&api, name, PASSWORD);
        r.assert_problem(429, "rate_limited");
        assert!(r.body.get("access_token").is_none());
        let retry: u64 = r
            .header("retry-after")
            .expect("429 carries Retry-After")
            .parse()
            .expect("Retry-After in seconds");
        assert!((1..=3600).contains(&retry), "Retry-After {retry}");
    }
    let r = login(&api, "rita_r", "guess 6");
    r.assert_problem(429, "rate_limited");

    // Other names are not affected.
    token_of(&login(&api, "otto_o", PASSWORD));
    // Unknown names are limited alike, so the limit does not tell which names exist.
    for _ in 1..=5 {
        login(&api, "ghost_g", "guess").assert_problem(401, "invalid_credentials");
    }
    login(&api, "ghost_g", "guess").assert_problem(429, "rate_limited");
}

fn me_shows_the_account_for_accounts_and_guests(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let r = api.post("/v1/guests", None, &json!({ "name": "quick_q" }));
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["token_type"], "Bearer");
    assert!(
        r.body["expires_in"].as_u64().is_some_and(|s| s > 0),
        "{}",
        r.text
    );
    assert_eq!(r.body["account"]["guest"], true);
    assert_eq!(r.body["account"]["name"], "quick_q");
    let guest_id = r.body["account"]["id"].as_str().unwrap().to_owned();
    let guest = me(&api, r.body["access_token"].as_str().unwrap());
    assert_eq!(guest["id"], guest_id.as_str());
    assert_eq!(guest["name"], "quick_q");
    assert_eq!(guest["guest"], true);
    assert_eq!(guest["roles"], json!([]));

    assert_eq!(register(&api, "reg_r", PASSWORD).status, 201);
    let account = me(&api, &token_of(&login(&api, "reg_r", PASSWORD)));
    assert_eq!(account["name"], "reg_r");
    assert_eq!(account["guest"], false);
    assert_eq!(account["roles"], json!([]));
    assert_ne!(account["id"], guest_id.as_str());

    // A name belongs to one live account: a second guest cannot take it.
    let r = api.post("/v1/guests", None, &json!({ "name": "Quick_Q" }));
    r.assert_problem(409, "name_taken");
}

/// Runs `stammtisch grant-role NAME ROLE` against the server's database.
fn grant_role(server: &TestServer, name: &str, role: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_stammtisch"))
        .args(["grant-role", name, role])
        .env("DATABASE_URL", &server.db.url)
        .env_remove("JWT_SECRET")
        .output()
        .unwrap()
}

fn grant_role_gives_an_account_a_role(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    assert_eq!(register(&api, "ana_lyst", PASSWORD).status, 201);
    assert_eq!(register(&api, "bystander", PASSWORD).status, 201);
    let token = token_of(&login(&api, "ana_lyst", PASSWORD));
    let other = token_of(&login(&api, "bystander", PASSWORD));
    let guest = api.guest("guest_g");
    assert_eq!(me(&api, &token)["roles"], json!([]));

    let out = grant_role(&server, "ana_lyst", "analyst");
    assert!(
        out.status.success(),
        "grant-role failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The token issued before the grant shows the role: roles are read from the account.
    assert_eq!(me(&api, &token)["roles"], json!(["analyst"]));
    assert_eq!(
        me(&api, &token_of(&login(&api, "ana_lyst", PASSWORD)))["roles"],
        json!(["analyst"])
    );
    // Granting again does not list it twice.
    let out = grant_role(&server, "ana_lyst", "analyst");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(me(&api, &token)["roles"], json!(["analyst"]));

    // Unknown names, guests and malformed roles are refused with a failing exit status.
    for (name, role) in [
        ("nobody_here", "analyst"),
        ("guest_g", "analyst"),
        ("ana_lyst", "Analyst!"),
        ("ana_lyst", ""),
    ] {
        let out = grant_role(&server, name, role);
        assert!(
            !out.status.success(),
            "grant-role {name:?} {role:?} succeeded: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    assert_eq!(me(&api, &token)["roles"], json!(["analyst"]));
    assert_eq!(
        me(&api, &other)["roles"],
        json!([]),
        "nobody else got a role"
    );
    assert_eq!(
        me(&api, &guest.token)["roles"],
        json!([]),
        "the guest got no role"
    );
}

both!(
    accounts_are_created_and_names_are_unique_ignoring_case,
    invalid_names_and_passwords_are_refused,
    tokens_need_the_right_password_and_say_nothing_else,
    repeated_failures_are_rate_limited_per_name,
    me_shows_the_account_for_accounts_and_guests,
    grant_role_gives_an_account_a_role,
);
