//! The event log for analysts: the global feed of public events in commit order, and the
//! complete log of a finished game. Analysts are accounts with the role `analyst`
//! (`stammtisch grant-role NAME analyst`). Payloads come out in the current schema
//! ([`ReadEvent`], through the rules' upcasters). Knows no HTTP.

pub use crate::service::ReadEvent;
use crate::store::{Store, StoreError};

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

    /// Public events of every game after `after`, in global position order.
    ///
    /// # Errors
    /// Storage failure.
    pub fn feed(&self, after: i64, limit: i64) -> Result<Vec<ReadEvent>, AnalyticsError> {
        let rows = self.store.read(|tx| tx.feed_page(after, limit))?;
        Ok(rows.into_iter().map(ReadEvent::from).collect())
    }

    /// The complete log of a finished game, server-only events included.
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
        Ok(rows.into_iter().map(ReadEvent::from).collect())
    }
}
