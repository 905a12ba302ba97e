//! The analysts' feed: every public event of every game, in commit order and gapless,
//! read by position with a cursor, and how far it lags behind what has committed; and the
//! two reads `stammtisch export` adds to it (a game's public events, the games' rulesets).

use std::collections::HashMap;

use diesel::prelude::*;

use super::StoreError;
use super::games::StoredEvent;
use super::schema::{events, games};
use super::tx::{Tx, on};

/// A place in the analysts' feed: the key `(tx_id, position)` of the last event read.
/// The feed is ordered by this key; on SQLite `tx_id` is always 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedCursor {
    /// The event's transaction key.
    pub tx_id: i64,
    /// The event's global position.
    pub position: i64,
}

impl FeedCursor {
    /// Before the first event.
    pub const START: Self = Self {
        tx_id: -1,
        position: 0,
    };
}

impl From<&StoredEvent> for FeedCursor {
    fn from(e: &StoredEvent) -> Self {
        Self {
            tx_id: e.tx_id,
            position: e.position,
        }
    }
}

/// How far the feed lags behind what has committed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedLag {
    /// Committed public events that readers cannot see yet, because an older transaction
    /// (anywhere in the database cluster) is still running.
    pub held_events: i64,
    /// Age in seconds of the oldest of them (0 when none is held).
    pub seconds: f64,
    /// Events of transactions with a key below this are all readable (SQLite: all).
    pub horizon: i64,
    /// The key of the next transaction to begin: at or below every later one (SQLite: 0).
    pub next: i64,
}

impl Tx<'_> {
    /// Public events of all games after `after`, in feed order: commit order, gapless
    /// (PostgreSQL: only events of transactions below the oldest one still running, in
    /// `(tx_id, position)` order; SQLite: position order, its writers are serialised).
    ///
    /// # Errors
    /// Database failure.
    pub fn feed_page(
        &mut self,
        after: FeedCursor,
        limit: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        on!(self, |c| Feed::page(c, Part::Public, after, limit))
    }

    /// The feed's `game_finished` events after `after`, in feed order: [`Tx::feed_page`]
    /// with only those (what the ratings projection folds), read by a partial index of
    /// their own (migration `finished_feed`).
    ///
    /// # Errors
    /// Database failure.
    pub fn finished_page(
        &mut self,
        after: FeedCursor,
        limit: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        on!(self, |c| Feed::page(c, Part::Finished, after, limit))
    }

    /// The feed cursor just after the event at `position` (`None`: no such event).
    ///
    /// # Errors
    /// Database failure.
    pub fn feed_cursor(&mut self, position: i64) -> Result<Option<FeedCursor>, StoreError> {
        on!(self, |c| {
            let tx_id: Option<i64> = events::table
                .find(position)
                .select(events::tx_id)
                .first(c)
                .optional()?;
            Ok(tx_id.map(|tx_id| FeedCursor { tx_id, position }))
        })
    }

    /// The public events of one game up to its event `through` (a `seq`), in `seq` order:
    /// the part of the feed that is about this game (the export folds a finished game's
    /// seats and scores from it).
    ///
    /// # Errors
    /// Database failure.
    pub fn public_events_through(
        &mut self,
        game: &str,
        through: i32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        on!(self, |c| {
            Ok(events::table
                .filter(events::game_id.eq(game))
                .filter(events::seq.le(through))
                .filter(events::audience.eq("public"))
                .order(events::seq.asc())
                .select(StoredEvent::as_select())
                .load(c)?)
        })
    }

    /// The ruleset of each of `ids` that names a game, by id (in statements of at most 500
    /// ids, below SQLite's limit on bound parameters).
    ///
    /// # Errors
    /// Database failure.
    pub fn rulesets_of(&mut self, ids: &[String]) -> Result<HashMap<String, String>, StoreError> {
        let mut found = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let rows: Vec<(String, String)> = on!(self, |c| games::table
                .filter(games::id.eq_any(chunk))
                .select((games::id, games::ruleset))
                .load(c)?);
            found.extend(rows);
        }
        Ok(found)
    }

    /// How far the feed lags behind what has committed (always nothing on SQLite).
    ///
    /// # Errors
    /// Database failure.
    pub fn feed_lag(&mut self) -> Result<FeedLag, StoreError> {
        on!(self, |c| Feed::lag(c))
    }
}

/// Which of the feed's events a page holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Every public event (the analysts' feed).
    Public,
    /// Only `game_finished` events (what the ratings projection folds).
    Finished,
}

/// The feed's order and the append's compare-and-set, per backend.
trait Feed {
    fn page(
        &mut self,
        part: Part,
        after: FeedCursor,
        limit: i64,
    ) -> Result<Vec<StoredEvent>, StoreError>;
    fn lag(&mut self) -> Result<FeedLag, StoreError>;
}

#[derive(diesel::QueryableByName)]
struct Lag {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    held: i64,
    #[diesel(sql_type = diesel::sql_types::Double)]
    seconds: f64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    horizon: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    next: i64,
}

impl Feed for diesel::pg::PgConnection {
    /// One statement, so the horizon and the rows come from the same snapshot: every
    /// transaction below `feed_horizon()` has ended, and every later one gets a larger
    /// `tx_id`, so nothing can commit behind the cursor. `feed_page()` (migration
    /// `000040_feed_xid`) is a keyset range scan of the partial index
    /// `events_feed (tx_id, position)`, whatever the table's statistics say;
    /// `finished_page()` (migration `finished_feed`) the same of `events_finished`.
    fn page(
        &mut self,
        part: Part,
        after: FeedCursor,
        limit: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        use diesel::sql_types::BigInt;
        let function = match part {
            Part::Public => "feed_page",
            Part::Finished => "finished_page",
        };
        Ok(diesel::sql_query(format!(
            "SELECT position, event_id, game_id, seq, event_type, schema_version, audience, \
             data, recorded_at, tx_id FROM {function}($1, $2, $3)"
        ))
        .bind::<BigInt, _>(after.tx_id)
        .bind::<BigInt, _>(after.position)
        .bind::<BigInt, _>(limit)
        .load(self)?)
    }

    fn lag(&mut self) -> Result<FeedLag, StoreError> {
        let row: Lag = diesel::sql_query(
            "SELECT count(*) AS held, COALESCE(EXTRACT(EPOCH FROM \
             (now() AT TIME ZONE 'UTC') - min(recorded_at))::float8, 0) AS seconds, \
             feed_horizon() AS horizon, feed_horizon() \
             - pg_snapshot_xmin(pg_current_snapshot())::text::bigint \
             + pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS next \
             FROM events WHERE audience = 'public' AND tx_id >= feed_horizon()",
        )
        .get_result(self)?;
        Ok(FeedLag {
            held_events: row.held,
            seconds: row.seconds.max(0.0),
            horizon: row.horizon,
            next: row.next,
        })
    }
}

impl Feed for diesel::sqlite::SqliteConnection {
    /// Writers are serialised: AUTOINCREMENT positions are in commit order.
    fn page(
        &mut self,
        part: Part,
        after: FeedCursor,
        limit: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let mut query = events::table
            .filter(events::position.gt(after.position))
            .filter(events::audience.eq("public"))
            .into_boxed();
        if part == Part::Finished {
            query = query.filter(events::event_type.eq("game_finished"));
        }
        Ok(query
            .order(events::position.asc())
            .limit(limit)
            .select(StoredEvent::as_select())
            .load(self)?)
    }

    fn lag(&mut self) -> Result<FeedLag, StoreError> {
        Ok(FeedLag {
            held_events: 0,
            seconds: 0.0,
            horizon: i64::MAX,
            next: 0,
        })
    }
}
