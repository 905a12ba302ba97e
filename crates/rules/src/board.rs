//! The state of play as plain `Copy` data: [`Progress`] (what every game family shares:
//! status, round, totals) and [`Board`] (one variant per game family).
//!
//! This module owns the split between the two and the dispatch of events to the family's
//! board; it must not hold any family's rules (they live in [`crate::rows`] and
//! [`crate::take_or_pass`]).
//!
//! **Adding a game family** (a ruleset that is neither a row game nor take-or-pass):
//! 1. a board type in its own module (plain `Copy` data, bit sets and small arrays) that
//!    implements `game::Family` (crate-private): `apply` folds an event, `deal` starts a
//!    round, `play` decides the family's game moves;
//! 2. a variant here, and an arm in [`Board::new`], [`Board::apply`] and the dispatch in
//!    `game.rs` (`Game::awaiting`, `is_awaited`, `moves_for`, `next_bot`, `run_turn`);
//! 3. its events and commands in [`crate::model`], its part of the view in [`crate::view`],
//!    its bot moves in [`crate::bots`].
//!
//! A new ruleset of an existing family is data: a [`Ruleset`](crate::Ruleset) variant and
//! its [`Layout`] (deck, rows, capacities, hand size) in [`crate::options`].

use crate::model::{Event, Status};
use crate::options::{EndCondition, Layout, MAX_SEATS};
use crate::rows::RowBoard;
use crate::take_or_pass::TakeOrPassBoard;

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

/// The table of one game family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "plain `Copy` data that `decide` copies; a box would allocate on every decision"
)]
pub enum Board {
    /// 6 nimmt!, 11 nimmt!, X nimmt!: rows, hands, selections.
    Rows(RowBoard),
    /// Nimm oder schieb: draw pile, open card, pot, chips.
    TakeOrPass(TakeOrPassBoard),
}

impl Board {
    /// The empty board of a game with this layout.
    #[must_use]
    pub fn new(layout: &Layout, players: u8) -> Self {
        if layout.take_or_pass() {
            Self::TakeOrPass(TakeOrPassBoard::new(players))
        } else {
            Self::Rows(RowBoard::new(players))
        }
    }

    /// Folds an event into the board (events of another family are ignored).
    pub fn apply(&mut self, layout: &Layout, event: &Event) {
        use crate::game::Family;
        match self {
            Self::Rows(b) => b.apply(layout, event),
            Self::TakeOrPass(b) => b.apply(layout, event),
        }
    }

    /// The row game's board.
    #[must_use]
    pub fn rows(&self) -> Option<&RowBoard> {
        match self {
            Self::Rows(b) => Some(b),
            Self::TakeOrPass(_) => None,
        }
    }

    /// The take-or-pass game's board.
    #[must_use]
    pub fn take_or_pass(&self) -> Option<&TakeOrPassBoard> {
        match self {
            Self::TakeOrPass(b) => Some(b),
            Self::Rows(_) => None,
        }
    }

    /// The row game's board, to change (simulations and tests build positions with it).
    pub fn rows_mut(&mut self) -> Option<&mut RowBoard> {
        match self {
            Self::Rows(b) => Some(b),
            Self::TakeOrPass(_) => None,
        }
    }

    /// The take-or-pass game's board, to change.
    pub fn take_or_pass_mut(&mut self) -> Option<&mut TakeOrPassBoard> {
        match self {
            Self::TakeOrPass(b) => Some(b),
            Self::Rows(_) => None,
        }
    }
}
