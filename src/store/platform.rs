//! Store operations of the player platform — per-person results of finished games, ratings
//! per ruleset, projection checkpoints — written once and compiled for both connection
//! types. These tables are projections of the event log: `ratings::rebuild` empties and
//! refills them from the log.

use std::collections::{HashMap, HashSet};

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::schema::{accounts, player_results, player_stats, projections, ratings};
use super::tx::{Tx, on};

/// A person's result in a finished game.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = player_results)]
pub struct ResultRow {
    /// The finished game's id.
    pub game_id: String,
    /// The person's account.
    pub account_id: String,
    /// Ruleset name.
    pub ruleset: String,
    /// Their seat.
    pub seat: i32,
    /// Their place, 1 = best; equal totals share a place; a resigned seat places last.
    pub place: i32,
    /// Seats of the game (bots included).
    pub players: i32,
    /// Their total.
    pub total: i32,
    /// Rounds played (games of a nimm-oder-schieb match).
    pub rounds: i32,
    /// Among the winners.
    pub won: bool,
    /// They resigned (a bot finished for them).
    pub resigned: bool,
    /// The game was public when it finished.
    pub public: bool,
    /// The game changed ratings.
    pub rated: bool,
    /// Their rating in this ruleset after the game, when it was rated.
    pub rating_after: Option<f64>,
    /// When the game finished.
    pub finished_at: NaiveDateTime,
}

/// A rating.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = ratings)]
pub struct RatingRow {
    /// The rated person's account.
    pub account_id: String,
    /// Ruleset name.
    pub ruleset: String,
    /// Weng-Lin rating (mean).
    pub rating: f64,
    /// Its uncertainty (standard deviation).
    pub uncertainty: f64,
    /// `rating − 3 × uncertainty`: the conservative estimate boards sort by.
    pub score: f64,
    /// Rated games.
    pub games: i32,
}

/// A leaderboard line: the rating and the account's name.
#[derive(Debug, Clone)]
pub struct BoardRow {
    /// The rating.
    pub rating: RatingRow,
    /// The account's name.
    pub name: String,
}

/// A person's figures in one ruleset over their public or their private finished games,
/// kept with the results (`player_stats`).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = player_stats)]
struct StatsEntry {
    account_id: String,
    ruleset: String,
    public: bool,
    games: i64,
    wins: i64,
    total: i64,
    rounds: i64,
    resigned: i64,
}

/// Per-ruleset figures of a person's finished games.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsRow {
    /// Ruleset name.
    pub ruleset: String,
    /// Finished games.
    pub games: i64,
    /// Won (shared wins included).
    pub wins: i64,
    /// Sum of totals.
    pub total: i64,
    /// Sum of rounds.
    pub rounds: i64,
    /// Games they resigned.
    pub resigned: i64,
}

impl Tx<'_> {
    /// Locks projection `name` for this transaction (creating it at `start`) and returns
    /// its checkpoint.
    ///
    /// # Errors
    /// Database failure.
    pub fn lock_projection(&mut self, name: &str, start: &str) -> Result<String, StoreError> {
        on!(self, |c| {
            // Created first if missing, without an error when another transaction creates it
            // at the same moment (two replicas' first runs: an update-then-insert made one of
            // them fail on the primary key). PostgreSQL waits for that other insert to end.
            diesel::insert_into(projections::table)
                .values((
                    projections::name.eq(name),
                    projections::checkpoint.eq(start),
                ))
                .on_conflict_do_nothing()
                .execute(c)?;
            // An update takes the row lock (PostgreSQL) until the transaction ends, so
            // replicas take turns; SQLite's write transactions are serialised anyway.
            diesel::update(projections::table.find(name))
                .set(projections::checkpoint.eq(projections::checkpoint))
                .execute(c)?;
            Ok(projections::table
                .find(name)
                .select(projections::checkpoint)
                .first(c)?)
        })
    }

    /// Moves projection `name` to `checkpoint`.
    ///
    /// # Errors
    /// Database failure.
    pub fn set_checkpoint(&mut self, name: &str, checkpoint: &str) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(projections::table.find(name))
                .set(projections::checkpoint.eq(checkpoint))
                .execute(c)?;
            Ok(())
        })
    }

    /// Forgets every result and rating (before a rebuild). The projections' rows stay (the
    /// rebuild moves its checkpoint back): a deleted row is one that a projection waiting
    /// for its lock no longer finds.
    ///
    /// # Errors
    /// Database failure.
    pub fn clear_platform(&mut self) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::delete(player_results::table).execute(c)?;
            diesel::delete(player_stats::table).execute(c)?;
            diesel::delete(ratings::table).execute(c)?;
            Ok(())
        })
    }

    /// When each of `ids` that names an account registered (`None`: a guest), in statements
    /// of at most 500 ids.
    ///
    /// # Errors
    /// Database failure.
    pub fn registered_at_of(
        &mut self,
        ids: &[String],
    ) -> Result<HashMap<String, Option<NaiveDateTime>>, StoreError> {
        let mut found = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let rows: Vec<(String, Option<NaiveDateTime>)> = on!(self, |c| accounts::table
                .filter(accounts::id.eq_any(chunk))
                .select((accounts::id, accounts::registered_at))
                .load(c)?);
            found.extend(rows);
        }
        Ok(found)
    }

    /// Every rating of the accounts `ids`, by account and ruleset, in statements of at most
    /// 500 ids.
    ///
    /// # Errors
    /// Database failure.
    pub fn ratings_of_accounts(
        &mut self,
        ids: &[String],
    ) -> Result<HashMap<(String, String), RatingRow>, StoreError> {
        let mut found = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let rows: Vec<RatingRow> = on!(self, |c| ratings::table
                .filter(ratings::account_id.eq_any(chunk))
                .select(RatingRow::as_select())
                .load(c)?);
            found.extend(
                rows.into_iter()
                    .map(|r| ((r.account_id.clone(), r.ruleset.clone()), r)),
            );
        }
        Ok(found)
    }

    /// Writes ratings, replacing those of the same account and ruleset: per ruleset, the
    /// old rows go and the new ones are inserted, in statements of at most 500 rows.
    ///
    /// # Errors
    /// Database failure.
    pub fn put_ratings(&mut self, rows: &[RatingRow]) -> Result<(), StoreError> {
        let mut by_ruleset: HashMap<&str, Vec<&RatingRow>> = HashMap::new();
        for row in rows {
            by_ruleset
                .entry(row.ruleset.as_str())
                .or_default()
                .push(row);
        }
        for (ruleset, rows) in by_ruleset {
            for chunk in rows.chunks(500) {
                let ids: Vec<&str> = chunk.iter().map(|r| r.account_id.as_str()).collect();
                let values: Vec<RatingRow> = chunk.iter().map(|r| (*r).clone()).collect();
                on!(self, |c| {
                    diesel::delete(
                        ratings::table
                            .filter(ratings::ruleset.eq(ruleset))
                            .filter(ratings::account_id.eq_any(&ids)),
                    )
                    .execute(c)?;
                    diesel::insert_into(ratings::table)
                        .values(&values)
                        .execute(c)?;
                    Ok::<_, StoreError>(())
                })?;
            }
        }
        Ok(())
    }

    /// Records results; one that exists for the same game and account is kept (a game
    /// folded again does not count twice in a profile), in statements of at most 500 rows.
    ///
    /// # Errors
    /// Database failure.
    pub fn insert_results(&mut self, rows: &[ResultRow]) -> Result<(), StoreError> {
        for chunk in rows.chunks(500) {
            let mut games: Vec<&str> = chunk.iter().map(|r| r.game_id.as_str()).collect();
            games.sort_unstable();
            games.dedup();
            let existing: Vec<(String, String)> = on!(self, |c| player_results::table
                .filter(player_results::game_id.eq_any(&games))
                .select((player_results::game_id, player_results::account_id))
                .load(c)?);
            let existing: HashSet<(String, String)> = existing.into_iter().collect();
            let mut seen = HashSet::new();
            let new: Vec<ResultRow> = chunk
                .iter()
                .filter(|r| {
                    let key = (r.game_id.clone(), r.account_id.clone());
                    !existing.contains(&key) && seen.insert(key)
                })
                .cloned()
                .collect();
            if new.is_empty() {
                continue;
            }
            on!(self, |c| {
                diesel::insert_into(player_results::table)
                    .values(&new)
                    .execute(c)?;
                Ok::<_, StoreError>(())
            })?;
            self.add_stats(&new)?;
        }
        Ok(())
    }

    /// Adds new results to their people's figures (`player_stats`): the people's rows are
    /// read, summed with the results here, and written back (deleted and inserted), three
    /// statements for up to 200 people (at most eight rows each, eight columns a row: below
    /// SQLite's 32,766 bound parameters).
    fn add_stats(&mut self, results: &[ResultRow]) -> Result<(), StoreError> {
        let mut people: Vec<&str> = results.iter().map(|r| r.account_id.as_str()).collect();
        people.sort_unstable();
        people.dedup();
        for chunk in people.chunks(200) {
            let rows: Vec<StatsEntry> = on!(self, |c| player_stats::table
                .filter(player_stats::account_id.eq_any(chunk))
                .select(StatsEntry::as_select())
                .load(c)?);
            let mut sums: std::collections::BTreeMap<(String, String, bool), StatsEntry> = rows
                .into_iter()
                .map(|e| ((e.account_id.clone(), e.ruleset.clone(), e.public), e))
                .collect();
            let here: HashSet<&str> = chunk.iter().copied().collect();
            for r in results
                .iter()
                .filter(|r| here.contains(r.account_id.as_str()))
            {
                let e = sums
                    .entry((r.account_id.clone(), r.ruleset.clone(), r.public))
                    .or_insert_with(|| StatsEntry {
                        account_id: r.account_id.clone(),
                        ruleset: r.ruleset.clone(),
                        public: r.public,
                        games: 0,
                        wins: 0,
                        total: 0,
                        rounds: 0,
                        resigned: 0,
                    });
                e.games += 1;
                e.wins += i64::from(r.won);
                e.total += i64::from(r.total);
                e.rounds += i64::from(r.rounds);
                e.resigned += i64::from(r.resigned);
            }
            let entries: Vec<StatsEntry> = sums.into_values().collect();
            on!(self, |c| {
                diesel::delete(player_stats::table.filter(player_stats::account_id.eq_any(chunk)))
                    .execute(c)?;
                diesel::insert_into(player_stats::table)
                    .values(&entries)
                    .execute(c)?;
                Ok::<_, StoreError>(())
            })?;
        }
        Ok(())
    }

    /// Every rating of an account.
    ///
    /// # Errors
    /// Database failure.
    pub fn ratings_of(&mut self, account: &str) -> Result<Vec<RatingRow>, StoreError> {
        on!(self, |c| {
            Ok(ratings::table
                .filter(ratings::account_id.eq(account))
                .order(ratings::ruleset.asc())
                .select(RatingRow::as_select())
                .load(c)?)
        })
    }

    /// Ratings of a ruleset, best first, after `offset`, at most `limit`.
    ///
    /// # Errors
    /// Database failure.
    pub fn leaderboard(
        &mut self,
        ruleset: &str,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<BoardRow>, StoreError> {
        on!(self, |c| {
            let rows: Vec<(RatingRow, String)> = ratings::table
                .inner_join(accounts::table.on(accounts::id.eq(ratings::account_id)))
                .filter(ratings::ruleset.eq(ruleset))
                .order((ratings::score.desc(), ratings::account_id.asc()))
                .offset(offset)
                .limit(limit)
                .select((RatingRow::as_select(), accounts::name))
                .load(c)?;
            Ok(rows
                .into_iter()
                .map(|(rating, name)| BoardRow { rating, name })
                .collect())
        })
    }

    /// An account's results, newest first, public games only unless `all`, before
    /// `(finished_at, game_id)`.
    ///
    /// # Errors
    /// Database failure.
    pub fn results_of(
        &mut self,
        account: &str,
        all: bool,
        before: Option<(NaiveDateTime, String)>,
        limit: i64,
    ) -> Result<Vec<ResultRow>, StoreError> {
        on!(self, |c| {
            let mut query = player_results::table
                .filter(player_results::account_id.eq(account))
                .order((
                    player_results::finished_at.desc(),
                    player_results::game_id.desc(),
                ))
                .limit(limit)
                .select(ResultRow::as_select())
                .into_boxed();
            if !all {
                query = query.filter(player_results::public.eq(true));
            }
            if let Some((at, game)) = before {
                query = query.filter(
                    player_results::finished_at
                        .lt(at)
                        .or(player_results::finished_at
                            .eq(at)
                            .and(player_results::game_id.lt(game))),
                );
            }
            Ok(query.load(c)?)
        })
    }

    /// Figures of an account's finished games per ruleset, public games only unless `all`.
    ///
    /// # Errors
    /// Database failure.
    pub fn stats_of(&mut self, account: &str, all: bool) -> Result<Vec<StatsRow>, StoreError> {
        let rows: Vec<StatsEntry> = on!(self, |c| {
            let mut query = player_stats::table
                .filter(player_stats::account_id.eq(account))
                .select(StatsEntry::as_select())
                .into_boxed();
            if !all {
                query = query.filter(player_stats::public.eq(true));
            }
            query.load(c)?
        });
        let mut stats: std::collections::BTreeMap<String, StatsRow> =
            std::collections::BTreeMap::new();
        for e in rows {
            let s = stats.entry(e.ruleset.clone()).or_insert_with(|| StatsRow {
                ruleset: e.ruleset.clone(),
                ..StatsRow::default()
            });
            s.games += e.games;
            s.wins += e.wins;
            s.total += e.total;
            s.rounds += e.rounds;
            s.resigned += e.resigned;
        }
        Ok(stats.into_values().collect())
    }
}
