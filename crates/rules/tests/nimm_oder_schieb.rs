#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Given/when/then scenarios for nimm-oder-schieb (seed 000) over prepared draw piles: chips
//! per player count, who starts, passing and taking, a player without chips, the errors, the
//! end of a game and its score, winners and their tie-breaks, matches of several games, what
//! each seat may see, the audience of the events and the validation of a prepared pile.

mod common;

use common::{
    HOST, NoShuffle, acct, c, cards, count, create_err, host, new_game, numbers, setup, started,
    types,
};
use stammtisch_rules::bots::{self, SplitMix};
use stammtisch_rules::nos_cards::{self, NosCard};
use stammtisch_rules::options::ChipsOption;
use stammtisch_rules::{
    Audience, Awaiting, BotStrategy, Card, CardSet, Command, Deal, DealOption, Dealer,
    EndCondition, Event, Game, Options, RuleError, Ruleset, Setup, Status, TakeOrPassBoard,
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A pile of 24 distinct values, top first; the removed ones are 4 8 13 16 19 21 23 27 32.
const PILE: [u8; 24] = [
    20, 7, 33, 12, 26, 3, 15, 29, 9, 22, 35, 5, 18, 31, 11, 24, 14, 28, 6, 34, 17, 25, 10, 30,
];
const PILE_REMOVED: [u8; 9] = [4, 8, 13, 16, 19, 21, 23, 27, 32];

fn nos_options(games: u16, chips: ChipsOption) -> Options {
    let mut options = Ruleset::NimmOderSchieb.default_options();
    options.end = EndCondition::Rounds(games);
    options.chips = chips;
    options
}

fn nos(players: u8, games: u16, chips: ChipsOption) -> Setup {
    setup(Ruleset::NimmOderSchieb, players, nos_options(games, chips))
}

/// A prepared nimm-oder-schieb deal: only the draw pile, top first.
fn pile(values: impl IntoIterator<Item = u8>) -> Deal {
    Deal {
        rows: Vec::new(),
        hands: Vec::new(),
        draw_pile: cards(values),
    }
}

/// A started game of `players` with the prepared `pile`: the host at seat 0, then anna, ben,
/// carla, dan, emil, fritz.
fn game_with<D: Dealer>(setup: Setup, deal: Deal, dealer: D) -> common::Table<D> {
    const PEOPLE: [&str; 6] = ["anna", "ben", "carla", "dan", "emil", "fritz"];
    started(setup, Some(deal), dealer, &PEOPLE)
}

/// Three players, one game, chips hidden, the pile [`PILE`].
fn three() -> common::Table<NoShuffle> {
    game_with(nos(3, 1, ChipsOption::Hidden), pile(PILE), NoShuffle)
}

fn pass() -> Command {
    Command::Pass {}
}

fn take() -> Command {
    Command::Take {}
}

/// The one seat a nimm-oder-schieb game waits for.
fn to_act(game: &Game) -> u8 {
    let awaiting = game.awaiting();
    assert!(!awaiting.is_empty(), "nobody is awaited");
    assert!(awaiting.iter().all(|a| a.seat == awaiting[0].seat));
    awaiting[0].seat
}

/// Plays a script of moves `<seat>p` (pass) or `<seat>t` (take), each optionally repeated
/// with `*n`, e.g. `"0p 1p 2t 2t*5"`; each move's seat must be the one awaited. Returns the
/// events.
fn moves<D: Dealer>(t: &mut common::Table<D>, script: &str) -> Vec<Event> {
    let mut events = Vec::new();
    for token in script.split_whitespace() {
        let (step, times) = match token.split_once('*') {
            Some((step, n)) => (step, n.parse::<usize>().unwrap()),
            None => (token, 1),
        };
        let (seat, what) = step.split_at(step.len() - 1);
        let seat: u8 = seat.parse().unwrap();
        let command = match what {
            "p" => pass(),
            "t" => take(),
            other => panic!("unknown move {other} in {token}"),
        };
        for _ in 0..times {
            assert_eq!(to_act(&t.game), seat, "script step {token}");
            events.extend(t.by(seat, &command));
        }
    }
    events
}

/// The nimm-oder-schieb board of a game.
fn board(game: &Game) -> &TakeOrPassBoard {
    game.board.take_or_pass().expect("a nimm-oder-schieb game")
}

/// Every seat's chips, as the table holds them.
fn chips(game: &Game) -> Vec<u8> {
    board(game).chips[..usize::from(game.setup.players)].to_vec()
}

fn taken(game: &Game, seat: u8) -> Vec<u8> {
    numbers(game.taken(seat))
}

fn open(game: &Game) -> Option<u8> {
    board(game).open.map(Card::number)
}

/// The score RULES.md gives a seat's cards and chips, by `nos_cards::score`.
fn score_of(game: &Game, seat: u8) -> i32 {
    let cards: Vec<NosCard> = game
        .taken(seat)
        .into_iter()
        .map(|c| NosCard::new(c.number()).unwrap())
        .collect();
    nos_cards::score(&cards, u32::from(board(game).chips[usize::from(seat)])).total
}

fn faces(values: impl IntoIterator<Item = u8>) -> Vec<nos_cards::CardFace> {
    values
        .into_iter()
        .map(|v| NosCard::new(v).unwrap().face())
        .collect()
}

fn awaiting(seat: u8, actions: &[&'static str]) -> Vec<Awaiting> {
    actions
        .iter()
        .map(|action| Awaiting { seat, action })
        .collect()
}

/// A `nos_game_ended` event as `(game, scores, chips, removed)`.
type Ended = (u16, Vec<i32>, Vec<u8>, Vec<u8>);

fn games_ended(events: &[Event]) -> Vec<Ended> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::NosGameEnded(end) => Some((
                end.game,
                end.scores.clone(),
                end.chips.clone(),
                numbers(end.removed.iter().copied()),
            )),
            _ => None,
        })
        .collect()
}

/// The `nos_game_started` events as `(game, first_seat, chips)`.
fn games_started(events: &[Event]) -> Vec<(u16, u8, u8)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::NosGameStarted {
                game,
                first_seat,
                chips,
            } => Some((*game, *first_seat, *chips)),
            _ => None,
        })
        .collect()
}

/// A dealer that leaves the cards ascending and records which games it shuffled.
#[derive(Default)]
struct Recording {
    games: Vec<u16>,
}

impl Dealer for Recording {
    fn shuffle(&mut self, round: u16, cards: &mut [Card]) {
        assert_eq!(cards.len(), 33, "the dealer is handed the 33 cards");
        assert_eq!(numbers(cards.iter().copied()), (3..=35).collect::<Vec<_>>());
        self.games.push(round);
    }
}

// ---------------------------------------------------------------------------------------------
// Set-up: players, chips, options
// ---------------------------------------------------------------------------------------------

#[test]
fn chips_per_player_count() {
    for (players, expected) in [(3, 11), (4, 11), (5, 11), (6, 9), (7, 7)] {
        // Given a game of `players`
        let t = game_with(nos(players, 1, ChipsOption::Hidden), pile(PILE), NoShuffle);
        // Then every seat starts with the chips RULES.md gives that table size
        assert_eq!(
            games_started(&t.events),
            vec![(1, 0, expected)],
            "{players} players"
        );
        assert_eq!(chips(&t.game), vec![expected; usize::from(players)]);
        assert_eq!(nos_cards::starting_chips(players), expected);
        let you = t.game.view_for(Some(HOST)).you.unwrap();
        assert_eq!(you.chips, Some(expected));
        assert_eq!(board(&t.game).pot, 0);
    }
}

#[test]
fn two_and_eight_players_are_refused() {
    for players in [2, 8, 1, 10] {
        let e = create_err(nos(players, 1, ChipsOption::Hidden), None);
        assert!(
            matches!(e, RuleError::InvalidOptions(_)),
            "{players}: {e:?}"
        );
        assert_eq!(e.code(), "invalid_options");
    }
    assert_eq!(Ruleset::NimmOderSchieb.players(), (3, 7));
}

#[test]
fn the_default_options_are_one_game_with_hidden_chips() {
    let o = Ruleset::NimmOderSchieb.default_options();
    assert_eq!(o.end, EndCondition::Rounds(1));
    assert_eq!(o.chips, ChipsOption::Hidden);
    assert_eq!(
        Ruleset::from_name("nimm-oder-schieb"),
        Some(Ruleset::NimmOderSchieb)
    );
    // `chips` is left out when hidden and read back when open
    assert_eq!(
        serde_json::to_value(o).unwrap(),
        serde_json::json!({"deck": "full", "deal": "random", "placement": "right", "end": {"rounds": 1}})
    );
    let open: Options = serde_json::from_str(r#"{"chips": "open", "end": {"rounds": 3}}"#).unwrap();
    assert_eq!(open.chips, ChipsOption::Open);
    assert_eq!(open.end, EndCondition::Rounds(3));
}

#[test]
fn open_chips_are_a_valid_option_of_nimm_oder_schieb() {
    // RULES.md: `chips`: `hidden` (default) | `open`
    for players in 3..=7 {
        assert_eq!(
            nos_options(2, ChipsOption::Open).validate(Ruleset::NimmOderSchieb, players),
            Ok(()),
            "{players} players"
        );
    }
    let events = Game::create(new_game(nos(4, 1, ChipsOption::Open), None))
        .expect("a game with open chips is created");
    assert!(matches!(
        &events[0],
        Event::GameCreated(creation) if creation.options.chips == ChipsOption::Open
    ));
}

#[test]
fn row_game_options_points_and_too_many_games_are_refused() {
    // RULES.md: a match is a number of games (`games`, as rounds), never a points limit
    let mut o = nos_options(1, ChipsOption::Hidden);
    o.end = EndCondition::Points(66);
    assert!(matches!(
        o.validate(Ruleset::NimmOderSchieb, 4),
        Err(RuleError::InvalidOptions(_))
    ));
    let mut o = nos_options(1, ChipsOption::Hidden);
    o.deal = DealOption::Draft;
    assert!(matches!(
        o.validate(Ruleset::NimmOderSchieb, 4),
        Err(RuleError::InvalidOptions(_))
    ));
    let o = nos_options(51, ChipsOption::Hidden);
    assert!(matches!(
        o.validate(Ruleset::NimmOderSchieb, 4),
        Err(RuleError::InvalidOptions(_))
    ));
}

#[test]
fn chips_are_not_an_option_of_the_row_games() {
    // RULES.md lists `chips` among nimm-oder-schieb's options only.
    for ruleset in [Ruleset::SixNimmt, Ruleset::ElevenNimmt, Ruleset::XNimmt] {
        let mut o = ruleset.default_options();
        o.chips = ChipsOption::Open;
        assert!(
            matches!(o.validate(ruleset, 3), Err(RuleError::InvalidOptions(_))),
            "{ruleset:?} accepts chips: open"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Start: who reveals the first card
// ---------------------------------------------------------------------------------------------

#[test]
fn the_first_game_starts_at_seat_0_with_the_top_card_open() {
    // Given a prepared pile
    let t = three();
    // Then the start shuffles nothing, sets the pile and reveals its top card to seat 0
    let start = t
        .events
        .iter()
        .position(|e| matches!(e, Event::GameStarted {}))
        .unwrap();
    assert_eq!(
        types(&t.events[start..]),
        vec![
            "game_started",
            "nos_game_started",
            "draw_pile_set",
            "card_revealed"
        ]
    );
    assert_eq!(
        t.events[start + 2],
        Event::DrawPileSet {
            pile: cards(PILE),
            removed: cards(PILE_REMOVED),
        }
    );
    assert_eq!(t.events[start + 3], Event::CardRevealed { card: c(20) });
    assert_eq!(t.game.round(), 1);
    assert_eq!(open(&t.game), Some(20));
    assert_eq!(t.game.awaiting(), awaiting(0, &["pass", "take"]));
    assert_eq!(t.game.moves_for(0), vec![pass(), take()]);
    assert!(t.game.moves_for(1).is_empty() && t.game.moves_for(2).is_empty());
    assert_eq!(
        t.game.legal_for(HOST),
        vec![pass(), take(), Command::Resign {}]
    );
    assert_eq!(
        t.game.legal_for("anna"),
        vec![Command::Resign {}],
        "anna is not to act"
    );
    assert!(t.game.is_awaited(0) && !t.game.is_awaited(1));
}

#[test]
fn game_1_starts_at_seat_0_and_game_2_at_seat_1() {
    // Given a match of four games for three players, each game's first seat taking every card
    let mut t = started(nos(3, 4, ChipsOption::Hidden), None, NoShuffle, &["anna"]);
    for game in 0..4u8 {
        let first = game % 3;
        assert_eq!(to_act(&t.game), first, "game {}", game + 1);
        moves(&mut t, &format!("{first}t*24"));
    }
    // Then game g (0-based) is started by seat g mod players
    assert_eq!(
        games_started(&t.events),
        vec![(1, 0, 11), (2, 1, 11), (3, 2, 11), (4, 0, 11)]
    );
    assert_eq!(t.game.status(), Status::Finished);
    // The unshuffled 33: the pile is 3..=26 (one run: 3 − 11 chips = −8), the removed 27..=35
    let ended = games_ended(&t.events);
    assert_eq!(ended.len(), 4);
    for (i, (game, scores, chips, removed)) in ended.iter().enumerate() {
        let first = i % 3;
        assert_eq!(usize::from(*game), i + 1);
        let mut expected = vec![-11; 3];
        expected[first] = -8;
        assert_eq!(scores, &expected);
        assert_eq!(chips, &vec![11; 3]);
        assert_eq!(removed, &(27..=35).collect::<Vec<_>>());
    }
    assert_eq!(t.game.totals(), vec![-38, -41, -41]);
    // Seats 1 and 2 tie on −41 and on 44 chips kept: they share the win
    assert_eq!(t.game.winners, vec![1, 2]);
}

// ---------------------------------------------------------------------------------------------
// Passing and taking
// ---------------------------------------------------------------------------------------------

#[test]
fn passing_pays_a_chip_onto_the_card_and_moves_to_the_next_seat() {
    // Given seat 0 facing 20 with an empty pot
    let mut t = three();
    // When seat 0 passes
    let events = t.by(0, &pass());
    // Then a chip goes from seat 0 onto the card and seat 1 faces the same card
    assert_eq!(events, vec![Event::Passed { seat: 0 }]);
    assert_eq!(chips(&t.game), vec![10, 11, 11]);
    assert_eq!(board(&t.game).pot, 1);
    assert_eq!(open(&t.game), Some(20));
    assert_eq!(t.game.awaiting(), awaiting(1, &["pass", "take"]));
    // When seats 1 and 2 pass too, the turn wraps round to seat 0
    moves(&mut t, "1p 2p");
    assert_eq!(chips(&t.game), vec![10, 10, 10]);
    assert_eq!(board(&t.game).pot, 3);
    assert_eq!(to_act(&t.game), 0);
    assert_eq!(open(&t.game), Some(20));
    let view = t.game.view_for(None);
    assert_eq!(view.table.pot, Some(3));
    assert_eq!(view.table.open_card, Some(Some(faces([20]).remove(0))));
    assert_eq!(view.table.draw_pile_size, Some(23), "a pass draws nothing");
}

#[test]
fn the_last_seat_passes_to_seat_0() {
    // Given five players
    let mut t = game_with(nos(5, 1, ChipsOption::Hidden), pile(PILE), NoShuffle);
    // When seats 0 to 4 pass
    moves(&mut t, "0p 1p 2p 3p 4p");
    // Then seat 0 is next, facing a pot of five
    assert_eq!(to_act(&t.game), 0);
    assert_eq!(board(&t.game).pot, 5);
}

#[test]
fn taking_collects_the_card_and_the_pot_and_the_taker_acts_on_the_next_card() {
    // Given 20 with three chips on it, seat 0 to act
    let mut t = three();
    moves(&mut t, "0p 1p 2p");
    // When seat 0 takes
    let events = t.by(0, &take());
    // Then seat 0 has the card and the three chips, and turns up the next card, 7
    assert_eq!(
        events,
        vec![
            Event::CardTaken {
                seat: 0,
                card: c(20),
                chips: 3
            },
            Event::CardRevealed { card: c(7) }
        ]
    );
    assert_eq!(chips(&t.game), vec![13, 10, 10]);
    assert_eq!(taken(&t.game, 0), vec![20]);
    assert_eq!(board(&t.game).pot, 0);
    assert_eq!(open(&t.game), Some(7));
    // and acts again
    assert_eq!(t.game.awaiting(), awaiting(0, &["pass", "take"]));
    // When seat 0 passes 7 and seat 1 takes it with the one chip
    let events = moves(&mut t, "0p 1t");
    // Then seat 1 acts on 33
    assert_eq!(
        events,
        vec![
            Event::Passed { seat: 0 },
            Event::CardTaken {
                seat: 1,
                card: c(7),
                chips: 1
            },
            Event::CardRevealed { card: c(33) }
        ]
    );
    assert_eq!(chips(&t.game), vec![12, 11, 10]);
    assert_eq!(to_act(&t.game), 1);
    // Taking with an empty pot collects no chips
    let events = t.by(1, &take());
    assert_eq!(
        events[0],
        Event::CardTaken {
            seat: 1,
            card: c(33),
            chips: 0
        }
    );
    assert_eq!(taken(&t.game, 1), vec![7, 33]);
    assert_eq!(chips(&t.game), vec![12, 11, 10]);
}

#[test]
fn the_draw_pile_counts_down_with_each_card_taken() {
    let mut t = three();
    assert_eq!(t.game.view_for(None).table.draw_pile_size, Some(23));
    for left in (0..23).rev() {
        let seat = to_act(&t.game);
        t.by(seat, &take());
        assert_eq!(t.game.view_for(None).table.draw_pile_size, Some(left));
        assert_eq!(open(&t.game), Some(PILE[23 - left]));
    }
    // The last card is open with nothing left to draw
    assert_eq!(t.game.status(), Status::Active);
    assert_eq!(open(&t.game), Some(30));
}

// ---------------------------------------------------------------------------------------------
// No chips, wrong seat, wrong game
// ---------------------------------------------------------------------------------------------

#[test]
fn a_player_without_chips_must_take() {
    // Given three players who pass the first card round eleven times: 33 chips on 20, none
    // left in any hand
    let mut t = three();
    moves(&mut t, &"0p 1p 2p ".repeat(11));
    assert_eq!(chips(&t.game), vec![0, 0, 0]);
    assert_eq!(board(&t.game).pot, 33);
    // When seat 0 tries to pass
    let e = t.err_by(0, &pass());
    // Then it is refused: no chips, take the card
    assert_eq!(e, RuleError::NoChips);
    assert_eq!(e.code(), "no_chips");
    assert_eq!(t.game.moves_for(0), vec![take()]);
    // Public `awaiting` does not reveal the empty purse; `moves_for` does, to the seat.
    assert_eq!(t.game.awaiting(), awaiting(0, &["pass", "take"]));
    assert_eq!(t.game.legal_for(HOST), vec![take(), Command::Resign {}]);
    // Another seat without chips still hears that it is not its turn
    assert_eq!(
        t.err_by(1, &pass()),
        RuleError::NotYourTurn { action: "pass" }
    );
    // When seat 0 takes, it has the 33 chips and may pass again
    t.by(0, &take());
    assert_eq!(chips(&t.game), vec![33, 0, 0]);
    assert_eq!(t.game.awaiting(), awaiting(0, &["pass", "take"]));
    t.by(0, &pass());
    // Then seat 1, without chips, may only take
    assert_eq!(t.game.awaiting(), awaiting(1, &["pass", "take"]));
    assert_eq!(t.game.moves_for(1), vec![take()]);
    assert_eq!(t.err_by(1, &pass()), RuleError::NoChips);
    let view = t.game.view_for(Some("anna"));
    assert_eq!(view.legal, vec![take(), Command::Resign {}]);
}

#[test]
fn a_bot_without_chips_takes() {
    // Given seat 1 a bot of either strategy, with no chips, facing a card
    let mut t = started(
        nos(3, 1, ChipsOption::Hidden),
        Some(pile(PILE)),
        NoShuffle,
        &[],
    );
    moves(&mut t, &"0p 1p 2p ".repeat(11));
    moves(&mut t, "0t 0p");
    assert_eq!(t.game.next_bot(), Some(1));
    let mut rng = SplitMix(7);
    for strategy in [BotStrategy::Random, BotStrategy::Heuristic] {
        for _ in 0..20 {
            assert_eq!(
                bots::choose(&t.game, 1, strategy, &mut rng),
                Some(take()),
                "{strategy:?}"
            );
        }
        // and a seat that is not awaited gets no move
        assert_eq!(bots::choose(&t.game, 2, strategy, &mut rng), None);
    }
}

#[test]
fn the_wrong_seat_is_told_it_is_not_its_turn() {
    let mut t = three();
    for seat in [1, 2] {
        let e = t.err_by(seat, &pass());
        assert_eq!(e, RuleError::NotYourTurn { action: "pass" });
        assert_eq!(e.code(), "not_your_turn");
        assert_eq!(
            t.err_by(seat, &take()),
            RuleError::NotYourTurn { action: "take" }
        );
    }
    // The server cannot act for a person's seat
    assert_eq!(t.err(common::bot(0), &pass()), RuleError::NotAPlayer);
    // Someone without a seat is not a player
    assert_eq!(t.err(acct("stranger"), &take()), RuleError::NotAPlayer);
    // After a pass the one who passed is no longer to act
    t.by(0, &pass());
    assert_eq!(
        t.err_by(0, &pass()),
        RuleError::NotYourTurn { action: "pass" }
    );
}

#[test]
fn row_game_commands_are_unknown() {
    let mut t = three();
    for command in [
        Command::PlayCard { card: c(20) },
        Command::TakeRow { row: 0 },
        Command::DraftCard { card: c(20) },
        Command::KeepCard { card: c(20) },
    ] {
        let e = t.err_by(0, &command);
        assert_eq!(
            e,
            RuleError::UnknownCommand {
                command: command.name()
            }
        );
        assert_eq!(e.code(), "unknown_command");
    }
}

#[test]
fn pass_and_take_are_unknown_in_the_row_games() {
    let mut t = started(
        setup(Ruleset::SixNimmt, 2, Ruleset::SixNimmt.default_options()),
        None,
        NoShuffle,
        &[],
    );
    assert_eq!(
        t.err(host(), &pass()),
        RuleError::UnknownCommand { command: "pass" }
    );
    assert_eq!(
        t.err(host(), &take()),
        RuleError::UnknownCommand { command: "take" }
    );
}

#[test]
fn pass_and_take_need_a_running_game() {
    // In the lobby
    let mut t = common::Table::create(
        new_game(nos(3, 1, ChipsOption::Hidden), Some(pile(PILE))),
        NoShuffle,
    );
    assert_eq!(t.err(host(), &pass()), RuleError::GameNotActive);
    assert_eq!(t.err(host(), &take()), RuleError::GameNotActive);
    // and after the end
    let mut t = three();
    moves(&mut t, "0t*24");
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.err_by(0, &take()), RuleError::GameNotActive);
    assert_eq!(t.err_by(1, &pass()), RuleError::GameNotActive);
    assert!(t.game.awaiting().is_empty());
    assert!((0..3).all(|s| t.game.moves_for(s).is_empty()));
}

#[test]
fn a_resigned_seat_is_played_by_a_bot() {
    let mut t = three();
    t.by(0, &Command::Resign {});
    assert!(t.game.seats[0].resigned);
    assert_eq!(t.game.next_bot(), Some(0));
    assert_eq!(t.err(host(), &pass()), RuleError::Resigned);
    // The server acts for the seat
    t.by(0, &pass());
    assert_eq!(to_act(&t.game), 1);
}

// ---------------------------------------------------------------------------------------------
// The end of a game, scores, winners
// ---------------------------------------------------------------------------------------------

/// The seed's example, played: Dan (seat 3) ends with 6, 8 9 10, 13 14 15, 23 24, 33 and six
/// chips = 77. Anna, Ben and Carla (0–2) pass 24 to Dan, who takes it and the next nine; he
/// then passes the eleventh card eight times round, and seat 0 takes it and the rest.
fn seed_example() -> common::Table<NoShuffle> {
    let mut values = vec![24, 6, 8, 9, 10, 13, 14, 15, 23, 33];
    values.extend(16..=22);
    values.extend(25..=31);
    let mut t = game_with(nos(4, 1, ChipsOption::Hidden), pile(values), NoShuffle);
    moves(&mut t, "0p 1p 2p 3t 3t*9");
    assert_eq!(chips(&t.game), vec![10, 10, 10, 14]);
    assert_eq!(open(&t.game), Some(16));
    moves(&mut t, &"3p 0p 1p 2p ".repeat(7));
    moves(&mut t, "3p 0t 0t*12");
    assert_eq!(chips(&t.game), vec![32, 3, 3, 6]);
    assert_eq!(t.game.status(), Status::Active, "one card left");
    t
}

#[test]
fn the_game_ends_when_the_24th_card_is_taken() {
    // Given the seed's example with one card (31) left open
    let mut t = seed_example();
    assert_eq!(open(&t.game), Some(31));
    assert_eq!(t.game.view_for(None).table.draw_pile_size, Some(0));
    // When seat 0 takes it
    let events = t.by(0, &take());
    // Then the game is scored, the removed cards shown, and the match (of one game) is over
    assert_eq!(
        types(&events),
        vec!["card_taken", "nos_game_ended", "game_finished"]
    );
    assert_eq!(
        games_ended(&events),
        vec![(
            1,
            // Seat 0: 16..=22 and 25..=31, two runs, 16 + 25 − 32 chips = 9
            // Seats 1, 2: no cards, 3 chips. Seat 3: 83 − 6 = 77 (the seed's example)
            vec![9, -3, -3, 77],
            vec![32, 3, 3, 6],
            vec![3, 4, 5, 7, 11, 12, 32, 34, 35]
        )]
    );
    assert_eq!(taken(&t.game, 3), vec![6, 8, 9, 10, 13, 14, 15, 23, 24, 33]);
    for seat in 0..4 {
        assert_eq!(
            t.game.scores[0][usize::from(seat)],
            score_of(&t.game, seat),
            "seat {seat}"
        );
    }
    assert_eq!(t.game.scores, vec![vec![9, -3, -3, 77]]);
    assert_eq!(t.game.totals(), vec![9, -3, -3, 77]);
    assert_eq!(t.game.status(), Status::Finished);
    // Seats 1 and 2 tie on −3 with three chips each: they share the win
    assert_eq!(t.game.winners, vec![1, 2]);
    assert_eq!(
        events.last(),
        Some(&Event::GameFinished {
            winners: vec![1, 2],
            seed: "00ff".into()
        })
    );
    assert_eq!(count(&t.events, "card_revealed"), 24);
    assert_eq!(count(&t.events, "card_taken"), 24);
}

#[test]
fn a_tie_goes_to_the_player_with_more_chips() {
    // Given a pile 3, 6, then 7..=28 (removed 4, 5, 29..=35)
    let mut values = vec![3, 6];
    values.extend(7..=28);
    let mut t = game_with(nos(3, 1, ChipsOption::Hidden), pile(values), NoShuffle);
    // When seat 1 takes 3 with one chip, seat 2 takes 6 with four, seat 0 takes the rest
    moves(&mut t, "0p 1t");
    moves(&mut t, "1p 2p 0p 1p 2t");
    moves(&mut t, "2p 0t 0t*21");
    // Then seats 1 (3 − 10 chips) and 2 (6 − 13 chips) tie on −7, and seat 2 has more chips
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(chips(&t.game), vec![10, 10, 13]);
    assert_eq!(t.game.totals(), vec![7 - 10, -7, -7]);
    assert_eq!(
        games_ended(&t.events)[0].3,
        vec![4, 5, 29, 30, 31, 32, 33, 34, 35]
    );
    assert_eq!(t.game.winners, vec![2]);
}

#[test]
fn taking_everything_scores_the_runs() {
    // Given seat 0 takes all 24 cards of PILE and keeps its 11 chips
    let mut t = three();
    moves(&mut t, "0t*24");
    // Then it scores the lowest card of each run of PILE's values, minus 11
    let mut values = PILE.to_vec();
    values.sort_unstable();
    // 3 | 5 6 7 | 9 10 11 12 | 14 15 | 17 18 | 20 | 22 | 24 25 26 | 28 29 30 31 | 33 34 35
    let expected = 3 + 5 + 9 + 14 + 17 + 20 + 22 + 24 + 28 + 33 - 11;
    assert_eq!(taken(&t.game, 0), values);
    assert_eq!(score_of(&t.game, 0), expected);
    assert_eq!(t.game.totals(), vec![expected, -11, -11]);
    assert_eq!(t.game.winners, vec![1, 2]);
}

#[test]
fn a_match_of_two_games_deals_again_with_fresh_chips_and_sums_the_totals() {
    // Given a match of two games; the first from the pile 3, 6, 7..=28
    let mut values = vec![3, 6];
    values.extend(7..=28);
    let mut t = game_with(
        nos(3, 2, ChipsOption::Hidden),
        pile(values),
        Recording::default(),
    );
    assert!(board(&t.game).pile.iter().all(Option::is_some));
    // When the first game is played as in the tie-break scenario
    moves(&mut t, "0p 1t 1p 2p 0p 1p 2t 2p 0t");
    let events = moves(&mut t, "0t*21");
    // Then it ends, and the second game is shuffled and started at seat 1 with fresh chips
    assert_eq!(
        types(&events[events.len() - 5..]),
        vec![
            "card_taken",
            "nos_game_ended",
            "nos_game_started",
            "draw_pile_set",
            "card_revealed"
        ]
    );
    assert_eq!(count(&events, "game_finished"), 0);
    assert_eq!(t.dealer.games, vec![2], "only the second game is shuffled");
    assert_eq!(t.game.status(), Status::Active);
    assert_eq!(t.game.round(), 2);
    assert_eq!(t.game.scores, vec![vec![-3, -7, -7]]);
    assert_eq!(t.game.totals(), vec![-3, -7, -7]);
    assert_eq!(chips(&t.game), vec![11, 11, 11]);
    assert!((0..3).all(|s| t.game.taken(s).is_empty()));
    assert_eq!(board(&t.game).pot, 0);
    assert_eq!(games_started(&t.events), vec![(1, 0, 11), (2, 1, 11)]);
    // The unshuffled cards: pile 3..=26, removed 27..=35
    assert_eq!(
        events[events.len() - 2],
        Event::DrawPileSet {
            pile: cards(3..=26),
            removed: cards(27..=35)
        }
    );
    assert_eq!(open(&t.game), Some(3));
    assert_eq!(t.game.awaiting(), awaiting(1, &["pass", "take"]));
    let view = t.game.view_for(Some(HOST));
    assert_eq!(
        view.table.removed, None,
        "the new game's removed cards stay hidden"
    );
    assert_eq!(view.table.draw_pile_size, Some(23));
    assert_eq!(view.round, 2);
    // When the second game is played: seat 2 takes 3 (one chip), seat 0 takes 4..=26 (one)
    moves(&mut t, "1p 2t 2p 0t 0t*22");
    // Then seat 0 scores 4 − 12 = −8, seat 1 −10, seat 2 3 − 11 = −8; totals are the sums
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(t.game.scores, vec![vec![-3, -7, -7], vec![-8, -10, -8]]);
    assert_eq!(t.game.totals(), vec![-11, -17, -15]);
    assert_eq!(t.game.winners, vec![1]);
    assert_eq!(count(&t.events, "nos_game_ended"), 2);
    assert_eq!(count(&t.events, "game_finished"), 1);
    assert_eq!(games_ended(&t.events)[1].3, (27..=35).collect::<Vec<_>>());
    let view = t.game.view_for(None);
    assert_eq!(view.totals, vec![-11, -17, -15]);
    assert_eq!(view.scores, t.game.scores);
    assert_eq!(view.winners, Some(vec![1]));
    assert!(view.fairness.seed.is_some());
}

// ---------------------------------------------------------------------------------------------
// What each seat sees
// ---------------------------------------------------------------------------------------------

#[test]
fn with_hidden_chips_a_seat_sees_only_its_own_count() {
    // Given three players, seat 0 passed and seat 1 took 20 with one chip
    let mut t = three();
    moves(&mut t, "0p 1t");
    // Then anna (seat 1) sees her own chips but not the others'
    let view = t.game.view_for(Some("anna"));
    let seen: Vec<Option<u8>> = view.seats.iter().map(|s| s.chips).collect();
    assert_eq!(seen, vec![None, Some(12), None]);
    let you = view.you.as_ref().unwrap();
    assert_eq!((you.seat, you.chips), (1, Some(12)));
    // the host sees its own
    let view = t.game.view_for(Some(HOST));
    let seen: Vec<Option<u8>> = view.seats.iter().map(|s| s.chips).collect();
    assert_eq!(seen, vec![Some(10), None, None]);
    assert_eq!(view.you.unwrap().chips, Some(10));
    // a spectator sees none
    let view = t.game.view_for(None);
    assert!(view.seats.iter().all(|s| s.chips.is_none()));
    assert!(view.you.is_none());
    // and the serialised view has no chips field for the other seats
    let json = serde_json::to_value(t.game.view_for(Some("anna"))).unwrap();
    assert!(json["seats"][0].get("chips").is_none());
    assert_eq!(json["seats"][1]["chips"], 12);
    assert!(json["seats"][2].get("chips").is_none());
    assert_eq!(json["you"]["chips"], 12);
    // Taken cards are public, as card faces
    let view = t.game.view_for(None);
    assert_eq!(view.seats[1].cards, Some(faces([20])));
    assert_eq!(view.seats[0].cards, Some(Vec::new()));
}

#[test]
fn with_open_chips_everyone_sees_every_count() {
    let mut t = game_with(nos(3, 1, ChipsOption::Open), pile(PILE), NoShuffle);
    moves(&mut t, "0p 1t");
    for viewer in [None, Some(HOST), Some("anna"), Some("ben")] {
        let view = t.game.view_for(viewer);
        let seen: Vec<Option<u8>> = view.seats.iter().map(|s| s.chips).collect();
        assert_eq!(seen, vec![Some(10), Some(12), Some(11)], "{viewer:?}");
    }
    assert_eq!(t.game.view_for(Some("ben")).you.unwrap().chips, Some(11));
}

#[test]
fn the_view_has_the_take_or_pass_table_and_no_row_game_fields() {
    let mut t = three();
    moves(&mut t, "0p 1p");
    let view = t.game.view_for(Some(HOST));
    assert!(view.table.rows.is_empty());
    assert!(view.table.revealed.is_empty());
    assert_eq!(view.table.open_card, Some(Some(faces([20]).remove(0))));
    assert_eq!(view.table.pot, Some(2));
    assert_eq!(view.table.draw_pile_size, Some(23));
    assert_eq!(
        view.table.removed, None,
        "removed cards stay hidden while playing"
    );
    for seat in &view.seats {
        assert_eq!(seat.taken, None);
        assert_eq!(seat.round_bullheads, None);
        assert_eq!(seat.x_row, None);
        assert_eq!(seat.hand_size, 0);
        assert!(seat.cards.is_some());
    }
    let you = view.you.unwrap();
    assert!(you.hand.is_empty());
    assert_eq!(you.x_stack, None);
    assert_eq!(view.awaiting, awaiting(2, &["pass", "take"]));
    assert_eq!(view.legal, vec![Command::Resign {}]);
    assert_eq!(view.winners, None);
    let json = serde_json::to_value(t.game.view_for(None)).unwrap();
    assert_eq!(
        json["table"]["open_card"],
        serde_json::json!({"value": 20, "suit": "diamonds", "rank": "7", "label": "7♦"})
    );
    assert!(json["table"].get("removed").is_none());
}

#[test]
fn the_removed_cards_are_shown_once_the_game_is_finished() {
    let mut t = three();
    moves(&mut t, "0t*23");
    assert_eq!(t.game.view_for(None).table.removed, None);
    t.by(0, &take());
    let view = t.game.view_for(None);
    assert_eq!(view.status, Status::Finished);
    assert_eq!(view.table.removed, Some(faces(PILE_REMOVED)));
    assert_eq!(view.table.open_card, Some(None), "no open card");
    assert_eq!(view.table.draw_pile_size, Some(0));
    assert_eq!(view.table.pot, Some(0));
    // Chips stay hidden for the other seats even now (the game_ended event has them)
    let view = t.game.view_for(Some("anna"));
    assert_eq!(view.seats[1].chips, Some(11));
}

#[test]
fn the_draw_pile_is_for_the_server_only() {
    let t = three();
    let set = t
        .events
        .iter()
        .find(|e| matches!(e, Event::DrawPileSet { .. }))
        .unwrap();
    assert_eq!(set.audience(), Audience::Server);
    assert!(!set.audience().admits(Some(0)) && !set.audience().admits(None));
    assert_eq!(set.type_name(), "draw_pile_set");
    let prepared = t
        .events
        .iter()
        .find(|e| matches!(e, Event::DealPrepared { .. }))
        .unwrap();
    assert_eq!(prepared.audience(), Audience::Server);
    // The other events of the game are public
    let mut t = three();
    moves(&mut t, "0p 1t 1t*22");
    let events = t.by(1, &take());
    for e in t.events.iter().filter(|e| {
        matches!(
            e,
            Event::NosGameStarted { .. }
                | Event::CardRevealed { .. }
                | Event::Passed { .. }
                | Event::CardTaken { .. }
                | Event::NosGameEnded { .. }
                | Event::GameFinished { .. }
        )
    }) {
        assert_eq!(e.audience(), Audience::Public, "{e:?}");
    }
    assert_eq!(
        types(&events),
        vec!["card_taken", "nos_game_ended", "game_finished"]
    );
    // Event names
    let names: Vec<&str> = [
        Event::NosGameStarted {
            game: 1,
            first_seat: 0,
            chips: 11,
        },
        Event::CardRevealed { card: c(3) },
        Event::Passed { seat: 0 },
        Event::CardTaken {
            seat: 0,
            card: c(3),
            chips: 0,
        },
    ]
    .iter()
    .map(Event::type_name)
    .collect();
    assert_eq!(
        names,
        vec!["nos_game_started", "card_revealed", "passed", "card_taken"]
    );
}

#[test]
fn a_replay_rebuilds_the_game() {
    // Every command of the common table is checked against a replay; this plays a whole
    // match through it and compares the finished state once more.
    let mut t = game_with(nos(3, 2, ChipsOption::Open), pile(PILE), NoShuffle);
    moves(&mut t, "0p 1p 2t 2p 0t*23");
    moves(&mut t, "1p 2p 0p 1t*24");
    assert_eq!(t.game.status(), Status::Finished);
    assert_eq!(Game::from_events(&t.events).unwrap(), t.game);
}

// ---------------------------------------------------------------------------------------------
// Prepared draw piles
// ---------------------------------------------------------------------------------------------

#[test]
fn a_prepared_pile_is_shown_as_prepared() {
    let t = three();
    assert!(t.game.prepared_deal);
    assert!(t.game.view_for(None).prepared_deal);
}

#[test]
fn an_invalid_prepared_pile_is_refused() {
    let s = || nos(4, 1, ChipsOption::Hidden);
    let invalid = |deal: Deal| {
        let e = create_err(s(), Some(deal));
        assert!(matches!(e, RuleError::InvalidDeal(_)), "{e:?}");
        assert_eq!(e.code(), "invalid_deal");
    };
    // 23 cards, 25 cards, none
    invalid(pile(PILE[..23].iter().copied()));
    invalid(pile(PILE.iter().copied().chain([4])));
    invalid(pile([]));
    // a card twice
    let mut twice = PILE;
    twice[5] = twice[0];
    invalid(pile(twice));
    // values outside 3–35
    let mut two = PILE;
    two[3] = 2;
    invalid(pile(two));
    let mut thirty_six = PILE;
    thirty_six[3] = 36;
    invalid(pile(thirty_six));
    // rows or hands given
    let mut with_rows = pile(PILE);
    with_rows.rows = vec![vec![c(4)]];
    invalid(with_rows);
    let mut with_hands = pile(PILE);
    with_hands.hands = vec![vec![c(4)]; 4];
    invalid(with_hands);
    // the 24 highest and the 24 lowest values are fine
    for values in [12..=35, 3..=26] {
        assert!(Game::create(new_game(s(), Some(pile(values)))).is_ok());
    }
}

#[test]
fn a_row_game_deal_with_a_draw_pile_is_refused() {
    let mut deal = common::deal_filled(CardSet::range(104), 10, &[1, 2, 3, 4], &[&[], &[]]);
    deal.draw_pile = cards(PILE);
    let e = create_err(
        setup(Ruleset::SixNimmt, 2, Ruleset::SixNimmt.default_options()),
        Some(deal),
    );
    assert!(matches!(e, RuleError::InvalidDeal(_)), "{e:?}");
}

#[test]
fn the_events_and_commands_round_trip_through_json() {
    // Given a whole match of two games
    let mut t = game_with(nos(3, 2, ChipsOption::Open), pile(PILE), NoShuffle);
    moves(&mut t, "0p 1p 2t 2p 0t*23");
    moves(&mut t, "1p 2p 0p 1t*24");
    // Then every event reads back as itself, and the read-back log replays to the same game
    let json: Vec<String> = t
        .events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    let back: Vec<Event> = json
        .iter()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect();
    assert_eq!(back, t.events);
    assert_eq!(Game::from_events(&back).unwrap(), t.game);
    // The shapes
    let taken = t
        .events
        .iter()
        .find(|e| matches!(e, Event::CardTaken { chips: 2, .. }))
        .unwrap();
    assert_eq!(
        serde_json::to_value(taken).unwrap(),
        serde_json::json!({"type": "card_taken", "data": {"seat": 2, "card": 20, "chips": 2}})
    );
    assert_eq!(
        serde_json::to_value(Event::Passed { seat: 1 }).unwrap(),
        serde_json::json!({"type": "passed", "data": {"seat": 1}})
    );
    let prepared = serde_json::to_value(pile(PILE)).unwrap();
    assert_eq!(prepared, serde_json::json!({"draw_pile": PILE}));
    let read: Deal = serde_json::from_value(prepared).unwrap();
    assert_eq!(read, pile(PILE));
    // Commands as clients send them
    let pass: Command = serde_json::from_str(r#"{"type": "pass"}"#).unwrap();
    let take: Command = serde_json::from_str(r#"{"type": "take"}"#).unwrap();
    assert_eq!((pass, take), (Command::Pass {}, Command::Take {}));
    assert!(serde_json::from_str::<Command>(r#"{"type": "take", "card": 3}"#).is_err());
}

/// Deals the deck highest card first, so the cards past the pile come out descending.
struct Reversed;

impl Dealer for Reversed {
    fn shuffle(&mut self, _round: u16, cards: &mut [Card]) {
        cards.reverse();
    }
}

#[test]
fn the_removed_cards_are_listed_ascending_whatever_order_the_shuffle_left_them_in() {
    // Given a game dealt from the reversed deck: the pile is 35 down to 12, and 11 down to 3
    // are left over in descending order
    let t = started(nos(3, 1, ChipsOption::Hidden), None, Reversed, &["anna"]);
    let (pile, removed) = t
        .events
        .iter()
        .find_map(|e| match e {
            Event::DrawPileSet { pile, removed } => Some((pile.clone(), removed.clone())),
            _ => None,
        })
        .expect("a draw pile is set");
    // Then the pile keeps the shuffle's order and the removed cards are sorted
    assert_eq!(
        numbers(pile.iter().copied()),
        (12..=35).rev().collect::<Vec<_>>()
    );
    assert_eq!(
        numbers(removed.iter().copied()),
        (3..=11).collect::<Vec<_>>()
    );
}
