#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Given/when/then scenarios for the options of 6-nimmt (`deck: tactical`, `deal: draft`,
//! `placement: both_ends`) and for 11-nimmt, over prepared deals.

mod common;

use common::{
    HOST, NoShuffle, c, cards, count, create_err, deal, deal_filled, draft, keep, new_game,
    numbers, placed, play, round_ended, setup, signed, started, take, types,
};
use stammtisch_rules::bots;
use stammtisch_rules::{
    Awaiting, BotStrategy, Card, CardSet, Command, DealOption, DeckOption, EndCondition, Event,
    Game, Layout, Options, PlacementOption, Preset, RuleError, Ruleset, ScoreTable, Side, Status,
};

fn six(players: u8, options: Options) -> stammtisch_rules::Setup {
    setup(Ruleset::SixNimmt, players, options)
}

fn with_end(preset: Preset, end: EndCondition) -> Options {
    Options {
        end,
        ..preset.options()
    }
}

fn awaiting(seat: u8, action: &'static str) -> Vec<Awaiting> {
    vec![Awaiting { seat, action }]
}

// ---------------------------------------------------------------------------------------------
// deck: tactical
// ---------------------------------------------------------------------------------------------

#[test]
fn the_tactical_deck_of_three_players_is_exactly_1_to_34() {
    let taktik = Preset::Taktik.options();
    assert_eq!(taktik.deck, DeckOption::Tactical);
    let layout = Layout::new(Ruleset::SixNimmt, taktik);
    assert_eq!(layout.deck(3), CardSet::range(34));
    assert_eq!(layout.deck(3).to_vec(), cards(1..=34));
    // 10·players + 4: every card is in play
    assert_eq!(layout.deck(2).len(), 24);
    assert_eq!(layout.deck(10), CardSet::range(104));
    assert_eq!(
        Layout::new(Ruleset::SixNimmt, Preset::Standard.options()).deck(3),
        CardSet::range(104)
    );
}

#[test]
fn a_prepared_tactical_deal_with_card_35_for_three_players_is_refused() {
    let taktik = Preset::Taktik.options();
    let good = deal_filled(CardSet::range(34), 10, &[1, 2, 3, 4], &[&[], &[], &[]]);
    let all: CardSet = good
        .rows
        .iter()
        .chain(&good.hands)
        .flatten()
        .copied()
        .collect();
    assert_eq!(
        all,
        CardSet::range(34),
        "the complete deal uses the whole deck"
    );
    assert!(Game::create(new_game(six(3, taktik), Some(good.clone()))).is_ok());

    let mut bad = good.clone();
    bad.hands[2][0] = c(35);
    let e = create_err(six(3, taktik), Some(bad));
    assert!(matches!(e, RuleError::InvalidDeal(_)), "{e:?}");
    assert_eq!(e.code(), "invalid_deal");
    let mut bad = good;
    bad.rows[0] = vec![c(35)];
    assert_eq!(create_err(six(3, taktik), Some(bad)).code(), "invalid_deal");
}

// ---------------------------------------------------------------------------------------------
// deal: draft
// ---------------------------------------------------------------------------------------------

#[test]
fn draft_requires_the_tactical_deck() {
    let draft_full = Options {
        deal: DealOption::Draft,
        ..Preset::Standard.options()
    };
    let e = draft_full.validate(Ruleset::SixNimmt, 4).unwrap_err();
    assert!(matches!(e, RuleError::InvalidOptions(_)), "{e:?}");
    assert_eq!(e.code(), "invalid_options");
    assert_eq!(
        create_err(six(4, draft_full), None).code(),
        "invalid_options"
    );
    let profi_draft = Options {
        deal: DealOption::Draft,
        ..Preset::Profi.options()
    };
    assert_eq!(
        create_err(six(4, profi_draft), None).code(),
        "invalid_options"
    );
    // Logik is tactical + draft, and valid
    let logik = Preset::Logik.options();
    assert_eq!(
        (logik.deck, logik.deal, logik.placement),
        (
            DeckOption::Tactical,
            DealOption::Draft,
            PlacementOption::Right
        )
    );
    assert_eq!(logik.validate(Ruleset::SixNimmt, 4), Ok(()));
}

#[test]
fn a_draft_deal_cannot_be_prepared() {
    let d = deal_filled(CardSet::range(24), 10, &[1, 2, 3, 4], &[&[], &[]]);
    let e = create_err(six(2, Preset::Logik.options()), Some(d));
    assert!(matches!(e, RuleError::InvalidDeal(_)), "{e:?}");
}

/// Logik for two: the picks that leave 1, 6, 12 and 18 for the rows.
const DRAFT0: [u8; 10] = [2, 3, 4, 5, 7, 8, 9, 10, 11, 13];
const DRAFT1: [u8; 10] = [14, 15, 16, 17, 19, 20, 21, 22, 23, 24];

#[test]
fn the_open_draft_goes_in_seat_order_and_the_four_cards_left_start_the_rows() {
    // Given a two-player Logik game (1..=24) over two rounds
    let mut t = started(
        six(2, with_end(Preset::Logik, EndCondition::Rounds(2))),
        None,
        NoShuffle,
        &["anna"],
    );
    // Then the start opens the draft instead of dealing: seat 0 picks first
    assert_eq!(
        types(&t.events[t.events.len() - 2..]),
        vec!["game_started", "draft_started"]
    );
    assert_eq!(
        t.events.last(),
        Some(&Event::DraftStarted {
            round: 1,
            pool: cards(1..=24),
            first_seat: 0
        })
    );
    assert_eq!(count(&t.events, "hand_dealt"), 0);
    assert_eq!(count(&t.events, "round_started"), 0);
    assert_eq!(t.game.round(), 1);
    assert_eq!(t.game.awaiting(), awaiting(0, "draft_card"));
    assert_eq!(t.game.moves_for(0), (1..=24).map(draft).collect::<Vec<_>>());
    assert!(t.game.moves_for(1).is_empty());
    assert_eq!(t.game.next_bot(), None);
    let view = t.game.view_for(Some("anna"));
    assert_eq!(view.table.draft_pool, Some(cards(1..=24)));
    assert!(view.legal.contains(&Command::Resign {}));
    assert!(
        !view
            .legal
            .iter()
            .any(|m| matches!(m, Command::DraftCard { .. }))
    );
    assert!(t.game.rows().iter().all(Vec::is_empty));

    // When seat 1 picks out of turn, or anyone plays, takes or keeps
    let e = t.err_by(1, &draft(24));
    assert_eq!(
        (e.clone(), e.code()),
        (
            RuleError::NotYourTurn {
                action: "draft_card"
            },
            "not_your_turn"
        )
    );
    assert_eq!(
        t.err_by(0, &play(2)),
        RuleError::NotYourTurn {
            action: "play_card"
        }
    );
    assert_eq!(
        t.err_by(0, &take(0)),
        RuleError::NotYourTurn { action: "take_row" }
    );
    assert_eq!(
        t.err_by(0, &keep(2)),
        RuleError::UnknownCommand {
            command: "keep_card"
        }
    );
    // A card outside the deck is not available either
    let e = t.err_by(0, &draft(25));
    assert_eq!(
        (e.clone(), e.code()),
        (
            RuleError::CardNotAvailable { card: 25 },
            "card_not_available"
        )
    );

    // When seat 0 picks 2: a public card_drafted, the pool shrinks, seat 1 is next
    let events = t.by(0, &draft(DRAFT0[0]));
    assert_eq!(
        events,
        vec![Event::CardDrafted {
            seat: 0,
            card: c(2)
        }]
    );
    assert_eq!(events[0].audience(), stammtisch_rules::Audience::Public);
    assert_eq!(t.hand(0), vec![2]);
    assert_eq!(t.game.view_for(None).table.draft_pool.unwrap().len(), 23);
    assert_eq!(t.game.awaiting(), awaiting(1, "draft_card"));
    // A taken card is no longer available; seat 0 must wait
    let e = t.err_by(1, &draft(2));
    assert_eq!(
        (e.clone(), e.code()),
        (
            RuleError::CardNotAvailable { card: 2 },
            "card_not_available"
        )
    );
    assert_eq!(
        t.err_by(0, &draft(3)),
        RuleError::NotYourTurn {
            action: "draft_card"
        }
    );

    // When the picks alternate until each seat holds ten cards
    let mut last = Vec::new();
    for k in 0..10 {
        if k > 0 {
            assert_eq!(t.game.awaiting(), awaiting(0, "draft_card"));
            t.by(0, &draft(DRAFT0[k]));
        }
        assert_eq!(t.game.awaiting(), awaiting(1, "draft_card"));
        assert_eq!(
            t.game.view_for(None).table.draft_pool.unwrap().len(),
            24 - 2 * k - 1
        );
        last = t.by(1, &draft(DRAFT1[k]));
    }
    // Then the last pick starts the round with the four cards left, and play begins
    assert_eq!(
        last,
        vec![
            Event::CardDrafted {
                seat: 1,
                card: c(24)
            },
            Event::RoundStarted {
                round: 1,
                rows: cards([1, 6, 12, 18]).into()
            }
        ]
    );
    assert_eq!(t.rows(), vec![vec![1], vec![6], vec![12], vec![18]]);
    assert_eq!(t.hand(0), DRAFT0.to_vec());
    assert_eq!(t.hand(1), DRAFT1.to_vec());
    assert_eq!(t.game.view_for(None).table.draft_pool, None);
    assert_eq!(t.game.awaiting().len(), 2);
    assert!(t.game.awaiting().iter().all(|a| a.action == "play_card"));
    assert_eq!(
        t.err_by(0, &draft(1)),
        RuleError::NotYourTurn {
            action: "draft_card"
        }
    );

    // When the ten turns are played (ascending), everything drafted is on the table or taken
    for turn in 0..10 {
        let events = t.turn(&[DRAFT0[turn], DRAFT1[turn]]);
        assert_eq!(count(&events, "card_placed"), 2);
    }
    let ended = round_ended(&t.events);
    assert_eq!(ended.len(), 1);
    // Then round 2's draft opens at once, and seat 1 picks first
    assert_eq!(
        t.events.last(),
        Some(&Event::DraftStarted {
            round: 2,
            pool: cards(1..=24),
            first_seat: 1
        })
    );
    assert_eq!(t.game.round(), 2);
    assert!((0..2).all(|s| t.game.hand(s).is_empty()));
    assert!(t.game.rows().iter().all(Vec::is_empty));
    assert_eq!(t.game.awaiting(), awaiting(1, "draft_card"));
    assert_eq!(
        t.err_by(0, &draft(1)),
        RuleError::NotYourTurn {
            action: "draft_card"
        }
    );
    t.by(1, &draft(1));
    assert_eq!(t.game.awaiting(), awaiting(0, "draft_card"));
    assert_eq!(t.game.totals(), signed(&ended[0].1));
}

#[test]
fn the_first_drafter_moves_one_seat_each_round() {
    // Three players, four rounds: rounds start with seats 0, 1, 2, 0.
    let mut t = started(
        six(3, with_end(Preset::Logik, EndCondition::Rounds(4))),
        None,
        NoShuffle,
        &[],
    );
    for round in 1..=4u16 {
        assert_eq!(t.game.round(), round);
        let first = u8::try_from((round - 1) % 3).unwrap();
        let start = t.events.len();
        t.play_first_moves_until(|g| !g.board.rows().unwrap().drafting);
        let seats: Vec<u8> = t.events[start..]
            .iter()
            .filter_map(|e| match e {
                Event::CardDrafted { seat, .. } => Some(*seat),
                _ => None,
            })
            .collect();
        let expected: Vec<u8> = (0..30u8).map(|i| (first + i) % 3).collect();
        assert_eq!(seats, expected, "round {round}");
        assert!((0..3).all(|s| t.game.hand(s).len() == 10));
        assert_eq!(t.game.rows().iter().flatten().count(), 4);
        t.play_first_moves_until(|g| g.round() != round);
    }
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.game.scores.len(), 4);
    let starts: Vec<u8> = t
        .events
        .iter()
        .filter_map(|e| match e {
            Event::DraftStarted { first_seat, .. } => Some(*first_seat),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![0, 1, 2, 0]);
}

// ---------------------------------------------------------------------------------------------
// placement: both_ends (Profi)
// ---------------------------------------------------------------------------------------------

fn profi(players: u8) -> stammtisch_rules::Setup {
    six(players, Preset::Profi.options())
}

#[test]
fn profi_is_full_random_both_ends() {
    let o = Preset::Profi.options();
    assert_eq!(
        (o.deck, o.deal, o.placement),
        (
            DeckOption::Full,
            DealOption::Random,
            PlacementOption::BothEnds
        )
    );
    assert_eq!(o.validate(Ruleset::SixNimmt, 10), Ok(()));
}

#[test]
fn a_card_goes_to_a_left_end_when_that_difference_is_smallest() {
    // Given rows 10, 30, 50, 70
    let d = deal_filled(
        CardSet::range(104),
        10,
        &[10, 30, 50, 70],
        &[&[28, 19], &[5, 40]],
    );
    let mut t = started(profi(2), Some(d), NoShuffle, &[]);
    // 5 is below every row: with both ends it goes before 10 instead of taking a row
    assert_eq!(t.game.target_row(c(5)), Some(0));
    assert_eq!(
        t.game.board.rows().unwrap().target(&t.game.layout, c(5)),
        Some((0, Side::Left))
    );
    // When 28 and 5 are played
    let events = t.turn(&[28, 5]);
    // Then 5 goes to row 0's left end (5 < 10), and 28 to row 1's left end: 30 − 28 = 2 beats
    // 28 − 10 = 18 at row 0's right end
    assert_eq!(
        placed(&events),
        vec![
            (1, 5, 0, vec![], false, Side::Left),
            (0, 28, 1, vec![], false, Side::Left)
        ]
    );
    assert_eq!(
        t.rows(),
        vec![vec![5, 10], vec![28, 30], vec![50], vec![70]]
    );
    assert_eq!(t.game.pending_take(), None);
    let json =
        serde_json::to_value(events.iter().find(|e| e.type_name() == "card_placed")).unwrap();
    assert_eq!(json["data"]["side"], "left");
}

#[test]
fn a_tie_between_a_right_and_a_left_end_goes_right() {
    // Given rows 5 10 | 28 30 | 50 | 70 after a first turn
    let d = deal_filled(
        CardSet::range(104),
        10,
        &[10, 30, 50, 70],
        &[&[28, 19], &[5, 40]],
    );
    let mut t = started(profi(2), Some(d), NoShuffle, &[]);
    t.turn(&[28, 5]);
    // 19: 19 − 10 = 9 = 28 − 19; 40: 40 − 30 = 10 = 50 − 40
    assert_eq!(
        t.game.board.rows().unwrap().target(&t.game.layout, c(19)),
        Some((0, Side::Right))
    );
    assert_eq!(
        t.game.board.rows().unwrap().target(&t.game.layout, c(40)),
        Some((1, Side::Right))
    );
    // When 19 and 40 are played, then both go to the right end of the tied rows
    let events = t.turn(&[19, 40]);
    assert_eq!(
        placed(&events),
        vec![
            (0, 19, 0, vec![], false, Side::Right),
            (1, 40, 1, vec![], false, Side::Right)
        ]
    );
    assert_eq!(
        t.rows(),
        vec![vec![5, 10, 19], vec![28, 30, 40], vec![50], vec![70]]
    );
}

/// Rows 10, 1, 2, 3; seat 0 builds the spans 10–101, 1–43, 2–44, 3–46 over four turns, seat
/// 1 helps; then 30 and 31 lie within every row's span.
fn spanning_rows() -> common::Table<NoShuffle> {
    let d = deal_filled(
        CardSet::range(104),
        10,
        &[10, 1, 2, 3],
        &[&[90, 45, 44, 43, 30, 9], &[99, 100, 101, 46, 31, 32]],
    );
    let mut t = started(profi(2), Some(d), NoShuffle, &[]);
    // 90 − 10 is the smallest difference to any end below 90; no row starts above it
    let events = t.turn(&[90, 99]);
    assert_eq!(
        placed(&events),
        vec![
            (0, 90, 0, vec![], false, Side::Right),
            (1, 99, 0, vec![], false, Side::Right)
        ]
    );
    t.turn(&[45, 100]);
    t.turn(&[44, 101]);
    t.turn(&[43, 46]);
    assert_eq!(
        t.rows(),
        vec![
            vec![10, 90, 99, 100, 101],
            vec![1, 43],
            vec![2, 44],
            vec![3, 45, 46]
        ]
    );
    t
}

#[test]
fn a_card_within_every_rows_span_must_take_a_row() {
    let mut t = spanning_rows();
    assert_eq!(t.game.target_row(c(30)), None);
    assert_eq!(t.game.target_row(c(31)), None);
    // When 30 and 31 are played
    t.by(0, &play(30));
    let events = t.by(1, &play(31));
    // Then resolution waits for seat 0 (the lower card) to take a row
    assert_eq!(count(&events, "cards_revealed"), 1);
    assert_eq!(count(&events, "card_placed"), 0);
    assert_eq!(t.game.awaiting(), awaiting(0, "take_row"));
    assert_eq!(t.game.moves_for(0), (0..4).map(take).collect::<Vec<_>>());
    assert_eq!(
        t.err_by(1, &take(0)),
        RuleError::NotYourTurn { action: "take_row" }
    );
    // When seat 0 takes row 3 (3 45 46)
    let events = t.by(0, &take(3));
    // Then 30 starts row 3, and 31 — which also lay within every span before — now fits
    // after 30: a row just taken ends below every later card of the turn, so no second
    // take_row follows in this turn.
    assert_eq!(
        placed(&events),
        vec![
            (0, 30, 3, vec![3, 45, 46], true, Side::Right),
            (1, 31, 3, vec![], false, Side::Right)
        ]
    );
    assert_eq!(t.rows()[3], vec![30, 31]);
    assert_eq!(t.game.taken(0), cards([3, 45, 46]));
    assert_eq!(
        t.game.view_for(None).seats[0].round_bullheads,
        Some(1 + 2 + 1)
    );
    assert_eq!(t.game.awaiting().len(), 2);
}

#[test]
fn the_sixth_card_at_a_left_end_takes_the_row() {
    let mut t = spanning_rows();
    t.turn(&[30, 31]);
    t.by(0, &take(3));
    // Given row 0 = 10 90 99 100 101 (five cards); 9 is below every right end and nearest
    // to row 0's first card
    assert_eq!(
        t.game.board.rows().unwrap().target(&t.game.layout, c(9)),
        Some((0, Side::Left))
    );
    // When 9 and 32 are played
    let events = t.turn(&[9, 32]);
    // Then 9 takes the five at the left end and starts the row
    assert_eq!(
        placed(&events),
        vec![
            (0, 9, 0, vec![10, 90, 99, 100, 101], false, Side::Left),
            (1, 32, 3, vec![], false, Side::Right)
        ]
    );
    assert_eq!(t.rows()[0], vec![9]);
    // 10 → 3, 90 → 3, 99 → 5, 100 → 3, 101 → 1
    assert_eq!(t.game.view_for(None).seats[0].round_bullheads, Some(4 + 15));
}

#[test]
fn both_bots_choose_a_legal_card_when_a_hand_card_goes_to_a_left_end() {
    // 28 goes before 30 (Left); the heuristic bot must weigh that card without overflow.
    let d = deal_filled(
        CardSet::range(104),
        10,
        &[10, 30, 50, 70],
        &[&[28, 19], &[5, 40]],
    );
    let t = started(profi(2), Some(d), NoShuffle, &[]);
    assert_eq!(
        t.game.board.rows().unwrap().target(&t.game.layout, c(28)),
        Some((1, Side::Left))
    );
    for strategy in [BotStrategy::Random, BotStrategy::Heuristic] {
        for seat in 0..2 {
            let game = t.game.clone();
            let choice = std::panic::catch_unwind(move || {
                bots::choose(&game, seat, strategy, &mut bots::SplitMix(7))
            });
            let choice = choice.unwrap_or_else(|_| panic!("{strategy:?} bot panicked for {seat}"));
            let choice = choice.expect("an awaited seat gets a move");
            assert!(t.game.moves_for(seat).contains(&choice), "{choice:?}");
        }
    }
}

#[test]
fn with_placement_right_the_same_cards_take_rows_of_choice() {
    // Contrast: in standard placement 5 is below every row and must take one.
    let d = deal_filled(
        CardSet::range(104),
        10,
        &[10, 30, 50, 70],
        &[&[28, 19], &[5, 40]],
    );
    let mut t = started(six(2, Preset::Standard.options()), Some(d), NoShuffle, &[]);
    assert_eq!(t.game.target_row(c(5)), None);
    t.turn(&[28, 5]);
    assert_eq!(t.game.awaiting(), awaiting(1, "take_row"));
}

// ---------------------------------------------------------------------------------------------
// 11-nimmt
// ---------------------------------------------------------------------------------------------

fn eleven(players: u8, end: EndCondition) -> stammtisch_rules::Setup {
    setup(
        Ruleset::ElevenNimmt,
        players,
        Options {
            end,
            ..Options::default()
        },
    )
}

#[test]
fn eleven_nimmt_plays_cards_1_to_100_and_55_scores_5() {
    let options = Ruleset::ElevenNimmt.default_options();
    assert_eq!(options.end, EndCondition::Points(66));
    let layout = Layout::new(Ruleset::ElevenNimmt, options);
    for players in 2..=9 {
        assert_eq!(layout.deck(players), CardSet::range(100));
    }
    assert_eq!(layout.table, ScoreTable::ElevenNimmt);
    assert_eq!(Ruleset::ElevenNimmt.score_table(), ScoreTable::ElevenNimmt);
    assert_eq!((layout.rows, layout.hand_size), (4, 10));
    assert_eq!(layout.max_lying[..4], [5, 5, 5, 5]);
    assert!(!layout.x_rows);
    assert_eq!(ScoreTable::ElevenNimmt.bullheads(c(55)), 5);
    assert_eq!(ScoreTable::SixNimmt.bullheads(c(55)), 7);
    for n in [11, 22, 44, 66, 77, 88, 99] {
        assert_eq!(ScoreTable::ElevenNimmt.bullheads(c(n)), 5, "{n}");
    }
    // RULES.md deck totals
    let deck: Vec<Card> = CardSet::range(100).to_vec();
    assert_eq!(ScoreTable::ElevenNimmt.sum(&deck), 165);
    assert_eq!(ScoreTable::SixNimmt.sum(&deck), 167);
    assert_eq!(ScoreTable::ElevenNimmt.sum_set(CardSet::range(100)), 165);
    // A prepared deal with a card above 100 is refused
    let mut d = deal_filled(CardSet::range(100), 10, &[10, 20, 30, 40], &[&[], &[]]);
    assert!(
        Game::create(new_game(
            eleven(2, EndCondition::Points(66)),
            Some(d.clone())
        ))
        .is_ok()
    );
    d.hands[0][0] = c(101);
    assert_eq!(
        create_err(eleven(2, EndCondition::Points(66)), Some(d)).code(),
        "invalid_deal"
    );
}

#[test]
fn eleven_nimmt_is_played_by_2_to_9() {
    for players in [2, 9] {
        assert!(Game::create(new_game(eleven(players, EndCondition::Points(66)), None)).is_ok());
    }
    for players in [1, 10] {
        let e = create_err(eleven(players, EndCondition::Points(66)), None);
        assert!(
            matches!(e, RuleError::InvalidOptions(_)),
            "{players}: {e:?}"
        );
        assert_eq!(e.code(), "invalid_options");
    }
}

#[test]
fn eleven_nimmt_has_no_options_but_the_end() {
    for end in [EndCondition::Points(33), EndCondition::Rounds(3)] {
        assert!(Game::create(new_game(eleven(4, end), None)).is_ok());
    }
    for options in [
        Options {
            deck: DeckOption::Tactical,
            ..Options::default()
        },
        Options {
            deck: DeckOption::Tactical,
            deal: DealOption::Draft,
            ..Options::default()
        },
        Options {
            placement: PlacementOption::BothEnds,
            ..Options::default()
        },
        Preset::Profi.options(),
        Preset::Logik.options(),
        Preset::Taktik.options(),
    ] {
        let e = create_err(setup(Ruleset::ElevenNimmt, 4, options), None);
        assert_eq!(e.code(), "invalid_options", "{options:?}");
    }
    for end in [EndCondition::Points(0), EndCondition::Rounds(51)] {
        assert_eq!(create_err(eleven(4, end), None).code(), "invalid_options");
    }
}

#[test]
fn an_eleven_nimmt_round_scores_55_as_5() {
    // Given rows 55, 60, 70, 80; seat 0 holds 1..=10, seat 1 61..=69 and 81
    let d = deal(
        &[55, 60, 70, 80],
        &[
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            &[61, 62, 63, 64, 65, 66, 67, 68, 69, 81],
        ],
    );
    let mut t = started(eleven(2, EndCondition::Rounds(1)), Some(d), NoShuffle, &[]);
    // When seat 0 plays 1 (below every row) and takes row 0, the 55
    t.turn(&[1, 61]);
    assert_eq!(t.game.awaiting(), awaiting(0, "take_row"));
    let events = t.by(0, &take(0));
    assert_eq!(
        placed(&events),
        vec![
            (0, 1, 0, vec![55], true, Side::Right),
            (1, 61, 1, vec![], false, Side::Right)
        ]
    );
    // Then it counts 5 bullheads
    assert_eq!(t.game.view_for(None).seats[0].round_bullheads, Some(5));
    // When the round is played out in ascending order: 6 takes 1..=5, 65 takes 60..=64
    let mut events = Vec::new();
    for turn in 1..10 {
        events.extend(t.turn(&[1 + turn, if turn < 9 { 61 + turn } else { 81 }]));
    }
    let takes: Vec<_> = placed(&events)
        .into_iter()
        .filter(|p| !p.3.is_empty())
        .collect();
    assert_eq!(
        takes,
        vec![
            (1, 65, 1, vec![60, 61, 62, 63, 64], false, Side::Right),
            (0, 6, 0, vec![1, 2, 3, 4, 5], false, Side::Right)
        ]
    );
    // Then seat 0 scores 5 + (1 + 1 + 1 + 1 + 2) = 11 (13 by the 6-nimmt table) and seat 1
    // 3 + 1 + 1 + 1 + 1 = 7
    assert_eq!(round_ended(&events), vec![(1, vec![11, 7])]);
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.game.winners, vec![1]);
    assert_eq!(numbers(t.game.taken(0)), vec![1, 2, 3, 4, 5, 55]);
}

#[test]
fn eleven_nimmt_has_no_draft_or_keep_commands() {
    let d = deal_filled(CardSet::range(100), 10, &[10, 20, 30, 40], &[&[41], &[42]]);
    let mut t = started(eleven(2, EndCondition::Points(66)), Some(d), NoShuffle, &[]);
    assert_eq!(
        t.err_by(0, &draft(41)),
        RuleError::UnknownCommand {
            command: "draft_card"
        }
    );
    let e = t.err_by(0, &keep(41));
    assert_eq!(
        (e.clone(), e.code()),
        (
            RuleError::UnknownCommand {
                command: "keep_card"
            },
            "unknown_command"
        )
    );
    assert!(t.game.legal_for(HOST).contains(&play(41)));
}
