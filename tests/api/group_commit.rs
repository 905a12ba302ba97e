//! The group commit: commands that arrive together are decided in order and
//! appended in one transaction. Each one still gets its own answer, its own refusal, its
//! own 401 or 429, and the log stays what single commands would have written.

use std::sync::{Arc, Barrier};

use serde_json::json;

use crate::both;
use crate::support::{Api, Backend, Player, TestDb, TestServer, cards, seated_game};

/// A counter of `/metrics`.
fn counter(api: &Api, name: &str) -> u64 {
    let m = api.get("/metrics", None);
    assert_eq!(m.status, 200);
    m.text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} missing from /metrics:\n{}", m.text))
}

/// Answers every `take_row` the game waits for (row 0), seat by seat; how many were sent.
/// `people` are the game's seats in order.
fn take_rows(api: &Api, game: &str, people: &[&Player]) -> u64 {
    let mut sent = 0;
    loop {
        let view = api.view(people[0], game);
        let Some(a) = view["awaiting"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["action"] == "take_row")
            .cloned()
        else {
            return sent;
        };
        let seat = a["seat"].as_u64().unwrap() as usize;
        api.ok(people[seat], game, &json!({ "type": "take_row", "row": 0 }));
        sent += 1;
    }
}

/// A 2-person game per thread; every round all threads send at once: a legal card, or (every
/// third thread, every other round) a card that is not in the hand. Each answer is the
/// sender's own: its own hand, the version its game is at, and the refusal it earned.
fn commands_that_arrive_together_each_get_their_own_answer(backend: Backend) {
    const THREADS: usize = 12;
    const ROUNDS: usize = 6;
    let server = TestServer::start(backend);
    let api = server.client();
    let tables: Vec<(Player, Player, String)> = (0..THREADS)
        .map(|i| {
            let host = api.guest(&format!("host{i}"));
            let guest = api.guest(&format!("guest{i}"));
            // One round of ten turns, so six turns never end the game.
            let game = seated_game(
                &api,
                &host,
                std::slice::from_ref(&guest),
                0,
                &json!({ "options": { "end": { "rounds": 1 } } }),
            );
            (host, guest, game)
        })
        .collect();
    let batches_before = counter(&api, "stammtisch_command_batches_total");
    let batched_before = counter(&api, "stammtisch_batched_commands_total");
    let mut sent = 0;
    for round in 0..ROUNDS {
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = tables
            .iter()
            .enumerate()
            .map(|(i, (host, guest, game))| {
                let (api, host, guest, game, barrier) = (
                    api.clone(),
                    host.clone(),
                    guest.clone(),
                    game.clone(),
                    barrier.clone(),
                );
                std::thread::spawn(move || {
                    // The host plays this round; the guest's card comes after the barrier.
                    let view = api.view(&host, &game);
                    let version = view["version"].as_i64().unwrap();
                    let hand = cards(&view["you"]["hand"]);
                    let refused = i % 3 == 0 && round % 2 == 0;
                    let card = if refused {
                        (1..=104).find(|c| !hand.contains(c)).unwrap()
                    } else {
                        hand[0]
                    };
                    barrier.wait();
                    let r =
                        api.command(&host, &game, &json!({ "type": "play_card", "card": card }));
                    (host, guest, game, version, hand, refused, r)
                })
            })
            .collect();
        for h in handles {
            let (host, guest, game, version, hand, refused, r) = h.join().unwrap();
            sent += 1;
            let theirs = cards(&api.view(&guest, &game)["you"]["hand"]);
            if refused {
                r.assert_problem(422, "card_not_in_hand");
                assert_eq!(
                    api.view(&host, &game)["version"],
                    version,
                    "a refusal writes nothing"
                );
                // The turn goes on as if nothing had been sent.
                let r = api.command(
                    &host,
                    &game,
                    &json!({ "type": "play_card", "card": hand[0] }),
                );
                assert_eq!(r.status, 200, "{}", r.text);
                sent += 1;
            } else {
                assert_eq!(r.status, 200, "{}", r.text);
                assert_eq!(r.body["id"], game.as_str());
                assert_eq!(
                    r.body["version"],
                    version + 2,
                    "card_selected, selection_made"
                );
                assert_eq!(r.body["you"]["selected"], hand[0]);
                assert_eq!(r.body["seats"][0]["name"], host.name.as_str());
                assert_eq!(r.body["seats"][1]["name"], guest.name.as_str());
                // The answer is the host's view: none of the guest's cards in its hand.
                let mine = cards(&r.body["you"]["hand"]);
                assert_eq!(mine.len(), hand.len(), "the host's whole hand");
                assert!(
                    mine.iter().all(|c| !theirs.contains(c)),
                    "a guest's card in the host's answer: {mine:?} / {theirs:?}"
                );
            }
            api.ok(
                &guest,
                &game,
                &json!({ "type": "play_card", "card": theirs[0] }),
            );
            sent += 1;
            // A card below every row waits for its player's take_row (one or both).
            sent += take_rows(&api, &game, &[&host, &guest]);
        }
    }
    // Every game's log is gapless and a rebuild of it agrees with the view.
    for (host, _, game) in &tables {
        let events = api.events(host, game);
        let view = api.view(host, game);
        let last = events.last().unwrap()["seq"].as_i64().unwrap();
        assert_eq!(last, view["version"].as_i64().unwrap());
        let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order: {seqs:?}");
        let revealed = events
            .iter()
            .filter(|e| e["type"] == "cards_revealed")
            .count();
        assert_eq!(revealed, ROUNDS, "every round of {game} was revealed once");
    }
    let batches = counter(&api, "stammtisch_command_batches_total") - batches_before;
    let batched = counter(&api, "stammtisch_batched_commands_total") - batched_before;
    assert_eq!(batched, sent, "every command went through the group commit");
    assert!(
        batches < batched,
        "commands sent together shared batches ({batched} commands in {batches} batches)"
    );
}

/// Tokens and limits are checked per command inside a batch: a revoked token hears 401 and
/// an account over its limit 429 while the commands beside them apply.
fn a_batch_refuses_each_command_on_its_own(backend: Backend) {
    const LIMIT: usize = 4;
    let limit = LIMIT.to_string();
    let server = TestServer::start_with_env(
        TestDb::new(backend),
        backend,
        &[("LIMIT_COMMANDS_PER_MINUTE", &limit)],
    );
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let game = seated_game(&api, &host, std::slice::from_ref(&guest), 0, &json!({}));
    // A second game whose host logs out everywhere (and logs in again at the end).
    let leaver = api.account("leaver");
    let stayer = api.guest("stayer");
    let other = seated_game(&api, &leaver, std::slice::from_ref(&stayer), 0, &json!({}));
    let leaver_hand = cards(&api.view(&leaver, &other)["you"]["hand"]);
    let r = api.post("/v1/me/logout", Some(&leaver.token), &json!({}));
    assert_eq!(r.status, 204, "{}", r.text);
    // The host has spent one command of the limit (`start`); send 3 × LIMIT more at once.
    let other_version = api.view(&stayer, &other)["version"].as_i64().unwrap();
    let hand = cards(&api.view(&host, &game)["you"]["hand"]);
    let barrier = Arc::new(Barrier::new(3 * LIMIT + 2));
    let mut handles = Vec::new();
    for i in 0..3 * LIMIT {
        let (api, host, game, barrier) = (api.clone(), host.clone(), game.clone(), barrier.clone());
        let card = hand[i % hand.len()];
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            (
                "host",
                api.command(&host, &game, &json!({ "type": "play_card", "card": card })),
            )
        }));
    }
    for who in ["leaver", "stayer"] {
        let (api, barrier, other) = (api.clone(), barrier.clone(), other.clone());
        let (player, card) = if who == "leaver" {
            (leaver.clone(), leaver_hand[0])
        } else {
            (
                stayer.clone(),
                cards(&api.view(&stayer, &other)["you"]["hand"])[0],
            )
        };
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            (
                who,
                api.command(
                    &player,
                    &other,
                    &json!({ "type": "play_card", "card": card }),
                ),
            )
        }));
    }
    let results: Vec<(&str, _)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let host_results: Vec<_> = results.iter().filter(|(w, _)| *w == "host").collect();
    let limited = host_results.iter().filter(|(_, r)| r.status == 429).count();
    let applied = host_results.iter().filter(|(_, r)| r.status == 200).count();
    for (_, r) in &host_results {
        match r.status {
            429 => {
                r.assert_problem(429, "too_many_commands");
                assert!(r.header("retry-after").is_some());
            }
            200 => {}
            // A second card in the same turn: refused by the rules, after counting.
            _ => assert_eq!(r.status, 422, "{}", r.text),
        }
    }
    // The host counted `start` before: exactly LIMIT - 1 of these were within the limit
    // (a card selected again before the reveal replaces the selection, so they may all
    // apply), and none beyond it.
    assert_eq!(
        limited,
        3 * LIMIT - (LIMIT - 1),
        "{:?}",
        statuses(&host_results)
    );
    assert!(applied >= 1, "{:?}", statuses(&host_results));
    let (_, leaver_reply) = results.iter().find(|(w, _)| *w == "leaver").unwrap();
    leaver_reply.assert_problem(401, "unauthorized");
    let (_, stayer_reply) = results.iter().find(|(w, _)| *w == "stayer").unwrap();
    assert_eq!(stayer_reply.status, 200, "{}", stayer_reply.text);
    // The revoked command wrote nothing: only the stayer's selection is in the other game.
    let after = api.view(&stayer, &other);
    assert_eq!(after["version"], other_version + 2, "{after}");
    assert!(after["you"]["selected"].is_number(), "{after}");
    // Nor was it counted: with a new token the leaver, who counted only `start`, has
    // LIMIT - 1 commands left (the rules may refuse them; they count all the same).
    let r = api.post(
        "/v1/tokens",
        None,
        &json!({ "name": "leaver", "password": "password-of-leaver" }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let again = Player {
        token: r.body["access_token"].as_str().unwrap().into(),
        ..leaver.clone()
    };
    let statuses: Vec<u16> = (0..LIMIT)
        .map(|i| {
            let card = leaver_hand[i % leaver_hand.len()];
            api.command(
                &again,
                &other,
                &json!({ "type": "play_card", "card": card }),
            )
            .status
        })
        .collect();
    assert!(
        statuses[..LIMIT - 1].iter().all(|s| *s != 429) && statuses[LIMIT - 1] == 429,
        "{statuses:?}"
    );
}

fn statuses(results: &[&(&str, crate::support::Reply)]) -> Vec<u16> {
    results.iter().map(|(_, r)| r.status).collect()
}

/// With `COMMAND_BATCH_MAX=0` every command has a transaction of its own, and the token and
/// limit checks still come first.
fn without_the_group_commit_commands_go_alone(backend: Backend) {
    let server =
        TestServer::start_with_env(TestDb::new(backend), backend, &[("COMMAND_BATCH_MAX", "0")]);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let game = seated_game(&api, &host, std::slice::from_ref(&guest), 0, &json!({}));
    let hand = cards(&api.view(&host, &game)["you"]["hand"]);
    let r = api.command(
        &host,
        &game,
        &json!({ "type": "play_card", "card": hand[0] }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["you"]["selected"], hand[0]);
    assert_eq!(counter(&api, "stammtisch_batched_commands_total"), 0);
    assert_eq!(counter(&api, "stammtisch_command_batches_total"), 0);
    let r = api.post("/v1/me/logout", Some(&guest.token), &json!({}));
    assert_eq!(r.status, 204);
    let theirs = cards(&api.view(&host, &game)["you"]["hand"]);
    let r = api.command(
        &guest,
        &game,
        &json!({ "type": "play_card", "card": theirs[0] }),
    );
    r.assert_problem(401, "unauthorized");
}

/// A stored event that cannot be read fails the batch's transaction as a whole; every
/// command of it is then tried alone, so only the broken game's command fails.
fn a_broken_game_fails_only_its_own_command(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let players: Vec<Player> = (0..8).map(|i| api.guest(&format!("player{i}"))).collect();
    let games: Vec<String> = players
        .chunks(2)
        .map(|pair| seated_game(&api, &pair[0], &pair[1..], 0, &json!({})))
        .collect();
    let hands: Vec<Vec<u64>> = players
        .chunks(2)
        .zip(&games)
        .map(|(pair, g)| cards(&api.view(&pair[0], g)["you"]["hand"]))
        .collect();
    // The broken game's log gains an event nobody can read (the log is append-only, so it
    // is appended, and the game's index row moves on to it).
    let broken = games[0].clone();
    let version = api.view(&players[0], &broken)["version"].as_i64().unwrap();
    crate::support::sql(
        &server,
        &format!(
            "INSERT INTO events (event_id, game_id, seq, event_type, schema_version, audience, \
             data, recorded_at) VALUES ('unreadable-{broken}', '{broken}', {}, 'no_such_event', \
             1, 'public', '{{}}', CURRENT_TIMESTAMP)",
            version + 1
        ),
    );
    crate::support::sql(
        &server,
        &format!(
            "UPDATE games SET version = {} WHERE id = '{broken}'",
            version + 1
        ),
    );
    for _ in 0..3 {
        let barrier = Arc::new(Barrier::new(games.len()));
        let handles: Vec<_> = players
            .chunks(2)
            .zip(&games)
            .zip(&hands)
            .map(|((pair, game), hand)| {
                let (api, host, game, card, barrier) = (
                    api.clone(),
                    pair[0].clone(),
                    game.clone(),
                    hand[0],
                    barrier.clone(),
                );
                std::thread::spawn(move || {
                    barrier.wait();
                    let r =
                        api.command(&host, &game, &json!({ "type": "play_card", "card": card }));
                    (game, r)
                })
            })
            .collect();
        for h in handles {
            let (game, r) = h.join().unwrap();
            if game == broken {
                assert_eq!(r.status, 500, "{}", r.text);
                assert_eq!(
                    r.header("content-type").as_deref(),
                    Some("application/problem+json")
                );
            } else {
                // Selected already after the first round: the same card again is refused
                // by the rules, not by the broken neighbour.
                assert!(r.status == 200 || r.status == 422, "{}", r.text);
            }
        }
    }
    for ((pair, game), hand) in players.chunks(2).zip(&games).zip(&hands).skip(1) {
        assert_eq!(api.view(&pair[0], game)["you"]["selected"], hand[0]);
    }
}

/// Two replicas on one PostgreSQL database, every seat of eight 4-person games moving at once,
/// each game's seats split between the replicas: both replicas' batches hold the same games
/// and lock them (and the limit counters) in the same order, so none deadlocks — a batch
/// that failed so would be logged — and every card is applied.
#[test]
fn two_replicas_moving_the_same_games_at_once_never_deadlock() {
    const GAMES: usize = 8;
    const SEATS: usize = 4;
    let server = TestServer::start(Backend::Postgres);
    let replica = server.replica(&[]);
    let apis = [server.client(), replica.client()];
    let tables: Vec<(Vec<Player>, String)> = (0..GAMES)
        .map(|g| {
            let people: Vec<Player> = (0..SEATS)
                .map(|s| apis[0].guest(&format!("seat{g}x{s}")))
                .collect();
            let game = seated_game(
                &apis[0],
                &people[0],
                &people[1..],
                0,
                &json!({ "options": { "end": { "rounds": 1 } } }),
            );
            (people, game)
        })
        .collect();
    for turn in 0..6 {
        let barrier = Arc::new(Barrier::new(GAMES * SEATS));
        let handles: Vec<_> = tables
            .iter()
            .flat_map(|(people, game)| {
                people.iter().enumerate().map(|(s, p)| {
                    let (api, p, game, barrier) = (
                        apis[s % 2].clone(),
                        p.clone(),
                        game.clone(),
                        barrier.clone(),
                    );
                    std::thread::spawn(move || {
                        let card = cards(&api.view(&p, &game)["you"]["hand"])[0];
                        barrier.wait();
                        api.command(&p, &game, &json!({ "type": "play_card", "card": card }))
                    })
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .collect();
        for h in handles {
            let r = h.join().unwrap();
            assert_eq!(r.status, 200, "{}", r.text);
        }
        for (people, game) in &tables {
            let people: Vec<&Player> = people.iter().collect();
            take_rows(&apis[0], game, &people);
            let reveals = apis[0]
                .events(people[0], game)
                .iter()
                .filter(|e| e["type"] == "cards_revealed")
                .count();
            assert_eq!(reveals, turn + 1, "turn {turn} of {game} revealed once");
        }
    }
    for log in [server.log_text(), replica.log_text()] {
        assert!(!log.contains("a batch failed"), "{log}");
        assert!(!log.contains("deadlock"), "{log}");
    }
}

/// The counters of the batches decided on cached states: appended with their reads, and
/// decided again from them.
fn drafts(api: &Api) -> (u64, u64) {
    (
        counter(api, "stammtisch_batches_appended_with_reads_total"),
        counter(api, "stammtisch_batches_decided_again_total"),
    )
}

/// On PostgreSQL a command on a cached game is decided before anything is read and
/// appended in the statement that reads its sender's account (one round trip); a command
/// the reads refuse (a revoked token) is decided again from them, hears 401 and writes
/// nothing. SQLite reads first, always.
fn a_command_on_a_cached_game_is_appended_with_its_reads(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let game = seated_game(&api, &host, std::slice::from_ref(&guest), 0, &json!({}));
    let view = api.view(&host, &game);
    let version = view["version"].as_i64().unwrap();
    let card = cards(&view["you"]["hand"])[0];
    let before = drafts(&api);
    let body = api.ok(&host, &game, &json!({ "type": "play_card", "card": card }));
    // The answer is the sender's own view, with the names read beside the append.
    assert_eq!(body["you"]["selected"], card, "{body}");
    assert!(body["version"].as_i64().unwrap() > version, "{body}");
    assert_eq!(body["seats"][0]["name"], "host", "{body}");
    assert_eq!(body["seats"][1]["name"], "guest", "{body}");
    let after = drafts(&api);
    match backend {
        Backend::Postgres => assert_eq!(after, (before.0 + 1, before.1)),
        Backend::Sqlite => assert_eq!(after, (0, 0)),
    }
    // A revoked token: the statement's guard lets nothing through; 401, nothing written.
    let guest_card = cards(&api.view(&guest, &game)["you"]["hand"])[0];
    let r = api.post("/v1/me/logout", Some(&guest.token), &json!({}));
    assert_eq!(r.status, 204, "{}", r.text);
    let r = api.command(
        &guest,
        &game,
        &json!({ "type": "play_card", "card": guest_card }),
    );
    r.assert_problem(401, "unauthorized");
    assert_eq!(api.view(&host, &game)["version"], body["version"]);
    let refused = drafts(&api);
    match backend {
        Backend::Postgres => assert_eq!(refused, (after.0, after.1 + 1)),
        Backend::Sqlite => assert_eq!(refused, (0, 0)),
    }
}

/// A game where someone listens (a webhook) is read first: its first drafted command is
/// refused by the guard (its outbox rows must go with its events) and decided again; its
/// next commands are not drafted for a minute of the server's clock, then once more.
fn a_game_someone_listens_to_is_read_first(backend: Backend) {
    let server =
        TestServer::start_with_env(TestDb::new(backend), backend, &[crate::webhooks::LOOPBACK]);
    let api = server.client();
    let host = api.account("host");
    let guest = api.guest("guest");
    let game = seated_game(&api, &host, std::slice::from_ref(&guest), 0, &json!({}));
    crate::webhooks::register(&api, &host, "http://127.0.0.1:9/hook");
    let play = |p: &Player| {
        let card = cards(&api.view(p, &game)["you"]["hand"])[0];
        api.ok(p, &game, &json!({ "type": "play_card", "card": card }));
    };
    let before = drafts(&api);
    play(&host);
    play(&guest);
    let after = drafts(&api);
    // Past the minute a draft is tried again, and refused again.
    server.advance_clock(61);
    take_rows(&api, &game, &[&host, &guest]);
    play(&host);
    let later = drafts(&api);
    match backend {
        Backend::Postgres => {
            assert_eq!(after, (before.0, before.1 + 1));
            assert_eq!(later, (after.0, after.1 + 1));
        }
        Backend::Sqlite => assert_eq!(later, (0, 0)),
    }
    // The listening path wrote the hook's rows with the events (the webhook tests check
    // which).
    let rows = crate::webhooks::outbox(backend, &server.db.url);
    assert!(!rows.is_empty(), "{rows:?}");
}

/// A replica whose cached state of a game is behind (the other replica moved it on) drafts
/// on it, loses the compare-and-set, brings its state up to date and applies the command on
/// its next try: the log is what one replica would have written.
#[test]
fn a_replica_behind_on_a_game_catches_up_and_applies() {
    let server = TestServer::start(Backend::Postgres);
    let replica = server.replica(&[]);
    let (a, b) = (server.client(), replica.client());
    let host = a.guest("host");
    let guest = a.guest("guest");
    let game = seated_game(&a, &host, std::slice::from_ref(&guest), 0, &json!({}));
    // The replica caches the game as it is now.
    let guest_card = cards(&b.view(&guest, &game)["you"]["hand"])[0];
    let host_card = cards(&a.view(&host, &game)["you"]["hand"])[0];
    let version = a.view(&host, &game)["version"].as_i64().unwrap();
    a.ok(
        &host,
        &game,
        &json!({ "type": "play_card", "card": host_card }),
    );
    let before = drafts(&b);
    let body = b.ok(
        &guest,
        &game,
        &json!({ "type": "play_card", "card": guest_card }),
    );
    // Both cards were played: the turn was revealed, once.
    let reveals = a
        .events(&host, &game)
        .iter()
        .filter(|e| e["type"] == "cards_revealed")
        .count();
    assert_eq!(reveals, 1);
    assert_eq!(body["version"], a.view(&host, &game)["version"], "{body}");
    assert!(body["version"].as_i64().unwrap() > version + 2, "{body}");
    // The first try lost its compare-and-set, the second was made; neither was refused.
    assert_eq!(drafts(&b), (before.0 + 2, before.1));
    let log = replica.log_text();
    assert!(!log.contains("a batch failed"), "{log}");
}

both!(
    a_command_on_a_cached_game_is_appended_with_its_reads,
    a_game_someone_listens_to_is_read_first,
    commands_that_arrive_together_each_get_their_own_answer,
    a_batch_refuses_each_command_on_its_own,
    without_the_group_commit_commands_go_alone,
    a_broken_game_fails_only_its_own_command
);
