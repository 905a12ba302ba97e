//! Engine throughput: complete deals with random legal moves through the rules crate's
//! public API (`decide` + `apply`), on one core. Run: `cargo bench -p stammtisch-rules --bench engine`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::time::{Duration, Instant};

use stammtisch_rules::bots::SplitMix;
use stammtisch_rules::{BotStrategy, Ruleset};

use common::{FastDealer, new_game, play_out, rounds};

fn measure(label: &str, ruleset: Ruleset, players: usize, budget: Duration) {
    // `BENCH_ONLY=<label prefix>` runs only the matching figures (for profiling one ruleset).
    if let Ok(only) = std::env::var("BENCH_ONLY")
        && !label.starts_with(only.as_str())
    {
        return;
    }
    let unit = if ruleset == Ruleset::NimmOderSchieb {
        "games"
    } else {
        "deals"
    };
    let strategies = vec![BotStrategy::Random; players];
    let mut dealer = FastDealer(SplitMix(0x5eed));
    let mut rng = SplitMix(42);
    // Warm up.
    for _ in 0..200 {
        let mut g = new_game(ruleset, rounds(ruleset, 50), &strategies, &mut dealer);
        play_out(&mut g, &strategies, &mut dealer, &mut rng);
    }
    let start = Instant::now();
    let mut deals = 0u64;
    while start.elapsed() < budget {
        for _ in 0..50 {
            let mut g = new_game(ruleset, rounds(ruleset, 50), &strategies, &mut dealer);
            deals += u64::from(play_out(&mut g, &strategies, &mut dealer, &mut rng));
        }
    }
    let secs = start.elapsed().as_secs_f64();
    #[expect(clippy::cast_precision_loss, reason = "a rate for people to read")]
    let rate = deals as f64 / secs;
    println!("{label:<30} {deals:>9} {unit} in {secs:>5.2} s = {rate:>10.0} {unit}/s");
}

fn main() {
    let budget = Duration::from_secs_f64(
        std::env::var("BENCH_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3.0),
    );
    println!("engine benchmark: random legal moves, one thread; row games in games of 50 deals,");
    println!("nimm-oder-schieb in matches of 50 games");
    measure("6-nimmt, 4 players", Ruleset::SixNimmt, 4, budget);
    measure("6-nimmt, 10 players", Ruleset::SixNimmt, 10, budget);
    measure("11-nimmt, 4 players", Ruleset::ElevenNimmt, 4, budget);
    measure("x-nimmt, 4 players", Ruleset::XNimmt, 4, budget);
    measure(
        "nimm-oder-schieb, 5 players",
        Ruleset::NimmOderSchieb,
        5,
        budget,
    );
}
