//! Writes a study's [`Results`] to a folder: `report.json` (everything), CSV files of the
//! tables, and `report.html` with inline SVG charts. The files hold only the study and its
//! numbers (no time, no thread count), so the same study writes the same bytes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rules::Ruleset;
use serde::Serialize;

use crate::study::Results;
use crate::summary::{ConfigSummary, Estimate};
use crate::svg::{self, Bar, escape};

/// The CSV files a report writes, besides `report.json` and `report.html`.
pub const CSV_FILES: [&str; 8] = [
    "seats.csv",
    "strategies.csv",
    "lengths.csv",
    "scores.csv",
    "row_penalties.csv",
    "nos_chips.csv",
    "nos_cards.csv",
    "nos_pots.csv",
];

/// Writes every file; returns their paths.
///
/// # Errors
/// The folder cannot be created or a file cannot be written.
pub fn write(results: &Results, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let json = dir.join("report.json");
    std::fs::write(&json, serde_json::to_string(results)? + "\n")?;
    written.push(json);
    written.extend(write_csvs(results, dir)?);
    let html = dir.join("report.html");
    std::fs::write(&html, html_page(results))?;
    written.push(html);
    Ok(written)
}

/// Writes a table; an empty one still gets its header (`empty_header`).
fn csv_file<T: Serialize>(
    dir: &Path,
    name: &str,
    rows: &[T],
    empty_header: &[&str],
) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    let mut w = csv::Writer::from_path(&path)?;
    if rows.is_empty() {
        w.write_record(empty_header)?;
    }
    for row in rows {
        w.serialize(row)?;
    }
    w.flush()?;
    Ok(path)
}

#[derive(Serialize)]
struct SeatRow<'a> {
    variant: &'a str,
    players: u8,
    seat: u8,
    games: u32,
    mean_total: f64,
    total_ci95: f64,
    win_share: f64,
    win_ci95: f64,
}

#[derive(Serialize)]
struct StrategyRow<'a> {
    variant: &'a str,
    players: u8,
    strategy: String,
    seats: u8,
    mean_total: f64,
    total_ci95: f64,
    win_share_per_seat: f64,
    win_ci95: f64,
    fair_share: f64,
}

#[derive(Serialize)]
struct LengthRow<'a> {
    variant: &'a str,
    players: u8,
    rounds: f64,
    rounds_ci95: f64,
    moves: f64,
    moves_ci95: f64,
}

#[derive(Serialize)]
struct ScoreRow<'a> {
    variant: &'a str,
    players: u8,
    strategy: String,
    lo: i32,
    hi: i32,
    count: u32,
}

#[derive(Serialize)]
struct PenaltyRow<'a> {
    variant: &'a str,
    players: u8,
    strategy: String,
    penalty_per_deal: f64,
    ci95: f64,
}

#[derive(Serialize)]
struct ChipsRow<'a> {
    variant: &'a str,
    players: u8,
    starting_chips: u8,
    chips_left: f64,
    chips_left_ci95: f64,
    forced_take_share: f64,
    passes_per_card: f64,
    take_net: f64,
    take_net_ci95: f64,
}

#[derive(Serialize)]
struct CardRow<'a> {
    variant: &'a str,
    players: u8,
    card: u8,
    taken: u32,
    removed: u32,
    mean_pot: f64,
    mean_net: f64,
}

#[derive(Serialize)]
struct PotRow<'a> {
    variant: &'a str,
    players: u8,
    pot: String,
    takes: u32,
    mean_net: f64,
}

fn name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn write_csvs(results: &Results, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let c = &results.configs;
    let seats: Vec<SeatRow> = c
        .iter()
        .flat_map(|s| {
            s.seats.iter().map(|seat| SeatRow {
                variant: &s.variant,
                players: s.players,
                seat: seat.seat,
                games: s.games,
                mean_total: seat.total.mean,
                total_ci95: seat.total.ci95,
                win_share: seat.win_share.mean,
                win_ci95: seat.win_share.ci95,
            })
        })
        .collect();
    let strategies: Vec<StrategyRow> = c
        .iter()
        .flat_map(|s| {
            s.strategies.iter().map(|k| StrategyRow {
                variant: &s.variant,
                players: s.players,
                strategy: name(&k.strategy),
                seats: k.seats,
                mean_total: k.total.mean,
                total_ci95: k.total.ci95,
                win_share_per_seat: k.win_share.mean,
                win_ci95: k.win_share.ci95,
                fair_share: 1.0 / f64::from(s.players),
            })
        })
        .collect();
    let lengths: Vec<LengthRow> = c
        .iter()
        .map(|s| LengthRow {
            variant: &s.variant,
            players: s.players,
            rounds: s.rounds.mean,
            rounds_ci95: s.rounds.ci95,
            moves: s.moves.mean,
            moves_ci95: s.moves.ci95,
        })
        .collect();
    let scores: Vec<ScoreRow> = c
        .iter()
        .flat_map(|s| {
            s.strategies.iter().flat_map(move |k| {
                k.histogram.iter().map(move |b| ScoreRow {
                    variant: &s.variant,
                    players: s.players,
                    strategy: name(&k.strategy),
                    lo: b.lo,
                    hi: b.hi,
                    count: b.count,
                })
            })
        })
        .collect();
    let penalties: Vec<PenaltyRow> = c
        .iter()
        .filter_map(|s| s.rows.as_ref().map(|r| (s, r)))
        .flat_map(|(s, r)| {
            std::iter::once(("all".to_owned(), r.penalty_per_deal))
                .chain(r.by_strategy.iter().map(|(k, e)| (name(k), *e)))
                .map(move |(strategy, e)| PenaltyRow {
                    variant: &s.variant,
                    players: s.players,
                    strategy,
                    penalty_per_deal: e.mean,
                    ci95: e.ci95,
                })
        })
        .collect();
    let nos: Vec<(&ConfigSummary, &crate::summary::NosStat)> = c
        .iter()
        .filter_map(|s| s.nos.as_ref().map(|n| (s, n)))
        .collect();
    let chips: Vec<ChipsRow> = nos
        .iter()
        .map(|(s, n)| ChipsRow {
            variant: &s.variant,
            players: s.players,
            starting_chips: n.starting_chips,
            chips_left: n.chips_left.mean,
            chips_left_ci95: n.chips_left.ci95,
            forced_take_share: n.forced_share,
            passes_per_card: n.passes_per_card,
            take_net: n.take_net.mean,
            take_net_ci95: n.take_net.ci95,
        })
        .collect();
    let cards: Vec<CardRow> = nos
        .iter()
        .flat_map(|(s, n)| {
            n.cards.iter().map(|card| CardRow {
                variant: &s.variant,
                players: s.players,
                card: card.card,
                taken: card.taken,
                removed: card.removed,
                mean_pot: card.mean_pot,
                mean_net: card.mean_net,
            })
        })
        .collect();
    let pots: Vec<PotRow> = nos
        .iter()
        .flat_map(|(s, n)| {
            let last = n.pots.len().saturating_sub(1);
            n.pots.iter().enumerate().map(move |(i, p)| PotRow {
                variant: &s.variant,
                players: s.players,
                pot: if i == last {
                    format!("{}+", p.pot)
                } else {
                    p.pot.to_string()
                },
                takes: p.takes,
                mean_net: p.mean_net,
            })
        })
        .collect();
    Ok(vec![
        csv_file(dir, CSV_FILES[0], &seats, &[])?,
        csv_file(dir, CSV_FILES[1], &strategies, &[])?,
        csv_file(dir, CSV_FILES[2], &lengths, &[])?,
        csv_file(dir, CSV_FILES[3], &scores, &[])?,
        csv_file(
            dir,
            CSV_FILES[4],
            &penalties,
            &["variant", "players", "strategy", "penalty_per_deal", "ci95"],
        )?,
        csv_file(
            dir,
            CSV_FILES[5],
            &chips,
            &[
                "variant",
                "players",
                "starting_chips",
                "chips_left",
                "chips_left_ci95",
                "forced_take_share",
                "passes_per_card",
                "take_net",
                "take_net_ci95",
            ],
        )?,
        csv_file(
            dir,
            CSV_FILES[6],
            &cards,
            &[
                "variant", "players", "card", "taken", "removed", "mean_pot", "mean_net",
            ],
        )?,
        csv_file(
            dir,
            CSV_FILES[7],
            &pots,
            &["variant", "players", "pot", "takes", "mean_net"],
        )?,
    ])
}

fn pm(e: &Estimate, digits: usize) -> String {
    format!("{:.digits$} ± {:.digits$}", e.mean, e.ci95)
}

fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

fn html_page(results: &Results) -> String {
    let s = &results.study;
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Stammtisch balance lab</title>\
         <style>body{font-family:sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}\
         table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
         th{background:#f4f4f4}h2{border-top:2px solid #888;padding-top:.5em}svg{display:block;margin:.5em 0}</style></head><body>\n",
    );
    let _ = writeln!(
        out,
        "<h1>Balance lab: {}</h1><p>Variants: {}; players: {}; strategies by seat: {}; {} games per variant and player count; seed {}; expert rollouts {}. \
         Means are final totals (lower is better) with 95&nbsp;% confidence intervals (mean ± 1.96·sd/√n over games); a seat's win share is 1/winners of a game it wins; \
         strategies rotate one seat per game.</p>",
        escape(&name(&s.ruleset)),
        escape(
            &s.variants
                .iter()
                .map(|v| v.label.clone())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        escape(
            &s.players
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        escape(&lineup_text(s)),
        s.games,
        s.seed,
        s.rollouts
    );
    overview(&mut out, results);
    for c in &results.configs {
        config_section(&mut out, c);
    }
    out.push_str("</body></html>\n");
    out
}

fn lineup_text(s: &crate::study::Study) -> String {
    s.lineup
        .0
        .iter()
        .map(|(k, n)| match n {
            Some(n) => format!("{}={n}", name(k)),
            None => name(k),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn overview(out: &mut String, results: &Results) {
    let c = &results.configs;
    out.push_str("<h2>Overview</h2>");
    let head = [
        "variant",
        "players",
        "strategy",
        "mean total",
        "win share per seat",
        "fair share",
    ];
    let rows: Vec<Vec<String>> = c
        .iter()
        .flat_map(|s| {
            s.strategies.iter().map(move |k| {
                vec![
                    s.variant.clone(),
                    s.players.to_string(),
                    name(&k.strategy),
                    pm(&k.total, 2),
                    pm(&k.win_share, 3),
                    format!("{:.3}", 1.0 / f64::from(s.players)),
                ]
            })
        })
        .collect();
    table(out, &head, &rows);
    if c.iter().any(|s| s.rows.is_some()) {
        out.push_str("<h3>Penalties per seat and deal, by variant and player count</h3>");
        let rows: Vec<Vec<String>> = c
            .iter()
            .filter_map(|s| {
                s.rows.as_ref().map(|r| {
                    vec![
                        s.variant.clone(),
                        s.players.to_string(),
                        pm(&r.penalty_per_deal, 2),
                        pm(&s.rounds, 2),
                    ]
                })
            })
            .collect();
        table(
            out,
            &[
                "variant",
                "players",
                "bullheads per seat and deal",
                "deals per game",
            ],
            &rows,
        );
        let bars: Vec<Bar> = c
            .iter()
            .filter_map(|s| {
                s.rows.as_ref().map(|r| Bar {
                    label: format!("{} {}p", s.variant, s.players),
                    value: r.penalty_per_deal.mean,
                    err: r.penalty_per_deal.ci95,
                })
            })
            .collect();
        out.push_str(&svg::bars("Bullheads per seat and deal", &bars, None));
    }
    if c.iter().any(|s| s.nos.is_some()) {
        out.push_str("<h3>Chips by player count</h3>");
        let rows: Vec<Vec<String>> = c
            .iter()
            .filter_map(|s| {
                s.nos.as_ref().map(|n| {
                    vec![
                        s.variant.clone(),
                        s.players.to_string(),
                        n.starting_chips.to_string(),
                        format!(
                            "{:.2}",
                            f64::from(n.starting_chips) * f64::from(s.players) / 24.0
                        ),
                        pm(&n.chips_left, 2),
                        format!("{:.1} %", n.forced_share * 100.0),
                        format!("{:.2}", n.passes_per_card),
                        pm(&n.take_net, 2),
                        pm(&s.seats[0].win_share, 3),
                        format!("{:.3}", 1.0 / f64::from(s.players)),
                    ]
                })
            })
            .collect();
        table(
            out,
            &[
                "variant",
                "players",
                "chips each",
                "chips per card",
                "chips left at the end",
                "forced takes",
                "passes per card",
                "net cost of a take",
                "seat 0 win share",
                "fair share",
            ],
            &rows,
        );
        let bars: Vec<Bar> = c
            .iter()
            .filter_map(|s| {
                s.nos.as_ref().map(|n| Bar {
                    label: format!("{}p", s.players),
                    value: n.forced_share * 100.0,
                    err: 0.0,
                })
            })
            .collect();
        out.push_str(&svg::bars(
            "Forced takes (no chip left), % of takes, by player count",
            &bars,
            None,
        ));
    }
}

fn config_section(out: &mut String, c: &ConfigSummary) {
    let _ = write!(
        out,
        "<h2>{} · {} players · {} games</h2>",
        escape(&c.variant),
        c.players,
        c.games
    );
    let _ = write!(
        out,
        "<p>Game length: {} rounds ({}), {} moves per game.</p>",
        pm(&c.rounds, 2),
        if c.ruleset == Ruleset::NimmOderSchieb {
            "games of the match"
        } else {
            "deals"
        },
        pm(&c.moves, 1)
    );
    let rows: Vec<Vec<String>> = c
        .seats
        .iter()
        .map(|s| vec![s.seat.to_string(), pm(&s.total, 2), pm(&s.win_share, 3)])
        .collect();
    table(out, &["seat", "mean total", "win share"], &rows);
    let bars: Vec<Bar> = c
        .seats
        .iter()
        .map(|s| Bar {
            label: format!("seat {}", s.seat),
            value: s.win_share.mean,
            err: s.win_share.ci95,
        })
        .collect();
    out.push_str(&svg::bars(
        "Win share by seat (dashed: fair share)",
        &bars,
        Some(1.0 / f64::from(c.players)),
    ));
    let rows: Vec<Vec<String>> = c
        .strategies
        .iter()
        .map(|k| {
            vec![
                name(&k.strategy),
                k.seats.to_string(),
                pm(&k.total, 2),
                pm(&k.win_share, 3),
            ]
        })
        .collect();
    table(
        out,
        &["strategy", "seats", "mean total", "win share per seat"],
        &rows,
    );
    let series: Vec<(String, Vec<(String, u32)>)> = c
        .strategies
        .iter()
        .map(|k| {
            (
                name(&k.strategy),
                k.histogram
                    .iter()
                    .map(|b| (b.lo.to_string(), b.count))
                    .collect(),
            )
        })
        .collect();
    out.push_str(&svg::histogram(
        "Distribution of final totals (share of seats)",
        &series,
    ));
    if let Some(n) = &c.nos {
        let taken: Vec<Bar> = n
            .cards
            .iter()
            .map(|card| Bar {
                label: card.card.to_string(),
                value: f64::from(card.taken) / f64::from(c.games.max(1)) / c.rounds.mean.max(1.0),
                err: 0.0,
            })
            .collect();
        out.push_str(&svg::bars(
            "How often each card is taken (per game of the match; the rest were removed)",
            &taken,
            None,
        ));
        let pots: Vec<Bar> = n
            .cards
            .iter()
            .map(|card| Bar {
                label: card.card.to_string(),
                value: card.mean_pot,
                err: 0.0,
            })
            .collect();
        out.push_str(&svg::bars("Mean pot when the card is taken", &pots, None));
        let last = n.pots.len().saturating_sub(1);
        let rows: Vec<Vec<String>> = n
            .pots
            .iter()
            .enumerate()
            .map(|(i, p)| {
                vec![
                    if i == last {
                        format!("{}+", p.pot)
                    } else {
                        p.pot.to_string()
                    },
                    p.takes.to_string(),
                    format!("{:.2}", p.mean_net),
                ]
            })
            .collect();
        out.push_str(
            "<p>Taking versus passing: the net cost of a take is the card points it adds minus \
             the chips collected; a pass costs one chip (one point). By pot:</p>",
        );
        table(out, &["pot", "takes", "mean net cost"], &rows);
    }
}
