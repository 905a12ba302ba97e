//! The family's part of the state of play as plain `Copy` data: [`Board`], one variant
//! per game family (what every family shares is [`crate::progress::Progress`]).
//!
//! This module owns the dispatch of events to the family's board; it must not hold any family's rules (they live in [`crate::rows`] and
//! [`crate::take_or_pass`]).
//!
//! **Adding a game family** (a ruleset that is neither a row game nor take-or-pass):
//! 1. a board type in its own module (plain `Copy` data, bit sets and small arrays) that
//!    implements `turn::Family` (crate-private): `apply` folds an event, `deal` starts a
//!    round, `play` decides the family's game moves;
//! 2. a variant here, and an arm in [`Board::new`], [`Board::apply`] and the dispatch in
//!    `game.rs` (`Game::awaiting`, `is_awaited`, `moves_for`, `next_bot`, `run_turn`);
//! 3. its events and commands in [`crate::model`], its part of the view in [`crate::view`],
//!    its bot moves in [`crate::bots`].
//!
//! A new ruleset of an existing family is data: a [`Ruleset`](crate::Ruleset) variant and
//! its [`Layout`] (deck, rows, capacities, hand size) in [`crate::options`].

use crate::model::Event;
use crate::options::Layout;
use crate::rows::RowBoard;
use crate::take_or_pass::TakeOrPassBoard;

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
        use crate::turn::Family;
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
