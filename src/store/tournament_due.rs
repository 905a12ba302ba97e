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
                    tournaments::status
                        .eq("running")
                        .or(tournaments::status.eq("open").and(
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

/// What the tournament list asks for.
pub struct TournamentListFilter<'a> {
    /// The caller: private tournaments it hosts or joined are listed for it.
    pub account: &'a str,
    /// Index statuses to list (empty: all).
    pub statuses: &'a [&'a str],
    /// Only those the caller hosts or joined.
    pub mine: bool,
    /// Ids below this one (the previous page's last; ids are time-ordered UUIDs).
    pub before_id: Option<&'a str>,
    /// Page size.
    pub limit: i64,
}

impl Tx<'_> {
    /// The tournaments a caller may see, newest first.
    ///
    /// # Errors
    /// Database failure.
    pub fn list_tournaments(
        &mut self,
        f: &TournamentListFilter<'_>,
    ) -> Result<Vec<super::TournamentRow>, StoreError> {
        use super::schema::tournament_players;
        on!(self, |c| {
            let joined = tournament_players::table
                .filter(tournament_players::account_id.eq(f.account))
                .select(tournament_players::tournament_id);
            let mut q = tournaments::table.into_boxed();
            if f.mine {
                q = q.filter(
                    tournaments::host_account
                        .eq(f.account)
                        .or(tournaments::id.eq_any(joined)),
                );
            } else {
                q = q.filter(
                    tournaments::public
                        .eq(true)
                        .or(tournaments::host_account.eq(f.account))
                        .or(tournaments::id.eq_any(joined)),
                );
            }
            if !f.statuses.is_empty() {
                q = q.filter(tournaments::status.eq_any(f.statuses.to_vec()));
            }
            if let Some(before) = f.before_id {
                q = q.filter(tournaments::id.lt(before));
            }
            Ok(q.order(tournaments::id.desc())
                .limit(f.limit)
                .select(super::TournamentRow::as_select())
                .load(c)?)
        })
    }
}
