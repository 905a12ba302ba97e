//! The tournaments the worker looks at (`crate::tournaments::Tournaments::advance_due`).

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::schema::tournaments;
use super::tx::{Tx, on};

impl Tx<'_> {
    /// Ids of tournaments that may have something due at `now`: every running one, and
    /// open ones whose start time came or that are full; oldest first, at most `limit`.
    ///
    /// # Errors
    /// Database failure.
    pub fn due_tournaments(
        &mut self,
        now: NaiveDateTime,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        on!(self, |c| {
            Ok(tournaments::table
                .filter(
                    tournaments::status.eq("running").or(tournaments::status
                        .eq("open")
                        .and(
                            tournaments::starts_at
                                .le(now)
                                .or(tournaments::players.ge(tournaments::max_players)),
                        )),
                )
                .order(tournaments::updated_at.asc())
                .limit(limit)
                .select(tournaments::id)
                .load(c)?)
        })
    }
}
