//! What one sender lane of one replica has in flight, and which webhook targets it pauses:
//! the bookkeeping that keeps a slow or failing target from holding back anyone else's
//! deliveries.
//!
//! A lane (webhooks, or mail) sends at most `concurrency` deliveries at once, at most
//! `per_account` of one account and at most `per_target` to one webhook URL. A URL whose
//! attempts failed `breaker_failures` times in a row (an error, a timeout, a non-2xx
//! answer) is paused for `pause`, doubling with every further trip up to
//! [`super::MAX_BACKOFF`]; after a pause one delivery at a time probes it, and the first
//! success closes the breaker. The state is process-local (each replica keeps its own);
//! the worker writes a pause into the outbox by postponing the paused URL's due rows, so the
//! other replicas do not pick them up meanwhile either.
//!
//! Pure bookkeeping: no I/O, the clock comes in as an argument. Knows nothing of the store
//! or of HTTP.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{NaiveDateTime, TimeDelta};

/// Breaker entries kept at most before old ones (last failure over an hour ago) are
/// forgotten.
const MAX_BREAKERS: usize = 1024;

/// The limits of one lane; `0` switches a per-account or per-target limit (or the breaker)
/// off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneLimits {
    /// Deliveries in flight at once (at least 1).
    pub concurrency: usize,
    /// Deliveries of one account in flight at once.
    pub per_account: usize,
    /// Deliveries to one webhook URL in flight at once.
    pub per_target: usize,
    /// Consecutive failed attempts that pause a URL.
    pub breaker_failures: u32,
    /// The first pause; it doubles with each further trip, up to [`super::MAX_BACKOFF`].
    pub pause: Duration,
}

/// The failures of one URL.
#[derive(Debug, Clone, Default)]
struct Breaker {
    /// Failed attempts since the last success.
    failures: u32,
    /// Pauses since the last success.
    trips: u32,
    /// The end of the current (or last) pause.
    paused_until: Option<NaiveDateTime>,
    /// When it last failed.
    last_failure: Option<NaiveDateTime>,
}

/// The in-flight deliveries and the breakers of one lane.
#[derive(Debug, Clone)]
pub struct Gate {
    limits: LaneLimits,
    in_flight: usize,
    accounts: HashMap<String, usize>,
    targets: HashMap<String, usize>,
    breakers: HashMap<String, Breaker>,
}

fn up(map: &mut HashMap<String, usize>, key: &str) {
    *map.entry(key.to_owned()).or_default() += 1;
}

fn down(map: &mut HashMap<String, usize>, key: &str) {
    if let Some(n) = map.get_mut(key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            map.remove(key);
        }
    }
}

impl Gate {
    /// An empty gate.
    #[must_use]
    pub fn new(limits: LaneLimits) -> Self {
        Self {
            limits,
            in_flight: 0,
            accounts: HashMap::new(),
            targets: HashMap::new(),
            breakers: HashMap::new(),
        }
    }

    /// How many more deliveries the lane may start now.
    #[must_use]
    pub fn free(&self) -> usize {
        self.limits.concurrency.saturating_sub(self.in_flight)
    }

    /// Deliveries in flight.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The end of `target`'s pause, while it lasts.
    #[must_use]
    pub fn paused_until(&self, target: &str, now: NaiveDateTime) -> Option<NaiveDateTime> {
        self.breakers
            .get(target)
            .and_then(|b| b.paused_until)
            .filter(|until| *until > now)
    }

    /// How many deliveries to `target` may be in flight at once now: one while a paused URL
    /// is probed again, else `per_target` (`None`: no limit).
    /// (While the URL is still paused it admits nothing; [`Self::admits`] checks that.)
    fn target_limit(&self, target: &str) -> Option<usize> {
        let probing = self.limits.breaker_failures > 0
            && self
                .breakers
                .get(target)
                .is_some_and(|b| b.failures >= self.limits.breaker_failures);
        if probing {
            Some(1)
        } else {
            (self.limits.per_target > 0).then_some(self.limits.per_target)
        }
    }

    /// Whether a delivery of `account` to `target` (`None`: a mail) may start now.
    #[must_use]
    pub fn admits(&self, target: Option<&str>, account: &str, now: NaiveDateTime) -> bool {
        if self.free() == 0 {
            return false;
        }
        let per_account = self.limits.per_account;
        if per_account > 0 && self.accounts.get(account).copied().unwrap_or(0) >= per_account {
            return false;
        }
        let Some(target) = target else {
            return true;
        };
        if self.paused_until(target, now).is_some() {
            return false;
        }
        self.target_limit(target)
            .is_none_or(|limit| self.targets.get(target).copied().unwrap_or(0) < limit)
    }

    /// The accounts that may start no further delivery now.
    #[must_use]
    pub fn full_accounts(&self) -> Vec<&str> {
        let per_account = self.limits.per_account;
        if per_account == 0 {
            return Vec::new();
        }
        self.accounts
            .iter()
            .filter(|(_, n)| **n >= per_account)
            .map(|(a, _)| a.as_str())
            .collect()
    }

    /// The webhook URLs that may start no further delivery now because as many as they may
    /// have are in flight (paused URLs are not listed: their due rows are postponed).
    #[must_use]
    pub fn full_targets(&self) -> Vec<&str> {
        self.targets
            .iter()
            .filter(|(t, n)| self.target_limit(t).is_some_and(|limit| **n >= limit))
            .map(|(t, _)| t.as_str())
            .collect()
    }

    /// Counts a delivery as started.
    pub fn start(&mut self, target: Option<&str>, account: &str) {
        self.in_flight += 1;
        up(&mut self.accounts, account);
        if let Some(target) = target {
            up(&mut self.targets, target);
        }
    }

    /// Counts a started delivery as ended (its outcome, if any, went to
    /// [`Self::outcome`]).
    pub fn release(&mut self, target: Option<&str>, account: &str) {
        self.in_flight = self.in_flight.saturating_sub(1);
        down(&mut self.accounts, account);
        if let Some(target) = target {
            down(&mut self.targets, target);
        }
    }

    /// Counts a started delivery as ended with an outcome: [`Self::outcome`] and
    /// [`Self::release`].
    pub fn finish(&mut self, target: Option<&str>, account: &str, ok: bool, now: NaiveDateTime) {
        self.outcome(target, ok, now);
        self.release(target, account);
    }

    /// Updates the target's breaker with an attempt's outcome (`ok`: a 2xx answer).
    pub fn outcome(&mut self, target: Option<&str>, ok: bool, now: NaiveDateTime) {
        let Some(target) = target else {
            return;
        };
        if self.limits.breaker_failures == 0 {
            return;
        }
        if ok {
            self.breakers.remove(target);
            return;
        }
        if self.breakers.len() >= MAX_BREAKERS && !self.breakers.contains_key(target) {
            let hour_ago = now - TimeDelta::hours(1);
            self.breakers
                .retain(|_, b| b.last_failure.is_some_and(|at| at > hour_ago));
        }
        let threshold = self.limits.breaker_failures;
        let first_pause = self.limits.pause;
        let b = self.breakers.entry(target.to_owned()).or_default();
        b.failures = b.failures.saturating_add(1);
        b.last_failure = Some(now);
        let paused = b.paused_until.is_some_and(|until| until > now);
        if b.failures >= threshold && !paused {
            let pause = first_pause
                .saturating_mul(1u32 << b.trips.min(30))
                .min(super::MAX_BACKOFF);
            b.paused_until = Some(now + TimeDelta::from_std(pause).unwrap_or(TimeDelta::MAX));
            b.trips = b.trips.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn limits() -> LaneLimits {
        LaneLimits {
            concurrency: 4,
            per_account: 2,
            per_target: 1,
            breaker_failures: 2,
            pause: Duration::from_secs(10),
        }
    }

    fn t(secs: i64) -> NaiveDateTime {
        chrono::DateTime::from_timestamp(1_700_000_000 + secs, 0)
            .unwrap()
            .naive_utc()
    }

    #[test]
    fn a_lane_admits_up_to_its_limits_per_account_and_per_target() {
        let mut gate = Gate::new(limits());
        assert!(gate.admits(Some("u1"), "a", t(0)));
        gate.start(Some("u1"), "a");
        assert!(!gate.admits(Some("u1"), "b", t(0)), "one in flight per URL");
        assert_eq!(gate.full_targets(), ["u1"]);
        assert!(gate.admits(Some("u2"), "a", t(0)));
        gate.start(Some("u2"), "a");
        assert!(
            !gate.admits(Some("u3"), "a", t(0)),
            "two in flight per account"
        );
        assert_eq!(gate.full_accounts(), ["a"]);
        gate.start(Some("u3"), "b");
        gate.start(None, "c");
        assert_eq!(gate.free(), 0);
        assert!(!gate.admits(None, "d", t(0)), "the lane is full");
        gate.finish(Some("u1"), "a", true, t(1));
        assert!(gate.admits(Some("u1"), "d", t(1)));
        assert!(gate.full_accounts().is_empty());
        assert_eq!(gate.in_flight(), 3);
    }

    #[test]
    fn zero_switches_the_per_account_and_per_target_limits_off() {
        let mut gate = Gate::new(LaneLimits {
            per_account: 0,
            per_target: 0,
            ..limits()
        });
        for _ in 0..4 {
            assert!(gate.admits(Some("u"), "a", t(0)));
            gate.start(Some("u"), "a");
        }
        assert!(!gate.admits(Some("u"), "a", t(0)), "only the lane's limit");
        assert!(gate.full_accounts().is_empty() && gate.full_targets().is_empty());
    }

    #[test]
    fn failures_in_a_row_pause_a_target_for_longer_each_time_until_a_success() {
        let mut gate = Gate::new(LaneLimits {
            per_target: 2,
            ..limits()
        });
        gate.start(Some("u"), "a");
        gate.finish(Some("u"), "a", false, t(0));
        assert_eq!(
            gate.paused_until("u", t(0)),
            None,
            "one failure pauses nothing"
        );
        gate.start(Some("u"), "a");
        gate.finish(Some("u"), "a", false, t(1));
        assert_eq!(gate.paused_until("u", t(1)), Some(t(11)));
        assert!(!gate.admits(Some("u"), "b", t(5)));
        assert!(gate.admits(Some("v"), "b", t(5)), "other targets go on");
        // After the pause one probe at a time.
        assert!(gate.admits(Some("u"), "b", t(11)));
        gate.start(Some("u"), "b");
        assert!(!gate.admits(Some("u"), "c", t(11)), "one probe at a time");
        assert_eq!(gate.full_targets(), ["u"]);
        gate.finish(Some("u"), "b", false, t(12));
        assert_eq!(gate.paused_until("u", t(12)), Some(t(32)), "twice as long");
        gate.start(Some("u"), "b");
        gate.finish(Some("u"), "b", false, t(33));
        assert_eq!(gate.paused_until("u", t(33)), Some(t(73)));
        gate.start(Some("u"), "b");
        gate.finish(Some("u"), "b", true, t(74));
        assert_eq!(gate.paused_until("u", t(74)), None);
        gate.start(Some("u"), "b");
        gate.finish(Some("u"), "b", false, t(75));
        assert_eq!(
            gate.paused_until("u", t(75)),
            None,
            "a success starts the count afresh"
        );
    }

    #[test]
    fn a_failure_during_a_pause_does_not_extend_it_and_pauses_stop_growing() {
        let mut gate = Gate::new(LaneLimits {
            per_target: 3,
            breaker_failures: 1,
            ..limits()
        });
        gate.start(Some("u"), "a");
        gate.start(Some("u"), "a");
        gate.finish(Some("u"), "a", false, t(0));
        gate.finish(Some("u"), "a", false, t(1));
        assert_eq!(gate.paused_until("u", t(1)), Some(t(10)));
        let mut at = 10;
        for _ in 0..10 {
            gate.start(Some("u"), "a");
            gate.finish(Some("u"), "a", false, t(at));
            at = (gate.paused_until("u", t(at)).unwrap() - t(0)).num_seconds();
        }
        gate.start(Some("u"), "a");
        gate.finish(Some("u"), "a", false, t(at));
        assert_eq!(gate.paused_until("u", t(at)), Some(t(at + 600)));
    }

    #[test]
    fn the_breaker_can_be_switched_off_and_mails_have_none() {
        let mut gate = Gate::new(LaneLimits {
            breaker_failures: 0,
            ..limits()
        });
        for i in 0..5 {
            gate.start(Some("u"), "a");
            gate.finish(Some("u"), "a", false, t(i));
        }
        assert!(gate.admits(Some("u"), "a", t(5)));
        let mut gate = Gate::new(limits());
        for i in 0..5 {
            gate.start(None, "a");
            gate.finish(None, "a", false, t(i));
        }
        assert!(gate.admits(None, "a", t(5)));
        gate.start(Some("u"), "a");
        gate.release(Some("u"), "a");
        assert_eq!(gate.in_flight(), 0);
    }
}
