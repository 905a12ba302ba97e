#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Clocks: the time control's validation, the bank arithmetic (charge, increment, cap),
//! simultaneous choices charging only the seats still choosing, run-outs, `hand_to_bot`
//! and the pause's commands. Time is passed in; nothing here reads a clock.

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::json;
use stammtisch_rules::clocks::{charge, credit};
use stammtisch_rules::{
    AtZero, BotStrategy, Command, Event, Game, RuleError, Ruleset, SeatClock, Status, TimeControl,
};

mod common;

use common::{HOST, NoShuffle, Table, acct, host, new_game, setup};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap()
}

fn tc(value: serde_json::Value) -> Result<TimeControl, serde_json::Error> {
    serde_json::from_value(value)
}

/// A started game of `ruleset` with `time_control`: the host and `others` people, then
/// `bots` bots; the clocks started at `t0`.
fn clocked(
    ruleset: Ruleset,
    control: TimeControl,
    others: &[&'static str],
    bots: u8,
) -> Table<NoShuffle> {
    let players = 1 + u8::try_from(others.len()).unwrap() + bots;
    let mut t = Table::create(
        new_game(setup(ruleset, players, ruleset.default_options()), None),
        NoShuffle,
    );
    let set = Event::TimeControlSet {
        time_control: control,
    };
    t.game.apply(&set);
    t.events.push(set);
    for (i, id) in others.iter().enumerate() {
        t.cmd(acct(id), &Command::Join {});
        t.humans[i + 1] = Some(id);
    }
    for _ in 0..bots {
        t.cmd(
            host(),
            &Command::AddBot {
                strategy: BotStrategy::Random,
            },
        );
    }
    t.cmd(host(), &Command::Start {});
    assert_eq!(t.game.status(), Status::Active);
    refresh(&mut t, None, t0());
    t
}

/// Writes the clocks after a change, as the server does.
fn refresh(t: &mut Table<NoShuffle>, acted: Option<u8>, now: DateTime<Utc>) -> Option<Event> {
    let event = t.game.next_clocks(acted, now)?;
    t.game.apply(&event);
    t.events.push(event.clone());
    assert_eq!(Game::from_events(&t.events).unwrap(), t.game, "replays");
    Some(event)
}

fn clocks(t: &Table<NoShuffle>, at: DateTime<Utc>) -> Vec<SeatClock> {
    t.game.clocks_at(at).unwrap()
}

fn live(initial: u32, increment: u32, max: Option<u32>) -> TimeControl {
    tc(json!({"kind": "live", "initial_seconds": initial, "increment_seconds": increment, "max_seconds": max}))
        .unwrap()
}

#[test]
fn time_controls_are_checked_as_they_are_read() {
    let ok = tc(json!({"kind": "correspondence", "initial_seconds": 86400, "increment_seconds": 86400, "max_seconds": 604800})).unwrap();
    assert!(ok.vacation, "correspondence allows vacation by default");
    assert_eq!(ok.at_zero, AtZero::BotMoves);
    let live = tc(json!({"kind": "live", "initial_seconds": 180})).unwrap();
    assert!(!live.vacation);
    assert_eq!(live.increment_seconds, 0);
    for bad in [
        json!({"kind": "live", "initial_seconds": 29}),
        json!({"kind": "live", "initial_seconds": 7201}),
        json!({"kind": "live", "initial_seconds": 180, "increment_seconds": 601}),
        json!({"kind": "live", "initial_seconds": 180, "max_seconds": 179}),
        json!({"kind": "live", "initial_seconds": 180, "vacation": true}),
        json!({"kind": "correspondence", "initial_seconds": 3599}),
        json!({"kind": "correspondence", "initial_seconds": 2_592_001}),
        json!({"kind": "correspondence", "initial_seconds": 3600, "increment_seconds": 2_592_001}),
        json!({"kind": "blitz", "initial_seconds": 180}),
        json!({"kind": "live", "initial_seconds": 180, "surprise": 1}),
        json!({"kind": "live", "initial_seconds": 180, "at_zero": "panic"}),
    ] {
        assert!(tc(bad.clone()).is_err(), "{bad} was accepted");
    }
}

#[test]
fn increments_are_capped_but_never_take_away() {
    let control = live(180, 5, Some(182));
    assert_eq!(credit(100_000, &control), 105_000);
    assert_eq!(credit(179_000, &control), 182_000, "capped");
    assert_eq!(
        credit(190_000, &control),
        190_000,
        "above the cap keeps its bank"
    );
    let uncapped = live(180, 5, None);
    assert_eq!(credit(179_000, &uncapped), 184_000);
    assert_eq!(charge(1_000, 2_500), 0, "never below zero");
    assert_eq!(charge(10_000, 2_500), 7_500);
}

#[test]
fn simultaneous_choices_charge_only_the_seats_still_choosing() {
    let mut t = clocked(Ruleset::SixNimmt, live(180, 5, None), &["ben", "cid"], 0);
    assert!(
        clocks(&t, t0())
            .iter()
            .all(|c| c.running && c.remaining_ms == 180_000)
    );
    // Seat 0 chooses after 10 s: its bank is charged and credited, the others run on.
    let t1 = t0() + Duration::seconds(10);
    let card = t.game.moves_for(0)[0].clone();
    t.by(0, &card);
    refresh(&mut t, Some(0), t1).expect("the clocks changed");
    let at1 = clocks(&t, t1);
    assert_eq!((at1[0].remaining_ms, at1[0].running), (175_000, false));
    assert_eq!((at1[1].remaining_ms, at1[1].running), (170_000, true));
    // 15 s later seat 1 chooses: seat 0 stood still, seat 2 ran 25 s in all.
    let t2 = t1 + Duration::seconds(15);
    let card = t.game.moves_for(1)[0].clone();
    t.by(1, &card);
    refresh(&mut t, Some(1), t2);
    let at2 = clocks(&t, t2);
    assert_eq!(at2[0].remaining_ms, 175_000);
    assert_eq!((at2[1].remaining_ms, at2[1].running), (160_000, false));
    assert_eq!((at2[2].remaining_ms, at2[2].running), (155_000, true));
    // The flag of the one still choosing falls when its bank is spent.
    let deadlines = &t.game.deadlines;
    assert_eq!(deadlines.len(), 1);
    assert_eq!(deadlines[0].seat, 2);
    assert_eq!(deadlines[0].at, t2 + Duration::milliseconds(155_000));
    // Nothing changed, nothing written.
    assert!(
        t.game
            .next_clocks(None, t2 + Duration::seconds(3))
            .is_none()
    );
}

#[test]
fn replacing_a_selection_earns_no_increment() {
    let mut t = clocked(Ruleset::SixNimmt, live(60, 10, None), &["ben"], 0);
    let t1 = t0() + Duration::seconds(5);
    let moves = t.game.moves_for(0);
    t.by(0, &moves[0]);
    refresh(&mut t, Some(0), t1);
    let t2 = t1 + Duration::seconds(5);
    let moves = t.game.moves_for(0);
    t.by(0, &moves[1]);
    assert!(t.game.next_clocks(Some(0), t2).is_none());
    assert_eq!(clocks(&t, t2)[0].remaining_ms, 65_000);
}

#[test]
fn in_nimm_oder_schieb_only_the_active_player_runs() {
    let t = clocked(
        Ruleset::NimmOderSchieb,
        live(60, 2, None),
        &["ben", "cid"],
        0,
    );
    let active = t.game.awaiting()[0].seat;
    let running: Vec<u8> = clocks(&t, t0())
        .iter()
        .filter(|c| c.running)
        .map(|c| c.seat)
        .collect();
    assert_eq!(running, vec![active]);
}

#[test]
fn a_run_out_flags_the_seat_for_the_others_to_decide() {
    let control =
        tc(json!({"kind": "live", "initial_seconds": 30, "at_zero": "others_decide"})).unwrap();
    let mut t = clocked(Ruleset::SixNimmt, control, &["ben"], 0);
    let flag = t.game.deadlines[0].at;
    assert_eq!(flag, t0() + Duration::seconds(30));
    let out = t.game.run_out(1);
    assert_eq!(
        out,
        vec![Event::ClockRanOut {
            seat: 1,
            timeouts: 1
        }]
    );
    for e in &out {
        t.game.apply(e);
        t.events.push(e.clone());
    }
    refresh(&mut t, None, flag);
    assert!(t.game.is_flagged(1));
    assert!(
        t.game.deadlines.iter().all(|d| d.seat != 1),
        "a flagged seat waits"
    );
    assert!(
        t.game
            .legal_for(HOST)
            .contains(&Command::HandToBot { seat: 1 })
    );
    assert!(
        !t.game
            .legal_for("ben")
            .iter()
            .any(|c| matches!(c, Command::HandToBot { .. }))
    );
    assert_eq!(
        t.err(acct("ben"), &Command::HandToBot { seat: 0 }),
        RuleError::NotFlagged { seat: 0 }
    );
    let handed = t.cmd(host(), &Command::HandToBot { seat: 1 });
    assert!(matches!(handed[0], Event::SeatHandedToBot { seat: 1, .. }));
    assert!(t.game.seats[1].resigned);
    assert!(t.game.clock.as_ref().unwrap().lost_on_time[1]);
}

#[test]
fn others_decide_with_bots_at_the_start_is_bot_moves() {
    let control =
        tc(json!({"kind": "live", "initial_seconds": 30, "at_zero": "others_decide"})).unwrap();
    let t = clocked(Ruleset::SixNimmt, control, &["ben"], 1);
    assert_eq!(t.game.clock.as_ref().unwrap().at_zero(), AtZero::BotMoves);
}

#[test]
fn the_third_run_out_hands_the_seat_to_a_bot() {
    let mut t = clocked(Ruleset::SixNimmt, live(30, 0, None), &["ben"], 0);
    for n in 1..=3u8 {
        let out = t.game.run_out(1);
        assert_eq!(
            out[0],
            Event::ClockRanOut {
                seat: 1,
                timeouts: n
            }
        );
        assert_eq!(out.len(), if n == 3 { 2 } else { 1 });
        for e in &out {
            t.game.apply(e);
            t.events.push(e.clone());
        }
    }
    assert!(t.game.seats[1].bot_controlled());
}

#[test]
fn pauses_need_every_person_and_stop_every_clock() {
    let corr = tc(json!({"kind": "correspondence", "initial_seconds": 86400})).unwrap();
    let mut t = clocked(Ruleset::SixNimmt, corr, &["ben", "cid"], 0);
    assert!(t.game.legal_for("ben").contains(&Command::ProposePause {}));
    assert_eq!(
        t.err(acct("ben"), &Command::AcceptPause {}),
        RuleError::NoPauseProposed
    );
    t.cmd(acct("ben"), &Command::ProposePause {});
    assert_eq!(
        t.err(acct("ben"), &Command::AcceptPause {}),
        RuleError::PauseAlreadyAccepted
    );
    assert_eq!(
        t.err(host(), &Command::ProposePause {}),
        RuleError::PauseAlreadyProposed
    );
    t.cmd(host(), &Command::DeclinePause {});
    assert!(t.game.clock.as_ref().unwrap().pause.is_none());
    t.cmd(acct("ben"), &Command::ProposePause {});
    t.cmd(host(), &Command::AcceptPause {});
    assert!(
        !t.game
            .clock
            .as_ref()
            .unwrap()
            .pause
            .as_ref()
            .unwrap()
            .paused
    );
    let events = t.cmd(acct("cid"), &Command::AcceptPause {});
    assert!(events.contains(&Event::ClocksPaused {}));
    let t1 = t0() + Duration::hours(2);
    refresh(&mut t, None, t1);
    assert!(clocks(&t, t1).iter().all(|c| !c.running));
    assert!(t.game.deadlines.is_empty(), "no flag falls while paused");
    let later = t1 + Duration::days(3);
    assert!(
        clocks(&t, later)
            .iter()
            .all(|c| c.remaining_ms == 86_400_000 - 7_200_000)
    );
    assert_eq!(t.game.legal_for(HOST).last(), Some(&Command::Resume {}));
    t.cmd(host(), &Command::Resume {});
    refresh(&mut t, None, later);
    assert!(clocks(&t, later).iter().all(|c| c.running));
}

#[test]
fn live_games_cannot_pause() {
    let mut t = clocked(Ruleset::SixNimmt, live(60, 0, None), &["ben"], 0);
    assert_eq!(
        t.err(host(), &Command::ProposePause {}),
        RuleError::PauseNotAllowed
    );
    assert!(!t.game.legal_for(HOST).contains(&Command::ProposePause {}));
}

/// Plays first moves (each seat's clock refreshed after its move) until `action` is asked;
/// then only the asked seat's clock runs.
fn only_the_asked_seat_runs_for(ruleset: Ruleset, action: &str) {
    let mut t = clocked(ruleset, live(600, 1, None), &["ben", "cid"], 0);
    let mut now = t0();
    for _ in 0..2_000 {
        let asks = t.game.awaiting();
        if asks.iter().any(|a| a.action == action) {
            assert_eq!(asks.len(), 1, "{asks:?}");
            let running: Vec<u8> = clocks(&t, now)
                .iter()
                .filter(|c| c.running)
                .map(|c| c.seat)
                .collect();
            assert_eq!(running, vec![asks[0].seat]);
            return;
        }
        assert_eq!(t.game.status(), Status::Active);
        let seat = asks[0].seat;
        let command = t.game.moves_for(seat)[0].clone();
        t.by(seat, &command);
        now += Duration::seconds(1);
        refresh(&mut t, Some(seat), now);
    }
    panic!("{action} was never asked");
}

#[test]
fn take_row_runs_only_the_asked_seat() {
    only_the_asked_seat_runs_for(Ruleset::SixNimmt, "take_row");
}

#[test]
fn keep_card_runs_only_the_asked_seat() {
    only_the_asked_seat_runs_for(Ruleset::XNimmt, "keep_card");
}

#[test]
fn vacation_grows_the_bank_and_a_seat_away_does_not_run() {
    let corr = tc(json!({"kind": "correspondence", "initial_seconds": 3600})).unwrap();
    let mut t = clocked(Ruleset::SixNimmt, corr, &["ben"], 0);
    let spent = Event::VacationSpent { seat: 1, hours: 2 };
    t.game.apply(&spent);
    t.events.push(spent);
    assert_eq!(clocks(&t, t0())[1].remaining_ms, 3 * 3_600_000);
    assert_eq!(Game::from_events(&t.events).unwrap(), t.game);
    // Away (as the accounts' vacation writes it): not running, woken at its return.
    let back = t0() + Duration::hours(5);
    let mut snapshot = match t.game.next_clocks(None, t0()) {
        Some(Event::ClocksSet(s)) => *s,
        _ => panic!("vacation changed the bank"),
    };
    snapshot.clocks[1].away_until = Some(back);
    snapshot.clocks[1].running = false;
    let away = Event::ClocksSet(Box::new(snapshot));
    t.game.apply(&away);
    t.events.push(away);
    let deadline = t.game.deadlines.iter().find(|d| d.seat == 1).unwrap();
    assert_eq!(deadline.at, back);
    let t1 = t0() + Duration::hours(1);
    assert!(t.game.next_clocks(None, t1).is_none(), "still away");
    assert_eq!(clocks(&t, t1)[1].remaining_ms, 3 * 3_600_000);
    let after = back + Duration::seconds(1);
    refresh(&mut t, None, after).expect("back: the clock runs again");
    let c = &clocks(&t, after)[1];
    assert!(c.running && c.away_until.is_none());
    assert_eq!(c.remaining_ms, 3 * 3_600_000);
}
