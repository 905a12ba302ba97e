//! Vacation (issue 28): every registered account has `STAMMTISCH_VACATION_DAYS` days a
//! calendar year (UTC), kept as hours. They are spent an hour at a time when one of the
//! account's correspondence clocks would otherwise run out (in games that allow vacation),
//! or taken up front with an explicit absence ("away until"): going away spends the whole
//! hours until then at once, coming back early gives back the whole hours not used. Guests
//! have none.
//!
//! Spending is atomic in the store (one `UPDATE … WHERE` the hours are left), so two
//! replicas never overspend. Blocking: call from `web::block`. Knows no HTTP.

use chrono::{DateTime, Datelike, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::store::{Store, StoreError, Tx, VacationRow};

/// The default of `STAMMTISCH_VACATION_DAYS`.
pub const DEFAULT_DAYS: u32 = 14;

const HOUR_MS: i64 = 3_600_000;

/// Why a vacation use case failed.
#[derive(Debug, thiserror::Error)]
pub enum VacationError {
    /// Guests have no vacation.
    #[error("a guest account has no vacation; register first")]
    Guest,
    /// More hours asked than are left this year.
    #[error("going away until then takes {needed} hours of vacation; {left} are left this year")]
    NotEnough {
        /// Hours the absence takes.
        needed: i64,
        /// Hours left this year.
        left: i64,
    },
    /// Not an instant in the future.
    #[error("{0}")]
    Invalid(String),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An account's vacation as it sees it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct VacationBody {
    /// Vacation days per calendar year (UTC) on this server.
    pub days_per_year: u32,
    /// Whole hours left this calendar year.
    pub hours_left: u32,
    /// The end of the account's explicit absence (RFC 3339 UTC), `null` when not away.
    #[schema(required = true, format = DateTime)]
    pub away_until: Option<String>,
}

/// Going away until an instant, or (`null`) coming back now.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AwayChange {
    /// The end of the absence (RFC 3339), in the future and at most the hours left ahead;
    /// `null`: back now (the whole hours not used are given back).
    #[schema(required = true, format = DateTime)]
    #[serde(deserialize_with = "present")]
    pub away_until: Option<String>,
}

/// A field that must be present but may be `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d)
}

fn rfc3339(t: NaiveDateTime) -> String {
    t.and_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Hours a year of `days` days holds.
fn per_year(days: u32) -> i32 {
    i32::try_from(days.saturating_mul(24)).unwrap_or(i32::MAX)
}

/// The calendar year (UTC) of `now`.
fn year_of(now: NaiveDateTime) -> i32 {
    now.year()
}

/// Whether `row` is away at `now`.
#[must_use]
pub fn away_at(row: &VacationRow, now: NaiveDateTime) -> Option<NaiveDateTime> {
    row.away_until.filter(|until| *until > now)
}

/// Spends up to `wanted` whole hours of `account`'s vacation in `tx`: all of them when
/// they are left, else as many as are left. Returns the hours spent (0: none left, or a
/// guest or deleted account). Each statement is guarded, so replicas never overspend.
///
/// # Errors
/// Storage failure.
pub fn spend_hours(
    tx: &mut Tx<'_>,
    account: &str,
    days: u32,
    wanted: u32,
    now: NaiveDateTime,
) -> Result<u32, StoreError> {
    if days == 0 || wanted == 0 {
        return Ok(0);
    }
    let year = year_of(now);
    let limit = per_year(days);
    let wanted_i = i32::try_from(wanted).unwrap_or(i32::MAX).min(limit);
    if tx.spend_vacation(account, year, wanted_i, limit)? {
        return Ok(u32::try_from(wanted_i).unwrap_or(0));
    }
    let left = tx
        .vacation(account)?
        .map_or(0, |row| limit - row.used_in(year))
        .clamp(0, wanted_i);
    if left > 0 && tx.spend_vacation(account, year, left, limit)? {
        return Ok(u32::try_from(left).unwrap_or(0));
    }
    Ok(0)
}

/// The vacation service.
#[derive(Clone)]
pub struct Vacation {
    store: Store,
    days: u32,
    clock: crate::clock::Clock,
}

impl Vacation {
    /// The service over `store` with `days` vacation days a year.
    #[must_use]
    pub fn new(store: Store, days: u32) -> Self {
        Self {
            store,
            days,
            clock: crate::clock::Clock::system(),
        }
    }

    /// The same service reading the time from `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: crate::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Vacation days per year.
    #[must_use]
    pub fn days(&self) -> u32 {
        self.days
    }

    fn body(&self, row: &VacationRow, now: NaiveDateTime) -> VacationBody {
        let left = per_year(self.days) - row.used_in(year_of(now));
        VacationBody {
            days_per_year: self.days,
            hours_left: u32::try_from(left.max(0)).unwrap_or(0),
            away_until: away_at(row, now).map(rfc3339),
        }
    }

    fn registered(tx: &mut Tx<'_>, account: &str) -> Result<VacationRow, VacationError> {
        match tx.vacation(account)? {
            Some(row) if !row.guest && row.deleted_at.is_none() => Ok(row),
            _ => Err(VacationError::Guest),
        }
    }

    /// The account's vacation.
    ///
    /// # Errors
    /// A guest, storage failure.
    pub fn get(&self, account: &str) -> Result<VacationBody, VacationError> {
        let now = self.clock.naive();
        self.store.read(|tx| {
            let row = Self::registered(tx, account)?;
            Ok(self.body(&row, now))
        })
    }

    /// Goes away until `until` (spending the whole hours until then, after giving back
    /// those of an absence it replaces) or, with `None`, comes back now (giving back the
    /// whole hours not used). Returns the account's vacation afterwards and whether its
    /// absence changed.
    ///
    /// # Errors
    /// A guest, an instant that is not in the future or that needs more hours than are
    /// left, storage failure.
    pub fn set_away(
        &self,
        account: &str,
        until: Option<&str>,
    ) -> Result<(VacationBody, bool), VacationError> {
        let now = self.clock.naive();
        let until = until
            .map(|text| {
                // Milliseconds, as the games' clocks keep instants.
                DateTime::parse_from_rfc3339(text)
                    .map(|t| chrono::SubsecRound::trunc_subsecs(t.with_timezone(&Utc), 3))
                    .map(|t| t.naive_utc())
                    .map_err(|e| {
                        VacationError::Invalid(format!(
                            "away_until is not an RFC 3339 instant: {e}"
                        ))
                    })
            })
            .transpose()?;
        if let Some(t) = until
            && t <= now
        {
            return Err(VacationError::Invalid(
                "away_until must be in the future".into(),
            ));
        }
        let year = year_of(now);
        self.store.write(|tx| {
            let row = Self::registered(tx, account)?;
            let before = away_at(&row, now);
            if let Some(old) = before {
                // The whole hours of the old absence not used yet come back.
                let unused =
                    ((old - now).num_milliseconds() / HOUR_MS).min(i64::from(per_year(self.days)));
                tx.refund_vacation(account, year, i32::try_from(unused).unwrap_or(0))?;
            }
            if let Some(t) = until {
                let needed = ((t - now).num_milliseconds() + HOUR_MS - 1) / HOUR_MS;
                // More than a year holds is refused before any arithmetic in SQL.
                let fits = needed <= i64::from(per_year(self.days));
                let hours = i32::try_from(needed).unwrap_or(i32::MAX);
                if self.days == 0
                    || !fits
                    || !tx.spend_vacation(account, year, hours, per_year(self.days))?
                {
                    let used = tx.vacation(account)?.map_or(0, |r| r.used_in(year));
                    // The refund above is rolled back with the transaction.
                    return Err(VacationError::NotEnough {
                        needed,
                        left: i64::from(per_year(self.days) - used).max(0),
                    });
                }
            }
            tx.set_away_until(account, until)?;
            let after = Self::registered(tx, account)?;
            Ok((self.body(&after, now), before != until))
        })
    }
}
