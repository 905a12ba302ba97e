//! Complete games played over HTTP to the end.

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, TestServer, cards, seated_game};

/// Chooses a random legal game move for a player from the view's `legal` list.
fn random_move(view: &Value, rng: &mut u64) -> Option<Value> {
    let moves: Vec<&Value> = view["legal"]
        .as_array()?
        .iter()
        .filter(|c| c["type"] == "play_card" || c["type"] == "take_row")
        .collect();
    if moves.is_empty() {
        return None;
    }
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    Some(moves[usize::try_from(*rng % moves.len() as u64).unwrap()].clone())
}

/// Checks that every card of a 6-nimmt round is somewhere exactly once: hands (own view),
/// rows, revealed, taken. `hands` are the hand sizes; a full deck has 104 cards, a round uses
/// 10 per player + 4.
fn assert_round_conserved(view: &Value, players: usize) {
    let mut seen: Vec<u64> = Vec::new();
    for row in view["table"]["rows"].as_array().unwrap() {
        assert!(
            row["cards"].as_array().unwrap().len() <= 5,
            "a row over five cards: {row}"
        );
        seen.extend(cards(&row["cards"]));
    }
    for r in view["table"]["revealed"].as_array().unwrap() {
        seen.push(r["card"].as_u64().unwrap());
    }
    let mut hand_cards = 0;
    for s in view["seats"].as_array().unwrap() {
        seen.extend(cards(&s["taken"]));
        hand_cards += s["hand_size"].as_u64().unwrap();
    }
    let mut sorted = seen.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), seen.len(), "a card appears twice: {seen:?}");
    assert_eq!(
        seen.len() as u64 + hand_cards,
        (players * 10 + 4) as u64,
        "cards not conserved: {view}"
    );
}

fn play_to_the_end(api: &Api, players: &[Player], game: &str, seed: u64) -> Value {
    let mut rng = seed | 1;
    let n = api.view(&players[0], game)["players"].as_u64().unwrap() as usize;
    for _ in 0..5000 {
        let mut moved = false;
        for p in players {
            let view = api.view(p, game);
            if view["status"] == "finished" {
                return view;
            }
            if view["round"].as_u64().unwrap() > 0 {
                assert_round_conserved(&view, n);
            }
            if let Some(cmd) = random_move(&view, &mut rng) {
                let awaited = view["awaiting"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|a| a["seat"] == view["you"]["seat"] && a["action"] == cmd["type"]);
                assert!(
                    awaited,
                    "legal move {cmd} while not awaited: {}",
                    view["awaiting"]
                );
                api.ok(p, game, &cmd);
                moved = true;
            }
        }
        assert!(moved, "nobody can move but the game is not finished");
    }
    panic!("game did not finish");
}

fn assert_finished_consistently(view: &Value, players: usize) {
    assert_eq!(view["status"], "finished");
    let scores = view["scores"].as_array().unwrap();
    assert!(!scores.is_empty());
    let totals: Vec<u64> = view["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap())
        .collect();
    assert_eq!(totals.len(), players);
    for (s, total) in totals.iter().enumerate() {
        let sum: u64 = scores.iter().map(|r| r[s].as_u64().unwrap()).sum();
        assert_eq!(
            sum, *total,
            "total of seat {s} is not the sum of its rounds"
        );
    }
    // Each round hands out at most all bullheads of the cards in play, and something is
    // always taken (at least the rows' growth forces it only sometimes; so only bound it).
    for round in scores {
        let sum: u64 = round
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert!(
            sum <= 171,
            "a round cannot hand out more than the deck's 171 bullheads"
        );
    }
    let limit = view["options"]["end"]["points"]
        .as_u64()
        .unwrap_or(u64::MAX);
    let max = *totals.iter().max().unwrap();
    if view["options"]["end"]["points"].is_u64() {
        assert!(max >= limit, "finished before anyone reached {limit}");
        // The round before the last left everyone below the limit.
        let before_last: Vec<u64> = (0..players)
            .map(|s| {
                scores[..scores.len() - 1]
                    .iter()
                    .map(|r| r[s].as_u64().unwrap())
                    .sum()
            })
            .collect();
        assert!(
            before_last.iter().all(|t| *t < limit),
            "the game should have ended a round earlier"
        );
    }
    let min = *totals.iter().min().unwrap();
    let winners: Vec<u64> = view["winners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (0..players as u64)
        .filter(|s| totals[*s as usize] == min)
        .collect();
    assert_eq!(winners, expected);
    let seed = view["fairness"]["seed"]
        .as_str()
        .expect("the seed is revealed at the end");
    let commitment = view["fairness"]["commitment"].as_str().unwrap();
    assert_eq!(
        sha256_hex(&hex_decode(seed)),
        commitment,
        "the seed matches the published commitment"
    );
}

fn hex_decode(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn four_guests_play_a_complete_game(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let players: Vec<Player> = ["anna", "bert", "cora", "dirk"]
        .iter()
        .map(|n| api.guest(n))
        .collect();
    let game = seated_game(
        &api,
        &players[0],
        &players[1..],
        0,
        &json!({ "options": { "end": { "points": 33 } } }),
    );
    let view = play_to_the_end(&api, &players, &game, 0x5eed);
    assert_finished_consistently(&view, 4);
    // Every player's hand, as dealt to them, is only in their own event list.
    for p in &players {
        let events = api.events(p, &game);
        let seat = view["seats"]
            .as_array()
            .unwrap()
            .iter()
            .position(|s| s["account_id"] == p.id.as_str())
            .unwrap();
        for e in &events {
            if e["type"] == "hand_dealt" || e["type"] == "card_selected" {
                assert_eq!(
                    e["data"]["seat"], seat,
                    "{} sees another seat's private event {e}",
                    p.name
                );
            }
            assert!(
                e["type"] != "seed_recorded" && e["type"] != "deal_prepared",
                "server-only event leaked: {e}"
            );
        }
        let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "events in order");
    }
}

fn one_guest_plays_with_nine_bots(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let me = api.guest("solo");
    let game = seated_game(
        &api,
        &me,
        &[],
        9,
        &json!({ "options": { "end": { "rounds": 2 } } }),
    );
    let start = api.view(&me, &game);
    assert_eq!(
        start["seats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["bot"] == true)
            .count(),
        9
    );
    // The bots selected as soon as the round began; only the guest is awaited.
    assert_eq!(
        start["awaiting"],
        json!([{ "seat": 0, "action": "play_card" }])
    );
    let view = play_to_the_end(&api, &[me], &game, 42);
    assert_finished_consistently(&view, 10);
    assert_eq!(
        view["scores"].as_array().unwrap().len(),
        2,
        "two rounds were asked for"
    );
}

both!(
    four_guests_play_a_complete_game,
    one_guest_plays_with_nine_bots
);
