//! Bot strength: one heuristic bot against three random bots, mean score per game.
//! Run: `cargo bench -p stammtisch-rules --bench bots` (GAMES=10000 by default).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use stammtisch_rules::bots::SplitMix;
use stammtisch_rules::{BotStrategy, Options, Preset, Ruleset};

use common::{FastDealer, new_game, play_out};

fn duel(label: &str, ruleset: Ruleset, options: Options, games: u32) {
    let mut dealer = FastDealer(SplitMix(7));
    let mut rng = SplitMix(11);
    let (mut heuristic, mut random, mut wins) = (0i64, 0i64, 0u32);
    for g in 0..games {
        // The heuristic bot sits at a different seat each game.
        let seat = usize::try_from(g % 4).unwrap_or(0);
        let mut strategies = vec![BotStrategy::Random; 4];
        strategies[seat] = BotStrategy::Heuristic;
        let mut game = new_game(ruleset, options, &strategies, &mut dealer);
        play_out(&mut game, &strategies, &mut dealer, &mut rng);
        let totals = game.totals();
        heuristic += i64::from(totals[seat]);
        random += totals
            .iter()
            .enumerate()
            .filter(|(s, _)| *s != seat)
            .map(|(_, t)| i64::from(*t))
            .sum::<i64>();
        if game.winners.contains(&u8::try_from(seat).unwrap_or(0)) {
            wins += 1;
        }
    }
    #[expect(clippy::cast_precision_loss, reason = "means for people to read")]
    let (h, r, w) = (
        heuristic as f64 / f64::from(games),
        random as f64 / f64::from(games) / 3.0,
        f64::from(wins) / f64::from(games) * 100.0,
    );
    println!(
        "{label:<26} heuristic {h:>6.2}   random {r:>6.2}   heuristic wins (incl. shared) {w:>5.1} %"
    );
}

fn main() {
    let games: u32 = std::env::var("GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    println!(
        "bot strength: 1 heuristic vs 3 random bots, {games} games each, mean total per game (lower is better)"
    );
    duel(
        "6-nimmt standard",
        Ruleset::SixNimmt,
        Preset::Standard.options(),
        games,
    );
    duel(
        "6-nimmt taktik",
        Ruleset::SixNimmt,
        Preset::Taktik.options(),
        games,
    );
    duel(
        "6-nimmt logik",
        Ruleset::SixNimmt,
        Preset::Logik.options(),
        games,
    );
    duel(
        "6-nimmt profi",
        Ruleset::SixNimmt,
        Preset::Profi.options(),
        games,
    );
    duel(
        "11-nimmt",
        Ruleset::ElevenNimmt,
        Ruleset::ElevenNimmt.default_options(),
        games,
    );
    duel(
        "x-nimmt (2 deals)",
        Ruleset::XNimmt,
        Ruleset::XNimmt.default_options(),
        games,
    );
    duel(
        "nimm-oder-schieb (1 game)",
        Ruleset::NimmOderSchieb,
        Ruleset::NimmOderSchieb.default_options(),
        games,
    );
}
