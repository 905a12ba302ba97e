#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The score pad's round bounds (`Ruleset::check_round`) against real games: every round
//! of thousands of all-bot games of every ruleset, player count and 6-nimmt preset is
//! accepted (the bounds are not too tight), and prepared deals played move by move reach
//! the bounds exactly, one step beyond which the pad refuses.

use stammtisch_rules::bots::{self, Random, SplitMix};
use stammtisch_rules::{
    Actor, BotStrategy, Card, Command, Deal, Dealer, EndCondition, Event, Game, Layout, NewGame,
    Options, Preset, Ruleset, Setup, Status,
};

/// Fisher–Yates with SplitMix64.
struct Shuffler(SplitMix);

impl Dealer for Shuffler {
    fn shuffle(&mut self, _round: u16, cards: &mut [Card]) {
        for i in (1..cards.len()).rev() {
            let j = self.0.below(i + 1);
            cards.swap(i, j);
        }
    }
}

/// Leaves prepared deals as they are.
struct NoShuffle;

impl Dealer for NoShuffle {
    fn shuffle(&mut self, _round: u16, _cards: &mut [Card]) {}
}

/// How a seat plays in the random games.
#[derive(Clone, Copy, Debug)]
enum Style {
    /// The built-in bot.
    Bot(BotStrategy),
    /// Row games: the card that takes the most bullheads now, the fullest row to take.
    /// Nimm oder schieb: takes every card.
    Greedy,
    /// Nimm oder schieb: passes while it has chips. Row games: the random bot.
    Miser,
}

const STYLES: [Style; 4] = [
    Style::Bot(BotStrategy::Random),
    Style::Bot(BotStrategy::Heuristic),
    Style::Greedy,
    Style::Miser,
];

const HOST: &str = "host";

fn host() -> Actor<'static> {
    Actor::Account {
        id: HOST,
        name: HOST,
    }
}

fn person(seat: u8) -> Actor<'static> {
    const IDS: [&str; 7] = ["host", "p1", "p2", "p3", "p4", "p5", "p6"];
    let id = IDS[usize::from(seat)];
    Actor::Account { id, name: id }
}

fn create(setup: Setup, deal: Option<Deal>) -> Game {
    let events = Game::create(NewGame {
        setup,
        name: None,
        host_account: HOST,
        host_name: HOST,
        deal,
        seed: "00".into(),
        commitment: "00".into(),
    })
    .expect("a valid setup");
    Game::from_events(&events).unwrap()
}

fn run(
    game: &mut Game,
    actor: Actor<'_>,
    command: &Command,
    dealer: &mut dyn Dealer,
) -> Vec<Event> {
    game.execute(actor, command, dealer)
        .unwrap_or_else(|e| panic!("{command:?} by {actor:?} refused: {e}"))
}

/// The scores of every round (row games) or game of a match (nimm-oder-schieb) in `events`.
fn round_scores(events: &[Event]) -> Vec<Vec<i32>> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::RoundEnded { scores, .. } => {
                Some(scores.iter().map(|s| i32::try_from(*s).unwrap()).collect())
            }
            Event::NosGameEnded(end) => Some(end.scores.clone()),
            _ => None,
        })
        .collect()
}

/// The greedy row-game move: the hand card that takes the most bullheads now, or the row
/// with the most bullheads when a row must be taken; any other move at random.
fn greedy_row_move(game: &Game, layout: &Layout, seat: u8, rng: &mut SplitMix) -> Command {
    let moves = game.moves_for(seat);
    let rows = game.rows();
    let bullheads = |row: &[Card]| -> u32 { row.iter().map(|c| layout.table.bullheads(*c)).sum() };
    let most = rows.iter().map(|r| bullheads(r)).max().unwrap_or(0);
    let worth = |cmd: &Command| -> u32 {
        match cmd {
            Command::PlayCard { card } => match game.target_row(*card) {
                None => most,
                Some(r) if rows[r].len() >= layout.max_lying[r] => bullheads(&rows[r]),
                Some(_) => 0,
            },
            Command::TakeRow { row } => bullheads(&rows[usize::from(*row)]),
            _ => 0,
        }
    };
    let best = moves.iter().map(worth).max().unwrap_or(0);
    let choices: Vec<&Command> = moves.iter().filter(|m| worth(m) == best).collect();
    choices[rng.below(choices.len())].clone()
}

/// Plays an all-bot game (the host resigns at once) to its end; returns its events.
fn play_all_bot(
    ruleset: Ruleset,
    options: Options,
    styles: &[Style],
    rng: &mut SplitMix,
) -> Vec<Event> {
    let players = u8::try_from(styles.len()).unwrap();
    let layout = Layout::new(ruleset, options);
    let mut dealer = Shuffler(SplitMix(rng.next_u64()));
    let mut game = create(
        Setup {
            ruleset,
            options,
            players,
        },
        None,
    );
    let mut events = Vec::new();
    for _ in 1..players {
        let add = Command::AddBot {
            strategy: BotStrategy::Random,
        };
        events.extend(run(&mut game, host(), &add, &mut dealer));
    }
    events.extend(run(&mut game, host(), &Command::Start {}, &mut dealer));
    events.extend(run(&mut game, host(), &Command::Resign {}, &mut dealer));
    let mut steps = 0;
    while game.status() == Status::Active {
        steps += 1;
        assert!(steps < 100_000, "the game does not end");
        let seat = game
            .next_bot()
            .expect("an all-bot game always has a bot to move");
        let take_or_pass = ruleset == Ruleset::NimmOderSchieb;
        let command = match styles[usize::from(seat)] {
            Style::Bot(strategy) => bots::choose(&game, seat, strategy, rng),
            Style::Greedy if take_or_pass => Some(Command::Take {}),
            Style::Greedy => Some(greedy_row_move(&game, &layout, seat, rng)),
            Style::Miser if take_or_pass => {
                let can_pass = game.moves_for(seat).contains(&Command::Pass {});
                Some(if can_pass {
                    Command::Pass {}
                } else {
                    Command::Take {}
                })
            }
            Style::Miser => bots::choose(&game, seat, BotStrategy::Random, rng),
        }
        .expect("an awaited bot has a move");
        events.extend(run(&mut game, Actor::Bot { seat }, &command, &mut dealer));
    }
    events
}

/// The rulesets' option sets to play: 6-nimmt's four presets, the others' defaults.
fn variants(ruleset: Ruleset) -> Vec<Options> {
    if ruleset.has_variants() {
        Preset::ALL.iter().map(|p| p.options()).collect()
    } else {
        vec![ruleset.default_options()]
    }
}

/// Random all-bot games of every ruleset, player count and 6-nimmt preset, with seats
/// playing randomly, as the heuristic bot, greedily (taking the most bullheads they can; in
/// nimm-oder-schieb taking every card) or as misers (passing while they have chips): every
/// round they produce is a round the score pad accepts. About 6,000 rounds; a few seconds
/// in a debug build.
#[test]
fn every_round_of_random_games_is_accepted_by_the_pad() {
    let mut rng = SplitMix(0x5EED_0010);
    let mut checked = 0usize;
    for ruleset in Ruleset::ALL {
        let (min, max) = ruleset.players();
        for players in min..=max {
            for options in variants(ruleset) {
                let games = if ruleset.has_variants() { 40 } else { 120 };
                for _ in 0..games {
                    let mut options = options;
                    options.end = EndCondition::Rounds(3);
                    let styles: Vec<Style> = (0..players)
                        .map(|_| STYLES[rng.below(STYLES.len())])
                        .collect();
                    let events = play_all_bot(ruleset, options, &styles, &mut rng);
                    let rounds = round_scores(&events);
                    assert_eq!(rounds.len(), 3, "{} with {players}", ruleset.name());
                    for scores in rounds {
                        assert_eq!(scores.len(), usize::from(players));
                        if let Err(e) = ruleset.check_round(&scores) {
                            panic!(
                                "a real round of {} ({options:?}, {styles:?}) was refused: \
                                 {scores:?}: {e}",
                                ruleset.name()
                            );
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    // 6-nimmt: 9 player counts × 4 presets × 40 games; 11-nimmt 8, x-nimmt 3 and
    // nimm-oder-schieb 5 player counts × 120 games; 3 rounds each.
    assert_eq!(checked, 3 * (9 * 4 * 40 + (8 + 3 + 5) * 120));
}

fn c(n: u8) -> Card {
    Card::new(n).unwrap()
}

fn cards(ns: &[u8]) -> Vec<Card> {
    ns.iter().map(|n| c(*n)).collect()
}

/// A one-round 6-nimmt game of two people with a prepared deal (full deck), played turn by
/// turn (`(seat 0's card, seat 1's card)`); `takes` names the row to take when a seat's card
/// fits no row (by turn index). Returns the round's scores.
fn six_nimmt_for_two(
    rows: [u8; 4],
    hands: [&[u8]; 2],
    turns: &[(u8, u8)],
    takes: &[(usize, u8, u8)],
) -> Vec<i32> {
    let mut options = Ruleset::SixNimmt.default_options();
    options.end = EndCondition::Rounds(1);
    let deal = Deal {
        rows: rows.iter().map(|n| vec![c(*n)]).collect(),
        hands: hands.iter().map(|h| cards(h)).collect(),
        draw_pile: Vec::new(),
    };
    let setup = Setup {
        ruleset: Ruleset::SixNimmt,
        options,
        players: 2,
    };
    let mut game = create(setup, Some(deal));
    let mut events = Vec::new();
    let d = &mut NoShuffle;
    events.extend(run(&mut game, person(1), &Command::Join {}, d));
    events.extend(run(&mut game, host(), &Command::Start {}, d));
    for (turn, (a, b)) in turns.iter().enumerate() {
        events.extend(run(
            &mut game,
            person(0),
            &Command::PlayCard { card: c(*a) },
            d,
        ));
        events.extend(run(
            &mut game,
            person(1),
            &Command::PlayCard { card: c(*b) },
            d,
        ));
        for (_, seat, row) in takes.iter().filter(|(t, _, _)| *t == turn) {
            events.extend(run(
                &mut game,
                person(*seat),
                &Command::TakeRow { row: *row },
                d,
            ));
        }
    }
    assert_eq!(game.status(), Status::Finished);
    let rounds = round_scores(&events);
    assert_eq!(rounds.len(), 1);
    rounds[0].clone()
}

/// 6-nimmt with 2 players puts 24 cards in play; the 4 rows hold at most 20 at the end, so
/// at least 4 cards (4 bullheads) are taken: seat 0 takes a row of four plain cards once
/// and every other card fits.
#[test]
fn six_nimmt_for_two_reaches_the_least_round_sum() {
    let scores = six_nimmt_for_two(
        [36, 41, 61, 81],
        [
            &[37, 38, 39, 1, 2, 3, 4, 6, 82, 84],
            &[42, 43, 46, 47, 62, 63, 64, 67, 83, 86],
        ],
        &[
            (37, 42),
            (38, 43),
            (39, 46),
            (1, 47),
            (2, 62),
            (3, 63),
            (4, 64),
            (6, 67),
            (82, 83),
            (84, 86),
        ],
        &[(3, 0, 0)],
    );
    assert_eq!(scores, [4, 0]);
    let b = Ruleset::SixNimmt.round_bounds(2);
    assert_eq!(b.sum_min, 4);
    Ruleset::SixNimmt.check_round(&scores).unwrap();
    for impossible in [[3, 0], [0, 3], [0, 0]] {
        assert!(Ruleset::SixNimmt.check_round(&impossible).is_err());
    }
}

/// With 2 players at most 20 cards are taken; when the 24 cards in play are the 20 with the
/// most bullheads (55; 11, 22, …, 99; 10, 20, …, 100; 5) and four plain ones, the plain ones
/// can be the sixth cards of the four full rows and take all 20: 79 bullheads, the bound.
#[test]
fn six_nimmt_for_two_reaches_the_most_bullheads_split_and_for_one_player() {
    let rows = [5, 30, 55, 80];
    let split = six_nimmt_for_two(
        rows,
        [
            &[10, 11, 20, 22, 33, 40, 44, 50, 23, 51],
            &[60, 66, 70, 77, 88, 90, 99, 100, 78, 101],
        ],
        &[
            (10, 60),
            (11, 66),
            (20, 70),
            (22, 77),
            (33, 88),
            (40, 90),
            (44, 99),
            (50, 100),
            (23, 78),
            (51, 101),
        ],
        &[],
    );
    assert_eq!(split, [37, 42]);
    let one = six_nimmt_for_two(
        rows,
        [
            &[10, 20, 23, 40, 50, 51, 70, 78, 90, 101],
            &[11, 22, 33, 44, 60, 66, 77, 88, 99, 100],
        ],
        &[
            (10, 11),
            (20, 22),
            (23, 33),
            (40, 44),
            (50, 60),
            (51, 66),
            (70, 77),
            (78, 88),
            (90, 99),
            (101, 100),
        ],
        &[],
    );
    assert_eq!(one, [79, 0]);
    let b = Ruleset::SixNimmt.round_bounds(2);
    assert_eq!((b.entry_max, b.sum_max), (79, 79));
    for possible in [split.clone(), one.clone()] {
        Ruleset::SixNimmt.check_round(&possible).unwrap();
    }
    for impossible in [[37, 43], [38, 42], [80, 0], [0, 80]] {
        assert!(Ruleset::SixNimmt.check_round(&impossible).is_err());
    }
}

/// A one-game nimm-oder-schieb match of three people over a prepared pile, played by a
/// script of `(seat, take?)` moves. Returns the game's scores.
fn nimm_oder_schieb_for_three(pile: &[u8], script: &[(u8, bool)]) -> Vec<i32> {
    let mut options = Ruleset::NimmOderSchieb.default_options();
    options.end = EndCondition::Rounds(1);
    let setup = Setup {
        ruleset: Ruleset::NimmOderSchieb,
        options,
        players: 3,
    };
    let deal = Deal {
        rows: Vec::new(),
        hands: Vec::new(),
        draw_pile: cards(pile),
    };
    let mut game = create(setup, Some(deal));
    let d = &mut NoShuffle;
    let mut events = Vec::new();
    events.extend(run(&mut game, person(1), &Command::Join {}, d));
    events.extend(run(&mut game, person(2), &Command::Join {}, d));
    events.extend(run(&mut game, host(), &Command::Start {}, d));
    for (seat, take) in script {
        let command = if *take {
            Command::Take {}
        } else {
            Command::Pass {}
        };
        events.extend(run(&mut game, person(*seat), &command, d));
    }
    assert_eq!(game.status(), Status::Finished);
    let rounds = round_scores(&events);
    assert_eq!(rounds.len(), 1);
    rounds[0].clone()
}

/// The lowest entry and the lowest sum with 3 players (33 chips): seat 2 collects every
/// chip (the others pass around until they have none) and then every card, 3 … 26, one run
/// worth 3 points: 3 − 33 = −30.
#[test]
fn nimm_oder_schieb_reaches_the_lowest_entry_and_sum() {
    let pile: Vec<u8> = (3..=26).collect();
    let mut script = vec![(0, false), (1, false), (2, true)];
    for _ in 0..10 {
        script.extend([(2, false), (0, false), (1, false), (2, true)]);
    }
    script.extend(std::iter::repeat_n((2, true), 13));
    let scores = nimm_oder_schieb_for_three(&pile, &script);
    assert_eq!(scores, [0, 0, -30]);
    let b = Ruleset::NimmOderSchieb.round_bounds(3);
    assert_eq!((b.entry_min, b.sum_min), (-30, -30));
    Ruleset::NimmOderSchieb.check_round(&scores).unwrap();
    for impossible in [[0, 0, -31], [0, -1, -30], [1, -1, -30]] {
        assert!(Ruleset::NimmOderSchieb.check_round(&impossible).is_err());
    }
}

/// The highest entry: seat 0 takes 3, 5, …, 35 as they come (no chips on them: 323 points),
/// then pays all 11 chips onto the 4, which seat 1 takes with 31 chips before the other
/// evens 6 … 16 (70 points): [323, 70 − 32, −1].
#[test]
fn nimm_oder_schieb_reaches_the_highest_entry() {
    let mut pile: Vec<u8> = (3..=35).step_by(2).collect();
    pile.extend((4..=16).step_by(2));
    let mut script = vec![(0, true); 17];
    for _ in 0..10 {
        script.extend([(0, false), (1, false), (2, false)]);
    }
    script.push((0, false));
    script.extend(std::iter::repeat_n((1, true), 7));
    let scores = nimm_oder_schieb_for_three(&pile, &script);
    assert_eq!(scores, [323, 38, -1]);
    assert_eq!(Ruleset::NimmOderSchieb.round_bounds(3).entry_max, 323);
    Ruleset::NimmOderSchieb.check_round(&scores).unwrap();
    for impossible in [[324, 37, -1], [323, 37, -2], [-11, -11, 300]] {
        assert!(Ruleset::NimmOderSchieb.check_round(&impossible).is_err());
    }
}
