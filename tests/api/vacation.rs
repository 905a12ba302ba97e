//! Vacation (issue 28): the hours of a year, going away and coming back, guests without.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde_json::json;

use crate::both;
use crate::support::{Backend, TestDb, TestServer};

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
    api.put(
        path,
        &me.token,
        &json!({ "away_until": at(now + Duration::hours(337)) }),
    )
    .assert_problem(422, "not_enough_vacation");
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

both!(
    guests_have_no_vacation,
    going_away_spends_whole_hours_and_coming_back_early_refunds_the_unused,
    the_days_per_year_are_a_setting,
);
