//! Web Push: subscriptions and their checks, and deliveries as a browser's push service
//! sees them.
//!
//! A push-service stand-in on loopback (a `TcpListener` on 127.0.0.1, a thread per
//! connection) answers each request by a script and records it. The tests subscribe as a
//! browser does: a fresh P-256 key pair and 16 random bytes of auth secret, made with
//! Mozilla's `ece` (OpenSSL), which also decrypts what arrives (RFC 8291, `aes128gcm`) —
//! an implementation independent of the server's. The VAPID JWT of every request is
//! verified against the key `GET /v1/push/key` serves. The servers run with
//! `WEBHOOK_ALLOW_LOOPBACK=true`, which lets a push endpoint be plain `http` on loopback;
//! time moves by the test clock.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, Reply, TestServer};
use crate::webhooks::{
    asked, dealt, dev_server, first_move, lobby, outbox, settle_and_skip_an_hour, wait_for_status,
};

/// A browser: its push key pair and auth secret, as `pushManager.subscribe` makes them.
struct Browser {
    keys: ece::EcKeyComponents,
    auth: [u8; 16],
}

impl Browser {
    fn new() -> Self {
        let (pair, auth) = ece::generate_keypair_and_auth_secret().unwrap();
        Self {
            keys: pair.raw_components().unwrap(),
            auth,
        }
    }

    /// What `PushSubscription.toJSON()` gives for `endpoint`.
    fn subscription(&self, endpoint: &str) -> Value {
        json!({
            "endpoint": endpoint,
            "expirationTime": null,
            "keys": {
                "p256dh": URL_SAFE_NO_PAD.encode(self.keys.public_key()),
                "auth": URL_SAFE_NO_PAD.encode(self.auth),
            }
        })
    }

    /// The plaintext of an `aes128gcm` push body.
    fn open(&self, body: &[u8]) -> Result<Vec<u8>, ece::Error> {
        ece::decrypt(&self.keys, &self.auth, body)
    }

    /// The JSON of a push body.
    fn read(&self, body: &[u8]) -> Value {
        let plain = self.open(body).unwrap();
        serde_json::from_slice(&plain).unwrap()
    }
}

/// One request the stand-in got.
#[derive(Debug, Clone)]
struct Request {
    method: String,
    path: String,
    /// Header names in lower case.
    headers: HashMap<String, String>,
    body: Vec<u8>,
    answered: u16,
}

impl Request {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }
}

/// How the stand-in answers the `nth` request (from 1) to a path: a status and an optional
/// `Retry-After`.
type Script = Arc<dyn Fn(&str, usize) -> (u16, Option<&'static str>) + Send + Sync>;

/// A push service on loopback.
struct PushService {
    base: String,
    log: Arc<Mutex<Vec<Request>>>,
}

impl PushService {
    fn start(
        script: impl Fn(&str, usize) -> (u16, Option<&'static str>) + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let log: Arc<Mutex<Vec<Request>>> = Arc::default();
        let script: Script = Arc::new(script);
        let shared = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let log = Arc::clone(&shared);
                let script = Arc::clone(&script);
                std::thread::spawn(move || serve(stream, &log, &script));
            }
        });
        Self { base, log }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    fn to(&self, path: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// Waits (at most 20 s) until `done` holds for the requests so far.
    fn wait(&self, what: &str, done: impl Fn(&[Request]) -> bool) -> Vec<Request> {
        let start = Instant::now();
        loop {
            let requests = self.requests();
            if done(&requests) {
                return requests;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "timed out waiting for {what}; received: {:?}",
                requests
                    .iter()
                    .map(|r| (&r.path, r.answered))
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits until `path` got `n` requests; returns them.
    fn wait_for(&self, path: &str, n: usize) -> Vec<Request> {
        self.wait(&format!("{n} requests to {path}"), |r| {
            r.iter().filter(|r| r.path == path).count() >= n
        });
        self.to(path)
    }
}

/// Reads one request, records it, answers by the script, closes the connection.
fn serve(stream: TcpStream, log: &Mutex<Vec<Request>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap();
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
    }
    let length: usize = headers
        .get("content-length")
        .expect("a request with Content-Length")
        .parse()
        .unwrap();
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let (status, retry_after) = {
        let mut log = log.lock().unwrap();
        let nth = 1 + log.iter().filter(|r| r.path == path).count();
        let (status, retry_after) = script(&path, nth);
        log.push(Request {
            method,
            path,
            headers,
            body,
            answered: status,
        });
        (status, retry_after)
    };
    let extra = retry_after.map_or_else(String::new, |s| format!("Retry-After: {s}\r\n"));
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} Scripted\r\nContent-Length: 0\r\n{extra}Connection: close\r\n\r\n"
    );
    let _ = stream.flush();
}

/// Settles the outbox, then asserts that delivery `id` has recorded its failed attempt
/// number `attempts` with an error naming `status` and is pending again. After the settle
/// every send due at the clock's time has ended and been recorded: nothing to wait for.
fn assert_recorded(server: &TestServer, id: &str, attempts: i32, status: &str) {
    server.settle_outbox();
    let rows = outbox(server.backend, &server.db.url);
    assert!(
        rows.get(id).is_some_and(|r| {
            r.0 == "pending"
                && r.1 == attempts
                && r.2.as_deref().is_some_and(|e| e.contains(status))
        }),
        "delivery {id} did not record attempt {attempts} ({status}): {rows:?}"
    );
}

/// The VAPID public key the server serves (base64url).
fn served_key(api: &Api) -> String {
    let r = api.get("/v1/push/key", None);
    assert_eq!(r.status, 200, "{}", r.text);
    let key = r.body["public_key"].as_str().unwrap().to_owned();
    let bytes = URL_SAFE_NO_PAD.decode(&key).unwrap();
    assert_eq!(
        (bytes.len(), bytes[0]),
        (65, 4),
        "an uncompressed P-256 point"
    );
    key
}

/// Subscribes `browser` at `endpoint` for `p`, asking for texts in `language`; returns the
/// subscription's id.
fn subscribe(api: &Api, p: &Player, browser: &Browser, endpoint: &str, language: &str) -> String {
    let r = api.post_with(
        "/v1/me/push-subscriptions",
        Some(&p.token),
        &browser.subscription(endpoint),
        &[("Accept-Language", language)],
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        r.header("location").as_deref(),
        Some(format!("/v1/me/push-subscriptions/{id}").as_str())
    );
    assert_eq!(r.body["language"], language);
    id
}

/// The caller's subscriptions.
fn subscriptions(api: &Api, p: &Player) -> Vec<Value> {
    let r = api.get("/v1/me/push-subscriptions", Some(&p.token));
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        !r.text.contains("p256dh") && !r.text.contains("auth\""),
        "keys are never shown: {}",
        r.text
    );
    r.body["items"].as_array().unwrap().clone()
}

/// Checks what a push request carries besides its body: POST, `aes128gcm`, a `TTL`, an
/// `Urgency`, and a VAPID `Authorization` whose JWT verifies against `key` with the
/// endpoint's origin as audience, a contact as subject and an expiry in the future (within
/// a day, plus `advanced` seconds the test moved the server's clock).
fn assert_push_headers(r: &Request, key: &str, origin: &str, advanced: i64) {
    assert_eq!(r.method, "POST");
    assert_eq!(r.header("content-encoding"), "aes128gcm");
    assert_eq!(r.header("content-type"), "application/octet-stream");
    let ttl: u64 = r.header("ttl").parse().unwrap();
    assert!(ttl > 0, "TTL {ttl}");
    assert!(
        ["very-low", "low", "normal", "high"].contains(&r.header("urgency")),
        "Urgency {:?}",
        r.header("urgency")
    );
    let authorization = r.header("authorization");
    let fields: HashMap<&str, &str> = authorization
        .strip_prefix("vapid ")
        .unwrap_or_else(|| panic!("Authorization {authorization:?}"))
        .split(',')
        .map(|f| f.trim().split_once('=').unwrap())
        .collect();
    assert_eq!(fields["k"], key, "the served key");
    let public = URL_SAFE_NO_PAD.decode(fields["k"]).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[origin]);
    validation.set_required_spec_claims(&["exp", "aud", "sub"]);
    let decoding = jsonwebtoken::DecodingKey::from_ec_der(&public);
    let claims = jsonwebtoken::decode::<Value>(fields["t"], &decoding, &validation)
        .unwrap_or_else(|e| panic!("the VAPID JWT does not verify: {e}"))
        .claims;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let exp = claims["exp"].as_i64().unwrap();
    assert!(
        exp > now && exp <= now + 24 * 3600 + advanced,
        "exp {exp}, now {now}"
    );
    let sub = claims["sub"].as_str().unwrap();
    assert!(
        sub.starts_with("mailto:") || sub.starts_with("https://"),
        "sub {sub}"
    );
    // A signature that was changed does not verify.
    let (signed, signature) = fields["t"].rsplit_once('.').unwrap();
    let mut forged = URL_SAFE_NO_PAD.decode(signature).unwrap();
    forged[10] ^= 1;
    let forged = format!("{signed}.{}", URL_SAFE_NO_PAD.encode(forged));
    assert!(jsonwebtoken::decode::<Value>(&forged, &decoding, &validation).is_err());
}

fn subscriptions_are_checked_listed_and_removed(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let key = served_key(&api);
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let browser = Browser::new();
    let good = browser.subscription("https://93.184.215.14/push/v2/abc");

    // Not https, not a URL, internal addresses (no development setting here), bad keys,
    // missing or unknown fields: 422 problems, nothing stored.
    let refused = |body: &Value, code: &str| {
        let r = api.post("/v1/me/push-subscriptions", Some(&anna.token), body);
        r.assert_problem(422, code);
        r
    };
    let with = |pointer: &str, value: Value| {
        let mut body = good.clone();
        *body.pointer_mut(pointer).unwrap() = value;
        body
    };
    refused(
        &with("/endpoint", json!("http://93.184.215.14/push/v2/abc")),
        "invalid_push_endpoint",
    );
    refused(
        &with("/endpoint", json!("push.example")),
        "invalid_push_endpoint",
    );
    refused(
        &with("/endpoint", json!("https://user:pw@93.184.215.14/p")),
        "invalid_push_endpoint",
    );
    for internal in [
        "https://127.0.0.1:8443/push",
        "https://[::1]/push",
        "https://10.1.2.3/push",
        "https://169.254.169.254/latest",
        "https://localhost/push",
        "http://127.0.0.1:9/push",
    ] {
        let r = api.post(
            "/v1/me/push-subscriptions",
            Some(&anna.token),
            &with("/endpoint", json!(internal)),
        );
        assert_eq!(r.status, 422, "{internal}: {}", r.text);
        assert!(
            ["push_endpoint_not_allowed", "invalid_push_endpoint"]
                .contains(&r.body["code"].as_str().unwrap()),
            "{internal}: {}",
            r.text
        );
    }
    let not_allowed = refused(
        &with("/endpoint", json!("https://10.1.2.3/push")),
        "push_endpoint_not_allowed",
    );
    assert!(
        not_allowed.body["detail"]
            .as_str()
            .unwrap()
            .contains("10.1.2.3"),
        "{}",
        not_allowed.text
    );
    let off_curve = {
        let mut point = vec![4u8];
        point.extend([7u8; 64]);
        URL_SAFE_NO_PAD.encode(point)
    };
    let short = URL_SAFE_NO_PAD.encode([4u8; 33]);
    for bad in [off_curve, short, "not base64!".into(), String::new()] {
        refused(&with("/keys/p256dh", json!(bad)), "invalid_push_keys");
    }
    for bad in [
        URL_SAFE_NO_PAD.encode([1u8; 15]),
        URL_SAFE_NO_PAD.encode([1u8; 17]),
        "***".into(),
    ] {
        refused(&with("/keys/auth", json!(bad)), "invalid_push_keys");
    }
    let mut no_keys = good.clone();
    no_keys.as_object_mut().unwrap().remove("keys");
    refused(&no_keys, "validation_failed");
    refused(&with("/expirationTime", json!("soon")), "validation_failed");
    let mut unknown = good.clone();
    unknown["surprise"] = json!(1);
    refused(&unknown, "validation_failed");
    let mut french = good.clone();
    french["language"] = json!("fr");
    refused(&french, "validation_failed");
    // In German, titled and worded in German.
    let r = api.post_with(
        "/v1/me/push-subscriptions",
        Some(&anna.token),
        &with("/endpoint", json!("http://93.184.215.14/p")),
        &[("Accept-Language", "de")],
    );
    r.assert_problem(422, "invalid_push_endpoint");
    assert_eq!(r.body["title"], "Ungültiger Push-Endpunkt");
    assert!(subscriptions(&api, &anna).is_empty());
    let r = api.post("/v1/me/push-subscriptions", None, &good);
    r.assert_problem(401, "unauthorized");

    // A browser's subscription, padded keys accepted; the list shows it without its keys.
    let mut padded = good.clone();
    padded["keys"]["auth"] = json!(base64::engine::general_purpose::URL_SAFE.encode(browser.auth));
    let id = subscribe(
        &api,
        &anna,
        &browser,
        "https://93.184.215.14/push/v2/abc",
        "en",
    );
    let listed = subscriptions(&api, &anna);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["endpoint"], "https://93.184.215.14/push/v2/abc");
    // The same browser again: the same subscription, new language.
    let again = api.post_with(
        "/v1/me/push-subscriptions",
        Some(&anna.token),
        &padded,
        &[("Accept-Language", "de-AT, en;q=0.5")],
    );
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body["id"], id.as_str());
    assert_eq!(again.body["language"], "de");
    assert_eq!(subscriptions(&api, &anna).len(), 1);
    let settings = api.get("/v1/me/push", Some(&anna.token));
    assert_eq!(settings.status, 200, "{}", settings.text);
    assert_eq!(
        settings.body,
        json!({
            "your_turn": true,
            "deadline_hours": null,
            "game_finished": true,
            "rematch_offered": true,
            "subscriptions": 1
        })
    );

    // Another account cannot see or remove it; the browser moving to bert takes it along.
    let r = api.delete(&format!("/v1/me/push-subscriptions/{id}"), &bert.token);
    r.assert_problem(404, "not_found");
    let r = api.delete("/v1/me/push-subscriptions/not-a-uuid", &anna.token);
    r.assert_problem(404, "not_found");
    let moved = subscribe(
        &api,
        &bert,
        &browser,
        "https://93.184.215.14/push/v2/abc",
        "en",
    );
    assert_ne!(moved, id);
    assert!(subscriptions(&api, &anna).is_empty());
    assert_eq!(subscriptions(&api, &bert).len(), 1);
    let r = api.delete(&format!("/v1/me/push-subscriptions/{moved}"), &bert.token);
    assert_eq!(r.status, 204, "{}", r.text);
    assert!(subscriptions(&api, &bert).is_empty());

    // At most 10 browsers an account.
    for n in 0..10 {
        let endpoint = format!("https://93.184.215.14/push/{n}");
        subscribe(&api, &anna, &Browser::new(), &endpoint, "en");
    }
    refused(
        &Browser::new().subscription("https://93.184.215.14/push/10"),
        "too_many_push_subscriptions",
    );
    assert_eq!(subscriptions(&api, &anna).len(), 10);

    // Choices: absent fields stay, bounds are checked.
    let r = api.patch(
        "/v1/me/push",
        &anna.token,
        &json!({ "your_turn": false, "deadline_hours": 2 }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["your_turn"], false);
    assert_eq!(r.body["deadline_hours"], 2);
    assert_eq!(r.body["game_finished"], true);
    for bad in [
        json!({ "deadline_hours": 721 }),
        json!({ "your_turn": "no" }),
        json!({ "surprise": true }),
    ] {
        api.patch("/v1/me/push", &anna.token, &bad)
            .assert_problem(422, "validation_failed");
    }
    let r = api.patch("/v1/me/push", &anna.token, &json!({ "deadline_hours": 0 }));
    assert_eq!(r.body["deadline_hours"], Value::Null);
    assert_eq!(r.body["your_turn"], false);

    // Deleting the account takes its browsers and choices along.
    let r = Reply::from_response(
        api.http
            .delete(api.url("/v1/me"))
            .bearer_auth(&anna.token)
            .json(&json!({}))
            .send()
            .unwrap(),
    );
    assert_eq!(r.status, 204, "{}", r.text);
    for table in ["push_subscriptions", "push_settings"] {
        let left = crate::accounts::texts(
            &server,
            &format!(
                "SELECT account_id AS v FROM {table} WHERE account_id = '{}'",
                anna.id
            ),
        );
        assert!(left.is_empty(), "{table}: {left:?}");
    }

    // The key is the server's own, kept across restarts.
    let server = server.restart();
    assert_eq!(served_key(&server.client()), key);
}

/// Plays `game` to its end. Before a person with a browser moves, waits for the push of
/// that ask and checks what it says; returns the final view.
fn play_waiting_for_pushes(
    api: &Api,
    game: &str,
    players: &[(&Player, &Browser, &str)],
    service: &PushService,
) -> Value {
    let mut acted: HashMap<String, usize> = HashMap::new();
    for _ in 0..500 {
        let first = api.view(players[0].0, game);
        if first["status"] == "finished" {
            return first;
        }
        for (p, browser, path) in players {
            let view = api.view(p, game);
            let Some(cmd) = first_move(&view) else {
                continue;
            };
            let n = acted.get(&p.name).copied().unwrap_or(0) + 1;
            service.wait(&format!("push #{n} to {}", p.name), |r| {
                r.iter()
                    .filter(|r| r.path == *path)
                    .filter(|r| browser.read(&r.body)["kind"] == "your_turn")
                    .count()
                    >= n
            });
            let turns: Vec<Value> = service
                .to(path)
                .iter()
                .map(|r| browser.read(&r.body))
                .filter(|m| m["kind"] == "your_turn")
                .collect();
            assert_eq!(turns.len(), n, "one push per ask of {}", p.name);
            let latest = &turns[n - 1];
            assert_eq!(latest["game_id"], game);
            assert_eq!(latest["url"], format!("#/games/{game}"));
            assert_eq!(latest["games_waiting"], 1);
            let words = match asked(&view)[0].as_str() {
                "start" => ["start the game", "starte das Spiel"],
                "play_card" => ["play a card", "spiel eine Karte"],
                "take_row" => ["take a row", "nimm eine Reihe"],
                other => panic!("asked {other}"),
            };
            let body = latest["body"].as_str().unwrap();
            assert!(
                body.contains(words[0]) || body.contains(words[1]),
                "{latest}"
            );
            api.ok(p, game, &cmd);
            *acted.entry(p.name.clone()).or_default() += 1;
            break;
        }
    }
    panic!("the game did not finish");
}

fn pushes_are_encrypted_signed_and_hold_no_secrets(backend: Backend) {
    let server = dev_server(backend, &[("PUSH_COALESCE_SECONDS", "0")]);
    let api = server.client();
    let key = served_key(&api);
    let service = PushService::start(|_, _| (201, None));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let anna_browser = Browser::new();
    let bert_browser = Browser::new();
    subscribe(&api, &anna, &anna_browser, &service.url("/push/anna"), "de");
    subscribe(&api, &bert, &bert_browser, &service.url("/push/bert"), "en");
    let deal = json!({ "rows": [[1], [2], [3], [4]], "hands": [dealt(0), dealt(1)] });
    let game = lobby(&api, &anna, &bert, Some(deal));

    let end = play_waiting_for_pushes(
        &api,
        &game,
        &[
            (&anna, &anna_browser, "/push/anna"),
            (&bert, &bert_browser, "/push/bert"),
        ],
        &service,
    );
    assert_eq!(end["status"], "finished");
    let finished = |path: &'static str, browser: &Browser| {
        service
            .to(path)
            .iter()
            .map(|r| browser.read(&r.body))
            .find(|m| m["kind"] == "game_finished")
    };
    service.wait("game_finished for both", |_| {
        finished("/push/anna", &anna_browser).is_some()
            && finished("/push/bert", &bert_browser).is_some()
    });
    let over = finished("/push/anna", &anna_browser).unwrap();
    assert_eq!(over["title"], "Partie beendet");
    assert_eq!(over["url"], format!("#/games/{game}"));
    assert!(
        over["body"].as_str().unwrap().contains("gewonnen von"),
        "{over}"
    );
    let over = finished("/push/bert", &bert_browser).unwrap();
    assert_eq!(over["title"], "Game over");
    assert!(over["body"].as_str().unwrap().contains("won by"), "{over}");

    // A rematch keeps bert's seat: he is told, with the new game's link.
    let r = api.post(
        &format!("/v1/games/{game}/rematch"),
        Some(&anna.token),
        &json!({}),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let rematch = r.body["id"].as_str().unwrap().to_owned();
    service.wait("the rematch offer", |r| {
        r.iter()
            .filter(|r| r.path == "/push/bert")
            .any(|r| bert_browser.read(&r.body)["kind"] == "rematch_offered")
    });
    let offer = service
        .to("/push/bert")
        .iter()
        .map(|r| bert_browser.read(&r.body))
        .find(|m| m["kind"] == "rematch_offered")
        .unwrap();
    assert_eq!(offer["url"], format!("#/games/{rematch}"));
    assert_eq!(offer["title"], "Rematch");

    // Every request: a real push request, readable only with the browser's keys, and
    // nothing in it that is not public.
    let origin = service.base.clone();
    let secret: BTreeSet<u64> = dealt(0).into_iter().chain(dealt(1)).collect();
    let requests = service.requests();
    assert!(requests.len() >= 6, "{}", requests.len());
    let stranger = Browser::new();
    for r in &requests {
        assert_push_headers(r, &key, &origin, 0);
        let browser = if r.path == "/push/anna" {
            &anna_browser
        } else {
            &bert_browser
        };
        assert!(stranger.open(&r.body).is_err(), "only its browser reads it");
        let other = if r.path == "/push/anna" {
            &bert_browser
        } else {
            &anna_browser
        };
        assert!(other.open(&r.body).is_err(), "only its browser reads it");
        let plain = String::from_utf8(browser.open(&r.body).unwrap()).unwrap();
        let message: Value = serde_json::from_str(&plain).unwrap();
        let keys: BTreeSet<&str> = message
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let allowed: BTreeSet<&str> = [
            "id",
            "kind",
            "title",
            "body",
            "url",
            "tag",
            "game_id",
            "ruleset",
            "games_waiting",
            "lang",
        ]
        .into();
        assert!(keys.is_subset(&allowed), "{message}");
        for key in ["id", "kind", "title", "body", "url", "tag", "game_id"] {
            assert!(message[key].is_string(), "{key} in {message}");
        }
        assert_eq!(message["ruleset"], "6-nimmt");
        let words = format!("{} {}", message["title"], message["body"]);
        for token in words.split(|c: char| !c.is_ascii_digit()) {
            if let Ok(n) = token.parse::<u64>() {
                assert!(!secret.contains(&n), "card {n} in {message}");
            }
        }
        let lower = plain.to_lowercase();
        for word in ["hand", "seed", "chips", "selected", "deal", "karte\":"] {
            assert!(!lower.contains(word), "{word} in {plain}");
        }
        if message["kind"] == "your_turn" {
            assert_eq!(r.header("topic"), "your-turn");
            assert_eq!(message["tag"], "your-turn");
            let title = message["title"].as_str().unwrap();
            let expected = if r.path == "/push/anna" {
                "Du bist am Zug"
            } else {
                "Your turn"
            };
            assert_eq!(title, expected);
        }
    }
}

fn a_subscription_its_service_no_longer_knows_is_removed(backend: Backend) {
    let server = dev_server(backend, &[("PUSH_COALESCE_SECONDS", "0")]);
    let url = server.db.url.clone();
    let api = server.client();
    let service = PushService::start(|path, _| match path {
        "/push/gone" => (410, None),
        "/push/missing" => (404, None),
        _ => (201, None),
    });
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let gone = Browser::new();
    let missing = Browser::new();
    subscribe(&api, &anna, &gone, &service.url("/push/gone"), "en");
    subscribe(&api, &anna, &missing, &service.url("/push/missing"), "en");
    assert_eq!(subscriptions(&api, &anna).len(), 2);
    let game = lobby(&api, &anna, &bert, None);

    // Asked to start: each service answers that it does not know the browser.
    let first = service.wait_for("/push/gone", 1)[0].clone();
    service.wait_for("/push/missing", 1);
    let id = gone.read(&first.body)["id"].as_str().unwrap().to_owned();
    crate::support::wait_until(
        "both subscriptions removed",
        Duration::from_secs(20),
        || subscriptions(&api, &anna).is_empty(),
    );
    wait_for_status(backend, &url, &id, "failed");
    let rows = outbox(backend, &url);
    assert!(
        rows[&id].2.as_deref().unwrap_or("").contains("410"),
        "{rows:?}"
    );
    assert_eq!(rows[&id].1, 1, "one attempt: {rows:?}");

    // Later asks go nowhere.
    api.ok(&anna, &game, &json!({ "type": "start" }));
    settle_and_skip_an_hour(&server);
    assert_eq!(service.requests().len(), 2, "nothing more was sent");
    let settings = api.get("/v1/me/push", Some(&anna.token));
    assert_eq!(settings.body["subscriptions"], 0);
}

fn a_throttled_or_failing_push_service_gets_the_push_again_later(backend: Backend) {
    // Backoff a minute, doubling; the breaker is tested with webhooks.
    let server = dev_server(
        backend,
        &[
            ("PUSH_COALESCE_SECONDS", "0"),
            ("WEBHOOK_BACKOFF_MS", "60000"),
            ("WEBHOOK_BREAKER_FAILURES", "0"),
        ],
    );
    let url = server.db.url.clone();
    let api = server.client();
    let service = PushService::start(|_, nth| match nth {
        1 => (429, Some("120")),
        2 => (503, None),
        _ => (201, None),
    });
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let browser = Browser::new();
    subscribe(&api, &anna, &browser, &service.url("/push/slow"), "en");
    lobby(&api, &anna, &bert, None);

    // 429 with Retry-After 120: not retried after the backoff's minute, but after two.
    let first = service.wait_for("/push/slow", 1)[0].clone();
    let id = browser.read(&first.body)["id"].as_str().unwrap().to_owned();
    assert_recorded(&server, &id, 1, "429");
    server.advance_clock(60);
    server.settle_outbox();
    assert_eq!(service.requests().len(), 1, "not before Retry-After");
    server.advance_clock(60);
    service.wait_for("/push/slow", 2);

    // 503 without Retry-After: the second backoff, two minutes.
    assert_recorded(&server, &id, 2, "503");
    server.advance_clock(60);
    server.settle_outbox();
    assert_eq!(service.requests().len(), 2, "not before the backoff");
    server.advance_clock(60);
    let requests = service.wait_for("/push/slow", 3);
    wait_for_status(backend, &url, &id, "delivered");

    // The same notification each time, encrypted anew.
    let ids: Vec<Value> = requests
        .iter()
        .map(|r| browser.read(&r.body)["id"].clone())
        .collect();
    assert_eq!(ids, [json!(id), json!(id), json!(id)]);
    assert_ne!(requests[0].body, requests[1].body);
    assert_eq!(subscriptions(&api, &anna).len(), 1, "the browser stays");
}

fn a_push_that_keeps_failing_is_given_up(backend: Backend) {
    let server = dev_server(
        backend,
        &[
            ("PUSH_COALESCE_SECONDS", "0"),
            ("WEBHOOK_BACKOFF_MS", "1000"),
            ("WEBHOOK_BREAKER_FAILURES", "0"),
        ],
    );
    let url = server.db.url.clone();
    let api = server.client();
    // 500 and 503 by turns, so that each attempt's failure is told from the one before.
    let service = PushService::start(|_, nth| (if nth % 2 == 1 { 500 } else { 503 }, None));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let browser = Browser::new();
    subscribe(&api, &anna, &browser, &service.url("/push/down"), "en");
    lobby(&api, &anna, &bert, None);
    let first = service.wait_for("/push/down", 1)[0].clone();
    let id = browser.read(&first.body)["id"].as_str().unwrap().to_owned();
    for attempt in 1..10 {
        assert_recorded(
            &server,
            &id,
            attempt,
            ["503", "500"][(attempt % 2) as usize],
        );
        // Past any backoff (at most ten minutes).
        server.advance_clock(600);
    }
    wait_for_status(backend, &url, &id, "failed");
    let rows = outbox(backend, &url);
    assert_eq!(rows[&id].1, 10, "{rows:?}");
    settle_and_skip_an_hour(&server);
    assert_eq!(service.requests().len(), 10);
    assert_eq!(subscriptions(&api, &anna).len(), 1, "the browser stays");
}

fn several_waiting_games_come_as_one_notification(backend: Backend) {
    let server = dev_server(backend, &[("PUSH_COALESCE_SECONDS", "600")]);
    let url = server.db.url.clone();
    let api = server.client();
    let key = served_key(&api);
    let service = PushService::start(|_, _| (201, None));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let english = Browser::new();
    let german = Browser::new();
    subscribe(&api, &anna, &english, &service.url("/push/en"), "en");
    subscribe(&api, &anna, &german, &service.url("/push/de"), "de");
    let read = |r: &Request| {
        if r.path == "/push/en" {
            english.read(&r.body)
        } else {
            german.read(&r.body)
        }
    };

    // The first ask is told at once.
    let first = lobby(&api, &anna, &bert, None);
    service.wait_for("/push/en", 1);
    service.wait_for("/push/de", 1);
    for r in service.requests() {
        let m = read(&r);
        assert_eq!(m["url"], format!("#/games/{first}"));
        assert_eq!(m["games_waiting"], 1);
    }

    // Two more within the window: they wait, and come as one.
    let _second = lobby(&api, &anna, &bert, None);
    let third = lobby(&api, &anna, &bert, None);
    server.settle_outbox();
    assert_eq!(
        service.requests().len(),
        2,
        "nothing before the window ends"
    );
    server.advance_clock(600);
    let en = service.wait_for("/push/en", 2);
    let de = service.wait_for("/push/de", 2);
    let en = read(&en[1]);
    let de = read(&de[1]);
    assert_eq!(en["title"], "3 games wait for you", "{en}");
    assert_eq!(de["title"], "3 Partien warten auf dich", "{de}");
    for m in [&en, &de] {
        assert_eq!(m["kind"], "your_turn");
        assert_eq!(m["games_waiting"], 3);
        assert_eq!(m["url"], format!("#/games/{third}"), "the newest game");
        assert_eq!(m["tag"], "your-turn");
    }
    for r in service.requests() {
        assert_eq!(r.header("topic"), "your-turn");
        assert_push_headers(&r, &key, &service.base, 600);
    }
    let rows = outbox(backend, &url);
    let joined = rows
        .values()
        .filter(|r| r.0 == "dropped" && r.2.as_deref() == Some("joined a newer your_turn"))
        .count();
    assert_eq!(joined, 2, "the second game's push per browser: {rows:?}");
    settle_and_skip_an_hour(&server);
    assert_eq!(service.requests().len(), 4, "no burst");

    // After the window the next ask is told at once, counting every waiting game.
    let fourth = lobby(&api, &anna, &bert, None);
    let en = read(&service.wait_for("/push/en", 3)[2]);
    assert_eq!(en["title"], "4 games wait for you", "{en}");
    assert_eq!(en["url"], format!("#/games/{fourth}"));
    service.wait_for("/push/de", 3);
    // An ask that is gone before its push is sent is not told, nor are the games told of
    // before told again.
    let fifth = lobby(&api, &anna, &bert, None);
    api.ok(&bert, &fifth, &json!({ "type": "leave" }));
    assert!(asked(&api.view(&anna, &fifth)).is_empty());
    server.advance_clock(600);
    settle_and_skip_an_hour(&server);
    assert_eq!(
        service.requests().len(),
        6,
        "the fifth game's ask went untold"
    );

    // Without the choice, no "your turn" at all.
    let r = api.patch("/v1/me/push", &anna.token, &json!({ "your_turn": false }));
    assert_eq!(r.status, 200, "{}", r.text);
    lobby(&api, &anna, &bert, None);
    settle_and_skip_an_hour(&server);
    assert_eq!(service.requests().len(), 6, "nothing while switched off");
}

fn a_deadline_push_comes_the_chosen_hours_before_the_deadline(backend: Backend) {
    let server = dev_server(backend, &[("PUSH_COALESCE_SECONDS", "0")]);
    let api = server.client();
    let service = PushService::start(|_, _| (201, None));
    let anna = api.guest("anna");
    let bert = api.guest("bert");
    let browser = Browser::new();
    subscribe(&api, &anna, &browser, &service.url("/push/anna"), "de");
    let r = api.patch(
        "/v1/me/push",
        &anna.token,
        &json!({ "your_turn": false, "deadline_hours": 1.0 }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["deadline_hours"], 1);
    let game = api.create_game(
        &anna,
        &json!({
            "ruleset": "6-nimmt", "players": 2, "name": "Freitag",
            "move_deadline_seconds": 10800, "options": { "end": { "rounds": 1 } }
        }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.join(&bert, &game);
    api.ok(&anna, &game, &json!({ "type": "start" }));

    // Three hours to move; told an hour before the end.
    server.advance_clock(2 * 3600 - 60);
    server.settle_outbox();
    assert!(service.requests().is_empty(), "not yet");
    server.advance_clock(60);
    let r = service.wait_for("/push/anna", 1)[0].clone();
    let m = browser.read(&r.body);
    assert_eq!(m["kind"], "deadline_soon");
    assert_eq!(m["title"], "Deine Zugfrist läuft bald ab");
    assert!(
        m["body"]
            .as_str()
            .unwrap()
            .starts_with("\"Freitag\" (6-nimmt)"),
        "{m}"
    );
    assert_eq!(m["url"], format!("#/games/{game}"));
    assert_eq!(r.header("urgency"), "high");
    assert_eq!(r.header("topic"), "");
    settle_and_skip_an_hour(&server);
    assert_eq!(service.requests().len(), 1, "once");
}

both!(
    a_deadline_push_comes_the_chosen_hours_before_the_deadline,
    subscriptions_are_checked_listed_and_removed,
    pushes_are_encrypted_signed_and_hold_no_secrets,
    a_subscription_its_service_no_longer_knows_is_removed,
    a_throttled_or_failing_push_service_gets_the_push_again_later,
    a_push_that_keeps_failing_is_given_up,
    several_waiting_games_come_as_one_notification,
);
