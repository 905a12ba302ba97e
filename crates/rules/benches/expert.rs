//! The expert bot: strength against three heuristic bots, and time per decision on one
//! core, in every ruleset and preset at 4 players.
//!
//! Run: `cargo bench -p stammtisch-rules --bench expert`. Environment: `GAMES` (games per
//! ruleset; default per ruleset below), `ROLLOUTS` and `WEIGHT` (the expert's
//! [`ExpertConfig`]; default: the server's), `ONLY` (run only labels containing this text),
//! `SEED`. One thread: the figures are for one core.
//!
//! Per ruleset it prints the mean game result (total; lower is better) of the expert seat
//! and of the heuristic seats (the mean of the three, one number per game) with 95 %
//! confidence intervals (mean ± 1.96 · sd / √n), whether the intervals are disjoint, the
//! share of games the expert won (ties count), and the expert's milliseconds per decision
//! (mean, p99, max; decisions with a single legal move are included, they cost nothing),
//! as CPU time of the thread (what one core spends, whatever else runs on the machine) and
//! as wall-clock time. `MOVES` sets the expert's move budget.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::time::Instant;

use cpu_time::ThreadTime;

use stammtisch_rules::bots::{self, ExpertConfig, InfoSet, SplitMix};
use stammtisch_rules::{Actor, BotStrategy, Options, Preset, Ruleset, Status};

use common::{FastDealer, new_game};

struct Case {
    label: &'static str,
    ruleset: Ruleset,
    options: Options,
    games: u32,
}

fn cases() -> Vec<Case> {
    let six = |label, preset: Preset, games| Case {
        label,
        ruleset: Ruleset::SixNimmt,
        options: preset.options(),
        games,
    };
    vec![
        six("6-nimmt standard", Preset::Standard, 200),
        six("6-nimmt taktik", Preset::Taktik, 200),
        six("6-nimmt logik", Preset::Logik, 200),
        six("6-nimmt profi", Preset::Profi, 200),
        Case {
            label: "11-nimmt",
            ruleset: Ruleset::ElevenNimmt,
            options: Ruleset::ElevenNimmt.default_options(),
            games: 200,
        },
        Case {
            label: "x-nimmt (2 deals)",
            ruleset: Ruleset::XNimmt,
            options: Ruleset::XNimmt.default_options(),
            games: 400,
        },
        Case {
            label: "nimm-oder-schieb (1 game)",
            ruleset: Ruleset::NimmOderSchieb,
            options: Ruleset::NimmOderSchieb.default_options(),
            games: 600,
        },
    ]
}

/// Mean and half-width of the 95 % confidence interval.
fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, 1.96 * (var / n).sqrt())
}

/// Mean, 99th percentile and maximum.
fn spread(xs: &mut [f64]) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    let n = xs.len().max(1);
    let p99 = xs
        .get(((n as f64) * 0.99) as usize % n)
        .copied()
        .unwrap_or(0.0);
    (
        xs.iter().sum::<f64>() / n as f64,
        p99,
        xs.last().copied().unwrap_or(0.0),
    )
}

fn run(case: &Case, games: u32, config: &ExpertConfig, seed: u64) {
    let players = 4usize;
    let mut dealer = FastDealer(SplitMix(seed ^ 0xdea1));
    let mut rng = SplitMix(seed);
    let (mut expert, mut heuristic, mut wins) = (Vec::new(), Vec::new(), 0u32);
    let mut ms: Vec<f64> = Vec::new();
    let mut cpu_ms: Vec<f64> = Vec::new();
    let start = Instant::now();
    for g in 0..games {
        let seat = usize::try_from(g).unwrap() % players;
        let mut strategies = vec![BotStrategy::Heuristic; players];
        strategies[seat] = BotStrategy::Expert;
        let mut game = new_game(case.ruleset, case.options, &strategies, &mut dealer);
        let mut events = Vec::new();
        while game.status() == Status::Active {
            let Some(s) = game.next_bot() else { break };
            let command = if usize::from(s) == seat {
                let t = Instant::now();
                let cpu = ThreadTime::now();
                let info = InfoSet::observe(&game, s).unwrap();
                let c = bots::expert::choose(&info, config, &mut rng);
                cpu_ms.push(cpu.elapsed().as_secs_f64() * 1e3);
                ms.push(t.elapsed().as_secs_f64() * 1e3);
                c
            } else {
                bots::choose(&game, s, BotStrategy::Heuristic, &mut rng)
            };
            let command = command.expect("a move");
            events.clear();
            game.execute_into(Actor::Bot { seat: s }, &command, &mut dealer, &mut events)
                .expect("a legal move");
        }
        let totals = game.totals();
        expert.push(f64::from(totals[seat]));
        let others: i32 = totals
            .iter()
            .enumerate()
            .filter(|(s, _)| *s != seat)
            .map(|(_, t)| *t)
            .sum();
        heuristic.push(f64::from(others) / (players - 1) as f64);
        wins += u32::from(game.winners.contains(&u8::try_from(seat).unwrap()));
    }
    let (e, ec) = mean_ci(&expert);
    let (h, hc) = mean_ci(&heuristic);
    let disjoint = e + ec < h - hc;
    let (mean_ms, p99, max) = spread(&mut ms);
    let (cpu_mean, cpu_p99, cpu_max) = spread(&mut cpu_ms);
    println!(
        "{:<26} {:>5} games  expert {:>7.2} ± {:<5.2}  heuristic {:>7.2} ± {:<5.2}  {}  expert wins {:>5.1} % (fair 25 %)  ms/decision CPU mean {:>5.1} p99 {:>5.1} max {:>5.1}, wall mean {:>5.1} p99 {:>5.1} max {:>5.1}  ({} decisions, {:.0} s)",
        case.label,
        games,
        e,
        ec,
        h,
        hc,
        if disjoint { "disjoint" } else { "OVERLAP " },
        f64::from(wins) / f64::from(games) * 100.0,
        cpu_mean,
        cpu_p99,
        cpu_max,
        mean_ms,
        p99,
        max,
        ms.len(),
        start.elapsed().as_secs_f64()
    );
}

fn main() {
    let env = |name: &str| std::env::var(name).ok();
    let games: Option<u32> = env("GAMES").and_then(|s| s.parse().ok());
    let defaults = ExpertConfig::default();
    let config = ExpertConfig {
        rollouts: env("ROLLOUTS")
            .and_then(|s| s.parse().ok())
            .unwrap_or(defaults.rollouts),
        moves: env("MOVES")
            .and_then(|s| s.parse().ok())
            .unwrap_or(defaults.moves),
        others_weight: env("WEIGHT")
            .and_then(|s| s.parse().ok())
            .unwrap_or(defaults.others_weight),
    };
    let seed: u64 = env("SEED").and_then(|s| s.parse().ok()).unwrap_or(2026);
    let only = env("ONLY").unwrap_or_default();
    println!(
        "expert vs 3 heuristic bots, 4 players, one thread; {} rollouts per decision, others_weight {}",
        config.rollouts, config.others_weight
    );
    println!(
        "mean game total (lower is better) ± 95 % CI; the expert sits at seat g mod 4 in game g"
    );
    for case in cases().iter().filter(|c| c.label.contains(&only)) {
        run(case, games.unwrap_or(case.games), &config, seed);
    }
}
