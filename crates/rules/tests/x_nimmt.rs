#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Given/when/then scenarios for x-nimmt over prepared deals: rows of capacity 3, 4 and 5,
//! keeping a taken card for the X row, the X stack, the end of a round and the score.

mod common;

use common::{
    HOST, NoShuffle, c, cards, count, create_err, deal, deal_filled, draft, keep, kept, new_game,
    numbers, placed, play, round_ended, setup, signed, started, take, types,
};
use stammtisch_rules::{
    Awaiting, CardSet, DealOption, DeckOption, EndCondition, Event, Game, Layout, Options,
    PlacementOption, Preset, RuleError, Ruleset, ScoreTable, Setup, Side, Status,
};

fn x(players: u8, end: EndCondition) -> Setup {
    setup(
        Ruleset::XNimmt,
        players,
        Options {
            end,
            ..Options::default()
        },
    )
}

fn x_default(players: u8) -> Setup {
    setup(Ruleset::XNimmt, players, Ruleset::XNimmt.default_options())
}

fn awaiting(seat: u8, action: &'static str) -> Vec<Awaiting> {
    vec![Awaiting { seat, action }]
}

fn x_row(t: &common::Table<NoShuffle>, seat: usize) -> Vec<u8> {
    numbers(t.game.view_for(None).seats[seat].x_row.clone().unwrap())
}

fn x_stack(t: &common::Table<NoShuffle>, seat: usize) -> Vec<u8> {
    numbers(t.game.board.rows().unwrap().x_stacks[seat].iter())
}

// ---------------------------------------------------------------------------------------------
// Set-up
// ---------------------------------------------------------------------------------------------

#[test]
fn x_nimmt_has_three_rows_of_capacity_3_4_5_and_eight_hand_cards() {
    let layout = Layout::new(Ruleset::XNimmt, Ruleset::XNimmt.default_options());
    assert_eq!(layout.rows, 3);
    assert_eq!(layout.capacity[..3], [3, 4, 5]);
    assert_eq!(layout.max_lying[..3], [2, 3, 4]);
    assert_eq!(layout.hand_size, 8);
    assert!(layout.x_rows);
    assert_eq!(layout.table, ScoreTable::SixNimmt);
    for players in 2..=4 {
        assert_eq!(layout.deck(players), CardSet::range(100));
    }
    assert_eq!(ScoreTable::SixNimmt.sum_set(CardSet::range(100)), 167);

    let t = started(x_default(2), None, NoShuffle, &[]);
    let view = t.game.view_for(Some(HOST));
    let rows: Vec<(usize, usize, usize)> = view
        .table
        .rows
        .iter()
        .map(|r| (r.capacity, r.max_cards, r.cards.len()))
        .collect();
    assert_eq!(rows, vec![(3, 2, 1), (4, 3, 1), (5, 4, 1)]);
    // NoShuffle: seat 0 gets 1..=8, seat 1 9..=16, the rows 17, 18, 19 in row order
    assert_eq!(t.hand(0), (1..=8).collect::<Vec<_>>());
    assert_eq!(t.hand(1), (9..=16).collect::<Vec<_>>());
    assert_eq!(t.rows(), vec![vec![17], vec![18], vec![19]]);
    assert_eq!(view.seats[0].x_row, Some(vec![]));
    assert_eq!(view.seats[0].x_stack_size, Some(0));
    assert_eq!(view.you.unwrap().x_stack, Some(vec![]));
}

#[test]
fn x_nimmt_is_played_by_2_to_4() {
    for players in 2..=4 {
        assert!(Game::create(new_game(x_default(players), None)).is_ok());
    }
    for players in [1, 5] {
        let e = create_err(x_default(players), None);
        assert!(
            matches!(e, RuleError::InvalidOptions(_)),
            "{players}: {e:?}"
        );
    }
}

#[test]
fn x_nimmt_ends_after_a_number_of_deals_two_by_default() {
    assert_eq!(
        Ruleset::XNimmt.default_options().end,
        EndCondition::Rounds(2)
    );
    for end in [EndCondition::Rounds(1), EndCondition::Rounds(50)] {
        assert!(Game::create(new_game(x(3, end), None)).is_ok());
    }
    for end in [
        EndCondition::Points(66),
        EndCondition::Points(1),
        EndCondition::Rounds(0),
        EndCondition::Rounds(51),
    ] {
        let e = create_err(x(3, end), None);
        assert!(matches!(e, RuleError::InvalidOptions(_)), "{end:?}: {e:?}");
        assert_eq!(e.code(), "invalid_options");
    }
}

#[test]
fn x_nimmt_has_no_deck_deal_or_placement_options() {
    for options in [
        Options {
            deck: DeckOption::Tactical,
            ..Ruleset::XNimmt.default_options()
        },
        Options {
            deck: DeckOption::Tactical,
            deal: DealOption::Draft,
            ..Ruleset::XNimmt.default_options()
        },
        Options {
            placement: PlacementOption::BothEnds,
            ..Ruleset::XNimmt.default_options()
        },
        Options {
            end: EndCondition::Rounds(2),
            ..Preset::Profi.options()
        },
    ] {
        let e = create_err(setup(Ruleset::XNimmt, 3, options), None);
        assert_eq!(e.code(), "invalid_options", "{options:?}");
    }
}

#[test]
fn a_prepared_x_nimmt_deal_has_three_rows_and_eight_cards_a_hand() {
    let good = deal_filled(CardSet::range(100), 8, &[10, 20, 30], &[&[], &[]]);
    assert!(Game::create(new_game(x_default(2), Some(good.clone()))).is_ok());
    let invalid = |d| create_err(x_default(2), Some(d)).code();
    let mut d = good.clone();
    d.rows.push(vec![c(40)]);
    assert_eq!(invalid(d), "invalid_deal", "four rows");
    let mut d = good.clone();
    d.rows.pop();
    assert_eq!(invalid(d), "invalid_deal", "two rows");
    let mut d = good.clone();
    d.hands[0].pop();
    assert_eq!(invalid(d), "invalid_deal", "seven cards");
    let mut d = good.clone();
    d.hands[1].extend([c(1), c(2)]);
    assert_eq!(invalid(d), "invalid_deal", "ten cards");
    let mut d = good;
    d.hands[0][0] = c(101);
    assert_eq!(invalid(d), "invalid_deal", "card 101");
}

// ---------------------------------------------------------------------------------------------
// Taking and keeping
// ---------------------------------------------------------------------------------------------

#[test]
fn each_row_is_taken_by_the_card_that_reaches_its_capacity() {
    // Given rows 10 (capacity 3), 20 (4), 30 (5)
    let d = deal_filled(
        CardSet::range(100),
        8,
        &[10, 20, 30],
        &[&[11, 21, 23, 32, 34], &[12, 22, 31, 33, 35]],
    );
    let mut t = started(x_default(2), Some(d), NoShuffle, &[]);

    // When 11 and 12 are played: 12 is the third card of row 0 and takes the two
    let events = t.turn(&[11, 12]);
    assert_eq!(
        placed(&events),
        vec![
            (0, 11, 0, vec![], false, Side::Right),
            (1, 12, 0, vec![10, 11], false, Side::Right)
        ]
    );
    // Then seat 1 must choose which of the two goes to its X row
    assert_eq!(count(&events, "card_kept"), 0);
    assert_eq!(t.game.awaiting(), awaiting(1, "keep_card"));
    assert_eq!(t.game.moves_for(1), vec![keep(10), keep(11)]);
    assert!(t.game.moves_for(0).is_empty());
    assert_eq!(t.game.next_bot(), Some(1));
    let pending = t.game.view_for(None).table.pending_keep.unwrap();
    assert_eq!((pending.seat, numbers(pending.cards)), (1, vec![10, 11]));
    let e = t.err_by(0, &keep(10));
    assert_eq!(
        (e.clone(), e.code()),
        (
            RuleError::NotYourTurn {
                action: "keep_card"
            },
            "not_your_turn"
        )
    );
    let e = t.err_by(1, &keep(12));
    assert_eq!(
        (e.clone(), e.code()),
        (RuleError::CardNotTaken { card: 12 }, "card_not_taken")
    );
    assert_eq!(
        t.err_by(1, &play(22)),
        RuleError::NotYourTurn {
            action: "play_card"
        }
    );
    assert_eq!(
        t.err_by(1, &take(0)),
        RuleError::NotYourTurn { action: "take_row" }
    );
    assert_eq!(
        t.err_by(1, &draft(22)),
        RuleError::UnknownCommand {
            command: "draft_card"
        }
    );
    // When seat 1 keeps 11: it starts the X row, 10 goes into the hand
    let events = t.by(1, &keep(11));
    assert_eq!(kept(&events), vec![(1, 11, vec![], vec![10])]);
    assert_eq!(x_row(&t, 1), vec![11]);
    assert_eq!(t.hand(1), vec![10, 22, 31, 33, 35, 95, 96, 97]);
    assert_eq!(t.hand(0).len(), 7);
    assert_eq!(t.rows(), vec![vec![12], vec![20], vec![30]]);
    assert_eq!(
        t.game.view_for(None).table.pending_keep.map(|p| p.seat),
        None
    );

    // When 21 and 22 are played, row 1 holds 20 21 22 (three, its most)
    t.turn(&[21, 22]);
    assert_eq!(t.rows()[1], vec![20, 21, 22]);
    // When 23 and 31 are played: 23 is the fourth card of row 1 and takes the three; 31
    // waits for seat 0's choice
    let events = t.turn(&[23, 31]);
    assert_eq!(
        placed(&events),
        vec![(0, 23, 1, vec![20, 21, 22], false, Side::Right)]
    );
    assert_eq!(t.game.awaiting(), awaiting(0, "keep_card"));
    assert_eq!(
        numbers(t.game.revealed().iter().map(|sc| sc.card)),
        vec![31]
    );
    let events = t.by(0, &keep(20));
    assert_eq!(kept(&events), vec![(0, 20, vec![], vec![21, 22])]);
    assert_eq!(
        placed(&events),
        vec![(1, 31, 2, vec![], false, Side::Right)]
    );
    assert_eq!(
        t.hand(0).len(),
        5 + 2,
        "the hand grows by the cards not kept"
    );

    // When 32 and 33, then 34 and 35 are played: 34 is the fifth card of row 2 and takes four
    t.turn(&[32, 33]);
    assert_eq!(t.rows()[2], vec![30, 31, 32, 33]);
    let events = t.turn(&[34, 35]);
    assert_eq!(
        placed(&events),
        vec![(0, 34, 2, vec![30, 31, 32, 33], false, Side::Right)]
    );
    // Then keeping 33, higher than the X row's last card 20, appends it
    let events = t.by(0, &keep(33));
    assert_eq!(kept(&events), vec![(0, 33, vec![], vec![30, 31, 32])]);
    assert_eq!(x_row(&t, 0), vec![20, 33]);
    assert!(x_stack(&t, 0).is_empty());
    assert_eq!(t.hand(0).len(), 8);
    assert_eq!(t.hand(1).len(), 4);
    assert_eq!(t.rows(), vec![vec![12], vec![23], vec![34, 35]]);
    let view = t.game.view_for(None);
    assert_eq!((view.seats[0].hand_size, view.seats[1].hand_size), (8, 4));
    assert!(
        view.seats
            .iter()
            .all(|s| s.taken.as_ref().is_some_and(Vec::is_empty))
    );
}

/// Rows 9, 20, 30; seat 0 holds 1..=8 and plays them downwards, each time below every row,
/// taking the single card of row 0; seat 1 (a person, "anna") holds 21..=28 and plays them
/// upwards into row 1.
fn downwards() -> common::Table<NoShuffle> {
    let d = deal(
        &[9, 20, 30],
        &[&[1, 2, 3, 4, 5, 6, 7, 8], &[21, 22, 23, 24, 25, 26, 27, 28]],
    );
    started(x_default(2), Some(d), NoShuffle, &["anna"])
}

/// Seat 0 plays `low` (below every row) and takes row 0; seat 1 plays `high`.
fn take_single(t: &mut common::Table<NoShuffle>, low: u8, high: u8) -> Vec<Event> {
    let mut events = t.turn(&[low, high]);
    assert_eq!(t.game.awaiting(), awaiting(0, "take_row"));
    events.extend(t.by(0, &take(0)));
    events
}

#[test]
fn a_single_taken_card_is_kept_automatically_and_a_lower_one_stacks_the_x_row() {
    let mut t = downwards();
    // When seat 0 plays 8 and takes row 0 (the 9 alone)
    let events = take_single(&mut t, 8, 21);
    // Then the 9 goes to the X row without a keep_card, in the same step
    assert_eq!(
        types(&events[events.len() - 3..]),
        vec!["card_placed", "card_kept", "card_placed"]
    );
    assert_eq!(kept(&events), vec![(0, 9, vec![], vec![])]);
    assert_eq!(x_row(&t, 0), vec![9]);
    assert_eq!(t.game.awaiting().len(), 2);

    // When seat 0 takes the 8 the same way: 8 is lower than the X row's last card 9
    let events = take_single(&mut t, 7, 22);
    // Then the X row 9 goes onto the X stack and 8 starts a new X row
    assert_eq!(kept(&events), vec![(0, 8, vec![9], vec![])]);
    assert_eq!(x_row(&t, 0), vec![8]);
    assert_eq!(x_stack(&t, 0), vec![9]);
    assert_eq!(t.hand(0).len(), 6);

    // The X row and the stack's size are public; the stack's cards only for its owner
    let anna = t.game.view_for(Some("anna"));
    assert_eq!(anna.seats[0].x_row, Some(cards([8])));
    assert_eq!(anna.seats[0].x_stack_size, Some(1));
    assert_eq!(anna.you.as_ref().unwrap().seat, 1);
    assert_eq!(anna.you.as_ref().unwrap().x_stack, Some(vec![]));
    let json = serde_json::to_value(&anna).unwrap();
    for seat in json["seats"].as_array().unwrap() {
        assert!(seat.get("x_stack").is_none(), "{seat}");
        assert!(seat.get("hand").is_none(), "{seat}");
    }
    assert_eq!(json["you"]["x_stack"], serde_json::json!([]));
    assert!(!json.to_string().contains("\"x_stack\":[9]"));
    let host = t.game.view_for(Some(HOST));
    assert_eq!(host.you.unwrap().x_stack, Some(cards([9])));
    let spectator = t.game.view_for(None);
    assert!(spectator.you.is_none());
    assert_eq!(spectator.seats[0].x_stack_size, Some(1));
    assert!(
        !serde_json::to_value(&spectator)
            .unwrap()
            .to_string()
            .contains("\"x_stack\":")
    );
}

/// Turns 1–7 of [`downwards`]: seat 0 stacks 9 8 7 6 5 4, seat 1 takes row 1 twice and
/// keeps 22, then 23.
fn seven_turns(t: &mut common::Table<NoShuffle>) {
    take_single(t, 8, 21);
    take_single(t, 7, 22);
    // Turn 3: 23 is the fourth card of row 1 and takes 20 21 22; anna keeps 22
    let events = take_single(t, 6, 23);
    assert_eq!(
        placed(&events)[1..],
        [(1, 23, 1, vec![20, 21, 22], false, Side::Right)]
    );
    assert_eq!(t.game.awaiting(), awaiting(1, "keep_card"));
    assert_eq!(
        t.game.legal_for("anna"),
        vec![
            keep(20),
            keep(21),
            keep(22),
            stammtisch_rules::Command::Resign {}
        ]
    );
    assert_eq!(
        kept(&t.by(1, &keep(22))),
        vec![(1, 22, vec![], vec![20, 21])]
    );
    take_single(t, 5, 24);
    take_single(t, 4, 25);
    // Turn 6: 26 takes 23 24 25; 23 is higher than 22 and is appended
    take_single(t, 3, 26);
    assert_eq!(
        kept(&t.by(1, &keep(23))),
        vec![(1, 23, vec![], vec![24, 25])]
    );
    let events = take_single(t, 2, 27);
    assert!(round_ended(&events).is_empty());
    assert_eq!(x_row(t, 0), vec![3]);
    assert_eq!(x_stack(t, 0), vec![4, 5, 6, 7, 8, 9]);
    assert_eq!(x_row(t, 1), vec![22, 23]);
    assert_eq!(t.hand(0), vec![1]);
    assert_eq!(t.hand(1), vec![20, 21, 24, 25, 28]);
    assert_eq!(t.rows(), vec![vec![2], vec![26, 27], vec![30]]);
    assert_eq!(t.game.round(), 1);
}

#[test]
fn the_round_ends_after_the_turn_that_leaves_a_hand_empty() {
    let mut t = downwards();
    seven_turns(&mut t);
    // When seat 0 plays its last card 1, takes the 2 and anna plays 28
    let events = take_single(&mut t, 1, 28);
    // Then seat 0's hand is empty at the end of the turn (anna still holds four cards) and
    // the round ends: seat 0 scores 2 × the X stack 3..=9 (1 + 1 + 2 + 1 + 1 + 1 + 1 = 8
    // bullheads), the X row 2 nothing; anna scores her hand 20 21 24 25 (3 + 1 + 1 + 2), her
    // X row nothing.
    assert_eq!(kept(&events), vec![(0, 2, vec![3], vec![])]);
    assert_eq!(round_ended(&events), vec![(1, vec![16, 7])]);
    // x-nimmt plays two deals by default: round 2 is dealt at once (NoShuffle)
    assert_eq!(t.game.status(), Status::Active);
    assert_eq!(t.game.totals(), vec![16, 7]);
    assert_eq!(
        events.last().map(Event::type_name),
        Some("hand_dealt"),
        "{:?}",
        types(&events)
    );
    assert_eq!(
        events
            .iter()
            .find(|e| e.type_name() == "round_started")
            .cloned(),
        Some(Event::RoundStarted {
            round: 2,
            rows: cards([17, 18, 19]).into()
        })
    );
    assert_eq!(t.game.round(), 2);
    assert_eq!(t.hand(0), (1..=8).collect::<Vec<_>>());
    assert_eq!(t.hand(1), (9..=16).collect::<Vec<_>>());
    assert!(x_row(&t, 0).is_empty() && x_stack(&t, 0).is_empty());
    assert!(x_row(&t, 1).is_empty());
}

#[test]
fn a_hand_emptied_by_the_reveal_but_refilled_by_taking_does_not_end_the_round() {
    let mut t = downwards();
    seven_turns(&mut t);
    // When seat 0 plays its last card 1 and takes row 1 (26 27)
    t.turn(&[1, 28]);
    assert_eq!(t.game.awaiting(), awaiting(0, "take_row"));
    let events = t.by(0, &take(1));
    assert_eq!(
        placed(&events),
        vec![(0, 1, 1, vec![26, 27], true, Side::Right)]
    );
    // Then while it chooses, its hand is empty, but the turn is not over
    assert_eq!(t.game.awaiting(), awaiting(0, "keep_card"));
    assert!(t.hand(0).is_empty());
    // When it keeps 27 (appended after 3), 26 goes into the hand and 28 goes after 2
    let events = t.by(0, &keep(27));
    assert_eq!(kept(&events), vec![(0, 27, vec![], vec![26])]);
    assert_eq!(
        placed(&events),
        vec![(1, 28, 0, vec![], false, Side::Right)]
    );
    // Then no hand is empty at the end of the turn: the round goes on
    assert!(round_ended(&events).is_empty());
    assert_eq!(t.hand(0), vec![26]);
    assert_eq!(t.hand(1), vec![20, 21, 24, 25]);
    assert_eq!(t.game.awaiting().len(), 2);
    assert_eq!(x_row(&t, 0), vec![3, 27]);
    // When seat 0 plays 26 and anna 20: 20 goes after 1, 26 after 20
    let events = t.turn(&[26, 20]);
    assert_eq!(
        placed(&events),
        vec![
            (1, 20, 1, vec![], false, Side::Right),
            (0, 26, 1, vec![], false, Side::Right)
        ]
    );
    // Then seat 0's hand is empty after this turn and the round ends: 2 × (4..=9) = 2 × 7
    // and 21 24 25 = 1 + 1 + 2
    assert_eq!(round_ended(&events), vec![(1, vec![14, 4])]);
}

#[test]
fn a_game_of_two_deals_ends_after_the_second_and_sums_the_rounds() {
    let mut t = started(x_default(3), None, NoShuffle, &[]);
    t.play_first_moves_until(|_| false);
    assert_eq!(t.game.status(), Status::Finished);
    let ended = round_ended(&t.events);
    assert_eq!(
        ended.iter().map(|(r, _)| *r).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(count(&t.events, "round_started"), 2);
    let totals: Vec<u32> = (0..3)
        .map(|s| ended.iter().map(|(_, scores)| scores[s]).sum())
        .collect();
    assert_eq!(t.game.totals(), signed(&totals));
    let min = *totals.iter().min().unwrap();
    let winners: Vec<u8> = (0..3u8)
        .filter(|s| totals[usize::from(*s)] == min)
        .collect();
    assert_eq!(t.game.winners, winners);
    assert!(count(&t.events, "card_kept") > 0);

    // Three deals when asked for
    let mut t = started(x(2, EndCondition::Rounds(3)), None, NoShuffle, &[]);
    t.play_first_moves_until(|_| false);
    assert_eq!(t.game.scores.len(), 3);
}
