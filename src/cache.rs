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
//!
//! The store is moka's concurrent cache (TinyLFU admission, LRU eviction), bounded by an
//! estimate of the bytes the states hold ([`weight`]), so a working set larger than the
//! budget evicts the games played least, one at a time, instead of all at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use moka::ops::compute::Op;
use rules::Game;

/// The default budget, in bytes (`STATE_CACHE_MB`, 256): about 115,000 states of a
/// 4-seat row game (see [`weight`]).
pub const DEFAULT_BYTES: u64 = 256 * 1024 * 1024;

/// A cached state and the version it was rebuilt at.
struct Entry {
    version: i32,
    game: Game,
}

/// Counters of the cache since the process started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Loads that found a state.
    pub hits: u64,
    /// Loads that found none (a full replay).
    pub misses: u64,
    /// States kept now.
    pub entries: u64,
    /// Their estimated size in bytes.
    pub bytes: u64,
    /// The budget in bytes.
    pub capacity_bytes: u64,
}

#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
}

/// Rebuilt games by id, with the version they were rebuilt at.
#[derive(Clone)]
pub struct StateCache {
    games: Option<moka::sync::Cache<Arc<str>, Arc<Entry>>>,
    capacity: u64,
    counters: Arc<Counters>,
}

impl Default for StateCache {
    fn default() -> Self {
        Self::new()
    }
}

/// The estimated bytes a cached state holds: the state itself (its boards are fixed-size
/// arrays, inline) and what its vectors and strings hold on the heap, plus the key and the
/// cache's own bookkeeping. An estimate, not a measurement: allocator slack is not
/// counted. Exact to what the budget needs (a state's size varies with seats and rounds,
/// not with the events folded into it).
#[must_use]
pub fn weight(id: &str, game: &Game) -> u32 {
    use std::mem::size_of;
    /// moka's entry, the two `Arc`s and the hash table's slot, roughly.
    const OVERHEAD: usize = 160;
    let text = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let seats = game.seats.len() * (size_of::<rules::model::Seat>() + 48);
    let scores: usize = game
        .scores
        .iter()
        .map(|round| size_of::<Vec<i32>>() + round.len() * size_of::<i32>())
        .sum();
    let bytes = OVERHEAD
        + id.len()
        + size_of::<Entry>()
        + seats
        + scores
        + game.commitment.len()
        + text(&game.name)
        + text(&game.rematch_of)
        + text(&game.rematch)
        + game.winners.len()
        + game.deadlines.len() * size_of::<rules::model::SeatDeadline>()
        // The prepared deal, the seed, the clocks, the tournament link: small and bounded.
        + 256;
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

impl StateCache {
    /// An enabled cache with the default budget.
    #[must_use]
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_BYTES)
    }

    /// An enabled cache that keeps states up to an estimated `bytes` in all.
    #[must_use]
    pub fn with_capacity(bytes: u64) -> Self {
        let games = moka::sync::Cache::builder()
            .max_capacity(bytes)
            .weigher(|id: &Arc<str>, entry: &Arc<Entry>| weight(id, &entry.game))
            .build();
        Self {
            games: Some(games),
            capacity: bytes,
            counters: Arc::default(),
        }
    }

    /// A cache that keeps nothing (every load replays the whole stream).
    #[must_use]
    pub fn disabled() -> Self {
        Self {
            games: None,
            capacity: 0,
            counters: Arc::default(),
        }
    }

    /// The cached state of a game.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<(i32, Game)> {
        self.games.as_ref()?;
        let found = self.peek(id);
        let counter = if found.is_some() {
            &self.counters.hits
        } else {
            &self.counters.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// The cached state of a game without counting a load: for a look ahead whose load is
    /// counted when it is used ([`StateCache::count_hits`]) or by the [`StateCache::get`]
    /// that follows it.
    #[must_use]
    pub fn peek(&self, id: &str) -> Option<(i32, Game)> {
        let games = self.games.as_ref()?;
        games.get(id).map(|e| (e.version, e.game.clone()))
    }

    /// Counts `n` loads that started from states found by [`StateCache::peek`].
    pub fn count_hits(&self, n: u64) {
        self.counters.hits.fetch_add(n, Ordering::Relaxed);
    }

    /// Whether `put` would keep a state of this version (so the caller can skip a clone).
    #[must_use]
    pub fn would_keep(&self, id: &str, version: i32) -> bool {
        let Some(games) = &self.games else {
            return false;
        };
        games.get(id).is_none_or(|e| e.version < version)
    }

    /// Remembers a committed state (an older one than cached is ignored, also when two
    /// threads put at once).
    pub fn put(&self, id: &str, version: i32, game: Game) {
        let Some(games) = &self.games else { return };
        let entry = Arc::new(Entry { version, game });
        games
            .entry(Arc::from(id))
            .and_compute_with(|current| match current {
                Some(cached) if cached.value().version >= version => Op::Nop,
                _ => Op::Put(entry),
            });
    }

    /// The counters, after the cache has done its pending evictions.
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        let (entries, bytes) = self.games.as_ref().map_or((0, 0), |games| {
            games.run_pending_tasks();
            (games.entry_count(), games.weighted_size())
        });
        CacheStats {
            hits: self.counters.hits.load(Ordering::Relaxed),
            misses: self.counters.misses.load(Ordering::Relaxed),
            entries,
            bytes,
            capacity_bytes: self.capacity,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]
    use super::*;

    fn game() -> Game {
        use rules::options::{Ruleset, Setup};
        let setup = Setup::from_input(Ruleset::SixNimmt, 4, None, None).expect("a setup");
        let events = Game::create(rules::game::NewGame {
            setup,
            name: None,
            host_account: "host",
            host_name: "host",
            deal: None,
            seed: "00".repeat(32),
            commitment: "11".repeat(32),
        })
        .expect("a game");
        Game::from_events(&events).expect("a state")
    }

    #[test]
    fn a_newer_state_replaces_an_older_one_and_never_the_reverse() {
        let cache = StateCache::new();
        let g = game();
        cache.put("a", 3, g.clone());
        cache.put("a", 2, g.clone());
        assert_eq!(cache.get("a").map(|(v, _)| v), Some(3));
        assert!(!cache.would_keep("a", 3));
        assert!(cache.would_keep("a", 4));
        cache.put("a", 5, g);
        assert_eq!(cache.get("a").map(|(v, _)| v), Some(5));
        assert_eq!(cache.get("b").map(|(v, _)| v), None);
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.misses), (2, 1));
    }

    #[test]
    fn the_budget_bounds_the_bytes_and_evicts_some_not_all() {
        let g = game();
        let one = u64::from(weight("game-00000", &g));
        let cache = StateCache::with_capacity(one * 100);
        for i in 0..1_000 {
            cache.put(&format!("game-{i:05}"), 1, g.clone());
        }
        let stats = cache.stats();
        assert!(stats.bytes <= stats.capacity_bytes, "{stats:?}");
        assert!(
            stats.entries > 50,
            "eviction kept only {} of a budget of 100",
            stats.entries
        );
    }

    #[test]
    fn a_four_seat_row_game_weighs_a_few_kilobytes() {
        let w = weight("0190a5d2-0000-7000-8000-000000000000", &game());
        println!("a 4-seat 6 nimmt! state weighs {w} bytes");
        assert!((500..8_000).contains(&w), "{w}");
    }

    #[test]
    fn a_disabled_cache_keeps_nothing() {
        let cache = StateCache::disabled();
        cache.put("a", 1, game());
        assert!(cache.get("a").is_none());
        assert!(!cache.would_keep("a", 1));
    }
}
