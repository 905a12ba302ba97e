//! The event store itself: append-only events, reversible migrations, and the server's
//! refusal to start on a database it cannot reach.

use diesel::{Connection, RunQueryDsl};
use serde_json::json;

use crate::both;
use crate::support::{Backend, TestDb, TestServer, raw_execute as execute, seated_game};

fn count_events(backend: Backend, url: &str) -> i64 {
    count(backend, url, "SELECT COUNT(*) AS n FROM events")
}

fn count(backend: Backend, url: &str, q: &str) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let rows: Vec<Count> = crate::support::raw_rows(backend, url, q);
    rows[0].n
}

fn stored_events_cannot_be_updated_or_deleted(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("host");
    let other = api.guest("other");
    seated_game(&api, &host, &[other], 0, &json!({}));
    let url = server.db.url.clone();
    let before = count_events(backend, &url);
    assert!(before > 5);
    assert!(
        execute(backend, &url, "UPDATE events SET event_type = 'forged'").is_err(),
        "UPDATE must be refused"
    );
    assert!(
        execute(backend, &url, "DELETE FROM events").is_err(),
        "DELETE must be refused"
    );
    if backend == Backend::Postgres {
        assert!(
            execute(backend, &url, "TRUNCATE events CASCADE").is_err(),
            "TRUNCATE must be refused"
        );
    }
    assert_eq!(count_events(backend, &url), before);
    let forged = count(
        backend,
        &url,
        "SELECT COUNT(*) AS n FROM events WHERE event_type = 'forged'",
    );
    assert_eq!(forged, 0);
}

/// The schema as the database describes it: every table's columns with their types,
/// nullability and defaults, and every index and constraint definition, sorted.
fn schema_of(backend: Backend, url: &str) -> Vec<String> {
    #[derive(diesel::QueryableByName)]
    struct Line {
        #[diesel(sql_type = diesel::sql_types::Text)]
        line: String,
    }
    let mut lines: Vec<String> = match backend {
        Backend::Postgres => {
            let mut conn = diesel::PgConnection::establish(url).unwrap();
            diesel::sql_query(
                "SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable \
                 || ' ' || coalesce(column_default, '') AS line \
                 FROM information_schema.columns WHERE table_schema = 'public' \
                 UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' \
                 UNION ALL SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) \
                 FROM pg_constraint WHERE connamespace = 'public'::regnamespace \
                 UNION ALL SELECT tgrelid::regclass::text || ' ' || pg_get_triggerdef(oid) \
                 FROM pg_trigger WHERE NOT tgisinternal",
            )
            .load::<Line>(&mut conn)
            .unwrap()
        }
        Backend::Sqlite => {
            let mut conn = crate::support::sqlite(url);
            diesel::sql_query(
                "SELECT type || ' ' || name || ' ' || coalesce(sql, '') AS line FROM sqlite_master",
            )
            .load::<Line>(&mut conn)
            .unwrap()
        }
    }
    .into_iter()
    .map(|l| l.line)
    .collect();
    lines.sort();
    lines
}

fn migrations_revert_and_apply_again(backend: Backend) {
    let db = TestDb::new(backend);
    let store = stammtisch::store::Store::connect(&db.url).unwrap();
    store.migrate().unwrap();
    let before = schema_of(backend, &db.url);
    assert!(before.len() > 20, "{before:?}");
    store.redo_all_migrations().unwrap();
    // Every down migration undoes its up migration exactly: the schema after reverting and
    // applying them all again is the one before.
    let after = schema_of(backend, &db.url);
    let lost: Vec<&String> = before.iter().filter(|l| !after.contains(l)).collect();
    let gained: Vec<&String> = after.iter().filter(|l| !before.contains(l)).collect();
    assert!(
        lost.is_empty() && gained.is_empty(),
        "lost {lost:?}, gained {gained:?}"
    );
    // The schema works after the round trip: a server starts on it and serves a game.
    let server = TestServer::start_on(db, backend);
    let api = server.client();
    let host = api.guest("host");
    let game = api.create_game(&host, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    assert_eq!(game["status"], "lobby");
}

fn readiness_reports_an_unreachable_database() {
    // A server on PostgreSQL whose database is dropped under it answers 503 on /readyz.
    let server = TestServer::start(Backend::Postgres);
    let api = server.client();
    assert_eq!(api.get("/readyz", None).status, 200);
    let admin = std::env::var("STAMMTISCH_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let name = server.db.url.rsplit('/').next().unwrap().to_owned();
    let mut conn = diesel::PgConnection::establish(&admin).unwrap();
    diesel::sql_query(format!("DROP DATABASE {name} WITH (FORCE)"))
        .execute(&mut conn)
        .unwrap();
    let r = api.get("/readyz", None);
    r.assert_problem(503, "database_unavailable");
    assert!(r.header("retry-after").is_some());
    // A database outage is a 503 with Retry-After, not a 500.
    let guest = api.post("/v1/guests", None, &json!({ "name": "late" }));
    guest.assert_problem(503, "database_unavailable");
    assert_eq!(guest.header("retry-after").as_deref(), Some("2"));
}

#[test]
fn readiness_reports_an_unreachable_database_on_postgres() {
    readiness_reports_an_unreachable_database();
}

both!(
    stored_events_cannot_be_updated_or_deleted,
    migrations_revert_and_apply_again
);

/// `prepared` statements stay prepared on their connection (diesel's `sql_query` is
/// parsed and planned anew on every call): run twice, PostgreSQL holds one named statement
/// with that text; `sql_query` leaves none. On SQLite the same text runs with `?`
/// placeholders.
fn prepared_statements_are_kept_per_connection(backend: Backend) {
    use diesel::sql_types::{BigInt, Integer, Text};
    #[derive(diesel::QueryableByName)]
    struct Sum {
        #[diesel(sql_type = Integer)]
        n: i32,
    }
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    const STATEMENT: &str = "SELECT CAST($1 AS integer) + length(CAST($2 AS text)) AS n";
    // The same statement, run twice on one connection of either backend.
    macro_rules! twice {
        ($conn:expr) => {
            [1, 40].map(|x| {
                stammtisch::prepared!(STATEMENT)
                    .bind::<Integer, _>(x)
                    .bind::<Text, _>("abc")
                    .get_result::<Sum>($conn)
                    .unwrap()
                    .n
            })
        };
    }
    match backend {
        Backend::Postgres => {
            let db = TestDb::new(backend);
            let mut c = diesel::PgConnection::establish(&db.url).unwrap();
            assert_eq!(twice!(&mut c), [4, 43]);
            let held = |c: &mut diesel::PgConnection, text: &str| {
                diesel::sql_query(
                    "SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = $1",
                )
                .bind::<Text, _>(text)
                .get_result::<Count>(c)
                .unwrap()
                .n
            };
            assert_eq!(held(&mut c, STATEMENT), 1, "kept once, used twice");
            let unkept = "SELECT CAST($1 AS integer) * 2 AS n";
            for x in [1, 2] {
                let n = diesel::sql_query(unkept)
                    .bind::<Integer, _>(x)
                    .get_result::<Sum>(&mut c)
                    .unwrap()
                    .n;
                assert_eq!(n, 2 * x);
            }
            assert_eq!(held(&mut c, unkept), 0, "sql_query is not kept");
        }
        Backend::Sqlite => {
            let db = TestDb::new(backend);
            let mut c = crate::support::sqlite(&db.url);
            assert_eq!(twice!(&mut c), [4, 43]);
        }
    }
}

both!(prepared_statements_are_kept_per_connection);

/// Every PostgreSQL pool's sessions run without JIT: at 3×10⁷ events a generic plan's
/// estimate crossed `jit_above_cost` and PostgreSQL compiled a 1.5 ms feed page for 130 ms
/// (docs/scaling.md, "A year of data"). PostgreSQL's own default is `on`, as a plain
/// connection shows. The replica pool is pointed at the same database here.
#[test]
fn postgres_sessions_run_without_jit() {
    use diesel::sql_types::Text;
    #[derive(diesel::QueryableByName)]
    struct Setting {
        #[diesel(sql_type = Text)]
        jit: String,
    }
    let db = TestDb::new(Backend::Postgres);
    let mut plain = diesel::PgConnection::establish(&db.url).unwrap();
    let default: Setting = diesel::sql_query("SELECT current_setting('jit') AS jit")
        .get_result(&mut plain)
        .unwrap();
    assert_eq!(
        default.jit, "on",
        "the cluster's default, which the server turns off"
    );
    let store = stammtisch::store::Store::connect(&db.url)
        .unwrap()
        .with_replica(&db.url, std::time::Duration::from_secs(5))
        .unwrap();
    let jit: Vec<(&str, String)> = store
        .pg_jit()
        .into_iter()
        .map(|(pool, jit)| (pool, jit.unwrap()))
        .collect();
    let off = |pool: &'static str| (pool, "off".to_owned());
    assert_eq!(jit, [off("primary"), off("keys"), off("replica")]);
    // SQLite has no such setting.
    let sqlite = TestDb::new(Backend::Sqlite);
    let store = stammtisch::store::Store::connect(&sqlite.url).unwrap();
    assert!(store.pg_jit().is_empty());
}
