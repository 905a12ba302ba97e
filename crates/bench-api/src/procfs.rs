//! Figures about processes from `/proc`: CPU time, resident memory, load average.
//!
//! Owns only reading `/proc` (Linux). It never signals or changes a process.

/// `/proc/<pid>/stat` counts CPU time in clock ticks of `USER_HZ`, which Linux fixes at 100
/// for user space on every mainstream architecture.
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU seconds (user + system, all threads) that process `pid` (or `"self"`) has used so far.
#[must_use]
pub fn cpu_seconds(pid: &str) -> Option<f64> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// CPU seconds from the text of a `/proc/<pid>/stat` file.
fn parse_stat(stat: &str) -> Option<f64> {
    // The command name (field 2) may hold spaces; fields after it follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state); utime is field 14, stime field 15.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / TICKS_PER_SECOND)
}

/// Sum of [`cpu_seconds`] over several processes.
#[must_use]
pub fn cpu_seconds_of(pids: &[u32]) -> f64 {
    pids.iter()
        .filter_map(|p| cpu_seconds(&p.to_string()))
        .sum()
}

/// CPU time of a changing set of processes over a window (e.g. the PostgreSQL backends of
/// a pool that opens connections on demand): each process's time at the start, and 0 for a
/// process that appears later (all its time falls in the window).
pub struct CpuWindow {
    start: std::collections::HashMap<u32, f64>,
}

impl CpuWindow {
    /// Reads the CPU time of `pids` now.
    #[must_use]
    pub fn start(pids: &[u32]) -> Self {
        Self {
            start: pids
                .iter()
                .filter_map(|p| cpu_seconds(&p.to_string()).map(|c| (*p, c)))
                .collect(),
        }
    }

    /// CPU seconds that `pids` (the set at the end) used since the start.
    #[must_use]
    pub fn seconds(&self, pids: &[u32]) -> f64 {
        pids.iter()
            .filter_map(|p| {
                cpu_seconds(&p.to_string())
                    .map(|now| now - self.start.get(p).copied().unwrap_or(0.0))
            })
            .sum()
    }
}

/// Resident set size of process `pid` in KiB (`VmRSS` of `/proc/<pid>/status`).
#[must_use]
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS")
}

/// A KiB figure of `/proc/<pid>/status`, such as `VmRSS` or `VmHWM` (the peak RSS).
#[must_use]
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The soft limit on open files of process `pid` (`/proc/<pid>/limits`).
#[must_use]
pub fn open_file_limit(pid: u32) -> Option<u64> {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` writes them.
#[must_use]
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}

/// CPU use between two readings as a percentage of one core.
#[must_use]
pub fn percent_of_core(cpu_before: f64, cpu_after: f64, wall_seconds: f64) -> f64 {
    if wall_seconds <= 0.0 {
        return 0.0;
    }
    (cpu_after - cpu_before) / wall_seconds * 100.0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cpu_time_is_utime_plus_stime_after_the_command_name() {
        // A command name with a space and a parenthesis; utime 250, stime 130 ticks.
        let line = "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 130 0 0 20 0 3 0 1000 1 1";
        assert!((parse_stat(line).unwrap() - 3.8).abs() < 1e-9);
        assert_eq!(parse_stat("4242 (short) S 1"), None);
    }

    #[test]
    fn percent_of_one_core() {
        assert!((percent_of_core(1.0, 1.5, 2.0) - 25.0).abs() < 1e-9);
        assert!(percent_of_core(1.0, 2.0, 0.0).abs() < 1e-9);
    }
}
