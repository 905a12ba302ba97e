//! A decision in progress: the [`Turn`] a command runs in (the game's context, the
//! progress and the family's board it changes, the events it emits) and the [`Family`]
//! trait each game family's board implements. Shared vocabulary below the families: the
//! rows and take-or-pass modules, dealing and the lobby build on it; `game.rs` dispatches
//! to it.

use crate::error::RuleError;
use crate::model::{Actor, Command, Deal, Dealer, Event, Seat, Status};
use crate::options::Layout;
use crate::progress::Progress;

/// What a decision reads of the game besides the progress and the board.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'g> {
    pub(crate) seats: &'g [Seat],
    pub(crate) host_seat: u8,
    pub(crate) layout: &'g Layout,
    pub(crate) players: u8,
    pub(crate) prepared: Option<&'g Deal>,
    pub(crate) seed: Option<&'g str>,
    pub(crate) auto_start: bool,
}

impl Ctx<'_> {
    fn seat_of(&self, account: &str) -> Option<u8> {
        self.seats
            .iter()
            .position(|s| s.account() == Some(account))
            .and_then(|i| u8::try_from(i).ok())
    }
}

/// A game family's board: how events change it, how a round is dealt, how its game moves
/// are decided. Implemented by [`RowBoard`](crate::RowBoard) and
/// [`TakeOrPassBoard`](crate::TakeOrPassBoard); see [`crate::board`] for adding one.
pub(crate) trait Family: Copy + PartialEq {
    /// Folds an event into the board; cannot fail; ignores events of other families.
    fn apply(&mut self, layout: &Layout, event: &Event);

    /// Starts the next round (or game of a match): emits the events of the deal.
    fn deal(turn: &mut Turn<'_, '_, Self>, dealer: &mut dyn Dealer);

    /// Decides a game move of this family (every command but the lobby's and `resign`);
    /// a command of another family is [`RuleError::UnknownCommand`]. Checks everything
    /// before the first event.
    fn play(
        turn: &mut Turn<'_, '_, Self>,
        seat: Option<u8>,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError>;

    /// Among seats with the same lowest total, the winners are those with the highest
    /// tie-break (0 for everyone unless the family says otherwise).
    fn tie_break(&self, _seat: usize) -> u32 {
        0
    }
}

/// A decision in progress: the progress and board it changes (the game's own in
/// [`Game::execute`], copies in [`Game::decide`]) and the buffer it emits events into.
pub(crate) struct Turn<'g, 't, B> {
    pub(crate) ctx: Ctx<'g>,
    pub(crate) progress: &'t mut Progress,
    pub(crate) board: &'t mut B,
    pub(crate) events: &'t mut Vec<Event>,
    /// Whether an event emitted so far changes more than the progress and the board
    /// ([`Event::touches_meta`]), so that `Game::execute` must fold the events into the
    /// rest of the game too (most turns emit none; the check folds away in `emit`).
    pub(crate) meta: bool,
}

impl<B: Family> Turn<'_, '_, B> {
    /// Applies an event to the progress and the board and records it. (Always inlined: the
    /// event's variant is then known, and the checks and the board's match fold away.)
    #[inline(always)]
    pub(crate) fn emit(&mut self, event: Event) {
        if Progress::concerns(&event) {
            self.progress.apply(&event);
        }
        self.board.apply(self.ctx.layout, &event);
        self.meta |= event.touches_meta();
        self.events.push(event);
    }

    /// [`Turn::emit`] for an event that touches neither the progress nor the rest of the
    /// game, whose fold into the board the caller holds in a cheaper form: `fold` changes
    /// the board as `Family::apply` would (from values the caller has at hand, such as a
    /// dealt hand as the set the deal made, rather than from the event's lists), and
    /// `make` builds the event in the buffer's new slot, not on the stack first. (Copied
    /// off the stack at once, an event just written field by field makes the copy's wide
    /// loads wait until the narrow stores are done: the processor cannot forward several
    /// stores into one load. `Vec::extend` makes room before it calls `make`, so the
    /// fields go straight to the slot.) Debug builds check the event and that `fold` left
    /// the board as `Family::apply` would.
    #[inline(always)]
    pub(crate) fn emit_made(&mut self, make: impl FnOnce() -> Event, fold: impl FnOnce(&mut B)) {
        let before = cfg!(debug_assertions).then_some(*self.board);
        fold(self.board);
        self.events.extend(std::iter::once_with(make));
        if let (Some(mut board), Some(event)) = (before, self.events.last()) {
            debug_assert!(!Progress::concerns(event) && !event.touches_meta());
            board.apply(self.ctx.layout, event);
            debug_assert!(board == *self.board);
        }
    }

    /// [`Turn::run`], then whether an emitted event touches more than the progress and the
    /// board (see `meta`).
    #[inline(always)]
    pub(crate) fn run_meta(
        mut self,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<bool, RuleError> {
        self.run(actor, command, dealer)?;
        Ok(self.meta)
    }

    pub(crate) fn run(
        &mut self,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        let g = self.ctx;
        let seats = command.is_lobby_or_resign();
        let seat = match actor {
            Actor::Account { id, .. } => g.seat_of(id),
            Actor::Deadline { seat } => {
                // The server moves for a seat whose deadline passed: game moves only.
                if seats || usize::from(seat) >= g.seats.len() {
                    return Err(RuleError::NotAPlayer);
                }
                Some(seat)
            }
            Actor::Bot { seat } => {
                // The server acts for bot-controlled seats with game moves only.
                let is_bot = g
                    .seats
                    .get(usize::from(seat))
                    .is_some_and(Seat::bot_controlled);
                if !is_bot || seats {
                    return Err(RuleError::NotAPlayer);
                }
                Some(seat)
            }
        };
        if seats {
            self.seat_command(seat, actor, command, dealer)
        } else {
            B::play(self, seat, actor, command, dealer)
        }
    }

    /// A seated, active, non-resigned seat (or a bot acting for its seat).
    pub(crate) fn require_acting_seat(
        &self,
        seat: Option<u8>,
        actor: Actor<'_>,
    ) -> Result<u8, RuleError> {
        let seat = seat.ok_or(RuleError::NotAPlayer)?;
        if self.progress.status != Status::Active {
            return Err(RuleError::GameNotActive);
        }
        let s = self
            .ctx
            .seats
            .get(usize::from(seat))
            .ok_or(RuleError::NotAPlayer)?;
        if matches!(actor, Actor::Account { .. }) && s.resigned {
            return Err(RuleError::Resigned);
        }
        Ok(seat)
    }

    /// After a round (or a game of a match) was scored: the end of the game, or the next deal.
    pub(crate) fn end_round(&mut self, dealer: &mut dyn Dealer) {
        let layout = self.ctx.layout;
        if self.progress.game_over(layout) {
            let board = &*self.board;
            let winners = self.progress.leaders(|s| board.tie_break(s));
            let seed = self.ctx.seed.unwrap_or_default().to_owned();
            self.emit(Event::GameFinished { winners, seed });
        } else {
            B::deal(self, dealer);
        }
    }
}
