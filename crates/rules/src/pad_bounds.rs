//! The bounds of a score pad's round: what one round's entries can be for a ruleset and a
//! number of players, derived from the cards in play (see [`RoundBounds`]). Used by
//! [`Ruleset::check_round`](crate::options::Ruleset::check_round) in `pad.rs`.

use std::sync::OnceLock;

use crate::card::Card;
use crate::nos_cards::{self, HIGHEST, LOWEST};
use crate::options::Ruleset;

/// Cards of a Nimm oder schieb game that are taken (33 minus the 9 removed unseen).
pub const NOS_CARDS_IN_PLAY: u8 = 24;
/// The most card points one Nimm oder schieb hand can score: the lowest values of its runs
/// are never adjacent, so at best they are 3, 5, …, 35, which add up to 323.
pub const NOS_MOST_HAND_POINTS: i64 = 323;

/// The bounds of one round's entries (one entry per player) for a ruleset and a number of
/// players, derived from the cards in play:
///
/// **6 nimmt! and 11 nimmt!** (`n` players, 10 hand cards each, 4 rows; a row holds at most
/// 5 cards, the 6th takes them): `10n + 4` cards are in play, any of the deck (1–104 with
/// the 6-nimmt bullheads, 1–100 with the 11-nimmt ones; the tactical deck 1 … `10n + 4` is
/// one such choice, and no other option changes the counts).
/// - At the end of the round each of the 4 rows holds 1 to 5 cards, so the players took
///   `10n + 4 − 20 = 10n − 16` to `10n` cards together: the round adds up to at least the
///   `10n − 16` lowest and at most the `10n` highest bullhead values of the deck.
/// - A player takes at most one row of at most 5 cards with each of their 10 cards, so
///   takes at most 50 cards: an entry is at most the `min(50, 10n)` highest values.
/// - No entry is negative.
///
/// **X nimmt!** (`n` players, 8 hand cards each, 3 rows; deck 1–100, 6-nimmt bullheads):
/// `8n + 3` cards are in play; at the end each row still holds at least one card, so at
/// most `8n` cards lie anywhere else (hands, X rows, X stacks). The score is the hand plus
/// twice the X stack, so each of those cards counts at most twice: the round, and so each
/// entry, is at most twice the `8n` highest bullhead values. No entry is negative.
///
/// **Nimm oder schieb** (`n` players, `c` = [`nos_cards::starting_chips`] each, `C = n·c`
/// chips in all; 24 of the 33 values 3–35 are in play and every one of them is taken): a
/// player's entry is `points − chips`, where `points` is the sum of the lowest values of
/// the runs in their cards.
/// - Chips are conserved: at the end the players hold exactly the `C` chips handed out.
/// - A player's points are 0 (no card) or 3 ..= [`NOS_MOST_HAND_POINTS`] (323).
/// - Entry: at most 323 (no chips left); at least `3 − C`: a player who took no card only
///   ever paid chips, so holds at most `c` and scores at least `−c`; one who took a card
///   has at least 3 points and at most all `C` chips.
/// - Round sum: all points minus `C`. One player holding 3, 4, …, 26 scores 3 points for
///   all 24 cards; no card scores more than its value, so all points together are at most
///   the 24 highest values, 12 + 13 + … + 35 = 564. Sum: `3 − C ..= 564 − C`.
///
/// These bounds are checked one entry at a time and on the sum; Nimm oder schieb also asks
/// for one split of cards and chips behind all entries at once ([`nos_split_exists`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundBounds {
    /// Lowest entry of one player.
    pub entry_min: i64,
    /// Highest entry of one player.
    pub entry_max: i64,
    /// Lowest sum of a round's entries.
    pub sum_min: i64,
    /// Highest sum of a round's entries.
    pub sum_max: i64,
}

/// The bullhead values of a ruleset's full deck, highest first.
fn deck_values(ruleset: Ruleset) -> Vec<i64> {
    let table = ruleset.score_table();
    let mut values: Vec<i64> = (1..=ruleset.deck_max())
        .filter_map(Card::new)
        .map(|card| i64::from(table.bullheads(card)))
        .collect();
    values.sort_unstable_by(|a, b| b.cmp(a));
    values
}

/// The sum of the `k` highest of `values` (sorted highest first).
fn highest(values: &[i64], k: usize) -> i64 {
    values.iter().take(k).sum()
}

/// The sum of the `k` lowest of `values` (sorted highest first).
fn lowest(values: &[i64], k: usize) -> i64 {
    values.iter().rev().take(k).sum()
}

/// All chips of a Nimm oder schieb table of `players`.
pub(crate) fn nos_all_chips(players: usize) -> i64 {
    let each = nos_cards::starting_chips(u8::try_from(players).unwrap_or(u8::MAX));
    i64::try_from(players).unwrap_or(i64::MAX) * i64::from(each)
}

impl RoundBounds {
    /// 6 nimmt! and 11 nimmt!: 10 hand cards, 4 rows of at most 5.
    pub(crate) fn ten_card_rows(ruleset: Ruleset, players: usize) -> Self {
        const HAND: usize = 10;
        const ROWS: usize = 4;
        const ROW_HOLDS: usize = 5;
        let deck = deck_values(ruleset);
        let in_play = (HAND * players + ROWS).min(deck.len());
        let taken_most = in_play.saturating_sub(ROWS);
        let taken_least = in_play.saturating_sub(ROWS * ROW_HOLDS);
        Self {
            entry_min: 0,
            entry_max: highest(&deck, (HAND * ROW_HOLDS).min(taken_most)),
            sum_min: lowest(&deck, taken_least),
            sum_max: highest(&deck, taken_most),
        }
    }

    /// X nimmt!: 8 hand cards, 3 rows, the X stack counts twice.
    pub(crate) fn x_nimmt(players: usize) -> Self {
        const HAND: usize = 8;
        let deck = deck_values(Ruleset::XNimmt);
        let off_table = (HAND * players).min(deck.len());
        let most = 2 * highest(&deck, off_table);
        Self {
            entry_min: 0,
            entry_max: most,
            sum_min: 0,
            sum_max: most,
        }
    }

    /// Nimm oder schieb: chips conserved, 24 cards in play.
    pub(crate) fn nimm_oder_schieb(players: usize) -> Self {
        let all_chips = nos_all_chips(players);
        let in_play = i64::from(NOS_CARDS_IN_PLAY);
        // 12 + … + 35: the 24 highest values.
        let most_points = (i64::from(HIGHEST) - in_play + 1..=i64::from(HIGHEST)).sum::<i64>();
        let least_points = i64::from(LOWEST);
        Self {
            entry_min: least_points - all_chips,
            entry_max: NOS_MOST_HAND_POINTS,
            sum_min: least_points - all_chips,
            sum_max: most_points - all_chips,
        }
    }
}

/// Card points one player can reach (0 ..= 323), in words of the bit set of [`NosSplits`].
const NOS_POINTS: usize = 324;
/// Words of a bit set over the points of the others together (0 ..= 564).
const NOS_REST_WORDS: usize = 9;

/// Which pairs (card points of one player, card points of all others together) one end of
/// a Nimm oder schieb game can give: `pairs[a]` is the bit set of the others' points `b`.
struct NosSplits {
    pairs: Vec<[u64; NOS_REST_WORDS]>,
}

impl NosSplits {
    /// Walks the 33 values upwards; each is removed (exactly 9 are), held by the one player
    /// (it scores its value unless the one player also holds the value below it), or held
    /// by one of the others. An other's card scores its value unless the value below is
    /// held by the same other player; since the others' cards may be split among them in
    /// any way, a card of the others right above another card of the others scores either
    /// 0 or its value. Every real end of a game is one of these walks, so a pair that no
    /// walk reaches cannot happen (the converse need not hold).
    fn compute() -> Self {
        const REMOVED: usize = 9;
        type Bits = [u64; NOS_REST_WORDS];
        // Index: (holder of the value below: 0 nobody, 1 the player, 2 the others, removed
        // so far, the player's points).
        let index = |prev: usize, removed: usize, a: usize| {
            (prev * (REMOVED + 1) + removed) * NOS_POINTS + a
        };
        let size = 3 * (REMOVED + 1) * NOS_POINTS;
        let shifted = |bits: &Bits, by: usize| -> Bits {
            let (words, offset) = (by / 64, by % 64);
            let mut out = [0u64; NOS_REST_WORDS];
            for i in (words..NOS_REST_WORDS).rev() {
                let src = i - words;
                let mut w = bits.get(src).copied().unwrap_or(0) << offset;
                if offset > 0 && src > 0 {
                    w |= bits.get(src - 1).copied().unwrap_or(0) >> (64 - offset);
                }
                if let Some(slot) = out.get_mut(i) {
                    *slot = w;
                }
            }
            out
        };
        let or_into = |states: &mut Vec<Bits>, at: usize, bits: &Bits| {
            if let Some(slot) = states.get_mut(at) {
                for (s, b) in slot.iter_mut().zip(bits) {
                    *s |= b;
                }
            }
        };
        let mut states: Vec<Bits> = vec![[0; NOS_REST_WORDS]; size];
        if let Some(start) = states.get_mut(index(0, 0, 0)) {
            start[0] = 1;
        }
        for value in LOWEST..=HIGHEST {
            let v = usize::from(value);
            let mut next: Vec<Bits> = vec![[0; NOS_REST_WORDS]; size];
            for prev in 0..3 {
                for removed in 0..=REMOVED {
                    for a in 0..NOS_POINTS {
                        let Some(bits) = states.get(index(prev, removed, a)).copied() else {
                            continue;
                        };
                        if bits.iter().all(|w| *w == 0) {
                            continue;
                        }
                        if removed < REMOVED {
                            or_into(&mut next, index(0, removed + 1, a), &bits);
                        }
                        let mine = if prev == 1 { a } else { a + v };
                        if mine < NOS_POINTS {
                            or_into(&mut next, index(1, removed, mine), &bits);
                        }
                        let others = index(2, removed, a);
                        or_into(&mut next, others, &shifted(&bits, v));
                        if prev == 2 {
                            or_into(&mut next, others, &bits);
                        }
                    }
                }
            }
            states = next;
        }
        let mut pairs = vec![[0u64; NOS_REST_WORDS]; NOS_POINTS];
        for (a, pair) in pairs.iter_mut().enumerate() {
            for prev in 0..3 {
                if let Some(bits) = states.get(index(prev, REMOVED, a)) {
                    for (p, b) in pair.iter_mut().zip(bits) {
                        *p |= b;
                    }
                }
            }
        }
        Self { pairs }
    }

    /// The splits, computed once per process.
    fn get() -> &'static Self {
        static SPLITS: OnceLock<NosSplits> = OnceLock::new();
        SPLITS.get_or_init(Self::compute)
    }

    /// Whether one player can hold `mine` card points while the others hold `others`.
    fn possible(&self, mine: i64, others: i64) -> bool {
        let (Ok(a), Ok(b)) = (usize::try_from(mine), usize::try_from(others)) else {
            return false;
        };
        self.pairs
            .get(a)
            .and_then(|bits| bits.get(b / 64))
            .is_some_and(|word| word >> (b % 64) & 1 == 1)
    }
}

/// Whether the entries of a Nimm oder schieb round can all be true at once, seen from
/// `player`: there are chips `h_i ≥ 0` for every player, adding up to all `C` chips, such
/// that every player's card points `e_i + h_i` are possible on their own (0 with at most
/// the `c` starting chips, since chips only come with cards, or 3 ..= 323), and `player`'s
/// points beside the others' points together are a pair some split of 24 cards gives
/// (walked over the 33 values once per process). A real round passes this for every player.
#[must_use]
pub fn nos_split_exists(scores: &[i32], player: usize) -> bool {
    let players = scores.len();
    let all_chips = nos_all_chips(players);
    let each = all_chips / i64::try_from(players.max(1)).unwrap_or(1);
    // Chip counts fit a u64 bit set (at most 5 × 11 = 55 chips).
    if !(0..63).contains(&all_chips) {
        return false;
    }
    let full: u64 = (1u64 << (all_chips + 1)).wrapping_sub(1);
    // Bit h: the player may end with h chips.
    let chips_of = |entry: i64| -> u64 {
        (0..=all_chips)
            .filter(|h| {
                let points = entry + h;
                (points == 0 && *h <= each)
                    || (i64::from(LOWEST)..=NOS_MOST_HAND_POINTS).contains(&points)
            })
            .fold(0u64, |bits, h| bits | 1 << h)
    };
    let entries: Vec<i64> = scores.iter().map(|s| i64::from(*s)).collect();
    let mut others: u64 = 1;
    for (i, entry) in entries.iter().enumerate() {
        if i == player {
            continue;
        }
        let mine = chips_of(*entry);
        let mut sums = 0u64;
        for h in (0..=all_chips).filter(|h| mine >> h & 1 == 1) {
            sums |= others << h;
        }
        others = sums & full;
    }
    let Some(entry) = entries.get(player).copied() else {
        return false;
    };
    let all_points = entries.iter().sum::<i64>() + all_chips;
    let splits = NosSplits::get();
    let mine = chips_of(entry);
    (0..=all_chips).any(|h| {
        mine >> h & 1 == 1
            && others >> (all_chips - h) & 1 == 1
            && splits.possible(entry + h, all_points - entry - h)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_nimm_oder_schieb_splits_reach_323_points_for_one_hand() {
        let splits = NosSplits::get();
        let best = (0..NOS_POINTS)
            .rev()
            .find(|a| splits.pairs[*a].iter().any(|w| *w != 0))
            .unwrap();
        assert_eq!(i64::try_from(best).unwrap(), NOS_MOST_HAND_POINTS);
        // 3, 5, …, 35 for one player, seven of the even values for the others.
        assert!(splits.possible(323, 4 + 6 + 8 + 10 + 12 + 14 + 16));
        assert!(
            !splits.possible(323, 69),
            "the others' seven even cards score at least 4 + 6 + … + 16"
        );
        assert!(!splits.possible(323, 3), "3 is the player's");
        // One player holding 3 … 26, nobody else anything.
        assert!(splits.possible(3, 0));
        assert!(!splits.possible(0, 2));
        assert!(
            !splits.possible(300, 11),
            "a 300-point hand leaves the others more"
        );
    }
}
