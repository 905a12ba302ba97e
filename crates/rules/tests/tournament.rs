#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Tournaments (issue 29): set-up validation, joining and leaving, what is due when, the
//! seating, Swiss points and Buchholz, duplicate matchpoints, and the fold.

use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};
use stammtisch_rules::tournament::{
    Due, Format, SeatPlan, SeatResult, TableEnd, Tournament, TournamentEvent, TournamentInput,
    TournamentSetup, TournamentStatus, default_round_seconds, places,
};
use stammtisch_rules::{
    Actor, BotStrategy, Card, Command, Dealer, Game, NewGame, RuleError, Setup, Status,
};

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 7, 18, 0, 0).unwrap()
}

/// A valid Swiss tournament as the API receives it.
fn input() -> Value {
    json!({
        "name": "Freitagsrunde",
        "ruleset": "6-nimmt",
        "format": "swiss",
        "rounds": 3,
        "table_size": 4,
        "time_control": {"kind": "live", "initial_seconds": 300, "increment_seconds": 5, "vacation": false},
    })
}

fn with(mut base: Value, changes: Value) -> Value {
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            base.as_object_mut().unwrap().remove(k);
        } else {
            base[k] = v.clone();
        }
    }
    base
}

fn parse(v: Value) -> TournamentInput {
    serde_json::from_value(v).unwrap()
}

fn setup_of(v: Value) -> Result<TournamentSetup, RuleError> {
    TournamentSetup::from_input(parse(v), now())
}

fn refused(v: Value, field: &str) {
    match setup_of(v.clone()) {
        Err(RuleError::InvalidTournament(m)) => {
            assert!(m.contains(field), "{m:?} should name {field}");
        }
        other => panic!("{v} gave {other:?}, not invalid_tournament about {field}"),
    }
}

#[test]
fn a_valid_swiss_set_up_takes_its_defaults() {
    let s = setup_of(input()).unwrap();
    assert_eq!(s.format, Format::Swiss);
    assert_eq!(s.deals_per_round, 1);
    assert_eq!(s.max_players, 64);
    assert!(!s.public);
    assert_eq!(s.game.players, 4);
    assert_eq!(
        s.round_seconds,
        default_round_seconds(4, 1, &s.time_control)
    );
    // 4 × (300 + 30 × 5) × 1 + 60
    assert_eq!(s.round_seconds, 4 * 450 + 60);
}

#[test]
fn a_duplicate_set_up_ends_each_table_after_its_deals() {
    let s = setup_of(with(
        input(),
        json!({"format": "duplicate", "deals_per_round": 3, "round_seconds": 3600,
               "max_players": 12, "public": true, "starts_at": "2026-12-08T18:00:00Z"}),
    ))
    .unwrap();
    assert_eq!(s.deals_per_round, 3);
    assert_eq!(
        s.game.options.end,
        stammtisch_rules::EndCondition::Rounds(3)
    );
    assert_eq!(s.round_seconds, 3600);
    assert_eq!(s.max_players, 12);
    assert!(s.public);
    assert_eq!(
        s.starts_at,
        Some(Utc.with_ymd_and_hms(2026, 12, 8, 18, 0, 0).unwrap())
    );
}

#[test]
fn the_default_round_length_is_capped_at_thirty_days() {
    let tc = serde_json::from_value(
        json!({"kind": "correspondence", "initial_seconds": 2_592_000,
        "increment_seconds": 86_400, "vacation": false}),
    )
    .unwrap();
    assert_eq!(default_round_seconds(10, 5, &tc), 2_592_000);
}

#[test]
fn every_out_of_range_field_is_refused_and_named() {
    refused(with(input(), json!({"name": ""})), "name");
    refused(with(input(), json!({"name": "   "})), "name");
    refused(with(input(), json!({"name": "x".repeat(65)})), "name");
    refused(with(input(), json!({"name": "a\u{200B}b"})), "name");
    refused(with(input(), json!({"rounds": 0})), "rounds");
    refused(with(input(), json!({"rounds": 13})), "rounds");
    refused(with(input(), json!({"table_size": 1})), "table_size");
    refused(with(input(), json!({"table_size": 11})), "table_size");
    refused(
        with(input(), json!({"ruleset": "x-nimmt", "table_size": 5})),
        "table_size",
    );
    refused(
        with(input(), json!({"deals_per_round": 1})),
        "deals_per_round",
    );
    refused(
        with(
            input(),
            json!({"format": "duplicate", "ruleset": "11-nimmt"}),
        ),
        "ruleset",
    );
    refused(
        with(
            input(),
            json!({"format": "duplicate", "deals_per_round": 0}),
        ),
        "deals_per_round",
    );
    refused(
        with(
            input(),
            json!({"format": "duplicate", "deals_per_round": 6}),
        ),
        "deals_per_round",
    );
    refused(
        with(
            input(),
            json!({"format": "duplicate", "options": {"end": {"points": 66}}}),
        ),
        "end",
    );
    refused(
        with(
            input(),
            json!({"format": "duplicate", "options": {"deck": "tactical", "deal": "draft"}}),
        ),
        "draft",
    );
    refused(
        with(input(), json!({"format": "duplicate", "preset": "logik"})),
        "draft",
    );
    refused(
        with(
            input(),
            json!({"time_control": {"kind": "correspondence", "initial_seconds": 86400}}),
        ),
        "vacation",
    );
    refused(
        with(
            input(),
            json!({"time_control": {"kind": "live", "initial_seconds": 300, "at_zero": "others_decide"}}),
        ),
        "at_zero",
    );
    refused(with(input(), json!({"round_seconds": 59})), "round_seconds");
    refused(
        with(input(), json!({"round_seconds": 2_592_001})),
        "round_seconds",
    );
    refused(
        with(input(), json!({"starts_at": "2026-12-07T18:00:00Z"})),
        "starts_at",
    );
    refused(with(input(), json!({"max_players": 1})), "max_players");
    refused(with(input(), json!({"max_players": 257})), "max_players");
}

#[test]
fn options_the_ruleset_refuses_pass_through() {
    let e = setup_of(with(
        input(),
        json!({"ruleset": "11-nimmt", "options": {"deck": "tactical"}}),
    ))
    .unwrap_err();
    assert!(matches!(e, RuleError::InvalidOptions(_)), "{e:?}");
}

// ---------------------------------------------------------------------------------------
// Joining, leaving, starting.

const HOST: &str = "acc-host";

fn tournament(changes: Value) -> (Tournament, Vec<TournamentEvent>) {
    let setup = setup_of(with(input(), changes)).unwrap();
    let events = Tournament::create(setup, HOST);
    (Tournament::from_events(&events).unwrap(), events)
}

/// Applies events to the state and the log, checking the fold each time.
fn record(t: &mut Tournament, log: &mut Vec<TournamentEvent>, events: Vec<TournamentEvent>) {
    for e in events {
        t.apply(&e);
        log.push(e);
    }
    assert_eq!(&Tournament::from_events(log).unwrap(), t, "refold differs");
}

fn people(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("p{i:02}")).collect()
}

fn joined(changes: Value, n: usize) -> (Tournament, Vec<TournamentEvent>) {
    let (mut t, mut log) = tournament(changes);
    for p in people(n) {
        let e = t.join(&p).unwrap();
        record(&mut t, &mut log, e);
    }
    (t, log)
}

#[test]
fn people_join_once_until_it_is_full_and_leave_while_open() {
    let (mut t, mut log) = joined(json!({"max_players": 3}), 2);
    assert_eq!(t.join("p01"), Err(RuleError::AlreadyJoined));
    assert_eq!(t.leave("p09"), Err(RuleError::NotJoined));
    let e = t.join(HOST).unwrap();
    record(&mut t, &mut log, e);
    assert_eq!(t.players, vec!["p01", "p02", HOST]);
    assert_eq!(t.join("p03"), Err(RuleError::TournamentFull));
    let e = t.leave(HOST).unwrap();
    record(&mut t, &mut log, e);
    assert_eq!(t.players, vec!["p01", "p02"]);
    assert_eq!(t.host, HOST, "the host who left stays host");
    assert_eq!(t.start_early("p01"), Err(RuleError::NotHost));
    let seating = t.start_early(HOST).unwrap();
    let started = t.round_started(1, seating, vec!["g1".into()], None, now());
    record(&mut t, &mut log, vec![started]);
    assert_eq!(t.status, TournamentStatus::Running);
    assert_eq!(t.join("p03"), Err(RuleError::TournamentNotOpen));
    assert_eq!(t.leave("p01"), Err(RuleError::TournamentNotOpen));
    assert_eq!(t.start_early(HOST), Err(RuleError::TournamentNotOpen));
}

#[test]
fn starting_needs_two_people() {
    let (t, _) = joined(json!({}), 1);
    assert_eq!(t.start_early(HOST), Err(RuleError::TooFewPlayers));
}

#[test]
fn event_kinds_are_their_serde_tags() {
    let (t, log) = joined(json!({}), 2);
    for e in log.iter().chain([
        &TournamentEvent::TournamentEnded {},
        &TournamentEvent::TournamentCancelled { reason: "x".into() },
        &TournamentEvent::RoundFinished {
            round: 1,
            seed: None,
        },
        &t.round_started(1, t.seating(), vec!["g".into()], None, now()),
    ]) {
        let v = serde_json::to_value(e).unwrap();
        assert_eq!(v["type"], e.kind());
        let back: TournamentEvent = serde_json::from_value(v).unwrap();
        assert_eq!(&back, e);
    }
}

// ---------------------------------------------------------------------------------------
// What is due, with real games played to their end.

/// Fisher–Yates with SplitMix.
struct Seeded(u64);

impl Dealer for Seeded {
    fn shuffle(&mut self, round: u16, cards: &mut [Card]) {
        let mut state = self.0 ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for i in (1..cards.len()).rev() {
            let j = usize::try_from(next() % (i as u64 + 1)).unwrap();
            cards.swap(i, j);
        }
    }
}

/// A table's game, created and started as the server does, played to its end by the first
/// legal move of whoever is awaited.
fn play_table(setup: &Setup, seats: &[SeatPlan], seed: u64) -> Game {
    let host = seats[0].as_deref().unwrap();
    let mut events = Game::create(NewGame {
        setup: setup.clone(),
        name: None,
        host_account: host,
        host_name: host,
        deal: None,
        seed: "00ff".into(),
        commitment: "c0ffee".into(),
    })
    .unwrap();
    let mut game = Game::from_events(&events).unwrap();
    let mut dealer = Seeded(seed);
    let mut send = |game: &mut Game, actor: Actor<'_>, command: Command| {
        let new = game.decide(actor, &command, &mut dealer).unwrap();
        for e in &new {
            game.apply(e);
        }
        events.extend(new);
    };
    for seat in &seats[1..] {
        match seat {
            Some(id) => send(&mut game, Actor::Account { id, name: id }, Command::Join {}),
            None => send(
                &mut game,
                Actor::Account {
                    id: host,
                    name: host,
                },
                Command::AddBot {
                    strategy: BotStrategy::Random,
                },
            ),
        }
    }
    send(
        &mut game,
        Actor::Account {
            id: host,
            name: host,
        },
        Command::Start {},
    );
    let mut guard = 0;
    while game.status() == Status::Active {
        guard += 1;
        assert!(guard < 10_000, "no progress");
        let seat = game.awaiting()[0].seat;
        let command = game.moves_for(seat)[0].clone();
        let actor = match &seats[usize::from(seat)] {
            Some(id) => Actor::Account { id, name: id },
            None => Actor::Bot { seat },
        };
        send(&mut game, actor, command);
    }
    game
}

#[test]
fn due_walks_a_tournament_from_its_start_to_its_end() {
    let starts = now() + Duration::hours(1);
    let (mut t, mut log) = joined(
        json!({"rounds": 2, "table_size": 3, "starts_at": starts.to_rfc3339(),
               "options": {"end": {"rounds": 1}}}),
        5,
    );
    assert_eq!(t.due(now()), Due::Nothing);
    let Due::StartRound { round: 1, seating } = t.due(starts) else {
        panic!("round 1 is due at the start time: {:?}", t.due(starts));
    };
    assert_eq!(seating.len(), 2);
    let games: Vec<String> = (1..=seating.len()).map(|i| format!("r1t{i}")).collect();
    let started = t.round_started(1, seating.clone(), games.clone(), None, starts);
    record(&mut t, &mut log, vec![started]);
    let deadline = starts + Duration::seconds(i64::from(t.setup.round_seconds));
    assert_eq!(t.rounds[0].deadline, deadline);
    assert_eq!(
        t.due(starts),
        Due::CheckTables {
            round: 1,
            games: games.clone(),
            deadline_passed: false
        }
    );
    assert_eq!(
        t.next_table("p01").map(|(r, p)| (r, p.game.clone())),
        Some((1, "r1t1".to_owned()))
    );
    let game1 = play_table(&t.setup.game, &seating[0], 1);
    assert_eq!(
        t.table_finished(1, "nope", &game1, TableEnd::Finished),
        None
    );
    assert_eq!(
        t.table_finished(2, "r1t1", &game1, TableEnd::Finished),
        None
    );
    let e = t
        .table_finished(1, "r1t1", &game1, TableEnd::Finished)
        .unwrap();
    record(&mut t, &mut log, vec![e]);
    assert_eq!(
        t.table_finished(1, "r1t1", &game1, TableEnd::Finished),
        None,
        "a table finishes once"
    );
    assert_eq!(t.next_table("p01"), None, "p01's table is over");
    assert_eq!(
        t.due(deadline),
        Due::CheckTables {
            round: 1,
            games: vec!["r1t2".into()],
            deadline_passed: true
        }
    );
    let game2 = play_table(&t.setup.game, &seating[1], 2);
    let e = t
        .table_finished(1, "r1t2", &game2, TableEnd::RoundDeadline)
        .unwrap();
    record(&mut t, &mut log, vec![e]);
    assert_eq!(t.due(deadline), Due::FinishRound { round: 1 });
    assert_eq!(
        t.standings(None).after_round,
        0,
        "an unfinished round does not count"
    );
    record(
        &mut t,
        &mut log,
        vec![TournamentEvent::RoundFinished {
            round: 1,
            seed: None,
        }],
    );
    let standings = t.standings(None);
    assert_eq!(standings.after_round, 1);
    let Due::StartRound { round: 2, seating } = t.due(deadline) else {
        panic!("round 2 is due");
    };
    // The seating of round 2 follows the standings of round 1.
    let order: Vec<String> = standings.rows.iter().map(|r| r.account.clone()).collect();
    assert_eq!(seating[0][0].as_deref(), Some(order[0].as_str()));
    let games: Vec<String> = (1..=seating.len()).map(|i| format!("r2t{i}")).collect();
    let started = t.round_started(2, seating.clone(), games, None, deadline);
    record(&mut t, &mut log, vec![started]);
    for (i, seats) in seating.iter().enumerate() {
        let game = play_table(&t.setup.game, seats, 10 + i as u64);
        let e = t
            .table_finished(2, &format!("r2t{}", i + 1), &game, TableEnd::Finished)
            .unwrap();
        record(&mut t, &mut log, vec![e]);
    }
    assert_eq!(t.due(deadline), Due::FinishRound { round: 2 });
    record(
        &mut t,
        &mut log,
        vec![
            TournamentEvent::RoundFinished {
                round: 2,
                seed: None,
            },
            TournamentEvent::TournamentEnded {},
        ],
    );
    assert_eq!(t.status, TournamentStatus::Finished);
    assert_eq!(t.due(deadline + Duration::days(1)), Due::Nothing);
    // Every person's table results are the games' totals and places.
    let standings = t.standings(None);
    assert_eq!(standings.after_round, 2);
    for row in &standings.rows {
        assert_eq!(row.tables.len(), 2, "{} sat every round", row.account);
        assert_eq!(row.total, row.tables.iter().map(|s| s.total).sum::<i32>());
    }
    let first: Vec<_> = t.standings(Some(1)).rows;
    assert!(first.iter().all(|r| r.tables.len() == 1));
}

#[test]
fn a_full_tournament_starts_without_a_start_time_and_a_lonely_one_is_cancelled() {
    let (t, _) = joined(json!({"max_players": 2}), 2);
    assert!(matches!(t.due(now()), Due::StartRound { round: 1, .. }));
    let (t, _) = joined(json!({}), 5);
    assert_eq!(t.due(now() + Duration::days(300)), Due::Nothing);
    let starts = now() + Duration::hours(1);
    let (mut t, mut log) = joined(json!({"starts_at": starts.to_rfc3339()}), 1);
    let Due::Cancel(reason) = t.due(starts) else {
        panic!("cancel");
    };
    record(
        &mut t,
        &mut log,
        vec![TournamentEvent::TournamentCancelled {
            reason: reason.clone(),
        }],
    );
    assert_eq!(t.status, TournamentStatus::Cancelled);
    assert_eq!(t.cancelled, Some(reason));
    assert_eq!(t.due(starts), Due::Nothing);
}

#[test]
fn places_are_those_of_the_ratings() {
    let setup = setup_of(with(input(), json!({"options": {"end": {"rounds": 1}}})))
        .unwrap()
        .game;
    let seats: Vec<SeatPlan> = vec![Some("a".into()), Some("b".into()), None, None];
    let game = play_table(&setup, &seats, 7);
    let p = places(&game);
    let totals = game.totals();
    for (i, place) in p.iter().enumerate() {
        let better = totals.iter().filter(|t| **t < totals[i]).count();
        assert_eq!(*place, i32::try_from(better).unwrap() + 1);
    }
}

// ---------------------------------------------------------------------------------------
// Standings on hand-made results.

fn result(seat: u8, account: Option<&str>, place: u8, total: i32, deals: &[i32]) -> SeatResult {
    SeatResult {
        seat,
        account: account.map(str::to_owned),
        place,
        total,
        deal_scores: deals.to_vec(),
        resigned: false,
    }
}

/// Starts round `round` with `tables` (seat plans), games `r<round>t<table>`.
fn start(
    t: &mut Tournament,
    log: &mut Vec<TournamentEvent>,
    round: u8,
    tables: &[&[Option<&str>]],
) {
    let seating: Vec<Vec<SeatPlan>> = tables
        .iter()
        .map(|seats| seats.iter().map(|s| s.map(str::to_owned)).collect())
        .collect();
    let games = (1..=tables.len())
        .map(|i| format!("r{round}t{i}"))
        .collect();
    let e = t.round_started(round, seating, games, None, now());
    record(t, log, vec![e]);
}

fn finish(
    t: &mut Tournament,
    log: &mut Vec<TournamentEvent>,
    round: u8,
    table: u16,
    results: Vec<SeatResult>,
) {
    let e = TournamentEvent::TableFinished {
        round,
        table,
        game: format!("r{round}t{table}"),
        end: TableEnd::Finished,
        results,
    };
    record(t, log, vec![e]);
}

fn row<'a>(
    s: &'a stammtisch_rules::tournament::Standings,
    who: &str,
) -> &'a stammtisch_rules::tournament::StandingRow {
    s.rows.iter().find(|r| r.account == who).unwrap()
}

#[test]
fn swiss_points_count_the_seats_behind_and_half_the_level_ones_and_buchholz_sums_the_opponents() {
    // Five people, tables of three: round 1 A B C | D E bot; round 2 A D bot | B C E.
    let (mut t, mut log) = tournament(json!({"table_size": 3, "rounds": 2}));
    for p in ["A", "B", "C", "D", "E"] {
        let e = t.join(p).unwrap();
        record(&mut t, &mut log, e);
    }
    let before = t.standings(None);
    assert_eq!(before.after_round, 0);
    assert_eq!(
        before
            .rows
            .iter()
            .map(|r| (r.rank, r.account.as_str(), r.points))
            .collect::<Vec<_>>(),
        vec![
            (1, "A", 0.0),
            (1, "B", 0.0),
            (1, "C", 0.0),
            (1, "D", 0.0),
            (1, "E", 0.0)
        ],
        "after round 0 everyone is level, in join order"
    );
    start(
        &mut t,
        &mut log,
        1,
        &[
            &[Some("A"), Some("B"), Some("C")],
            &[Some("D"), Some("E"), None],
        ],
    );
    // A 1st, B and C share 2nd; the bot wins table 2, D and E share 2nd.
    finish(
        &mut t,
        &mut log,
        1,
        1,
        vec![
            result(0, Some("A"), 1, 5, &[5]),
            result(1, Some("B"), 2, 9, &[9]),
            result(2, Some("C"), 2, 9, &[9]),
        ],
    );
    finish(
        &mut t,
        &mut log,
        1,
        2,
        vec![
            result(0, Some("D"), 2, 12, &[12]),
            result(1, Some("E"), 2, 12, &[12]),
            result(2, None, 1, 3, &[3]),
        ],
    );
    assert_eq!(t.standings(None).after_round, 0, "round 1 is not done yet");
    record(
        &mut t,
        &mut log,
        vec![TournamentEvent::RoundFinished {
            round: 1,
            seed: None,
        }],
    );
    let s1 = t.standings(None);
    // A: 2 behind = 2. B, C: 0 behind + 1 level = 0.5. D, E: 0 behind, 1 level = 0.5.
    assert_eq!(row(&s1, "A").points, 2.0);
    assert_eq!(row(&s1, "B").points, 0.5);
    assert_eq!(row(&s1, "D").points, 0.5);
    // Buchholz: A sat with B, C (0.5 + 0.5); B with A, C (2 + 0.5); D with E only (bots are nobody).
    assert_eq!(row(&s1, "A").tiebreak, 1.0);
    assert_eq!(row(&s1, "B").tiebreak, 2.5);
    assert_eq!(row(&s1, "D").tiebreak, 0.5);
    assert_eq!(
        s1.rows
            .iter()
            .map(|r| (r.rank, r.account.as_str()))
            .collect::<Vec<_>>(),
        vec![(1, "A"), (2, "B"), (2, "C"), (4, "D"), (4, "E")]
    );
    start(
        &mut t,
        &mut log,
        2,
        &[
            &[Some("A"), Some("D"), None],
            &[Some("B"), Some("C"), Some("E")],
        ],
    );
    finish(
        &mut t,
        &mut log,
        2,
        1,
        vec![
            result(0, Some("A"), 3, 20, &[20]),
            result(1, Some("D"), 1, 1, &[1]),
            result(2, None, 2, 4, &[4]),
        ],
    );
    finish(
        &mut t,
        &mut log,
        2,
        2,
        vec![
            result(0, Some("B"), 1, 0, &[0]),
            result(1, Some("C"), 3, 7, &[7]),
            result(2, Some("E"), 2, 6, &[6]),
        ],
    );
    record(
        &mut t,
        &mut log,
        vec![TournamentEvent::RoundFinished {
            round: 2,
            seed: None,
        }],
    );
    let s2 = t.standings(None);
    // A 2 + 0, B 0.5 + 2, C 0.5 + 0, D 0.5 + 2, E 0.5 + 1.
    let points: Vec<(&str, f64)> = s2
        .rows
        .iter()
        .map(|r| (r.account.as_str(), r.points))
        .collect();
    assert_eq!(row(&s2, "A").points, 2.0);
    assert_eq!(row(&s2, "B").points, 2.5);
    assert_eq!(row(&s2, "C").points, 0.5);
    assert_eq!(row(&s2, "D").points, 2.5);
    assert_eq!(row(&s2, "E").points, 1.5);
    // Buchholz with the final points: B met A, C (r1) and C, E (r2): 2 + 0.5 + 0.5 + 1.5 = 4.5.
    // D met E (r1), A (r2): 1.5 + 2 = 3.5. So B ranks above D on the tie-break.
    assert_eq!(row(&s2, "B").tiebreak, 4.5);
    assert_eq!(row(&s2, "D").tiebreak, 3.5);
    assert_eq!(
        s2.rows
            .iter()
            .map(|r| (r.rank, r.account.as_str()))
            .collect::<Vec<_>>(),
        vec![(1, "B"), (2, "D"), (3, "A"), (4, "E"), (5, "C")],
        "{points:?}"
    );
    let b = row(&s2, "B");
    assert_eq!(b.total, 9);
    assert_eq!(b.tables.len(), 2);
    assert_eq!(
        (b.tables[1].round, b.tables[1].table, b.tables[1].points),
        (2, 2, 2.0)
    );
    assert_eq!(b.tables[1].game, "r2t2");
    assert!(b.deals.is_empty());
    // Standings after round 1 are still those of round 1.
    assert_eq!(t.standings(Some(1)), s1);
    assert_eq!(Tournament::from_events(&log).unwrap(), t);
}

#[test]
fn duplicate_matchpoints_compare_each_hand_with_its_other_holders() {
    // Four tables of two, two deals per round: seat h of every table holds hand h.
    let (mut t, mut log) = tournament(json!({"format": "duplicate", "deals_per_round": 2,
        "table_size": 2, "rounds": 1}));
    for p in ["A", "B", "C", "D", "E", "F", "G"] {
        let e = t.join(p).unwrap();
        record(&mut t, &mut log, e);
    }
    start(
        &mut t,
        &mut log,
        1,
        &[
            &[Some("A"), Some("B")],
            &[Some("C"), Some("D")],
            &[Some("E"), Some("F")],
            &[Some("G"), None],
        ],
    );
    // Hand 0, deal 2: A 12 against C 8, E 15, G 21 → 2 matchpoints (better than E and G).
    finish(
        &mut t,
        &mut log,
        1,
        1,
        vec![
            result(0, Some("A"), 1, 15, &[3, 12]),
            result(1, Some("B"), 2, 20, &[10, 10]),
        ],
    );
    finish(
        &mut t,
        &mut log,
        1,
        2,
        vec![
            result(0, Some("C"), 1, 11, &[3, 8]),
            result(1, Some("D"), 2, 20, &[0, 20]),
        ],
    );
    finish(
        &mut t,
        &mut log,
        1,
        3,
        vec![
            result(0, Some("E"), 2, 18, &[3, 15]),
            result(1, Some("F"), 1, 5, &[0, 5]),
        ],
    );
    finish(
        &mut t,
        &mut log,
        1,
        4,
        vec![
            result(0, Some("G"), 2, 21, &[0, 21]),
            result(1, None, 1, 13, &[3, 10]),
        ],
    );
    record(
        &mut t,
        &mut log,
        vec![TournamentEvent::RoundFinished {
            round: 1,
            seed: Some("ab".into()),
        }],
    );
    assert_eq!(t.rounds[0].seed.as_deref(), Some("ab"));
    let s = t.standings(None);
    let a = row(&s, "A");
    let deal2 = a.deals.iter().find(|d| d.deal == 2).unwrap();
    assert_eq!(
        (
            deal2.round,
            deal2.number,
            deal2.hand,
            deal2.table,
            deal2.score
        ),
        (1, 2, 0, 1, 12)
    );
    assert_eq!(
        deal2
            .others
            .iter()
            .map(|o| (o.table, o.account.as_deref(), o.score))
            .collect::<Vec<_>>(),
        vec![(2, Some("C"), 8), (3, Some("E"), 15), (4, Some("G"), 21)]
    );
    assert_eq!(deal2.matchpoints, 2.0);
    // Deal 1, hand 0: A 3 against C 3, E 3, G 0 → ties half: 1.
    let deal1 = a.deals.iter().find(|d| d.deal == 1).unwrap();
    assert_eq!(deal1.matchpoints, 1.0);
    assert_eq!(a.points, 3.0);
    assert_eq!(a.tiebreak, 15.0);
    assert_eq!(a.tables[0].points, 3.0);
    // Hand 1, deal 1: B 10, D 0, F 0, bot 3 → B 0. Deal 2: B 10, D 20, F 5, bot 10 → 1 + 0.5.
    let b = row(&s, "B");
    assert_eq!(b.points, 1.5);
    assert_eq!(b.deals.len(), 2);
    // F: deal 1: 0 vs 10, 0, 3 → 2.5; deal 2: 5 vs 10, 20, 10 → 3. D: 2.5 + 0 = 2.5.
    assert_eq!(row(&s, "F").points, 5.5);
    assert_eq!(row(&s, "D").points, 2.5);
    // C: deal 1: 3 vs 3, 3, 0 → 1; deal 2: 8 vs 12, 15, 21 → 3. 4 points, tie-break 11.
    // G: deal 1: 0 vs 3, 3, 3 → 3; deal 2: 21 → 0. 3 points, tie-break 21; A: 3 points, 15.
    assert_eq!(row(&s, "C").points, 4.0);
    assert_eq!(row(&s, "G").points, 3.0);
    assert_eq!(row(&s, "G").tiebreak, 21.0);
    assert_eq!(s.rows.len(), 7, "the bot has no row");
    assert_eq!(
        s.rows
            .iter()
            .map(|r| (r.rank, r.account.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (1, "F"),
            (2, "C"),
            (3, "A"),
            (4, "G"),
            (5, "D"),
            (6, "E"),
            (7, "B")
        ],
        "lower deal scores break the tie between A and G"
    );
}

#[test]
fn equal_points_and_tiebreaks_share_a_rank() {
    let (mut t, mut log) = tournament(json!({"format": "duplicate", "table_size": 2, "rounds": 1}));
    for p in ["A", "B", "C", "D"] {
        let e = t.join(p).unwrap();
        record(&mut t, &mut log, e);
    }
    start(
        &mut t,
        &mut log,
        1,
        &[&[Some("A"), Some("B")], &[Some("C"), Some("D")]],
    );
    finish(
        &mut t,
        &mut log,
        1,
        1,
        vec![
            result(0, Some("A"), 1, 4, &[4]),
            result(1, Some("B"), 2, 9, &[9]),
        ],
    );
    finish(
        &mut t,
        &mut log,
        1,
        2,
        vec![
            result(0, Some("C"), 1, 4, &[4]),
            result(1, Some("D"), 2, 2, &[2]),
        ],
    );
    record(
        &mut t,
        &mut log,
        vec![TournamentEvent::RoundFinished {
            round: 1,
            seed: None,
        }],
    );
    let s = t.standings(None);
    assert_eq!(
        s.rows
            .iter()
            .map(|r| (r.rank, r.account.as_str(), r.points))
            .collect::<Vec<_>>(),
        vec![(1, "D", 1.0), (2, "A", 0.5), (2, "C", 0.5), (4, "B", 0.0)]
    );
}

// ---------------------------------------------------------------------------------------
// Seating.

/// How often each pair met in the started rounds.
fn meetings(t: &Tournament) -> std::collections::BTreeMap<(String, String), u32> {
    let mut met = std::collections::BTreeMap::new();
    for table in t.rounds.iter().flat_map(|r| &r.tables) {
        let ps: Vec<&String> = table.seats.iter().flatten().collect();
        for (i, a) in ps.iter().enumerate() {
            for b in &ps[i + 1..] {
                let key = if a < b {
                    ((*a).clone(), (*b).clone())
                } else {
                    ((*b).clone(), (*a).clone())
                };
                *met.entry(key).or_insert(0) += 1;
            }
        }
    }
    met
}

/// Repeated meetings of a seating: for every pair at one table, how often it met before.
fn repeats(t: &Tournament, seating: &[Vec<SeatPlan>]) -> u32 {
    let met = meetings(t);
    let mut sum = 0;
    for table in seating {
        let ps: Vec<&String> = table.iter().flatten().collect();
        for (i, a) in ps.iter().enumerate() {
            for b in &ps[i + 1..] {
                let key = if a < b {
                    ((*a).clone(), (*b).clone())
                } else {
                    ((*b).clone(), (*a).clone())
                };
                sum += met.get(&key).copied().unwrap_or(0);
            }
        }
    }
    sum
}

/// The fewest repeated meetings of any seating of the people at tables of these sizes (in
/// any order), by trying every one.
fn fewest_repeats(t: &Tournament, sizes: &[usize]) -> u32 {
    fn go(
        t: &Tournament,
        left: &[String],
        sizes: &mut Vec<usize>,
        tables: &mut Vec<Vec<SeatPlan>>,
        best: &mut u32,
    ) {
        let Some(first) = left.first().cloned() else {
            *best = (*best).min(repeats(t, tables));
            return;
        };
        let mut distinct = sizes.clone();
        distinct.sort_unstable();
        distinct.dedup();
        for size in distinct {
            let k = sizes.iter().position(|s| *s == size).unwrap();
            sizes.remove(k);
            // Every set of `size - 1` of the others joins `first`.
            let others: Vec<String> = left[1..].to_vec();
            for pick in combinations(others.len(), size - 1) {
                let table: Vec<String> = std::iter::once(first.clone())
                    .chain(pick.iter().map(|&i| others[i].clone()))
                    .collect();
                let rest: Vec<String> = left
                    .iter()
                    .filter(|p| !table.contains(p))
                    .cloned()
                    .collect();
                tables.push(table.into_iter().map(Some).collect());
                go(t, &rest, sizes, tables, best);
                tables.pop();
            }
            sizes.insert(k, size);
        }
    }
    fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
        if k == 0 {
            return vec![Vec::new()];
        }
        (0..n)
            .flat_map(|first| {
                combinations(n - first - 1, k - 1)
                    .into_iter()
                    .map(move |rest| {
                        std::iter::once(first)
                            .chain(rest.into_iter().map(|r| r + first + 1))
                            .collect()
                    })
            })
            .collect()
    }
    let mut left = t.players.clone();
    left.sort();
    let mut best = u32::MAX;
    go(t, &left, &mut sizes.to_vec(), &mut Vec::new(), &mut best);
    best
}

/// Checks the shape of a seating: everyone once, `ceil(n / size)` tables of `size` seats,
/// people per table differing by at most one, bots only after the people.
fn check_shape(t: &Tournament, seating: &[Vec<SeatPlan>]) -> Vec<usize> {
    let n = t.players.len();
    let size = usize::from(t.setup.table_size);
    assert_eq!(seating.len(), n.div_ceil(size));
    let mut seen: Vec<String> = seating.iter().flatten().flatten().cloned().collect();
    seen.sort();
    let mut everyone = t.players.clone();
    everyone.sort();
    assert_eq!(seen, everyone, "everyone exactly once");
    let counts: Vec<usize> = seating.iter().map(|s| s.iter().flatten().count()).collect();
    for table in seating {
        assert_eq!(table.len(), size);
        let people = table.iter().flatten().count();
        assert!(
            table[people..].iter().all(Option::is_none),
            "bots only fill: {table:?}"
        );
    }
    let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
    assert!(hi - lo <= 1, "tables differ by at most one: {counts:?}");
    counts
}

/// SplitMix64's finaliser: a well-spread hash of `x`.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A made-up result of a table: places (ties possible) from `seed`, totals to match.
fn fake_results(seats: &[SeatPlan], seed: u64) -> Vec<SeatResult> {
    let n = seats.len() as u64;
    seats
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let place = u8::try_from(mix(seed ^ ((i as u64) << 32)) % n + 1).unwrap();
            result(
                u8::try_from(i).unwrap(),
                s.as_deref(),
                place,
                i32::from(place) * 10,
                &[i32::from(place)],
            )
        })
        .collect()
}

/// Plays `rounds` rounds with made-up results; returns the repeats of each round's seating
/// and the fewest possible (brute force when `brute`).
fn simulate(
    n: usize,
    table_size: u8,
    rounds: u8,
    seed: u64,
    brute: bool,
) -> Vec<(u32, Option<u32>)> {
    let (mut t, mut log) = joined(
        json!({"table_size": table_size, "rounds": rounds, "max_players": n}),
        n,
    );
    let mut out = Vec::new();
    for round in 1..=rounds {
        let Due::StartRound { round: r, seating } = t.due(now()) else {
            panic!("round {round} due: {:?}", t.due(now()));
        };
        assert_eq!(r, round);
        let clock = cpu_time::ThreadTime::now();
        assert_eq!(t.seating(), seating, "deterministic");
        // The search is bounded: even unoptimised, a seating takes seconds at most.
        assert!(
            clock.elapsed() < std::time::Duration::from_secs(15),
            "seating is slow"
        );
        let counts = check_shape(&t, &seating);
        let fewest = brute.then(|| fewest_repeats(&t, &counts));
        out.push((repeats(&t, &seating), fewest));
        let games = (1..=seating.len())
            .map(|i| format!("r{round}t{i}"))
            .collect();
        let e = t.round_started(round, seating.clone(), games, None, now());
        record(&mut t, &mut log, vec![e]);
        for (i, seats) in seating.iter().enumerate() {
            let table = u16::try_from(i + 1).unwrap();
            finish(
                &mut t,
                &mut log,
                round,
                table,
                fake_results(seats, seed ^ (u64::from(round) << 8) ^ i as u64),
            );
        }
        record(
            &mut t,
            &mut log,
            vec![TournamentEvent::RoundFinished { round, seed: None }],
        );
        check_standings(&t, round);
    }
    out
}

/// Swiss standings after `round`: best first, ranks shared exactly by equal rows, and each
/// table hands out `k (k − 1) / 2` points among its `k` seats (people's share: at most that,
/// all of it when no bot sat there).
fn check_standings(t: &Tournament, round: u8) {
    let s = t.standings(None);
    assert_eq!(s.after_round, round);
    assert_eq!(s.rows.len(), t.players.len());
    for (i, w) in s.rows.windows(2).enumerate() {
        let (a, b) = (&w[0], &w[1]);
        assert!(
            a.points > b.points || (a.points == b.points && a.tiebreak >= b.tiebreak),
            "sorted"
        );
        let tied = a.points == b.points && a.tiebreak == b.tiebreak;
        assert_eq!(b.rank == a.rank, tied);
        if !tied {
            assert_eq!(usize::from(b.rank), i + 2);
        }
    }
    let state = &t.rounds[usize::from(round) - 1];
    for plan in &state.tables {
        let k = plan.seats.len();
        let people: f64 = s
            .rows
            .iter()
            .flat_map(|r| &r.tables)
            .filter(|st| st.round == round && st.table == plan.table)
            .map(|st| st.points)
            .sum();
        let all = (k * (k - 1) / 2) as f64;
        if plan.seats.iter().all(Option::is_some) {
            assert_eq!(people, all, "table {} of round {round}", plan.table);
        } else {
            assert!(people <= all);
        }
    }
}

#[test]
fn eight_people_in_pairs_never_meet_twice_in_seven_rounds() {
    // Seven rounds without a repeat need foresight: after five greedy rounds the pairs not
    // yet met can form a triangle and a pentagon, which no sixth round covers.
    for seed in 0..200 {
        let rounds = simulate(8, 2, 7, seed, false);
        assert!(
            rounds.iter().all(|(r, _)| *r == 0),
            "seed {seed}: {rounds:?}"
        );
    }
}

#[test]
fn small_fields_meet_everyone_once_where_a_schedule_allows() {
    // 8 people at tables of 2, three rounds; 10 at tables of 2, nine rounds; 9 at tables of
    // 3, four rounds (the affine plane of order 3).
    for (n, size, rounds) in [(8, 2, 3), (10, 2, 9), (9, 3, 4)] {
        for seed in 0..20 {
            let got = simulate(n, size, rounds, seed, false);
            assert!(
                got.iter().all(|(r, _)| *r == 0),
                "{n}/{size} seed {seed}: {got:?}"
            );
        }
    }
}

#[test]
fn twelve_people_at_tables_of_four_repeat_as_little_as_possible() {
    for seed in 0..3 {
        let rounds = simulate(12, 4, 3, seed, true);
        assert_eq!(rounds[0], (0, Some(0)));
        assert_eq!(
            rounds[1],
            (3, Some(3)),
            "round 2 cannot do better than one pair a table"
        );
        for (got, fewest) in &rounds {
            assert_eq!(Some(*got), *fewest);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn seatings_seat_everyone_once_and_repeat_no_more_than_needed(
        n in 2_usize..=10,
        table_size in 2_u8..=5,
        rounds in 1_u8..=4,
        seed in any::<u64>(),
    ) {
        for (got, fewest) in simulate(n, table_size, rounds, seed, true) {
            prop_assert_eq!(Some(got), fewest);
        }
    }
}

#[test]
fn a_large_field_is_seated_without_repeats() {
    let rounds = simulate(256, 10, 5, 3, false);
    assert!(rounds.iter().all(|(r, _)| *r == 0), "{rounds:?}");
}

#[test]
fn a_field_that_must_repeat_is_still_seated_in_bounded_time() {
    // 12 people at tables of 4 over 12 rounds: from round 2 on, repeats are unavoidable.
    let rounds = simulate(12, 4, 12, 9, false);
    assert_eq!(rounds[1].0, 3);
    assert_eq!(rounds.len(), 12);
}

#[test]
fn someone_who_left_before_the_start_has_no_row_and_everyone_else_has_one() {
    let (mut t, mut log) = joined(json!({}), 3);
    let e = t.leave("p02").unwrap();
    record(&mut t, &mut log, e);
    let s = t.standings(None);
    assert_eq!(
        s.rows
            .iter()
            .map(|r| r.account.as_str())
            .collect::<Vec<_>>(),
        vec!["p01", "p03"]
    );
    assert!(s.rows.iter().all(|r| r.rank == 1 && r.tables.is_empty()));
    let seating = t.seating();
    assert!(seating.iter().flatten().flatten().all(|p| p != "p02"));
}

#[test]
fn a_stream_that_does_not_start_with_its_creation_folds_to_nothing() {
    assert_eq!(Tournament::from_events(&[]), None);
    let joined = TournamentEvent::PlayerJoined {
        account: "p01".into(),
    };
    assert_eq!(Tournament::from_events(&[joined]), None);
}

#[test]
fn a_resigned_person_places_last_and_brings_no_points() {
    let setup = setup_of(with(input(), json!({"options": {"end": {"rounds": 1}}})))
        .unwrap()
        .game;
    let seats: Vec<SeatPlan> = vec![Some("a".into()), Some("b".into()), Some("c".into()), None];
    // Seat 1 resigns before the first card: a bot plays it out, and it still places last.
    let game = {
        let host = "a";
        let mut events = Game::create(NewGame {
            setup,
            name: None,
            host_account: host,
            host_name: host,
            deal: None,
            seed: "00ff".into(),
            commitment: "c0ffee".into(),
        })
        .unwrap();
        let mut game = Game::from_events(&events).unwrap();
        let mut dealer = Seeded(3);
        let mut send = |game: &mut Game, actor: Actor<'_>, command: Command| {
            let new = game.decide(actor, &command, &mut dealer).unwrap();
            for e in &new {
                game.apply(e);
            }
            events.extend(new);
        };
        let a = Actor::Account { id: "a", name: "a" };
        send(
            &mut game,
            Actor::Account { id: "b", name: "b" },
            Command::Join {},
        );
        send(
            &mut game,
            Actor::Account { id: "c", name: "c" },
            Command::Join {},
        );
        send(
            &mut game,
            a,
            Command::AddBot {
                strategy: BotStrategy::Random,
            },
        );
        send(&mut game, a, Command::Start {});
        send(
            &mut game,
            Actor::Account { id: "b", name: "b" },
            Command::Resign {},
        );
        let mut guard = 0;
        while game.status() == Status::Active {
            guard += 1;
            assert!(guard < 10_000);
            let seat = game.awaiting()[0].seat;
            let command = game.moves_for(seat)[0].clone();
            let actor = match (
                &seats[usize::from(seat)],
                game.seats[usize::from(seat)].resigned,
            ) {
                (Some(id), false) => Actor::Account { id, name: id },
                _ => Actor::Bot { seat },
            };
            send(&mut game, actor, command);
        }
        game
    };
    let (mut t, mut log) = tournament(json!({"rounds": 1}));
    for p in ["a", "b", "c"] {
        let e = t.join(p).unwrap();
        record(&mut t, &mut log, e);
    }
    let e = t.round_started(1, vec![seats], vec!["g".into()], None, now());
    record(&mut t, &mut log, vec![e]);
    let e = t.table_finished(1, "g", &game, TableEnd::Finished).unwrap();
    let TournamentEvent::TableFinished { results, .. } = &e else {
        panic!("table_finished");
    };
    assert!(results[1].resigned);
    assert_eq!(results[1].place, 4, "the resigned seat places last");
    assert_eq!(results[1].account.as_deref(), Some("b"));
    assert_eq!(results[3].account, None, "a bot");
    assert_eq!(results[0].deal_scores.len(), 1);
    record(&mut t, &mut log, vec![e]);
    record(
        &mut t,
        &mut log,
        vec![TournamentEvent::RoundFinished {
            round: 1,
            seed: None,
        }],
    );
    let s = t.standings(None);
    assert_eq!(
        s.rows.last().map(|r| (r.account.as_str(), r.points)),
        Some(("b", 0.0))
    );
}
