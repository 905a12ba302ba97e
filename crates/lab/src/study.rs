//! A study: which games to play (ruleset, variants, player counts, strategies, how many,
//! the seed) and the run that plays them on all cores.
//!
//! Reproducible: game `g` of configuration `c` draws only from generators derived from
//! (seed, c, g) (see [`crate::play::derive`]), results are collected in game order and
//! summed in that order, so the same study gives the same numbers for any thread count.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use rules::bots::ExpertConfig;
use rules::{BotStrategy, Ruleset};
use serde::Serialize;

use crate::play::{LabDealer, derive, play_game};
use crate::summary::{ConfigSummary, summarize};
use crate::variant::Variant;

/// Strategies by seat: entries `name` or `name=count`; the one entry without a count fills
/// the seats the others leave (`expert=1,heuristic`: one expert, the rest heuristic).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lineup(pub Vec<(BotStrategy, Option<u8>)>);

impl Lineup {
    /// Parses `expert=1,heuristic`.
    ///
    /// # Errors
    /// An unknown strategy, a bad count, more than one entry without a count.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let mut entries = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, count) = match part.split_once('=') {
                Some((name, count)) => (name.trim(), Some(count.trim().parse::<u8>()?)),
                None => (part, None),
            };
            let strategy: BotStrategy =
                serde_json::from_value(serde_json::json!(name)).map_err(|_| {
                    anyhow::anyhow!("unknown strategy {name:?} (random, heuristic, expert)")
                })?;
            entries.push((strategy, count));
        }
        if entries.iter().filter(|(_, c)| c.is_none()).count() > 1 {
            anyhow::bail!("only one strategy may go without a count");
        }
        if entries.is_empty() {
            anyhow::bail!("no strategy given");
        }
        Ok(Self(entries))
    }

    /// The strategies of `players` seats, before rotation.
    ///
    /// # Errors
    /// The counts do not add up to `players`.
    pub fn seats(&self, players: u8) -> anyhow::Result<Vec<BotStrategy>> {
        let fixed: u16 = self.0.iter().filter_map(|(_, c)| c.map(u16::from)).sum();
        let rest = u16::from(players).checked_sub(fixed).ok_or_else(|| {
            anyhow::anyhow!("{fixed} seats given by count, but only {players} players")
        })?;
        let has_filler = self.0.iter().any(|(_, c)| c.is_none());
        if rest > 0 && !has_filler {
            anyhow::bail!("the counts give {fixed} seats for {players} players");
        }
        let mut seats = Vec::new();
        for (strategy, count) in &self.0 {
            let n = count.map_or(rest, u16::from);
            seats.extend(std::iter::repeat_n(*strategy, usize::from(n)));
        }
        Ok(seats)
    }
}

/// What to play.
#[derive(Clone, Debug, Serialize)]
pub struct Study {
    /// The ruleset.
    pub ruleset: Ruleset,
    /// The variants (at least one).
    pub variants: Vec<Variant>,
    /// Player counts.
    pub players: Vec<u8>,
    /// Strategies by seat; game `g` rotates them by `g` seats, so every strategy sits at
    /// every seat equally often.
    pub lineup: Lineup,
    /// Games per variant and player count.
    pub games: u32,
    /// The seed everything is derived from.
    pub seed: u64,
    /// Rollouts per decision of expert seats.
    pub rollouts: u32,
}

/// The numbers of a study (what `report.json` holds).
#[derive(Clone, Debug, Serialize)]
pub struct Results {
    /// What was played.
    pub study: Study,
    /// One summary per variant and player count, variants outer.
    pub configs: Vec<ConfigSummary>,
}

impl Study {
    /// Checks every configuration before anything is played.
    ///
    /// # Errors
    /// Options the rules refuse, counts that do not fit.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.variants.is_empty() || self.players.is_empty() || self.games == 0 {
            anyhow::bail!("nothing to play: give variants, player counts and games");
        }
        for variant in &self.variants {
            for players in &self.players {
                variant
                    .options
                    .validate(self.ruleset, *players)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", variant.label))?;
                self.lineup.seats(*players)?;
            }
        }
        Ok(())
    }

    /// Plays the study on `threads` threads (`None`: all cores), with a progress bar and an
    /// ETA on stderr when `progress`.
    ///
    /// # Errors
    /// A configuration the rules refuse, a thread pool that cannot start.
    pub fn run(&self, threads: Option<usize>, progress: bool) -> anyhow::Result<Results> {
        self.check()?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.unwrap_or(0))
            .build()?;
        let configs: Vec<(&Variant, u8)> = self
            .variants
            .iter()
            .flat_map(|v| self.players.iter().map(move |p| (v, *p)))
            .collect();
        let total = u64::from(self.games) * configs.len() as u64;
        let bar = if progress {
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} games, {per_sec}, ETA {eta}",
            )?
            .progress_chars("=> "),
        );
        let expert = ExpertConfig {
            rollouts: self.rollouts,
            ..ExpertConfig::default()
        };
        let mut summaries = Vec::new();
        for (c, (variant, players)) in configs.iter().enumerate() {
            let lineup = self.lineup.seats(*players)?;
            let c = c as u64;
            let records = pool.install(|| {
                (0..self.games)
                    .into_par_iter()
                    .map(|g| {
                        let n = lineup.len();
                        let shift = usize::try_from(g).unwrap_or(0) % n.max(1);
                        let strategies: Vec<BotStrategy> =
                            (0..n).map(|s| lineup[(s + n - shift) % n]).collect();
                        let game = u64::from(g);
                        let mut dealer = LabDealer(derive(self.seed, c, game, 0));
                        let mut rng = derive(self.seed, c, game, 1);
                        let record = play_game(
                            self.ruleset,
                            variant.options,
                            &strategies,
                            &expert,
                            &mut dealer,
                            &mut rng,
                        );
                        bar.inc(1);
                        record
                    })
                    .collect::<anyhow::Result<Vec<_>>>()
            })?;
            summaries.push(summarize(self.ruleset, variant, *players, &records));
        }
        bar.finish_and_clear();
        Ok(Results {
            study: self.clone(),
            configs: summaries,
        })
    }
}
