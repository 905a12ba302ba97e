#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The balance lab: reproducible from a seed on any number of threads, and its report
//! files exist and parse.

use std::path::PathBuf;

use rules::{BotStrategy, ChipsOption, Options, Preset, Ruleset};
use stammtisch_lab::report::{self, CSV_FILES};
use stammtisch_lab::{Lineup, Results, SimulateArgs, Study, Variant};

fn nos_study(seed: u64) -> Study {
    Study {
        ruleset: Ruleset::NimmOderSchieb,
        variants: vec![Variant {
            label: "open chips".into(),
            options: Options {
                chips: ChipsOption::Open,
                ..Ruleset::NimmOderSchieb.default_options()
            },
        }],
        players: vec![3, 5],
        lineup: Lineup::parse("random=1,heuristic").unwrap(),
        games: 40,
        seed,
        rollouts: 16,
    }
}

fn rows_study(seed: u64) -> Study {
    Study {
        ruleset: Ruleset::SixNimmt,
        variants: vec![
            Variant::preset(Preset::Standard),
            Variant::preset(Preset::Logik),
        ],
        players: vec![4],
        lineup: Lineup::parse("expert=1,heuristic=2,random").unwrap(),
        games: 4,
        seed,
        rollouts: 8,
    }
}

fn json(results: &Results) -> String {
    serde_json::to_string(results).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stammtisch-lab-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_same_seed_gives_the_same_json_and_another_seed_other_numbers() {
    for study in [nos_study(7), rows_study(7)] {
        let a = json(&study.run(Some(2), false).unwrap());
        let b = json(&study.run(Some(2), false).unwrap());
        assert_eq!(a, b);
        let other = Study { seed: 8, ..study };
        assert_ne!(a, json(&other.run(Some(2), false).unwrap()));
    }
}

#[test]
fn the_thread_count_does_not_change_the_numbers() {
    for study in [nos_study(11), rows_study(11)] {
        let one = json(&study.run(Some(1), false).unwrap());
        let three = json(&study.run(Some(3), false).unwrap());
        assert_eq!(one, three);
    }
}

#[test]
fn the_report_files_exist_and_parse() {
    let results = nos_study(3).run(None, false).unwrap();
    let dir = scratch("nos");
    let files = report::write(&results, &dir).unwrap();
    assert_eq!(files.len(), CSV_FILES.len() + 2);
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(value["configs"].as_array().unwrap().len(), 2);
    assert_eq!(value["configs"][0]["games"], 40);
    for name in CSV_FILES {
        let mut reader = csv::Reader::from_path(dir.join(name)).unwrap();
        assert!(reader.headers().unwrap().len() >= 3, "{name}");
        let rows = reader.records().map(Result::unwrap).count();
        // A nimm-oder-schieb study has no row penalties; every other table has rows.
        assert_eq!(
            rows == 0,
            name == "row_penalties.csv",
            "{name}: {rows} rows"
        );
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(html.matches("<svg").count() >= 6, "charts are inline");
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    assert!(!html.contains("<script"), "no scripts");
    // Writing twice gives the same bytes (no time or thread count in the files).
    let again = scratch("nos-again");
    report::write(&nos_study(3).run(Some(1), false).unwrap(), &again).unwrap();
    for name in CSV_FILES
        .iter()
        .copied()
        .chain(["report.json", "report.html"])
    {
        assert_eq!(
            std::fs::read(dir.join(name)).unwrap(),
            std::fs::read(again.join(name)).unwrap(),
            "{name}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&again);
}

#[test]
fn nimm_oder_schieb_records_add_up() {
    let results = nos_study(5).run(None, false).unwrap();
    for c in &results.configs {
        let nos = c.nos.as_ref().unwrap();
        let taken: u32 = nos.cards.iter().map(|k| k.taken).sum();
        let removed: u32 = nos.cards.iter().map(|k| k.removed).sum();
        assert_eq!(taken, 24 * c.games, "24 cards are taken per game");
        assert_eq!(removed, 9 * c.games, "9 cards are removed per game");
        assert_eq!(nos.pots.iter().map(|p| p.takes).sum::<u32>(), taken);
        let shares: f64 = c.seats.iter().map(|s| s.win_share.mean).sum();
        assert!(
            (shares - 1.0).abs() < 1e-9,
            "win shares add up to 1: {shares}"
        );
        assert_eq!(c.strategies.len(), 2);
        let random = &c.strategies[0];
        assert_eq!((random.strategy, random.seats), (BotStrategy::Random, 1));
    }
}

#[test]
fn row_games_report_penalties_per_deal_and_every_strategy() {
    let results = rows_study(1).run(None, false).unwrap();
    assert_eq!(results.configs.len(), 2);
    for c in &results.configs {
        let rows = c.rows.as_ref().unwrap();
        assert!(rows.penalty_per_deal.mean > 0.0);
        let kinds: Vec<BotStrategy> = c.strategies.iter().map(|k| k.strategy).collect();
        assert_eq!(
            kinds,
            vec![
                BotStrategy::Expert,
                BotStrategy::Heuristic,
                BotStrategy::Random
            ]
        );
        assert!(c.rounds.mean >= 1.0);
    }
}

#[test]
fn lineups_fill_the_seats() {
    let l = Lineup::parse("expert=1,heuristic").unwrap();
    assert_eq!(
        l.seats(3).unwrap(),
        vec![
            BotStrategy::Expert,
            BotStrategy::Heuristic,
            BotStrategy::Heuristic
        ]
    );
    assert!(Lineup::parse("expert,heuristic").is_err(), "two fillers");
    assert!(Lineup::parse("clever").is_err());
    assert!(
        Lineup::parse("expert=2,random=2")
            .unwrap()
            .seats(5)
            .is_err()
    );
    assert!(Lineup::parse("expert=5,random").unwrap().seats(4).is_err());
}

#[test]
fn arguments_become_a_study() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SimulateArgs,
    }
    let cli = Cli::try_parse_from([
        "simulate",
        "--ruleset",
        "6-nimmt",
        "--preset",
        "standard,profi",
        "--options",
        r#"{"end": {"rounds": 2}}"#,
        "--players",
        "3,4",
        "--games",
        "5",
    ])
    .unwrap();
    let study = cli.args.study().unwrap();
    assert_eq!(study.variants.len(), 2);
    assert_eq!(study.variants[1].label, "profi");
    assert_eq!(
        study.variants[1].options.end,
        rules::EndCondition::Rounds(2)
    );
    assert_eq!(study.players, vec![3, 4]);
    let bad = Cli::try_parse_from(["simulate", "--ruleset", "x-nimmt", "--players", "7"])
        .unwrap()
        .args
        .study();
    assert!(bad.is_err(), "x-nimmt is played by 2 to 4");
}
