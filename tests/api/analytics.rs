//! The event log as a product: the analysts' feed (commit order, never skipping), its NDJSON
//! export, the archive of finished games, and upcasting of old payloads.

use std::collections::BTreeMap;
use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};
use std::time::{Duration, Instant};

use diesel::{Connection, RunQueryDsl};
use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, TestServer, cards, play_turns, seated_game, sql};

/// A registered account with the analyst role (granted through the command line).
pub fn analyst(server: &TestServer, api: &Api) -> Player {
    let r = api.post(
        "/v1/accounts",
        None,
        &json!({ "name": "ada", "password": "correct horse" }),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    crate::support::run_command(server, &["grant-role", "ada", "analyst"]);
    let t = api.post(
        "/v1/tokens",
        None,
        &json!({ "name": "ada", "password": "correct horse" }),
    );
    Player {
        id: r.body["id"].as_str().unwrap().into(),
        name: "ada".into(),
        token: t.body["access_token"].as_str().unwrap().into(),
    }
}

/// Plays a one-round game of a guest and three bots to the end.
fn play_a_game(api: &Api, name: &str) -> String {
    play_rounds(api, name, 1)
}

/// Plays a game of `rounds` rounds of a guest and three bots to the end.
fn play_rounds(api: &Api, name: &str, rounds: u64) -> String {
    let me = api.guest(name);
    let game = seated_game(
        api,
        &me,
        &[],
        3,
        &json!({ "options": { "end": { "rounds": rounds } } }),
    );
    play_turns(api, &me, &game, 10 * rounds);
    game
}

/// Follows the feed from `after` to its current end.
pub fn read_feed(api: &Api, who: &Player, after: &mut i64, into: &mut Vec<Value>) {
    loop {
        let r = api.get(
            &format!("/v1/analytics/events?after={after}&limit=50"),
            Some(&who.token),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        let items = r.body["items"].as_array().unwrap().clone();
        if let Some(last) = items.last() {
            *after = last["position"].as_i64().unwrap();
        }
        into.extend(items);
        if r.body["next_cursor"].is_null() {
            return;
        }
    }
}

/// Waits until the feed holds nothing back that has committed (`/metrics`): a transaction
/// anywhere in the PostgreSQL cluster (another test's, too) briefly hides what committed
/// after it began. Always at once on SQLite.
pub fn settle(api: &Api) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let m = api.get("/metrics", None);
        assert_eq!(m.status, 200);
        if held_events(&m.text) == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the feed stayed held back: {}",
            m.text
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `stammtisch_feed_held_events` of a `/metrics` text.
fn held_events(metrics: &str) -> i64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("stammtisch_feed_held_events "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no feed gauge in {metrics}"))
}

fn the_feed_and_the_archive_need_the_analyst_role(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let guest = api.guest("nosy");
    api.get("/v1/analytics/events", Some(&guest.token))
        .assert_problem(403, "not_an_analyst");
    api.get("/v1/analytics/events", None)
        .assert_problem(401, "unauthorized");
    let ada = analyst(&server, &api);
    assert_eq!(
        api.get("/v1/me", Some(&ada.token)).body["roles"],
        json!(["analyst"])
    );
    assert_eq!(
        api.get("/v1/analytics/events", Some(&ada.token)).status,
        200
    );
    api.get("/v1/analytics/events?limit=0", Some(&ada.token))
        .assert_problem(422, "validation_failed");
    // `after` is the position of an event; one that names no event is refused, not read
    // as "from the start".
    api.get("/v1/analytics/events?after=987654321", Some(&ada.token))
        .assert_problem(422, "validation_failed");
    let game = seated_game(&api, &guest, &[], 1, &json!({}));
    api.get(
        &format!("/v1/analytics/games/{game}/events"),
        Some(&ada.token),
    )
    .assert_problem(409, "game_not_finished");
    api.get(
        &format!("/v1/analytics/games/{game}/events"),
        Some(&guest.token),
    )
    .assert_problem(403, "not_an_analyst");
}

fn paging_the_feed_during_concurrent_games_misses_nothing(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let ada = analyst(&server, &api);
    // A reader follows the feed while four games are played at once.
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (api, ada, stop) = (api.clone(), ada.clone(), stop.clone());
        std::thread::spawn(move || {
            let (mut after, mut seen) = (0, Vec::new());
            while !stop.load(Ordering::SeqCst) {
                read_feed(&api, &ada, &mut after, &mut seen);
            }
            read_feed(&api, &ada, &mut after, &mut seen);
            seen
        })
    };
    // Six games of three rounds: thousands of public events.
    let players: Vec<_> = (0..6)
        .map(|i| {
            let api = api.clone();
            std::thread::spawn(move || play_rounds(&api, &format!("player{i}"), 3))
        })
        .collect();
    let games: Vec<String> = players.into_iter().map(|h| h.join().unwrap()).collect();
    settle(&api);
    stop.store(true, Ordering::SeqCst);
    let followed = reader.join().unwrap();
    let (mut after, mut all) = (0, Vec::new());
    read_feed(&api, &ada, &mut after, &mut all);
    let positions: Vec<i64> = all
        .iter()
        .map(|e| e["position"].as_i64().unwrap())
        .collect();
    assert!(all.len() > 1000, "thousands of events: {}", all.len());
    let mut unique = positions.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), positions.len(), "every position once");
    assert_eq!(
        followed, all,
        "the concurrent reader saw exactly the final feed: nothing skipped, nothing twice"
    );
    // Per game, the feed holds exactly the public events of the game's own log.
    let mut by_game: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for e in &all {
        assert!(
            ![
                "hand_dealt",
                "card_selected",
                "seed_recorded",
                "deal_prepared"
            ]
            .contains(&e["type"].as_str().unwrap())
        );
        by_game
            .entry(e["game_id"].as_str().unwrap().to_owned())
            .or_default()
            .push(e["seq"].as_i64().unwrap());
    }
    for game in &games {
        let log = api.get(
            &format!("/v1/analytics/games/{game}/events"),
            Some(&ada.token),
        );
        assert_eq!(log.status, 200, "{}", log.text);
        let public: Vec<i64> = log.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["audience"] == "public")
            .map(|e| e["seq"].as_i64().unwrap())
            .collect();
        assert_eq!(by_game[game], public, "game {game}");
        let all_seqs: Vec<i64> = log.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["seq"].as_i64().unwrap())
            .collect();
        assert_eq!(
            all_seqs,
            (1..=all_seqs.len() as i64).collect::<Vec<_>>(),
            "the archive is complete"
        );
        let types: Vec<&str> = log.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert!(
            types.contains(&"seed_recorded") && types.contains(&"hand_dealt"),
            "unredacted"
        );
    }
    // The NDJSON export holds the same events.
    let text = api
        .http
        .get(api.url("/v1/analytics/events?limit=7"))
        .bearer_auth(&ada.token)
        .header("Accept", "application/x-ndjson")
        .send()
        .unwrap()
        .text()
        .unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, all);
}

fn an_old_payload_is_upcast_on_read_and_never_rewritten(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let ada = analyst(&server, &api);
    let game = play_a_game(&api, "old");
    let version = api
        .get(
            &format!("/v1/analytics/games/{game}/events"),
            Some(&ada.token),
        )
        .body["items"]
        .as_array()
        .unwrap()
        .len();
    // A schema-0 card_placed (no `chosen`), as raw SQL, appended to the finished game.
    let data = r#"{"seat": 1, "card": 104, "row": 0, "taken": []}"#;
    let insert = format!(
        "INSERT INTO events (event_id, game_id, seq, event_type, schema_version, audience, data, recorded_at) \
         VALUES ('old-{game}', '{game}', {}, 'card_placed', 0, 'public', '{data}', CURRENT_TIMESTAMP)",
        version + 1
    );
    sql(&server, &insert);
    let log = api.get(
        &format!("/v1/analytics/games/{game}/events"),
        Some(&ada.token),
    );
    let old = log.body["items"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(old["schema_version"], 0);
    assert_eq!(
        old["data"]["chosen"], false,
        "upcast to the current schema: {old}"
    );
    // Loading the game decodes it (it would fail without the upcaster).
    let me = api.get("/v1/games?mine=true", Some(&api.guest("late").token));
    assert_eq!(me.status, 200);
    settle(&api);
    let feed_item = {
        let (mut after, mut all) = (0, Vec::new());
        read_feed(&api, &ada, &mut after, &mut all);
        all.into_iter().last().unwrap()
    };
    assert_eq!(feed_item["data"]["chosen"], false);
    // The stored row is unchanged.
    #[derive(diesel::QueryableByName)]
    struct Raw {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        schema_version: i32,
    }
    let q = format!("SELECT schema_version FROM events WHERE event_id = 'old-{game}'");
    let raw: Vec<Raw> = crate::support::raw_rows(backend, &server.db.url, &q);
    assert_eq!(raw.len(), 1);
    assert_eq!(raw[0].schema_version, 0);
}

/// Many writers at once (appends that commit in any order) and a reader following the feed
/// meanwhile: the reader sees every public event exactly once, each game's in seq order,
/// and the NDJSON export the same.
fn many_concurrent_writers_and_a_reader_see_every_event_once_in_game_order(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let ada = analyst(&server, &api);
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (api, ada, stop) = (api.clone(), ada.clone(), stop.clone());
        std::thread::spawn(move || {
            let (mut after, mut seen) = (0, Vec::new());
            while !stop.load(Ordering::SeqCst) {
                read_feed(&api, &ada, &mut after, &mut seen);
            }
            read_feed(&api, &ada, &mut after, &mut seen);
            seen
        })
    };
    let writers: Vec<_> = (0..12)
        .map(|i| {
            let api = api.clone();
            std::thread::spawn(move || {
                (0..2)
                    .map(|j| play_a_game(&api, &format!("w{i}g{j}")))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let games: Vec<String> = writers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    settle(&api);
    stop.store(true, Ordering::SeqCst);
    let seen = reader.join().unwrap();
    let mut by_game: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for e in &seen {
        by_game
            .entry(e["game_id"].as_str().unwrap().to_owned())
            .or_default()
            .push(e["seq"].as_i64().unwrap());
    }
    assert_eq!(by_game.len(), games.len(), "every game, no other");
    for game in &games {
        let seqs = &by_game[game];
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "game {game}: once each, in seq order: {seqs:?}"
        );
        let log = api.get(
            &format!("/v1/analytics/games/{game}/events"),
            Some(&ada.token),
        );
        assert_eq!(log.status, 200, "{}", log.text);
        let public: Vec<i64> = log.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["audience"] == "public")
            .map(|e| e["seq"].as_i64().unwrap())
            .collect();
        assert_eq!(seqs, &public, "game {game}: every public event");
    }
    let text = api
        .http
        .get(api.url("/v1/analytics/events?limit=50"))
        .bearer_auth(&ada.token)
        .header("Accept", "application/x-ndjson")
        .send()
        .unwrap()
        .text()
        .unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, seen, "the export reads the same order");
}

/// Games named by their host: private ones and public ones, finished ones and lobbies whose
/// visibility changed. Returns `(id, name, public now)`.
pub fn named_games(api: &Api) -> Vec<(String, &'static str, bool)> {
    let host = api.guest("hanna");
    let finished = |name: &str, public: bool| {
        let game = seated_game(
            api,
            &host,
            &[],
            1,
            &json!({ "name": name, "public": public, "options": { "end": { "rounds": 1 } } }),
        );
        play_turns(api, &host, &game, 10);
        assert_eq!(api.view(&host, &game)["status"], "finished");
        game
    };
    let lobby = |name: &str, public: bool, then: bool| {
        let game = api.create_game(
            &host,
            &json!({ "ruleset": "6-nimmt", "players": 3, "name": name, "public": public }),
        );
        let id = game["id"].as_str().unwrap().to_owned();
        let r = api
            .http
            .patch(api.url(&format!("/v1/games/{id}")))
            .bearer_auth(&host.token)
            .json(&json!({ "public": then }))
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        id
    };
    vec![
        (finished("Kitchen Table", false), "Kitchen Table", false),
        (finished("Open Table", true), "Open Table", true),
        (lobby("Was Open", true, false), "Was Open", false),
        (lobby("Now Open", false, true), "Now Open", true),
    ]
}

/// The name in a game's `game_created` among feed or archive items.
fn created_name<'a>(items: &'a [Value], game: &str) -> &'a Value {
    &items
        .iter()
        .find(|e| e["type"] == "game_created" && e.get("game_id").is_none_or(|g| g == game))
        .unwrap_or_else(|| panic!("no game_created of {game}"))["data"]["name"]
}

fn private_games_names_stay_out_of_the_feed_and_the_archive(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let ada = analyst(&server, &api);
    let games = named_games(&api);
    settle(&api);
    let mut feed = Vec::new();
    read_feed(&api, &ada, &mut 0, &mut feed);
    let export = api
        .http
        .get(api.url("/v1/analytics/events?limit=7"))
        .bearer_auth(&ada.token)
        .header("accept", "application/x-ndjson")
        .send()
        .unwrap()
        .text()
        .unwrap();
    let exported: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let paged = serde_json::to_string(&feed).unwrap();
    for (id, name, public) in &games {
        for (what, items, text) in [("feed", &feed, &paged), ("export", &exported, &export)] {
            if *public {
                assert_eq!(created_name(items, id), name, "{what}");
            } else {
                assert_eq!(created_name(items, id), &Value::Null, "{what}");
                assert!(!text.contains(name), "{what} names private game {name}");
            }
        }
    }
    // The archive of a finished game: the name only while the game is public.
    for (id, name, public) in &games[..2] {
        let r = api.get(
            &format!("/v1/analytics/games/{id}/events"),
            Some(&ada.token),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        let items = r.body["items"].as_array().unwrap();
        if *public {
            assert_eq!(created_name(items, id), name);
        } else {
            assert_eq!(created_name(items, id), &Value::Null);
            assert!(!r.text.contains(name), "the archive names {name}");
        }
    }
}

both!(
    private_games_names_stay_out_of_the_feed_and_the_archive,
    the_feed_and_the_archive_need_the_analyst_role,
    paging_the_feed_during_concurrent_games_misses_nothing,
    an_old_payload_is_upcast_on_read_and_never_rewritten,
    many_concurrent_writers_and_a_reader_see_every_event_once_in_game_order,
);

/// PostgreSQL: appends do not wait for each other, yet a reader never skips one that
/// commits late. While transaction A (which began first) is open, a later append commits at
/// once but the feed holds it back (and `/metrics` says so); once A commits, A's event comes
/// first, exactly once, then the later ones. A rollback leaves no gap that could stall the
/// feed.
#[test]
fn a_late_commit_is_delivered_exactly_once_and_a_rollback_does_not_stall_the_feed() {
    let server = TestServer::start(Backend::Postgres);
    let api = server.client();
    let ada = analyst(&server, &api);
    let host = api.guest("host");
    let other = api.guest("other");
    let held = seated_game(&api, &host, std::slice::from_ref(&other), 0, &json!({}));
    let game = seated_game(&api, &host, std::slice::from_ref(&other), 0, &json!({}));
    settle(&api);
    let (mut after, mut seen) = (0, Vec::new());
    read_feed(&api, &ada, &mut after, &mut seen);
    let version = api.view(&host, &held)["version"].as_i64().unwrap();
    // Transaction A appends one public event to `held` and stays open.
    let mut a = diesel::PgConnection::establish(&server.db.url).unwrap();
    diesel::sql_query("BEGIN").execute(&mut a).unwrap();
    diesel::sql_query(format!(
        "INSERT INTO events (event_id, game_id, seq, event_type, schema_version, audience, data, recorded_at) \
         VALUES ('held-{held}', '{held}', {}, 'selection_made', 1, 'public', '{{\"seat\": 0}}', now())",
        version + 1
    ))
    .execute(&mut a)
    .unwrap();
    // B: a command in another game commits while A is open (nothing serialises them).
    let card = cards(&api.view(&host, &game)["you"]["hand"])[0];
    api.ok(&host, &game, &json!({ "type": "play_card", "card": card }));
    assert!(
        held_events(&api.get("/metrics", None).text) >= 1,
        "B's committed events are counted as held back"
    );
    let mut meanwhile = Vec::new();
    let mut at = after;
    read_feed(&api, &ada, &mut at, &mut meanwhile);
    assert!(
        meanwhile.is_empty(),
        "nothing that committed after A began is visible before A ends: {meanwhile:?}"
    );
    diesel::sql_query("COMMIT").execute(&mut a).unwrap();
    settle(&api);
    let mut fresh = Vec::new();
    read_feed(&api, &ada, &mut after, &mut fresh);
    seen.extend(fresh.iter().cloned());
    let held_at: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, e)| e["game_id"] == held.as_str() && e["type"] == "selection_made")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(held_at.len(), 1, "A's event is delivered exactly once");
    let b_at: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, e)| e["game_id"] == game.as_str())
        .map(|(i, _)| i)
        .filter(|i| fresh.iter().any(|f| *f == seen[*i]))
        .collect();
    assert!(!b_at.is_empty(), "B's events arrived after A committed");
    assert!(b_at.iter().all(|i| *i > held_at[0]), "B came after A");
    // A whole append that rolls back leaves no gap: the next append continues the feed.
    diesel::sql_query("BEGIN").execute(&mut a).unwrap();
    diesel::sql_query(format!(
        "INSERT INTO events (event_id, game_id, seq, event_type, schema_version, audience, data, recorded_at) \
         VALUES ('rolled-{held}', '{held}', {}, 'selection_made', 1, 'public', '{{\"seat\": 1}}', now())",
        version + 2
    ))
    .execute(&mut a)
    .unwrap();
    diesel::sql_query("ROLLBACK").execute(&mut a).unwrap();
    let before = seen.len();
    let card = cards(&api.view(&other, &game)["you"]["hand"])[0];
    api.ok(&other, &game, &json!({ "type": "play_card", "card": card }));
    settle(&api);
    read_feed(&api, &ada, &mut after, &mut seen);
    assert!(seen.len() > before, "the feed goes on after a rollback");
    assert!(
        !seen
            .iter()
            .any(|e| e["game_id"] == held.as_str() && e["seq"] == version + 2),
        "the rolled-back event never appears"
    );
    let mut keys: Vec<(String, i64)> = seen
        .iter()
        .map(|e| {
            (
                e["game_id"].as_str().unwrap().to_owned(),
                e["seq"].as_i64().unwrap(),
            )
        })
        .collect();
    keys.sort();
    let n = keys.len();
    keys.dedup();
    assert_eq!(keys.len(), n, "nothing twice");
}

/// PostgreSQL: a restore into a new cluster starts transaction ids low again, below the
/// restored events' keys. At start the server notices and orders new events after the
/// restored ones (and lets the restored games take appends again).
#[test]
fn after_a_restore_new_events_come_after_the_restored_ones() {
    let server = TestServer::start(Backend::Postgres);
    let api = server.client();
    let ada = analyst(&server, &api);
    let host = api.guest("host");
    let game = seated_game(&api, &host, &[], 1, &json!({}));
    // What a restore looks like: the stored keys are far above the cluster's ids.
    sql(
        &server,
        "ALTER TABLE events DISABLE TRIGGER events_append_only",
    );
    sql(
        &server,
        &format!("UPDATE events SET tx_id = tx_id + 1000000000000 WHERE game_id = '{game}'"),
    );
    sql(
        &server,
        "ALTER TABLE events ENABLE TRIGGER events_append_only",
    );
    sql(
        &server,
        &format!("UPDATE games SET last_tx = last_tx + 1000000000000 WHERE id = '{game}'"),
    );
    let server = server.restart();
    let api = server.client();
    let ada = Player {
        token: api
            .post(
                "/v1/tokens",
                None,
                &json!({ "name": "ada", "password": "correct horse" }),
            )
            .body["access_token"]
            .as_str()
            .unwrap()
            .into(),
        ..ada
    };
    let restored = api.view(&host, &game)["version"].as_i64().unwrap();
    play_turns(&api, &host, &game, 1);
    settle(&api);
    let (mut after, mut all) = (0, Vec::new());
    read_feed(&api, &ada, &mut after, &mut all);
    let seqs: Vec<i64> = all
        .iter()
        .filter(|e| e["game_id"] == game.as_str())
        .map(|e| e["seq"].as_i64().unwrap())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "once each, in order: {seqs:?}"
    );
    assert!(
        seqs.iter().any(|s| *s <= restored) && seqs.iter().any(|s| *s > restored),
        "the restored events and the new ones: {seqs:?}"
    );
}
