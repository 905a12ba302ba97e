//! Tournaments (issue 29): duplicate and Swiss played to the end through the API, checked
//! against what the tests recompute from the games' own logs; standings rebuilt from the
//! tournament's stream; a round ended by its deadline; private tournaments; refusals.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::both;
use crate::support::{Api, Backend, Player, TestDb, TestServer, play_randomly, run_command};

fn live(initial: u32, increment: u32) -> Value {
    json!({"kind": "live", "initial_seconds": initial, "increment_seconds": increment})
}

fn tournament(api: &Api, p: &Player, id: &str) -> Value {
    let r = api.get(&format!("/v1/tournaments/{id}"), Some(&p.token));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body
}

fn standings(api: &Api, p: &Player, id: &str) -> Value {
    let r = api.get(&format!("/v1/tournaments/{id}/standings"), Some(&p.token));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body
}

fn create(api: &Api, host: &Player, body: &Value) -> String {
    let r = api.post("/v1/tournaments", Some(&host.token), body);
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        r.header("location").as_deref(),
        Some(format!("/v1/tournaments/{id}").as_str())
    );
    id
}

fn join(api: &Api, p: &Player, id: &str) {
    let r = api.post(
        &format!("/v1/tournaments/{id}/join"),
        Some(&p.token),
        &json!({}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

/// The round `round` (1-based) of a tournament view.
fn round_of(view: &Value, round: usize) -> Value {
    view["round_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["round"] == round)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Per table: its game and the seats' account ids (`None`: a bot).
fn tables(round: &Value) -> Vec<(String, Vec<Option<String>>)> {
    round["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let seats = t["seats"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["player"]["id"].as_str().map(str::to_owned))
                .collect();
            (t["game"].as_str().unwrap().to_owned(), seats)
        })
        .collect()
}

/// Round `round` once a pass of the deadline sweeper has run (`TestServer::sweep`, which
/// answers when the pass is over): it must have begun (its tables are seated).
fn round_after_sweep(server: &TestServer, api: &Api, p: &Player, id: &str, round: usize) -> Value {
    server.sweep();
    let found = round_of(&tournament(api, p, id), round);
    assert!(
        !found.is_null(),
        "round {round} had not started after a pass"
    );
    found
}

/// Round `round` once a pass of the deadline sweeper has run: it must be finished.
fn finished_after_sweep(
    server: &TestServer,
    api: &Api,
    p: &Player,
    id: &str,
    round: usize,
) -> Value {
    server.sweep();
    let found = round_of(&tournament(api, p, id), round);
    assert_eq!(
        found["status"], "finished",
        "round {round} had not finished after a pass: {found}"
    );
    found
}

/// Plays every table of a round through the people seated there.
fn play_round(api: &Api, people: &HashMap<String, Player>, round: &Value, seed: u64) {
    for (i, (game, seats)) in tables(round).iter().enumerate() {
        let at_table: Vec<Player> = seats.iter().flatten().map(|a| people[a].clone()).collect();
        play_randomly(api, &at_table, game, seed + i as u64);
    }
}

/// The `data` of every event of `kind` in `game` as `p` sees it.
fn events_of(api: &Api, p: &Player, game: &str, kind: &str) -> Vec<Value> {
    api.events(p, game)
        .into_iter()
        .filter(|e| e["type"] == kind)
        .map(|e| e["data"].clone())
        .collect()
}

fn sha256_hex(seed_hex: &str) -> String {
    hex::encode(Sha256::digest(hex::decode(seed_hex).unwrap()))
}

/// Matchpoints of one score against the others: one per higher score, half per equal one.
fn matchpoints(mine: i64, others: &[i64]) -> f64 {
    others
        .iter()
        .map(|o| match mine.cmp(o) {
            std::cmp::Ordering::Less => 1.0,
            std::cmp::Ordering::Equal => 0.5,
            std::cmp::Ordering::Greater => 0.0,
        })
        .sum()
}

fn points_of(standings: &Value) -> BTreeMap<String, f64> {
    standings["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["account"].as_str().unwrap().to_owned(),
                r["points"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn twelve_person_duplicate_tournament_compares_every_hand(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people: Vec<Player> = (0..12).map(|i| api.guest(&format!("Dup{i}"))).collect();
    let by_id: HashMap<String, Player> = people.iter().map(|p| (p.id.clone(), p.clone())).collect();
    let id = create(
        &api,
        &people[0],
        &json!({
            "name": "Duplicate night", "ruleset": "6-nimmt", "format": "duplicate",
            "rounds": 3, "table_size": 4, "deals_per_round": 2,
            "time_control": live(900, 10), "public": true
        }),
    );
    for p in &people {
        join(&api, p, &id);
    }
    let r = api.post(
        &format!("/v1/tournaments/{id}/start"),
        Some(&people[0].token),
        &json!({}),
    );
    assert_eq!(r.status, 200, "{}", r.text);

    let mut seen_while_running: Vec<String> = Vec::new();
    let mut rounds = Vec::new();
    for round in 1..=3usize {
        let started = round_after_sweep(&server, &api, &people[0], &id, round);
        let plan = tables(&started);
        assert_eq!(plan.len(), 3, "three tables of four");
        assert!(
            plan.iter()
                .all(|(_, s)| s.len() == 4 && s.iter().all(Option::is_some))
        );
        let commitment = started["commitment"].as_str().unwrap().to_owned();
        // Every table's game commits to the round's one seed.
        for (game, seats) in &plan {
            let p = &by_id[seats[0].as_ref().unwrap()];
            let view = api.view(p, game);
            assert_eq!(view["fairness"]["commitment"], commitment.as_str());
            assert_eq!(view["tournament"]["tournament"], id.as_str());
            assert_eq!(view["tournament"]["round"], round);
        }
        // The first table finishes while the others still play: nothing its people can
        // read may carry the seed yet.
        let (first_game, first_seats) = &plan[0];
        let first: Vec<Player> = first_seats
            .iter()
            .flatten()
            .map(|a| by_id[a].clone())
            .collect();
        let end = play_randomly(&api, &first, first_game, 7 + round as u64);
        assert_eq!(
            end["fairness"]["seed"],
            Value::Null,
            "seed held until the round ends"
        );
        let table_player = &first[0];
        seen_while_running.push(api.view(table_player, first_game).to_string());
        // Every event of the finished table, all pages (its `game_finished` included).
        let events = api.events(table_player, first_game);
        assert!(events.iter().any(|e| e["type"] == "game_finished"));
        seen_while_running.push(serde_json::to_string(&events).unwrap());
        seen_while_running.push(tournament(&api, table_player, &id).to_string());
        seen_while_running.push(
            api.get(
                &format!("/v1/tournaments/{id}/events"),
                Some(&table_player.token),
            )
            .text,
        );
        let rest = json!({"tables": started["tables"].as_array().unwrap()[1..].to_vec()});
        play_round(&api, &by_id, &rest, 100 * round as u64);
        let finished = finished_after_sweep(&server, &api, &people[0], &id, round);
        let seed = finished["seed"].as_str().unwrap().to_owned();
        assert_eq!(
            sha256_hex(&seed),
            commitment,
            "the seed matches its commitment"
        );
        for text in &seen_while_running {
            assert!(
                !text.contains(&seed),
                "the seed leaked before its round ended"
            );
        }
        for (game, seats) in &plan {
            let p = &by_id[seats[0].as_ref().unwrap()];
            assert_eq!(
                api.view(p, game)["fairness"]["seed"],
                seed.as_str(),
                "seed revealed in the game"
            );
        }
        rounds.push(plan);
    }
    let done = tournament(&api, &people[0], &id);
    assert_eq!(done["status"], "finished");

    // From the games' logs: the same deals at every table of a round, each hand held by
    // three different people, and the matchpoints.
    let mut expected: BTreeMap<String, f64> = people.iter().map(|p| (p.id.clone(), 0.0)).collect();
    for plan in &rounds {
        // hands[table][seat] = the hands dealt to that seat, deal by deal.
        let mut hands: Vec<Vec<Vec<Value>>> = Vec::new();
        let mut rows: Vec<Vec<Value>> = Vec::new();
        // scores[table][deal][seat]
        let mut scores: Vec<Vec<Vec<i64>>> = Vec::new();
        for (game, seats) in plan {
            let mut per_seat = Vec::new();
            for account in seats {
                let p = &by_id[account.as_ref().unwrap()];
                per_seat.push(
                    events_of(&api, p, game, "hand_dealt")
                        .into_iter()
                        .map(|d| d["cards"].clone())
                        .collect(),
                );
            }
            hands.push(per_seat);
            let p = &by_id[seats[0].as_ref().unwrap()];
            rows.push(events_of(&api, p, game, "round_started"));
            scores.push(
                events_of(&api, p, game, "round_ended")
                    .iter()
                    .map(|d| {
                        d["scores"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|s| s.as_i64().unwrap())
                            .collect()
                    })
                    .collect(),
            );
        }
        for t in 1..plan.len() {
            assert_eq!(
                hands[t], hands[0],
                "every table of the round got the same hands"
            );
            assert_eq!(
                rows[t], rows[0],
                "every table of the round got the same rows"
            );
        }
        assert_eq!(hands[0][0].len(), 2, "two deals per round");
        for seat in 0..4 {
            let holders: BTreeSet<&String> = plan
                .iter()
                .map(|(_, s)| s[seat].as_ref().unwrap())
                .collect();
            assert_eq!(
                holders.len(),
                3,
                "hand {seat} is held by three different people"
            );
        }
        for (t, (_, seats)) in plan.iter().enumerate() {
            for (deal, mine) in scores[t].iter().enumerate() {
                for (seat, account) in seats.iter().enumerate() {
                    let others: Vec<i64> = (0..plan.len())
                        .filter(|&o| o != t)
                        .map(|o| scores[o][deal][seat])
                        .collect();
                    *expected.get_mut(account.as_ref().unwrap()).unwrap() +=
                        matchpoints(mine[seat], &others);
                }
            }
        }
    }
    let live_standings = standings(&api, &people[0], &id);
    assert_eq!(live_standings["after_round"], 3);
    assert_eq!(
        points_of(&live_standings),
        expected,
        "matchpoints as recomputed"
    );
    // Each row's deals compare the person's score with the two other holders.
    for row in live_standings["rows"].as_array().unwrap() {
        let deals = row["deals"].as_array().unwrap();
        assert_eq!(deals.len(), 6, "three rounds of two deals");
        for d in deals {
            let others: Vec<i64> = d["others"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["score"].as_i64().unwrap())
                .collect();
            assert_eq!(others.len(), 2);
            assert_eq!(
                d["matchpoints"].as_f64().unwrap(),
                matchpoints(d["score"].as_i64().unwrap(), &others)
            );
        }
    }
    // Standings folded again from the tournament's stream equal the live ones.
    run_command(&server, &["rebuild-tournaments"]);
    assert_eq!(standings(&api, &people[0], &id), live_standings);
    for round in 1..=3 {
        let r = api.get(
            &format!("/v1/tournaments/{id}/standings?after_round={round}"),
            Some(&people[5].token),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.body["after_round"], round);
    }

    // The analysts' feed carries the tournament's whole stream, in order.
    let analyst = api.account("Analyst");
    run_command(&server, &["grant-role", "Analyst", "analyst"]);
    let feed = api.get(
        "/v1/analytics/tournaments/events?limit=1000",
        Some(&analyst.token),
    );
    assert_eq!(feed.status, 200, "{}", feed.text);
    let mine: Vec<&Value> = feed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["tournament_id"] == id.as_str())
        .collect();
    let seqs: Vec<i64> = mine.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(
        seqs,
        (1..=i64::try_from(seqs.len()).unwrap()).collect::<Vec<_>>()
    );
    let types: Vec<&str> = mine.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"tournament_created"));
    assert_eq!(types.last(), Some(&"tournament_ended"));
    assert_eq!(types.iter().filter(|t| **t == "round_finished").count(), 3);
    assert_eq!(types.iter().filter(|t| **t == "table_finished").count(), 9);
}

fn eight_person_swiss_never_pairs_two_people_twice(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people: Vec<Player> = (0..8).map(|i| api.guest(&format!("Swiss{i}"))).collect();
    let by_id: HashMap<String, Player> = people.iter().map(|p| (p.id.clone(), p.clone())).collect();
    let id = create(
        &api,
        &people[0],
        &json!({
            "name": "Swiss pairs", "ruleset": "6-nimmt", "format": "swiss",
            "options": {"end": {"rounds": 1}},
            "rounds": 3, "table_size": 2, "time_control": live(900, 10), "public": true
        }),
    );
    for p in &people {
        join(&api, p, &id);
    }
    let r = api.post(
        &format!("/v1/tournaments/{id}/start"),
        Some(&people[0].token),
        &json!({}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let mut pairs = BTreeSet::new();
    let mut expected: BTreeMap<String, f64> = people.iter().map(|p| (p.id.clone(), 0.0)).collect();
    for round in 1..=3usize {
        let started = round_after_sweep(&server, &api, &people[0], &id, round);
        let plan = tables(&started);
        assert_eq!(plan.len(), 4);
        for (game, seats) in &plan {
            let a = seats[0].clone().unwrap();
            let b = seats[1].clone().unwrap();
            let pair = if a < b { (a, b) } else { (b, a) };
            assert!(pairs.insert(pair.clone()), "{pair:?} met twice");
            let at_table = [by_id[&pair.0].clone(), by_id[&pair.1].clone()];
            let end = play_randomly(&api, &at_table, game, round as u64);
            let totals: Vec<i64> = end["totals"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_i64().unwrap())
                .collect();
            // Points by place: one per seat placed behind, half per seat level.
            for (seat, account) in seats.iter().enumerate() {
                let other = totals[1 - seat];
                *expected.get_mut(account.as_ref().unwrap()).unwrap() +=
                    matchpoints(totals[seat], &[other]);
            }
        }
        finished_after_sweep(&server, &api, &people[0], &id, round);
    }
    assert_eq!(pairs.len(), 12);
    let live_standings = standings(&api, &people[3], &id);
    assert_eq!(
        points_of(&live_standings),
        expected,
        "points by place, recomputed"
    );
    let ranks: Vec<i64> = live_standings["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_i64().unwrap())
        .collect();
    assert!(
        ranks.windows(2).all(|w| w[0] <= w[1]),
        "best first: {ranks:?}"
    );
    assert_eq!(tournament(&api, &people[0], &id)["status"], "finished");
    run_command(&server, &["rebuild-tournaments"]);
    assert_eq!(standings(&api, &people[3], &id), live_standings);
}

fn a_table_out_of_time_ends_its_round_by_the_rules(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let people: Vec<Player> = (0..4).map(|i| api.guest(&format!("Time{i}"))).collect();
    let by_id: HashMap<String, Player> = people.iter().map(|p| (p.id.clone(), p.clone())).collect();
    // Banks far longer than the round: the round's deadline ends the idle table.
    let id = create(
        &api,
        &people[0],
        &json!({
            "name": "Deadline", "ruleset": "6-nimmt", "format": "swiss",
            "options": {"end": {"rounds": 1}},
            "rounds": 2, "table_size": 2, "time_control": live(1800, 0),
            "round_seconds": 600, "public": true
        }),
    );
    for p in &people {
        join(&api, p, &id);
    }
    let r = api.post(
        &format!("/v1/tournaments/{id}/start"),
        Some(&people[0].token),
        &json!({}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let started = round_after_sweep(&server, &api, &people[0], &id, 1);
    let plan = tables(&started);
    // One table plays to its end; the other does not move at all.
    let (played, seats) = &plan[0];
    let at_table: Vec<Player> = seats.iter().flatten().map(|a| by_id[a].clone()).collect();
    play_randomly(&api, &at_table, played, 3);
    let (idle, idle_seats) = &plan[1];
    let idle_player = &by_id[idle_seats[0].as_ref().unwrap()];
    assert_eq!(api.view(idle_player, idle)["status"], "active");
    assert_eq!(
        round_of(&tournament(&api, &people[0], &id), 1)["status"],
        "running"
    );
    server.advance_clock(601);
    let finished = finished_after_sweep(&server, &api, &people[0], &id, 1);
    let view = api.view(idle_player, idle);
    assert_eq!(view["status"], "finished", "the idle table was played out");
    let handed = events_of(&api, idle_player, idle, "seat_handed_to_bot");
    assert_eq!(handed.len(), 2, "both people went to bots: {handed:?}");
    assert!(handed.iter().all(|h| h["cause"] == "round_deadline"));
    let ends: Vec<&Value> = finished["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["end"])
        .collect();
    assert!(ends.contains(&&json!("finished")));
    assert!(ends.contains(&&json!("round_deadline")));
    // The next round starts as usual.
    let second = round_after_sweep(&server, &api, &people[0], &id, 2);
    assert_eq!(tables(&second).len(), 2);
}

fn private_tournaments_are_invisible_to_outsiders(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("Host");
    let outsider = api.guest("Outsider");
    let id = create(
        &api,
        &host,
        &json!({
            "name": "Friends only", "ruleset": "11-nimmt", "format": "swiss",
            "rounds": 2, "table_size": 3, "time_control": live(300, 5)
        }),
    );
    join(&api, &host, &id);
    let code = tournament(&api, &host, &id)["invite_code"]
        .as_str()
        .unwrap()
        .to_owned();
    for path in [
        format!("/v1/tournaments/{id}"),
        format!("/v1/tournaments/{id}/standings"),
        format!("/v1/tournaments/{id}/events"),
        format!("/v1/tournaments/{id}?invite_code=WRONGCODE1"),
    ] {
        api.get(&path, Some(&outsider.token))
            .assert_problem(404, "not_found");
    }
    let listed = api.get("/v1/tournaments", Some(&outsider.token));
    assert_eq!(listed.status, 200);
    assert!(
        !listed.text.contains(&id),
        "a private tournament is not listed for outsiders"
    );
    api.post(
        &format!("/v1/tournaments/{id}/join"),
        Some(&outsider.token),
        &json!({}),
    )
    .assert_problem(404, "not_found");
    let seen = api.get(
        &format!("/v1/tournaments/{id}?invite_code={code}"),
        Some(&outsider.token),
    );
    assert_eq!(seen.status, 200, "{}", seen.text);
    assert_eq!(
        seen.body["invite_code"],
        Value::Null,
        "the code is the host's to share"
    );
    let joined = api.post(
        &format!("/v1/tournaments/{id}/join"),
        Some(&outsider.token),
        &json!({"invite_code": code}),
    );
    assert_eq!(joined.status, 200, "{}", joined.text);
    let mine = api.get("/v1/tournaments?mine=true", Some(&outsider.token));
    assert!(mine.text.contains(&id));
    assert_eq!(tournament(&api, &outsider, &id)["joined"], true);
}

fn refusals_change_nothing(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let host = api.guest("Host");
    let other = api.guest("Other");
    let third = api.guest("Third");
    let base = json!({
        "name": "Refusals", "ruleset": "6-nimmt", "format": "swiss", "rounds": 2,
        "table_size": 2, "time_control": live(300, 5), "max_players": 3, "public": true
    });
    for (change, code) in [
        (json!({"rounds": 0}), "invalid_tournament"),
        (json!({"table_size": 11}), "invalid_tournament"),
        (
            json!({"format": "duplicate", "ruleset": "11-nimmt"}),
            "invalid_tournament",
        ),
        (json!({"deals_per_round": 2}), "invalid_tournament"),
        (
            json!({"time_control": {"kind": "correspondence", "initial_seconds": 86400,
            "increment_seconds": 0, "vacation": true}}),
            "invalid_tournament",
        ),
        (json!({"name": ""}), "invalid_tournament"),
    ] {
        let mut body = base.clone();
        for (k, v) in change.as_object().unwrap() {
            body[k] = v.clone();
        }
        api.post("/v1/tournaments", Some(&host.token), &body)
            .assert_problem(422, code);
    }
    let mut unknown = base.clone();
    unknown["colour"] = json!("red");
    let r = api.post("/v1/tournaments", Some(&host.token), &unknown);
    assert!(r.status == 400 || r.status == 422, "{}", r.text);
    let listed = api.get("/v1/tournaments", Some(&host.token));
    assert_eq!(
        listed.body["items"].as_array().unwrap().len(),
        0,
        "nothing was created"
    );

    let id = create(&api, &host, &base);
    join(&api, &host, &id);
    let before = api.get(&format!("/v1/tournaments/{id}"), Some(&host.token));
    let tag = before.header("etag");
    let post = |p: &Player, what: &str| {
        api.post(
            &format!("/v1/tournaments/{id}/{what}"),
            Some(&p.token),
            &json!({}),
        )
    };
    post(&host, "join").assert_problem(422, "already_joined");
    post(&other, "leave").assert_problem(422, "not_joined");
    post(&host, "start").assert_problem(422, "too_few_players");
    join(&api, &other, &id);
    post(&other, "start").assert_problem(422, "not_host");
    api.get("/v1/tournaments/not-a-uuid", Some(&host.token))
        .assert_problem(404, "not_found");
    let after = api.get(&format!("/v1/tournaments/{id}"), Some(&host.token));
    assert_ne!(after.header("etag"), tag, "the join changed it");
    assert_eq!(after.body["players"].as_array().unwrap().len(), 2);
    assert_eq!(after.body["status"], "open");
    post(&host, "start");
    assert_eq!(tournament(&api, &host, &id)["status"], "running");
    post(&third, "join").assert_problem(422, "tournament_not_open");
    post(&other, "leave").assert_problem(422, "tournament_not_open");

    // A tournament without a start time starts by itself once full; a join that comes
    // after the last seat is refused (full, or already running).
    let mut small = base.clone();
    small["max_players"] = json!(2);
    let full = create(&api, &host, &small);
    join(&api, &host, &full);
    join(&api, &other, &full);
    let late = api.post(
        &format!("/v1/tournaments/{full}/join"),
        Some(&third.token),
        &json!({}),
    );
    assert_eq!(late.status, 422, "{}", late.text);
    assert!(
        late.body["code"] == "tournament_full" || late.body["code"] == "tournament_not_open",
        "{}",
        late.text
    );
    server.sweep();
    assert_eq!(
        tournament(&api, &host, &full)["status"],
        "running",
        "a full tournament starts at the sweeper's next pass"
    );
}

/// Joining and leaving are writes (on PostgreSQL behind the one lock of tournament
/// appends): they count against the commands per minute, so a loop of them is bounded.
fn joining_and_leaving_count_against_the_command_limit(backend: Backend) {
    let server = TestServer::start_with_env(
        TestDb::new(backend),
        backend,
        &[("LIMIT_COMMANDS_PER_MINUTE", "4")],
    );
    let api = server.client();
    let host = api.guest("Host");
    let id = create(
        &api,
        &host,
        &json!({
            "name": "Busy door", "ruleset": "6-nimmt", "format": "swiss", "rounds": 1,
            "table_size": 2, "time_control": live(300, 5), "public": true
        }),
    );
    for what in ["join", "leave", "join", "leave"] {
        let r = api.post(
            &format!("/v1/tournaments/{id}/{what}"),
            Some(&host.token),
            &json!({}),
        );
        assert_eq!(r.status, 200, "{what}: {}", r.text);
    }
    let before = tournament(&api, &host, &id);
    api.post(
        &format!("/v1/tournaments/{id}/join"),
        Some(&host.token),
        &json!({}),
    )
    .assert_problem(429, "too_many_commands");
    let after = tournament(&api, &host, &id);
    assert_eq!(
        after["version"], before["version"],
        "the refused join changed nothing"
    );
    assert_eq!(after["joined"], false);
}

both!(
    joining_and_leaving_count_against_the_command_limit,
    twelve_person_duplicate_tournament_compares_every_hand,
    eight_person_swiss_never_pairs_two_people_twice,
    a_table_out_of_time_ends_its_round_by_the_rules,
    private_tournaments_are_invisible_to_outsiders,
    refusals_change_nothing,
);
