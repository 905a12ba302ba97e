//! A disposable cache of rebuilt games, so loading a game costs the events appended since
//! the cached state rather than the whole stream.
//!
//! Only committed states go in (after a command's transaction committed, or as read). A
//! load takes the cached state and folds the events after its version from the table, which
//! stays the truth: a stale entry (another replica moved the game on) costs a few more
//! events, never a wrong state. The cache is per process and bounded; losing it (restart,
//! eviction) only costs one full load. It is the equivalent of snapshots without their
//! storage: keyed by game and version, and by this build's rules (it never outlives the
//! process).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rules::Game;

/// Most games kept; beyond it the cache is cleared (a cheap, crude eviction).
const CAPACITY: usize = 10_000;

/// Game id → (version, state at that version).
type Games = HashMap<String, (i32, Game)>;

/// Rebuilt games by id, with the version they were rebuilt at.
#[derive(Clone, Default)]
pub struct StateCache {
    games: Option<Arc<Mutex<Games>>>,
}

impl StateCache {
    /// An enabled cache.
    #[must_use]
    pub fn new() -> Self {
        Self {
            games: Some(Arc::default()),
        }
    }

    /// A cache that keeps nothing (every load replays the whole stream).
    #[must_use]
    pub fn disabled() -> Self {
        Self { games: None }
    }

    /// The cached state of a game.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<(i32, Game)> {
        let games = self.games.as_ref()?;
        games
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Whether `put` would keep a state of this version (so the caller can skip a clone).
    #[must_use]
    pub fn would_keep(&self, id: &str, version: i32) -> bool {
        let Some(games) = &self.games else {
            return false;
        };
        games
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .is_none_or(|(v, _)| *v < version)
    }

    /// Remembers a committed state (an older one than cached is ignored).
    pub fn put(&self, id: &str, version: i32, game: Game) {
        let Some(games) = &self.games else { return };
        let mut games = games.lock().unwrap_or_else(PoisonError::into_inner);
        if games.get(id).is_some_and(|(v, _)| *v >= version) {
            return;
        }
        if games.len() >= CAPACITY {
            games.clear();
        }
        games.insert(id.to_owned(), (version, game));
    }
}
