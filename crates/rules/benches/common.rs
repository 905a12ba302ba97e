//! Shared by the benchmarks: all-bot games driven through the public API.

#![allow(dead_code, reason = "each benchmark uses a part of it")]

use stammtisch_rules::bots::{self, Random, SplitMix};
use stammtisch_rules::{
    Actor, BotStrategy, Card, Command, Dealer, EndCondition, Game, NewGame, Options, Ruleset,
    Setup, Status,
};

/// Fisher–Yates with SplitMix64 (the server shuffles with ChaCha20; see src/fairness.rs).
pub struct FastDealer(pub SplitMix);

impl Dealer for FastDealer {
    fn shuffle(&mut self, _round: u16, cards: &mut [Card]) {
        for i in (1..cards.len()).rev() {
            let j = self.0.below(i + 1);
            cards.swap(i, j);
        }
    }
}

/// A started game in which every seat is a bot with the given strategies (seat 0's host
/// resigns at once; `play_out` plays that seat with `strategies[0]`).
pub fn new_game(
    ruleset: Ruleset,
    options: Options,
    strategies: &[BotStrategy],
    dealer: &mut FastDealer,
) -> Game {
    let players = u8::try_from(strategies.len()).unwrap_or(0);
    let events = Game::create(NewGame {
        setup: Setup {
            ruleset,
            options,
            players,
        },
        name: None,
        host_account: "host",
        host_name: "host",
        deal: None,
        seed: String::new(),
        commitment: String::new(),
    })
    .unwrap_or_default();
    let mut game = Game::from_events(&events).unwrap_or_else(unreachable_game);
    let host = Actor::Account {
        id: "host",
        name: "host",
    };
    let run = |game: &mut Game, cmd: &Command, dealer: &mut FastDealer| {
        for e in game.decide(host, cmd, dealer).unwrap_or_default() {
            game.apply(&e);
        }
    };
    for s in &strategies[1..] {
        run(&mut game, &Command::AddBot { strategy: *s }, dealer);
    }
    run(&mut game, &Command::Start {}, dealer);
    run(&mut game, &Command::Resign {}, dealer);
    game
}

fn unreachable_game() -> Game {
    panic!("a valid setup creates a game")
}

/// The strategy of a seat (the resigned host plays the heuristic unless told otherwise).
pub fn seat_strategy(strategies: &[BotStrategy], seat: u8) -> BotStrategy {
    strategies
        .get(usize::from(seat))
        .copied()
        .unwrap_or(BotStrategy::Random)
}

/// Plays until the game is over; returns the number of deals played.
pub fn play_out(
    game: &mut Game,
    strategies: &[BotStrategy],
    dealer: &mut FastDealer,
    rng: &mut SplitMix,
) -> u32 {
    let mut deals = 0;
    let mut round = game.round();
    let mut events = Vec::with_capacity(32);
    while game.status() == Status::Active {
        let Some(seat) = game.next_bot() else { break };
        let strategy = seat_strategy(strategies, seat);
        let Some(cmd) = bots::choose(game, seat, strategy, rng) else {
            break;
        };
        events.clear();
        if let Err(e) = game.execute_into(Actor::Bot { seat }, &cmd, dealer, &mut events) {
            panic!("a bot's move was refused: {e}");
        }
        if game.round() != round || game.status() == Status::Finished {
            deals += 1;
            round = game.round();
        }
    }
    deals
}

/// Options ending after `rounds` deals.
pub fn rounds(ruleset: Ruleset, rounds: u16) -> Options {
    Options {
        end: EndCondition::Rounds(rounds),
        ..ruleset.default_options()
    }
}
