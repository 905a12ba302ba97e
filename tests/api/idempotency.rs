//! `Idempotency-Key`: the first response again, nothing applied twice, across restarts.

use std::sync::{Arc, Barrier};

use serde_json::json;

use crate::both;
use crate::support::{Backend, TestServer, cards, seated_game};

fn a_repeated_key_returns_the_first_response_and_appends_nothing(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let other = api.guest("other");
    let game = seated_game(&api, &host, std::slice::from_ref(&other), 0, &json!({}));
    let hand = cards(&api.view(&host, &game)["you"]["hand"]);
    let path = format!("/v1/games/{game}/commands");
    let first = api.post_with(
        &path,
        Some(&host.token),
        &json!({ "type": "play_card", "card": hand[0] }),
        &[("Idempotency-Key", "k-1")],
    );
    assert_eq!(first.status, 200, "{}", first.text);
    let version = first.body["version"].as_i64().unwrap();
    // The same request again: the first response, nothing applied. (The same key with
    // another request is refused: see `hardening`.)
    let again = api.post_with(
        &path,
        Some(&host.token),
        &json!({ "type": "play_card", "card": hand[0] }),
        &[("Idempotency-Key", "k-1")],
    );
    assert_eq!(again.status, 200);
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("etag"), first.header("etag"));
    assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
    let view = api.view(&host, &game);
    assert_eq!(view["version"], version);
    assert_eq!(view["you"]["selected"], hand[0]);
    // Keys are per account: the other player's same key is a new command.
    let theirs = cards(&api.view(&other, &game)["you"]["hand"]);
    let r = api.post_with(
        &path,
        Some(&other.token),
        &json!({ "type": "play_card", "card": theirs[0] }),
        &[("Idempotency-Key", "k-1")],
    );
    assert_eq!(r.status, 200);
    assert!(r.body["version"].as_i64().unwrap() > version);
}

fn concurrent_requests_with_one_key_apply_once(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let other = api.guest("other");
    let game = seated_game(&api, &host, &[other], 0, &json!({}));
    let before = api.view(&host, &game);
    let card = cards(&before["you"]["hand"])[3];
    let barrier = Arc::new(Barrier::new(10));
    let handles: Vec<_> = (0..10)
        .map(|_| {
            let (api, host, game, barrier) =
                (api.clone(), host.clone(), game.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                api.post_with(
                    &format!("/v1/games/{game}/commands"),
                    Some(&host.token),
                    &json!({ "type": "play_card", "card": card }),
                    &[("Idempotency-Key", "same")],
                )
            })
        })
        .collect();
    let replies: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for r in &replies {
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.body, replies[0].body);
    }
    let after = api.view(&host, &game);
    assert_eq!(
        after["version"],
        before["version"].as_i64().unwrap() + 2,
        "applied exactly once"
    );
}

fn the_key_survives_a_restart(backend: Backend) {
    let mut server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let other = api.guest("other");
    let game = seated_game(&api, &host, &[other], 0, &json!({}));
    let card = cards(&api.view(&host, &game)["you"]["hand"])[0];
    let path = format!("/v1/games/{game}/commands");
    let first = api.post_with(
        &path,
        Some(&host.token),
        &json!({ "type": "play_card", "card": card }),
        &[("Idempotency-Key", "durable")],
    );
    assert_eq!(first.status, 200);
    server = server.restart();
    let api = server.client();
    let again = api.post_with(
        &path,
        Some(&host.token),
        &json!({ "type": "play_card", "card": card }),
        &[("Idempotency-Key", "durable")],
    );
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body, first.body);
    assert_eq!(api.view(&host, &game)["version"], first.body["version"]);
}

both!(
    a_repeated_key_returns_the_first_response_and_appends_nothing,
    concurrent_requests_with_one_key_apply_once,
    the_key_survives_a_restart,
);
