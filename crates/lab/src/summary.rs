//! The numbers of one configuration (variant × player count), from its game records:
//! results by seat and by strategy with 95 % confidence intervals, score distributions,
//! game length, penalties per deal (row games), chips, cards and pots (nimm-oder-schieb).
//!
//! A confidence interval here is the normal approximation mean ± 1.96 · sd / √n over
//! games (one value per game), also for win shares (a seat's share of a game's win is
//! 1 / number of winners).

use rules::nos_cards::{HIGHEST, LOWEST, starting_chips};
use rules::{BotStrategy, Options, Ruleset};
use serde::Serialize;

use crate::play::GameRecord;
use crate::variant::Variant;

/// A mean with the half-width of its 95 % confidence interval.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Estimate {
    /// The mean of the values.
    pub mean: f64,
    /// Half-width of the 95 % confidence interval.
    pub ci95: f64,
    /// Number of values.
    pub n: u64,
}

impl Estimate {
    /// From values, in the order given (so sums are reproducible).
    #[must_use]
    pub fn of(values: &[f64]) -> Self {
        let n = values.len();
        if n == 0 {
            return Self {
                mean: 0.0,
                ci95: 0.0,
                n: 0,
            };
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Self {
            mean,
            ci95: 1.96 * (var / n as f64).sqrt(),
            n: n as u64,
        }
    }
}

/// Results of one seat.
#[derive(Clone, Debug, Serialize)]
pub struct SeatStat {
    /// Seat (0 acts or picks first in the first round).
    pub seat: u8,
    /// Final total.
    pub total: Estimate,
    /// Share of the win.
    pub win_share: Estimate,
}

/// Results of one strategy (per seat it played).
#[derive(Clone, Debug, Serialize)]
pub struct StrategyStat {
    /// The strategy.
    pub strategy: BotStrategy,
    /// Seats it played in each game.
    pub seats: u8,
    /// Final total, averaged over its seats in a game.
    pub total: Estimate,
    /// Share of the win per seat it played (fair: 1 / players).
    pub win_share: Estimate,
    /// Distribution of its seats' totals.
    pub histogram: Vec<Bin>,
}

/// A histogram bin `[lo, hi]` (integer totals).
#[derive(Clone, Debug, Serialize)]
pub struct Bin {
    /// Lowest total in the bin.
    pub lo: i32,
    /// Highest total in the bin.
    pub hi: i32,
    /// Seat results in it.
    pub count: u32,
}

/// Row games: bullheads per seat and deal.
#[derive(Clone, Debug, Serialize)]
pub struct RowStat {
    /// Penalty per seat and deal (all seats).
    pub penalty_per_deal: Estimate,
    /// Penalty per seat and deal by strategy.
    pub by_strategy: Vec<(BotStrategy, Estimate)>,
}

/// nimm-oder-schieb: one card value.
#[derive(Clone, Debug, Serialize)]
pub struct CardStat {
    /// The value, 3–35.
    pub card: u8,
    /// Times taken.
    pub taken: u32,
    /// Times removed unseen.
    pub removed: u32,
    /// Mean chips on it when taken.
    pub mean_pot: f64,
    /// Mean net cost of taking it (card points it added minus the pot).
    pub mean_net: f64,
}

/// nimm-oder-schieb: takes at one pot size.
#[derive(Clone, Debug, Serialize)]
pub struct PotStat {
    /// Chips on the card (the last bucket: this many or more).
    pub pot: u8,
    /// Takes at this pot.
    pub takes: u32,
    /// Mean net cost of those takes.
    pub mean_net: f64,
}

/// nimm-oder-schieb: chips, cards, pots.
#[derive(Clone, Debug, Serialize)]
pub struct NosStat {
    /// Chips each seat starts a game with.
    pub starting_chips: u8,
    /// Chips a seat has left at the end of a game.
    pub chips_left: Estimate,
    /// Share of takes made with no chip left (forced).
    pub forced_share: f64,
    /// Passes per card.
    pub passes_per_card: f64,
    /// Net cost of a take (card points added minus pot), over all takes.
    pub take_net: Estimate,
    /// Per card value.
    pub cards: Vec<CardStat>,
    /// Per pot size.
    pub pots: Vec<PotStat>,
}

/// The numbers of one variant at one player count.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigSummary {
    /// Variant name.
    pub variant: String,
    /// The ruleset the games were played with.
    pub ruleset: Ruleset,
    /// The variant's options, as played.
    pub options: Options,
    /// The number of seats at every table of this configuration.
    pub players: u8,
    /// Games played.
    pub games: u32,
    /// Per seat.
    pub seats: Vec<SeatStat>,
    /// Per strategy.
    pub strategies: Vec<StrategyStat>,
    /// Rounds (deals, or games of a match) per game.
    pub rounds: Estimate,
    /// Moves per game (every decision of every seat).
    pub moves: Estimate,
    /// Row games.
    pub rows: Option<RowStat>,
    /// nimm-oder-schieb.
    pub nos: Option<NosStat>,
}

const POT_BUCKETS: u8 = 8;

/// Summarizes the records of one configuration.
#[must_use]
pub fn summarize(
    ruleset: Ruleset,
    variant: &Variant,
    players: u8,
    records: &[GameRecord],
) -> ConfigSummary {
    let n = usize::from(players);
    let seats = (0..players)
        .map(|s| {
            let i = usize::from(s);
            let totals: Vec<f64> = records.iter().map(|r| f64::from(r.totals[i])).collect();
            let wins: Vec<f64> = records.iter().map(|r| r.win_share[i]).collect();
            SeatStat {
                seat: s,
                total: Estimate::of(&totals),
                win_share: Estimate::of(&wins),
            }
        })
        .collect();
    let mut kinds: Vec<BotStrategy> = Vec::new();
    for r in records {
        for s in &r.strategies {
            if !kinds.contains(s) {
                kinds.push(*s);
            }
        }
    }
    let (lo, hi) = records
        .iter()
        .flat_map(|r| r.totals.iter().copied())
        .fold((i32::MAX, i32::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
    let width = ((hi - lo + 1).max(1) + 24) / 25;
    let strategies = kinds
        .iter()
        .map(|k| {
            let mine = |r: &GameRecord| -> Vec<usize> {
                (0..n).filter(|s| r.strategies[*s] == *k).collect()
            };
            let count = records.first().map_or(0, |r| mine(r).len());
            let mut totals = Vec::new();
            let mut wins = Vec::new();
            let mut histogram: Vec<Bin> = (0..25)
                .map(|b| Bin {
                    lo: lo + b * width,
                    hi: lo + (b + 1) * width - 1,
                    count: 0,
                })
                .filter(|b| b.lo <= hi)
                .collect();
            for r in records {
                let seats = mine(r);
                let k = seats.len().max(1) as f64;
                totals.push(seats.iter().map(|s| f64::from(r.totals[*s])).sum::<f64>() / k);
                wins.push(seats.iter().map(|s| r.win_share[*s]).sum::<f64>() / k);
                for s in &seats {
                    let b = usize::try_from((r.totals[*s] - lo) / width).unwrap_or(0);
                    if let Some(bin) = histogram.get_mut(b) {
                        bin.count += 1;
                    }
                }
            }
            StrategyStat {
                strategy: *k,
                seats: u8::try_from(count).unwrap_or(0),
                total: Estimate::of(&totals),
                win_share: Estimate::of(&wins),
                histogram,
            }
        })
        .collect();
    let rounds: Vec<f64> = records.iter().map(|r| r.rounds.len() as f64).collect();
    let moves: Vec<f64> = records.iter().map(|r| f64::from(r.moves)).collect();
    let take_or_pass = ruleset == Ruleset::NimmOderSchieb;
    let rows = (!take_or_pass).then(|| {
        let per_deal = |r: &GameRecord, seat: &dyn Fn(usize) -> bool| -> f64 {
            let values: Vec<f64> = r
                .rounds
                .iter()
                .flat_map(|round| {
                    round
                        .iter()
                        .enumerate()
                        .filter(|(s, _)| seat(*s))
                        .map(|(_, v)| f64::from(*v))
                })
                .collect();
            values.iter().sum::<f64>() / (values.len().max(1) as f64)
        };
        let all: Vec<f64> = records.iter().map(|r| per_deal(r, &|_| true)).collect();
        RowStat {
            penalty_per_deal: Estimate::of(&all),
            by_strategy: kinds
                .iter()
                .map(|k| {
                    let values: Vec<f64> = records
                        .iter()
                        .map(|r| per_deal(r, &|s| r.strategies[s] == *k))
                        .collect();
                    (*k, Estimate::of(&values))
                })
                .collect(),
        }
    });
    let nos = take_or_pass.then(|| nos_stat(players, records));
    ConfigSummary {
        variant: variant.label.clone(),
        ruleset,
        options: variant.options,
        players,
        games: u32::try_from(records.len()).unwrap_or(u32::MAX),
        seats,
        strategies,
        rounds: Estimate::of(&rounds),
        moves: Estimate::of(&moves),
        rows,
        nos,
    }
}

fn nos_stat(players: u8, records: &[GameRecord]) -> NosStat {
    let chips: Vec<f64> = records
        .iter()
        .flat_map(|r| r.chips_left.iter().flatten().map(|c| f64::from(*c)))
        .collect();
    let takes: Vec<&crate::play::Take> = records.iter().flat_map(|r| &r.takes).collect();
    let forced = takes.iter().filter(|t| t.forced).count();
    let passes: u32 = records.iter().map(|r| r.passes).sum();
    let nets: Vec<f64> = takes.iter().map(|t| f64::from(t.net)).collect();
    let cards = (LOWEST..=HIGHEST)
        .map(|card| {
            let of: Vec<&&crate::play::Take> = takes.iter().filter(|t| t.card == card).collect();
            let k = of.len().max(1) as f64;
            CardStat {
                card,
                taken: u32::try_from(of.len()).unwrap_or(u32::MAX),
                removed: u32::try_from(
                    records
                        .iter()
                        .flat_map(|r| r.removed.iter().flatten())
                        .filter(|c| **c == card)
                        .count(),
                )
                .unwrap_or(u32::MAX),
                mean_pot: of.iter().map(|t| f64::from(t.pot)).sum::<f64>() / k,
                mean_net: of.iter().map(|t| f64::from(t.net)).sum::<f64>() / k,
            }
        })
        .collect();
    let pots = (0..POT_BUCKETS)
        .map(|pot| {
            let of: Vec<&&crate::play::Take> = takes
                .iter()
                .filter(|t| t.pot.min(POT_BUCKETS - 1) == pot)
                .collect();
            PotStat {
                pot,
                takes: u32::try_from(of.len()).unwrap_or(u32::MAX),
                mean_net: of.iter().map(|t| f64::from(t.net)).sum::<f64>()
                    / (of.len().max(1) as f64),
            }
        })
        .collect();
    NosStat {
        starting_chips: starting_chips(players),
        chips_left: Estimate::of(&chips),
        forced_share: forced as f64 / (takes.len().max(1) as f64),
        passes_per_card: f64::from(passes) / (takes.len().max(1) as f64),
        take_net: Estimate::of(&nets),
        cards,
        pots,
    }
}
