//! What every game family shares of the state of play, as plain `Copy` data: status,
//! round, totals ([`Progress`]). The family's own part is the [`crate::board::Board`].

use crate::model::{Event, Status};
use crate::options::{EndCondition, Layout, MAX_SEATS};

/// Where a game stands, whatever the family: status, round, totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Lobby, active, finished.
    pub status: Status,
    /// Current round, 1-based (0 before the first deal); in nimm-oder-schieb the game of
    /// the match.
    pub round: u16,
    /// Number of seats.
    pub players: u8,
    /// Totals of finished rounds (nimm-oder-schieb scores can be negative).
    pub totals: [i32; MAX_SEATS],
}

impl Progress {
    /// A game in the lobby with `players` seats.
    #[must_use]
    pub fn new(players: u8) -> Self {
        Self {
            status: Status::Lobby,
            round: 0,
            players,
            totals: [0; MAX_SEATS],
        }
    }

    /// The seats, as indexes.
    pub fn seats(&self) -> impl Iterator<Item = u8> + use<> {
        0..self.players
    }

    /// Whether the game ends after the round just scored.
    #[must_use]
    pub fn game_over(&self, layout: &Layout) -> bool {
        match layout.options.end {
            EndCondition::Points(limit) => self
                .seats()
                .any(|s| self.totals[usize::from(s)] >= i32::from(limit)),
            EndCondition::Rounds(k) => self.round >= k,
        }
    }

    /// Seats with the lowest total; among them those with the highest `tie_break`
    /// (nimm-oder-schieb: chips kept; 0 for every seat elsewhere).
    #[must_use]
    pub fn leaders(&self, tie_break: impl Fn(usize) -> u32) -> Vec<u8> {
        let key = |s: u8| {
            let i = usize::from(s);
            (self.totals[i], std::cmp::Reverse(tie_break(i)))
        };
        let best = self.seats().map(key).min();
        self.seats().filter(|s| Some(key(*s)) == best).collect()
    }

    /// Whether an event changes the progress (few do; a bit test, so the events of play
    /// skip [`Progress::apply`]).
    #[inline]
    #[must_use]
    pub fn concerns(event: &Event) -> bool {
        matches!(
            event,
            Event::GameStarted {}
                | Event::GameFinished { .. }
                | Event::DraftStarted { .. }
                | Event::RoundStarted { .. }
                | Event::NosGameStarted { .. }
                | Event::RoundEnded { .. }
                | Event::NosGameEnded(_)
        )
    }

    /// Folds the part of an event every family shares (see [`Progress::concerns`]).
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::GameStarted {} => self.status = Status::Active,
            Event::GameFinished { .. } => self.status = Status::Finished,
            Event::DraftStarted { round, .. } | Event::RoundStarted { round, .. } => {
                self.round = *round;
            }
            Event::NosGameStarted { game, .. } => self.round = *game,
            Event::RoundEnded { scores, .. } => {
                for (total, score) in self.totals.iter_mut().zip(scores) {
                    *total += i32::try_from(*score).unwrap_or(i32::MAX);
                }
            }
            Event::NosGameEnded(end) => {
                for (total, score) in self.totals.iter_mut().zip(&end.scores) {
                    *total += score;
                }
            }
            _ => {}
        }
    }
}
