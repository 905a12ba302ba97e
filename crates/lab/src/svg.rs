//! Small inline SVG charts for the HTML report: bars with 95 % whiskers and an optional
//! reference line, and histograms. Plain strings; no scripts, no external resources;
//! whole-pixel coordinates and no tooltips (the tables next to them hold the numbers), so
//! committed reports stay small.

use std::fmt::Write;

/// One bar: a label, a value and the half-width of its confidence interval (0: none).
pub struct Bar {
    /// Label under the bar.
    pub label: String,
    /// The value the bar's height shows.
    pub value: f64,
    /// Whisker half-width.
    pub err: f64,
}

const W: f64 = 640.0;
const H: f64 = 240.0;
const LEFT: f64 = 56.0;
const BOTTOM: f64 = 40.0;
const TOP: f64 = 28.0;
const COLOURS: [&str; 4] = ["#4c78a8", "#f58518", "#54a24b", "#b279a2"];

/// XML-escapes text.
#[must_use]
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn axis(out: &mut String, title: &str, lo: f64, hi: f64) -> impl Fn(f64) -> f64 + use<> {
    let span = (hi - lo).max(1e-9);
    let y = move |v: f64| TOP + (H - TOP - BOTTOM) * (1.0 - (v - lo) / span);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="sans-serif" font-size="11"><text x="{LEFT}" y="16" font-size="13" font-weight="bold">{}</text>"#,
        escape(title)
    );
    for i in 0..=4 {
        let v = lo + span * f64::from(i) / 4.0;
        let yy = y(v);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{yy:.0}" y2="{yy:.0}" stroke="#ddd"/><text x="{}" y="{:.0}" text-anchor="end">{}</text>"##,
            W - 8.0,
            LEFT - 4.0,
            yy + 4.0,
            tick(v)
        );
    }
    y
}

fn tick(v: f64) -> String {
    if v.abs() >= 100.0 || (v.fract() == 0.0) {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Bars with whiskers; `reference` draws a dashed line (e.g. the fair share).
#[must_use]
pub fn bars(title: &str, bars: &[Bar], reference: Option<f64>) -> String {
    let hi = bars
        .iter()
        .map(|b| b.value + b.err)
        .chain(reference)
        .fold(0.0f64, f64::max)
        * 1.1;
    let lo = bars.iter().map(|b| b.value - b.err).fold(0.0f64, f64::min);
    let mut out = String::new();
    let y = axis(&mut out, title, lo, hi.max(lo + 1e-9));
    let n = bars.len().max(1) as f64;
    let slot = (W - LEFT - 8.0) / n;
    for (i, b) in bars.iter().enumerate() {
        let x = LEFT + slot * i as f64 + slot * 0.15;
        let w = slot * 0.7;
        let (top, base) = (y(b.value.max(0.0)), y(b.value.min(0.0)));
        let _ = write!(
            out,
            r#"<rect x="{x:.0}" y="{top:.0}" width="{w:.0}" height="{:.0}" fill="{}"/>"#,
            (base - top).max(1.0),
            COLOURS[0]
        );
        if b.err > 0.0 {
            let cx = x + w / 2.0;
            let _ = write!(
                out,
                r##"<line x1="{cx:.0}" x2="{cx:.0}" y1="{:.0}" y2="{:.0}" stroke="#222"/>"##,
                y(b.value + b.err),
                y(b.value - b.err)
            );
        }
        if bars.len() <= 40 {
            let _ = write!(
                out,
                r#"<text x="{:.0}" y="{:.0}" text-anchor="middle">{}</text>"#,
                x + w / 2.0,
                H - BOTTOM + 14.0,
                escape(&b.label)
            );
        }
    }
    if let Some(r) = reference {
        let yy = y(r);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{yy:.0}" y2="{yy:.0}" stroke="#c00" stroke-dasharray="4 3"/>"##,
            W - 8.0
        );
    }
    out.push_str("</svg>");
    out
}

/// Histograms of several series over the same bins (`(label, [(bin label, count)])`),
/// as grouped bars of shares (each series sums to 1).
#[must_use]
pub fn histogram(title: &str, series: &[(String, Vec<(String, u32)>)]) -> String {
    let shares: Vec<Vec<f64>> = series
        .iter()
        .map(|(_, bins)| {
            let total = f64::from(bins.iter().map(|b| b.1).sum::<u32>().max(1));
            bins.iter().map(|b| f64::from(b.1) / total).collect()
        })
        .collect();
    let hi = shares.iter().flatten().fold(0.0f64, |a, b| a.max(*b)) * 1.1;
    let mut out = String::new();
    let y = axis(&mut out, title, 0.0, hi.max(1e-9));
    let bins = series.first().map_or(0, |s| s.1.len()).max(1);
    let slot = (W - LEFT - 8.0) / bins as f64;
    let k = series.len().max(1) as f64;
    for (j, ((label, _), values)) in series.iter().zip(&shares).enumerate() {
        for (i, v) in values.iter().enumerate() {
            let x = LEFT + slot * i as f64 + slot * 0.1 + slot * 0.8 / k * j as f64;
            let _ = write!(
                out,
                r#"<rect x="{x:.0}" y="{:.0}" width="{:.0}" height="{:.0}" fill="{}"/>"#,
                y(*v),
                (slot * 0.8 / k).max(1.0),
                (y(0.0) - y(*v)).max(0.0),
                COLOURS[j % COLOURS.len()]
            );
        }
        let _ = write!(
            out,
            r#"<rect x="{:.0}" y="{}" width="10" height="10" fill="{}"/><text x="{:.0}" y="{}">{}</text>"#,
            W - 150.0,
            8 + 13 * j,
            COLOURS[j % COLOURS.len()],
            W - 136.0,
            17 + 13 * j,
            escape(label)
        );
    }
    if let Some((_, labels)) = series.first() {
        let step = labels.len().div_ceil(10).max(1);
        for (i, (label, _)) in labels.iter().enumerate().step_by(step) {
            let _ = write!(
                out,
                r#"<text x="{:.0}" y="{:.0}" text-anchor="middle">{}</text>"#,
                LEFT + slot * (i as f64 + 0.5),
                H - BOTTOM + 14.0,
                escape(label)
            );
        }
    }
    out.push_str("</svg>");
    out
}
