//! Vacation (issue 28): the hours of a year, going away and coming back, guests without.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Player, TestDb, TestServer, cards};

fn at(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn guests_have_no_vacation(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let guest = api.guest("wanderer");
    api.get("/v1/account/vacation", Some(&guest.token))
        .assert_problem(403, "guest_has_no_vacation");
    let later = at(api.server_now() + Duration::hours(2));
    api.put(
        "/v1/account/vacation",
        &guest.token,
        &json!({ "away_until": later }),
    )
    .assert_problem(403, "guest_has_no_vacation");
    assert_eq!(api.get("/v1/account/vacation", None).status, 401);
}

fn going_away_spends_whole_hours_and_coming_back_early_refunds_the_unused(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let me = api.account("traveller");
    let path = "/v1/account/vacation";
    let fresh = api.get(path, Some(&me.token));
    assert_eq!(fresh.status, 200, "{}", fresh.text);
    assert_eq!(
        fresh.body,
        json!({ "days_per_year": 14, "hours_left": 336, "away_until": null })
    );

    // Bad input changes nothing.
    let now = api.server_now();
    for bad in [
        json!({}),
        json!({ "away_until": "tomorrow" }),
        json!({ "away_until": 5 }),
        json!({ "away_until": at(now - Duration::hours(1)) }),
        json!({ "away_until": null, "extra": 1 }),
    ] {
        let r = api.put(path, &me.token, &bad);
        assert_eq!(r.status, 422, "{bad}: {}", r.text);
        assert_eq!(r.body["code"], "validation_failed", "{bad}");
    }
    for far in [
        "9999-12-31T23:59:59.999Z".to_owned(),
        at(now + Duration::hours(337)),
    ] {
        api.put(path, &me.token, &json!({ "away_until": far }))
            .assert_problem(422, "not_enough_vacation");
    }
    assert_eq!(api.get(path, Some(&me.token)).body, fresh.body);

    // 2½ hours ahead costs 3 whole hours up front.
    let until = now + Duration::minutes(150);
    let away = api.put(path, &me.token, &json!({ "away_until": at(until) }));
    assert_eq!(away.status, 200, "{}", away.text);
    assert_eq!(away.body["hours_left"], 333);
    let shown: DateTime<Utc> = away.body["away_until"].as_str().unwrap().parse().unwrap();
    assert_eq!(shown, until);
    // Back after an hour: the 1 whole hour not used (of 1½ left) comes back.
    server.advance_clock(3600);
    let back = api.put(path, &me.token, &json!({ "away_until": null }));
    assert_eq!(back.status, 200, "{}", back.text);
    assert_eq!(back.body["hours_left"], 334);
    assert!(back.body["away_until"].is_null());
    // Coming back when not away changes nothing.
    let again = api.put(path, &me.token, &json!({ "away_until": null }));
    assert_eq!(again.body["hours_left"], 334);

    // Going away again and letting it run out: nothing comes back, the absence ends.
    let until = api.server_now() + Duration::minutes(30);
    let away = api.put(path, &me.token, &json!({ "away_until": at(until) }));
    assert_eq!(away.body["hours_left"], 333);
    // Replacing the absence by a longer one: the old one's unused hours (none whole) stay
    // spent, the new one costs its own.
    let longer = api.server_now() + Duration::minutes(90);
    let moved = api.put(path, &me.token, &json!({ "away_until": at(longer) }));
    assert_eq!(moved.body["hours_left"], 331);
    server.advance_clock(2 * 3600);
    let over = api.get(path, Some(&me.token));
    assert!(over.body["away_until"].is_null(), "{}", over.text);
    assert_eq!(over.body["hours_left"], 331);
}

fn the_days_per_year_are_a_setting(backend: Backend) {
    let server = TestServer::start_with_env(
        TestDb::new(backend),
        backend,
        &[("STAMMTISCH_VACATION_DAYS", "1")],
    );
    let api = server.client();
    let me = api.account("shortleave");
    let path = "/v1/account/vacation";
    let r = api.get(path, Some(&me.token));
    assert_eq!(r.body["days_per_year"], 1);
    assert_eq!(r.body["hours_left"], 24);
    let now = api.server_now();
    api.put(
        path,
        &me.token,
        &json!({ "away_until": at(now + Duration::hours(25)) }),
    )
    .assert_problem(422, "not_enough_vacation");
    let r = api.put(
        path,
        &me.token,
        &json!({ "away_until": at(now + Duration::hours(24)) }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["hours_left"], 0);
}

/// A correspondence time control: `initial` seconds, no increment.
fn correspondence(initial: u32, vacation: bool) -> Value {
    json!({ "kind": "correspondence", "initial_seconds": initial, "increment_seconds": 0,
            "vacation": vacation })
}

/// A started 2-player game of one round between `host` and `other` with time control
/// `tc`, in which `other` has chosen its card: only `host`'s clock runs.
fn only_host_runs(api: &Api, host: &Player, other: &Player, tc: &Value) -> String {
    let body = json!({ "ruleset": "6-nimmt", "players": 2, "time_control": tc,
                       "options": { "end": { "rounds": 1 } } });
    let id = api.create_game(host, &body)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.join(other, &id);
    api.ok(host, &id, &json!({ "type": "start" }));
    let card = cards(&api.view(other, &id)["you"]["hand"])[0];
    api.ok(other, &id, &json!({ "type": "play_card", "card": card }));
    let view = api.view(host, &id);
    assert_eq!(view["clocks"][0]["running"], true, "{view}");
    assert_eq!(view["clocks"][1]["running"], false, "{view}");
    id
}

fn events_of(api: &Api, p: &Player, game: &str, kind: &str) -> Vec<Value> {
    api.events(p, game)
        .into_iter()
        .filter(|e| e["type"] == kind)
        .map(|e| e["data"].clone())
        .collect()
}

/// `game`'s events of `kind` after `advance_clock`, whose sweeper's pass has acted by the
/// time it returns: there must be at least `n` at once.
fn events_after_sweep(api: &Api, p: &Player, game: &str, kind: &str, n: usize) -> Vec<Value> {
    let found = events_of(api, p, game, kind);
    assert!(
        found.len() >= n,
        "{n} {kind} events expected when the sweeper's pass returned: {found:?}"
    );
    found
}

fn hours_left(api: &Api, p: &Player) -> u64 {
    let r = api.get("/v1/account/vacation", Some(&p.token));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["hours_left"].as_u64().unwrap()
}

fn vacation_is_spent_hour_by_hour_before_the_clock_runs_out(backend: Backend) {
    let server = TestServer::start_with_env(
        TestDb::new(backend),
        backend,
        // Tokens outlive the day the test moves the clock on.
        &[
            ("STAMMTISCH_VACATION_DAYS", "1"),
            ("TOKEN_TTL_SECONDS", "604800"),
        ],
    );
    let api = server.client();
    let anna = api.account("anna");
    let bert = api.account("bert");
    // 21 of anna's 24 hours go on an absence that ends before the game.
    let until = api.server_now() + Duration::hours(21);
    let r = api.put(
        "/v1/account/vacation",
        &anna.token,
        &json!({ "away_until": at(until) }),
    );
    assert_eq!(r.body["hours_left"], 3, "{}", r.text);
    server.advance_clock(21 * 3600 + 1);
    let game = only_host_runs(&api, &anna, &bert, &correspondence(3600, true));

    for spent in 1..=3_usize {
        server.advance_clock(3600);
        let hours = events_after_sweep(&api, &bert, &game, "vacation_spent", spent);
        assert_eq!(hours.len(), spent, "one hour per run-out: {hours:?}");
        assert_eq!(hours[spent - 1], json!({ "seat": 0, "hours": 1 }));
        assert_eq!(hours_left(&api, &anna), 3 - spent as u64);
        let view = api.view(&bert, &game);
        assert_eq!(view["clocks"][0]["running"], true, "{view}");
        let bank = view["clocks"][0]["remaining_ms"].as_i64().unwrap();
        assert!(
            bank > 0 && bank <= 3_600_000,
            "the bank holds the hour: {bank}"
        );
        assert!(events_of(&api, &bert, &game, "clock_ran_out").is_empty());
    }
    // No hour left: the clock runs out, and the server moves for anna.
    server.advance_clock(3600);
    let out = events_after_sweep(&api, &bert, &game, "clock_ran_out", 1);
    assert_eq!(out[0], json!({ "seat": 0, "timeouts": 1 }));
    assert_eq!(events_of(&api, &bert, &game, "vacation_spent").len(), 3);
    assert_eq!(hours_left(&api, &anna), 0);
    let by_clock: Vec<Value> = api
        .events(&bert, &game)
        .into_iter()
        .filter(|e| e["data"]["cause"] == "clock")
        .collect();
    assert!(!by_clock.is_empty(), "the server moved for anna");
}

fn a_flag_found_fallen_late_spends_the_hours_since(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.account("anna");
    let bert = api.account("bert");
    let game = only_host_runs(&api, &anna, &bert, &correspondence(3600, true));
    // The flag fell 2½ hours before the server looks: 3 hours cover that and leave ½ hour.
    server.advance_clock(3600 + 9000);
    let spent = events_after_sweep(&api, &bert, &game, "vacation_spent", 1);
    assert_eq!(spent, vec![json!({ "seat": 0, "hours": 3 })]);
    assert_eq!(hours_left(&api, &anna), 333);
    let view = api.view(&bert, &game);
    let bank = view["clocks"][0]["remaining_ms"].as_i64().unwrap();
    assert!(
        bank > 1_700_000 && bank <= 1_800_000,
        "half an hour is left: {bank}"
    );
    assert!(events_of(&api, &bert, &game, "clock_ran_out").is_empty());
}

fn going_away_stops_the_clock_until_the_absence_ends(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.account("anna");
    let bert = api.account("bert");
    let game = only_host_runs(&api, &anna, &bert, &correspondence(7200, true));
    let before = events_of(&api, &bert, &game, "clocks_set").len();

    let until = api.server_now() + Duration::hours(3);
    let r = api.put(
        "/v1/account/vacation",
        &anna.token,
        &json!({ "away_until": at(until) }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["hours_left"], 333);
    let sets = events_of(&api, &bert, &game, "clocks_set");
    assert_eq!(sets.len(), before + 1, "one clocks_set for the absence");
    let away = sets.last().unwrap().clone();
    assert_eq!(away["clocks"][0]["running"], false, "{away}");
    let shown: DateTime<Utc> = away["clocks"][0]["away_until"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(shown, until);
    let bank = away["clocks"][0]["remaining_ms"].as_i64().unwrap();
    assert!(bank > 7_000_000 && bank <= 7_200_000, "{bank}");
    let view = api.view(&bert, &game);
    assert_eq!(
        view["seats"][0]["deadline_at"]
            .as_str()
            .unwrap()
            .parse::<DateTime<Utc>>()
            .unwrap(),
        until,
        "the sweeper wakes the game when the absence ends"
    );

    // Two hours on (the bank would have been nearly gone): the clock stood still.
    server.advance_clock(2 * 3600);
    let view = api.view(&bert, &game);
    assert_eq!(view["clocks"][0]["remaining_ms"].as_i64().unwrap(), bank);
    // The absence ends: the clock runs again with the same bank.
    server.advance_clock(3600 + 1);
    let sets = events_after_sweep(&api, &bert, &game, "clocks_set", before + 2);
    let back = &sets[before + 1];
    assert_eq!(back["clocks"][0]["running"], true, "{back}");
    assert!(back["clocks"][0].get("away_until").is_none(), "{back}");
    assert_eq!(back["clocks"][0]["remaining_ms"].as_i64().unwrap(), bank);
    assert!(events_of(&api, &bert, &game, "clock_ran_out").is_empty());
    assert!(events_of(&api, &bert, &game, "vacation_spent").is_empty());

    // Away again, and back early: the clock restarts at once, unused hours come back.
    let until = api.server_now() + Duration::minutes(270);
    let r = api.put(
        "/v1/account/vacation",
        &anna.token,
        &json!({ "away_until": at(until) }),
    );
    assert_eq!(r.body["hours_left"], 328);
    let r = api.put(
        "/v1/account/vacation",
        &anna.token,
        &json!({ "away_until": null }),
    );
    assert_eq!(r.body["hours_left"], 332);
    let sets = events_of(&api, &bert, &game, "clocks_set");
    assert_eq!(sets.len(), before + 4, "{sets:?}");
    assert_eq!(sets[before + 2]["clocks"][0]["running"], false);
    assert_eq!(sets[before + 3]["clocks"][0]["running"], true);
    assert!(sets[before + 3]["clocks"][0].get("away_until").is_none());
}

fn a_game_started_while_away_stops_when_the_flag_falls(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.account("anna");
    let bert = api.account("bert");
    let until = api.server_now() + Duration::hours(3);
    let r = api.put(
        "/v1/account/vacation",
        &anna.token,
        &json!({ "away_until": at(until) }),
    );
    assert_eq!(r.body["hours_left"], 333, "{}", r.text);
    // The game starts while anna is away: its clock runs until the flag falls …
    let game = only_host_runs(&api, &anna, &bert, &correspondence(3600, true));
    server.advance_clock(3600 + 1);
    let sets = events_of(&api, &bert, &game, "clocks_set");
    let stopped = sets.last().unwrap().clone();
    assert!(
        stopped["clocks"][0].get("away_until").is_some(),
        "the clock did not stop: {sets:?}"
    );
    // … and then stops until the absence ends: no run-out, no hour spent.
    assert_eq!(stopped["clocks"][0]["running"], false);
    let shown: DateTime<Utc> = stopped["clocks"][0]["away_until"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(shown, until);
    assert!(events_of(&api, &bert, &game, "clock_ran_out").is_empty());
    assert!(events_of(&api, &bert, &game, "vacation_spent").is_empty());
    assert_eq!(hours_left(&api, &anna), 333);
    // Back: the clock runs again at zero, and an hour of vacation is spent for it.
    server.advance_clock(2 * 3600);
    let spent = events_after_sweep(&api, &bert, &game, "vacation_spent", 1);
    assert_eq!(spent[0], json!({ "seat": 0, "hours": 1 }));
    assert_eq!(hours_left(&api, &anna), 332);
    assert!(events_of(&api, &bert, &game, "clock_ran_out").is_empty());
}

fn no_vacation_in_games_without_it_nor_for_guests(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let anna = api.account("anna");
    let gus = api.guest("gus");
    let bert = api.account("bert");
    let strict = only_host_runs(&api, &anna, &bert, &correspondence(3600, false));
    let guests = only_host_runs(&api, &gus, &bert, &correspondence(3600, true));
    let sets = events_of(&api, &bert, &strict, "clocks_set").len();
    // Going away leaves a game without vacation alone.
    let until = api.server_now() + Duration::minutes(30);
    let r = api.put(
        "/v1/account/vacation",
        &anna.token,
        &json!({ "away_until": at(until) }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(events_of(&api, &bert, &strict, "clocks_set").len(), sets);
    assert_eq!(hours_left(&api, &anna), 335);

    server.advance_clock(3600);
    for game in [&strict, &guests] {
        let out = events_after_sweep(&api, &bert, game, "clock_ran_out", 1);
        assert_eq!(out[0]["seat"], 0);
        assert!(events_of(&api, &bert, game, "vacation_spent").is_empty());
    }
    assert_eq!(
        hours_left(&api, &anna),
        335,
        "nothing spent in a game without vacation"
    );
}

both!(
    vacation_is_spent_hour_by_hour_before_the_clock_runs_out,
    a_flag_found_fallen_late_spends_the_hours_since,
    a_game_started_while_away_stops_when_the_flag_falls,
    going_away_stops_the_clock_until_the_absence_ends,
    no_vacation_in_games_without_it_nor_for_guests,
);

both!(
    guests_have_no_vacation,
    going_away_spends_whole_hours_and_coming_back_early_refunds_the_unused,
    the_days_per_year_are_a_setting,
);

/// Two replicas sweep the same game when a flag falls: one of them spends the hour, in the
/// transaction of its append; the other's append loses the compare-and-set and its spending
/// rolls back with it. The hours the account lost always equal the hours the game recorded.
#[test]
fn two_replicas_never_overspend() {
    let backend = Backend::Postgres;
    let env = [
        ("STAMMTISCH_VACATION_DAYS", "1"),
        ("TOKEN_TTL_SECONDS", "604800"),
    ];
    let server = TestServer::start_with_env(TestDb::new(backend), backend, &env);
    let other = server.replica(&env);
    let api = server.client();
    let second = other.client();
    let anna = api.account("anna");
    let bert = api.account("bert");
    let game = only_host_runs(&api, &anna, &bert, &correspondence(3600, true));
    for spent in 1..=3_usize {
        // Both replicas' clocks move on together: both find the flag fallen. Each answers
        // once its sweeper's pass has acted, so both passes are over here.
        server.advance_clock(3600);
        let r = second.post("/test/clock", None, &json!({ "advance_seconds": 3600 }));
        assert_eq!(r.status, 200, "{}", r.text);
        let hours = events_of(&api, &bert, &game, "vacation_spent");
        assert_eq!(hours.len(), spent, "one hour per flag-fall: {hours:?}");
        assert_eq!(hours_left(&api, &anna), 24 - spent as u64);
        assert_eq!(hours_left(&second, &anna), 24 - spent as u64);
    }
    assert!(events_of(&api, &bert, &game, "clock_ran_out").is_empty());
}
