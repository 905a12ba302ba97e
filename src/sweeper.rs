//! The deadline sweeper: one pass over what the clock made due — moves for seats whose
//! deadline or clock ran out, rematch reservations to release, tournaments to advance.
//!
//! Every replica runs it every 250 ms on a thread of its own (`main.rs`). With a test clock,
//! `POST /test/clock` runs one pass as well before it answers, so an HTTP test that moves
//! the clock sees what came due at once instead of polling for it. The passes of one
//! process take turns (a lock), so a pass that answers a test also waits for one the
//! thread may have begun: when it returns, everything due at its clock has been acted on.
//! Passes of different replicas may overlap; the store's compare-and-set makes each
//! deadline fire once.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::games::Service;
use crate::telemetry::Chain;
use crate::tournaments::Tournaments;

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Swept {
    /// Moves made for seats whose deadline or clock had run out.
    pub deadline_moves: usize,
    /// Games whose rematch reservations were released.
    pub reservations_released: usize,
    /// Steps the tournaments took (started, seated, recorded, ended a round).
    pub tournament_steps: usize,
}

/// One pass over what came due; clones share the lock that makes passes take turns.
#[derive(Clone)]
pub struct Sweeper {
    service: Service,
    tournaments: Tournaments,
    turn: Arc<Mutex<()>>,
}

impl Sweeper {
    /// A sweeper over these games and tournaments.
    #[must_use]
    pub fn new(service: Service, tournaments: Tournaments) -> Self {
        Self {
            service,
            tournaments,
            turn: Arc::new(Mutex::new(())),
        }
    }

    /// One pass, after any pass of this process that is running: at most 50 games with an
    /// expired deadline and 50 with due reservations, and the due tournaments, at the
    /// clock's time when the pass begins. A failure is logged and the pass goes on with the
    /// next game (the next pass tries again).
    pub fn pass(&self) -> Swept {
        let _turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
        let mut swept = Swept::default();
        let service = &self.service;
        let now = service.clock().naive();
        match service.store().read(|tx| tx.expired_games(now, 50)) {
            Ok(games) => {
                for game in games {
                    match service.expire(&game) {
                        Ok(moved) => swept.deadline_moves += moved,
                        Err(e) => {
                            tracing::warn!(game, error = %Chain(&e), "could not move for an expired deadline");
                        }
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %Chain(&e), "could not look for expired deadlines");
            }
        }
        match service.due_reservations(now) {
            Ok(games) => {
                for game in games {
                    match service.release_reservations(&game) {
                        Ok(()) => swept.reservations_released += 1,
                        Err(e) => {
                            tracing::warn!(game, error = %Chain(&e), "could not release a rematch's seats");
                        }
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %Chain(&e), "could not look for rematch reservations");
            }
        }
        // Tournaments: start, seat the next round, record finished tables, end rounds
        // whose deadline passed (`Tournament::due`).
        match self.tournaments.advance_due() {
            Ok(steps) => swept.tournament_steps = steps,
            Err(e) => {
                tracing::warn!(error = %Chain(&e), "could not advance the tournaments");
            }
        }
        swept
    }
}
