//! Vacation in games with clocks (issue 28): an hour of the seat's account spent instead of
//! a run-out, and an account's explicit absence written into its correspondence games.
//!
//! - Before a seat's correspondence clock runs out in a game that allows vacation, one hour
//!   of its account's vacation is spent (`vacation_spent {seat, hours: 1}`, the bank grows
//!   by it) in the transaction of the game's append, so an hour is never spent for an
//!   expiry that did not commit, and two replicas never spend the same hour twice (the
//!   store's guarded `UPDATE`, and the game's compare-and-set).
//! - `PUT /v1/account/vacation` writes a `clocks_set` into each of the account's active
//!   correspondence games that allow vacation: the seat's clock stops with `away_until`
//!   (or runs again when the account comes back early). While the seat is asked to act, its
//!   deadline is `away_until`, so the sweeper wakes the game then and the clock runs again
//!   ([`back_from_away`]).

use chrono::{DateTime, Utc};

use rules::{ClockKind, Event, Game, Status};

use super::{MAX_ATTEMPTS, Service, ServiceError, index_of};
use crate::contention::Contention;
use crate::store::{ListQuery, StoreError, Tx};

/// Whether the game's seats may spend vacation: a correspondence time control that allows
/// it, and the game running.
fn allows_vacation(game: &Game) -> bool {
    game.status() == Status::Active
        && game
            .clock
            .as_ref()
            .is_some_and(|c| c.control.kind == ClockKind::Correspondence && c.control.vacation)
}

/// The seat's clock as of the game's last `clocks_set`.
fn seat_clock(game: &Game, seat: u8) -> Option<&rules::SeatClock> {
    game.clock
        .as_ref()?
        .snapshot
        .as_ref()?
        .clocks
        .get(usize::from(seat))
}

/// Whether `seat` is overdue only because its absence ended (its deadline was its
/// `away_until`): its clock runs again, nothing runs out.
pub(super) fn back_from_away(game: &Game, seat: u8, now: DateTime<Utc>) -> bool {
    seat_clock(game, seat)
        .and_then(|c| c.away_until)
        .is_some_and(|until| until <= now)
}

/// The `clocks_set` that makes `seat` away until `until` (`None`: back now) at `now`, or
/// `None` when that changes nothing. The banks are those at `now`; the seat's clock does
/// not run while away.
#[must_use]
pub fn clocks_with_away(
    game: &Game,
    seat: u8,
    until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<Event> {
    let before = game.clocks_at(now)?;
    let mut changed = game.clone();
    let snapshot = changed.clock.as_mut()?.snapshot.as_mut()?;
    snapshot.clocks.get_mut(usize::from(seat))?.away_until = until;
    // `next_clocks` keeps the away instant it finds (dropping a past one) and decides who
    // runs; when it sees nothing to change, the changed snapshot is already consistent.
    let event = changed.next_clocks(None, now).or_else(|| {
        let clocks = changed.clocks_at(now)?;
        let paused = changed.clock.as_ref()?.snapshot.as_ref()?.paused;
        Some(Event::ClocksSet(Box::new(rules::ClocksSnapshot {
            at: rules::clocks::millis(now),
            clocks,
            paused,
        })))
    })?;
    match &event {
        Event::ClocksSet(next) if next.clocks == before => None,
        _ => Some(event),
    }
}

impl Service {
    /// Spends vacation of the seat's account, in `tx`, when the game allows it: the hours
    /// to add to the seat's bank (`vacation_spent`), or `None` to let the clock run out.
    /// One hour when the flag has just fallen; when the sweeper finds it fallen longer ago
    /// (a server that was down), the whole hours that cover the time since and one more,
    /// as far as they are left, so the time in between is charged as if the hours had been
    /// spent one by one.
    ///
    /// # Errors
    /// Storage failure.
    pub(super) fn spend_vacation_hour(
        &self,
        tx: &mut Tx<'_>,
        game: &Game,
        seat: u8,
        now: DateTime<Utc>,
    ) -> Result<Option<u32>, StoreError> {
        if !allows_vacation(game) {
            return Ok(None);
        }
        let Some(account) = game
            .seats
            .get(usize::from(seat))
            .filter(|s| !s.bot_controlled())
            .and_then(|s| s.account())
        else {
            return Ok(None);
        };
        let overshoot_ms = seat_clock(game, seat)
            .zip(game.clock.as_ref().and_then(|c| c.snapshot.as_ref()))
            .filter(|(c, _)| c.running)
            .map_or(0, |(c, snapshot)| {
                let elapsed = (rules::clocks::millis(now) - snapshot.at).num_milliseconds();
                (elapsed - i64::try_from(c.remaining_ms).unwrap_or(i64::MAX)).max(0)
            });
        let wanted = u32::try_from(overshoot_ms / 3_600_000 + 1).unwrap_or(u32::MAX);
        let spent =
            crate::vacation::spend_hours(tx, account, self.vacation_days, wanted, now.naive_utc())?;
        if spent > 0 {
            tracing::info!(seat, hours = spent, "spent vacation instead of a run-out");
        }
        Ok((spent > 0).then_some(spent))
    }

    /// The `clocks_set` that stops `seat`'s fallen flag because its account is away now (an
    /// absence that began before the game started, or before the account sat down, and so
    /// was not written into the game then), in a game that allows vacation; `None`
    /// otherwise.
    ///
    /// # Errors
    /// Storage failure.
    pub(super) fn away_now(
        &self,
        tx: &mut Tx<'_>,
        game: &Game,
        seat: u8,
        now: DateTime<Utc>,
    ) -> Result<Option<Event>, StoreError> {
        if !allows_vacation(game) {
            return Ok(None);
        }
        let Some(account) = game
            .seats
            .get(usize::from(seat))
            .filter(|s| !s.bot_controlled())
            .and_then(|s| s.account())
        else {
            return Ok(None);
        };
        let Some(row) = tx.vacation(account)? else {
            return Ok(None);
        };
        let Some(until) = crate::vacation::away_at(&row, now.naive_utc()) else {
            return Ok(None);
        };
        Ok(clocks_with_away(game, seat, Some(until.and_utc()), now))
    }

    /// Writes the account's absence (`until`; `None`: back now) into each of its active
    /// correspondence games that allow vacation (a `clocks_set` with the seat's
    /// `away_until`). Returns how many games changed. A game that cannot be written (a
    /// lasting conflict) is logged and left: its clock then runs as before.
    ///
    /// # Errors
    /// Storage failure while listing the games.
    pub fn apply_away(
        &self,
        account: &str,
        until: Option<DateTime<Utc>>,
    ) -> Result<usize, ServiceError> {
        let mut changed = 0;
        let mut before: Option<String> = None;
        loop {
            let page = self.store.read(|tx| {
                tx.list_games(&ListQuery {
                    account,
                    mine: true,
                    awaiting: false,
                    status: Some("active"),
                    ruleset: None,
                    before_id: before.as_deref(),
                    min_free_seats: None,
                    limit: 200,
                })
            })?;
            let Some(last) = page.last() else {
                return Ok(changed);
            };
            before = Some(last.game.id.clone());
            for summary in &page {
                match self.away_in(&summary.game.id, account, until) {
                    Ok(true) => changed += 1,
                    Ok(false) => {}
                    Err(e) => tracing::warn!(
                        game = summary.game.id,
                        error = %crate::telemetry::Chain(&e),
                        "could not write an absence into a game"
                    ),
                }
            }
        }
    }

    fn away_in(
        &self,
        game_id: &str,
        account: &str,
        until: Option<DateTime<Utc>>,
    ) -> Result<bool, ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            match self
                .store
                .write(|tx| self.away_attempt(tx, game_id, account, until))
            {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(changed) => {
                    if changed {
                        self.notifier.notify(game_id);
                    }
                    return Ok(changed);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Contention::Busy.into())
    }

    fn away_attempt(
        &self,
        tx: &mut Tx<'_>,
        game_id: &str,
        account: &str,
        until: Option<DateTime<Utc>>,
    ) -> Result<bool, ServiceError> {
        let (version, mut game) = self.load(tx, game_id)?;
        if !allows_vacation(&game) {
            return Ok(false);
        }
        let Some(seat) = game.seat_of(account) else {
            return Ok(false);
        };
        if game
            .seats
            .get(usize::from(seat))
            .is_none_or(rules::Seat::bot_controlled)
        {
            return Ok(false);
        }
        let now = self.clock.now();
        let Some(event) = clocks_with_away(&game, seat, until, now) else {
            return Ok(false);
        };
        let before = game.clone();
        game.apply(&event);
        let encoded = super::encode_all(std::slice::from_ref(&event))?;
        tx.append(game_id, version, &index_of(&game, game_id), &encoded)?;
        // Back early, the seat's deadline moved earlier: `notify_outbox` makes its waiting
        // reminders of time running low due anew.
        self.notify_outbox(tx, game_id, version + 1, &before, &game)?;
        Ok(true)
    }
}
