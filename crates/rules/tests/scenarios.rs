#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Given/when/then scenarios over prepared deals: placement, taking, choosing a row,
//! selections, rounds, the end of the game, the lobby and the errors the rules raise.

use stammtisch_rules::options::ChipsOption;
use stammtisch_rules::{
    Audience, Awaiting, BotStrategy, Card, CardSet, Command, Deal, DealOption, Dealer, DeckOption,
    EndCondition, Event, Game, NewGame, Options, PlacementOption, RuleError, Ruleset, SeatCard,
    Setup, Side, Status,
};

mod common;

use common::{HOST, NoShuffle, Table, acct, bot, c, cards, count, host, play};

// ---------------------------------------------------------------------------------------------
// Helpers (the shared ones are in `common`)
// ---------------------------------------------------------------------------------------------

/// A dealer that puts the cards into a scripted order for given rounds (checking that the
/// script is a permutation of what it was handed) and leaves other rounds ascending.
/// It also records what it was asked to shuffle.
#[derive(Default)]
struct Scripted {
    orders: Vec<(u16, Vec<Card>)>,
    asked: Vec<(u16, Vec<Card>)>,
}

impl Dealer for Scripted {
    fn shuffle(&mut self, round: u16, cards: &mut [Card]) {
        self.asked.push((round, cards.to_vec()));
        if let Some((_, order)) = self.orders.iter().find(|(r, _)| *r == round) {
            let mut a = cards.to_vec();
            let mut b = order.clone();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(
                a, b,
                "the scripted order of round {round} is not a permutation of the deck"
            );
            cards.copy_from_slice(order);
        }
    }
}

/// The dealing order that yields `deal` from `deck`: hands in seat order, then the rows, then
/// the unused cards.
fn order_for(deal: &Deal, deck: CardSet) -> Vec<Card> {
    let mut order: Vec<Card> = deal.hands.iter().flatten().copied().collect();
    order.extend(deal.rows.iter().flatten().copied());
    let used: CardSet = order.iter().copied().collect();
    order.extend(deck.iter().filter(|card| !used.contains(*card)));
    order
}

fn options(deck: DeckOption, end: EndCondition) -> Options {
    Options {
        deck,
        deal: DealOption::Random,
        placement: PlacementOption::Right,
        end,
        chips: ChipsOption::Hidden,
    }
}

/// A 6 nimmt! game of `players`.
fn setup(players: u8, options: Options) -> Setup {
    common::setup(Ruleset::SixNimmt, players, options)
}

/// The shared test game, named "Stammtisch".
fn new_game(setup: Setup, deal: Option<Deal>) -> NewGame<'static> {
    NewGame {
        name: Some("Stammtisch".into()),
        ..common::new_game(setup, deal)
    }
}

/// A prepared deal: the given rows and hands, each hand filled up to ten cards with the
/// highest cards of `deck` that appear nowhere else in the deal.
fn deal_with(deck: CardSet, rows: [u8; 4], hands: &[&[u8]]) -> Deal {
    common::deal_filled(deck, 10, &rows, hands)
}

fn full_deck() -> CardSet {
    CardSet::range(104)
}

/// A started game: host at seat 0, bots at the other seats, with a prepared first deal.
fn started<D: Dealer>(players: u8, opts: Options, deal: Deal, dealer: D) -> Table<D> {
    common::started(setup(players, opts), Some(deal), dealer, &[])
}

/// Placements as `(seat, card, row, taken, chosen)`; every game of this file places at
/// the right end (`placement: right`).
fn placed(events: &[Event]) -> Vec<(u8, u8, u8, Vec<u8>, bool)> {
    common::placed(events)
        .into_iter()
        .map(|(seat, card, row, taken, chosen, side)| {
            assert_eq!(side, Side::Right, "{card} placed at a left end");
            (seat, card, row, taken, chosen)
        })
        .collect()
}

/// The cards each seat took this round, seat 0 first.
fn taken_by_all(game: &Game) -> Vec<Vec<Card>> {
    (0..game.setup.players).map(|s| game.taken(s)).collect()
}

/// Bullheads a seat took this round, by the game's own score table; the view agrees.
fn round_bullheads(game: &Game, seat: u8) -> u32 {
    let sum = game.setup.ruleset.score_table().sum(&game.taken(seat));
    assert_eq!(
        game.view_for(None).seats[usize::from(seat)].round_bullheads,
        Some(sum)
    );
    sum
}

fn standard() -> Options {
    options(DeckOption::Full, EndCondition::Points(66))
}

// ---------------------------------------------------------------------------------------------
// Dealing
// ---------------------------------------------------------------------------------------------

#[test]
fn start_deals_the_prepared_deal_as_round_one() {
    let deal = deal_with(full_deck(), [40, 10, 30, 20], &[&[25, 45], &[35]]);
    let t = started(2, standard(), deal.clone(), NoShuffle);
    assert_eq!(t.game.round(), 1);
    assert_eq!(t.rows(), vec![vec![40], vec![10], vec![30], vec![20]]);
    for (seat, hand) in deal.hands.iter().enumerate() {
        let mut sorted = hand.clone();
        sorted.sort_unstable();
        assert_eq!(t.game.hand(u8::try_from(seat).unwrap()).to_vec(), sorted);
    }
    assert!(t.game.prepared_deal);
    let mut seen = t.game.awaiting();
    seen.sort_by_key(|a| a.seat);
    assert_eq!(
        seen,
        vec![
            Awaiting {
                seat: 0,
                action: "play_card"
            },
            Awaiting {
                seat: 1,
                action: "play_card"
            }
        ]
    );
}

#[test]
fn the_deal_is_private_to_the_server_and_each_hand_to_its_seat() {
    let deal = deal_with(full_deck(), [40, 10, 30, 20], &[&[], &[]]);
    let t = started(2, standard(), deal, NoShuffle);
    for e in &t.events {
        match e {
            Event::SeedRecorded { .. } | Event::DealPrepared { .. } => {
                assert_eq!(e.audience(), Audience::Server)
            }
            Event::HandDealt { seat, .. } => assert_eq!(e.audience(), Audience::Seat(*seat)),
            _ => assert_eq!(e.audience(), Audience::Public, "{e:?}"),
        }
    }
}

#[test]
fn tactical_deck_of_three_players_is_exactly_1_to_34() {
    let opts = options(DeckOption::Tactical, EndCondition::Points(66));
    let deck = opts.deck(Ruleset::SixNimmt, 3);
    assert_eq!(deck.to_vec(), cards(1..=34));

    // Without a prepared deal the dealer is handed exactly 1..=34, ascending, and every one
    // of them is dealt.
    let mut t = Table::create(new_game(setup(3, opts), None), Scripted::default());
    t.cmd(
        host(),
        &Command::AddBot {
            strategy: BotStrategy::Random,
        },
    );
    t.cmd(
        host(),
        &Command::AddBot {
            strategy: BotStrategy::Random,
        },
    );
    t.cmd(host(), &Command::Start {});
    assert_eq!(t.dealer.asked, vec![(1, cards(1..=34))]);
    let mut dealt: Vec<Card> = t.game.rows().iter().flatten().copied().collect();
    for seat in 0..3 {
        assert_eq!(t.game.hand(seat).len(), 10);
        dealt.extend(t.game.hand(seat).iter());
    }
    dealt.sort_unstable();
    assert_eq!(dealt, cards(1..=34));
}

#[test]
fn full_deck_deal_without_preparation_follows_the_dealer_order() {
    // NoShuffle: seat 0 gets 1..=10, seat 1 gets 11..=20, the rows 21..=24.
    let mut t = Table::create(new_game(setup(2, standard()), None), NoShuffle);
    t.cmd(
        host(),
        &Command::AddBot {
            strategy: BotStrategy::Random,
        },
    );
    t.cmd(host(), &Command::Start {});
    assert_eq!(t.game.hand(0).to_vec(), cards(1..=10));
    assert_eq!(t.game.hand(1).to_vec(), cards(11..=20));
    assert_eq!(t.rows(), vec![vec![21], vec![22], vec![23], vec![24]]);
    assert!(!t.game.prepared_deal);
}

// ---------------------------------------------------------------------------------------------
// Placement
// ---------------------------------------------------------------------------------------------

#[test]
fn a_card_goes_to_the_row_with_the_highest_end_below_it() {
    // Given rows ending 40, 10, 30, 20 (not sorted by index)
    let deal = deal_with(
        full_deck(),
        [40, 10, 30, 20],
        &[&[25, 45, 11], &[35, 31, 41]],
    );
    let mut t = started(2, standard(), deal, NoShuffle);
    // When seat 0 plays 25 and seat 1 plays 35
    let events = t.turn(&[25, 35]);
    // Then 25 goes after 20 (row 3) and 35 after 30 (row 2), lowest first
    assert_eq!(
        placed(&events),
        vec![(0, 25, 3, vec![], false), (1, 35, 2, vec![], false)]
    );
    assert_eq!(
        t.rows(),
        vec![vec![40], vec![10], vec![30, 35], vec![20, 25]]
    );
    // When 45 and 31 are played: row 2 now ends with 35, so 31 goes after 25
    let events = t.turn(&[45, 31]);
    assert_eq!(
        placed(&events),
        vec![(1, 31, 3, vec![], false), (0, 45, 0, vec![], false)]
    );
    assert_eq!(
        t.rows(),
        vec![vec![40, 45], vec![10], vec![30, 35], vec![20, 25, 31]]
    );
    // And 11 goes after 10; 41 goes after 35, as row 0 now ends with 45
    let events = t.turn(&[11, 41]);
    assert_eq!(
        placed(&events),
        vec![(0, 11, 1, vec![], false), (1, 41, 2, vec![], false)]
    );
    assert!(taken_by_all(&t.game).iter().all(Vec::is_empty));
    assert_eq!(t.game.target_row(c(46)), Some(0));
    assert_eq!(t.game.target_row(c(9)), None);
}

#[test]
fn cards_are_revealed_at_once_ascending_and_placed_in_one_call() {
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[44], &[41], &[42], &[43]]);
    let mut t = started(4, standard(), deal, NoShuffle);
    let mut events = t.cmd(host(), &play(44));
    events.extend(t.cmd(bot(1), &play(41)));
    events.extend(t.cmd(bot(2), &play(42)));
    // Nothing is revealed before the last selection arrives.
    assert_eq!(count(&events, "cards_revealed"), 0);
    assert!(t.game.revealed().is_empty());
    let last = t.cmd(bot(3), &play(43));
    let types: Vec<&str> = last.iter().map(Event::type_name).collect();
    assert_eq!(
        types,
        vec![
            "card_selected",
            "selection_made",
            "cards_revealed",
            "card_placed",
            "card_placed",
            "card_placed",
            "card_placed"
        ]
    );
    let Event::CardsRevealed { cards: revealed } = &last[2] else {
        panic!("not a reveal: {:?}", last[2])
    };
    assert_eq!(
        revealed.as_slice(),
        [
            SeatCard {
                seat: 1,
                card: c(41)
            },
            SeatCard {
                seat: 2,
                card: c(42)
            },
            SeatCard {
                seat: 3,
                card: c(43)
            },
            SeatCard {
                seat: 0,
                card: c(44)
            },
        ]
    );
    assert_eq!(
        placed(&last),
        vec![
            (1, 41, 3, vec![], false),
            (2, 42, 3, vec![], false),
            (3, 43, 3, vec![], false),
            (0, 44, 3, vec![], false)
        ]
    );
    assert_eq!(t.rows()[3], vec![40, 41, 42, 43, 44]);
    assert!(t.game.revealed().is_empty());
    assert_eq!(t.game.awaiting().len(), 4);
}

#[test]
fn the_sixth_card_takes_the_five_and_starts_the_row() {
    // Given row 3 = 40 41 42 43 44 after the first turn
    let deal = deal_with(
        full_deck(),
        [10, 20, 30, 40],
        &[&[44, 45], &[41, 46], &[42, 21], &[43, 11]],
    );
    let mut t = started(4, standard(), deal, NoShuffle);
    t.turn(&[44, 41, 42, 43]);
    // When 45 (seat 0), 46 (seat 1), 21 (seat 2) and 11 (seat 3) are played
    let events = t.turn(&[45, 46, 21, 11]);
    // Then several cards are placed in this turn, lowest first; 45 takes the five
    assert_eq!(
        placed(&events),
        vec![
            (3, 11, 0, vec![], false),
            (2, 21, 1, vec![], false),
            (0, 45, 3, vec![40, 41, 42, 43, 44], false),
            (1, 46, 3, vec![], false),
        ]
    );
    assert_eq!(
        t.rows(),
        vec![vec![10, 11], vec![20, 21], vec![30], vec![45, 46]]
    );
    // The taken cards are seat 0's, its own card is not among them
    assert_eq!(t.game.taken(0), cards([40, 41, 42, 43, 44]));
    assert!(taken_by_all(&t.game)[1..].iter().all(Vec::is_empty));
    // 40 → 3, 41 → 1, 42 → 1, 43 → 1, 44 → 5
    assert_eq!(round_bullheads(&t.game, 0), 11);
    let view = t.game.view_for(Some(HOST));
    assert_eq!(view.seats[0].taken, Some(cards([40, 41, 42, 43, 44])));
    assert_eq!(view.seats[0].round_bullheads, Some(11));
}

#[test]
fn the_fifth_card_is_added_and_the_sixth_takes() {
    let deal = deal_with(
        full_deck(),
        [10, 20, 30, 40],
        &[&[41, 43, 44], &[42, 50, 60]],
    );
    let mut t = started(2, standard(), deal, NoShuffle);
    t.turn(&[41, 42]);
    let events = t.turn(&[43, 50]);
    assert_eq!(
        placed(&events),
        vec![(0, 43, 3, vec![], false), (1, 50, 3, vec![], false)]
    );
    assert_eq!(t.rows()[3], vec![40, 41, 42, 43, 50]);
    let events = t.turn(&[44, 60]);
    // 44 is below 50: goes after 30; 60 is the sixth card of row 3.
    assert_eq!(
        placed(&events),
        vec![
            (0, 44, 2, vec![], false),
            (1, 60, 3, vec![40, 41, 42, 43, 50], false)
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Taking a row of choice
// ---------------------------------------------------------------------------------------------

#[test]
fn a_card_below_every_row_waits_for_its_player_to_take_a_row() {
    // Given rows 10 20 30 40, seat 0 plays 5 (below all), seat 1 plays 25
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[5, 1, 7], &[25, 26, 27]]);
    let mut t = started(2, standard(), deal, NoShuffle);
    t.cmd(host(), &play(5));
    let events = t.cmd(bot(1), &play(25));
    // Then the cards are revealed but nothing is placed: seat 0 must choose
    assert_eq!(count(&events, "cards_revealed"), 1);
    assert_eq!(count(&events, "card_placed"), 0);
    assert_eq!(
        t.game.pending_take(),
        Some(SeatCard {
            seat: 0,
            card: c(5)
        })
    );
    assert_eq!(
        t.game.awaiting(),
        vec![Awaiting {
            seat: 0,
            action: "take_row"
        }]
    );
    assert_eq!(
        t.game.moves_for(0),
        (0..4)
            .map(|row| Command::TakeRow { row })
            .collect::<Vec<_>>()
    );
    assert!(t.game.moves_for(1).is_empty());
    assert_eq!(t.game.next_bot(), None);
    assert_eq!(
        t.game.revealed(),
        vec![
            SeatCard {
                seat: 0,
                card: c(5)
            },
            SeatCard {
                seat: 1,
                card: c(25)
            }
        ]
    );

    // Other seats cannot play or take; the chooser cannot play a card instead
    assert_eq!(
        t.err(bot(1), &play(26)),
        RuleError::NotYourTurn {
            action: "play_card"
        }
    );
    assert_eq!(
        t.err(bot(1), &Command::TakeRow { row: 0 }),
        RuleError::NotYourTurn { action: "take_row" }
    );
    assert_eq!(
        t.err(host(), &play(7)),
        RuleError::NotYourTurn {
            action: "play_card"
        }
    );
    assert_eq!(
        t.err(host(), &Command::TakeRow { row: 4 }),
        RuleError::NoSuchRow { row: 4 }
    );

    // When seat 0 takes row 1 (the 20)
    let events = t.cmd(host(), &Command::TakeRow { row: 1 });
    // Then 5 starts row 1, seat 0 holds the 20, and resolution continues with the new rows:
    // 25 now goes after 10 (row 0), since row 1 ends with 5
    assert_eq!(
        placed(&events),
        vec![(0, 5, 1, vec![20], true), (1, 25, 0, vec![], false)]
    );
    assert_eq!(t.rows(), vec![vec![10, 25], vec![5], vec![30], vec![40]]);
    assert_eq!(t.game.taken(0), cards([20]));
    assert_eq!(round_bullheads(&t.game, 0), 3);
    assert_eq!(t.game.pending_take(), None);
    assert_eq!(t.game.awaiting().len(), 2);
    // A take_row with nothing pending is refused
    assert_eq!(
        t.err(host(), &Command::TakeRow { row: 0 }),
        RuleError::NotYourTurn { action: "take_row" }
    );
}

#[test]
fn a_bot_takes_a_row_of_several_cards() {
    let deal = deal_with(
        full_deck(),
        [10, 20, 30, 40],
        &[&[41, 42, 50], &[3, 43, 60]],
    );
    let mut t = started(2, standard(), deal, NoShuffle);
    t.turn(&[41, 43]);
    t.turn(&[42, 60]);
    // 42 is below 43, so it went after 30; 60 after 43
    assert_eq!(
        t.rows(),
        vec![vec![10], vec![20], vec![30, 42], vec![40, 41, 43, 60]]
    );
    t.cmd(host(), &play(50));
    t.cmd(bot(1), &play(3));
    assert_eq!(
        t.game.awaiting(),
        vec![Awaiting {
            seat: 1,
            action: "take_row"
        }]
    );
    assert_eq!(t.game.next_bot(), Some(1));
    assert_eq!(
        t.err(host(), &Command::TakeRow { row: 3 }),
        RuleError::NotYourTurn { action: "take_row" }
    );
    let events = t.cmd(bot(1), &Command::TakeRow { row: 3 });
    assert_eq!(
        placed(&events),
        vec![
            (1, 3, 3, vec![40, 41, 43, 60], true),
            (0, 50, 2, vec![], false)
        ]
    );
    assert_eq!(round_bullheads(&t.game, 1), 3 + 1 + 1 + 3);
}

// ---------------------------------------------------------------------------------------------
// Selections
// ---------------------------------------------------------------------------------------------

#[test]
fn a_selection_can_be_replaced_before_the_reveal() {
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[41, 43], &[42]]);
    let mut t = started(2, standard(), deal, NoShuffle);

    // Seat 0 selects 41: a private card_selected and a public selection_made
    let first = t.cmd(host(), &play(41));
    assert_eq!(
        first,
        vec![
            Event::CardSelected {
                seat: 0,
                card: c(41)
            },
            Event::SelectionMade { seat: 0 }
        ]
    );
    assert_eq!(first[0].audience(), Audience::Seat(0));
    assert_eq!(first[1].audience(), Audience::Public);
    assert_eq!(t.game.selection(0), Some(c(41)));
    assert_eq!(
        t.game.awaiting(),
        vec![Awaiting {
            seat: 1,
            action: "play_card"
        }]
    );
    // The selection stays in the hand until the reveal; others see only "selected"
    assert!(t.game.hand(0).contains(c(41)));
    let spectator = t.game.view_for(None);
    assert!(spectator.seats[0].selected);
    assert!(spectator.you.is_none());
    assert_eq!(
        t.game.view_for(Some(HOST)).you.unwrap().selected,
        Some(c(41))
    );

    // Seat 0 replaces it with 43: card_selected again, but no second selection_made
    let second = t.cmd(host(), &play(43));
    assert_eq!(
        second,
        vec![Event::CardSelected {
            seat: 0,
            card: c(43)
        }]
    );
    assert_eq!(t.game.selection(0), Some(c(43)));
    // Choosing the same card again is harmless
    assert_eq!(
        t.cmd(host(), &play(43)),
        vec![Event::CardSelected {
            seat: 0,
            card: c(43)
        }]
    );

    // Seat 1 selects: the reveal shows 43, not 41
    let events = t.cmd(bot(1), &play(42));
    assert_eq!(count(&events, "selection_made"), 1);
    let revealed = events.iter().find_map(|e| match e {
        Event::CardsRevealed { cards } => Some(cards.to_vec()),
        _ => None,
    });
    assert_eq!(
        revealed,
        Some(vec![
            SeatCard {
                seat: 1,
                card: c(42)
            },
            SeatCard {
                seat: 0,
                card: c(43)
            }
        ])
    );
    assert_eq!(t.rows()[3], vec![40, 42, 43]);
    assert_eq!(t.game.selection(0), None);
    // 41 is still in hand, 43 is gone
    assert!(t.game.hand(0).contains(c(41)));
    assert!(!t.game.hand(0).contains(c(43)));
    assert_eq!(t.game.hand(0).len(), 9);
    assert_eq!(
        t.err(host(), &play(43)),
        RuleError::CardNotInHand { card: 43 }
    );
    assert_eq!(
        t.err(bot(1), &play(42)),
        RuleError::CardNotInHand { card: 42 }
    );
    t.cmd(host(), &play(41));
    // Over the whole game so far, exactly one selection_made per seat and turn
    assert_eq!(count(&t.events, "selection_made"), 3);
    assert_eq!(count(&t.events, "card_selected"), 5);
}

#[test]
fn a_seat_that_selected_may_still_replace_its_selection() {
    // RULES.md: a player may replace their selection until the last selection of the turn
    // arrives, so every hand card stays among the moves and the legal commands.
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[41, 43], &[42]]);
    let mut t = started(2, standard(), deal, NoShuffle);
    t.cmd(host(), &play(41));
    // Seat 0 is not awaited any more …
    assert!(!t.game.is_awaited(0));
    assert_eq!(
        t.game.awaiting(),
        vec![Awaiting {
            seat: 1,
            action: "play_card"
        }]
    );
    // … but may send any hand card, and says so
    let replacements: Vec<Command> = t
        .game
        .hand(0)
        .iter()
        .map(|card| Command::PlayCard { card })
        .collect();
    assert_eq!(replacements.len(), 10);
    assert_eq!(t.game.moves_for(0), replacements);
    let mut legal = replacements.clone();
    legal.push(Command::Resign {});
    assert_eq!(t.game.legal_for(HOST), legal);
    assert_eq!(t.game.view_for(Some(HOST)).legal, legal);
    for command in &replacements {
        assert!(
            t.game.decide(host(), command, &mut NoShuffle).is_ok(),
            "{command:?}"
        );
    }
}

#[test]
fn a_card_of_another_hand_cannot_be_played() {
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[41], &[42]]);
    let mut t = started(2, standard(), deal, NoShuffle);
    let e = t.err(host(), &play(42));
    assert_eq!(e, RuleError::CardNotInHand { card: 42 });
    assert_eq!(e.code(), "card_not_in_hand");
    // A row card is in no hand either
    assert_eq!(
        t.err(bot(1), &play(10)),
        RuleError::CardNotInHand { card: 10 }
    );
}

// ---------------------------------------------------------------------------------------------
// Rounds and the end of the game
// ---------------------------------------------------------------------------------------------

/// Rows 1, 30, 60, 90; seat 0 holds 2..=11 (all go to row 0), seat 1 holds 91..=100 (row 3).
/// Played in ascending order, seat 0 takes 1..=5 (6) and 6..=10 (7): 13 bullheads; seat 1
/// takes 90..=94 (7) and 95..=99 (10): 17 bullheads.
fn thirteen_seventeen() -> Deal {
    Deal {
        rows: vec![vec![c(1)], vec![c(30)], vec![c(60)], vec![c(90)]],
        hands: vec![cards(2..=11), cards(91..=100)],
        draw_pile: Vec::new(),
    }
}

/// Rows 5, 30, 60, 90; seat 0 holds 6..=15, seat 1 91..=100: both take 17 bullheads.
fn seventeen_seventeen() -> Deal {
    Deal {
        rows: vec![vec![c(5)], vec![c(30)], vec![c(60)], vec![c(90)]],
        hands: vec![cards(6..=15), cards(91..=100)],
        draw_pile: Vec::new(),
    }
}

/// Plays the ten turns of the deal in ascending order per hand.
fn play_ascending<D: Dealer>(t: &mut Table<D>) -> Vec<Event> {
    let mut events = Vec::new();
    for _ in 0..10 {
        let plays: Vec<u8> = (0..t.game.setup.players)
            .map(|s| t.game.hand(s).iter().next().unwrap().number())
            .collect();
        events.extend(t.turn(&plays));
    }
    events
}

#[test]
fn a_round_of_ten_turns_ends_with_the_bullheads_taken() {
    let mut t = started(
        2,
        options(DeckOption::Full, EndCondition::Points(66)),
        thirteen_seventeen(),
        NoShuffle,
    );
    let mut events = Vec::new();
    for turn in 0..10u8 {
        assert_eq!(
            count(&events, "round_ended"),
            0,
            "round ended early, before turn {turn}"
        );
        events.extend(t.turn(&[2 + turn, 91 + turn]));
    }
    assert_eq!(
        placed(&events)
            .into_iter()
            .filter(|p| !p.3.is_empty())
            .collect::<Vec<_>>(),
        vec![
            (0, 6, 0, vec![1, 2, 3, 4, 5], false),
            (1, 95, 3, vec![90, 91, 92, 93, 94], false),
            (0, 11, 0, vec![6, 7, 8, 9, 10], false),
            (1, 100, 3, vec![95, 96, 97, 98, 99], false),
        ]
    );
    let ended: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::RoundEnded { .. }))
        .collect();
    assert_eq!(
        ended,
        vec![&Event::RoundEnded {
            round: 1,
            scores: vec![13, 17]
        }]
    );
    assert_eq!(t.game.scores, vec![vec![13, 17]]);
    assert_eq!(t.game.totals(), vec![13, 17]);
    // Nobody reached 66: round 2 is dealt at once (NoShuffle: 1..=10, 11..=20, rows 21..=24)
    assert_eq!(t.game.status(), Status::Active);
    assert_eq!(t.game.round(), 2);
    assert!(taken_by_all(&t.game).iter().all(Vec::is_empty));
    assert_eq!(t.rows(), vec![vec![21], vec![22], vec![23], vec![24]]);
    assert_eq!(t.game.hand(0).to_vec(), cards(1..=10));
    assert_eq!(t.game.hand(1).to_vec(), cards(11..=20));
    // The round-ending call contains: the last reveal, placements, round_ended, round_started, hands
    let last_types: Vec<&str> = events.iter().rev().take(4).map(Event::type_name).collect();
    assert_eq!(
        last_types,
        vec!["hand_dealt", "hand_dealt", "round_started", "round_ended"]
    );
}

#[test]
fn zero_is_a_score() {
    // Seat 1 plays into a row that never fills: rows 1, 30, 60, 90 with seat 1 holding
    // 31..=34 and 61..=66 in turn order that never gives a sixth card.
    let deal = Deal {
        rows: vec![vec![c(1)], vec![c(30)], vec![c(60)], vec![c(90)]],
        hands: vec![
            cards(2..=11),
            cards([31, 32, 33, 34, 61, 62, 63, 64, 91, 92]),
        ],
        draw_pile: Vec::new(),
    };
    let mut t = started(
        2,
        options(DeckOption::Full, EndCondition::Rounds(1)),
        deal,
        NoShuffle,
    );
    play_ascending(&mut t);
    assert_eq!(t.game.scores, vec![vec![13, 0]]);
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.game.winners, vec![1]);
}

#[test]
fn one_round_game_ends_with_the_lowest_total_winning() {
    let mut t = started(
        2,
        options(DeckOption::Full, EndCondition::Rounds(1)),
        thirteen_seventeen(),
        NoShuffle,
    );
    let events = play_ascending(&mut t);
    let tail: Vec<&Event> = events.iter().rev().take(2).collect();
    assert_eq!(
        tail[0],
        &Event::GameFinished {
            winners: vec![0],
            seed: "00ff".into()
        }
    );
    assert_eq!(
        tail[1],
        &Event::RoundEnded {
            round: 1,
            scores: vec![13, 17]
        }
    );
    assert_eq!(
        count(&events, "round_started"),
        0,
        "no new round after the last"
    );
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.game.winners, vec![0]);
    assert!(t.game.awaiting().is_empty());
    assert!(t.game.moves_for(0).is_empty());
    assert!(t.game.legal_for(HOST).is_empty());
    let view = t.game.view_for(None);
    assert_eq!(view.winners, Some(vec![0]));
    assert_eq!(view.fairness.seed.as_deref(), Some("00ff"));
    assert_eq!(t.err(host(), &play(2)), RuleError::GameNotActive);
    assert_eq!(t.err(host(), &Command::Resign {}), RuleError::GameNotActive);
}

#[test]
fn equal_lowest_totals_share_the_win_after_one_round() {
    let mut t = started(
        2,
        options(DeckOption::Full, EndCondition::Rounds(1)),
        seventeen_seventeen(),
        NoShuffle,
    );
    play_ascending(&mut t);
    assert_eq!(t.game.scores, vec![vec![17, 17]]);
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.game.winners, vec![0, 1]);
}

#[test]
fn the_seed_is_hidden_until_the_end() {
    let mut t = started(
        2,
        options(DeckOption::Full, EndCondition::Rounds(1)),
        seventeen_seventeen(),
        NoShuffle,
    );
    assert_eq!(t.game.view_for(Some(HOST)).fairness.seed, None);
    assert_eq!(t.game.view_for(Some(HOST)).winners, None);
    play_ascending(&mut t);
    assert_eq!(
        t.game.view_for(Some(HOST)).fairness.seed.as_deref(),
        Some("00ff")
    );
}

#[test]
fn points_game_ends_after_the_round_in_which_someone_reaches_the_limit() {
    // 13 / 17 after round 1: limit 17 is reached by seat 1, seat 0 wins
    let mut t = started(
        2,
        options(DeckOption::Full, EndCondition::Points(17)),
        thirteen_seventeen(),
        NoShuffle,
    );
    play_ascending(&mut t);
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.game.winners, vec![0]);
    assert_eq!(t.game.round(), 1);

    // limit 18: nobody reached it, the game goes on
    let mut t = started(
        2,
        options(DeckOption::Full, EndCondition::Points(18)),
        thirteen_seventeen(),
        NoShuffle,
    );
    play_ascending(&mut t);
    assert_eq!(t.game.status(), Status::Active);
    assert_eq!(t.game.round(), 2);
}

#[test]
fn points_game_over_two_rounds_with_shared_winners() {
    // Round 1: 13 / 17. Round 2 (scripted dealer) mirrors it: 17 / 13. Totals 30 / 30.
    let round1 = thirteen_seventeen();
    let round2 = Deal {
        rows: round1.rows.clone(),
        hands: vec![round1.hands[1].clone(), round1.hands[0].clone()],
        draw_pile: Vec::new(),
    };
    let dealer = Scripted {
        orders: vec![(2, order_for(&round2, full_deck()))],
        asked: Vec::new(),
    };
    let mut t = started(
        2,
        options(DeckOption::Full, EndCondition::Points(20)),
        round1,
        dealer,
    );
    play_ascending(&mut t);
    assert_eq!(t.game.totals(), vec![13, 17]);
    assert_eq!(t.game.status(), Status::Active);
    // The prepared deal is only round 1's: round 2 came from the dealer
    assert_eq!(t.dealer.asked.len(), 1);
    assert_eq!(t.dealer.asked[0].0, 2);
    assert_eq!(t.dealer.asked[0].1, full_deck().to_vec());
    assert_eq!(t.game.hand(0).to_vec(), cards(91..=100));
    assert_eq!(t.game.hand(1).to_vec(), cards(2..=11));
    play_ascending(&mut t);
    assert_eq!(t.game.scores, vec![vec![13, 17], vec![17, 13]]);
    assert_eq!(t.game.totals(), vec![30, 30]);
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.game.winners, vec![0, 1]);
}

#[test]
fn rounds_game_runs_the_given_number_of_rounds() {
    let round1 = thirteen_seventeen();
    let dealer = Scripted {
        orders: vec![(2, order_for(&round1, full_deck()))],
        asked: Vec::new(),
    };
    let mut t = started(
        2,
        options(DeckOption::Full, EndCondition::Rounds(2)),
        round1,
        dealer,
    );
    play_ascending(&mut t);
    assert_eq!(t.game.status(), Status::Active);
    play_ascending(&mut t);
    assert_eq!(t.game.scores, vec![vec![13, 17], vec![13, 17]]);
    assert_eq!(t.game.totals(), vec![26, 34]);
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.game.winners, vec![0]);
}

#[test]
fn a_tactical_game_plays_every_card() {
    // 2 players, tactical: 1..=24. Rows 1, 6, 12, 18; seat 0: 2..=5, 7..=11, 13; seat 1: the rest.
    let deck = options(DeckOption::Tactical, EndCondition::Rounds(1)).deck(Ruleset::SixNimmt, 2);
    assert_eq!(deck, CardSet::range(24));
    let hand0 = cards([2, 3, 4, 5, 7, 8, 9, 10, 11, 13]);
    let hand1 = cards([14, 15, 16, 17, 19, 20, 21, 22, 23, 24]);
    let deal = Deal {
        rows: vec![vec![c(1)], vec![c(6)], vec![c(12)], vec![c(18)]],
        hands: vec![hand0, hand1],
        draw_pile: Vec::new(),
    };
    let mut t = started(
        2,
        options(DeckOption::Tactical, EndCondition::Rounds(1)),
        deal,
        NoShuffle,
    );
    play_ascending(&mut t);
    assert_eq!(t.game.status(), Status::Finished);
    // Everything dealt is on the table or taken
    let mut all: Vec<Card> = t.game.rows().iter().flatten().copied().collect();
    all.extend(taken_by_all(&t.game).iter().flatten());
    all.sort_unstable();
    assert_eq!(all, cards(1..=24));
    let table = Ruleset::SixNimmt.score_table();
    let scores: Vec<i32> = taken_by_all(&t.game)
        .iter()
        .map(|taken| i32::try_from(table.sum(taken)).unwrap())
        .collect();
    assert_eq!(t.game.scores, vec![scores]);
}

// ---------------------------------------------------------------------------------------------
// Lobby
// ---------------------------------------------------------------------------------------------

fn lobby(players: u8) -> Table<NoShuffle> {
    Table::create(new_game(setup(players, standard()), None), NoShuffle)
}

#[test]
fn the_creator_is_the_host_at_seat_0() {
    let t = lobby(3);
    assert_eq!(t.game.status(), Status::Lobby);
    assert_eq!(t.game.host_seat, 0);
    assert_eq!(t.game.seat_of(HOST), Some(0));
    assert_eq!(t.game.name.as_deref(), Some("Stammtisch"));
    assert_eq!(t.game.round(), 0);
    assert!(t.game.awaiting().is_empty());
    let types: Vec<&str> = t.events.iter().map(Event::type_name).collect();
    assert_eq!(types, vec!["game_created", "seed_recorded", "seat_taken"]);
}

#[test]
fn joining_takes_the_lowest_free_seat() {
    let mut t = lobby(4);
    assert_eq!(t.game.legal_for("anna"), vec![Command::Join {}]);
    assert_eq!(
        t.cmd(acct("anna"), &Command::Join {}),
        vec![Event::SeatTaken {
            seat: 1,
            account: "anna".into(),
        }]
    );
    t.cmd(acct("bert"), &Command::Join {});
    assert_eq!(t.game.seat_of("bert"), Some(2));
    // Anna leaves, seat 1 is free again and the next to join gets it
    assert_eq!(
        t.cmd(acct("anna"), &Command::Leave {}),
        vec![Event::SeatLeft { seat: 1 }]
    );
    assert_eq!(t.game.seat_of("anna"), None);
    t.cmd(acct("carl"), &Command::Join {});
    assert_eq!(t.game.seat_of("carl"), Some(1));
    assert_eq!(t.game.seats[1].account(), Some("carl"));
    // People's names are not part of the game (views add them); bots' are.
    assert_eq!(t.game.seats[1].name(), None);
    assert_eq!(t.game.legal_for("bert"), vec![Command::Leave {}]);
}

#[test]
fn join_errors() {
    let mut t = lobby(2);
    let e = t.err(host(), &Command::Join {});
    assert_eq!(
        (e.clone(), e.code()),
        (RuleError::AlreadySeated, "already_seated")
    );
    t.cmd(acct("anna"), &Command::Join {});
    let e = t.err(acct("anna"), &Command::Join {});
    assert_eq!(e, RuleError::AlreadySeated);
    let e = t.err(acct("bert"), &Command::Join {});
    assert_eq!((e.clone(), e.code()), (RuleError::GameFull, "game_full"));
    assert!(t.game.legal_for("bert").is_empty());
    // A bot cannot join
    assert_eq!(t.err(bot(1), &Command::Join {}).code(), "not_a_player");
}

#[test]
fn leave_errors() {
    let mut t = lobby(3);
    let e = t.err(host(), &Command::Leave {});
    assert_eq!(
        (e.clone(), e.code()),
        (RuleError::HostCannotLeave, "host_cannot_leave")
    );
    let e = t.err(acct("stranger"), &Command::Leave {});
    assert_eq!(
        (e.clone(), e.code()),
        (RuleError::NotAPlayer, "not_a_player")
    );
}

#[test]
fn host_adds_and_removes_bots() {
    let mut t = lobby(3);
    assert_eq!(
        t.game.legal_for(HOST),
        vec![Command::AddBot {
            strategy: BotStrategy::Random
        }]
    );
    let events = t.cmd(
        host(),
        &Command::AddBot {
            strategy: BotStrategy::Random,
        },
    );
    assert_eq!(
        events,
        vec![Event::BotAdded {
            seat: 1,
            strategy: BotStrategy::Random,
            name: "Bot 2".into()
        }]
    );
    assert!(t.game.seats[1].bot_controlled());
    t.cmd(acct("anna"), &Command::Join {});
    assert_eq!(t.game.seat_of("anna"), Some(2));
    assert_eq!(
        t.game.legal_for(HOST),
        vec![
            Command::RemoveSeat { seat: 1 },
            Command::RemoveSeat { seat: 2 },
            Command::Start {}
        ]
    );
    assert_eq!(
        t.game.awaiting(),
        vec![Awaiting {
            seat: 0,
            action: "start"
        }]
    );
    // Full: no more bots
    assert_eq!(
        t.err(
            host(),
            &Command::AddBot {
                strategy: BotStrategy::Random
            }
        ),
        RuleError::GameFull
    );
    // Removing a person frees their seat
    assert_eq!(
        t.cmd(host(), &Command::RemoveSeat { seat: 2 }),
        vec![Event::SeatRemoved { seat: 2 }]
    );
    assert_eq!(t.game.seat_of("anna"), None);
    assert!(t.game.awaiting().is_empty());
    // Removing the bot too
    t.cmd(host(), &Command::RemoveSeat { seat: 1 });
    assert!(t.game.seats[1].occupant.is_none());
}

#[test]
fn remove_seat_errors() {
    let mut t = lobby(3);
    t.cmd(
        host(),
        &Command::AddBot {
            strategy: BotStrategy::Random,
        },
    );
    for seat in [0, 2, 3, 200] {
        let e = t.err(host(), &Command::RemoveSeat { seat });
        assert_eq!(
            (e.clone(), e.code()),
            (RuleError::InvalidSeat { seat }, "invalid_seat")
        );
    }
}

#[test]
fn only_the_host_manages_the_lobby() {
    let mut t = lobby(3);
    t.cmd(acct("anna"), &Command::Join {});
    for command in [
        Command::AddBot {
            strategy: BotStrategy::Random,
        },
        Command::RemoveSeat { seat: 1 },
        Command::Start {},
    ] {
        let e = t.err(acct("anna"), &command);
        assert_eq!(
            (e.clone(), e.code()),
            (RuleError::NotHost, "not_host"),
            "{command:?}"
        );
        assert_eq!(
            t.err(acct("stranger"), &command),
            RuleError::NotAPlayer,
            "{command:?}"
        );
    }
}

#[test]
fn start_requires_every_seat_filled() {
    let mut t = lobby(3);
    t.cmd(
        host(),
        &Command::AddBot {
            strategy: BotStrategy::Random,
        },
    );
    let e = t.err(host(), &Command::Start {});
    assert_eq!(
        (e.clone(), e.code()),
        (RuleError::SeatsNotFilled, "seats_not_filled")
    );
    t.cmd(acct("anna"), &Command::Join {});
    let events = t.cmd(host(), &Command::Start {});
    let types: Vec<&str> = events.iter().map(Event::type_name).collect();
    assert_eq!(
        types,
        vec![
            "game_started",
            "round_started",
            "hand_dealt",
            "hand_dealt",
            "hand_dealt"
        ]
    );
    assert_eq!(t.game.status(), Status::Active);
    assert_eq!(t.game.round(), 1);
    assert_eq!(t.game.awaiting().len(), 3);
    assert_eq!(t.game.next_bot(), Some(1));
}

#[test]
fn lobby_commands_after_the_start_are_refused() {
    let mut t = lobby(3);
    t.cmd(
        host(),
        &Command::AddBot {
            strategy: BotStrategy::Random,
        },
    );
    t.cmd(acct("anna"), &Command::Join {});
    t.cmd(host(), &Command::Start {});
    for (actor, command) in [
        (acct("bert"), Command::Join {}),
        (acct("anna"), Command::Leave {}),
        (
            host(),
            Command::AddBot {
                strategy: BotStrategy::Random,
            },
        ),
        (host(), Command::RemoveSeat { seat: 1 }),
        (host(), Command::Start {}),
    ] {
        let e = t.err(actor, &command);
        assert_eq!(
            (e.clone(), e.code()),
            (RuleError::NotInLobby, "not_in_lobby"),
            "{command:?}"
        );
    }
}

#[test]
fn game_commands_in_the_lobby_are_refused() {
    let mut t = lobby(2);
    let e = t.err(host(), &play(1));
    assert_eq!(
        (e.clone(), e.code()),
        (RuleError::GameNotActive, "game_not_active")
    );
    assert_eq!(
        t.err(host(), &Command::TakeRow { row: 0 }),
        RuleError::GameNotActive
    );
    assert_eq!(t.err(host(), &Command::Resign {}), RuleError::GameNotActive);
    assert_eq!(t.err(acct("stranger"), &play(1)), RuleError::NotAPlayer);
    assert!(t.game.moves_for(0).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Resigning and strangers during play
// ---------------------------------------------------------------------------------------------

#[test]
fn a_resigned_seat_is_played_by_a_bot() {
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[41], &[42], &[43]]);
    let mut t = Table::create(new_game(setup(3, standard()), Some(deal)), NoShuffle);
    t.cmd(acct("anna"), &Command::Join {});
    t.cmd(
        host(),
        &Command::AddBot {
            strategy: BotStrategy::Random,
        },
    );
    t.cmd(host(), &Command::Start {});
    assert_eq!(t.game.next_bot(), Some(2));
    assert!(t.game.legal_for("anna").contains(&Command::Resign {}));

    assert_eq!(
        t.cmd(acct("anna"), &Command::Resign {}),
        vec![Event::SeatResigned { seat: 1 }]
    );
    assert!(t.game.seats[1].bot_controlled());
    assert!(t.game.legal_for("anna").is_empty());
    let e = t.err(acct("anna"), &play(42));
    assert_eq!((e.clone(), e.code()), (RuleError::Resigned, "resigned"));
    assert_eq!(
        t.err(acct("anna"), &Command::Resign {}),
        RuleError::Resigned
    );
    // The server acts for bots with game moves only; a bot cannot resign
    assert_eq!(t.err(bot(2), &Command::Resign {}), RuleError::NotAPlayer);
    // The server plays the seat as a bot
    t.cmd(bot(1), &play(42));
    t.cmd(bot(2), &play(43));
    t.cmd(host(), &play(41));
    assert_eq!(t.rows()[3], vec![40, 41, 42, 43]);
}

#[test]
fn strangers_cannot_play() {
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[41], &[42]]);
    let mut t = started(2, standard(), deal, NoShuffle);
    for command in [play(41), Command::TakeRow { row: 0 }, Command::Resign {}] {
        let e = t.err(acct("stranger"), &command);
        assert_eq!(
            (e.clone(), e.code()),
            (RuleError::NotAPlayer, "not_a_player"),
            "{command:?}"
        );
    }
    assert!(t.game.legal_for("stranger").is_empty());
    assert!(t.game.view_for(Some("stranger")).you.is_none());
}

// ---------------------------------------------------------------------------------------------
// Creation: options and prepared deals
// ---------------------------------------------------------------------------------------------

fn create_err(players: u8, opts: Options, deal: Option<Deal>) -> RuleError {
    Game::create(new_game(setup(players, opts), deal)).expect_err("refused")
}

#[test]
fn options_out_of_range_are_invalid() {
    for (players, end) in [
        (1, EndCondition::Points(66)),
        (11, EndCondition::Points(66)),
        (2, EndCondition::Points(0)),
        (2, EndCondition::Points(1000)),
        (2, EndCondition::Rounds(0)),
        (2, EndCondition::Rounds(51)),
    ] {
        let e = create_err(players, options(DeckOption::Full, end), None);
        assert!(
            matches!(e, RuleError::InvalidOptions(_)),
            "{players} {end:?}: {e:?}"
        );
        assert_eq!(e.code(), "invalid_options");
    }
    for (players, end) in [
        (2, EndCondition::Points(1)),
        (10, EndCondition::Points(999)),
        (2, EndCondition::Rounds(50)),
    ] {
        assert!(
            Game::create(new_game(
                setup(players, options(DeckOption::Full, end)),
                None
            ))
            .is_ok()
        );
    }
    let draft_full = Options {
        deal: DealOption::Draft,
        ..standard()
    };
    assert_eq!(create_err(4, draft_full, None).code(), "invalid_options");
}

#[test]
fn draft_and_both_ends_are_playable_options_now() {
    // These options used to be refused as unsupported_option; RULES.md makes both part of
    // 6-nimmt (presets `logik` and `profi`), and the rules crate now plays them.
    let draft = Options {
        deck: DeckOption::Tactical,
        deal: DealOption::Draft,
        ..standard()
    };
    assert!(Game::create(new_game(setup(4, draft), None)).is_ok());
    let profi = Options {
        placement: PlacementOption::BothEnds,
        ..standard()
    };
    assert!(Game::create(new_game(setup(4, profi), None)).is_ok());
    // A draft lies open: its deal cannot be prepared.
    let deal = deal_with(CardSet::range(44), [1, 2, 3, 4], &[&[], &[], &[], &[]]);
    let e = create_err(4, draft, Some(deal));
    assert!(matches!(e, RuleError::InvalidDeal(_)), "{e:?}");
}

fn assert_invalid_deal(players: u8, opts: Options, deal: Deal, what: &str) {
    let e = create_err(players, opts, Some(deal));
    assert!(matches!(e, RuleError::InvalidDeal(_)), "{what}: {e:?}");
    assert_eq!(e.code(), "invalid_deal", "{what}");
}

#[test]
fn prepared_deal_with_a_duplicate_card_is_invalid() {
    let mut deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    deal.hands[1][3] = deal.hands[0][5];
    assert_invalid_deal(2, standard(), deal, "card twice in hands");
    let mut deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    deal.hands[0][0] = c(30);
    assert_invalid_deal(2, standard(), deal, "row card in a hand");
    let mut deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    deal.rows[2] = vec![c(10)];
    assert_invalid_deal(2, standard(), deal, "two rows with the same card");
}

#[test]
fn prepared_deal_with_a_wrong_hand_size_is_invalid() {
    let mut deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    deal.hands[1].pop();
    assert_invalid_deal(2, standard(), deal, "nine cards");
    let mut deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    deal.hands[0].push(c(1));
    assert_invalid_deal(2, standard(), deal, "eleven cards");
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    assert_invalid_deal(3, standard(), deal, "two hands for three seats");
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[], &[]]);
    assert_invalid_deal(2, standard(), deal, "three hands for two seats");
}

#[test]
fn prepared_deal_with_wrong_rows_is_invalid() {
    let mut deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    deal.rows.pop();
    assert_invalid_deal(2, standard(), deal, "three rows");
    let mut deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    deal.rows.push(vec![c(50)]);
    assert_invalid_deal(2, standard(), deal, "five rows");
    let mut deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    deal.rows[0].push(c(50));
    assert_invalid_deal(2, standard(), deal, "two cards in a row");
    let mut deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    deal.rows[0].clear();
    assert_invalid_deal(2, standard(), deal, "an empty row");
}

#[test]
fn prepared_deal_with_a_card_outside_the_deck_is_invalid() {
    let tactical = options(DeckOption::Tactical, EndCondition::Points(66));
    // 2 players: 1..=24 — the complete deal is valid
    let good = deal_with(CardSet::range(24), [1, 2, 3, 4], &[&[], &[]]);
    assert!(Game::create(new_game(setup(2, tactical), Some(good.clone()))).is_ok());
    let mut bad = good.clone();
    bad.hands[0][0] = c(25);
    assert_invalid_deal(2, tactical, bad, "25 in a 2-player tactical game");
    let mut bad = good;
    bad.rows[3] = vec![c(104)];
    assert_invalid_deal(2, tactical, bad, "104 as a row card");
}

#[test]
fn a_valid_prepared_deal_is_recorded_for_the_server_only() {
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[], &[]]);
    let events = Game::create(new_game(setup(2, standard()), Some(deal.clone()))).unwrap();
    let types: Vec<&str> = events.iter().map(Event::type_name).collect();
    assert_eq!(
        types,
        vec![
            "game_created",
            "seed_recorded",
            "deal_prepared",
            "seat_taken"
        ]
    );
    assert_eq!(
        events[2],
        Event::DealPrepared {
            deal: Box::new(deal)
        }
    );
    assert_eq!(events[2].audience(), Audience::Server);
    let game = Game::from_events(&events).unwrap();
    assert!(game.prepared_deal);
    assert!(game.view_for(None).prepared_deal);
}

#[test]
fn from_events_needs_game_created_first() {
    assert!(Game::from_events(&[]).is_none());
    assert!(Game::from_events(&[Event::GameStarted {}]).is_none());
}

// ---------------------------------------------------------------------------------------------
// Error codes
// ---------------------------------------------------------------------------------------------

#[test]
fn every_error_has_its_stable_code() {
    let cases = [
        (RuleError::InvalidOptions("x".into()), "invalid_options"),
        (
            RuleError::UnsupportedOption("x".into()),
            "unsupported_option",
        ),
        (RuleError::InvalidDeal("x".into()), "invalid_deal"),
        (RuleError::NotInLobby, "not_in_lobby"),
        (RuleError::GameNotActive, "game_not_active"),
        (RuleError::AlreadySeated, "already_seated"),
        (RuleError::GameFull, "game_full"),
        (RuleError::NotAPlayer, "not_a_player"),
        (RuleError::NotHost, "not_host"),
        (RuleError::HostCannotLeave, "host_cannot_leave"),
        (RuleError::InvalidSeat { seat: 3 }, "invalid_seat"),
        (RuleError::SeatsNotFilled, "seats_not_filled"),
        (
            RuleError::NotYourTurn { action: "take_row" },
            "not_your_turn",
        ),
        (RuleError::CardNotInHand { card: 7 }, "card_not_in_hand"),
        (RuleError::NoSuchRow { row: 4 }, "no_such_row"),
        (RuleError::Resigned, "resigned"),
        (RuleError::CardNotTaken { card: 7 }, "card_not_taken"),
        (
            RuleError::CardNotAvailable { card: 7 },
            "card_not_available",
        ),
        (
            RuleError::UnknownCommand { command: "x" },
            "unknown_command",
        ),
    ];
    for (error, code) in cases {
        assert_eq!(error.code(), code, "{error:?}");
        assert!(!error.to_string().is_empty());
    }
    assert_eq!(
        RuleError::CardNotInHand { card: 7 }.to_string(),
        "card 7 is not in your hand"
    );
    assert_eq!(
        RuleError::NoSuchRow { row: 4 }.to_string(),
        "there is no row 4"
    );
}

#[test]
fn commands_and_events_serialise_as_documented() {
    let command: Command = serde_json::from_str(r#"{"type": "play_card", "card": 17}"#).unwrap();
    assert_eq!(command, play(17));
    assert!(serde_json::from_str::<Command>(r#"{"type": "play_card", "card": 0}"#).is_err());
    assert!(serde_json::from_str::<Command>(r#"{"type": "play_card", "card": 105}"#).is_err());
    let command: Command = serde_json::from_str(r#"{"type": "add_bot"}"#).unwrap();
    assert_eq!(
        command,
        Command::AddBot {
            strategy: BotStrategy::Random
        }
    );
    let event = Event::CardPlaced {
        seat: 1,
        card: c(5),
        row: 2,
        taken: [c(30)].into_iter().collect(),
        chosen: true,
        side: Side::Right,
    };
    // The right end is the default and left out.
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        serde_json::json!({"type": "card_placed", "data": {"seat": 1, "card": 5, "row": 2, "taken": [30], "chosen": true}})
    );
    let back: Event = serde_json::from_value(
        serde_json::json!({"type": "card_placed", "data": {"seat": 1, "card": 5, "row": 2, "taken": [30], "chosen": true}}),
    )
    .unwrap();
    assert_eq!(back, event);
    let left = Event::CardPlaced {
        seat: 0,
        card: c(7),
        row: 1,
        taken: Default::default(),
        chosen: false,
        side: Side::Left,
    };
    assert_eq!(
        serde_json::to_value(&left).unwrap(),
        serde_json::json!({"type": "card_placed", "data": {"seat": 0, "card": 7, "row": 1, "taken": [], "chosen": false, "side": "left"}})
    );
    let opts: Options =
        serde_json::from_str(r#"{"deck": "tactical", "end": {"rounds": 3}}"#).unwrap();
    assert_eq!(opts, options(DeckOption::Tactical, EndCondition::Rounds(3)));
}

#[test]
fn a_bot_actor_for_a_seat_that_does_not_exist_is_refused() {
    // `decide` refuses rather than panics: the other game commands already answer
    // not_a_player for a seat outside the table.
    let deal = deal_with(full_deck(), [10, 20, 30, 40], &[&[41], &[42]]);
    let mut t = started(2, standard(), deal, NoShuffle);
    assert_eq!(t.err(bot(2), &play(41)), RuleError::NotAPlayer);
    assert_eq!(
        t.err(bot(2), &Command::TakeRow { row: 0 }),
        RuleError::NotAPlayer
    );
    let resign =
        std::panic::catch_unwind(|| t.game.decide(bot(2), &Command::Resign {}, &mut NoShuffle));
    assert!(
        resign.is_ok(),
        "decide panicked on resign by Actor::Bot {{ seat: 2 }} at a 2-seat table"
    );
    assert_eq!(resign.unwrap(), Err(RuleError::NotAPlayer));
}
