//! The event log for analysts: the global feed of public events in commit order, and the
//! complete log of a finished game. Analysts are accounts with the role `analyst`
//! (`stammtisch grant-role NAME analyst`). Payloads come out in the current schema
//! ([`ReadEvent`], through the rules' upcasters). Knows no HTTP.
//!
//! A game's name is its host's free text: analysts see it only for games that are public
//! at the time of the read; for every other game the name in `game_created` is `null`
//! (`hide_private_names`; the SQL views on PostgreSQL follow the same rule).

pub use crate::games::ReadEvent;
pub use crate::store::{FeedCursor, FeedLag};
use crate::store::{Store, StoreError, StoredEvent, Tx};

/// The event type that carries a game's name.
const NAMED: &str = "game_created";

/// Reads `rows` for analysts: upcast, with the names of games that are not public now
/// blanked (one look-up per game created in the page).
fn hide_private_names(
    tx: &mut Tx<'_>,
    rows: Vec<StoredEvent>,
) -> Result<Vec<ReadEvent>, StoreError> {
    let mut public = std::collections::HashMap::<String, bool>::new();
    for row in rows.iter().filter(|r| r.event_type == NAMED) {
        if !public.contains_key(&row.game_id) {
            let is_public = tx.game(&row.game_id)?.is_some_and(|g| g.public);
            public.insert(row.game_id.clone(), is_public);
        }
    }
    Ok(rows
        .into_iter()
        .map(ReadEvent::from)
        .map(|mut e| {
            // Only `game_created` rows carry a name, and each of their games was looked
            // up above; anything else is treated as private.
            if !public.get(&e.game_id).copied().unwrap_or(false) {
                hide_name(&mut e);
            }
            e
        })
        .collect())
}

/// Blanks the game's name in a `game_created` event.
fn hide_name(event: &mut ReadEvent) {
    if event.event_type == NAMED
        && let Some(name) = event.data.get_mut("name")
    {
        *name = serde_json::Value::Null;
    }
}

/// Why an analytics read was refused.
#[derive(Debug, thiserror::Error)]
pub enum AnalyticsError {
    /// The caller lacks the `analyst` role.
    #[error("this needs the analyst role")]
    NotAnalyst,
    /// No such game.
    #[error("game not found")]
    GameNotFound,
    /// The game is still running: its hidden information is not history yet.
    #[error("the game is not finished")]
    NotFinished,
    /// `after` names no event (positions come from the feed's items).
    #[error("no event has position {0}")]
    UnknownPosition(i64),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The analytics service.
#[derive(Clone)]
pub struct Analytics {
    store: Store,
}

impl Analytics {
    /// The service over a store.
    #[must_use]
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Refuses unless `account` has the analyst role.
    ///
    /// # Errors
    /// Not an analyst, storage failure.
    pub fn require_analyst(&self, account: &str) -> Result<(), AnalyticsError> {
        let row = self.store.read(|tx| tx.account_by_id(account))?;
        let analyst = row.is_some_and(|a| a.roles.split(',').any(|r| r == "analyst"));
        if analyst {
            Ok(())
        } else {
            Err(AnalyticsError::NotAnalyst)
        }
    }

    /// Public events of every game after the event at position `after` (0: from the
    /// start), in feed order (commit order; see [`crate::store::Tx::feed_page`]). The
    /// cursor to go on from is the last event's ([`FeedCursor::from`]).
    ///
    /// # Errors
    /// No event at `after`, storage failure.
    pub fn feed(&self, after: i64, limit: i64) -> Result<Vec<ReadEvent>, AnalyticsError> {
        self.store.read_replica(None, |tx| {
            let cursor = if after == 0 {
                FeedCursor::START
            } else {
                tx.feed_cursor(after)?
                    .ok_or(AnalyticsError::UnknownPosition(after))?
            };
            let rows = tx.feed_page(cursor, limit)?;
            Ok(hide_private_names(tx, rows)?)
        })
    }

    /// Public events after `cursor`, in feed order (the export's next pages).
    ///
    /// # Errors
    /// Storage failure.
    pub fn feed_from(
        &self,
        cursor: FeedCursor,
        limit: i64,
    ) -> Result<Vec<ReadEvent>, AnalyticsError> {
        Ok(self.store.read_replica(None, |tx| {
            let rows = tx.feed_page(cursor, limit)?;
            hide_private_names(tx, rows)
        })?)
    }

    /// The public events of `game` up to its event `through` (a `seq`), in `seq` order and
    /// the current schema: what the feed holds of the game (its name hidden as there).
    ///
    /// # Errors
    /// Storage failure.
    pub fn public_log(&self, game: &str, through: i32) -> Result<Vec<ReadEvent>, AnalyticsError> {
        Ok(self.store.read(|tx| {
            let rows = tx.public_events_through(game, through)?;
            hide_private_names(tx, rows)
        })?)
    }

    /// The ruleset of each of `games`, by id (ids that name no game are left out).
    ///
    /// # Errors
    /// Storage failure.
    pub fn rulesets(
        &self,
        games: &[String],
    ) -> Result<std::collections::HashMap<String, String>, AnalyticsError> {
        Ok(self.store.read(|tx| tx.rulesets_of(games))?)
    }

    /// How far the feed lags behind what has committed (for `/metrics`).
    ///
    /// # Errors
    /// Storage failure.
    pub fn feed_lag(&self) -> Result<FeedLag, AnalyticsError> {
        Ok(self.store.read(|tx| tx.feed_lag())?)
    }

    /// The complete log of a finished game, server-only events included (and the game's
    /// name only when the game is public).
    ///
    /// # Errors
    /// Unknown game, a game still running, storage failure.
    pub fn archive(&self, game: &str) -> Result<Vec<ReadEvent>, AnalyticsError> {
        let row = self
            .store
            .read(|tx| tx.game(game))?
            .ok_or(AnalyticsError::GameNotFound)?;
        if row.status != "finished" {
            return Err(AnalyticsError::NotFinished);
        }
        let rows = self.store.read(|tx| tx.load_events(game))?;
        let mut events: Vec<ReadEvent> = rows.into_iter().map(ReadEvent::from).collect();
        // A tournament table's log holds its seed, which other tables of a duplicate round
        // deal from: it is complete for analysts once its round ended (`seed_revealed`).
        let table = events
            .iter()
            .any(|e| e.event_type == NAMED && e.data.get("tournament").is_some());
        if table && !events.iter().any(|e| e.event_type == "seed_revealed") {
            return Err(AnalyticsError::NotFinished);
        }
        if !row.public {
            events.iter_mut().for_each(hide_name);
        }
        Ok(events)
    }
}
