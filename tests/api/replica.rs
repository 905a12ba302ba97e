//! Reads from a streaming replica (`DATABASE_READ_URL`): the test starts its own primary
//! and a hot standby of it (`initdb`, `pg_basebackup`, own ports). With the standby's
//! replay paused, a list shows the standby's (older) state to everyone but the person who
//! just wrote, whose reads go to the primary until the standby has replayed their write;
//! with the standby down, reads go to the primary.

use std::time::Duration;

use diesel::{Connection, RunQueryDsl};
use serde_json::{Value, json};

use crate::clusters::PgCluster;
use crate::support::{Backend, TestDb, TestServer, metric, wait_until};

/// Runs one statement on a cluster.
fn sql(url: &str, statement: &str) {
    let mut conn = diesel::PgConnection::establish(url).unwrap();
    diesel::sql_query(statement).execute(&mut conn).unwrap();
}

#[derive(diesel::QueryableByName)]
struct Text {
    #[diesel(sql_type = diesel::sql_types::Text)]
    value: String,
}

fn text(url: &str, query: &str) -> String {
    let mut conn = diesel::PgConnection::establish(url).unwrap();
    diesel::sql_query(query)
        .get_result::<Text>(&mut conn)
        .unwrap()
        .value
}

/// Waits until the standby has replayed everything the primary has written so far.
fn caught_up(primary: &PgCluster, standby: &PgCluster) {
    let target = text(&primary.url(), "SELECT pg_current_wal_lsn()::text AS value");
    wait_until(
        "the standby to replay the primary's WAL",
        Duration::from_secs(60),
        || {
            text(
                &standby.url(),
                &format!("SELECT (pg_last_wal_replay_lsn() >= '{target}')::text AS value"),
            ) == "true"
        },
    );
}

#[test]
fn reads_go_to_the_replica_and_never_back_in_time_for_the_writer() {
    let primary = PgCluster::new();
    let standby = PgCluster::standby_of(&primary);
    let standby_url = standby.url();
    let server = TestServer::start_with_env(
        TestDb::at(&primary.url()),
        Backend::Postgres,
        &[("DATABASE_READ_URL", &standby_url)],
    );
    let api = server.client();
    let alice = api.guest("alice");
    let bob = api.guest("bob");
    caught_up(&primary, &standby);
    let lobby = "status=lobby";
    assert!(api.listed(&bob, lobby).is_empty());
    let reads = metric(&api, "stammtisch_replica_reads_total");
    assert!(reads >= 1, "bob's list came from the replica");

    // The standby stops replaying: what it answers is from before alice's game.
    sql(&standby_url, "SELECT pg_wal_replay_pause()");
    let created = api.post(
        "/v1/games",
        Some(&alice.token),
        &json!({ "ruleset": "6-nimmt", "players": 3, "public": true }),
    );
    assert_eq!(created.status, 201, "{}", created.text);
    let game = created.body["id"].as_str().unwrap().to_owned();

    // Bob has written nothing: his list is the replica's, without the new game.
    assert!(!api.listed(&bob, lobby).contains(&game));
    assert!(metric(&api, "stammtisch_replica_reads_total") > reads);
    // Alice just wrote: her reads go to the primary, which has her game.
    let fallbacks = metric(&api, "stammtisch_replica_fallbacks_total");
    assert!(api.listed(&alice, "mine=true").contains(&game));
    assert!(api.listed(&alice, lobby).contains(&game));
    assert_eq!(
        metric(&api, "stammtisch_replica_fallbacks_total"),
        fallbacks + 2,
        "both of alice's lists went to the primary"
    );
    let profile = api.get(
        &format!("/v1/players/{}/games", alice.id),
        Some(&alice.token),
    );
    assert_eq!(profile.status, 200, "{}", profile.text);

    // Replay goes on: bob sees the game too, and alice reads from the replica again.
    sql(&standby_url, "SELECT pg_wal_replay_resume()");
    wait_until(
        "bob's list from the replica to show the game",
        Duration::from_secs(60),
        || api.listed(&bob, lobby).contains(&game),
    );
    let fallbacks = metric(&api, "stammtisch_replica_fallbacks_total");
    assert!(api.listed(&alice, "mine=true").contains(&game));
    assert_eq!(
        metric(&api, "stammtisch_replica_fallbacks_total"),
        fallbacks,
        "alice's write is on the replica now"
    );

    // Bob joins (a write): his next read sees his seat, whatever the standby replayed.
    sql(&standby_url, "SELECT pg_wal_replay_pause()");
    let joined = api.post(
        &format!("/v1/games/{game}/commands"),
        Some(&bob.token),
        &json!({ "type": "join" }),
    );
    assert_eq!(joined.status, 200, "{}", joined.text);
    let mine: Vec<Value> = api.get("/v1/games?mine=true", Some(&bob.token)).body["items"]
        .as_array()
        .unwrap()
        .clone();
    assert!(mine.iter().any(|g| g["id"] == game.as_str()), "{mine:?}");
    sql(&standby_url, "SELECT pg_wal_replay_resume()");

    // The standby goes away: reads go to the primary.
    standby.pg_ctl("stop");
    let fallbacks = metric(&api, "stammtisch_replica_fallbacks_total");
    let r = api.get("/v1/games?status=lobby", Some(&bob.token));
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(metric(&api, "stammtisch_replica_fallbacks_total") > fallbacks);
    let board = api.get("/v1/rulesets/6-nimmt/leaderboard", Some(&bob.token));
    assert_eq!(board.status, 200, "{}", board.text);
}

/// The pool keeps its connections to the replica (it does not ask the replica at each
/// checkout), so after the replica goes away a read takes a connection it closed. Such a
/// read is made on the primary instead of failing: the leaderboard answers 200 every time,
/// each read counted as one the replica did not answer.
#[test]
fn a_read_on_a_replica_that_went_away_is_made_on_the_primary() {
    let primary = PgCluster::new();
    let standby = PgCluster::standby_of(&primary);
    let server = TestServer::start_with_env(
        TestDb::at(&primary.url()),
        Backend::Postgres,
        &[("DATABASE_READ_URL", &standby.url())],
    );
    let api = server.client();
    let bob = api.guest("bob");
    caught_up(&primary, &standby);
    let board = "/v1/rulesets/6-nimmt/leaderboard";
    // Reads at once: the pool keeps one or more connections to the replica.
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let (api, bob) = (api.clone(), bob.clone());
            std::thread::spawn(move || api.get(board, Some(&bob.token)).status)
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 200);
    }
    assert!(metric(&api, "stammtisch_replica_reads_total") >= 6);

    standby.pg_ctl("stop");
    let reads = metric(&api, "stammtisch_replica_reads_total");
    let fallbacks = metric(&api, "stammtisch_replica_fallbacks_total");
    for _ in 0..8 {
        let r = api.get(board, Some(&bob.token));
        assert_eq!(r.status, 200, "{}", r.text);
    }
    assert_eq!(metric(&api, "stammtisch_replica_reads_total"), reads);
    assert_eq!(
        metric(&api, "stammtisch_replica_fallbacks_total"),
        fallbacks + 8
    );
    let log = server.log_text();
    assert!(
        log.contains("the replica stopped answering"),
        "a kept connection was taken after the stop: {log}"
    );
}

/// A replica that cannot be reached at start does not keep the server from starting: its
/// reads go to the primary (docs/configuration.md, `DATABASE_READ_URL`).
#[test]
fn a_server_starts_while_its_replica_cannot_be_reached() {
    let db = TestDb::new(Backend::Postgres);
    // Nothing listens on port 1.
    let server = TestServer::start_with_env(
        db,
        Backend::Postgres,
        &[
            ("DATABASE_READ_URL", "postgres://postgres@127.0.0.1:1/none"),
            ("DATABASE_POOL_TIMEOUT_MS", "500"),
        ],
    );
    let api = server.client();
    assert_eq!(api.get("/readyz", None).status, 200);
    let host = api.guest("host");
    let game = api.create_game(&host, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    assert_eq!(game["status"], "lobby");
    let lobby = api.get("/v1/games?status=lobby", Some(&host.token));
    assert_eq!(lobby.status, 200, "{}", lobby.text);
}
