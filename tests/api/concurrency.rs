//! Optimistic concurrency: `If-Match` races have one winner; unpinned commands are retried
//! server-side until none is lost.

use std::sync::{Arc, Barrier};

use serde_json::{Value, json};

use crate::both;
use crate::support::{Backend, Player, TestServer, cards, seated_game};

fn twenty_commands_with_the_same_if_match_apply_exactly_once(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let other = api.guest("other");
    let game = seated_game(&api, &host, &[other], 0, &json!({}));
    let view = api.view(&host, &game);
    let version = view["version"].as_i64().unwrap();
    let hand = cards(&view["you"]["hand"]);
    let barrier = Arc::new(Barrier::new(20));
    let handles: Vec<_> = (0..20)
        .map(|i| {
            let (api, host, game, barrier) =
                (api.clone(), host.clone(), game.clone(), barrier.clone());
            let card = hand[i % hand.len()];
            std::thread::spawn(move || {
                barrier.wait();
                let tag = format!("\"{version}\"");
                let r = api.post_with(
                    &format!("/v1/games/{game}/commands"),
                    Some(&host.token),
                    &json!({ "type": "play_card", "card": card }),
                    &[("If-Match", &tag)],
                );
                (card, r)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners: Vec<_> = results.iter().filter(|(_, r)| r.status == 200).collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one applied: {:?}",
        results.iter().map(|(_, r)| r.status).collect::<Vec<_>>()
    );
    for (_, r) in results.iter().filter(|(_, r)| r.status != 200) {
        r.assert_problem(409, "version_conflict");
        assert_eq!(r.body["current_version"], version + 2);
    }
    let after = api.view(&host, &game);
    assert_eq!(
        after["version"],
        version + 2,
        "one card_selected and one selection_made"
    );
    assert_eq!(after["you"]["selected"], winners[0].0);
    assert_eq!(
        after["you"]["selected"],
        winners[0].1.body["you"]["selected"]
    );
    // A stale version on its own is refused too.
    let stale = api.post_with(
        &format!("/v1/games/{game}/commands"),
        Some(&host.token),
        &json!({ "type": "play_card", "card": hand[0] }),
        &[("If-Match", &format!("\"{version}\""))],
    );
    stale.assert_problem(409, "version_conflict");
    assert_eq!(api.view(&host, &game)["version"], version + 2);
}

fn simultaneous_plays_without_if_match_are_all_applied(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let players: Vec<Player> = (0..8).map(|i| api.guest(&format!("player{i}"))).collect();
    let game = seated_game(
        &api,
        &players[0],
        &players[1..],
        0,
        &json!({ "options": { "end": { "rounds": 1 } } }),
    );
    for turn in 0..3 {
        let barrier = Arc::new(Barrier::new(players.len()));
        let handles: Vec<_> = players
            .iter()
            .map(|p| {
                let (api, p, game, barrier) =
                    (api.clone(), p.clone(), game.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let view = api.view(&p, &game);
                    // Take a row first if this player's card is waiting for it.
                    let take = view["legal"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|c| c["type"] == "take_row")
                        .cloned();
                    let card = cards(&view["you"]["hand"])[0];
                    barrier.wait();
                    if let Some(take) = take {
                        api.ok(&p, &game, &take);
                    }
                    let r = api.command(&p, &game, &json!({ "type": "play_card", "card": card }));
                    (card, r)
                })
            })
            .collect();
        let results: Vec<(u64, _)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let mut played = Vec::new();
        for (card, r) in &results {
            if r.status == 200 {
                played.push(*card);
            } else {
                // The only acceptable refusal: the turn is paused for another player's take_row.
                r.assert_problem(422, "not_your_turn");
            }
        }
        // Resolve a pending take_row, then check every selection of this turn was revealed.
        let pending = api.view(&players[0], &game);
        if let Some(a) = pending["awaiting"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["action"] == "take_row")
        {
            let seat = a["seat"].as_u64().unwrap() as usize;
            let p = players
                .iter()
                .find(|p| pending["seats"][seat]["account_id"] == p.id.as_str())
                .unwrap();
            api.ok(p, &game, &json!({ "type": "take_row", "row": 0 }));
        }
        let events = api.events(&players[0], &game);
        let reveals: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "cards_revealed")
            .collect();
        assert!(reveals.len() > turn, "turn {turn} was revealed");
        let revealed: Vec<u64> = reveals[turn]["data"]["cards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["card"].as_u64().unwrap())
            .collect();
        for card in &played {
            assert!(
                revealed.contains(card),
                "card {card} acknowledged with 200 but lost"
            );
        }
        assert_eq!(
            revealed.len(),
            players.len(),
            "every seat's selection was revealed in turn {turn}"
        );
    }
    // The stream is gap-free: seq 1..=version.
    let version = api.view(&players[0], &game)["version"].as_u64().unwrap();
    let all_public_and_own = api.events(&players[0], &game);
    let last = all_public_and_own.last().unwrap()["seq"].as_u64().unwrap();
    assert!(last <= version);
}

both!(
    twenty_commands_with_the_same_if_match_apply_exactly_once,
    simultaneous_plays_without_if_match_are_all_applied
);
