//! Browser access: CORS from the `CORS_ORIGINS` allow-list, stream tickets for
//! `EventSource` (which cannot send `Authorization`), the embedded web client and its
//! security headers, and an OpenAPI document fit for client generators.

use std::time::Duration;

use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::json;

use crate::both;
use crate::support::{Backend, EventStream, Reply, TestDb, TestServer, cards, seated_game};

const ALLOWED: &str = "http://allowed.example:3000";

/// Sends `method path` with `Origin` and extra headers.
fn with_origin(
    server: &TestServer,
    method: Method,
    path: &str,
    origin: &str,
    headers: &[(&str, &str)],
) -> Reply {
    let api = server.client();
    let mut req = api
        .http
        .request(method, api.url(path))
        .header("Origin", origin);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    Reply::from_response(req.send().unwrap())
}

fn lower_list(value: Option<String>) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_lowercase())
        .collect()
}

#[test]
fn cors_answers_listed_origins_only() {
    let server = TestServer::start_with_env(
        TestDb::new(Backend::Sqlite),
        Backend::Sqlite,
        &[("CORS_ORIGINS", &format!("{ALLOWED}, https://other.example"))],
    );
    // The preflight of a command with every header a client sends.
    let preflight = with_origin(
        &server,
        Method::OPTIONS,
        "/v1/games/0197d6f0-0000-7000-8000-000000000000/commands",
        ALLOWED,
        &[
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "authorization, content-type, if-match, idempotency-key",
            ),
        ],
    );
    assert!(preflight.status < 300, "{preflight:?}");
    assert_eq!(
        preflight.header("access-control-allow-origin").as_deref(),
        Some(ALLOWED)
    );
    let allowed_headers = lower_list(preflight.header("access-control-allow-headers"));
    for h in [
        "authorization",
        "content-type",
        "if-match",
        "idempotency-key",
        "last-event-id",
    ] {
        assert!(allowed_headers.iter().any(|a| a == h), "{h} allowed");
    }
    assert!(lower_list(preflight.header("access-control-allow-methods")).contains(&"post".into()));
    assert_eq!(preflight.header("access-control-allow-credentials"), None);

    // An actual request from the listed origin: allowed, with the headers a client reads.
    let guest = with_origin(
        &server,
        Method::POST,
        "/v1/guests",
        ALLOWED,
        &[("Content-Type", "application/json")],
    );
    let api = server.client();
    let created = api
        .http
        .post(api.url("/v1/guests"))
        .header("Origin", ALLOWED);
    let created = Reply::from_response(created.json(&json!({ "name": "cors" })).send().unwrap());
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(
        created.header("access-control-allow-origin").as_deref(),
        Some(ALLOWED)
    );
    let exposed = lower_list(created.header("access-control-expose-headers"));
    for h in ["etag", "location", "idempotent-replayed", "retry-after"] {
        assert!(exposed.iter().any(|e| e == h), "{h} exposed: {exposed:?}");
    }
    assert!(guest.status >= 400, "an empty body is refused: {guest:?}");
    assert_eq!(
        guest.header("access-control-allow-origin").as_deref(),
        Some(ALLOWED),
        "errors carry CORS headers too, so a page can read the problem"
    );

    // Another origin: served (same-origin pages send Origin on POST as well) but without
    // any CORS header, so a browser on that origin refuses the response.
    for method in [Method::GET, Method::OPTIONS] {
        let refused = with_origin(
            &server,
            method,
            "/v1/rulesets",
            "http://evil.example",
            &[("Access-Control-Request-Method", "GET")],
        );
        assert_eq!(refused.header("access-control-allow-origin"), None);
        assert_eq!(refused.header("access-control-allow-headers"), None);
    }
    // A prefix or a variant of a listed origin is another origin.
    for near in [
        "http://allowed.example:3001",
        "https://allowed.example:3000",
        "http://allowed.example:3000.evil.example",
    ] {
        let r = with_origin(&server, Method::GET, "/v1/rulesets", near, &[]);
        assert_eq!(r.header("access-control-allow-origin"), None, "{near}");
    }
}

#[test]
fn without_cors_origins_no_cors_headers_and_a_wildcard_allows_any_origin() {
    let plain = TestServer::start(Backend::Sqlite);
    let r = with_origin(&plain, Method::GET, "/v1/rulesets", ALLOWED, &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), None);

    let any = TestServer::start_with_env(
        TestDb::new(Backend::Sqlite),
        Backend::Sqlite,
        &[("CORS_ORIGINS", "*")],
    );
    let r = with_origin(&any, Method::GET, "/v1/rulesets", "http://any.example", &[]);
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some("*")
    );
    assert_eq!(r.header("access-control-allow-credentials"), None);
}

#[test]
fn a_malformed_cors_origins_refuses_to_start() {
    let db = TestDb::new(Backend::Sqlite);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stammtisch"))
        .arg("serve")
        .env("DATABASE_URL", &db.url)
        .env("BIND_ADDR", "127.0.0.1:0")
        .env("CORS_ORIGINS", "allowed.example/")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CORS_ORIGINS"), "{err}");
}

fn ticket(server: &TestServer, token: &str, game: &str) -> Reply {
    let api = server.client();
    api.post(
        &format!("/v1/games/{game}/stream-tickets"),
        Some(token),
        &json!({}),
    )
}

fn a_stream_ticket_opens_the_stream_once_for_its_game_only(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let game = seated_game(&api, &host, std::slice::from_ref(&guest), 0, &json!({}));
    let other = seated_game(&api, &host, &[], 1, &json!({}));

    let issued = ticket(&server, &guest.token, &game);
    assert_eq!(issued.status, 201, "{}", issued.text);
    let t = issued.body["ticket"].as_str().unwrap().to_owned();
    let ttl = issued.body["expires_in"].as_u64().unwrap();
    assert!((1..=60).contains(&ttl), "expires_in {ttl}");
    assert!(t.len() >= 32, "a ticket carries enough randomness");
    assert_eq!(issued.header("cache-control").as_deref(), Some("no-store"));

    // Another game's stream refuses it (and that spends it).
    let path_other = format!("/v1/games/{other}/stream?ticket={t}");
    let refused = EventStream::try_open(&api.base, &path_other, None, None, PROMPT).err();
    refused
        .expect("a ticket is bound to its game")
        .assert_problem(401, "unauthorized");
    let fresh = ticket(&server, &guest.token, &game).body["ticket"]
        .as_str()
        .unwrap()
        .to_owned();

    // No Authorization header: the ticket is the credential, and it reads as the guest.
    let path = format!("/v1/games/{game}/stream?ticket={fresh}");
    let mut stream = EventStream::try_open(&api.base, &path, None, None, PROMPT)
        .unwrap_or_else(|r| panic!("ticket refused: {}", r.text));
    let backlog = api.events(&guest, &game);
    let mut private_seen = false;
    for expected in &backlog {
        let frame = stream.next_event().unwrap();
        assert_eq!(frame.data["seq"], expected["seq"]);
        private_seen |= frame.event.as_deref() == Some("hand_dealt");
        if frame.event.as_deref() == Some("hand_dealt") {
            assert_eq!(frame.data["data"]["seat"], 1, "the guest's own hand only");
        }
    }
    assert!(private_seen, "the stream reads as the ticket's account");
    let card = cards(&api.view(&host, &game)["you"]["hand"])[0];
    api.ok(&host, &game, &json!({ "type": "play_card", "card": card }));
    assert_eq!(
        stream.next_event().unwrap().event.as_deref(),
        Some("selection_made")
    );
    drop(stream);

    // Single use: the same ticket again is refused.
    EventStream::try_open(&api.base, &path, None, None, PROMPT)
        .err()
        .expect("a ticket works once")
        .assert_problem(401, "unauthorized");
    // Garbage, and no credential at all.
    for path in [
        format!("/v1/games/{game}/stream?ticket=not-a-ticket"),
        format!("/v1/games/{game}/stream"),
    ] {
        EventStream::try_open(&api.base, &path, None, None, PROMPT)
            .err()
            .expect("refused")
            .assert_problem(401, "unauthorized");
    }

    // An outsider gets no ticket for a private game: it does not exist for them.
    let outsider = api.guest("outsider");
    ticket(&server, &outsider.token, &game).assert_problem(404, "not_found");
    // Without a token, no ticket.
    let anonymous = api.post(
        &format!("/v1/games/{game}/stream-tickets"),
        None,
        &json!({}),
    );
    anonymous.assert_problem(401, "unauthorized");

    // Tickets never reach the log, though the stream requests did.
    let log = server.log_text();
    assert!(
        log.contains("stream opened"),
        "the stream requests are logged"
    );
    for secret in [&t, &fresh] {
        assert!(!log.contains(secret.as_str()), "a ticket is in the log");
    }
}

fn an_expired_ticket_is_refused(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let me = api.guest("late");
    let game = seated_game(&api, &me, &[], 1, &json!({}));
    let t = ticket(&server, &me.token, &game).body["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    // Past the default lifetime of 30 s.
    server.advance_clock(31);
    let path = format!("/v1/games/{game}/stream?ticket={t}");
    EventStream::try_open(&api.base, &path, None, None, PROMPT)
        .err()
        .expect("an expired ticket is refused")
        .assert_problem(401, "unauthorized");
}

const PROMPT: Duration = Duration::from_secs(10);

both!(
    a_stream_ticket_opens_the_stream_once_for_its_game_only,
    an_expired_ticket_is_refused
);

#[test]
fn a_ticket_lifetime_over_a_minute_refuses_to_start() {
    let db = TestDb::new(Backend::Sqlite);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stammtisch"))
        .arg("serve")
        .env("DATABASE_URL", &db.url)
        .env("BIND_ADDR", "127.0.0.1:0")
        .env("STREAM_TICKET_SECONDS", "61")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("STREAM_TICKET_SECONDS"));
}

#[test]
fn the_openapi_document_names_every_command_and_event_with_a_discriminator() {
    let server = TestServer::start(Backend::Sqlite);
    let doc = server.client().get("/openapi.json", None).body;
    let schemas = &doc["components"]["schemas"];
    for (union, names) in [
        (
            "Command",
            vec![
                "join",
                "leave",
                "add_bot",
                "remove_seat",
                "start",
                "play_card",
                "take_row",
                "draft_card",
                "keep_card",
                "pass",
                "take",
                "resign",
            ],
        ),
        (
            "Event",
            vec![
                "game_created",
                "seat_taken",
                "round_started",
                "hand_dealt",
                "selection_made",
                "cards_revealed",
                "card_placed",
                "card_kept",
                "passed",
                "card_taken",
                "round_ended",
                "game_finished",
            ],
        ),
    ] {
        let schema = &schemas[union];
        assert_eq!(schema["discriminator"]["propertyName"], "type", "{union}");
        let mapping = schema["discriminator"]["mapping"].as_object().unwrap();
        let refs: Vec<&str> = schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["$ref"].as_str().expect("every variant is a named schema"))
            .collect();
        assert_eq!(refs.len(), mapping.len(), "{union}");
        for name in names {
            let target = mapping[name].as_str().unwrap_or_else(|| panic!("{name}"));
            assert!(refs.contains(&target), "{name}");
            let variant = &schemas[target.trim_start_matches("#/components/schemas/")];
            let kind = variant["properties"]["type"]["$ref"]
                .as_str()
                .expect("the type enum is named");
            let kind = &schemas[kind.trim_start_matches("#/components/schemas/")];
            assert_eq!(kind["enum"], json!([name]));
        }
    }
    // The envelope types the event union: one wrapper per event type.
    let wrapper = schemas["EventItem"]["discriminator"]["mapping"]["card_placed"]
        .as_str()
        .unwrap();
    let parts = &schemas[wrapper.trim_start_matches("#/components/schemas/")]["allOf"];
    assert!(
        parts
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["$ref"] == "#/components/schemas/CardPlacedEvent")
    );
    // Every operation has a unique operationId.
    let mut ids = Vec::new();
    for (_, ops) in doc["paths"].as_object().unwrap() {
        for (_, op) in ops.as_object().unwrap() {
            ids.push(op["operationId"].as_str().unwrap().to_owned());
        }
    }
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count, "operationIds are unique");
    assert!(ids.contains(&"create_stream_ticket".to_owned()));
    assert!(ids.contains(&"post_command".to_owned()));
}

#[test]
fn unknown_paths_and_other_methods_are_problems_not_files() {
    let server = TestServer::start(Backend::Sqlite);
    let api = server.client();
    api.get("/no-such-file.js", None)
        .assert_problem(404, "not_found");
    api.post("/", None, &json!({}))
        .assert_problem(404, "not_found");
    api.get("/../Cargo.toml", None)
        .assert_problem(404, "not_found");
}

/// A Content-Security-Policy as directive → sources, to compare exactly (order aside).
fn policy(value: Option<String>) -> std::collections::BTreeMap<String, Vec<String>> {
    let value = value.expect("a Content-Security-Policy header");
    value
        .split(';')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            let mut words = d.split_whitespace().map(str::to_owned);
            let name = words.next().unwrap();
            (name, words.collect())
        })
        .collect()
}

fn directives(list: &[(&str, &[&str])]) -> std::collections::BTreeMap<String, Vec<String>> {
    list.iter()
        .map(|(name, sources)| {
            (
                (*name).to_owned(),
                sources.iter().map(|s| (*s).to_owned()).collect(),
            )
        })
        .collect()
}

fn assert_security_headers(what: &str, r: &Reply) {
    assert_eq!(
        r.header("referrer-policy").as_deref(),
        Some("no-referrer"),
        "{what}"
    );
    assert_eq!(
        r.header("x-frame-options").as_deref(),
        Some("DENY"),
        "{what}"
    );
    assert_eq!(
        r.header("x-content-type-options").as_deref(),
        Some("nosniff"),
        "{what}"
    );
}

/// The page, its files and the API's answers (errors included) carry a strict policy: all
/// from this origin, no inline script or style, no eval, no framing, no referrer; and the
/// page itself has no inline script, style element or style attribute the policy would
/// refuse. The API documentation gets the same but for inline styles (Swagger UI inserts
/// a style element).
#[test]
fn the_page_its_files_and_api_answers_carry_a_strict_content_security_policy() {
    let server = TestServer::start(Backend::Sqlite);
    let api = server.client();
    let strict = directives(&[
        ("default-src", &["'self'"]),
        ("script-src", &["'self'"]),
        ("style-src", &["'self'"]),
        ("img-src", &["'self'", "data:"]),
        ("connect-src", &["'self'"]),
        ("font-src", &["'self'"]),
        ("object-src", &["'none'"]),
        ("base-uri", &["'none'"]),
        ("form-action", &["'self'"]),
        ("frame-ancestors", &["'none'"]),
    ]);
    let page = api.get("/", None);
    assert_eq!(page.status, 200);
    let html = page.text.to_lowercase();
    assert!(html.contains("<script"), "the page loads its script");
    for tag in html.split("<script").skip(1) {
        let open = &tag[..tag.find('>').unwrap()];
        assert!(open.contains(" src="), "an inline script: <script{open}>");
    }
    assert!(!html.contains("<style"), "an inline style element");
    assert!(!html.contains(" style="), "a style attribute");
    let token = api.guest("anna").token;
    let answers = [
        ("the page", page),
        ("the script", api.get("/app.js", None)),
        ("the stylesheet", api.get("/app.css", None)),
        ("an API answer", api.get("/v1/me", Some(&token))),
        ("an API refusal", api.get("/v1/me", None)),
        ("an unknown path", api.get("/no-such-file.js", None)),
    ];
    for (what, r) in &answers {
        assert!(matches!(r.status, 200 | 401 | 404), "{what}: {}", r.status);
        assert_eq!(
            policy(r.header("content-security-policy")),
            strict,
            "{what}"
        );
        assert_security_headers(what, r);
    }
    let docs = api.get("/docs/", None);
    assert_eq!(docs.status, 200, "{}", docs.text);
    let mut loose = strict.clone();
    loose.insert(
        "style-src".into(),
        vec!["'self'".into(), "'unsafe-inline'".into()],
    );
    assert_eq!(policy(docs.header("content-security-policy")), loose);
    assert_security_headers("the docs", &docs);
}

/// One GET of the web client's files, with the raw body (a gzipped one is no text).
fn fetch(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> (u16, HeaderMap, Vec<u8>) {
    let mut req = reqwest::blocking::Client::new().get(format!("{}{path}", server.base));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let r = req.send().unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.bytes().unwrap().to_vec())
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

#[test]
fn the_client_goes_out_gzipped_and_files_named_by_their_hash_are_cached_for_good() {
    let server = TestServer::start(Backend::Sqlite);
    let (status, page_headers, page) = fetch(&server, "/", &[]);
    assert_eq!(status, 200);
    assert_eq!(header(&page_headers, "cache-control"), "no-cache");
    let page = String::from_utf8(page).unwrap();
    let mut total = (0, 0);
    for file in ["app.js", "app.css"] {
        // The page names each file with its content hash: `app.js?v=0123456789ab`.
        let at = page
            .find(&format!("{file}?v="))
            .expect("the page names the file");
        let url: String = page[at..].chars().take_while(|c| *c != '"').collect();
        let (status, plain_headers, plain) = fetch(&server, &format!("/{url}"), &[]);
        assert_eq!(status, 200, "{url}");
        assert_eq!(header(&plain_headers, "content-encoding"), "", "{url}");
        assert_eq!(
            header(&plain_headers, "cache-control"),
            "public, max-age=31536000, immutable",
            "{url}"
        );
        let gzip = [("accept-encoding", "gzip, deflate, br")];
        let (status, gz_headers, gz) = fetch(&server, &format!("/{url}"), &gzip);
        assert_eq!(status, 200, "{url}");
        assert_eq!(header(&gz_headers, "content-encoding"), "gzip", "{url}");
        assert!(header(&gz_headers, "vary").contains("Accept-Encoding"));
        assert_eq!(
            header(&gz_headers, "cache-control"),
            "public, max-age=31536000, immutable"
        );
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut unzipped)
            .unwrap();
        assert_eq!(unzipped, plain, "{url}: the gzipped file is the file");
        assert!(
            gz.len() * 2 < plain.len(),
            "{url}: {} of {}",
            gz.len(),
            plain.len()
        );
        assert_ne!(
            header(&gz_headers, "etag"),
            header(&plain_headers, "etag"),
            "each representation has its own strong ETag"
        );
        // Revalidation per representation.
        let etag = header(&gz_headers, "etag");
        let again = [
            ("accept-encoding", "gzip"),
            ("if-none-match", etag.as_str()),
        ];
        assert_eq!(fetch(&server, &format!("/{url}"), &again).0, 304);
        // A stale or missing hash is revalidated on every load; a refused gzip is plain.
        for other in [format!("/{file}"), format!("/{file}?v=000000000000")] {
            let (_, headers, _) = fetch(&server, &other, &[("accept-encoding", "gzip;q=0")]);
            assert_eq!(header(&headers, "cache-control"), "no-cache", "{other}");
            assert_eq!(header(&headers, "content-encoding"), "", "{other}");
        }
        total = (total.0 + plain.len(), total.1 + gz.len());
    }
    eprintln!(
        "web client: app.js + app.css {} bytes, {} bytes gzipped",
        total.0, total.1
    );
}
