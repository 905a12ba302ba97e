//! What one seat may know of a game ([`InfoSet`]), and complete boards consistent with it
//! ([`InfoSet::sample`]) for a search to play out.
//!
//! [`InfoSet::observe`] is the only place a searching bot reads the game, and it copies the
//! board with every hidden part blanked, keeping only what the seat may see or work out
//! from the public history:
//! - row games: its own hand, X stack and selection; the rows, taken cards, X rows, the
//!   draft pool, revealed cards and cards waiting for `keep_card`; how many cards every
//!   other hand and X stack holds. Other hands, other X stacks, other selections and the
//!   cards never dealt are blanked. With `deal: draft` the other hands are known: every
//!   card was drafted in the open and leaves a hand only face up.
//! - nimm-oder-schieb: the open card, the pot, the taken cards, its own chips (everyone's
//!   with `chips: open`), how many cards are left. The pile, the removed cards and, with
//!   hidden chips, the other seats' chips are blanked; only their sum is known (chips only
//!   move between seats and the pot).
//!
//! This module must not keep anything of the game but the [`InfoSet`]; `tests/expert.rs`
//! scrambles the hidden parts of games and checks that the information set and the expert's
//! choices stay the same.

use crate::board::Board;
use crate::card::{Card, CardSet, MAX_CARD};
use crate::game::Game;
use crate::model::Status;
use crate::options::Setup;
use crate::options::{ChipsOption, DealOption, Layout, MAX_SEATS, MAX_X_SEATS};
use crate::progress::Progress;
use crate::take_or_pass::NOS_PILE;

use super::Random;

/// What one seat may know of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InfoSet {
    /// The seat that knows.
    pub seat: u8,
    /// Ruleset, options, players.
    pub setup: Setup,
    /// Status, round, totals.
    pub progress: Progress,
    /// The board with the hidden parts blanked (see the module docs).
    pub board: Board,
    /// What is known of the blanked parts.
    pub hidden: Hidden,
}

/// What a seat knows of the parts of the board it cannot see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hidden {
    /// Cards whose place the seat cannot see: in other hands or X stacks, never dealt, in
    /// the pile or removed.
    pub unseen: CardSet,
    /// Row games: cards in each blanked hand.
    pub hand_sizes: [u8; MAX_SEATS],
    /// X nimmt!: cards on each blanked X stack.
    pub x_stack_sizes: [u8; MAX_X_SEATS],
    /// nimm-oder-schieb: cards left face down on the pile.
    pub pile_left: u8,
    /// nimm-oder-schieb with hidden chips: the other seats' chips together (`None`: open).
    pub others_chips: Option<u16>,
}

impl InfoSet {
    /// What `seat` may know of an active game (`None`: no such seat, or not active).
    #[must_use]
    pub fn observe(game: &Game, seat: u8) -> Option<Self> {
        let players = game.setup.players;
        if seat >= players || game.status() != Status::Active {
            return None;
        }
        let me = usize::from(seat);
        let layout = &game.layout;
        let mut hidden = Hidden {
            unseen: CardSet::empty(),
            hand_sizes: [0; MAX_SEATS],
            x_stack_sizes: [0; MAX_X_SEATS],
            pile_left: 0,
            others_chips: None,
        };
        let board = match game.board {
            Board::Rows(mut b) => {
                let open_hands = layout.options.deal == DealOption::Draft;
                let mut seen = b.hands[me].union(b.pool);
                for row in &b.rows[..layout.rows] {
                    seen = seen.union(*row);
                }
                for card in b.revealed() {
                    seen.insert(card.card);
                }
                if let Some((_, cards)) = b.pending_keep {
                    seen = seen.union(cards);
                }
                for s in (0..usize::from(players)).filter(|s| *s != me) {
                    seen = seen.union(b.taken[s]);
                    if open_hands {
                        seen = seen.union(b.hands[s]);
                    } else {
                        hidden.hand_sizes[s] = u8::try_from(b.hands[s].len()).unwrap_or(0);
                        b.hands[s] = CardSet::empty();
                    }
                    b.selected[s] = None;
                }
                seen = seen.union(b.taken[me]);
                for s in 0..usize::from(players).min(MAX_X_SEATS) {
                    seen = seen.union(b.x_rows[s]);
                    if s == me {
                        seen = seen.union(b.x_stacks[s]);
                    } else {
                        hidden.x_stack_sizes[s] = u8::try_from(b.x_stacks[s].len()).unwrap_or(0);
                        b.x_stacks[s] = CardSet::empty();
                    }
                }
                hidden.unseen = layout.deck(players).difference(seen);
                Board::Rows(b)
            }
            Board::TakeOrPass(mut b) => {
                let mut seen: CardSet = b.open.into_iter().collect();
                for s in 0..usize::from(players) {
                    seen = seen.union(b.taken[s]);
                }
                hidden.unseen = layout.deck(players).difference(seen);
                hidden.pile_left =
                    u8::try_from(NOS_PILE.saturating_sub(usize::from(b.drawn))).unwrap_or(0);
                b.pile = [None; NOS_PILE];
                b.removed = CardSet::empty();
                if game.setup.options.chips == ChipsOption::Hidden {
                    // Every seat started this game with the same chips; since then chips
                    // only moved between the seats and the pot.
                    let start = crate::nos_cards::starting_chips(players);
                    let all = u16::from(players) * u16::from(start);
                    let others = all
                        .saturating_sub(u16::from(b.chips[me]))
                        .saturating_sub(u16::from(b.pot));
                    hidden.others_chips = Some(others);
                    for (s, chips) in b.chips.iter_mut().enumerate() {
                        if s != me {
                            *chips = 0;
                        }
                    }
                }
                Board::TakeOrPass(b)
            }
        };
        Some(Self {
            seat,
            setup: game.setup.clone(),
            progress: game.progress,
            board,
            hidden,
        })
    }

    /// The layout of the game.
    #[must_use]
    pub fn layout(&self) -> Layout {
        Layout::new(self.setup.ruleset, self.setup.options)
    }

    /// A complete board consistent with what the seat knows: the unseen cards dealt at
    /// random into the blanked hands and X stacks (the rest never dealt), or into the pile
    /// and the removed cards; hidden chips split as evenly as the sum allows.
    #[must_use]
    pub fn sample(&self, rng: &mut dyn Random) -> Board {
        let h = &self.hidden;
        let mut deck = Deck::new(h.unseen);
        let mut board = self.board;
        match &mut board {
            Board::Rows(b) => {
                for s in 0..usize::from(self.setup.players) {
                    if h.hand_sizes[s] > 0 {
                        b.hands[s] = deck.draw(usize::from(h.hand_sizes[s]), rng);
                    }
                }
                for s in 0..MAX_X_SEATS {
                    if h.x_stack_sizes[s] > 0 {
                        b.x_stacks[s] = deck.draw(usize::from(h.x_stack_sizes[s]), rng);
                    }
                }
            }
            Board::TakeOrPass(b) => {
                let start = usize::from(b.drawn);
                for i in start..start + usize::from(h.pile_left) {
                    let card = deck.draw_one(rng);
                    if let Some(slot) = b.pile.get_mut(i) {
                        *slot = card;
                    }
                }
                b.removed = deck.rest();
                if let Some(others) = h.others_chips {
                    let seats: Vec<usize> = (0..usize::from(self.setup.players))
                        .filter(|s| *s != usize::from(self.seat))
                        .collect();
                    if let Ok(k) = u16::try_from(seats.len())
                        && k > 0
                    {
                        let (each, rest) = (others / k, others % k);
                        let lucky = rng.below(seats.len());
                        for (i, s) in seats.iter().enumerate() {
                            // The remainder goes round from a random seat.
                            let extra = u16::from(
                                (i + seats.len() - lucky) % seats.len() < usize::from(rest),
                            );
                            b.chips[*s] = u8::try_from(each + extra).unwrap_or(u8::MAX);
                        }
                    }
                }
            }
        }
        board
    }
}

/// Unseen cards, drawn without replacement (a partial Fisher–Yates from the front).
struct Deck {
    cards: [Card; MAX_CARD as usize],
    len: usize,
    next: usize,
}

impl Deck {
    fn new(set: CardSet) -> Self {
        let mut cards = [Card(1); MAX_CARD as usize];
        let mut len = 0;
        for (slot, card) in cards.iter_mut().zip(set.iter()) {
            *slot = card;
            len += 1;
        }
        Self {
            cards,
            len,
            next: 0,
        }
    }

    fn draw_one(&mut self, rng: &mut dyn Random) -> Option<Card> {
        if self.next >= self.len {
            return None;
        }
        let j = self.next + rng.below(self.len - self.next);
        self.cards.swap(self.next, j);
        self.next += 1;
        Some(self.cards[self.next - 1])
    }

    fn draw(&mut self, count: usize, rng: &mut dyn Random) -> CardSet {
        (0..count).filter_map(|_| self.draw_one(rng)).collect()
    }

    /// The cards not drawn.
    fn rest(&self) -> CardSet {
        self.cards[self.next..self.len].iter().copied().collect()
    }
}
