//! `stammtisch simulate`: the arguments and the run. The server binary only forwards to
//! [`run`]; nothing here opens a database.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use rules::bots::ExpertConfig;
use rules::{Options, Preset, Ruleset};

use crate::study::{Lineup, Study};
use crate::variant::Variant;

/// Plays all-bot games and writes a balance report.
#[derive(clap::Args, Debug, Clone)]
pub struct SimulateArgs {
    /// Ruleset: 6-nimmt, 11-nimmt, x-nimmt or nimm-oder-schieb.
    #[arg(long)]
    pub ruleset: String,
    /// 6-nimmt presets, comma-separated (standard, taktik, logik, profi): one variant each.
    #[arg(long, value_delimiter = ',')]
    pub preset: Vec<String>,
    /// Options as JSON, as `POST /v1/games` takes them, e.g. '{"chips": "open"}'; with
    /// presets only its `end` is used.
    #[arg(long)]
    pub options: Option<String>,
    /// Player counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "4")]
    pub players: Vec<u8>,
    /// Strategies by seat: `name` or `name=count`, comma-separated; the entry without a
    /// count fills the other seats (e.g. `expert=1,heuristic`). They rotate one seat per game.
    #[arg(long, default_value = "heuristic")]
    pub strategies: String,
    /// Games per variant and player count.
    #[arg(long, default_value_t = 1000)]
    pub games: u32,
    /// Seed: the same seed gives the same numbers, on any number of threads.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Rollouts per decision of expert seats (default: the server's).
    #[arg(long)]
    pub rollouts: Option<u32>,
    /// Folder for report.html, report.json and the CSV files.
    #[arg(long, default_value = "simulation")]
    pub out: PathBuf,
}

impl SimulateArgs {
    /// The study these arguments describe.
    ///
    /// # Errors
    /// An unknown ruleset, preset or strategy; options the rules refuse.
    pub fn study(&self) -> anyhow::Result<Study> {
        let ruleset = Ruleset::from_name(&self.ruleset).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown ruleset {:?} (6-nimmt, 11-nimmt, x-nimmt, nimm-oder-schieb)",
                self.ruleset
            )
        })?;
        let given: Option<serde_json::Value> = self
            .options
            .as_deref()
            .map(serde_json::from_str)
            .transpose()?;
        let options: Option<Options> = given.clone().map(serde_json::from_value).transpose()?;
        let variants = if self.preset.is_empty() {
            let options = options.unwrap_or_else(|| ruleset.default_options());
            vec![Variant {
                label: if self.options.is_some() {
                    "custom".into()
                } else {
                    "default".into()
                },
                options,
            }]
        } else {
            let end = given
                .as_ref()
                .filter(|v| v.get("end").is_some())
                .and(options)
                .map(|o| o.end);
            self.preset
                .iter()
                .map(|p| {
                    let preset: Preset = serde_json::from_value(serde_json::json!(p))
                        .map_err(|_| anyhow::anyhow!("unknown preset {p:?}"))?;
                    let mut v = Variant::preset(preset);
                    if let Some(end) = end {
                        v.options.end = end;
                    }
                    Ok(v)
                })
                .collect::<anyhow::Result<Vec<_>>>()?
        };
        let study = Study {
            ruleset,
            variants,
            players: self.players.clone(),
            lineup: Lineup::parse(&self.strategies)?,
            games: self.games,
            seed: self.seed,
            rollouts: self.rollouts.unwrap_or(ExpertConfig::default().rollouts),
        };
        study.check()?;
        Ok(study)
    }
}

/// Runs `stammtisch simulate`: plays, writes the report, prints a summary. The progress
/// bar shows only when both stdout and stderr are terminals.
///
/// # Errors
/// Bad arguments, a report that cannot be written.
pub fn run(args: &SimulateArgs) -> anyhow::Result<()> {
    let study = args.study()?;
    let progress = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let start = Instant::now();
    let results = study.run(args.threads, progress)?;
    let files = crate::report::write(&results, &args.out)?;
    for c in &results.configs {
        for k in &c.strategies {
            println!(
                "{:<10} {} players  {:<9}  mean total {:>7.2} ± {:<5.2}  win share per seat {:.3} ± {:.3} (fair {:.3})",
                c.variant,
                c.players,
                serde_json::to_value(k.strategy)?
                    .as_str()
                    .unwrap_or_default(),
                k.total.mean,
                k.total.ci95,
                k.win_share.mean,
                k.win_share.ci95,
                1.0 / f64::from(c.players)
            );
        }
    }
    println!(
        "{} games in {:.1} s; wrote {}",
        u64::from(study.games) * results.configs.len() as u64,
        start.elapsed().as_secs_f64(),
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
