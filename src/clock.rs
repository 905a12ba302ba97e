//! The one clock the services read the time from.
//!
//! In production it is the system clock. A server started with `STAMMTISCH_TEST_CLOCK=true`
//! gets a test clock instead: the system clock plus an offset that `POST /test/clock` moves
//! forward (the route exists only in that mode). The HTTP tests run the real binary in
//! another process, so the control has to cross the process boundary; an endpoint on the
//! server under test does that without files or shared state to clean up, and the test
//! waits for what it caused exactly as a client would. The clock never runs backwards:
//! an offset can only grow.
//!
//! Nothing else in the server calls `Utc::now()`: deadlines, expiry, the rematch window,
//! reminders, webhook retries, leases, tokens and rate-limit windows all read this clock,
//! so moving it moves all of them together.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};

/// A cheap-to-clone handle on the time.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// `None`: the system clock. `Some`: the system clock plus these milliseconds, shared
    /// by every clone (a test clock).
    offset_ms: Option<Arc<AtomicI64>>,
}

impl Clock {
    /// The system clock.
    #[must_use]
    pub fn system() -> Self {
        Self { offset_ms: None }
    }

    /// A test clock: starts at the system time and can be moved forward with
    /// [`Clock::advance`].
    #[must_use]
    pub fn test() -> Self {
        Self {
            offset_ms: Some(Arc::new(AtomicI64::new(0))),
        }
    }

    /// A test clock that starts at `start`, which may lie in the past, and then moves
    /// with the system clock and [`Clock::advance`]: `stammtisch fill` writes a year of
    /// history with it.
    #[must_use]
    pub fn test_from(start: DateTime<Utc>) -> Self {
        let offset = (start - Utc::now()).num_milliseconds();
        Self {
            offset_ms: Some(Arc::new(AtomicI64::new(offset))),
        }
    }

    /// Whether this is a test clock (which `POST /test/clock` may move).
    #[must_use]
    pub fn is_test(&self) -> bool {
        self.offset_ms.is_some()
    }

    /// The current time.
    #[must_use]
    pub fn now(&self) -> DateTime<Utc> {
        let now = Utc::now();
        match &self.offset_ms {
            None => now,
            Some(offset) => now + TimeDelta::milliseconds(offset.load(Ordering::SeqCst)),
        }
    }

    /// The current time without a zone, as the store keeps it.
    #[must_use]
    pub fn naive(&self) -> NaiveDateTime {
        self.now().naive_utc()
    }

    /// Seconds since the Unix epoch.
    #[must_use]
    pub fn timestamp(&self) -> i64 {
        self.now().timestamp()
    }

    /// Moves a test clock forward by `by` and returns the new time; the system clock
    /// cannot be moved and answers `None`.
    pub fn advance(&self, by: std::time::Duration) -> Option<DateTime<Utc>> {
        let offset = self.offset_ms.as_ref()?;
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX / 4);
        offset.fetch_add(ms, Ordering::SeqCst);
        Some(self.now())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_system_clock_cannot_be_moved() {
        let clock = Clock::system();
        assert!(!clock.is_test());
        assert!(clock.advance(std::time::Duration::from_secs(60)).is_none());
        assert!((clock.now() - Utc::now()).num_seconds().abs() < 5);
    }

    #[test]
    fn a_test_clock_moves_forward_for_every_clone() {
        let clock = Clock::test();
        let other = clock.clone();
        let before = other.now();
        let after = clock.advance(std::time::Duration::from_secs(3600)).unwrap();
        assert!(after - before >= TimeDelta::hours(1));
        assert!(other.now() - before >= TimeDelta::hours(1));
        assert!(other.now() - before < TimeDelta::hours(1) + TimeDelta::minutes(1));
    }
}
