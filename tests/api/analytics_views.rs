//! The analysts' SQL views on PostgreSQL (`analytics` schema, docs/analytics.md): after
//! complete games over HTTP, the views hold exactly what the games' views say (seats,
//! rounds, scores, totals, winners), only public events, and every SQL block of
//! docs/analytics.md runs — read from the file at test time, so the docs cannot drift from
//! what is tested — as the read-only analyst role the docs set up, with results checked
//! against the games played.

use std::collections::{BTreeMap, BTreeSet};

use diesel::{Connection, PgConnection, RunQueryDsl};
use serde_json::{Value, json};

use crate::support::{Api, Backend, Player, TestServer, cards, seated_game};

/// The SQL blocks of docs/analytics.md: (label, SQL), the label being the first line's
/// `-- example: NAME` or `-- setup: …`.
fn doc_blocks() -> Vec<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/analytics.md");
    let text = std::fs::read_to_string(path).expect("docs/analytics.md");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim() == "```sql" => current = Some(Vec::new()),
            None => {}
            Some(lines) if line.trim() == "```" => {
                let sql = lines.join("\n");
                let first = lines.first().copied().unwrap_or_default();
                let label = first
                    .strip_prefix("-- example: ")
                    .or_else(|| first.strip_prefix("-- setup: ").map(|_| "setup"))
                    .unwrap_or_else(|| {
                        panic!("an SQL block of docs/analytics.md starts without a label: {first}")
                    })
                    .trim()
                    .to_owned();
                blocks.push((label, sql));
                current = None;
            }
            Some(lines) => lines.push(line),
        }
    }
    assert!(current.is_none(), "an unclosed ```sql block");
    blocks
}

#[derive(diesel::QueryableByName)]
struct JsonRows {
    #[diesel(sql_type = diesel::sql_types::Text)]
    rows: String,
}

/// The rows of a query, as JSON objects (column → value).
fn query(conn: &mut PgConnection, sql: &str) -> Vec<Value> {
    let body = sql.trim().trim_end_matches(';');
    let wrapped = format!(
        "SELECT COALESCE(jsonb_agg(to_jsonb(q)), '[]'::jsonb)::text AS rows FROM (\n{body}\n) AS q"
    );
    let result: JsonRows = diesel::sql_query(wrapped)
        .get_result(conn)
        .unwrap_or_else(|e| panic!("query failed: {e}\n{sql}"));
    match serde_json::from_str(&result.rows).unwrap() {
        Value::Array(rows) => rows,
        other => panic!("not rows: {other}"),
    }
}

fn execute(conn: &mut PgConnection, sql: &str) {
    diesel::sql_query(sql)
        .execute(conn)
        .unwrap_or_else(|e| panic!("{e}: {sql}"));
}

fn int(v: &Value) -> i64 {
    v.as_i64()
        .or_else(|| v.as_f64().map(|f| f.round() as i64))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn bullheads(card: u64) -> u64 {
    let card = rules::Card::new(u8::try_from(card).unwrap()).unwrap();
    u64::from(rules::ScoreTable::SixNimmt.bullheads(card))
}

/// Plays the person's seat of a 6-nimmt game to the end: the lowest (or highest) card of
/// the hand, and the cheapest row whenever a row must be taken.
fn play_to_the_end(api: &Api, me: &Player, game: &str, lowest: bool) -> Value {
    for _ in 0..100 {
        let view = api.view(me, game);
        if view["status"] == "finished" {
            return view;
        }
        let legal = view["legal"].as_array().unwrap();
        let rows = view["table"]["rows"].as_array().unwrap();
        let row_bullheads = |row: &Value| -> u64 {
            cards(&rows[usize::try_from(row.as_u64().unwrap()).unwrap()]["cards"])
                .into_iter()
                .map(bullheads)
                .sum()
        };
        let take = legal
            .iter()
            .filter(|c| c["type"] == "take_row")
            .min_by_key(|c| (row_bullheads(&c["row"]), c["row"].as_u64()));
        if let Some(take) = take {
            api.ok(me, game, &take.clone());
            continue;
        }
        let hand = cards(&view["you"]["hand"]);
        let card = if lowest { hand.first() } else { hand.last() };
        let card = card.unwrap_or_else(|| panic!("nothing to do in {view}"));
        api.ok(me, game, &json!({ "type": "play_card", "card": card }));
    }
    panic!("the game did not end");
}

/// A role the docs' setup block creates, dropped when the test ends (roles outlive
/// databases).
struct Role<'a> {
    name: String,
    url: &'a str,
}

impl Drop for Role<'_> {
    fn drop(&mut self) {
        if let Ok(mut conn) = PgConnection::establish(self.url) {
            let _ = diesel::sql_query("RESET ROLE").execute(&mut conn);
            let _ = diesel::sql_query(format!("DROP OWNED BY {}", self.name)).execute(&mut conn);
            let _ =
                diesel::sql_query(format!("DROP ROLE IF EXISTS {}", self.name)).execute(&mut conn);
        }
    }
}

const HIDDEN_TYPES: [&str; 5] = [
    "hand_dealt",
    "card_selected",
    "seed_recorded",
    "draw_pile_set",
    "deal_prepared",
];

#[test]
fn analysts_views_and_the_documented_queries_on_postgres() {
    let server = TestServer::start(Backend::Postgres);
    let api = server.client();

    // Two finished 6-nimmt games, a person against random bots.
    let alice = api.guest("alice");
    let one_round = json!({ "options": { "end": { "rounds": 1 } } });
    let g1 = seated_game(&api, &alice, &[], 3, &one_round);
    let v1 = play_to_the_end(&api, &alice, &g1, true);
    let bob = api.guest("bob");
    let g2 = seated_game(&api, &bob, &[], 4, &one_round);
    let v2 = play_to_the_end(&api, &bob, &g2, false);
    // A finished nimm-oder-schieb game whose person resigned at once.
    let carol = api.guest("carol");
    let created = api.create_game(
        &carol,
        &json!({ "ruleset": "nimm-oder-schieb", "players": 3 }),
    );
    let g3 = created["id"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        api.ok(
            &carol,
            &g3,
            &json!({ "type": "add_bot", "strategy": "heuristic" }),
        );
    }
    api.ok(&carol, &g3, &json!({ "type": "start" }));
    api.ok(&carol, &g3, &json!({ "type": "resign" }));
    let v3 = api.view(&carol, &g3);
    assert_eq!(v3["status"], "finished", "bots finish a resigned game");
    // A lobby with a seat freed again, and a running game with hands dealt.
    let dave = api.guest("dave");
    let created = api.create_game(&dave, &json!({ "ruleset": "6-nimmt", "players": 3 }));
    let g4 = created["id"].as_str().unwrap().to_owned();
    api.ok(&dave, &g4, &json!({ "type": "add_bot" }));
    api.ok(&dave, &g4, &json!({ "type": "add_bot" }));
    api.ok(&dave, &g4, &json!({ "type": "remove_seat", "seat": 1 }));
    let erin = api.guest("erin");
    let g5 = seated_game(&api, &erin, &[], 2, &json!({}));
    assert_eq!(api.view(&erin, &g5)["status"], "active");
    let finished = [(&g1, &v1), (&g2, &v2), (&g3, &v3)];

    let mut conn = PgConnection::establish(&server.db.url).unwrap();

    // The documented columns, in order.
    let columns = query(
        &mut conn,
        "SELECT table_name AS view, string_agg(column_name, ',' ORDER BY ordinal_position) AS columns
         FROM information_schema.columns WHERE table_schema = 'analytics' GROUP BY table_name",
    );
    let columns: BTreeMap<&str, &str> = columns
        .iter()
        .map(|r| (r["view"].as_str().unwrap(), r["columns"].as_str().unwrap()))
        .collect();
    assert_eq!(
        columns,
        BTreeMap::from([
            (
                "events",
                "game_id,seq,type,audience,schema_version,recorded_at,data"
            ),
            (
                "games",
                "id,ruleset,name,status,created_at,finished_at,rules_version,options,players"
            ),
            ("rounds", "game_id,round,ended_at"),
            ("scores", "game_id,round,seat,score"),
            (
                "seats",
                "game_id,seat,account_id,bot,name,strategy,resigned"
            ),
        ])
    );

    // analytics.events: every public event and nothing else, though the log holds more.
    let counts = &query(
        &mut conn,
        "SELECT (SELECT count(*) FROM analytics.events) AS analytics,
                (SELECT count(*) FROM events WHERE audience = 'public') AS public,
                (SELECT count(*) FROM events WHERE audience <> 'public') AS hidden,
                (SELECT count(*) FROM events WHERE event_type = 'hand_dealt') AS hands,
                (SELECT count(*) FROM events WHERE event_type = 'seed_recorded') AS seeds",
    )[0];
    assert_eq!(counts["analytics"], counts["public"]);
    assert!(int(&counts["hidden"]) > 0);
    assert_eq!(int(&counts["hands"]), 4 + 5 + 3, "hands of three deals");
    assert_eq!(int(&counts["seeds"]), 5);
    let leaked = query(
        &mut conn,
        "SELECT DISTINCT type, audience FROM analytics.events
         WHERE audience <> 'public'
            OR type IN ('hand_dealt', 'card_selected', 'seed_recorded', 'draw_pile_set', 'deal_prepared')",
    );
    assert_eq!(
        leaked,
        Vec::<Value>::new(),
        "hidden events in analytics.events"
    );

    // analytics.games
    let games = query(&mut conn, "SELECT * FROM analytics.games");
    let games: BTreeMap<&str, &Value> = games
        .iter()
        .map(|g| (g["id"].as_str().unwrap(), g))
        .collect();
    assert_eq!(games.len(), 5);
    for (id, view) in finished {
        let g = games[id.as_str()];
        assert_eq!(g["status"], "finished");
        assert_eq!(g["ruleset"], view["ruleset"]);
        assert_eq!(g["options"], view["options"]);
        assert_eq!(g["players"], view["players"]);
        assert_eq!(g["rules_version"], view["rules_version"]);
        assert!(g["finished_at"].is_string(), "{g}");
    }
    assert_eq!(games[g1.as_str()]["options"]["end"], json!({ "rounds": 1 }));
    for id in [&g4, &g5] {
        assert!(games[id.as_str()]["finished_at"].is_null());
    }
    assert_eq!(games[g4.as_str()]["status"], "lobby");
    assert_eq!(games[g5.as_str()]["status"], "active");

    // analytics.seats: as the games' views show them.
    let seats = query(&mut conn, "SELECT * FROM analytics.seats");
    let seat_rows = |game: &str| -> BTreeMap<i64, &Value> {
        seats
            .iter()
            .filter(|s| s["game_id"] == game)
            .map(|s| (int(&s["seat"]), s))
            .collect()
    };
    for (id, view) in finished {
        let rows = seat_rows(id);
        let seats_of_view = view["seats"].as_array().unwrap();
        assert_eq!(rows.len(), seats_of_view.len(), "{id}");
        for s in seats_of_view {
            let row = rows[&int(&s["seat"])];
            assert_eq!(row["name"], s["name"]);
            assert_eq!(row["account_id"], s["account_id"]);
            assert_eq!(row["resigned"], s["resigned"]);
            // The view's `bot` is "played by a bot"; the analytics' `bot` is a seated bot.
            assert_eq!(
                row["bot"],
                json!(s["bot"] == true && s["resigned"] == false)
            );
        }
    }
    assert_eq!(seat_rows(&g1)[&0]["account_id"], json!(alice.id));
    assert_eq!(seat_rows(&g1)[&1]["strategy"], "random");
    assert_eq!(seat_rows(&g3)[&0]["resigned"], true);
    let lobby = seat_rows(&g4);
    assert_eq!(
        lobby.keys().copied().collect::<Vec<_>>(),
        [0, 2],
        "a removed seat is free"
    );

    // analytics.rounds and analytics.scores: exactly the games' score tables.
    let scores = query(
        &mut conn,
        "SELECT * FROM analytics.scores ORDER BY game_id, round, seat",
    );
    let rounds = query(&mut conn, "SELECT * FROM analytics.rounds");
    for (id, view) in finished {
        let table: Vec<Vec<i64>> = scores.iter().filter(|s| s["game_id"] == id.as_str()).fold(
            Vec::new(),
            |mut table, s| {
                let r = usize::try_from(int(&s["round"]) - 1).unwrap();
                if table.len() <= r {
                    table.resize(r + 1, Vec::new());
                }
                assert_eq!(int(&s["seat"]), i64::try_from(table[r].len()).unwrap());
                table[r].push(int(&s["score"]));
                table
            },
        );
        let expected: Vec<Vec<i64>> = serde_json::from_value(view["scores"].clone()).unwrap();
        assert_eq!(table, expected, "{id}: scores");
        let ended: Vec<&Value> = rounds
            .iter()
            .filter(|r| r["game_id"] == id.as_str())
            .collect();
        assert_eq!(ended.len(), expected.len(), "{id}: rounds");
        assert!(ended.iter().all(|r| r["ended_at"].is_string()));
    }
    for id in [&g4, &g5] {
        assert!(scores.iter().all(|s| s["game_id"] != id.as_str()));
    }
    // Per round, the scores sum to the round's end event.
    let mismatched = query(
        &mut conn,
        "SELECT s.game_id, s.round, sum(s.score) AS view_sum, min(e.total) AS event_sum
         FROM analytics.scores s
         JOIN (SELECT e.game_id,
                      COALESCE(e.data ->> 'round', e.data ->> 'game')::integer AS round,
                      (SELECT sum(v::integer) FROM jsonb_array_elements_text(e.data -> 'scores') v) AS total
               FROM events e WHERE e.event_type IN ('round_ended', 'nos_game_ended')) e
           ON e.game_id = s.game_id AND e.round = s.round
         GROUP BY s.game_id, s.round
         HAVING sum(s.score) <> min(e.total)",
    );
    assert_eq!(mismatched, Vec::<Value>::new());

    // The documented queries, run as the documented analyst role.
    let blocks = doc_blocks();
    let examples: BTreeMap<&str, &str> = blocks
        .iter()
        .filter(|(label, _)| label != "setup")
        .map(|(label, sql)| (label.as_str(), sql.as_str()))
        .collect();
    assert!(examples.len() >= 4, "at least four example queries");
    let setup: Vec<&str> = blocks
        .iter()
        .filter(|(label, _)| label == "setup")
        .map(|(_, sql)| sql.as_str())
        .collect();
    assert_eq!(setup.len(), 1, "one setup block");
    let role = Role {
        name: format!("stammtisch_analyst_{}", uuid::Uuid::new_v4().simple()),
        url: &server.db.url,
    };
    for statement in setup[0].split(';').map(str::trim) {
        let statement: String = statement
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .collect::<Vec<_>>()
            .join("\n");
        if !statement.trim().is_empty() {
            execute(
                &mut conn,
                &statement.replace("stammtisch_analyst", &role.name),
            );
        }
    }
    execute(&mut conn, &format!("SET ROLE {}", role.name));
    let results: BTreeMap<&str, Vec<Value>> = examples
        .iter()
        .map(|(label, sql)| (*label, query(&mut conn, sql)))
        .collect();
    for table in ["events", "games", "game_seats"] {
        let denied = diesel::sql_query(format!("SELECT 1 FROM {table} LIMIT 1")).execute(&mut conn);
        assert!(
            denied.is_err(),
            "the analyst role must not read the base table {table}"
        );
    }
    execute(&mut conn, "RESET ROLE");
    for (label, rows) in &results {
        assert!(!rows.is_empty(), "example {label} returned no rows");
    }

    // games_by_ruleset
    let by_ruleset: BTreeMap<(String, String), &Value> = results["games_by_ruleset"]
        .iter()
        .map(|r| {
            (
                (
                    r["ruleset"].as_str().unwrap().to_owned(),
                    r["status"].as_str().unwrap().to_owned(),
                ),
                r,
            )
        })
        .collect();
    let games_of = |ruleset: &str, status: &str| {
        int(&by_ruleset[&(ruleset.to_owned(), status.to_owned())]["games"])
    };
    assert_eq!(by_ruleset.len(), 4, "{by_ruleset:?}");
    assert_eq!(games_of("6-nimmt", "finished"), 2);
    assert_eq!(games_of("6-nimmt", "active"), 1);
    assert_eq!(games_of("6-nimmt", "lobby"), 1);
    assert_eq!(games_of("nimm-oder-schieb", "finished"), 1);
    for ((_, status), row) in &by_ruleset {
        assert_eq!(
            row["mean_seconds"].is_number(),
            status == "finished",
            "{row}"
        );
    }

    // mean_bullheads_by_seat: from the games' own score tables.
    let mut per_seat: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for view in [&v1, &v2] {
        for round in view["scores"].as_array().unwrap() {
            for (seat, score) in round.as_array().unwrap().iter().enumerate() {
                per_seat
                    .entry(i64::try_from(seat).unwrap())
                    .or_default()
                    .push(int(score));
            }
        }
    }
    let rows = &results["mean_bullheads_by_seat"];
    assert_eq!(rows.len(), per_seat.len());
    for row in rows {
        let taken = &per_seat[&int(&row["seat"])];
        assert_eq!(int(&row["rounds"]), i64::try_from(taken.len()).unwrap());
        let mean = taken.iter().sum::<i64>() as f64 / taken.len() as f64;
        assert!(
            (num(&row["mean_bullheads"]) - mean).abs() < 0.006,
            "{row} vs {mean}"
        );
    }

    // totals_and_winners: the games' totals and winners.
    let rows = &results["totals_and_winners"];
    assert_eq!(rows.len(), 4 + 5 + 3);
    for (id, view) in finished {
        let winners = view["winners"].as_array().unwrap();
        for row in rows.iter().filter(|r| r["game_id"] == id.as_str()) {
            let seat = usize::try_from(int(&row["seat"])).unwrap();
            assert_eq!(int(&row["total"]), int(&view["totals"][seat]), "{row}");
            assert_eq!(row["name"], view["seats"][seat]["name"]);
            assert_eq!(row["won"], json!(winners.contains(&json!(seat))), "{row}");
        }
    }

    // people_and_bots
    let played_by: BTreeMap<(String, String), &Value> = results["people_and_bots"]
        .iter()
        .map(|r| {
            (
                (
                    r["ruleset"].as_str().unwrap().to_owned(),
                    r["played_by"].as_str().unwrap().to_owned(),
                ),
                r,
            )
        })
        .collect();
    let rounds_of =
        |ruleset: &str, by: &str| int(&played_by[&(ruleset.into(), by.into())]["rounds"]);
    assert_eq!(played_by.len(), 4, "{played_by:?}");
    assert_eq!(rounds_of("6-nimmt", "person"), 2);
    assert_eq!(rounds_of("6-nimmt", "bot"), 3 + 4);
    assert_eq!(rounds_of("nimm-oder-schieb", "resigned"), 1);
    assert_eq!(rounds_of("nimm-oder-schieb", "bot"), 2);
    let people = (int(&v1["scores"][0][0]) + int(&v2["scores"][0][0])) as f64 / 2.0;
    assert!(
        (num(&played_by[&("6-nimmt".into(), "person".into())]["mean_score"]) - people).abs()
            < 0.006
    );

    // cheapest_row_choice: against the rows rebuilt here by folding the public events.
    let log = query(
        &mut conn,
        "SELECT e.game_id, e.seq, e.type, e.data FROM analytics.events e
         JOIN analytics.games g ON g.id = e.game_id
         WHERE g.ruleset <> 'nimm-oder-schieb' ORDER BY e.game_id, e.seq",
    );
    // (by_bot) → (choices, cheapest)
    let mut expected: BTreeMap<bool, (i64, i64)> = BTreeMap::new();
    let mut rows_now: Vec<Vec<u64>> = Vec::new();
    for e in &log {
        let data = &e["data"];
        match e["type"].as_str().unwrap() {
            "round_started" => {
                rows_now = cards(&data["rows"]).into_iter().map(|c| vec![c]).collect()
            }
            "card_placed" => {
                let row = usize::try_from(data["row"].as_u64().unwrap()).unwrap();
                let taken = cards(&data["taken"]);
                if data["chosen"] == true {
                    let mut before = rows_now[row].clone();
                    before.sort_unstable();
                    let mut sorted = taken.clone();
                    sorted.sort_unstable();
                    assert_eq!(before, sorted, "the row taken is the row rebuilt: {e}");
                    let cost = |cards: &[u64]| cards.iter().copied().map(bullheads).sum::<u64>();
                    let cheapest = rows_now.iter().map(|r| cost(r)).min().unwrap();
                    // Seat 0 is the person in these games, and nobody resigned.
                    let by_bot = data["seat"] != 0;
                    let entry = expected.entry(by_bot).or_default();
                    entry.0 += 1;
                    entry.1 += i64::from(cost(&taken) == cheapest);
                }
                if taken.is_empty() {
                    rows_now[row].push(data["card"].as_u64().unwrap());
                } else {
                    rows_now[row] = vec![data["card"].as_u64().unwrap()];
                }
            }
            _ => {}
        }
    }
    assert!(
        !expected.is_empty(),
        "no row was taken by choice in two games"
    );
    if let Some((choices, cheapest)) = expected.get(&false) {
        assert_eq!(choices, cheapest, "the person always took the cheapest row");
    }
    let actual: BTreeMap<bool, (i64, i64)> = results["cheapest_row_choice"]
        .iter()
        .map(|r| {
            assert_eq!(r["ruleset"], "6-nimmt");
            let (choices, cheapest) = (int(&r["choices"]), int(&r["cheapest"]));
            let percent = 100.0 * cheapest as f64 / choices as f64;
            assert!((num(&r["cheapest_percent"]) - percent).abs() < 0.051, "{r}");
            (r["by_bot"].as_bool().unwrap(), (choices, cheapest))
        })
        .collect();
    assert_eq!(actual, expected, "(by_bot) → (choices, cheapest)");

    // public_event_types
    let types: BTreeSet<&str> = results["public_event_types"]
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    for hidden in HIDDEN_TYPES {
        assert!(!types.contains(hidden), "{hidden} is public");
    }
    for public in [
        "game_created",
        "round_started",
        "cards_revealed",
        "card_placed",
        "round_ended",
        "card_taken",
        "nos_game_ended",
        "game_finished",
    ] {
        assert!(types.contains(public), "{public} is missing");
    }
    drop(role);
}

/// A game's name reaches the views only while the game is public: `analytics.games.name`
/// and the `name` in `game_created` are null for every other game.
#[test]
fn private_games_names_stay_out_of_the_analysts_views_on_postgres() {
    let server = TestServer::start(Backend::Postgres);
    let api = server.client();
    let games = crate::analytics::named_games(&api);
    let mut conn = PgConnection::establish(&server.db.url).unwrap();
    for (id, name, public) in &games {
        let rows = query(
            &mut conn,
            &format!(
                "SELECT g.name AS game_name, e.data -> 'name' AS created_name
                 FROM analytics.games g
                 JOIN analytics.events e ON e.game_id = g.id AND e.type = 'game_created'
                 WHERE g.id = '{id}'"
            ),
        );
        let expected = if *public { json!(name) } else { Value::Null };
        assert_eq!(
            rows,
            vec![json!({ "game_name": expected, "created_name": expected })],
            "{name}"
        );
        if !*public {
            let anywhere = query(
                &mut conn,
                &format!(
                    "SELECT 'games' AS view FROM analytics.games g WHERE to_jsonb(g)::text LIKE '%{name}%'
                     UNION ALL
                     SELECT 'events' FROM analytics.events e WHERE e.data::text LIKE '%{name}%'"
                ),
            );
            assert_eq!(anywhere, Vec::<Value>::new(), "{name}");
        }
    }
}
