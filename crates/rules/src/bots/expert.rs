//! The `expert` strategy: determinized Monte-Carlo rollouts.
//!
//! From the seat's [`InfoSet`] it samples complete boards consistent with what the seat may
//! see ("worlds"), plays each candidate move in each world and the rest of the round (or
//! game of the match) with the heuristic for every seat, and picks the move whose mean
//! outcome is best: its own score for the round, lower being better, minus
//! [`ExpertConfig::others_weight`] times the other seats' mean score.
//!
//! Every candidate is played out in the same worlds (common random numbers), so candidates
//! are compared on the same hidden cards. A fixed budget of rollouts is spread by successive
//! halving: all candidates get a few worlds, the better half gets more, and so on. The work
//! is bounded by that budget, not by a clock, so the strategy stays pure and a decision is
//! reproducible from the caller's random stream.
//!
//! This module reads nothing of the game but the [`InfoSet`] (see [`super::info`]).

use crate::board::Board;
use crate::card::Card;
use crate::game::Game;
use crate::model::{
    Actor, BotStrategy, Command, Dealer, Event, GameCreation, Occupant, RULES_VERSION, Seat, Status,
};
use crate::options::{EndCondition, Options};

use super::info::InfoSet;
use super::{Random, basic};

/// How hard the expert thinks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpertConfig {
    /// Rollouts per decision, over all candidate moves together.
    pub rollouts: u32,
    /// Moves simulated per decision, about: when the round ahead is long (an open draft
    /// still to pick), fewer rollouts are made. With `rollouts` the bound on its work.
    pub moves: u32,
    /// Weight of the other seats' mean score in a rollout's value (0: only one's own score
    /// counts; 1: the margin over the others).
    pub others_weight: f64,
}

impl Default for ExpertConfig {
    /// The server's expert: 800 rollouts (a few ms of one core per decision; `benches/expert.rs`
    /// measures it, docs/balance/README.md has the figures),
    /// and half the others' mean score against its own: a round that costs the others more
    /// ends a game to 66 sooner.
    fn default() -> Self {
        Self {
            rollouts: 800,
            moves: 32_000,
            others_weight: 0.5,
        }
    }
}

/// The expert's move for the seat of `info`, if it must act.
#[must_use]
pub fn choose(info: &InfoSet, config: &ExpertConfig, rng: &mut dyn Random) -> Option<Command> {
    let mut game = rollout_game(info)?;
    let seat = info.seat;
    if !game.is_awaited(seat) {
        return None;
    }
    let candidates = game.moves_for(seat);
    if candidates.len() <= 1 {
        return candidates.into_iter().next();
    }
    let k = candidates.len();
    let budget = config
        .rollouts
        .min(config.moves / moves_ahead(info).max(1))
        .max(1);
    let rounds = usize::try_from(k.next_power_of_two().trailing_zeros())
        .unwrap_or(1)
        .max(1);
    let per_round = (usize::try_from(budget).unwrap_or(usize::MAX) / rounds).max(k);
    let mut alive: Vec<usize> = (0..k).collect();
    let mut total = vec![0.0f64; k];
    let mut runs = vec![0u32; k];
    let mut worlds: Vec<Board> = Vec::new();
    let mut events = Vec::with_capacity(64);
    let mut done = 0;
    for round in 0..rounds {
        let target = done + (per_round / alive.len()).max(1);
        while worlds.len() < target {
            worlds.push(info.sample(rng));
        }
        for &c in &alive {
            for world in &worlds[done..target] {
                let value = rollout(
                    &mut game,
                    info,
                    *world,
                    &candidates[c],
                    config,
                    &mut events,
                    rng,
                );
                if let Some(v) = value {
                    total[c] += v;
                    runs[c] += 1;
                }
            }
        }
        done = target;
        let mean = |c: usize| total[c] / f64::from(runs[c].max(1));
        // Stable: among equal means the earlier candidate stays ahead.
        alive.sort_by(|a, b| mean(*a).total_cmp(&mean(*b)));
        if round + 1 < rounds {
            alive.truncate(alive.len().div_ceil(2));
        }
    }
    alive.first().map(|c| candidates[*c].clone())
}

/// About how many moves a rollout from here makes: the cards still to be played (and
/// drafted) in the round, or two decisions per card left in nimm-oder-schieb.
fn moves_ahead(info: &InfoSet) -> u32 {
    let n = match &info.board {
        Board::Rows(b) => {
            let hands: usize = b.hands.iter().map(|h| h.len()).sum::<usize>()
                + info
                    .hidden
                    .hand_sizes
                    .iter()
                    .map(|h| usize::from(*h))
                    .sum::<usize>();
            let picks = if b.drafting {
                2 * b.pool.len().saturating_sub(info.layout().rows)
            } else {
                0
            };
            hands + picks
        }
        Board::TakeOrPass(_) => 2 * (usize::from(info.hidden.pile_left) + 1),
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The most moves a rollout makes before it gives up (no round needs nearly as many).
const MAX_ROLLOUT_MOVES: usize = 5_000;

/// Plays `first` for the seat in `world`, then the rest of the round with the heuristic;
/// returns the value of the outcome for the seat (lower is better).
fn rollout(
    game: &mut Game,
    info: &InfoSet,
    world: Board,
    first: &Command,
    config: &ExpertConfig,
    events: &mut Vec<Event>,
    rng: &mut dyn Random,
) -> Option<f64> {
    game.progress = info.progress;
    game.board = world;
    game.scores.clear();
    game.winners.clear();
    events.clear();
    let seat = info.seat;
    game.execute_into(Actor::Bot { seat }, first, &mut NoShuffle, events)
        .ok()?;
    for _ in 0..MAX_ROLLOUT_MOVES {
        if game.status() != Status::Active {
            break;
        }
        let s = game.next_bot()?;
        let command = basic::choose(game, s, BotStrategy::Heuristic, rng)?;
        events.clear();
        game.execute_into(Actor::Bot { seat: s }, &command, &mut NoShuffle, events)
            .ok()?;
    }
    let scores = game.scores.last()?;
    let own = f64::from(*scores.get(usize::from(seat))?);
    let others = scores.len().saturating_sub(1);
    if others == 0 || config.others_weight == 0.0 {
        return Some(own);
    }
    let sum: i32 = scores.iter().sum();
    let mean_others = f64::from(sum - scores[usize::from(seat)]) / others as f64;
    Some(own - config.others_weight * mean_others)
}

/// A game to play rollouts in: the information set's setup with every seat a bot and the
/// game ending after the current round (or game of the match), so a rollout never deals.
fn rollout_game(info: &InfoSet) -> Option<Game> {
    let options = Options {
        end: EndCondition::Rounds(info.progress.round.max(1)),
        ..info.setup.options
    };
    let created = Event::GameCreated(Box::new(GameCreation {
        ruleset: info.setup.ruleset,
        options,
        players: info.setup.players,
        name: None,
        rules_version: RULES_VERSION,
        prepared_deal: false,
        commitment: String::new(),
        rematch_of: None,
        reservations: Vec::new(),
        auto_start: false,
        tournament: None,
    }));
    let mut game = Game::new_from(&created)?;
    for seat in &mut game.seats {
        *seat = Seat {
            occupant: Some(Occupant::Bot {
                strategy: BotStrategy::Heuristic,
                name: String::new(),
            }),
            resigned: false,
            reserved_for: None,
        };
    }
    game.progress = info.progress;
    game.board = info.board;
    Some(game)
}

/// Rollouts end with the round, so nothing is ever shuffled.
struct NoShuffle;

impl Dealer for NoShuffle {
    fn shuffle(&mut self, _round: u16, _cards: &mut [Card]) {}
}
