//! Store operations of vacation (issue 28): an account's vacation hours of a calendar year
//! (UTC), its explicit absence (`away_until`), and its "time running low" webhook
//! threshold, written once and compiled for both connection types.
//!
//! Hours are counted as used hours of `vacation_year`; a row of another year has used none
//! of this one's (the first spending of a year starts the count again). Spending is one
//! `UPDATE` whose `WHERE` requires the hours to be left, so two replicas spending at the
//! same time never take more than there is: of two racing statements the second finds the
//! row changed and matches nothing when the hours are gone.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::outbox::PENDING;
use super::schema::{accounts, webhook_deliveries};
use super::tx::{Tx, on};

/// An account's vacation as stored.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = accounts)]
pub struct VacationRow {
    /// The account.
    pub id: String,
    /// A guest account (it has no vacation).
    pub guest: bool,
    /// When the account was deleted.
    pub deleted_at: Option<NaiveDateTime>,
    /// The calendar year `vacation_hours_used` counts (0: never spent).
    pub vacation_year: i32,
    /// Hours used in `vacation_year`.
    pub vacation_hours_used: i32,
    /// The end of an explicit absence (may lie in the past: it ended then).
    pub away_until: Option<NaiveDateTime>,
    /// The "time running low" webhook threshold in minutes (`None`: off).
    pub webhook_low_time_minutes: Option<i32>,
}

impl VacationRow {
    /// Hours used in `year`.
    #[must_use]
    pub fn used_in(&self, year: i32) -> i32 {
        if self.vacation_year == year {
            self.vacation_hours_used
        } else {
            0
        }
    }
}

impl Tx<'_> {
    /// An account's vacation row.
    ///
    /// # Errors
    /// Database failure.
    pub fn vacation(&mut self, account: &str) -> Result<Option<VacationRow>, StoreError> {
        on!(self, |c| {
            Ok(accounts::table
                .find(account)
                .select(VacationRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// The vacation rows of these accounts (unknown ids are left out).
    ///
    /// # Errors
    /// Database failure.
    pub fn vacations(&mut self, ids: &[&str]) -> Result<Vec<VacationRow>, StoreError> {
        on!(self, |c| {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            Ok(accounts::table
                .filter(accounts::id.eq_any(ids))
                .select(VacationRow::as_select())
                .load(c)?)
        })
    }

    /// Spends `hours` of the account's vacation of `year` if at most `per_year` are then
    /// used; `false` (nothing changed) when they are not left, or the account is a guest
    /// or deleted. Atomic per statement (see the module documentation).
    ///
    /// # Errors
    /// Database failure.
    pub fn spend_vacation(
        &mut self,
        account: &str,
        year: i32,
        hours: i32,
        per_year: i32,
    ) -> Result<bool, StoreError> {
        on!(self, |c| {
            // A new year starts the count again; of two replicas doing this at once the
            // second matches nothing (the year is set already).
            diesel::update(
                accounts::table
                    .find(account)
                    .filter(accounts::vacation_year.ne(year)),
            )
            .set((
                accounts::vacation_year.eq(year),
                accounts::vacation_hours_used.eq(0),
            ))
            .execute(c)?;
            let spent = diesel::update(
                accounts::table
                    .find(account)
                    .filter(accounts::guest.eq(false))
                    .filter(accounts::deleted_at.is_null())
                    .filter(accounts::vacation_year.eq(year))
                    .filter((accounts::vacation_hours_used + hours).le(per_year)),
            )
            .set(accounts::vacation_hours_used.eq(accounts::vacation_hours_used + hours))
            .execute(c)?;
            Ok(spent == 1)
        })
    }

    /// Gives back `hours` of the account's vacation of `year` (not below none used); hours
    /// spent in another year stay spent.
    ///
    /// # Errors
    /// Database failure.
    pub fn refund_vacation(
        &mut self,
        account: &str,
        year: i32,
        hours: i32,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            let refunded = diesel::update(
                accounts::table
                    .find(account)
                    .filter(accounts::vacation_year.eq(year))
                    .filter(accounts::vacation_hours_used.ge(hours)),
            )
            .set(accounts::vacation_hours_used.eq(accounts::vacation_hours_used - hours))
            .execute(c)?;
            if refunded == 0 {
                diesel::update(
                    accounts::table
                        .find(account)
                        .filter(accounts::vacation_year.eq(year)),
                )
                .set(accounts::vacation_hours_used.eq(0))
                .execute(c)?;
            }
            Ok(())
        })
    }

    /// Sets (or clears) the end of the account's explicit absence.
    ///
    /// # Errors
    /// Database failure.
    pub fn set_away_until(
        &mut self,
        account: &str,
        until: Option<NaiveDateTime>,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(accounts::table.find(account))
                .set(accounts::away_until.eq(until))
                .execute(c)?;
            Ok(())
        })
    }

    /// Makes the account's pending reminders of time running low (`kinds`) in `game` that
    /// were not attempted yet due now, so the outbox's worker weighs them against the seat's
    /// deadline again (it puts each off to its new due time, or sends it): for a change
    /// that moved the deadline earlier without a new ask (coming back from an absence).
    ///
    /// # Errors
    /// Database failure.
    pub fn recheck_reminders(
        &mut self,
        game: &str,
        account: &str,
        kinds: &[&str],
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(
                webhook_deliveries::table
                    .filter(webhook_deliveries::game_id.eq(game))
                    .filter(webhook_deliveries::account_id.eq(account))
                    .filter(webhook_deliveries::kind.eq_any(kinds))
                    .filter(webhook_deliveries::status.eq(PENDING))
                    .filter(webhook_deliveries::attempts.eq(0))
                    .filter(webhook_deliveries::next_attempt_at.gt(self.now)),
            )
            .set(webhook_deliveries::next_attempt_at.eq(self.now))
            .execute(c)?;
            Ok(())
        })
    }

    /// Sets (or clears) the account's "time running low" webhook threshold.
    ///
    /// # Errors
    /// Database failure.
    pub fn set_webhook_low_time(
        &mut self,
        account: &str,
        minutes: Option<i32>,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(accounts::table.find(account))
                .set(accounts::webhook_low_time_minutes.eq(minutes))
                .execute(c)?;
            Ok(())
        })
    }
}
