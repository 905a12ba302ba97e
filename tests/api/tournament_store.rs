//! Tournaments (issue 29). So far only their storage: the tables the server migrates on
//! both backends keep the tournament event stream append-only and one event per seq.

use crate::both;
use crate::support::{Backend, TestServer, raw_execute as sql};

fn tournament_events_are_append_only(backend: Backend) {
    let server = TestServer::start(backend);
    let host = server.client().guest("host");
    let url = server.db.url.clone();
    let row = format!(
        "INSERT INTO tournaments (id, name, format, ruleset, status, public, host_account, \
         invite_code, version, players, max_players, starts_at, current_round, state, \
         created_at, updated_at) VALUES ('t1', 'Cup', 'duplicate', '6-nimmt', 'open', TRUE, \
         '{}', NULL, 1, 0, 12, NULL, 0, '{{}}', '2026-12-07 00:00:00', '2026-12-07 00:00:00')",
        host.id
    );
    assert_eq!(sql(backend, &url, &row).unwrap(), 1);
    let event = |seq: i32| {
        format!(
            "INSERT INTO tournament_events (tournament_id, seq, event_type, schema_version, \
             data, recorded_at) VALUES ('t1', {seq}, 'tournament_created', 1, '{{}}', \
             '2026-12-07 00:00:00')"
        )
    };
    assert_eq!(sql(backend, &url, &event(1)).unwrap(), 1);
    // One event per position of a tournament's stream, and none before the first.
    assert!(sql(backend, &url, &event(1)).is_err());
    assert!(sql(backend, &url, &event(0)).is_err());
    assert!(
        sql(
            backend,
            &url,
            "UPDATE tournament_events SET event_type = 'forged'"
        )
        .is_err()
    );
    assert!(sql(backend, &url, "DELETE FROM tournament_events").is_err());
    // A player joins a tournament once.
    let player = format!(
        "INSERT INTO tournament_players (tournament_id, account_id) VALUES ('t1', '{}')",
        host.id
    );
    assert_eq!(sql(backend, &url, &player).unwrap(), 1);
    assert!(sql(backend, &url, &player).is_err());
}

both!(tournament_events_are_append_only);
