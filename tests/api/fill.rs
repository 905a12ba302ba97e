//! `stammtisch fill` (the data-volume benchmark's history): its games are real games — the
//! server replays each stream to the state its index claims, the inbox asks the persons
//! the rules ask, a running game takes the next move — its accounts sign in, ratings
//! and profiles come from the log, and its time spreads over the year.

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, TestDb, TestServer, run_command};

/// Signs in a filled account.
fn sign_in(api: &Api, name: &str) -> Player {
    let r = api.post(
        "/v1/tokens",
        None,
        &json!({ "name": name, "password": "fill-password" }),
    );
    assert_eq!(r.status, 200, "{name}: {}", r.text);
    let token = r.body["access_token"].as_str().unwrap().to_owned();
    let me = api.get("/v1/me", Some(token.as_str()));
    Player {
        id: me.body["id"].as_str().unwrap().to_owned(),
        name: name.to_owned(),
        token,
    }
}

fn a_filled_history_is_one_the_server_plays_on(backend: Backend) {
    let server = TestServer::start_on(TestDb::new(backend), backend);
    let api = server.client();
    let out = run_command(
        &server,
        &[
            "fill",
            "--games",
            "80",
            "--accounts",
            "24",
            "--seed",
            "7",
            "--batch",
            "16",
        ],
    );
    // "filled 80 games (F finished, A active, L lobby) with E events, 24 accounts, …"
    let numbers: Vec<u64> = out
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers[0], 80, "{out}");
    let (finished, active, lobby, events) = (numbers[1], numbers[2], numbers[3], numbers[4]);
    assert_eq!(finished + active + lobby, 80, "{out}");
    assert!(finished > 50 && active > 0, "{out}");
    assert!(events > 80 * 20, "{out}");
    assert!(out.contains(" 24 accounts"), "{out}");
    let rebuilt = run_command(&server, &["rebuild-ratings"]);
    assert!(rebuilt.starts_with("ratings rebuilt from"), "{rebuilt}");

    let mut seen_statuses = std::collections::BTreeMap::new();
    let mut rulesets = std::collections::BTreeSet::new();
    let mut inbox_games = 0;
    let mut moved_on = false;
    let mut profiles_with_games = 0;
    for n in 0..24 {
        let me = sign_in(&api, &format!("fill-7-{n}"));
        let (token, id) = (me.token.as_str(), me.id.as_str());
        // Every game of the account, as the index lists it, against its replayed view.
        let mine = api.get("/v1/games?mine=true&limit=100", Some(token));
        assert_eq!(mine.status, 200, "{}", mine.text);
        for summary in mine.body["items"].as_array().unwrap() {
            let game = summary["id"].as_str().unwrap();
            let view = api.view(&me, game);
            assert_eq!(view["status"], summary["status"], "{game}: {view}");
            assert_eq!(view["version"], summary["version"], "{game}");
            *seen_statuses
                .entry(summary["status"].as_str().unwrap().to_owned())
                .or_insert(0) += 1;
            rulesets.insert(summary["ruleset"].as_str().unwrap().to_owned());
            let asked = view["awaiting"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| Some(a["seat"].as_i64().unwrap()) == view["you"]["seat"].as_i64());
            assert_eq!(
                summary["your_turn"].as_bool().unwrap(),
                asked && view["status"] == "active",
                "{game}: the index and the replay disagree on whose turn it is: {view}"
            );
        }
        // The inbox: games the rules ask this person to act in; the first one found takes
        // a legal move.
        let inbox = api.get("/v1/games?awaiting=me", Some(token));
        assert_eq!(inbox.status, 200, "{}", inbox.text);
        for summary in inbox.body["items"].as_array().unwrap() {
            inbox_games += 1;
            let game = summary["id"].as_str().unwrap();
            if !moved_on {
                let view = api.view(&me, game);
                let legal: Vec<&Value> = view["legal"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|c| c["type"] != "resign")
                    .collect();
                let r = api.post(&format!("/v1/games/{game}/commands"), Some(token), legal[0]);
                assert_eq!(r.status, 200, "{game}: {}", r.text);
                assert!(r.body["version"].as_i64() > view["version"].as_i64());
                moved_on = true;
            }
        }
        let profile = api.get(&format!("/v1/players/{id}"), Some(token));
        assert_eq!(profile.status, 200, "{}", profile.text);
        let played: i64 = profile.body["rulesets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["games"].as_i64().unwrap())
            .sum();
        if played > 0 {
            profiles_with_games += 1;
        }
    }
    assert!(
        seen_statuses.contains_key("finished") && seen_statuses.contains_key("active"),
        "{seen_statuses:?}"
    );
    assert_eq!(rulesets.len(), 4, "every ruleset is played: {rulesets:?}");
    assert!(inbox_games > 0, "some running game waits for a person");
    assert!(moved_on);
    assert!(profiles_with_games >= 12, "{profiles_with_games} of 24");

    // The year: the analysts' feed starts about a year ago and ends in the last days.
    run_command(&server, &["grant-role", "fill-7-3", "analyst"]);
    let analyst = sign_in(&api, "fill-7-3").token;
    let first = api.get("/v1/analytics/events?limit=1", Some(analyst.as_str()));
    assert_eq!(first.status, 200, "{}", first.text);
    let at = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v["at"].as_str().unwrap())
            .unwrap()
            .with_timezone(&chrono::Utc)
    };
    let now = chrono::Utc::now();
    let oldest = at(&first.body["items"][0]);
    assert!(
        now - oldest > chrono::Duration::days(360),
        "the first event is from {oldest}"
    );
    let mut after = String::new();
    let mut newest = oldest;
    loop {
        let page = api.get(
            &format!("/v1/analytics/events?limit=1000{after}"),
            Some(analyst.as_str()),
        );
        assert_eq!(page.status, 200, "{}", page.text);
        for item in page.body["items"].as_array().unwrap() {
            newest = newest.max(at(item));
        }
        match page.body["next_cursor"].as_str() {
            Some(next) => after = format!("&after={next}"),
            None => break,
        }
    }
    assert!(
        now - newest < chrono::Duration::days(3),
        "the newest event is from {newest}"
    );
}

both!(a_filled_history_is_one_the_server_plays_on);
