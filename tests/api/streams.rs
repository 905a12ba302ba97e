//! Live streams (SSE): delivery through wake-ups, resumption without gaps or repeats, the
//! audience filter, the clean end, the end of a revoked token's streams and tickets, and
//! replicas on one PostgreSQL database.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::both;
use crate::support::{
    Api, Backend, EventStream, Frame, Player, TestDb, TestServer, cards, play_turns, seated_game,
};

/// Streams re-read the table only every 60 s here, so a prompt delivery proves the wake-up.
const SLOW_POLL: [(&str, &str); 2] = [
    ("STREAM_POLL_MS", "60000"),
    ("STREAM_KEEPALIVE_MS", "60000"),
];
/// A generous bound for a loaded test machine; the latency itself is measured elsewhere.
const PROMPT: Duration = Duration::from_secs(5);

fn seqs(frames: &[crate::support::Frame]) -> Vec<u64> {
    frames
        .iter()
        .map(|f| f.data["seq"].as_u64().unwrap())
        .collect()
}

fn a_stream_delivers_moves_and_resumes_without_gaps_or_repeats(backend: Backend) {
    let server = TestServer::start_with_env(TestDb::new(backend), backend, &SLOW_POLL);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let game = seated_game(&api, &host, std::slice::from_ref(&guest), 0, &json!({}));
    let path = format!("/v1/games/{game}/stream");
    let version = api.view(&guest, &game)["version"].as_u64().unwrap();
    let mut stream = EventStream::open(&api.base, &path, &guest.token, None, PROMPT);
    let mut seen = Vec::new();
    // The backlog: everything the guest may see so far.
    let backlog = api.events(&guest, &game);
    for _ in 0..backlog.len() {
        seen.push(stream.next_event().unwrap());
    }
    assert_eq!(
        seqs(&seen),
        backlog
            .iter()
            .map(|e| e["seq"].as_u64().unwrap())
            .collect::<Vec<_>>()
    );
    assert!(seqs(&seen).last().unwrap() <= &version);
    // A move by the host arrives as a public selection_made, never as the host's card.
    let card = cards(&api.view(&host, &game)["you"]["hand"])[0];
    api.ok(&host, &game, &json!({ "type": "play_card", "card": card }));
    let frame = stream.next_event().unwrap();
    assert_eq!(frame.event.as_deref(), Some("selection_made"));
    assert_eq!(frame.data["data"]["seat"], 0);
    assert_eq!(
        frame.id.as_deref(),
        Some(frame.data["seq"].to_string().as_str())
    );
    seen.push(frame);
    drop(stream);
    // Moves while disconnected, then resume after the last id seen.
    let guest_card = cards(&api.view(&guest, &game)["you"]["hand"])[0];
    api.ok(
        &guest,
        &game,
        &json!({ "type": "play_card", "card": guest_card }),
    );
    let last = seen.last().unwrap().id.clone().unwrap();
    let mut resumed = EventStream::open(&api.base, &path, &guest.token, Some(&last), PROMPT);
    let all = api.events(&guest, &game);
    let missing = all
        .iter()
        .filter(|e| e["seq"].as_u64().unwrap() > last.parse::<u64>().unwrap())
        .count();
    for _ in 0..missing {
        seen.push(resumed.next_event().unwrap());
    }
    assert_eq!(
        seqs(&seen),
        all.iter()
            .map(|e| e["seq"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        "the stream and the events endpoint agree: no gaps, no repeats"
    );
    for f in &seen {
        if f.event.as_deref() == Some("card_selected") || f.event.as_deref() == Some("hand_dealt") {
            assert_eq!(
                f.data["data"]["seat"], 1,
                "only the guest's own private events: {:?}",
                f.data
            );
        }
    }
}

fn a_stream_ends_when_the_game_is_finished(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let me = api.guest("solo");
    let game = seated_game(
        &api,
        &me,
        &[],
        3,
        &json!({ "options": { "end": { "rounds": 1 } } }),
    );
    play_turns(&api, &me, &game, 10);
    assert_eq!(api.view(&me, &game)["status"], "finished");
    let mut stream = EventStream::open(
        &api.base,
        &format!("/v1/games/{game}/stream"),
        &me.token,
        None,
        Duration::from_secs(30),
    );
    let mut last = None;
    while let Some(f) = stream.next_event() {
        last = f.event;
    }
    assert_eq!(
        last.as_deref(),
        Some("game_finished"),
        "the stream closes after the last event"
    );
}

fn keep_alive_comments_flow_while_nothing_happens(backend: Backend) {
    let server = TestServer::start_with_env(
        TestDb::new(backend),
        backend,
        &[("STREAM_KEEPALIVE_MS", "200")],
    );
    let api = server.client();
    let host = api.guest("host");
    let game = api.create_game(&host, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    let path = format!("/v1/games/{}/stream", game["id"].as_str().unwrap());
    let mut stream = EventStream::open(&api.base, &path, &host.token, Some("1000"), PROMPT);
    let f = stream.next_frame().unwrap();
    assert!(f.comment, "a keep-alive comment, not an event: {f:?}");
}

fn streams_refuse_strangers_and_bad_ids(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let id = uuid::Uuid::new_v4();
    api.get(&format!("/v1/games/{id}/stream"), Some(&host.token))
        .assert_problem(404, "not_found");
    api.get(&format!("/v1/games/{id}/stream"), None)
        .assert_problem(401, "unauthorized");
    let game = api.create_game(&host, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    let r = api
        .http
        .get(api.url(&format!(
            "/v1/games/{}/stream",
            game["id"].as_str().unwrap()
        )))
        .bearer_auth(&host.token)
        .header("Last-Event-ID", "nope")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
}

/// One 6-nimmt turn: every player plays their lowest card, and whoever is asked takes the
/// first row offered.
fn play_round(api: &crate::support::Api, players: &[&crate::support::Player], game: &str) {
    for p in players {
        let card = cards(&api.view(p, game)["you"]["hand"])[0];
        api.ok(p, game, &json!({ "type": "play_card", "card": card }));
    }
    for p in players {
        let view = api.view(p, game);
        if let Some(take) = view["legal"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "take_row")
        {
            api.ok(p, game, &take.clone());
        }
    }
}

/// Reads from `stream` the events of `all` (a viewer's events endpoint) after `after`, in
/// order; returns them.
fn read_up_to(
    stream: &mut EventStream,
    all: &[serde_json::Value],
    after: u64,
) -> Vec<crate::support::Frame> {
    let missing = all
        .iter()
        .filter(|e| e["seq"].as_u64().unwrap() > after)
        .count();
    (0..missing)
        .map(|_| stream.next_event().expect("the stream ended early"))
        .collect()
}

/// The seq and type of every event, to compare a stream with the events endpoint.
fn seq_types(events: &[serde_json::Value]) -> Vec<(u64, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["seq"].as_u64().unwrap(),
                e["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn frame_seq_types(frames: &[crate::support::Frame]) -> Vec<(u64, String)> {
    frames
        .iter()
        .map(|f| {
            assert_eq!(f.event.as_deref(), f.data["type"].as_str());
            (
                f.data["seq"].as_u64().unwrap(),
                f.data["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Two seated players and a spectator stream the same game through the one shared reader:
/// each gets exactly what its own events endpoint shows (its own hand and selections, never
/// the other seat's; the spectator no private event at all; server-only events nobody).
fn each_stream_of_a_game_gets_only_what_its_viewer_may_see(backend: Backend) {
    let server = TestServer::start_with_env(TestDb::new(backend), backend, &SLOW_POLL);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let watcher = api.guest("watcher");
    let game = seated_game(
        &api,
        &host,
        std::slice::from_ref(&guest),
        0,
        &json!({ "public": true }),
    );
    let path = format!("/v1/games/{game}/stream");
    let viewers: [(&crate::support::Player, Option<u8>); 3] =
        [(&host, Some(0)), (&guest, Some(1)), (&watcher, None)];
    let mut streams: Vec<EventStream> = viewers
        .iter()
        .map(|(p, _)| EventStream::open(&api.base, &path, &p.token, None, PROMPT))
        .collect();
    let mut seen: Vec<Vec<crate::support::Frame>> = viewers
        .iter()
        .zip(&mut streams)
        .map(|((p, _), s)| read_up_to(s, &api.events(p, &game), 0))
        .collect();
    // Two moves, each delivered through the shared reader (the poll is a minute here).
    for _ in 0..2 {
        play_round(&api, &[&host, &guest], &game);
    }
    for (((p, seat), stream), frames) in viewers.iter().zip(&mut streams).zip(&mut seen) {
        let all = api.events(p, &game);
        let last = frames.last().map_or(0, |f| f.data["seq"].as_u64().unwrap());
        frames.extend(read_up_to(stream, &all, last));
        assert_eq!(
            frame_seq_types(frames),
            seq_types(&all),
            "the stream of {seat:?} shows exactly its events endpoint"
        );
        let mut own_private = 0;
        for f in frames.iter() {
            let private = matches!(
                f.event.as_deref(),
                Some("hand_dealt" | "card_selected" | "hand_changed")
            );
            if private {
                assert_eq!(
                    f.data["data"]["seat"].as_u64(),
                    seat.map(u64::from),
                    "seat {seat:?} got another seat's private event: {:?}",
                    f.data
                );
                own_private += 1;
            }
        }
        match seat {
            Some(_) => assert!(own_private > 0, "seat {seat:?} saw its own hand"),
            None => assert_eq!(own_private, 0, "the spectator saw no private event"),
        }
    }
    // The two seats' streams differ exactly in their private events.
    assert_ne!(frame_seq_types(&seen[0]), frame_seq_types(&seen[1]));
}

/// A stream opened before its viewer sits down: once seated, the viewer gets its own hand
/// on the same stream (a stream keeps its place in the game's view only while the view
/// stays the same), and the stream shows exactly its events endpoint.
fn a_stream_opened_before_its_viewer_sits_down_shows_its_hand_once_seated(backend: Backend) {
    let server = TestServer::start_with_env(TestDb::new(backend), backend, &SLOW_POLL);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let game = api.create_game(
        &host,
        &json!({ "ruleset": "6-nimmt", "players": 2, "public": true }),
    );
    let game = game["id"].as_str().unwrap().to_owned();
    let path = format!("/v1/games/{game}/stream");
    let mut stream = EventStream::open(&api.base, &path, &guest.token, None, PROMPT);
    let mut frames = read_up_to(&mut stream, &api.events(&guest, &game), 0);
    api.join(&guest, &game);
    api.ok(&host, &game, &json!({ "type": "start" }));
    play_round(&api, &[&host, &guest], &game);
    let all = api.events(&guest, &game);
    let last = frames.last().map_or(0, |f| f.data["seq"].as_u64().unwrap());
    frames.extend(read_up_to(&mut stream, &all, last));
    assert_eq!(frame_seq_types(&frames), seq_types(&all));
    let hands: Vec<u64> = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("hand_dealt"))
        .map(|f| f.data["data"]["seat"].as_u64().unwrap())
        .collect();
    assert_eq!(
        hands,
        [1],
        "the stream showed its viewer's hand, and only that"
    );
}

/// 200 streams on one game, some from the start and some from the current version, all
/// through one shared reader: every stream gets every move once, in order, and later moves
/// bring nothing twice.
fn many_streams_on_one_game_each_get_every_move_once_in_order(backend: Backend) {
    let env = [SLOW_POLL[0], SLOW_POLL[1], ("LIMIT_STREAMS", "0")];
    let server = TestServer::start_with_env(TestDb::new(backend), backend, &env);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let watcher = api.guest("watcher");
    let game = seated_game(
        &api,
        &host,
        std::slice::from_ref(&guest),
        0,
        &json!({ "public": true }),
    );
    let path = format!("/v1/games/{game}/stream");
    let version = api.view(&host, &game)["version"].as_u64().unwrap();
    let starts: Vec<u64> = (0..200)
        .map(|i| if i % 4 == 0 { 0 } else { version })
        .collect();
    let mut streams: Vec<EventStream> = starts
        .iter()
        .map(|start| {
            let id = start.to_string();
            EventStream::open(&api.base, &path, &watcher.token, Some(&id), PROMPT)
        })
        .collect();
    let mut seen: Vec<u64> = starts.clone();
    for round in 0..2 {
        play_round(&api, &[&host, &guest], &game);
        let all = api.events(&watcher, &game);
        for (i, stream) in streams.iter_mut().enumerate() {
            let got = read_up_to(stream, &all, seen[i]);
            let want: Vec<_> = all
                .iter()
                .filter(|e| e["seq"].as_u64().unwrap() > seen[i])
                .cloned()
                .collect();
            assert!(!want.is_empty());
            assert_eq!(
                frame_seq_types(&got),
                seq_types(&want),
                "stream {i} in round {round}: every event once, in order"
            );
            seen[i] = want.last().unwrap()["seq"].as_u64().unwrap();
        }
    }
}

/// A move that commits while a stream opens reaches it. A game's reader on a replica starts
/// with the game's first stream there; what commits between the stream's own read of the
/// table and the reader's first read must still be delivered (streams poll every 60 s here,
/// so a lost move is a silent stream). The race depends on timing: many fresh games, each
/// with a stream opening while its move is made, on four threads at once.
fn a_move_made_while_a_stream_opens_reaches_it(backend: Backend) {
    let server = TestServer::start_with_env(TestDb::new(backend), backend, &SLOW_POLL);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let watcher = api.guest("watcher");
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..10 {
                    let game = seated_game(
                        &api,
                        &host,
                        std::slice::from_ref(&guest),
                        0,
                        &json!({ "public": true }),
                    );
                    let view = api.view(&host, &game);
                    let version = view["version"].as_u64().unwrap().to_string();
                    let card = cards(&view["you"]["hand"])[0];
                    let path = format!("/v1/games/{game}/stream");
                    std::thread::scope(|inner| {
                        let opened = inner.spawn(|| {
                            let mut stream = EventStream::open(
                                &server.base,
                                &path,
                                &watcher.token,
                                Some(&version),
                                PROMPT,
                            );
                            stream.next_event().unwrap()
                        });
                        api.ok(&host, &game, &json!({ "type": "play_card", "card": card }));
                        let first = opened.join().unwrap();
                        assert_eq!(first.event.as_deref(), Some("selection_made"), "{game}");
                    });
                }
            });
        }
    });
}

both!(
    a_move_made_while_a_stream_opens_reaches_it,
    a_stream_delivers_moves_and_resumes_without_gaps_or_repeats,
    each_stream_of_a_game_gets_only_what_its_viewer_may_see,
    a_stream_opened_before_its_viewer_sits_down_shows_its_hand_once_seated,
    many_streams_on_one_game_each_get_every_move_once_in_order,
    a_stream_ends_when_the_game_is_finished,
    keep_alive_comments_flow_while_nothing_happens,
    streams_refuse_strangers_and_bad_ids,
);

#[test]
fn a_move_through_one_replica_reaches_the_stream_of_another() {
    let server = TestServer::start_with_env(
        TestDb::new(Backend::Postgres),
        Backend::Postgres,
        &SLOW_POLL,
    );
    let other = server.replica(&SLOW_POLL);
    let api = server.client();
    let host = api.guest("host");
    let guest = api.guest("guest");
    let game = seated_game(&api, &host, std::slice::from_ref(&guest), 0, &json!({}));
    let backlog = api.events(&guest, &game).len();
    let mut stream = EventStream::open(
        &other.base,
        &format!("/v1/games/{game}/stream"),
        &guest.token,
        None,
        PROMPT,
    );
    for _ in 0..backlog {
        stream.next_event().unwrap();
    }
    let card = cards(&api.view(&host, &game)["you"]["hand"])[0];
    api.ok(&host, &game, &json!({ "type": "play_card", "card": card }));
    let f = stream.next_event().unwrap();
    assert_eq!(
        f.event.as_deref(),
        Some("selection_made"),
        "LISTEN/NOTIFY woke the other replica's stream"
    );
    // Commands spread over both replicas lose nothing.
    let other_api = other.client();
    let guest_card = cards(&other_api.view(&guest, &game)["you"]["hand"])[0];
    other_api.ok(
        &guest,
        &game,
        &json!({ "type": "play_card", "card": guest_card }),
    );
    let revealed = api
        .events(&host, &game)
        .into_iter()
        .filter(|e| e["type"] == "cards_revealed")
        .count();
    assert_eq!(revealed, 1);
}

fn a_sigterm_as_soon_as_the_server_listens_stops_it_cleanly(backend: Backend) {
    // The signal handlers must be in place before "listening on" is printed; otherwise
    // the default action ends the process by the signal (exit status not 0).
    let mut server = TestServer::start(backend);
    assert!(
        server.terminate(),
        "the server exits with status 0 after an early SIGTERM"
    );
}

fn sigterm_closes_streams_and_stops_cleanly(backend: Backend) {
    let mut server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let game = api.create_game(&host, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    let path = format!("/v1/games/{}/stream", game["id"].as_str().unwrap());
    let mut stream =
        EventStream::open(&api.base, &path, &host.token, None, Duration::from_secs(30));
    let backlog = api.events(&host, game["id"].as_str().unwrap()).len();
    for _ in 0..backlog {
        stream.next_event().unwrap();
    }
    let reader = std::thread::spawn(move || {
        // Reads until the server closes the stream.
        while stream.next_frame().is_some() {}
    });
    assert!(
        server.terminate(),
        "the server exits with status 0 after SIGTERM"
    );
    reader.join().unwrap();
    assert!(server.log_text().contains("shutting down"));
}

both!(sigterm_closes_streams_and_stops_cleanly);
both!(a_sigterm_as_soon_as_the_server_listens_stops_it_cleanly);

#[test]
fn simultaneous_commands_spread_over_two_replicas_lose_nothing() {
    let server = TestServer::start(Backend::Postgres);
    let other = server.replica(&[]);
    let (a, b) = (server.client(), other.client());
    let players: Vec<crate::support::Player> =
        (0..8).map(|i| a.guest(&format!("spread{i}"))).collect();
    let game = seated_game(
        &a,
        &players[0],
        &players[1..],
        0,
        &json!({ "options": { "end": { "rounds": 1 } } }),
    );
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(players.len()));
    let handles: Vec<_> = players
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // Even seats through replica A, odd seats through replica B.
            let api = if i % 2 == 0 { a.clone() } else { b.clone() };
            let (p, game, barrier) = (p.clone(), game.clone(), barrier.clone());
            std::thread::spawn(move || {
                let card = cards(&api.view(&p, &game)["you"]["hand"])[0];
                barrier.wait();
                api.ok(&p, &game, &json!({ "type": "play_card", "card": card }));
                card
            })
        })
        .collect();
    let played: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let events = a.events(&players[0], &game);
    let revealed: Vec<u64> = events
        .iter()
        .find(|e| e["type"] == "cards_revealed")
        .expect("all eight selections arrived and were revealed")["data"]["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["card"].as_u64().unwrap())
        .collect();
    let mut expected = played.clone();
    expected.sort_unstable();
    assert_eq!(
        revealed, expected,
        "every acknowledged selection, through either replica, was revealed"
    );
}

// ---- A stream lives no longer than its token ----

/// How a test takes an account's tokens back.
#[derive(Clone, Copy, Debug)]
enum Revocation {
    Logout,
    PasswordChange,
    Deletion,
    /// A guest registers: its guest tokens stop working.
    Registration,
}

/// Revokes `who`'s tokens through `api`; returns a fresh token when the account lives on.
fn revoke(api: &Api, who: &Player, how: Revocation) -> Option<String> {
    let password = format!("password-of-{}", who.name);
    match how {
        Revocation::Logout => {
            let r = api.post("/v1/me/logout", Some(&who.token), &json!({}));
            assert_eq!(r.status, 204, "{}", r.text);
            let r = api.post(
                "/v1/tokens",
                None,
                &json!({ "name": who.name, "password": password }),
            );
            assert_eq!(r.status, 200, "{}", r.text);
            Some(r.body["access_token"].as_str().unwrap().to_owned())
        }
        Revocation::PasswordChange => {
            let r = api.post(
                "/v1/me/password",
                Some(&who.token),
                &json!({ "current_password": password, "new_password": "another-password" }),
            );
            assert_eq!(r.status, 200, "{}", r.text);
            Some(r.body["access_token"].as_str().unwrap().to_owned())
        }
        Revocation::Registration => {
            let r = api.post(
                "/v1/me/register",
                Some(&who.token),
                &json!({ "password": "a registered password" }),
            );
            assert_eq!(r.status, 200, "{}", r.text);
            Some(r.body["access_token"].as_str().unwrap().to_owned())
        }
        Revocation::Deletion => {
            let r = api
                .http
                .delete(api.url("/v1/me"))
                .bearer_auth(&who.token)
                .json(&json!({ "password": password }))
                .send()
                .unwrap();
            assert_eq!(r.status().as_u16(), 204);
            None
        }
    }
}

/// Generous: the revocation check runs every 200 ms in these tests.
const REVOKED_WITHIN: Duration = Duration::from_secs(15);
const QUICK_CHECK: (&str, &str) = ("STREAM_REVOCATION_CHECK_MS", "200");

/// Reads `stream` on a thread until the server closes it: the frames read, and whether it
/// closed within `bound`.
fn read_until_closed(mut stream: EventStream, bound: Duration) -> (Vec<Frame>, bool) {
    let (tx, rx) = std::sync::mpsc::channel();
    // A stream that stays open makes the thread fail its read later; the test has failed
    // by then.
    std::thread::spawn(move || {
        while let Some(frame) = stream.next_frame() {
            if tx.send(Some(frame)).is_err() {
                return;
            }
        }
        let _ = tx.send(None);
    });
    let deadline = Instant::now() + bound;
    let mut frames = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => return (frames, true),
            Err(_) => return (frames, false),
        }
    }
}

/// A stream opened with a token ends when the account logs out everywhere, changes its
/// password or is deleted, and sends nothing committed after that: not the seat's next
/// private event (its selection, made with the fresh token, or the bot's after a deletion).
/// A stream opened with the fresh token goes on.
fn a_stream_ends_when_its_token_is_revoked(backend: Backend, how: Revocation) {
    let env = [SLOW_POLL[0], SLOW_POLL[1], QUICK_CHECK];
    let server = TestServer::start_with_env(TestDb::new(backend), backend, &env);
    let api = server.client();
    let anna = match how {
        Revocation::Registration => api.guest("anna"),
        _ => api.account("anna"),
    };
    let bob = api.guest("bob");
    let game = seated_game(&api, &anna, std::slice::from_ref(&bob), 0, &json!({}));
    let path = format!("/v1/games/{game}/stream");
    let mut stream = EventStream::open(&api.base, &path, &anna.token, None, REVOKED_WITHIN * 2);
    for _ in 0..api.events(&anna, &game).len() {
        stream.next_event().unwrap();
    }
    let revoked_at = api.view(&anna, &game)["version"].as_u64().unwrap();

    let fresh = revoke(&api, &anna, how);
    let mut fresh_stream = fresh.as_ref().map(|token| {
        let last = revoked_at.to_string();
        EventStream::open(&api.base, &path, token, Some(&last), PROMPT)
    });
    if let Some(token) = &fresh {
        // The seat's next private event: its own selection, made with the fresh token.
        let anna = Player {
            token: token.clone(),
            ..anna.clone()
        };
        let card = cards(&api.view(&anna, &game)["you"]["hand"])[0];
        api.ok(&anna, &game, &json!({ "type": "play_card", "card": card }));
    }
    let card = cards(&api.view(&bob, &game)["you"]["hand"])[0];
    api.ok(&bob, &game, &json!({ "type": "play_card", "card": card }));

    let (after, closed) = read_until_closed(stream, REVOKED_WITHIN);
    let late: Vec<_> = after
        .iter()
        .filter(|f| !f.comment)
        .map(|f| (f.data["seq"].as_u64().unwrap(), f.event.clone()))
        .filter(|(seq, _)| *seq > revoked_at)
        .collect();
    assert!(
        late.is_empty(),
        "{how:?}: the revoked stream sent events committed after the revocation: {late:?}"
    );
    assert!(
        closed,
        "{how:?}: the stream of a revoked token is still open after {REVOKED_WITHIN:?}"
    );
    if let Some(stream) = &mut fresh_stream {
        let f = stream.next_event().unwrap();
        assert_eq!(f.event.as_deref(), Some("card_selected"), "{how:?}");
        assert_eq!(f.data["data"]["seat"], 0);
    }
}

fn a_stream_ends_at_logout(backend: Backend) {
    a_stream_ends_when_its_token_is_revoked(backend, Revocation::Logout);
}

fn a_stream_ends_at_a_password_change(backend: Backend) {
    a_stream_ends_when_its_token_is_revoked(backend, Revocation::PasswordChange);
}

fn a_stream_ends_at_the_accounts_deletion(backend: Backend) {
    a_stream_ends_when_its_token_is_revoked(backend, Revocation::Deletion);
}

fn a_guests_stream_ends_when_the_guest_registers(backend: Backend) {
    a_stream_ends_when_its_token_is_revoked(backend, Revocation::Registration);
}

/// A ticket issued before a logout everywhere or a password change no longer opens a
/// stream (as an unknown ticket); one issued to the fresh token does.
fn a_ticket_issued_before_a_revocation_is_refused(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    for (i, how) in [Revocation::Logout, Revocation::PasswordChange]
        .into_iter()
        .enumerate()
    {
        let anna = api.account(&format!("anna{i}"));
        let game = seated_game(&api, &anna, &[], 1, &json!({}));
        let tickets = format!("/v1/games/{game}/stream-tickets");
        let issue = |token: &str| {
            let r = api.post(&tickets, Some(token), &json!({}));
            assert_eq!(r.status, 201, "{}", r.text);
            r.body["ticket"].as_str().unwrap().to_owned()
        };
        let old = issue(&anna.token);
        let fresh = revoke(&api, &anna, how).unwrap();
        let path = format!("/v1/games/{game}/stream?ticket={old}");
        EventStream::try_open(&api.base, &path, None, None, PROMPT)
            .err()
            .unwrap_or_else(|| panic!("{how:?}: a ticket from before it still opens a stream"))
            .assert_problem(401, "unauthorized");
        let path = format!("/v1/games/{game}/stream?ticket={}", issue(&fresh));
        assert!(
            EventStream::try_open(&api.base, &path, None, None, PROMPT).is_ok(),
            "{how:?}: a ticket of the fresh token opens the stream"
        );
    }
}

both!(
    a_stream_ends_at_logout,
    a_stream_ends_at_a_password_change,
    a_stream_ends_at_the_accounts_deletion,
    a_guests_stream_ends_when_the_guest_registers,
    a_ticket_issued_before_a_revocation_is_refused,
);

/// Replicas share nothing but the database: a logout through one replica ends the account's
/// streams on another within its revocation check (here a stream opened with a ticket),
/// while another account's stream there goes on.
#[test]
fn a_logout_through_one_replica_ends_the_streams_on_another() {
    let env = [SLOW_POLL[0], SLOW_POLL[1], QUICK_CHECK];
    let server =
        TestServer::start_with_env(TestDb::new(Backend::Postgres), Backend::Postgres, &env);
    let other = server.replica(&env);
    let (api, there) = (server.client(), other.client());
    let anna = api.account("anna");
    let bob = api.guest("bob");
    let game = seated_game(&api, &anna, std::slice::from_ref(&bob), 0, &json!({}));
    let r = there.post(
        &format!("/v1/games/{game}/stream-tickets"),
        Some(&anna.token),
        &json!({}),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let path = format!(
        "/v1/games/{game}/stream?ticket={}",
        r.body["ticket"].as_str().unwrap()
    );
    let mut stream = EventStream::try_open(&there.base, &path, None, None, REVOKED_WITHIN * 2)
        .unwrap_or_else(|r| panic!("ticket refused: {}", r.text));
    let path = format!("/v1/games/{game}/stream");
    let mut bobs = EventStream::open(&there.base, &path, &bob.token, None, PROMPT);
    for _ in 0..api.events(&anna, &game).len() {
        stream.next_event().unwrap();
    }
    for _ in 0..api.events(&bob, &game).len() {
        bobs.next_event().unwrap();
    }

    revoke(&api, &anna, Revocation::Logout);
    let (_, closed) = read_until_closed(stream, REVOKED_WITHIN);
    assert!(
        closed,
        "the other replica's stream of the revoked token is still open after {REVOKED_WITHIN:?}"
    );
    let card = cards(&api.view(&bob, &game)["you"]["hand"])[0];
    api.ok(&bob, &game, &json!({ "type": "play_card", "card": card }));
    let f = bobs.next_event().unwrap();
    assert_eq!(
        (f.event.as_deref(), &f.data["data"]["seat"]),
        (Some("card_selected"), &json!(1)),
        "another account's stream on that replica goes on"
    );
}
