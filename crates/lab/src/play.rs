//! One all-bot game, played through the rules crate's public API, and what the lab records
//! of it. Owns the per-game randomness: a game's dealer and bots draw from generators
//! derived from (seed, configuration, game index) only, so a game's outcome does not depend
//! on which thread plays it or in what order.

use rules::bots::{self, ExpertConfig, InfoSet, Random, SplitMix};
use rules::nos_cards::card_points;
use rules::{
    Actor, Board, BotStrategy, Card, Command, Dealer, Event, Game, NewGame, Options, Ruleset,
    Setup, Status,
};
use serde::Serialize;

/// A generator for one purpose of one game, from the study's seed.
#[must_use]
pub fn derive(seed: u64, config: u64, game: u64, purpose: u64) -> SplitMix {
    let mut mix = SplitMix(
        seed ^ config.wrapping_mul(0xA24B_AED4_963E_E407)
            ^ game.wrapping_mul(0x9FB2_1C65_1E98_DF25)
            ^ purpose.wrapping_mul(0xD6E8_FEB8_6659_FD93),
    );
    SplitMix(mix.next_u64())
}

/// Fisher–Yates with the game's own generator.
pub struct LabDealer(pub SplitMix);

impl Dealer for LabDealer {
    fn shuffle(&mut self, _round: u16, cards: &mut [Card]) {
        for i in (1..cards.len()).rev() {
            let j = self.0.below(i + 1);
            cards.swap(i, j);
        }
    }
}

/// A nimm-oder-schieb take.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Take {
    /// The card's value.
    pub card: u8,
    /// Chips on it when taken.
    pub pot: u8,
    /// The taker had no chip left and could not pass.
    pub forced: bool,
    /// What the card added to the taker's card points, minus the pot.
    pub net: i32,
}

/// What the lab keeps of one game.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GameRecord {
    /// The strategy at each seat.
    pub strategies: Vec<BotStrategy>,
    /// Final totals per seat (lower is better).
    pub totals: Vec<i32>,
    /// Each seat's share of the win (1 / number of winners, 0 for the others).
    pub win_share: Vec<f64>,
    /// Scores per round (deal, or game of a match) and seat.
    pub rounds: Vec<Vec<i32>>,
    /// Moves made (every decision of every seat).
    pub moves: u32,
    /// nimm-oder-schieb: every take.
    pub takes: Vec<Take>,
    /// nimm-oder-schieb: passes made.
    pub passes: u32,
    /// nimm-oder-schieb: chips left per seat at the end of each game of the match.
    pub chips_left: Vec<Vec<u8>>,
    /// nimm-oder-schieb: the cards removed unseen, per game of the match.
    pub removed: Vec<Vec<u8>>,
}

/// Plays one game with the given strategy per seat.
///
/// # Errors
/// Invalid options for the ruleset and player count, or a bot move the rules refuse (a bug).
pub fn play_game(
    ruleset: Ruleset,
    options: Options,
    strategies: &[BotStrategy],
    expert: &ExpertConfig,
    dealer: &mut LabDealer,
    rng: &mut SplitMix,
) -> anyhow::Result<GameRecord> {
    let players = u8::try_from(strategies.len())?;
    let mut game = new_game(ruleset, options, players, dealer)?;
    let mut record = GameRecord {
        strategies: strategies.to_vec(),
        totals: Vec::new(),
        win_share: Vec::new(),
        rounds: Vec::new(),
        moves: 0,
        takes: Vec::new(),
        passes: 0,
        chips_left: Vec::new(),
        removed: Vec::new(),
    };
    let mut events = Vec::with_capacity(64);
    while game.status() == Status::Active {
        let Some(seat) = game.next_bot() else {
            anyhow::bail!("an active game with nobody to move");
        };
        let strategy = strategies
            .get(usize::from(seat))
            .copied()
            .unwrap_or_default();
        let command = match strategy {
            BotStrategy::Expert => InfoSet::observe(&game, seat)
                .and_then(|info| bots::expert::choose(&info, expert, rng)),
            _ => bots::choose(&game, seat, strategy, rng),
        };
        let Some(command) = command else {
            anyhow::bail!("no move for seat {seat}");
        };
        let take = take_of(&game, seat, &command);
        events.clear();
        game.execute_into(Actor::Bot { seat }, &command, dealer, &mut events)
            .map_err(|e| anyhow::anyhow!("seat {seat}: {command:?} refused: {e}"))?;
        record.moves += 1;
        if let Some(take) = take {
            record.takes.push(take);
        }
        for event in &events {
            match event {
                Event::Passed { .. } => record.passes += 1,
                Event::NosGameEnded(end) => {
                    record.chips_left.push(end.chips.clone());
                    record
                        .removed
                        .push(end.removed.iter().map(|c| c.number()).collect());
                }
                _ => {}
            }
        }
    }
    record.totals = game.totals();
    let winners = game.winners.len().max(1) as f64;
    record.win_share = (0..players)
        .map(|s| {
            if game.winners.contains(&s) {
                1.0 / winners
            } else {
                0.0
            }
        })
        .collect();
    record.rounds.clone_from(&game.scores);
    Ok(record)
}

/// The take a `take` command makes, read before it is applied.
fn take_of(game: &Game, seat: u8, command: &Command) -> Option<Take> {
    let (Command::Take {}, Board::TakeOrPass(b)) = (command, &game.board) else {
        return None;
    };
    let card = b.open?;
    let mine = b.taken[usize::from(seat)];
    let mut with = mine;
    with.insert(card);
    Some(Take {
        card: card.number(),
        pot: b.pot,
        forced: b.chips[usize::from(seat)] == 0,
        net: card_points(with) - card_points(mine) - i32::from(b.pot),
    })
}

/// A started game whose seats are all bot-controlled (the host resigned at once).
fn new_game(
    ruleset: Ruleset,
    options: Options,
    players: u8,
    dealer: &mut LabDealer,
) -> anyhow::Result<Game> {
    let events = Game::create(NewGame {
        setup: Setup {
            ruleset,
            options,
            players,
        },
        name: None,
        host_account: "lab",
        host_name: "lab",
        deal: None,
        seed: String::new(),
        commitment: String::new(),
    })?;
    let mut game = Game::from_events(&events).ok_or_else(|| anyhow::anyhow!("no game"))?;
    let host = Actor::Account {
        id: "lab",
        name: "lab",
    };
    let mut setup = vec![
        Command::AddBot {
            strategy: BotStrategy::Random,
        };
        usize::from(players.saturating_sub(1))
    ];
    setup.push(Command::Start {});
    setup.push(Command::Resign {});
    for command in &setup {
        game.execute(host, command, dealer)?;
    }
    Ok(game)
}
