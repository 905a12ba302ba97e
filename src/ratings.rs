//! Ratings, results and profiles: a projection of the event log.
//!
//! The projection follows the analysts' feed (the commit-ordered global order of public
//! events) from a checkpoint kept in the same transaction as what it writes, reading only
//! its `game_finished` events (a partial index of their own). At each it folds that game's
//! log up to the end and records each person's result; when the game is rated it updates
//! the Weng-Lin ratings (the `skillratings` crate) of the registered people at the table.
//! A page of finished games is one transaction with a few statements, not several per
//! game: the games' logs, their people's registration and ratings are read together, the
//! ratings updated in memory in feed order, and the changed ratings and the results
//! written together. Because the order and the input come from
//! the log alone, `rebuild` (the `stammtisch rebuild-ratings` command) arrives at exactly
//! the same numbers as the running projection.
//!
//! A game is rated when it was public when it finished (private games leave no trace
//! outside their table), had no prepared deal (its creator knew the cards), and at least two
//! registered people sat in it. Bots and guests are not rated but hold their places. Equal
//! totals share a place (nimm-oder-schieb: the winners' chip tiebreak decides first
//! place); a seat whose person resigned places last.
//!
//! Knows no HTTP. Blocking: call from `web::block` or a thread of its own.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, NaiveDateTime, Utc};
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

use rules::Game;
use rules::tournament::places;

use crate::games::{ServiceError, decode};
use crate::store::{FeedCursor, RatingRow, ResultRow, StatsRow, Store, StoredEvent, Tx};

/// A rating counts as provisional until this many rated games.
pub const PROVISIONAL_GAMES: i32 = 10;
/// The projection's name (its checkpoint row).
const PROJECTION: &str = "ratings";
/// Finished games folded per transaction.
const PAGE: i64 = 200;

/// The ratings service.
#[derive(Clone)]
pub struct Ratings {
    store: Store,
}

/// A person's result, from a finished game.
struct Seated {
    seat: u8,
    account: String,
    place: i32,
    won: bool,
    resigned: bool,
}

/// The people (seats with an account) of a finished game, with their places.
fn people(game: &Game) -> Vec<Seated> {
    let places = places(game);
    game.seats
        .iter()
        .enumerate()
        .filter_map(|(i, seat)| {
            let account = seat.account()?;
            let seat_no = u8::try_from(i).ok()?;
            Some(Seated {
                seat: seat_no,
                account: account.to_owned(),
                place: places.get(i).copied().unwrap_or(1),
                won: game.winners.contains(&seat_no) && !seat.resigned,
                resigned: seat.resigned,
            })
        })
        .collect()
}

fn conservative(r: &WengLinRating) -> f64 {
    r.rating - 3.0 * r.uncertainty
}

/// What a page of finished games is folded with, read before any of them is folded (a
/// few statements per page, not several per game): when their people registered, and those
/// people's ratings, which the page's games update here in feed order and which are
/// written at the page's end with the results.
struct Fold {
    registered: HashMap<String, Option<NaiveDateTime>>,
    ratings: HashMap<(String, String), RatingRow>,
    /// The ratings the page changed (in a set: written once each).
    changed: BTreeSet<(String, String)>,
    results: Vec<ResultRow>,
}

/// A finished game's state at its end: its log folded up to `game_finished` (later events,
/// a visibility change or a rematch link, do not change what the game was when it
/// finished). `None` when the log holds no game.
fn at_its_end(stored: &[StoredEvent]) -> Result<Option<Game>, ServiceError> {
    let end = stored
        .iter()
        .position(|e| e.event_type == "game_finished")
        .map_or(stored.len(), |i| i + 1);
    let events = stored[..end]
        .iter()
        .map(decode)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Game::from_events(&events))
}

impl Fold {
    /// Folds one finished game: results for everyone, ratings when rated.
    fn game(&mut self, game_id: &str, game: &Game, finished_at: NaiveDateTime) {
        let ruleset = game.setup.ruleset.name();
        let seated = people(game);
        let public = game.public == Some(true);
        // Registered when the game finished: an account registered later (a guest that
        // kept its games by registering) does not make an old game rated, so a rebuild
        // from the log arrives at the numbers the running projection wrote.
        let registered: Vec<&Seated> = seated
            .iter()
            .filter(|p| {
                self.registered
                    .get(&p.account)
                    .copied()
                    .flatten()
                    .is_some_and(|at| at <= finished_at)
            })
            .collect();
        let rated = public && !game.prepared_deal && registered.len() >= 2;
        let mut after: Vec<(String, f64)> = Vec::new();
        if rated {
            let before: Vec<(WengLinRating, i32)> = registered
                .iter()
                .map(|p| {
                    let row = self.ratings.get(&(p.account.clone(), ruleset.to_owned()));
                    (
                        row.map_or_else(WengLinRating::new, |r| WengLinRating {
                            rating: r.rating,
                            uncertainty: r.uncertainty,
                        }),
                        row.map_or(0, |r| r.games),
                    )
                })
                .collect();
            let teams: Vec<[WengLinRating; 1]> = before.iter().map(|(r, _)| [*r]).collect();
            let outcome: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
                .iter()
                .zip(&registered)
                .map(|(team, p)| {
                    (
                        team.as_slice(),
                        MultiTeamOutcome::new(usize::try_from(p.place).unwrap_or(1)),
                    )
                })
                .collect();
            let updated = weng_lin_multi_team(&outcome, &WengLinConfig::new());
            for ((person, (_, games)), team) in registered.iter().zip(&before).zip(updated) {
                let Some(new) = team.first() else { continue };
                let key = (person.account.clone(), ruleset.to_owned());
                self.ratings.insert(
                    key.clone(),
                    RatingRow {
                        account_id: person.account.clone(),
                        ruleset: ruleset.to_owned(),
                        rating: new.rating,
                        uncertainty: new.uncertainty,
                        score: conservative(new),
                        games: games + 1,
                    },
                );
                self.changed.insert(key);
                after.push((person.account.clone(), conservative(new)));
            }
        }
        for person in &seated {
            self.results.push(ResultRow {
                game_id: game_id.to_owned(),
                account_id: person.account.clone(),
                ruleset: ruleset.to_owned(),
                seat: i32::from(person.seat),
                place: person.place,
                players: i32::from(game.setup.players),
                total: game
                    .totals()
                    .get(usize::from(person.seat))
                    .copied()
                    .unwrap_or(0),
                rounds: i32::try_from(game.scores.len()).unwrap_or(i32::MAX),
                won: person.won,
                resigned: person.resigned,
                public,
                rated: rated && after.iter().any(|(a, _)| *a == person.account),
                rating_after: after
                    .iter()
                    .find(|(a, _)| *a == person.account)
                    .map(|(_, r)| *r),
                finished_at,
            });
        }
    }
}

/// Folds the finished games of `page` (`game_finished` events in feed order) into the
/// projection.
fn project_page(tx: &mut Tx<'_>, page: &[StoredEvent]) -> Result<(), ServiceError> {
    let ids: Vec<String> = page.iter().map(|e| e.game_id.clone()).collect();
    let streams = tx.load_streams(&ids)?;
    let mut games = Vec::with_capacity(page.len());
    for event in page {
        let stream = streams.get(&event.game_id).map_or(&[][..], Vec::as_slice);
        if let Some(game) = at_its_end(stream)? {
            games.push((event, game));
        }
    }
    let mut accounts: Vec<String> = games
        .iter()
        .flat_map(|(_, g)| g.seats.iter().filter_map(rules::Seat::account))
        .map(str::to_owned)
        .collect();
    accounts.sort_unstable();
    accounts.dedup();
    let mut fold = Fold {
        registered: tx.registered_at_of(&accounts)?,
        ratings: tx.ratings_of_accounts(&accounts)?,
        changed: BTreeSet::new(),
        results: Vec::new(),
    };
    for (event, game) in &games {
        fold.game(&event.game_id, game, event.recorded_at);
    }
    let changed: Vec<RatingRow> = fold
        .changed
        .iter()
        .filter_map(|key| fold.ratings.get(key).cloned())
        .collect();
    tx.put_ratings(&changed)?;
    tx.insert_results(&fold.results)?;
    Ok(())
}

/// A rating in one ruleset (Weng-Lin).
#[derive(Debug, Clone, PartialEq)]
pub struct Rating {
    /// Ruleset name.
    pub ruleset: String,
    /// The estimate of skill (mean).
    pub mu: f64,
    /// Its uncertainty (standard deviation).
    pub sigma: f64,
    /// `mu − 3 × sigma`: the conservative estimate boards sort by.
    pub conservative: f64,
    /// Rated games.
    pub games: i32,
}

impl From<RatingRow> for Rating {
    fn from(row: RatingRow) -> Self {
        Self {
            ruleset: row.ruleset,
            mu: row.rating,
            sigma: row.uncertainty,
            conservative: row.score,
            games: row.games,
        }
    }
}

/// A line of a leaderboard.
#[derive(Debug, Clone)]
pub struct BoardLine {
    /// 1 = best.
    pub rank: i64,
    /// The rated account.
    pub account_id: String,
    /// Its name.
    pub name: String,
    /// Its rating.
    pub rating: Rating,
}

/// A page of the leaderboard.
pub struct Board {
    /// Lines, best first.
    pub lines: Vec<BoardLine>,
    /// The next page's cursor.
    pub next_cursor: Option<String>,
}

/// A player's figures in one ruleset, over the finished games a viewer may know of.
#[derive(Debug, Clone)]
pub struct RulesetStats {
    /// Ruleset name.
    pub ruleset: String,
    /// Finished games.
    pub games: i64,
    /// Games won.
    pub wins: i64,
    /// Penalty points over all of them.
    pub penalty: i64,
    /// Rounds played over all of them.
    pub rounds: i64,
    /// Games the player resigned.
    pub resigned: i64,
}

impl From<StatsRow> for RulesetStats {
    fn from(row: StatsRow) -> Self {
        Self {
            ruleset: row.ruleset,
            games: row.games,
            wins: row.wins,
            penalty: row.total,
            rounds: row.rounds,
            resigned: row.resigned,
        }
    }
}

/// A player's profile.
pub struct Profile {
    /// Account id.
    pub id: String,
    /// The current name (`deleted player` after a deletion).
    pub name: String,
    /// A guest account.
    pub guest: bool,
    /// When the account was made.
    pub member_since: DateTime<Utc>,
    /// Figures per ruleset of the finished games the viewer may know of.
    pub stats: Vec<RulesetStats>,
    /// Ratings per ruleset.
    pub ratings: Vec<Rating>,
}

/// A finished game as one of its players played it.
#[derive(Debug, Clone)]
pub struct Played {
    /// The game.
    pub game_id: String,
    /// Ruleset name.
    pub ruleset: String,
    /// When it ended.
    pub finished_at: DateTime<Utc>,
    /// The player's seat.
    pub seat: i32,
    /// Their place (1 = best; ties share a place).
    pub place: i32,
    /// Players in the game.
    pub players: i32,
    /// Their final total.
    pub total: i32,
    /// They won.
    pub won: bool,
    /// They resigned.
    pub resigned: bool,
    /// The game is public.
    pub public: bool,
    /// The game counted for ratings.
    pub rated: bool,
    /// Their conservative rating after the game, when it was rated.
    pub rating_after: Option<f64>,
}

impl From<ResultRow> for Played {
    fn from(row: ResultRow) -> Self {
        Self {
            game_id: row.game_id,
            ruleset: row.ruleset,
            finished_at: row.finished_at.and_utc(),
            seat: row.seat,
            place: row.place,
            players: row.players,
            total: row.total,
            won: row.won,
            resigned: row.resigned,
            public: row.public,
            rated: row.rated,
            rating_after: row.rating_after,
        }
    }
}

/// A page of a player's finished games.
pub struct History {
    /// Results, newest first.
    pub results: Vec<Played>,
    /// The next page's cursor.
    pub next_cursor: Option<String>,
}

fn encode_cursor(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

fn decode_cursor(cursor: &str) -> Result<String, ServiceError> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .filter(|c| !c.is_empty())
        .ok_or(ServiceError::InvalidCursor)
}

/// The feed cursor a checkpoint names: `TX:POSITION`, or a plain position (the form
/// written before the feed was ordered by transaction), `0` for the start.
fn feed_cursor(tx: &mut Tx<'_>, checkpoint: &str) -> Result<FeedCursor, ServiceError> {
    if let Some((tx_id, position)) = checkpoint.split_once(':') {
        return match (tx_id.parse(), position.parse()) {
            (Ok(tx_id), Ok(position)) => Ok(FeedCursor { tx_id, position }),
            _ => Err(ServiceError::InvalidCursor),
        };
    }
    match checkpoint.parse::<i64>() {
        Ok(0) => Ok(FeedCursor::START),
        Ok(position) => tx.feed_cursor(position)?.ok_or(ServiceError::InvalidCursor),
        Err(_) => Err(ServiceError::InvalidCursor),
    }
}

impl Ratings {
    /// The service over a store.
    #[must_use]
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Reads the feed's `game_finished` events from the checkpoint and folds every
    /// finished game; returns how many it folded. Safe with any number of replicas: each
    /// page is one transaction that holds the projection's row lock.
    ///
    /// # Errors
    /// Storage failure, an unreadable event.
    pub fn catch_up(&self) -> Result<usize, ServiceError> {
        let mut read = 0;
        loop {
            // Every statement here finds its rows by key; on the key-lookup connections a
            // stale estimate cannot turn them into scans. With the tables' statistics from
            // before a rebuild emptied them (or none, autovacuum off), the result and rating
            // lookups scanned the growing tables on every game (quadratic at 10⁵ games).
            let n = self.store.write_by_keys(|tx| {
                let checkpoint = tx.lock_projection(PROJECTION, "0")?;
                let after = feed_cursor(tx, &checkpoint)?;
                let page = tx.finished_page(after, PAGE)?;
                project_page(tx, &page)?;
                if let Some(last) = page.last() {
                    let at = FeedCursor::from(last);
                    tx.set_checkpoint(PROJECTION, &format!("{}:{}", at.tx_id, at.position))?;
                }
                Ok::<_, ServiceError>(page.len())
            })?;
            read += n;
            if i64::try_from(n).unwrap_or(i64::MAX) < PAGE {
                return Ok(read);
            }
        }
    }

    /// Forgets every result and rating and builds them again from the event log; returns
    /// how many finished games it folded.
    ///
    /// # Errors
    /// Storage failure, an unreadable event.
    pub fn rebuild(&self) -> Result<usize, ServiceError> {
        // Everything that committed before the rebuild: transactions that are still running
        // hold the feed back (PostgreSQL), so read on until they have ended (for at most a
        // minute; the running projection reads the rest later).
        let target = self.store.read(|tx| tx.feed_lag())?.next;
        self.store.write(|tx| {
            tx.lock_projection(PROJECTION, "0")?;
            tx.clear_platform()?;
            tx.set_checkpoint(PROJECTION, "0")
                .map_err(ServiceError::from)
        })?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut read = 0;
        loop {
            let caught_up = self.store.read(|tx| tx.feed_lag())?.horizon >= target;
            read += self.catch_up()?;
            if caught_up || std::time::Instant::now() > deadline {
                return Ok(read);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// The leaderboard of a ruleset, best conservative rating first.
    ///
    /// # Errors
    /// A cursor this board did not hand out, storage failure.
    pub fn leaderboard(
        &self,
        ruleset: &str,
        cursor: Option<&str>,
        limit: i64,
    ) -> Result<Board, ServiceError> {
        let offset: i64 = match cursor {
            None => 0,
            Some(c) => decode_cursor(c)?
                .parse()
                .map_err(|_| ServiceError::InvalidCursor)?,
        };
        let rows = self
            .store
            .read_replica(None, |tx| tx.leaderboard(ruleset, offset, limit))?;
        let full = i64::try_from(rows.len()).unwrap_or(i64::MAX) == limit;
        let lines = rows
            .into_iter()
            .zip(offset + 1..)
            .map(|(row, rank)| BoardLine {
                rank,
                account_id: row.rating.account_id.clone(),
                name: row.name,
                rating: row.rating.into(),
            })
            .collect();
        Ok(Board {
            next_cursor: full.then(|| encode_cursor(&(offset + limit).to_string())),
            lines,
        })
    }

    /// A player's profile as `viewer` may see it: figures from public games, and from all
    /// of them for the player themself.
    ///
    /// # Errors
    /// No such account, storage failure.
    pub fn profile(&self, player: &str, viewer: &str) -> Result<Profile, ServiceError> {
        self.store.read_replica(Some(viewer), |tx| {
            let account = tx
                .account_by_id(player)?
                .ok_or(ServiceError::PlayerNotFound)?;
            Ok(Profile {
                stats: (tx.stats_of(player, player == viewer)?.into_iter())
                    .map(RulesetStats::from)
                    .collect(),
                ratings: (tx.ratings_of(player)?.into_iter())
                    .map(Rating::from)
                    .collect(),
                id: account.id,
                name: account.name,
                guest: account.guest,
                member_since: account.created_at.and_utc(),
            })
        })
    }

    /// A player's finished games, newest first: public ones, and all for the player
    /// themself.
    ///
    /// # Errors
    /// No such account, a cursor this list did not hand out, storage failure.
    pub fn history(
        &self,
        player: &str,
        viewer: &str,
        cursor: Option<&str>,
        limit: i64,
    ) -> Result<History, ServiceError> {
        let before = match cursor {
            None => None,
            Some(c) => {
                let text = decode_cursor(c)?;
                let (at, game) = text.split_once('|').ok_or(ServiceError::InvalidCursor)?;
                let at = NaiveDateTime::parse_from_str(at, "%Y-%m-%dT%H:%M:%S%.f")
                    .map_err(|_| ServiceError::InvalidCursor)?;
                Some((at, game.to_owned()))
            }
        };
        self.store.read_replica(Some(viewer), |tx| {
            tx.account_by_id(player)?
                .ok_or(ServiceError::PlayerNotFound)?;
            let results = tx.results_of(player, player == viewer, before.clone(), limit)?;
            let full = i64::try_from(results.len()).unwrap_or(i64::MAX) == limit;
            let next_cursor = results.last().filter(|_| full).map(|r| {
                encode_cursor(&format!(
                    "{}|{}",
                    r.finished_at.format("%Y-%m-%dT%H:%M:%S%.f"),
                    r.game_id
                ))
            });
            Ok(History {
                results: results.into_iter().map(Played::from).collect(),
                next_cursor,
            })
        })
    }
}
