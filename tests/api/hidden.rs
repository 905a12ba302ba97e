//! Hidden information: what seat 0 and a spectator receive — every body and header of every
//! endpoint they can call, errors and idempotent replays included — never holds another
//! seat's hand, another seat's selection before the reveal, or the shuffle seed before the
//! end. The server log never holds a hand either.
//!
//! The game has a prepared first deal whose hands are 65–104, numbers that nothing else in a
//! body reaches while the checks run (versions and event seqs stay below 65; seats, rounds,
//! counts and bullheads are smaller still; statuses are 401 and up; times are strings). So
//! any such integer in a body is a leaked card.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, Reply, TestServer, cards};

/// The prepared hand of a seat: seat 0 holds 65–74, seat 1 95–104, seat 2 85–94, seat 3
/// 75–84. The rows start 1, 2, 3, 4, so no card is ever below every row early on.
fn dealt(seat: usize) -> Vec<u64> {
    let start = [65, 95, 85, 75][seat];
    (start..start + 10).collect()
}

/// What a viewer must not learn at one moment: the current hands of the other seats.
struct Secret {
    /// Every card in those hands (selections not yet revealed are still in the hand).
    cards: BTreeSet<u64>,
    /// The hands, ascending, to spot one written out as a list.
    hands: Vec<Vec<u64>>,
}

/// The other seats' hands as their owners see them now (`viewer: None` for a spectator).
fn secret_for(api: &Api, players: &[Player], game: &str, viewer: Option<usize>) -> Secret {
    let mut hands = Vec::new();
    for (seat, p) in players.iter().enumerate() {
        if Some(seat) == viewer {
            continue;
        }
        let view = api.view(p, game);
        assert_eq!(view["you"]["seat"], seat);
        let mut hand = cards(&view["you"]["hand"]);
        hand.sort_unstable();
        hands.push(hand);
    }
    Secret {
        cards: hands.iter().flatten().copied().collect(),
        hands,
    }
}

/// Whether `text` holds two neighbouring cards of a hand written as a list (`95, 96`, `95,96`).
fn holds_hand_list(text: &str, hand: &[u64]) -> Option<String> {
    hand.windows(2).find_map(|w| {
        [format!("{}, {}", w[0], w[1]), format!("{},{}", w[0], w[1])]
            .into_iter()
            .find(|p| text.contains(p.as_str()))
    })
}

/// Every number written out in `text`: a word of digits only, without leading zeros (so the
/// groups of a UUID such as `77cb` or `0095` are not numbers).
fn numbers_in(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && w.len() < 19 && w.bytes().all(|b| b.is_ascii_digit()))
        .filter(|w| *w == "0" || !w.starts_with('0'))
        .map(|w| w.parse().unwrap())
        .collect()
}

fn walk(v: &Value, path: &str, visit: &mut dyn FnMut(&str, &Value)) {
    visit(path, v);
    match v {
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                walk(x, &format!("{path}[{i}]"), visit);
            }
        }
        Value::Object(fields) => {
            for (k, x) in fields {
                walk(x, &format!("{path}.{k}"), visit);
            }
        }
        _ => {}
    }
}

/// Everything one viewer received before the end, to search for the seed once it is known.
#[derive(Default)]
struct Received {
    texts: Vec<(String, String)>,
}

impl Received {
    /// Checks one response against what must stay hidden and keeps its text.
    fn check(&mut self, label: &str, r: &Reply, secret: &Secret) {
        assert!(r.status < 500, "{label}: {} {}", r.status, r.text);
        if r.body.is_null() {
            // Not JSON: no number in it may be a hidden card.
            for n in numbers_in(&r.text) {
                assert!(
                    !secret.cards.contains(&n),
                    "{label}: hidden card {n} in {}",
                    r.text
                );
            }
        }
        walk(&r.body, "$", &mut |path, v| match v {
            Value::Number(n) => {
                let hit = n.as_u64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                });
                if let Some(n) = hit {
                    assert!(
                        !secret.cards.contains(&n),
                        "{label}: hidden card {n} at {path} in {}",
                        r.text
                    );
                }
            }
            Value::String(s) => {
                if let Ok(n) = s.trim().parse::<u64>() {
                    assert!(
                        !secret.cards.contains(&n),
                        "{label}: hidden card \"{n}\" at {path}"
                    );
                }
                for hand in &secret.hands {
                    if let Some(p) = holds_hand_list(s, hand) {
                        panic!("{label}: a hidden hand ({p}) at {path}: {s}");
                    }
                }
            }
            Value::Object(fields) => {
                for key in fields.keys() {
                    if let Ok(n) = key.parse::<u64>() {
                        assert!(
                            !secret.cards.contains(&n),
                            "{label}: hidden card as key {n} at {path}"
                        );
                    }
                }
                if let Some(f) = fields.get("fairness") {
                    assert!(
                        f["seed"].is_null(),
                        "{label}: the seed before the end at {path}: {f}"
                    );
                    assert!(
                        f["commitment"].is_string(),
                        "{label}: no commitment at {path}"
                    );
                }
                if let Some(p) = fields.get("prepared_deal") {
                    assert_eq!(p, &json!(true), "{label}: prepared_deal at {path}");
                }
                if let Some(t) = fields.get("type").and_then(Value::as_str) {
                    assert!(
                        t != "seed_recorded" && t != "deal_prepared",
                        "{label}: server-only event at {path}: {v}"
                    );
                }
            }
            _ => {}
        });
        let mut headers = String::new();
        for (name, value) in &r.headers {
            let value = value.to_str().unwrap_or_default();
            headers.push_str(&format!("{name}: {value}\n"));
            if name == "content-length" || name == "date" {
                continue;
            }
            for n in numbers_in(value) {
                assert!(
                    !secret.cards.contains(&n),
                    "{label}: hidden card {n} in header {name}: {value}"
                );
            }
            for hand in &secret.hands {
                assert!(
                    holds_hand_list(value, hand).is_none(),
                    "{label}: a hand in header {name}: {value}"
                );
            }
        }
        self.texts
            .push((label.to_owned(), format!("{headers}\n{}", r.text)));
    }
}

/// Calls every endpoint the viewer can call that must not change the game, and checks each
/// answer. `seat` is the viewer's seat (`None`: spectator).
fn probe(
    api: &Api,
    viewer: &Player,
    seat: Option<usize>,
    game: &str,
    moment: &str,
    secret: &Secret,
    seen: &mut Received,
) {
    let who = seat.map_or_else(|| "the spectator".to_owned(), |s| format!("seat {s}"));
    let label = |what: &str| format!("{moment}, {who}: {what}");

    let r = api.get(&format!("/v1/games/{game}"), Some(&viewer.token));
    assert_eq!(r.status, 200, "{}", r.text);
    seen.check(&label("GET game"), &r, secret);
    let view = r.body;
    let version = view["version"].as_u64().unwrap();
    let lowest = *secret.cards.first().unwrap();
    assert!(
        version < lowest,
        "the test is unsound: version {version} reaches the hidden card {lowest}"
    );
    match seat {
        Some(s) => assert_eq!(view["you"]["seat"], s),
        None => assert!(
            view["you"].is_null(),
            "a spectator has no seat: {}",
            view["you"]
        ),
    }

    // The events, at once and page by page.
    let r = api.get(
        &format!("/v1/games/{game}/events?after=0&limit=500"),
        Some(&viewer.token),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    seen.check(&label("GET events"), &r, secret);
    let all = r.body["items"].as_array().unwrap().clone();
    assert!(
        all.last()
            .is_some_and(|e| e["seq"].as_u64().unwrap() <= version)
    );
    for e in &all {
        match e["type"].as_str().unwrap() {
            "hand_dealt" | "card_selected" => {
                assert_eq!(
                    seat.map(|s| json!(s)),
                    Some(e["data"]["seat"].clone()),
                    "{}: another seat's private event {e}",
                    label("events")
                );
            }
            _ => {}
        }
    }
    let mut paged = Vec::new();
    let mut after = 0;
    loop {
        let r = api.get(
            &format!("/v1/games/{game}/events?after={after}&limit=4"),
            Some(&viewer.token),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        seen.check(&label(&format!("GET events after {after}")), &r, secret);
        paged.extend(r.body["items"].as_array().unwrap().iter().cloned());
        match r.body["next_cursor"].as_str() {
            Some(c) => after = c.parse().unwrap(),
            None => break,
        }
    }
    assert_eq!(paged, all, "paging gives the same events");

    // The lists.
    for query in [
        "/v1/games",
        "/v1/games?mine=true",
        "/v1/games?awaiting=me",
        "/v1/games?mine=true&awaiting=me",
        "/v1/games?status=active",
        "/v1/games?ruleset=6-nimmt&status=active&mine=true",
        "/v1/games?limit=1",
    ] {
        let r = api.get(query, Some(&viewer.token));
        assert_eq!(r.status, 200, "{}", r.text);
        seen.check(&label(&format!("GET {query}")), &r, secret);
        if let Some(cursor) = r.body["next_cursor"].as_str() {
            let r = api.get(&format!("{query}&cursor={cursor}"), Some(&viewer.token));
            assert_eq!(r.status, 200, "{}", r.text);
            seen.check(&label(&format!("GET {query} (next page)")), &r, secret);
        }
    }
    let r = api.get("/v1/me", Some(&viewer.token));
    assert_eq!(r.status, 200, "{}", r.text);
    seen.check(&label("GET /v1/me"), &r, secret);

    // Refused commands. Naming another seat's card must answer exactly as naming a card
    // nobody holds, or the answer would tell who holds it.
    let someone_elses = *secret.cards.last().unwrap();
    let nobodys = 50;
    let (status, code) = if seat.is_some() {
        (422, "card_not_in_hand")
    } else {
        (403, "not_a_player")
    };
    let mut bodies = Vec::new();
    for card in [someone_elses, nobodys] {
        let cmd = json!({ "type": "play_card", "card": card });
        for key in [None, Some(format!("{moment}-bad-{card}"))] {
            let headers: Vec<(&str, &str)> = key
                .iter()
                .map(|k| ("Idempotency-Key", k.as_str()))
                .collect();
            for _ in 0..2 {
                let r = api.post_with(
                    &format!("/v1/games/{game}/commands"),
                    Some(&viewer.token),
                    &cmd,
                    &headers,
                );
                r.assert_problem(status, code);
                assert!(
                    r.header("idempotent-replayed").is_none(),
                    "a refusal is not stored"
                );
                seen.check(
                    &label(&format!("play_card {card} (refused)")),
                    &r,
                    &without(secret, card),
                );
                bodies.push(r.text.replace(&card.to_string(), "#"));
            }
        }
    }
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "{}: refusals differ: {bodies:#?}",
        label("play_card")
    );
    let (status, code) = if seat.is_some() {
        (422, "not_your_turn")
    } else {
        (403, "not_a_player")
    };
    let r = api.command(viewer, game, &json!({ "type": "take_row", "row": 0 }));
    r.assert_problem(status, code);
    seen.check(&label("take_row (refused)"), &r, secret);
    let r = api.command(viewer, game, &json!({ "type": "join" }));
    r.assert_problem(422, "not_in_lobby");
    seen.check(&label("join (refused)"), &r, secret);
    let r = api.post_with(
        &format!("/v1/games/{game}/commands"),
        Some(&viewer.token),
        &json!({ "type": "resign" }),
        &[("If-Match", &format!("\"{}\"", version - 1))],
    );
    r.assert_problem(409, "version_conflict");
    seen.check(&label("stale If-Match (refused)"), &r, secret);
    assert_eq!(
        api.view(viewer, game)["version"],
        version,
        "{}: a refused command changed the game",
        label("probe")
    );
}

/// The secret without one card: a card the viewer named in the request itself may come back
/// in the answer (`card 104 is not in your hand`) without telling anything.
fn without(secret: &Secret, card: u64) -> Secret {
    let mut cards = secret.cards.clone();
    cards.remove(&card);
    Secret {
        cards,
        hands: secret.hands.clone(),
    }
}

/// Plays the lowest card of the player's hand; returns it and the answer.
fn play_lowest(api: &Api, p: &Player, game: &str, key: Option<&str>) -> (u64, Reply) {
    let view = api.view(p, game);
    let card = *cards(&view["you"]["hand"]).iter().min().unwrap();
    let headers: Vec<(&str, &str)> = key.iter().map(|k| ("Idempotency-Key", *k)).collect();
    let r = api.post_with(
        &format!("/v1/games/{game}/commands"),
        Some(&p.token),
        &json!({ "type": "play_card", "card": card }),
        &headers,
    );
    assert_eq!(r.status, 200, "{}: play_card {card}: {}", p.name, r.text);
    (card, r)
}

/// Lets every seat that must take a row take row 0, until nobody must.
fn settle(api: &Api, players: &[Player], game: &str) {
    loop {
        let view = api.view(&players[0], game);
        let take = view["awaiting"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["action"] == "take_row")
            .cloned();
        let Some(take) = take else { return };
        let seat = usize::try_from(take["seat"].as_u64().unwrap()).unwrap();
        api.ok(
            &players[seat],
            game,
            &json!({ "type": "take_row", "row": 0 }),
        );
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn no_endpoint_shows_other_hands_selections_or_the_seed(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let players: Vec<Player> = ["anna", "bert", "cora", "dirk"]
        .iter()
        .map(|n| api.guest(n))
        .collect();
    let spectator = api.guest("sven");
    let deal = json!({
        "rows": [[1], [2], [3], [4]],
        "hands": (0..4).map(dealt).collect::<Vec<_>>(),
    });
    let mut seat0 = Received::default();
    let mut watcher = Received::default();
    let all_hands = Secret {
        cards: (0..4).flat_map(dealt).collect(),
        hands: (0..4).map(dealt).collect(),
    };
    let others = Secret {
        cards: (1..4).flat_map(dealt).collect(),
        hands: (1..4).map(dealt).collect(),
    };

    // The lobby: the prepared deal is the server's alone, even towards its creator.
    let r = api.post("/v1/games", Some(&players[0].token), &json!({ "ruleset": "6-nimmt", "players": 4, "deal": deal, "public": true, "options": { "end": { "rounds": 1 } } }));
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["prepared_deal"], true);
    seat0.check("creating the game", &r, &others);
    let game = r.body["id"].as_str().unwrap().to_owned();
    for p in &players[1..] {
        api.join(p, &game);
    }
    let r = api.get(&format!("/v1/games/{game}"), Some(&spectator.token));
    watcher.check("the lobby, spectator", &r, &all_hands);
    assert_eq!(
        r.body["prepared_deal"], true,
        "everyone is told the deal was prepared"
    );
    let r = api.command(&players[0], &game, &json!({ "type": "start" }));
    assert_eq!(r.status, 200, "{}", r.text);
    seat0.check("starting the game", &r, &others);

    // After the start: everyone holds the prepared hand, and nobody else learns it.
    for (seat, p) in players.iter().enumerate() {
        let view = api.view(p, &game);
        assert_eq!(
            cards(&view["you"]["hand"]),
            dealt(seat),
            "seat {seat} holds the prepared hand"
        );
        assert_eq!(view["prepared_deal"], true);
        assert!(view["fairness"]["seed"].is_null());
    }
    let moment = "after the start";
    probe(
        &api,
        &players[0],
        Some(0),
        &game,
        moment,
        &secret_for(&api, &players, &game, Some(0)),
        &mut seat0,
    );
    probe(
        &api,
        &spectator,
        None,
        &game,
        moment,
        &secret_for(&api, &players, &game, None),
        &mut watcher,
    );
    let (_, first) = play_lowest(&api, &players[0], &game, Some("seat0-turn1"));
    seat0.check(
        "seat 0 plays 65",
        &first,
        &secret_for(&api, &players, &game, Some(0)),
    );
    assert_eq!(first.body["you"]["selected"], 65);

    // Seat 1 has selected, the others have not: seat 1's card reaches nobody else, only
    // the fact that it selected.
    let (card, _) = play_lowest(&api, &players[1], &game, None);
    assert_eq!(card, 95);
    assert_eq!(api.view(&players[1], &game)["you"]["selected"], 95);
    let moment = "seat 1 selected";
    let secret0 = secret_for(&api, &players, &game, Some(0));
    assert!(
        secret0.cards.contains(&95),
        "a selection stays in the hand until the reveal"
    );
    probe(
        &api,
        &players[0],
        Some(0),
        &game,
        moment,
        &secret0,
        &mut seat0,
    );
    probe(
        &api,
        &spectator,
        None,
        &game,
        moment,
        &secret_for(&api, &players, &game, None),
        &mut watcher,
    );
    for (viewer, name) in [(&players[0], "seat 0"), (&spectator, "the spectator")] {
        let view = api.view(viewer, &game);
        let selected: Vec<&Value> = view["seats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["selected"])
            .collect();
        assert_eq!(
            selected,
            [&json!(true), &json!(true), &json!(false), &json!(false)],
            "{name} sees who selected"
        );
        assert!(view["table"]["revealed"].as_array().unwrap().is_empty());
        let events = api.events(viewer, &game);
        assert!(
            events
                .iter()
                .any(|e| e["type"] == "selection_made" && e["data"]["seat"] == 1),
            "{name} is told that seat 1 selected"
        );
        assert!(
            !events
                .iter()
                .any(|e| e["type"] == "card_selected" && e["data"]["seat"] != 0),
            "{name} sees another seat's selection"
        );
    }
    assert_eq!(api.view(&players[0], &game)["you"]["selected"], 65);
    let r = api.post_with(
        &format!("/v1/games/{game}/commands"),
        Some(&players[0].token),
        &json!({ "type": "play_card", "card": 65 }),
        &[("Idempotency-Key", "seat0-turn1")],
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("idempotent-replayed").as_deref(), Some("true"));
    assert_eq!(r.body, first.body, "a replay answers as the first time");
    seat0.check("seat 0 replays its first play", &r, &secret0);

    // Seats 2 and 3 select: the turn is revealed and placed. Two more turns.
    play_lowest(&api, &players[2], &game, None);
    play_lowest(&api, &players[3], &game, None);
    settle(&api, &players, &game);
    let view = api.view(&players[0], &game);
    assert_eq!(
        cards(&view["table"]["rows"][3]["cards"]),
        [4, 65, 75, 85, 95],
        "the revealed cards are placed"
    );
    for _ in 0..2 {
        for p in &players {
            play_lowest(&api, p, &game, None);
        }
        settle(&api, &players, &game);
    }

    // Mid-round: seats 1 and 2 have selected, seat 0 selects now.
    play_lowest(&api, &players[1], &game, None);
    play_lowest(&api, &players[2], &game, None);
    let moment = "mid-round";
    let secret0 = secret_for(&api, &players, &game, Some(0));
    assert_eq!(secret0.cards.len(), 21, "seven cards in each other hand");
    let (card, r) = play_lowest(&api, &players[0], &game, Some("seat0-turn4"));
    assert_eq!(card, 68);
    seat0.check("seat 0 plays mid-round", &r, &secret0);
    let again = api.post_with(
        &format!("/v1/games/{game}/commands"),
        Some(&players[0].token),
        &json!({ "type": "play_card", "card": 68 }),
        &[("Idempotency-Key", "seat0-turn4")],
    );
    assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
    assert_eq!(again.body, r.body);
    seat0.check("seat 0 replays mid-round", &again, &secret0);
    let old = api.post_with(
        &format!("/v1/games/{game}/commands"),
        Some(&players[0].token),
        &json!({ "type": "play_card", "card": 65 }),
        &[("Idempotency-Key", "seat0-turn1")],
    );
    assert_eq!(old.body, first.body, "the first answer, verbatim");
    seat0.check("seat 0 replays its first play mid-round", &old, &secret0);
    probe(
        &api,
        &players[0],
        Some(0),
        &game,
        moment,
        &secret0,
        &mut seat0,
    );
    probe(
        &api,
        &spectator,
        None,
        &game,
        moment,
        &secret_for(&api, &players, &game, None),
        &mut watcher,
    );
    play_lowest(&api, &players[3], &game, None);
    settle(&api, &players, &game);

    // Play to the end. Versions now pass the hidden cards, so seat 0's answers are only
    // kept for the seed search below (and checked for a seed and server-only events).
    let nothing = Secret {
        cards: BTreeSet::new(),
        hands: Vec::new(),
    };
    let mut log_before_end = String::new();
    for _ in 0..200 {
        let view = api.view(&players[0], &game);
        if view["status"] == "finished" {
            break;
        }
        let next = view["awaiting"][0].clone();
        let seat = usize::try_from(next["seat"].as_u64().expect("someone must act")).unwrap();
        log_before_end = server.log_text();
        if next["action"] == "take_row" {
            api.ok(
                &players[seat],
                &game,
                &json!({ "type": "take_row", "row": 0 }),
            );
        } else {
            let (_, r) = play_lowest(&api, &players[seat], &game, None);
            if seat == 0 && r.body["status"] != "finished" {
                seat0.check("seat 0 plays on", &r, &nothing);
            }
        }
    }

    // The end: the seed is revealed to everyone and matches the commitment made at the start.
    let end = api.view(&players[0], &game);
    assert_eq!(end["status"], "finished", "one round was asked for");
    let seed = end["fairness"]["seed"]
        .as_str()
        .expect("the seed is revealed at the end")
        .to_owned();
    assert_eq!(seed.len(), 64, "a 32-byte hex seed: {seed}");
    let bytes: Vec<u8> = (0..64)
        .step_by(2)
        .map(|i| u8::from_str_radix(&seed[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(
        sha256_hex(&bytes),
        end["fairness"]["commitment"].as_str().unwrap()
    );
    let watched = api.view(&spectator, &game);
    assert_eq!(
        watched["fairness"]["seed"],
        seed.as_str(),
        "the spectator is told the seed too"
    );
    assert_eq!(watched["prepared_deal"], true);
    for (viewer, name) in [(&players[0], "seat 0"), (&spectator, "the spectator")] {
        let events = api.events(viewer, &game);
        let finished: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "game_finished")
            .collect();
        assert_eq!(finished.len(), 1, "{name}: {events:?}");
        assert_eq!(finished[0]["data"]["seed"], seed.as_str());
        for e in &events {
            assert!(
                e["type"] != "seed_recorded" && e["type"] != "deal_prepared",
                "{name}: server-only event {e}"
            );
        }
    }
    // …and was nowhere before it.
    assert!(
        seat0.texts.len() > 50 && watcher.texts.len() > 30,
        "the probes ran"
    );
    for (label, text) in seat0.texts.iter().chain(&watcher.texts) {
        assert!(
            !text.to_lowercase().contains(&seed),
            "{label}: the seed before the end"
        );
    }
    assert!(!log_before_end.is_empty(), "the server logs");
    assert!(
        !log_before_end.to_lowercase().contains(&seed),
        "the seed is in the log before the end"
    );
    let log = server.log_text();
    for seat in 0..4 {
        let hand = dealt(seat);
        assert!(
            holds_hand_list(&log, &hand).is_none(),
            "seat {seat}'s hand is in the server log: {:?}",
            holds_hand_list(&log, &hand)
        );
    }
}

both!(no_endpoint_shows_other_hands_selections_or_the_seed);
