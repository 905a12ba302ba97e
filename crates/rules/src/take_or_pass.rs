//! Nimm oder schieb (seed 000), the take-or-pass game: its board and its game moves.
//!
//! This module owns the draw pile, the open card, the pot, the chips and the end of a game
//! of the match. Dealing the pile lives in [`crate::deal`], the cards' values and the score
//! of a hand in [`crate::nos_cards`], what a seat may see (chips are hidden unless
//! `chips: open`; the pile and the removed cards are the server's) in [`crate::view`].

use crate::card::{Card, CardSet};
use crate::error::RuleError;
use crate::model::{Actor, Awaiting, Command, Dealer, Event, NosGameEnd};
use crate::nos_cards::card_points;
use crate::options::{Layout, MAX_SEATS};
use crate::turn::{Family, Turn};

/// Cards in a nimm-oder-schieb draw pile.
pub const NOS_PILE: usize = 24;

/// The table of nimm-oder-schieb.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TakeOrPassBoard {
    /// Number of seats.
    pub players: u8,
    /// The cards each seat has taken this game, public.
    pub taken: [CardSet; MAX_SEATS],
    /// The draw pile of this game, top first (server-side knowledge).
    pub pile: [Option<Card>; NOS_PILE],
    /// Cards of the pile turned up so far.
    pub drawn: u8,
    /// The open card.
    pub open: Option<Card>,
    /// Chips on the open card.
    pub pot: u8,
    /// Chips per seat.
    pub chips: [u8; MAX_SEATS],
    /// The seat that must take or pass.
    pub to_act: u8,
    /// The cards removed unseen from this game.
    pub removed: CardSet,
    /// Chips left at the end of each game, summed (the tie-break).
    pub chips_kept: [u32; MAX_SEATS],
}

impl TakeOrPassBoard {
    /// An empty table for `players` seats.
    #[must_use]
    pub fn new(players: u8) -> Self {
        Self {
            players,
            taken: [CardSet::empty(); MAX_SEATS],
            pile: [None; NOS_PILE],
            drawn: 0,
            open: None,
            pot: 0,
            chips: [0; MAX_SEATS],
            to_act: 0,
            removed: CardSet::empty(),
            chips_kept: [0; MAX_SEATS],
        }
    }

    /// The seats, as indexes.
    pub fn seats(&self) -> impl Iterator<Item = u8> + use<> {
        0..self.players
    }

    /// Folds the events that start and end a game of the match (see `Family::apply`).
    #[inline(never)]
    fn apply_rare(&mut self, event: &Event) {
        match event {
            Event::NosGameStarted {
                first_seat, chips, ..
            } => {
                self.taken = [CardSet::empty(); MAX_SEATS];
                self.chips = [0; MAX_SEATS];
                for c in &mut self.chips[..usize::from(self.players).min(MAX_SEATS)] {
                    *c = *chips;
                }
                self.pot = 0;
                self.to_act = *first_seat;
                self.open = None;
                self.drawn = 0;
                self.pile = [None; NOS_PILE];
                self.removed = CardSet::empty();
            }
            Event::DrawPileSet { pile, removed } => {
                for (slot, card) in self.pile.iter_mut().zip(pile) {
                    *slot = Some(*card);
                }
                self.removed = removed.iter().copied().collect();
            }
            Event::NosGameEnded(end) => {
                for (kept, c) in self.chips_kept.iter_mut().zip(&end.chips) {
                    *kept += u32::from(*c);
                }
            }
            _ => {}
        }
    }

    /// The score of each seat for the game just played.
    #[must_use]
    pub fn scores(&self) -> Vec<i32> {
        self.seats()
            .map(usize::from)
            .map(|s| card_points(self.taken[s]) - i32::from(self.chips[s]))
            .collect()
    }

    /// Who must act now in an active game: the seat to act, asked for both moves.
    #[must_use]
    pub fn awaiting(&self) -> Vec<Awaiting> {
        // Both, even for a seat without chips: `awaiting` is public, and chip counts may
        // be hidden. The seat's own `legal` says what it can do.
        let seat = self.to_act;
        vec![
            Awaiting {
                seat,
                action: "pass",
            },
            Awaiting {
                seat,
                action: "take",
            },
        ]
    }

    /// The game moves `seat` may make now in an active game.
    #[must_use]
    pub fn moves_for(&self, seat: u8) -> Vec<Command> {
        if self.to_act != seat {
            return Vec::new();
        }
        let mut moves = Vec::with_capacity(2);
        if self.chips.get(usize::from(seat)).is_some_and(|c| *c > 0) {
            moves.push(Command::Pass {});
        }
        moves.push(Command::Take {});
        moves
    }

    // The folds of the events of a turn, each for `Family::apply` and for the
    // `Turn::emit_made` that emits its event.

    /// Folds `card_revealed`.
    #[inline(always)]
    fn fold_revealed(&mut self, card: Card) {
        self.open = Some(card);
        self.drawn += 1;
    }

    /// Folds `passed`.
    #[inline(always)]
    fn fold_passed(&mut self, seat: u8) {
        if let Some(c) = self.chips.get_mut(usize::from(seat)) {
            *c = c.saturating_sub(1);
        }
        self.pot += 1;
        // The next seat round the table, without a division (a `div` of a variable takes
        // tens of cycles, and a pass is most of this game's moves).
        let next = seat.wrapping_add(1);
        self.to_act = if next < self.players {
            next
        } else {
            next % self.players.max(1)
        };
    }

    /// Folds `card_taken`.
    #[inline(always)]
    fn fold_taken(&mut self, seat: u8, card: Card, chips: u8) {
        let s = usize::from(seat);
        if s < MAX_SEATS {
            self.taken[s].insert(card);
            self.chips[s] += chips;
        }
        self.pot = 0;
        self.open = None;
        self.to_act = seat;
    }
}

impl Family for TakeOrPassBoard {
    // Inlined, as `RowBoard`'s: at each `Turn::emit` the match folds to the event's arm;
    // the events that come once a game are folded out of line in `apply_rare`.
    #[inline(always)]
    fn apply(&mut self, _layout: &Layout, event: &Event) {
        match event {
            Event::CardRevealed { card } => self.fold_revealed(*card),
            Event::Passed { seat } => self.fold_passed(*seat),
            Event::CardTaken { seat, card, chips } => self.fold_taken(*seat, *card, *chips),
            Event::NosGameStarted { .. } | Event::DrawPileSet { .. } | Event::NosGameEnded(_) => {
                self.apply_rare(event);
            }
            // Shared progress, seats and the other family: not this board's business.
            Event::GameCreated { .. }
            | Event::MoveDeadlineSet { .. }
            | Event::DeadlinesSet { .. }
            | Event::TimeControlSet { .. }
            | Event::ClocksSet(_)
            | Event::ClockRanOut { .. }
            | Event::SeatHandedToBot { .. }
            | Event::VacationSpent { .. }
            | Event::PauseProposed { .. }
            | Event::PauseAccepted { .. }
            | Event::PauseDeclined { .. }
            | Event::ClocksPaused {}
            | Event::ClocksResumed { .. }
            | Event::SeedRecorded { .. }
            | Event::DealPrepared { .. }
            | Event::SeatTaken { .. }
            | Event::SeatLeft { .. }
            | Event::BotAdded { .. }
            | Event::SeatRemoved { .. }
            | Event::SeatResigned { .. }
            | Event::VisibilitySet { .. }
            | Event::ReservationsReleased {}
            | Event::RematchCreated { .. }
            | Event::SeedRevealed {}
            | Event::GameStarted {}
            | Event::GameFinished { .. }
            | Event::RoundStarted { .. }
            | Event::HandDealt { .. }
            | Event::CardSelected { .. }
            | Event::SelectionMade { .. }
            | Event::CardsRevealed { .. }
            | Event::CardPlaced { .. }
            | Event::DraftStarted { .. }
            | Event::CardDrafted { .. }
            | Event::CardKept { .. }
            | Event::RoundEnded { .. } => {}
        }
    }

    fn deal(turn: &mut Turn<'_, '_, Self>, dealer: &mut dyn Dealer) {
        turn.deal_pile(dealer);
    }

    fn play(
        turn: &mut Turn<'_, '_, Self>,
        seat: Option<u8>,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        match command {
            Command::Pass {} => turn.pass(seat, actor),
            Command::Take {} => turn.take(seat, actor, dealer),
            _ => Err(RuleError::UnknownCommand {
                command: command.name(),
            }),
        }
    }

    fn tie_break(&self, seat: usize) -> u32 {
        self.chips_kept.get(seat).copied().unwrap_or(0)
    }
}

impl Turn<'_, '_, TakeOrPassBoard> {
    fn pass(&mut self, seat: Option<u8>, actor: Actor<'_>) -> Result<(), RuleError> {
        let seat = self.require_acting_seat(seat, actor)?;
        if self.board.to_act != seat || self.board.open.is_none() {
            return Err(RuleError::NotYourTurn { action: "pass" });
        }
        if self.board.chips[usize::from(seat)] == 0 {
            return Err(RuleError::NoChips);
        }
        self.emit_made(|| Event::Passed { seat }, |b| b.fold_passed(seat));
        Ok(())
    }

    fn take(
        &mut self,
        seat: Option<u8>,
        actor: Actor<'_>,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        let seat = self.require_acting_seat(seat, actor)?;
        let Some(card) = self.board.open.filter(|_| self.board.to_act == seat) else {
            return Err(RuleError::NotYourTurn { action: "take" });
        };
        let chips = self.board.pot;
        self.emit_made(
            || Event::CardTaken { seat, card, chips },
            |b| b.fold_taken(seat, card, chips),
        );
        self.next_card(dealer);
        Ok(())
    }

    /// Turns up the next card, or ends the game after the last.
    pub(crate) fn next_card(&mut self, dealer: &mut dyn Dealer) {
        let t = &*self.board;
        if let Some(card) = t.pile.get(usize::from(t.drawn)).copied().flatten() {
            self.emit_made(|| Event::CardRevealed { card }, |b| b.fold_revealed(card));
            return;
        }
        let scores = t.scores();
        let chips = t.seats().map(|s| t.chips[usize::from(s)]).collect();
        let removed = t.removed.to_vec();
        self.emit(Event::NosGameEnded(Box::new(NosGameEnd {
            game: self.progress.round,
            scores,
            chips,
            removed,
        })));
        self.end_round(dealer);
    }
}
