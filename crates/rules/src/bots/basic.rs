//! The one-look strategies: `random` (a uniformly random legal move) and `heuristic` (the
//! move with the lowest immediate expected cost). They read the game as the server holds it
//! but use only what the seat may see: its own hand and X stack, and the public table.
//! Fast enough to be the rollout policy of [`super::expert`].

use crate::board::Board;
use crate::card::{Card, CardSet};
use crate::game::Game;
use crate::model::{BotStrategy, Command, Side, Status};
use crate::nos_cards::card_points;
use crate::options::Layout;
use crate::rows::{Due, RowBoard};
use crate::take_or_pass::TakeOrPassBoard;

use super::{Random, pick};

/// The move a `random` or `heuristic` bot makes for `seat`, if the seat must act
/// (`expert` is treated as `heuristic` here).
#[must_use]
pub(crate) fn choose<R: Random + ?Sized>(
    game: &Game,
    seat: u8,
    strategy: BotStrategy,
    rng: &mut R,
) -> Option<Command> {
    if game.status() != Status::Active {
        return None;
    }
    let layout = &game.layout;
    let t = match &game.board {
        Board::TakeOrPass(t) => {
            if t.to_act != seat {
                return None;
            }
            let chips = t.chips[usize::from(seat)];
            let take = chips == 0
                || match strategy {
                    BotStrategy::Random => rng.below(2) == 0,
                    BotStrategy::Heuristic | BotStrategy::Expert => worth_taking(t, seat),
                };
            return Some(if take {
                Command::Take {}
            } else {
                Command::Pass {}
            });
        }
        Board::Rows(t) => t,
    };
    // What the seat must do, asked once (`RowBoard::due`), not whether it must act first.
    Some(match t.due(layout, game.round(), seat)? {
        Due::Draft => {
            let card = match strategy {
                BotStrategy::Random => pick(t.pool, rng)?,
                BotStrategy::Heuristic | BotStrategy::Expert => t
                    .pool
                    .iter()
                    .min_by_key(|c| (layout.table.bullheads(*c), u8::MAX - c.number()))?,
            };
            Command::DraftCard { card }
        }
        Due::Keep(cards) => {
            let card = match strategy {
                BotStrategy::Random => pick(cards, rng)?,
                BotStrategy::Heuristic | BotStrategy::Expert => {
                    keep_choice(t, layout, seat, cards)?
                }
            };
            Command::KeepCard { card }
        }
        Due::TakeRow => {
            let row = match strategy {
                BotStrategy::Random => rng.below(layout.rows),
                BotStrategy::Heuristic | BotStrategy::Expert => t.cheapest_row(layout),
            };
            Command::TakeRow {
                row: u8::try_from(row).unwrap_or(0),
            }
        }
        Due::Play(hand) => {
            let card = match strategy {
                BotStrategy::Random => pick(hand, rng)?,
                BotStrategy::Heuristic | BotStrategy::Expert => safest_card(t, layout, hand)?,
            };
            Command::PlayCard { card }
        }
    })
}

/// nimm-oder-schieb: take when the card costs no more than the chips on it (a card next to
/// one's own costs little or nothing), or, short of chips, when it costs little.
fn worth_taking(t: &TakeOrPassBoard, seat: u8) -> bool {
    let Some(open) = t
        .open
        .filter(|c| crate::nos_cards::NosCard::new(c.number()).is_some())
    else {
        return true;
    };
    let mine = t.taken[usize::from(seat)];
    let before = card_points(mine);
    let mut with = mine;
    with.insert(open);
    let after = card_points(with);
    let cost = after - before - i32::from(t.pot);
    let chips = t.chips[usize::from(seat)];
    cost <= 0 || (chips <= 3 && cost <= 6)
}

/// X nimmt!: keep a card that extends the X row (the most bullheads among them, as the X
/// row scores nothing); else start the new X row as low as possible.
fn keep_choice(t: &RowBoard, layout: &Layout, seat: u8, cards: CardSet) -> Option<Card> {
    let x_row = t.x_rows[usize::from(seat)];
    let table = layout.table;
    let appendable = match x_row.max() {
        Some(last) => cards.above(last),
        None => cards,
    };
    if appendable.is_empty() {
        cards.min()
    } else {
        appendable
            .iter()
            .max_by_key(|c| (table.bullheads(*c), u8::MAX - c.number()))
    }
}

/// The hand card with the lowest expected penalty: taking a row for certain costs its
/// bullheads; a row with room costs its bullheads times the chance that enough unseen cards
/// land between its end and the card first.
fn safest_card(t: &RowBoard, layout: &Layout, hand: CardSet) -> Option<Card> {
    let table = layout.table;
    let mut seen = hand;
    for s in t.seats().map(usize::from) {
        seen = seen
            .union(t.taken[s])
            .union(t.x_rows.get(s).copied().unwrap_or_default());
    }
    for row in &t.rows[..layout.rows] {
        seen = seen.union(*row);
    }
    let unknown = layout.deck(t.players).difference(seen);
    let unknown_len = unknown.len().max(1);
    let others = f64::from(t.players.saturating_sub(1));
    let cheapest = table.sum_set(t.rows[t.cheapest_row(layout)]);
    let cost = |card: Card| -> f64 {
        match t.target(layout, card) {
            None => f64::from(cheapest) + 0.5,
            Some((r, side)) => {
                let row = t.rows[r];
                let bullheads = f64::from(table.sum_set(row));
                let room = layout.max_lying[r].saturating_sub(row.len());
                if room == 0 {
                    return bullheads + 0.25;
                }
                // Unseen cards between the row's end and the card could arrive first.
                let (between, gap) = match (side, row.min(), row.max()) {
                    (Side::Right, _, Some(last)) => (
                        unknown.above(last).below(card).len(),
                        card.number() - last.number(),
                    ),
                    (Side::Left, Some(first), _) => (
                        unknown.above(card).below(first).len(),
                        first.number() - card.number(),
                    ),
                    _ => (0, 0),
                };
                let intruders = others * between as f64 / unknown_len as f64;
                let room = i32::try_from(room).unwrap_or(i32::MAX);
                let chance = (intruders / f64::from(room)).min(1.0).powi(room);
                chance * (bullheads + 1.0) + 0.001 * f64::from(gap)
            }
        }
    };
    hand.iter().min_by(|a, b| cost(*a).total_cmp(&cost(*b)))
}
