//! The player platform: ratings per ruleset as a projection of the event log (rebuilt to
//! the same numbers), leaderboards, profiles and histories that keep private games private.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::both;
use crate::support::{
    Api, Backend, Player, TestDb, TestServer, play_randomly, run_command, sql, start_game,
};

/// The history of `player` once the ratings projection has folded `games` finished games
/// of theirs (as the player sees their own history): each look first brings the projection
/// up to date (`POST /test/ratings`). On SQLite the first look finds them; on PostgreSQL
/// the projection's feed stops before the oldest transaction still running in the cluster
/// (another test's), so it may look again (at most 30 s).
fn wait_for_history(api: &Api, player: &Player, games: usize) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let caught_up = api.post("/test/ratings", None, &json!({}));
        assert_eq!(caught_up.status, 200, "{}", caught_up.text);
        let r = api.get(
            &format!("/v1/players/{}/games", player.id),
            Some(&player.token),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        if r.body["items"].as_array().unwrap().len() >= games {
            return r.body;
        }
        assert!(
            Instant::now() < deadline,
            "the projection did not catch up: {}",
            r.text
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// A finished one-round 6-nimmt game of `people` (and `bots`), public or private.
fn finished_game(api: &Api, people: &[Player], bots: &[&str], public: bool, seed: u64) -> Value {
    let players = people.len() + bots.len();
    let game = start_game(
        api,
        people,
        &json!({ "ruleset": "6-nimmt", "players": players, "public": public,
                 "options": { "end": { "rounds": 1 } } }),
        bots,
    );
    play_randomly(api, people, &game, seed)
}

fn places_of(view: &Value) -> Vec<i64> {
    let totals: Vec<i64> = view["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_i64().unwrap())
        .collect();
    totals
        .iter()
        .map(|t| 1 + i64::try_from(totals.iter().filter(|o| *o < t).count()).unwrap())
        .collect()
}

fn public_games_of_registered_people_are_rated(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.account("anna");
    let ben = api.account("ben");
    let view = finished_game(&api, &[anna.clone(), ben.clone()], &["random"], true, 3);
    let places = places_of(&view);
    let history = wait_for_history(&api, &anna, 1);
    let item = &history["items"][0];
    assert_eq!(item["game_id"], view["id"]);
    assert_eq!(item["rated"], true);
    assert_eq!(item["players"], 3, "the bot's seat counts as a place");
    assert_eq!(item["place"], places[0]);
    assert_eq!(item["total"], view["totals"][0]);

    let board = api.get("/v1/rulesets/6-nimmt/leaderboard", Some(&anna.token));
    assert_eq!(board.status, 200, "{}", board.text);
    let items = board.body["items"].as_array().unwrap();
    assert_eq!(
        items.len(),
        2,
        "two registered people, no bot: {}",
        board.text
    );
    assert_eq!(items[0]["rank"], 1);
    for line in items {
        assert_eq!(line["games"], 1);
        assert_eq!(line["provisional"], true);
        let (mu, sigma, rating) = (
            line["mu"].as_f64().unwrap(),
            line["sigma"].as_f64().unwrap(),
            line["rating"].as_f64().unwrap(),
        );
        assert!((rating - (mu - 3.0 * sigma)).abs() < 1e-9);
        assert!(sigma < 25.0 / 3.0, "a rated game lowers the uncertainty");
    }
    // The better place has the higher mu (a shared place moves both the same way).
    let mu_of = |p: &Player| {
        items
            .iter()
            .find(|l| l["player"]["id"] == p.id.as_str())
            .unwrap()["mu"]
            .as_f64()
            .unwrap()
    };
    match places[0].cmp(&places[1]) {
        std::cmp::Ordering::Less => assert!(mu_of(&anna) > mu_of(&ben)),
        std::cmp::Ordering::Greater => assert!(mu_of(&anna) < mu_of(&ben)),
        std::cmp::Ordering::Equal => assert!((mu_of(&anna) - mu_of(&ben)).abs() < 1e-9),
    }

    // The profile: figures from the one game.
    let profile = api.get(&format!("/v1/players/{}", ben.id), Some(&anna.token));
    assert_eq!(profile.status, 200, "{}", profile.text);
    assert_eq!(profile.body["name"], "ben");
    let six = &profile.body["rulesets"][0];
    assert_eq!(six["ruleset"], "6-nimmt");
    assert_eq!(six["games"], 1);
    assert_eq!(six["finished_share"], 1.0);
    let won = view["winners"].as_array().unwrap().contains(&json!(1));
    assert_eq!(six["wins"], i64::from(won));
    assert_eq!(
        six["average_penalty_per_round"].as_f64().unwrap(),
        view["totals"][1].as_f64().unwrap(),
        "one round"
    );
    assert_eq!(six["rating"]["games"], 1);
    // Unknown players and rulesets.
    api.get(
        "/v1/players/0197d6f0-0000-7000-8000-000000000000",
        Some(&anna.token),
    )
    .assert_problem(404, "not_found");
    api.get("/v1/rulesets/chess/leaderboard", Some(&anna.token))
        .assert_problem(404, "not_found");
}

fn private_games_guests_and_resignations(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.account("anna");
    let ben = api.account("ben");
    let guest = api.guest("gast");
    let outsider = api.account("otto");
    // A private game: recorded for its people, rated nowhere, invisible to others.
    let private = finished_game(&api, &[anna.clone(), ben.clone()], &[], false, 5);
    // A public game with one registered person and a guest: not rated (one registered).
    let with_guest = finished_game(&api, &[anna.clone(), guest.clone()], &[], true, 7);
    wait_for_history(&api, &anna, 2);
    let own = api.get(&format!("/v1/players/{}/games", anna.id), Some(&anna.token));
    let ids: Vec<&Value> = own.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["game_id"])
        .collect();
    assert!(ids.contains(&&private["id"]) && ids.contains(&&with_guest["id"]));
    for item in own.body["items"].as_array().unwrap() {
        assert_eq!(item["rated"], false, "{item}");
    }
    let seen = api.get(
        &format!("/v1/players/{}/games", anna.id),
        Some(&outsider.token),
    );
    let ids: Vec<&Value> = seen.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["game_id"])
        .collect();
    assert_eq!(ids, vec![&with_guest["id"]], "others see public games only");
    let profile = api.get(&format!("/v1/players/{}", anna.id), Some(&outsider.token));
    assert_eq!(profile.body["rulesets"][0]["games"], 1, "{}", profile.text);
    assert!(!profile.text.contains(private["id"].as_str().unwrap()));
    let mine = api.get(&format!("/v1/players/{}", anna.id), Some(&anna.token));
    assert_eq!(mine.body["rulesets"][0]["games"], 2);
    let board = api.get("/v1/rulesets/6-nimmt/leaderboard", Some(&anna.token));
    assert_eq!(
        board.body["items"],
        json!([]),
        "nothing was rated: {}",
        board.text
    );
    // The guest has a history too (and no rating).
    let g = api.get(&format!("/v1/players/{}", guest.id), Some(&outsider.token));
    assert_eq!(g.body["guest"], true);
    assert!(g.body["rulesets"][0]["rating"].is_null());

    // A person who resigns places last, and the game counts as not finished for them.
    let cara = api.account("cara");
    let game = start_game(
        &api,
        &[anna.clone(), ben.clone(), cara.clone()],
        &json!({ "ruleset": "6-nimmt", "players": 3, "public": true,
                 "options": { "end": { "rounds": 1 } } }),
        &[],
    );
    api.ok(&cara, &game, &json!({ "type": "resign" }));
    play_randomly(&api, &[anna.clone(), ben.clone()], &game, 11);
    let history = wait_for_history(&api, &cara, 1);
    let item = &history["items"][0];
    assert_eq!(item["resigned"], true);
    assert_eq!(item["place"], 3);
    assert_eq!(item["won"], false);
    assert_eq!(item["rated"], true);
    let profile = api.get(&format!("/v1/players/{}", cara.id), Some(&cara.token));
    assert_eq!(profile.body["rulesets"][0]["finished_share"], 0.0);
}

fn ratings_rebuild_from_the_log_to_the_same_numbers(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people: Vec<Player> = ["anna", "ben", "cara", "dora"]
        .iter()
        .map(|n| api.account(n))
        .collect();
    // Overlapping tables, so the order of the updates matters.
    let tables = [[0, 1], [1, 2], [2, 3], [0, 2], [1, 3], [0, 3]];
    for (i, t) in tables.iter().enumerate() {
        let at = [people[t[0]].clone(), people[t[1]].clone()];
        finished_game(&api, &at, &["heuristic"], true, 100 + i as u64);
    }
    for p in &people {
        wait_for_history(&api, p, 3);
    }
    let snapshot = |api: &Api| {
        let board = api
            .get("/v1/rulesets/6-nimmt/leaderboard", Some(&people[0].token))
            .body;
        let profiles: Vec<Value> = people
            .iter()
            .map(|p| {
                api.get(&format!("/v1/players/{}", p.id), Some(&p.token))
                    .body
            })
            .collect();
        let histories: Vec<Value> = people
            .iter()
            .map(|p| {
                api.get(&format!("/v1/players/{}/games", p.id), Some(&p.token))
                    .body
            })
            .collect();
        json!({ "board": board, "profiles": profiles, "histories": histories })
    };
    let before = snapshot(&api);
    assert_eq!(before["board"]["items"].as_array().unwrap().len(), 4);
    // Spoil the projection; the rebuild must compute it again, not keep it.
    sql(
        &server,
        "UPDATE ratings SET rating = 0, uncertainty = 1, score = -3, games = 99",
    );
    sql(&server, "DELETE FROM player_results");
    assert_ne!(snapshot(&api), before);
    assert!(run_command(&server, &["rebuild-ratings"]).contains("ratings rebuilt"));
    let after = snapshot(&api);
    assert_eq!(
        before, after,
        "a rebuild from the log gives exactly the same numbers"
    );
    // Rebuilds at once (operators on two replicas) beside the server's own projection: each
    // empties the results and moves the projection's checkpoint back, and none may fail on
    // the projection's row (gone, or created twice).
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| run_command(&server, &["rebuild-ratings"])))
            .collect();
        for run in runs {
            assert!(run.join().unwrap().contains("ratings rebuilt"));
        }
    });
    assert_eq!(before, snapshot(&api), "simultaneous rebuilds agree");
}

fn a_guest_who_registers_later_leaves_old_games_unrated(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.account("anna");
    let ben = api.guest("ben");
    // Played while ben was a guest: one registered person only, so unrated.
    finished_game(&api, &[anna.clone(), ben.clone()], &["heuristic"], true, 7);
    wait_for_history(&api, &anna, 1);
    let r = api.post(
        "/v1/me/register",
        Some(&ben.token),
        &json!({ "password": "password-of-ben" }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let ben = crate::support::Player {
        token: r.body["access_token"].as_str().unwrap().to_owned(),
        ..ben
    };
    // Played after ben registered: rated.
    finished_game(&api, &[anna.clone(), ben.clone()], &["heuristic"], true, 8);
    let history = wait_for_history(&api, &anna, 2);
    let rated: Vec<bool> = history["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["rated"].as_bool().unwrap())
        .collect();
    assert_eq!(rated, vec![true, false], "newest first: {history}");
    let before = api.get(&format!("/v1/players/{}/games", anna.id), Some(&anna.token));
    let board = api.get("/v1/rulesets/6-nimmt/leaderboard", Some(&anna.token));
    // A rebuild reads ben as registered only for games that finished after he registered.
    sql(&server, "DELETE FROM player_results");
    sql(&server, "DELETE FROM ratings");
    run_command(&server, &["rebuild-ratings"]);
    let after = api.get(&format!("/v1/players/{}/games", anna.id), Some(&anna.token));
    assert_eq!(before.body, after.body);
    assert_eq!(
        board.body,
        api.get("/v1/rulesets/6-nimmt/leaderboard", Some(&anna.token))
            .body
    );
}

fn a_rematch_keeps_the_people_and_their_seats(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.guest("anna");
    let ben = api.guest("ben");
    let outsider = api.guest("otto");
    // A private game with a bot, played to the end.
    let game = start_game(
        &api,
        &[anna.clone(), ben.clone()],
        &json!({ "ruleset": "6-nimmt", "players": 3, "options": { "end": { "rounds": 1 } } }),
        &["heuristic"],
    );
    let path = format!("/v1/games/{game}/rematch");
    api.post(&path, Some(&anna.token), &json!({}))
        .assert_problem(409, "game_not_finished");
    play_randomly(&api, &[anna.clone(), ben.clone()], &game, 21);
    api.post(&path, Some(&outsider.token), &json!({}))
        .assert_problem(404, "not_found");

    let first = api.post(&path, Some(&ben.token), &json!({}));
    assert_eq!(first.status, 201, "{}", first.text);
    let rematch = first.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        first.header("location").as_deref(),
        Some(format!("/v1/games/{rematch}").as_str())
    );
    let view = &first.body;
    assert_eq!(view["rematch_of"], game.as_str());
    assert_eq!(view["ruleset"], "6-nimmt");
    assert_eq!(view["options"]["end"], json!({ "rounds": 1 }));
    assert_eq!(view["public"], false, "same visibility");
    assert_eq!(
        view["seats"][0]["account_id"],
        ben.id.as_str(),
        "the caller hosts"
    );
    assert_eq!(view["seats"][1]["reserved"], true, "anna's seat is kept");
    assert!(view["seats"][1]["account_id"].is_null());
    assert_eq!(
        view["seats"][2]["strategy"], "heuristic",
        "the bot comes along"
    );
    // The finished game links to it, and a second request finds the same game.
    assert_eq!(api.view(&anna, &game)["rematch"], rematch.as_str());
    let again = api.post(&path, Some(&anna.token), &json!({}));
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body["id"], rematch.as_str());
    // Anna may see and join it without the invite code; an outsider may not.
    api.get(&format!("/v1/games/{rematch}"), Some(&outsider.token))
        .assert_problem(404, "not_found");
    let r = api.command(&outsider, &rematch, &json!({ "type": "join" }));
    r.assert_problem(404, "not_found");
    let joined = api.ok(&anna, &rematch, &json!({ "type": "join" }));
    assert_eq!(joined["seats"][1]["account_id"], anna.id.as_str());
    let started = api.ok(&ben, &rematch, &json!({ "type": "start" }));
    assert_eq!(started["status"], "active");
    assert_ne!(
        started["fairness"]["commitment"],
        api.view(&anna, &game)["fairness"]["commitment"],
        "a fresh seed"
    );
}

fn a_rematch_keeps_no_seat_for_a_deleted_account(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.guest("anna");
    let ben = api.guest("ben");
    let cara = api.guest("cara");
    let game = start_game(
        &api,
        &[anna.clone(), ben.clone(), cara.clone()],
        &json!({ "ruleset": "6-nimmt", "players": 3, "public": true,
                 "options": { "end": { "rounds": 1 } } }),
        &[],
    );
    play_randomly(&api, &[anna.clone(), ben.clone(), cara.clone()], &game, 41);
    let r = api
        .http
        .delete(api.url("/v1/me"))
        .bearer_auth(&ben.token)
        .json(&json!({}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let r = api.post(
        &format!("/v1/games/{game}/rematch"),
        Some(&anna.token),
        &json!({}),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let rematch = r.body["id"].as_str().unwrap().to_owned();
    let seats = r.body["seats"].as_array().unwrap();
    // Seat 1 was ben's, seat 2 cara's: only cara's is kept.
    assert_ne!(seats[1]["reserved"], true, "{}", r.text);
    assert_eq!(seats[2]["reserved"], true, "{}", r.text);
    let dora = api.guest("dora");
    api.ok(&dora, &rematch, &json!({ "type": "join" }));
}

fn kept_seats_are_released_after_the_window(backend: Backend) {
    let server = crate::support::TestServer::start_with_env(
        crate::support::TestDb::new(backend),
        backend,
        &[("REMATCH_WINDOW_SECONDS", "60")],
    );
    let api = server.client();
    let anna = api.guest("anna");
    let ben = api.guest("ben");
    let cara = api.guest("cara");
    let listed_with_a_free_seat = |game: &String| -> bool {
        api.listed(&cara, "status=lobby&free_seats=1")
            .contains(game)
    };
    let game = start_game(
        &api,
        &[anna.clone(), ben.clone()],
        &json!({ "ruleset": "6-nimmt", "players": 2, "public": true,
                 "options": { "end": { "rounds": 1 } } }),
        &[],
    );
    play_randomly(&api, &[anna.clone(), ben.clone()], &game, 31);
    let rematch = api.post(
        &format!("/v1/games/{game}/rematch"),
        Some(&anna.token),
        &json!({}),
    );
    let rematch = rematch.body["id"].as_str().unwrap().to_owned();
    // While the seat is kept, a stranger cannot take it, and the lobby does not offer it.
    let r = api.command(&cara, &rematch, &json!({ "type": "join" }));
    r.assert_problem(422, "game_full");
    assert!(
        !listed_with_a_free_seat(&rematch),
        "a kept seat is listed as free"
    );
    // Released when the clock's move answers (by its sweeper's pass, or by the sweeper's
    // own thread just before it).
    server.advance_clock(61);
    assert_ne!(
        api.view(&anna, &rematch)["seats"][1]["reserved"],
        true,
        "the kept seat was still reserved after the window"
    );
    let events = api.events(&anna, &rematch);
    assert!(events.iter().any(|e| e["type"] == "reservations_released"));
    assert!(listed_with_a_free_seat(&rematch));
    api.ok(&cara, &rematch, &json!({ "type": "join" }));
}

fn simultaneous_quick_plays_fill_one_table_before_the_next(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people: Vec<Player> = (0..20).map(|i| api.guest(&format!("quick{i}"))).collect();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(people.len()));
    let handles: Vec<_> = people
        .iter()
        .cloned()
        .map(|p| {
            let (api, barrier) = (api.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let r = api.post(
                    "/v1/games/quick",
                    Some(&p.token),
                    &json!({ "ruleset": "6-nimmt", "players": 4 }),
                );
                assert!(r.status == 200 || r.status == 201, "{}", r.text);
                r.body["id"].as_str().unwrap().to_owned()
            })
        })
        .collect();
    let mut tables: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    tables.sort();
    tables.dedup();
    assert_eq!(tables.len(), 5, "20 callers, tables of 4: {tables:?}");
    for table in &tables {
        let view = api.view(&people[0], table);
        assert_eq!(
            view["status"], "active",
            "a full quick table starts by itself"
        );
        assert_eq!(view["auto_start"], true);
        let seated = view["seats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["account_id"].is_string())
            .count();
        assert_eq!(seated, 4);
    }
    // A caller already waiting at a table gets that table again; the lobby list filters by
    // free seats.
    let me = api.guest("lonely");
    let first = api.post(
        "/v1/games/quick",
        Some(&me.token),
        &json!({ "ruleset": "11-nimmt" }),
    );
    assert_eq!(first.status, 201, "{}", first.text);
    let again = api.post(
        "/v1/games/quick",
        Some(&me.token),
        &json!({ "ruleset": "11-nimmt" }),
    );
    assert_eq!(again.status, 200);
    assert_eq!(again.body["id"], first.body["id"]);
    let open = api.get(
        "/v1/games?status=lobby&free_seats=1",
        Some(&people[0].token),
    );
    let ids: Vec<&Value> = open.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["id"])
        .collect();
    assert_eq!(ids, vec![&first.body["id"]]);
    assert_eq!(open.body["items"][0]["free_seats"], 3);
    let none = api.get(
        "/v1/games?status=lobby&free_seats=4",
        Some(&people[0].token),
    );
    assert_eq!(none.body["items"], json!([]));
    api.post(
        "/v1/games/quick",
        Some(&me.token),
        &json!({ "ruleset": "x-nimmt", "players": 7 }),
    )
    .assert_problem(422, "invalid_options");
}

/// 100 people press "quick play" at the same moment: none is refused, every one is seated,
/// and the tables are filled one after the other (all full but the newest). Waiting one's
/// turn holds no database connection, so a queue longer than the pool is no refusal. Prints
/// the refusals and the callers' latencies (run with `--nocapture`); times are not asserted.
fn a_hundred_simultaneous_quick_plays_are_all_seated_in_order(backend: Backend) {
    const CALLERS: usize = 100;
    const SEATS: usize = 3;
    // A pool wait shorter than the whole queue takes (about a second here): a caller that
    // held a connection while waiting for its turn would be refused `database_unavailable`.
    let server = TestServer::start_with_env(
        TestDb::new(backend),
        backend,
        &[("DATABASE_POOL_TIMEOUT_MS", "500")],
    );
    let api = server.client();
    let people: Vec<Player> = (0..CALLERS)
        .map(|i| api.guest(&format!("rush{i}")))
        .collect();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(CALLERS));
    let handles: Vec<_> = people
        .iter()
        .cloned()
        .map(|p| {
            let (api, barrier) = (api.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let started = Instant::now();
                let r = api.post(
                    "/v1/games/quick",
                    Some(&p.token),
                    &json!({ "ruleset": "6-nimmt", "players": SEATS }),
                );
                (p, r, started.elapsed())
            })
        })
        .collect();
    let answers: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let mut refused = std::collections::BTreeMap::<String, usize>::new();
    for (_, r, _) in &answers {
        if r.status != 200 && r.status != 201 {
            *refused
                .entry(format!("{} {}", r.status, r.body["code"]))
                .or_default() += 1;
        }
    }
    let mut times: Vec<Duration> = answers.iter().map(|(_, _, t)| *t).collect();
    times.sort();
    let at = |q: usize| times[(q * CALLERS).div_ceil(100).max(1) - 1].as_millis();
    println!(
        "quick play, {CALLERS} simultaneous callers on {backend:?}: {} refused, \
         latency p50 {} ms, p99 {} ms, max {} ms",
        refused.values().sum::<usize>(),
        at(50),
        at(99),
        times[CALLERS - 1].as_millis()
    );
    assert!(refused.is_empty(), "refused: {refused:?}");
    for (p, r, _) in &answers {
        assert!(
            r.body["you"]["seat"].is_u64(),
            "{} is not seated: {}",
            p.name,
            r.text
        );
    }
    // Game ids are UUIDv7: their order is the order the tables were opened in.
    let mut tables: Vec<String> = answers
        .iter()
        .map(|(_, r, _)| r.body["id"].as_str().unwrap().to_owned())
        .collect();
    tables.sort();
    tables.dedup();
    assert_eq!(tables.len(), CALLERS.div_ceil(SEATS), "tables: {tables:?}");
    let mut seated = std::collections::BTreeSet::new();
    for (i, table) in tables.iter().enumerate() {
        let view = api.view(&people[0], table);
        let here: Vec<String> = view["seats"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["account_id"].as_str().map(str::to_owned))
            .collect();
        let last = i + 1 == tables.len();
        let expected = if last { CALLERS - SEATS * i } else { SEATS };
        assert_eq!(
            here.len(),
            expected,
            "table {i} of {}: a newer table was opened before it was full",
            tables.len()
        );
        assert_eq!(
            view["status"],
            if here.len() == SEATS {
                "active"
            } else {
                "lobby"
            }
        );
        seated.extend(here);
    }
    let callers: std::collections::BTreeSet<String> = people.iter().map(|p| p.id.clone()).collect();
    assert_eq!(seated, callers, "every caller sits at exactly one table");
}

both!(
    a_guest_who_registers_later_leaves_old_games_unrated,
    a_rematch_keeps_the_people_and_their_seats,
    a_rematch_keeps_no_seat_for_a_deleted_account,
    kept_seats_are_released_after_the_window,
    simultaneous_quick_plays_fill_one_table_before_the_next,
    a_hundred_simultaneous_quick_plays_are_all_seated_in_order,
    public_games_of_registered_people_are_rated,
    private_games_guests_and_resignations,
    ratings_rebuild_from_the_log_to_the_same_numbers,
);

/// The test clock is there only when asked for: without `STAMMTISCH_TEST_CLOCK` the route
/// is a `404` like any unknown path and the clock stays the system's; with it, the route
/// moves the clock, and it is never in the OpenAPI document either way.
#[test]
fn the_test_clock_is_off_unless_asked_for() {
    let server = TestServer::start_with_env(
        TestDb::new(Backend::Sqlite),
        Backend::Sqlite,
        &[("STAMMTISCH_TEST_CLOCK", "")],
    );
    let api = server.client();
    let r = api.post("/test/clock", None, &json!({ "advance_seconds": 3600 }));
    r.assert_problem(404, "not_found");
    for path in [
        "/test/outbox",
        "/test/outbox?wait=false",
        "/test/outbox?wait=perhaps",
        "/test/ratings",
    ] {
        api.post(path, None, &json!({}))
            .assert_problem(404, "not_found");
    }
    assert!(
        !server.log_text().contains("STAMMTISCH_TEST_CLOCK is on"),
        "a server without the setting warns of a test clock"
    );
    let doc = api.get("/openapi.json", None);
    assert_eq!(doc.status, 200);
    assert!(!doc.text.contains("/test/"), "a test route is documented");

    let server = TestServer::start(Backend::Sqlite);
    assert!(
        server.log_text().contains("STAMMTISCH_TEST_CLOCK is on"),
        "a server with a test clock does not say so"
    );
    let r = server
        .client()
        .post("/test/clock", None, &json!({ "advance_seconds": 3600 }));
    assert_eq!(r.status, 200, "{}", r.text);
    let now = chrono::DateTime::parse_from_rfc3339(r.body["now"].as_str().unwrap()).unwrap();
    let ahead = now.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(
        ahead > chrono::TimeDelta::minutes(59) && ahead < chrono::TimeDelta::minutes(61),
        "the clock is {ahead} ahead"
    );
    let settled = server.settle_outbox();
    assert_eq!(settled["claimed"], 0, "nothing was due: {settled}");
    assert_eq!(
        server.claim_outbox_once(),
        (0, 0),
        "nothing was due or in flight"
    );
    let caught_up = server.client().post("/test/ratings", None, &json!({}));
    assert_eq!(caught_up.status, 200, "{}", caught_up.text);
    assert!(caught_up.body["read"].is_u64(), "{}", caught_up.text);
    server
        .client()
        .post("/test/outbox?wait=perhaps", None, &json!({}))
        .assert_problem(422, "validation_failed");
}
