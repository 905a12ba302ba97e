//! Percentiles of sorted samples and how figures are printed. Pure functions only.

/// The `p`-th percentile (nearest rank) of ascending microsecond samples, in milliseconds;
/// 0 for no samples.
#[must_use]
pub fn percentile(sorted_us: &[u32], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return 0.0;
    }
    let n = sorted_us.len();
    // Nearest rank: the smallest sample with at least p % of the samples at or below it.
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    let index = rank.clamp(1, n) - 1;
    f64::from(sorted_us[index]) / 1000.0
}

/// Milliseconds with a precision that suits their size.
#[must_use]
pub fn fmt_ms(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.2}")
    } else if ms < 100.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.0}")
    }
}

/// A comma-separated list of numbers of flag `flag` (`--sizes 10000,100000`).
///
/// # Errors
/// An item that is no number.
pub fn numbers(list: &str, flag: &str) -> anyhow::Result<Vec<u64>> {
    use anyhow::Context;
    list.split(',')
        .map(|s| s.trim().parse().with_context(|| format!("{flag} {s:?}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u32> = (1..=100).map(|i| i * 1000).collect();
        assert!((percentile(&v, 50.0) - 50.0).abs() < 1e-9);
        assert!((percentile(&v, 99.0) - 99.0).abs() < 1e-9);
        assert!((percentile(&v, 100.0) - 100.0).abs() < 1e-9);
        assert!((percentile(&[7000], 99.0) - 7.0).abs() < 1e-9);
        assert!(percentile(&[], 50.0).abs() < 1e-9);
    }

    #[test]
    fn milliseconds_are_printed_to_their_size() {
        assert_eq!(fmt_ms(1.234), "1.23");
        assert_eq!(fmt_ms(44.46), "44.5");
        assert_eq!(fmt_ms(777.4), "777");
    }
}
