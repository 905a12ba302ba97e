//! The table of a row game as plain `Copy` data: rows, hands, selections, the revealed cards
//! waiting to be placed, taken cards, X rows and stacks, the draft pool and the totals.
//!
//! One parameterised implementation serves 6 nimmt!, 11 nimmt! and X nimmt!: the
//! differences are data in [`Layout`] (deck, bullhead column, number and capacities of rows,
//! hand size, placement, X rows). Every field is a bit set or a small array, so `decide` can
//! work on a copy without allocating.

use crate::card::{Card, CardSet};
use crate::model::{Event, SeatCard, Side, Status};
use crate::options::{EndCondition, Layout, MAX_ROWS, MAX_SEATS, MAX_X_SEATS, PlacementOption};

/// The state of the table that resolution reads and changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// Lobby, active, finished.
    pub status: Status,
    /// Current round, 1-based (0 before the first deal).
    pub round: u16,
    /// Number of seats.
    pub players: u8,
    /// The open draft of this round is running.
    pub drafting: bool,
    /// Centre rows; a row is ascending, so a set says everything about it.
    pub rows: [CardSet; MAX_ROWS],
    /// Hands.
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
    /// Totals of finished rounds (nimm-oder-schieb scores can be negative).
    pub totals: [i32; MAX_SEATS],
    /// nimm-oder-schieb: the draw pile of this game, top first (server-side knowledge).
    pub pile: [Option<Card>; NOS_PILE],
    /// nimm-oder-schieb: cards of the pile turned up so far.
    pub drawn: u8,
    /// nimm-oder-schieb: the open card.
    pub open: Option<Card>,
    /// nimm-oder-schieb: chips on the open card.
    pub pot: u8,
    /// nimm-oder-schieb: chips per seat.
    pub chips: [u8; MAX_SEATS],
    /// nimm-oder-schieb: the seat that must take or pass.
    pub to_act: u8,
    /// nimm-oder-schieb: the cards removed unseen from this game.
    pub removed: CardSet,
    /// nimm-oder-schieb: chips left at the end of each game, summed (the tie-break).
    pub chips_kept: [u32; MAX_SEATS],
}

/// Cards in a nimm-oder-schieb draw pile.
pub const NOS_PILE: usize = 24;

impl Table {
    /// An empty table for `players` seats.
    #[must_use]
    pub fn new(players: u8) -> Self {
        Self {
            status: Status::Lobby,
            round: 0,
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
            totals: [0; MAX_SEATS],
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
    #[must_use]
    pub fn target(&self, layout: &Layout, card: Card) -> Option<(usize, Side)> {
        let n = card.number();
        let mut best: Option<(u8, usize, Side)> = None;
        for (i, row) in self.rows[..layout.rows].iter().enumerate() {
            if let Some(last) = row.max()
                && last < card
            {
                let diff = n - last.number();
                if best.is_none_or(|(d, _, s)| diff < d || (diff == d && s == Side::Left)) {
                    best = Some((diff, i, Side::Right));
                }
            }
            if layout.options.placement == PlacementOption::BothEnds
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

    /// The seat that must take a row now, with its card.
    #[must_use]
    pub fn pending_take(&self, layout: &Layout) -> Option<SeatCard> {
        if self.pending_keep.is_some() {
            return None;
        }
        let next = self.next_revealed()?;
        self.target(layout, next.card).is_none().then_some(next)
    }

    /// The seat whose turn it is in the open draft.
    #[must_use]
    pub fn draft_seat(&self, layout: &Layout) -> Option<u8> {
        if !self.drafting || self.players == 0 {
            return None;
        }
        let deck = layout.deck(self.players).len();
        let picks = deck - self.pool.len();
        let first = usize::from(self.round.saturating_sub(1)) % usize::from(self.players);
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

    /// Seats with the lowest total; in nimm-oder-schieb a tie goes to more chips kept.
    #[must_use]
    pub fn leaders(&self, layout: &Layout) -> Vec<u8> {
        let key = |s: u8| {
            let i = usize::from(s);
            let chips = if layout.take_or_pass() {
                self.chips_kept[i]
            } else {
                0
            };
            (self.totals[i], std::cmp::Reverse(chips))
        };
        let best = self.seats().map(key).min();
        self.seats().filter(|s| Some(key(*s)) == best).collect()
    }

    /// nimm-oder-schieb: the score of each seat for the game just played.
    #[must_use]
    pub fn nos_scores(&self) -> Vec<i32> {
        self.seats()
            .map(usize::from)
            .map(|s| {
                let cards: Vec<crate::nos_cards::NosCard> = self.taken[s]
                    .iter()
                    .filter_map(|c| crate::nos_cards::NosCard::new(c.number()))
                    .collect();
                crate::nos_cards::score(&cards, u32::from(self.chips[s])).total
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

    /// Folds an event into the table. Events that do not touch the table are ignored.
    pub fn apply(&mut self, layout: &Layout, event: &Event) {
        match event {
            Event::GameStarted {} => self.status = Status::Active,
            Event::DraftStarted { round, pool, .. } => {
                self.round = *round;
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
            Event::RoundStarted { round, rows } => {
                self.round = *round;
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
            Event::CardSelected { seat, card } => {
                if let Some(s) = self.selected.get_mut(usize::from(*seat)) {
                    *s = Some(*card);
                }
            }
            Event::CardsRevealed { cards } => {
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
            Event::CardPlaced {
                seat,
                card,
                row,
                taken,
                ..
            } => {
                if self.next_revealed().is_some_and(|sc| sc.card == *card) {
                    self.next_reveal += 1;
                }
                let s = usize::from(*seat);
                if let Some(r) = self.rows.get_mut(usize::from(*row)) {
                    if !taken.is_empty() {
                        *r = CardSet::empty();
                    }
                    r.insert(*card);
                }
                if !taken.is_empty() {
                    let taken: CardSet = taken.iter().copied().collect();
                    if layout.x_rows {
                        self.pending_keep = Some((*seat, taken));
                    } else if let Some(t) = self.taken.get_mut(s) {
                        *t = t.union(taken);
                    }
                }
            }
            Event::CardKept {
                seat,
                card,
                stacked,
                to_hand,
            } => {
                let s = usize::from(*seat);
                if s < MAX_X_SEATS {
                    if !stacked.is_empty() {
                        self.x_stacks[s] = self.x_stacks[s].union(self.x_rows[s]);
                        self.x_rows[s] = CardSet::empty();
                    }
                    self.x_rows[s].insert(*card);
                    self.hands[s] = self.hands[s].union(to_hand.iter().copied().collect());
                }
                self.pending_keep = None;
            }
            Event::RoundEnded { scores, .. } => {
                for (total, score) in self.totals.iter_mut().zip(scores) {
                    *total += i32::try_from(*score).unwrap_or(i32::MAX);
                }
            }
            Event::GameFinished { .. } => self.status = Status::Finished,
            Event::NosGameStarted {
                game,
                first_seat,
                chips,
            } => {
                self.round = *game;
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
            Event::CardRevealed { card } => {
                self.open = Some(*card);
                self.drawn += 1;
            }
            Event::Passed { seat } => {
                if let Some(c) = self.chips.get_mut(usize::from(*seat)) {
                    *c = c.saturating_sub(1);
                }
                self.pot += 1;
                self.to_act = (seat + 1) % self.players.max(1);
            }
            Event::CardTaken { seat, card, chips } => {
                let s = usize::from(*seat);
                if s < MAX_SEATS {
                    self.taken[s].insert(*card);
                    self.chips[s] += chips;
                }
                self.pot = 0;
                self.open = None;
                self.to_act = *seat;
            }
            Event::NosGameEnded(end) => {
                for (total, score) in self.totals.iter_mut().zip(&end.scores) {
                    *total += score;
                }
                for (kept, c) in self.chips_kept.iter_mut().zip(&end.chips) {
                    *kept += u32::from(*c);
                }
            }
            Event::GameCreated { .. }
            | Event::MoveDeadlineSet { .. }
            | Event::DeadlinesSet { .. }
            | Event::SeedRecorded { .. }
            | Event::DealPrepared { .. }
            | Event::SeatTaken { .. }
            | Event::SeatLeft { .. }
            | Event::BotAdded { .. }
            | Event::SeatRemoved { .. }
            | Event::SelectionMade { .. }
            | Event::SeatResigned { .. } => {}
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
