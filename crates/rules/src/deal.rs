//! Dealing: a new round of a row game (shuffled, prepared or the open draft), a new game of
//! nimm-oder-schieb (a shuffled or prepared draw pile), and the check of a prepared deal.
//!
//! Randomness enters only here, through the caller's [`Dealer`]; the events record what was
//! dealt, so a replay never shuffles. This module must not decide moves: it emits the
//! events that start a round and hands over to [`crate::rows`] or [`crate::take_or_pass`].
//! A new family deals in a `Turn<'_, '_, ItsBoard>` method here, called from its
//! `Family::deal`.

use crate::card::{Card, CardSet, MAX_CARD};
use crate::error::RuleError;
use crate::model::{Deal, Dealer, Event};
use crate::options::Setup;
use crate::options::{DealOption, Layout};
use crate::rows::RowBoard;
use crate::take_or_pass::{NOS_PILE, TakeOrPassBoard};
use crate::turn::Turn;

impl Turn<'_, '_, RowBoard> {
    /// Deals the next round: the open draft, the prepared first deal, or a shuffled deck.
    pub(crate) fn deal_rows(&mut self, dealer: &mut dyn Dealer) {
        let g = self.ctx;
        let round = self.progress.round + 1;
        let players = g.players;
        if g.layout.options.deal == DealOption::Draft {
            let pool = g.layout.deck(players).to_vec();
            let first_seat =
                u8::try_from(usize::from(round - 1) % usize::from(players)).unwrap_or(0);
            self.emit(Event::DraftStarted {
                round,
                pool,
                first_seat,
            });
            return;
        }
        if let (Some(deal), 1) = (g.prepared, round) {
            let rows = deal
                .rows
                .iter()
                .filter_map(|r| r.first().copied())
                .collect();
            self.emit(Event::RoundStarted { round, rows });
            for (seat, hand) in deal.hands.iter().enumerate() {
                let cards = hand.iter().copied().collect::<CardSet>().to_cards();
                let seat = u8::try_from(seat).unwrap_or_default();
                self.emit(Event::HandDealt { seat, cards });
            }
            return;
        }
        // The deck on the stack: no allocation per deal for the shuffle.
        let deck = g.layout.deck(players);
        let mut buf = [Card(1); MAX_CARD as usize];
        let dealt = deck.write_ascending(&mut buf);
        let cards = &mut buf[..dealt];
        dealer.shuffle(round, cards);
        let (hands, rows) = split_deal(cards, players, g.layout);
        self.emit(Event::RoundStarted {
            round,
            rows: rows.iter().copied().collect(),
        });
        for (seat, hand) in hands.enumerate() {
            let set = hand.iter().copied().collect::<CardSet>();
            let cards = set.to_cards();
            let seat = u8::try_from(seat).unwrap_or_default();
            // The board's hand is the set just made, not one built from the list again.
            self.emit_made(
                || Event::HandDealt { seat, cards },
                |board| {
                    if let Some(h) = board.hands.get_mut(usize::from(seat)) {
                        *h = set;
                    }
                },
            );
        }
    }
}

impl Turn<'_, '_, TakeOrPassBoard> {
    /// A new game of the match: fresh chips, a shuffled (or prepared) pile, the first card.
    pub(crate) fn deal_pile(&mut self, dealer: &mut dyn Dealer) {
        let g = self.ctx;
        let game = self.progress.round + 1;
        let players = g.players;
        let first_seat =
            u8::try_from(usize::from(game - 1) % usize::from(players.max(1))).unwrap_or(0);
        let chips = crate::nos_cards::starting_chips(players);
        self.emit(Event::NosGameStarted {
            game,
            first_seat,
            chips,
        });
        let deck = g.layout.deck(players);
        let (pile, removed) = match g.prepared {
            Some(deal) if game == 1 => {
                let pile = deal.draw_pile.clone();
                let removed = deck.difference(pile.iter().copied().collect()).to_vec();
                (pile, removed)
            }
            _ => {
                let mut cards = deck.to_vec();
                dealer.shuffle(game, &mut cards);
                // The cards past the pile, ascending: sorted as a set (comparing shuffled
                // cards is a branch on random data).
                let removed = cards
                    .get(NOS_PILE..)
                    .unwrap_or_default()
                    .iter()
                    .copied()
                    .collect::<CardSet>()
                    .to_vec();
                cards.truncate(NOS_PILE);
                (cards, removed)
            }
        };
        self.emit(Event::DrawPileSet { pile, removed });
        self.next_card(dealer);
    }
}

/// How a shuffled deck is dealt: seat 0 the first hand, seat 1 the next, …, then one card for
/// each row in row order. Returns the hands and the rows' first cards.
fn split_deal<'c>(
    cards: &'c [Card],
    players: u8,
    layout: &Layout,
) -> (std::slice::ChunksExact<'c, Card>, &'c [Card]) {
    let start = usize::from(players) * layout.hand_size;
    (
        cards[..start].chunks_exact(layout.hand_size),
        &cards[start..start + layout.rows],
    )
}

/// The deal a shuffled deck gives (see `split_deal`), as a [`Deal`].
#[must_use]
pub fn deal_from_order(cards: &[Card], players: u8, layout: &Layout) -> Deal {
    let (hands, rows) = split_deal(cards, players, layout);
    Deal {
        rows: rows.iter().map(|c| vec![*c]).collect(),
        hands: hands.map(<[Card]>::to_vec).collect(),
        draw_pile: Vec::new(),
    }
}

/// Checks that a prepared deal is complete and possible.
///
/// # Errors
/// [`RuleError::InvalidDeal`] naming what is wrong.
pub(crate) fn validate_deal(setup: &Setup, deal: &Deal) -> Result<(), RuleError> {
    let layout = Layout::new(setup.ruleset, setup.options);
    let bad = |m: String| Err(RuleError::InvalidDeal(m));
    if layout.take_or_pass() {
        if !deal.rows.is_empty() || !deal.hands.is_empty() {
            return bad("a nimm-oder-schieb deal is a `draw_pile` only".into());
        }
        let deck = layout.deck(setup.players);
        let mut seen = CardSet::empty();
        for card in &deal.draw_pile {
            if !deck.contains(*card) {
                return bad(format!("card {card} is not one of the values 3–35"));
            }
            if !seen.insert(*card) {
                return bad(format!("card {card} appears twice"));
            }
        }
        if deal.draw_pile.len() != NOS_PILE {
            return bad(format!("draw_pile must hold {NOS_PILE} cards"));
        }
        return Ok(());
    }
    if !deal.draw_pile.is_empty() {
        return bad("`draw_pile` is for nimm-oder-schieb".into());
    }
    if setup.options.deal == DealOption::Draft {
        return bad("a draft deal lies open and cannot be prepared".into());
    }
    let rows = layout.rows;
    if deal.rows.len() != rows || deal.rows.iter().any(|r| r.len() != 1) {
        return bad(format!("rows must be {rows} rows of exactly one card each"));
    }
    if deal.hands.len() != usize::from(setup.players) {
        return bad(format!(
            "hands must hold one hand per seat ({})",
            setup.players
        ));
    }
    let size = layout.hand_size;
    if let Some(i) = deal.hands.iter().position(|h| h.len() != size) {
        return bad(format!("hand {i} must hold {size} cards"));
    }
    let deck = layout.deck(setup.players);
    let mut seen = CardSet::empty();
    for card in deal.rows.iter().chain(&deal.hands).flatten() {
        if !deck.contains(*card) {
            return bad(format!("card {card} is not in this game's deck"));
        }
        if !seen.insert(*card) {
            return bad(format!("card {card} appears twice"));
        }
    }
    Ok(())
}
