//! The row games (6 nimmt!, 11 nimmt!, X nimmt!): their board and their game moves.
//!
//! One parameterised implementation serves all three: the differences are data in
//! [`Layout`] (deck, bullhead column, number and capacities of rows, hand size, placement,
//! X rows). Every field of [`RowBoard`] is a bit set or a small array, so `decide` can work
//! on a copy without allocating.
//!
//! This module owns the selections, the reveal, placement and row taking, the open draft's
//! picks and x-nimmt's `keep_card`, and the end of a round. Dealing lives in
//! [`crate::deal`], seats and the lobby in [`crate::lobby`], what a seat may see in
//! [`crate::view`]. A new row game is a [`Ruleset`](crate::Ruleset) and its [`Layout`];
//! a rule that is not data (a new kind of move) is a [`Command`] decided in
//! `Family::play` of `RowBoard` and an [`Event`] folded in its `Family::apply`.

use crate::card::{Card, CardSet, Cards};
use crate::error::RuleError;
use crate::model::{Actor, Awaiting, Command, Dealer, Event, SeatCard, Side};
use crate::options::{DealOption, Layout, MAX_ROWS, MAX_SEATS, MAX_X_SEATS, PlacementOption};
use crate::turn::{Family, Turn};

/// The table of a row game: rows, hands, selections, the revealed cards waiting to be
/// placed, taken cards, X rows and stacks, the draft pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowBoard {
    /// Number of seats.
    pub players: u8,
    /// The open draft of this round is running.
    pub drafting: bool,
    /// Centre rows; a row is ascending, so a set says everything about it.
    pub rows: [CardSet; MAX_ROWS],
    /// Each seat's hand, by seat.
    pub hands: [CardSet; MAX_SEATS],
    /// Face-down selections of this turn.
    pub selected: [Option<Card>; MAX_SEATS],
    /// Revealed cards of this turn, ascending; `revealed[next..len]` are not yet placed.
    revealed: [Option<SeatCard>; MAX_SEATS],
    next_reveal: u8,
    revealed_len: u8,
    /// Cards taken this round (6 nimmt!, 11 nimmt!), public.
    pub taken: [CardSet; MAX_SEATS],
    /// X rows (x-nimmt), public and ascending.
    pub x_rows: [CardSet; MAX_X_SEATS],
    /// X stacks (x-nimmt), shown to their owners only.
    pub x_stacks: [CardSet; MAX_X_SEATS],
    /// Cards a seat took and must still choose from (`keep_card`).
    pub pending_keep: Option<(u8, CardSet)>,
    /// The open draft.
    pub pool: CardSet,
}

impl RowBoard {
    /// An empty table for `players` seats.
    #[must_use]
    pub fn new(players: u8) -> Self {
        Self {
            players,
            drafting: false,
            rows: [CardSet::empty(); MAX_ROWS],
            hands: [CardSet::empty(); MAX_SEATS],
            selected: [None; MAX_SEATS],
            revealed: [None; MAX_SEATS],
            next_reveal: 0,
            revealed_len: 0,
            taken: [CardSet::empty(); MAX_SEATS],
            x_rows: [CardSet::empty(); MAX_X_SEATS],
            x_stacks: [CardSet::empty(); MAX_X_SEATS],
            pending_keep: None,
            pool: CardSet::empty(),
        }
    }

    /// The seats, as indexes.
    pub fn seats(&self) -> impl Iterator<Item = u8> + use<> {
        0..self.players
    }

    /// Revealed cards not yet placed, ascending.
    pub fn revealed(&self) -> impl Iterator<Item = SeatCard> + '_ {
        self.revealed[usize::from(self.next_reveal)..usize::from(self.revealed_len)]
            .iter()
            .flatten()
            .copied()
    }

    /// The next revealed card to place.
    #[must_use]
    pub fn next_revealed(&self) -> Option<SeatCard> {
        if self.next_reveal < self.revealed_len {
            self.revealed[usize::from(self.next_reveal)]
        } else {
            None
        }
    }

    /// Where a card goes: the row end with the smallest difference below it (or, with
    /// `both_ends`, above it at a left end); a tie goes to the right end. `None`: it fits
    /// nowhere and its player must take a row.
    ///
    /// Every row is looked at without a branch on its cards (each row gives a key, the best
    /// key wins by `max`/`min`): which row a random card goes to is a branch no processor
    /// predicts well, and the bench's placements ran faster without it.
    #[must_use]
    pub fn target(&self, layout: &Layout, card: Card) -> Option<(usize, Side)> {
        let c = u32::from(card.number());
        if layout.options.placement != PlacementOption::BothEnds {
            return right_end_below(&self.row_ends(layout), c).map(|r| (r, Side::Right));
        }
        // Both ends: key difference, then the side (right first), then the row; `u32::MAX`
        // for an end the card cannot go to.
        let mut best = u32::MAX;
        for (i, row) in (0u32..).zip(&self.rows[..layout.rows.min(MAX_ROWS)]) {
            let last = row.top();
            let right = if ends_below(last, c) {
                ((c - last) << 5) | i
            } else {
                u32::MAX
            };
            let first = row.bottom();
            let left = if first > c && first < 127 {
                ((first - c) << 5) | 0x10 | i
            } else {
                u32::MAX
            };
            best = best.min(right).min(left);
        }
        let side = if best & 0x10 == 0 {
            Side::Right
        } else {
            Side::Left
        };
        (best != u32::MAX).then_some(((best & 0xf) as usize, side))
    }

    /// The rows' last cards (0 for an empty row, and for the rows past the layout's), for
    /// [`right_end_below`].
    fn row_ends(&self, layout: &Layout) -> [u32; MAX_ROWS] {
        let mut ends = [0; MAX_ROWS];
        for (end, row) in ends.iter_mut().zip(&self.rows[..layout.rows.min(MAX_ROWS)]) {
            *end = row.top();
        }
        ends
    }

    /// The seat that must take a row now, with its card.
    #[must_use]
    pub fn pending_take(&self, layout: &Layout) -> Option<SeatCard> {
        if self.pending_keep.is_some() {
            return None;
        }
        let next = self.next_revealed()?;
        self.target(layout, next.card).is_none().then_some(next)
    }

    /// The seat whose turn it is in the open draft of `round`.
    #[must_use]
    pub fn draft_seat(&self, layout: &Layout, round: u16) -> Option<u8> {
        if !self.drafting || self.players == 0 {
            return None;
        }
        let deck = layout.deck(self.players).len();
        let picks = deck - self.pool.len();
        let first = usize::from(round.saturating_sub(1)) % usize::from(self.players);
        u8::try_from((first + picks) % usize::from(self.players)).ok()
    }

    /// The turn is fully resolved and some hand is empty: the round is over.
    #[must_use]
    pub fn round_over(&self) -> bool {
        !self.drafting
            && self.next_revealed().is_none()
            && self.pending_keep.is_none()
            && self.seats().any(|s| self.hands[usize::from(s)].is_empty())
    }

    /// The score of each seat for the round just played.
    #[must_use]
    pub fn round_scores(&self, layout: &Layout) -> Vec<u32> {
        let t = layout.table;
        self.seats()
            .map(usize::from)
            .map(|s| {
                if layout.x_rows {
                    t.sum_set(self.hands[s]) + 2 * t.sum_set(self.x_stacks[s])
                } else {
                    t.sum_set(self.taken[s])
                }
            })
            .collect()
    }

    /// The row with the fewest bullheads, then fewest cards, then lowest index (the timeout
    /// default for `take_row`).
    #[must_use]
    pub fn cheapest_row(&self, layout: &Layout) -> usize {
        (0..layout.rows)
            .min_by_key(|r| (layout.table.sum_set(self.rows[*r]), self.rows[*r].len(), *r))
            .unwrap_or(0)
    }

    /// Whether the seats are choosing their cards for the next turn.
    fn selecting(&self) -> bool {
        !self.drafting && self.pending_keep.is_none() && self.next_revealed().is_none()
    }

    /// Who must act now in an active game, and how: what each seat must do (`due`), in
    /// seat order.
    #[must_use]
    pub fn awaiting(&self, layout: &Layout, round: u16) -> Vec<Awaiting> {
        self.seats()
            .filter_map(|seat| {
                self.due(layout, round, seat).map(|due| Awaiting {
                    seat,
                    action: due.action(),
                })
            })
            .collect()
    }

    /// What `seat` must do now in an active game (`None`: nothing), worked out once for
    /// [`RowBoard::awaiting`], [`RowBoard::is_awaited`], [`RowBoard::moves_for`] and a
    /// bot's choice, which each asked the same questions again before.
    ///
    /// (Always inlined: a bot asks it before every move, and each caller uses one or two of
    /// its answers; as a call, the answer went through memory and every question was asked.
    /// −3.4 to −3.6 % of the row games' instructions on the engine benchmark.)
    #[must_use]
    #[inline(always)]
    pub(crate) fn due(&self, layout: &Layout, round: u16, seat: u8) -> Option<Due> {
        if let Some(s) = self.draft_seat(layout, round) {
            return (s == seat).then_some(Due::Draft);
        }
        if let Some((s, cards)) = self.pending_keep {
            return (s == seat).then_some(Due::Keep(cards));
        }
        if let Some(p) = self.pending_take(layout) {
            return (p.seat == seat).then_some(Due::TakeRow);
        }
        let i = usize::from(seat);
        let hand = self.hands.get(i).copied().unwrap_or_default();
        (self.next_revealed().is_none()
            && self.selected.get(i).copied().flatten().is_none()
            && !hand.is_empty())
        .then_some(Due::Play(hand))
    }

    /// Whether `seat` must act now in an active game.
    #[must_use]
    pub fn is_awaited(&self, layout: &Layout, round: u16, seat: u8) -> bool {
        self.due(layout, round, seat).is_some()
    }

    /// The game moves `seat` may make now in an active game.
    #[must_use]
    pub fn moves_for(&self, layout: &Layout, round: u16, seat: u8) -> Vec<Command> {
        let i = usize::from(seat);
        let hand = self.hands.get(i).copied().unwrap_or_default();
        let play = || hand.iter().map(|card| Command::PlayCard { card }).collect();
        if self.selecting() && self.selected.get(i).copied().flatten().is_some() {
            // A selection may be replaced until the last one of the turn arrives.
            return play();
        }
        match self.due(layout, round, seat) {
            None => Vec::new(),
            Some(Due::Draft) => self
                .pool
                .iter()
                .map(|card| Command::DraftCard { card })
                .collect(),
            Some(Due::Keep(cards)) => cards
                .iter()
                .map(|card| Command::KeepCard { card })
                .collect(),
            Some(Due::TakeRow) => (0..layout.rows)
                .filter_map(|r| u8::try_from(r).ok())
                .map(|row| Command::TakeRow { row })
                .collect(),
            Some(Due::Play(_)) => play(),
        }
    }

    /// The next seat that must act and for which `bot` holds.
    pub fn next_bot(&self, layout: &Layout, round: u16, bot: impl Fn(u8) -> bool) -> Option<u8> {
        if let Some(seat) = self.draft_seat(layout, round) {
            return bot(seat).then_some(seat);
        }
        if let Some((seat, _)) = self.pending_keep {
            return bot(seat).then_some(seat);
        }
        if self.next_revealed().is_some() {
            return self
                .pending_take(layout)
                .map(|p| p.seat)
                .filter(|s| bot(*s));
        }
        self.seats().find(|s| {
            let i = usize::from(*s);
            self.selected[i].is_none() && !self.hands[i].is_empty() && bot(*s)
        })
    }

    /// Folds `card_selected`: the seat's face-down selection.
    fn fold_selected(&mut self, seat: u8, card: Card) {
        if let Some(s) = self.selected.get_mut(usize::from(seat)) {
            *s = Some(card);
        }
    }

    /// Folds `cards_revealed`: the selections leave the hands and wait to be placed.
    fn reveal_cards(&mut self, cards: &[SeatCard]) {
        self.revealed = [None; MAX_SEATS];
        for (slot, sc) in self.revealed.iter_mut().zip(cards) {
            *slot = Some(*sc);
            if let Some(h) = self.hands.get_mut(usize::from(sc.seat)) {
                h.remove(sc.card);
            }
        }
        self.next_reveal = 0;
        self.revealed_len = u8::try_from(cards.len().min(MAX_SEATS)).unwrap_or(0);
        self.selected = [None; MAX_SEATS];
    }

    /// Folds `card_placed` (`takes`: its `taken` is not empty); returns the cards taken.
    /// They are the row's (the event lists them as the rules found the row), so the set
    /// is the row's own, not built from the list again.
    #[inline(always)]
    fn fold_placed(
        &mut self,
        layout: &Layout,
        seat: u8,
        card: Card,
        row: u8,
        takes: bool,
    ) -> CardSet {
        if self.next_revealed().is_some_and(|sc| sc.card == card) {
            self.next_reveal += 1;
        }
        let mut lying = CardSet::empty();
        if let Some(r) = self.rows.get_mut(usize::from(row)) {
            if takes {
                lying = *r;
                *r = CardSet::empty();
            }
            r.insert(card);
        }
        if takes {
            self.take_cards(layout, seat, lying);
        }
        lying
    }

    /// Folds `card_kept` (`stacks`: its `stacked` is not empty): `card` to the seat's X row
    /// (the row to its stack first), the rest of the cards it took to its hand. The rest is
    /// the set the board holds for the choice, not one built from the event's list again;
    /// `to_hand` (that list as a set) is asked for only when the board holds no choice of
    /// this seat's. Returns the rest that went to the hand (`None` past the X seats).
    #[inline(always)]
    fn fold_kept(
        &mut self,
        seat: u8,
        card: Card,
        stacks: bool,
        to_hand: impl FnOnce() -> CardSet,
    ) -> Option<CardSet> {
        let s = usize::from(seat);
        let pending = self.pending_keep.take();
        if s >= MAX_X_SEATS {
            return None;
        }
        if stacks {
            self.x_stacks[s] = self.x_stacks[s].union(self.x_rows[s]);
            self.x_rows[s] = CardSet::empty();
        }
        self.x_rows[s].insert(card);
        let rest = match pending {
            Some((keeper, mut cards)) if keeper == seat => {
                cards.remove(card);
                cards
            }
            _ => to_hand(),
        };
        self.hands[s] = self.hands[s].union(rest);
        Some(rest)
    }

    /// The cards of a taken row: to the seat's taken pile, or (X nimmt!) to choose from.
    #[inline(never)]
    fn take_cards(&mut self, layout: &Layout, seat: u8, taken: CardSet) {
        if layout.x_rows {
            self.pending_keep = Some((seat, taken));
        } else if let Some(t) = self.taken.get_mut(usize::from(seat)) {
            *t = t.union(taken);
        }
    }

    /// Folds the events that come once a round or less often than a turn (see `apply`).
    #[inline(never)]
    fn apply_rare(&mut self, event: &Event) {
        match event {
            Event::DraftStarted { pool, .. } => {
                self.drafting = true;
                self.pool = pool.iter().copied().collect();
                self.rows = [CardSet::empty(); MAX_ROWS];
                self.hands = [CardSet::empty(); MAX_SEATS];
                self.clear_round();
            }
            Event::CardDrafted { seat, card } => {
                self.pool.remove(*card);
                if let Some(h) = self.hands.get_mut(usize::from(*seat)) {
                    h.insert(*card);
                }
            }
            Event::RoundStarted { rows, .. } => {
                self.drafting = false;
                self.pool = CardSet::empty();
                self.rows = [CardSet::empty(); MAX_ROWS];
                for (slot, card) in self.rows.iter_mut().zip(rows) {
                    slot.insert(*card);
                }
                self.clear_round();
            }
            Event::HandDealt { seat, cards } => {
                if let Some(h) = self.hands.get_mut(usize::from(*seat)) {
                    *h = cards.iter().copied().collect();
                }
            }
            Event::CardKept {
                seat,
                card,
                stacked,
                to_hand,
            } => {
                let list = || to_hand.iter().copied().collect::<CardSet>();
                let rest = self.fold_kept(*seat, *card, !stacked.is_empty(), list);
                debug_assert!(rest.is_none_or(|rest| rest == list()));
            }
            _ => {}
        }
    }

    fn clear_round(&mut self) {
        self.selected = [None; MAX_SEATS];
        self.revealed = [None; MAX_SEATS];
        self.next_reveal = 0;
        self.revealed_len = 0;
        self.taken = [CardSet::empty(); MAX_SEATS];
        self.x_rows = [CardSet::empty(); MAX_X_SEATS];
        self.x_stacks = [CardSet::empty(); MAX_X_SEATS];
        self.pending_keep = None;
    }
}

/// What a seat of a row game must do now ([`RowBoard::due`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// Take a card from the open draft.
    Draft,
    /// Choose which of these cards (just taken) goes to the X row.
    Keep(CardSet),
    /// Take a row: the seat's revealed card fits none.
    TakeRow,
    /// Select a card of this hand.
    Play(CardSet),
}

impl Due {
    /// The command it asks for, as `awaiting` names it.
    fn action(self) -> &'static str {
        match self {
            Self::Draft => "draft_card",
            Self::Keep(_) => "keep_card",
            Self::TakeRow => "take_row",
            Self::Play(_) => "play_card",
        }
    }
}

/// Whether a row whose last card is `last` (0: the row is empty) ends below card `c`.
fn ends_below(last: u32, c: u32) -> bool {
    last.wrapping_sub(1) < c.wrapping_sub(1)
}

/// Right ends only: the row whose last card (`ends`, 0 for an empty row) is the highest below
/// card `c` (the rows' cards are distinct, so there is no tie). Without a branch on the
/// cards: each row gives a key (its last card, then its index; 0 when it ends above the card
/// or is empty) and the highest key wins.
fn right_end_below(ends: &[u32; MAX_ROWS], c: u32) -> Option<usize> {
    let mut best = 0;
    for (i, last) in (0u32..).zip(ends) {
        best = best.max(if ends_below(*last, c) {
            (last << 4) | i
        } else {
            0
        });
    }
    (best != 0).then_some((best & 0xf) as usize)
}

impl Family for RowBoard {
    // Inlined: `Turn::emit` passes an event whose variant is known where it is built, so
    // the match folds to one arm there. The events of a turn (selection, reveal,
    // placement) are folded here; the rare ones in `apply_rare`, kept out of line so this
    // stays small.
    #[inline(always)]
    fn apply(&mut self, layout: &Layout, event: &Event) {
        match event {
            Event::CardSelected { seat, card } => self.fold_selected(*seat, *card),
            Event::CardsRevealed { cards } => self.reveal_cards(cards),
            Event::CardPlaced {
                seat,
                card,
                row,
                taken,
                ..
            } => {
                let lying = self.fold_placed(layout, *seat, *card, *row, !taken.is_empty());
                debug_assert_eq!(lying, taken.iter().copied().collect::<CardSet>());
            }
            Event::DraftStarted { .. }
            | Event::CardDrafted { .. }
            | Event::RoundStarted { .. }
            | Event::HandDealt { .. }
            | Event::CardKept { .. } => self.apply_rare(event),
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
            | Event::SelectionMade { .. }
            | Event::SeatResigned { .. }
            | Event::VisibilitySet { .. }
            | Event::ReservationsReleased {}
            | Event::RematchCreated { .. }
            | Event::SeedRevealed {}
            | Event::GameStarted {}
            | Event::RoundEnded { .. }
            | Event::GameFinished { .. }
            | Event::NosGameStarted { .. }
            | Event::DrawPileSet { .. }
            | Event::CardRevealed { .. }
            | Event::Passed { .. }
            | Event::CardTaken { .. }
            | Event::NosGameEnded(_) => {}
        }
    }

    fn deal(turn: &mut Turn<'_, '_, Self>, dealer: &mut dyn Dealer) {
        turn.deal_rows(dealer);
    }

    fn play(
        turn: &mut Turn<'_, '_, Self>,
        seat: Option<u8>,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        match command {
            Command::PlayCard { card } => turn.play_card(seat, actor, *card, dealer),
            Command::TakeRow { row } => turn.take_row(seat, actor, *row, dealer),
            Command::DraftCard { card } => turn.draft_card(seat, actor, *card),
            Command::KeepCard { card } => turn.keep_card(seat, actor, *card, dealer),
            _ => Err(RuleError::UnknownCommand {
                command: command.name(),
            }),
        }
    }
}

impl Turn<'_, '_, RowBoard> {
    fn play_card(
        &mut self,
        seat: Option<u8>,
        actor: Actor<'_>,
        card: Card,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        let seat = self.require_acting_seat(seat, actor)?;
        let t = &self.board;
        let hand = t.hands[usize::from(seat)];
        if !t.selecting() || hand.is_empty() {
            return Err(RuleError::NotYourTurn {
                action: "play_card",
            });
        }
        if !hand.contains(card) {
            return Err(RuleError::CardNotInHand {
                card: card.number(),
            });
        }
        let first = t.selected[usize::from(seat)].is_none();
        self.emit_made(
            || Event::CardSelected { seat, card },
            |b| b.fold_selected(seat, card),
        );
        if first {
            self.emit_made(|| Event::SelectionMade { seat }, |_| {});
        }
        let t = &self.board;
        let all_selected = t
            .seats()
            .all(|s| t.selected[usize::from(s)].is_some() || t.hands[usize::from(s)].is_empty());
        if all_selected {
            self.reveal();
            self.resolve(dealer);
        }
        Ok(())
    }

    fn take_row(
        &mut self,
        seat: Option<u8>,
        actor: Actor<'_>,
        row: u8,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        let seat = self.require_acting_seat(seat, actor)?;
        let layout = self.ctx.layout;
        let pending = self.board.pending_take(layout).filter(|p| p.seat == seat);
        let Some(pending) = pending else {
            return Err(RuleError::NotYourTurn { action: "take_row" });
        };
        let r = usize::from(row);
        if r >= layout.rows {
            return Err(RuleError::NoSuchRow { row });
        }
        let taken = self.board.rows[r].to_cards();
        self.emit(Event::CardPlaced {
            seat,
            card: pending.card,
            row,
            taken,
            chosen: true,
            side: Side::Right,
        });
        self.resolve(dealer);
        Ok(())
    }

    fn draft_card(
        &mut self,
        seat: Option<u8>,
        actor: Actor<'_>,
        card: Card,
    ) -> Result<(), RuleError> {
        let layout = self.ctx.layout;
        if layout.options.deal != DealOption::Draft {
            return Err(RuleError::UnknownCommand {
                command: "draft_card",
            });
        }
        let seat = self.require_acting_seat(seat, actor)?;
        if self.board.draft_seat(layout, self.progress.round) != Some(seat) {
            return Err(RuleError::NotYourTurn {
                action: "draft_card",
            });
        }
        if !self.board.pool.contains(card) {
            return Err(RuleError::CardNotAvailable {
                card: card.number(),
            });
        }
        self.emit(Event::CardDrafted { seat, card });
        if self.board.pool.len() == layout.rows {
            let rows = self.board.pool.to_cards();
            self.emit(Event::RoundStarted {
                round: self.progress.round,
                rows,
            });
        }
        Ok(())
    }

    fn keep_card(
        &mut self,
        seat: Option<u8>,
        actor: Actor<'_>,
        card: Card,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        if !self.ctx.layout.x_rows {
            return Err(RuleError::UnknownCommand {
                command: "keep_card",
            });
        }
        let seat = self.require_acting_seat(seat, actor)?;
        let Some((keeper, cards)) = self.board.pending_keep.filter(|(s, _)| *s == seat) else {
            return Err(RuleError::NotYourTurn {
                action: "keep_card",
            });
        };
        if !cards.contains(card) {
            return Err(RuleError::CardNotTaken {
                card: card.number(),
            });
        }
        self.keep(keeper, card, cards);
        self.resolve(dealer);
        Ok(())
    }

    fn reveal(&mut self) {
        let t = &*self.board;
        // Ascending by card, sorted as a set: each selected card's bit, and its seat by
        // card number; then the set's cards in order. (Sorting the selections by comparing
        // them branches on random cards, which the processor cannot predict; this loops
        // once per seat.)
        let mut chosen = CardSet::empty();
        let mut seat_of = [0u8; 128];
        for (seat, selected) in t.seats().zip(t.selected) {
            if let Some(card) = selected {
                chosen.insert(card);
                seat_of[usize::from(card.number() & 0x7f)] = seat;
            }
        }
        let cards = chosen
            .iter()
            .map(|card| SeatCard {
                seat: seat_of[usize::from(card.number() & 0x7f)],
                card,
            })
            .collect();
        self.emit(Event::CardsRevealed { cards });
    }

    /// The taken cards of an x-nimmt seat: `card` to the X row, the rest to the hand. Built
    /// in the events' buffer (`Turn::emit_made`): the lists are the board's sets, made into
    /// lists once, where the event is stored.
    fn keep(&mut self, seat: u8, card: Card, cards: CardSet) {
        let x_row = self.board.x_rows[usize::from(seat)];
        let stacks = x_row.max().is_some_and(|last| card < last);
        let mut rest = cards;
        rest.remove(card);
        self.emit_made(
            || Event::CardKept {
                seat,
                card,
                stacked: if stacks {
                    x_row.to_cards()
                } else {
                    Cards::new()
                },
                to_hand: rest.to_cards(),
            },
            |b| {
                b.fold_kept(seat, card, stacks, || rest);
            },
        );
    }

    /// Places revealed cards until a choice is needed or the turn is over; ends the round
    /// (and maybe the game) when the turn ends with an empty hand.
    ///
    /// (Always inlined into its three callers, the moves that continue a turn: −1.8 % of X
    /// nimmt!'s instructions on the engine benchmark. Inlining `keep` or `target` as well
    /// measured more instructions, not fewer.)
    #[inline(always)]
    fn resolve(&mut self, dealer: &mut dyn Dealer) {
        let layout = self.ctx.layout;
        // The rows' ends, looked up once and kept as cards are placed (right ends only;
        // with both ends `target` looks at the rows each time). Kept exact, though the cards
        // of a turn are placed ascending, so that a row's old end would still rank it the
        // same among the others and no test can tell the difference.
        let mut ends = (layout.options.placement != PlacementOption::BothEnds)
            .then(|| self.board.row_ends(layout));
        loop {
            if let Some((seat, cards)) = self.board.pending_keep {
                match cards.iter().next() {
                    Some(only) if cards.len() == 1 => self.keep(seat, only, cards),
                    _ => return, // paused for keep_card
                }
                continue;
            }
            let Some(next) = self.board.next_revealed() else {
                break;
            };
            let c = u32::from(next.card.number());
            let target = match &mut ends {
                Some(ends) => right_end_below(ends, c).map(|r| {
                    ends[r] = c;
                    (r, Side::Right)
                }),
                None => self.board.target(layout, next.card),
            };
            let Some((row, side)) = target else {
                return; // paused for take_row
            };
            let lying = self.board.rows[row];
            let takes = lying.holds_at_least(layout.max_lying[row]);
            let row = u8::try_from(row).unwrap_or_default();
            let SeatCard { seat, card } = next;
            let placed = |taken| Event::CardPlaced {
                seat,
                card,
                row,
                taken,
                chosen: false,
                side,
            };
            // Most placements take nothing: that event is plain values, built in place
            // (`Turn::emit_made`). One that takes a row carries the row's list; built in
            // place as well, it measured slower in X nimmt! (docs/scaling.md).
            if takes {
                self.emit(placed(lying.to_cards()));
            } else {
                self.emit_made(
                    || placed(Cards::new()),
                    |b| {
                        b.fold_placed(layout, seat, card, row, false);
                    },
                );
            }
        }
        if self.board.round_over() {
            let scores = self.board.round_scores(layout);
            self.emit(Event::RoundEnded {
                round: self.progress.round,
                scores,
            });
            self.end_round(dealer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ruleset;

    /// `target` as it was written with a branch per row: the reference the branchless one
    /// must agree with.
    fn target_by_branches(b: &RowBoard, layout: &Layout, card: Card) -> Option<(usize, Side)> {
        let both = layout.options.placement == PlacementOption::BothEnds;
        let n = card.number();
        let mut best: Option<(u8, usize, Side)> = None;
        for (i, row) in b.rows[..layout.rows].iter().enumerate() {
            if let Some(last) = row.max()
                && last < card
            {
                let diff = n - last.number();
                if best.is_none_or(|(d, _, s)| diff < d || (diff == d && s == Side::Left)) {
                    best = Some((diff, i, Side::Right));
                }
            }
            if both
                && let Some(first) = row.min()
                && first > card
            {
                let diff = first.number() - n;
                if best.is_none_or(|(d, _, _)| diff < d) {
                    best = Some((diff, i, Side::Left));
                }
            }
        }
        best.map(|(_, i, side)| (i, side))
    }

    proptest::proptest! {
        /// Any rows (empty ones too) and any card not on them, right ends only and both ends
        /// (where ties between a right and a left end occur): the branchless `target` picks
        /// the row and side the rule says.
        #[test]
        fn target_agrees_with_the_rule_written_with_branches(
            cards in proptest::sample::subsequence((1u8..=104).collect::<Vec<_>>(), 1..=21),
            order in proptest::collection::vec(0usize..4, 21),
            which in 0usize..21,
            both_ends: bool,
        ) {
            let ruleset = Ruleset::SixNimmt;
            let mut options = ruleset.default_options();
            if both_ends {
                options.placement = PlacementOption::BothEnds;
            }
            let layout = Layout::new(ruleset, options);
            let mut board = RowBoard::new(4);
            // One of the cards is played, the others lie in the rows.
            let card = Card(cards[which % cards.len()]);
            for (c, row) in cards.iter().zip(&order) {
                if *c != card.number() {
                    board.rows[*row].insert(Card(*c));
                }
            }
            proptest::prop_assert_eq!(
                board.target(&layout, card),
                target_by_branches(&board, &layout, card)
            );
        }
    }
}
