//! Cards of the row games and sets of them.
//!
//! A [`Card`] that exists is a valid card number (1–104); whether it belongs to a
//! particular deck is the ruleset's business. [`CardSet`] is a bit set, so hands and
//! decks cost no allocation.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// The highest card number of any row game (6 nimmt!'s 104).
pub const MAX_CARD: u8 = 104;

/// A row-game card, 1–104. Serialised as a plain integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = u8, minimum = 1, maximum = 104))]
pub struct Card(pub(crate) u8);

impl Card {
    /// The card with this number, if such a card exists.
    #[must_use]
    pub fn new(number: u8) -> Option<Self> {
        (1..=MAX_CARD).contains(&number).then_some(Self(number))
    }

    /// The printed number.
    #[must_use]
    pub fn number(self) -> u8 {
        self.0
    }
}

/// Raised when a number is not a card.
#[derive(Debug, thiserror::Error)]
#[error("{0} is not a card (1–104)")]
pub struct NotACard(pub u8);

impl TryFrom<u8> for Card {
    type Error = NotACard;
    fn try_from(value: u8) -> Result<Self, Self::Error> {
        Self::new(value).ok_or(NotACard(value))
    }
}

impl From<Card> for u8 {
    fn from(card: Card) -> Self {
        card.0
    }
}

impl std::fmt::Display for Card {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

const fn multiples(step: u32, exclude: u128) -> u128 {
    let mut mask = 0u128;
    let mut n = step;
    while n <= MAX_CARD as u32 {
        mask |= 1u128 << n;
        n += step;
    }
    mask & !exclude
}

const MULTIPLES_OF_11: u128 = multiples(11, 0);
const MULTIPLES_OF_10: u128 = multiples(10, 0);
const MULTIPLES_OF_5: u128 = multiples(5, 0);
/// Multiples of 5 that score 2: not of 10, and not 55.
const ODD_FIVES: u128 = multiples(5, MULTIPLES_OF_10 | MULTIPLES_OF_11);

/// Which bullhead column of RULES.md a ruleset scores by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreTable {
    /// 6 nimmt! and X nimmt!: 55 → 7, other multiples of 11 → 5, of 10 → 3, of 5 → 2, else 1.
    SixNimmt,
    /// 11 nimmt!: as 6 nimmt! but 55 → 5.
    ElevenNimmt,
}

impl ScoreTable {
    /// Bullheads printed on `card`.
    #[must_use]
    pub fn bullheads(self, card: Card) -> u32 {
        let n = card.number();
        if n == 55 {
            match self {
                Self::SixNimmt => 7,
                Self::ElevenNimmt => 5,
            }
        } else if n.is_multiple_of(11) {
            5
        } else if n.is_multiple_of(10) {
            3
        } else if n.is_multiple_of(5) {
            2
        } else {
            1
        }
    }

    /// Bullheads of a set of cards (by population counts over the table's classes).
    #[must_use]
    pub fn sum_set(self, cards: CardSet) -> u32 {
        let s = cards.0;
        let count = |mask: u128| (s & mask).count_ones();
        let fifty_five = if s & (1u128 << 55) != 0 {
            match self {
                Self::SixNimmt => 7,
                Self::ElevenNimmt => 5,
            }
        } else {
            0
        };
        let plain = count(!(MULTIPLES_OF_5 | MULTIPLES_OF_11));
        plain
            + 5 * count(MULTIPLES_OF_11 & !(1u128 << 55))
            + 3 * count(MULTIPLES_OF_10)
            + 2 * count(ODD_FIVES)
            + fifty_five
    }

    /// Bullheads of several cards.
    pub fn sum<'a>(self, cards: impl IntoIterator<Item = &'a Card>) -> u32 {
        cards.into_iter().map(|c| self.bullheads(*c)).sum()
    }
}

/// A list of cards inside an event (a hand, a row, the cards a placement took): up to 16
/// are stored inline, so the events of a turn cost no allocation; longer lists (an open
/// draft's deck) spill to the heap. Written as a JSON array like a `Vec`.
pub type Cards = SmallVec<[Card; 16]>;

/// A set of cards as a 128-bit set: bit `n` is card `n`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CardSet(u128);

impl CardSet {
    /// The empty set.
    #[must_use]
    pub const fn empty() -> Self {
        Self(0)
    }

    /// Cards `1..=max`.
    #[must_use]
    pub fn range(max: u8) -> Self {
        let max = max.min(MAX_CARD);
        // Bits 1..=max set.
        Self(((1u128 << (max + 1)) - 1) & !1)
    }

    /// Whether `card` is in the set.
    #[must_use]
    pub fn contains(self, card: Card) -> bool {
        self.0 & (1u128 << card.0) != 0
    }

    /// Adds `card`; true when it was not there.
    pub fn insert(&mut self, card: Card) -> bool {
        let had = self.contains(card);
        self.0 |= 1u128 << card.0;
        !had
    }

    /// Removes `card`; true when it was there.
    pub fn remove(&mut self, card: Card) -> bool {
        let had = self.contains(card);
        self.0 &= !(1u128 << card.0);
        had
    }

    /// Number of cards.
    #[must_use]
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set holds `n` cards or more: `n - 1` lowest cards cleared, is one left?
    /// (Cheaper than [`CardSet::len`] where there is no `popcnt` instruction, and the
    /// loop runs the same number of rounds for the same `n`: whether a row is full.)
    #[must_use]
    pub fn holds_at_least(self, n: usize) -> bool {
        let mut rest = self.0;
        // At most 128 rounds: after them the set is empty, as it must be for any n > 128.
        for _ in 1..n.min(129) {
            rest &= rest.wrapping_sub(1);
        }
        n == 0 || rest != 0
    }

    /// The cards whose next lower number is not in the set: the lowest card of each run of
    /// consecutive numbers.
    #[must_use]
    pub fn run_heads(self) -> Self {
        Self(self.0 & !(self.0 << 1))
    }

    /// Whether the set holds no card.
    #[must_use]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The cards in ascending order.
    #[must_use]
    pub fn iter(self) -> CardIter {
        let (low, high) = self.halves();
        CardIter { low, high }
    }

    /// The lowest card.
    #[must_use]
    pub fn min(self) -> Option<Card> {
        // By halves, like `max`.
        let (low, high) = self.halves();
        let bottom = if low != 0 {
            low.trailing_zeros()
        } else if high != 0 {
            64 + high.trailing_zeros()
        } else {
            return None;
        };
        Some(Card(u8::try_from(bottom).unwrap_or(0)))
    }

    /// The highest card.
    #[must_use]
    pub fn max(self) -> Option<Card> {
        // By halves: the high one is empty unless the set holds a card above 63.
        let (low, high) = self.halves();
        let top = if high != 0 {
            127 - high.leading_zeros()
        } else if low != 0 {
            63 - low.leading_zeros()
        } else {
            return None;
        };
        Some(Card(u8::try_from(top).unwrap_or(0)))
    }

    /// The `k`-th lowest card (0-based).
    #[must_use]
    pub fn nth(self, k: usize) -> Option<Card> {
        let (low, high) = self.halves();
        let in_low = low.count_ones() as usize;
        Self::nth_of(low, high, in_low, in_low + high.count_ones() as usize, k)
    }

    /// A card chosen by `below(len)` (a number in `0..len`), as `nth`; `None` for the empty
    /// set. The halves are counted once for both the length and the choice (the baseline
    /// x86-64 target has no `popcnt`, so a count is a dozen instructions).
    pub fn choose(self, below: impl FnOnce(usize) -> usize) -> Option<Card> {
        let (low, high) = self.halves();
        let in_low = low.count_ones() as usize;
        let len = in_low + high.count_ones() as usize;
        if len == 0 {
            return None;
        }
        Self::nth_of(low, high, in_low, len, below(len))
    }

    /// The set's low (cards 0–63) and high (64–127) halves.
    fn halves(self) -> (u64, u64) {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "the halves of the set, on purpose"
        )]
        ((self.0 as u64), (self.0 >> 64) as u64)
    }

    /// The `k`-th card of the halves `low` (holding `in_low` cards) and `high` (`len` cards
    /// in all).
    ///
    /// Without a branch on `k`: clearing `k` bits one by one ended the loop after a random
    /// number of rounds (a bot's random card), a jump the processor mispredicts nearly
    /// every pick; the select below made the engine benchmark 7-8 % faster by itself.
    fn nth_of(low: u64, high: u64, in_low: usize, len: usize, k: usize) -> Option<Card> {
        if k >= len {
            return None;
        }
        let upper = k >= in_low;
        let bits = if upper { high } else { low };
        let k = if upper { k - in_low } else { k };
        let offset = if upper { 64 } else { 0 };
        Some(Card(select64(bits, k) + offset))
    }

    /// The highest card's number, 0 for the empty set (bit 0 is no card): two bit scans and
    /// a select, no branch (see `RowBoard::target`).
    #[must_use]
    pub(crate) fn top(self) -> u32 {
        // By halves, each scanned with a bit set that is never a card, so that neither scan
        // needs a test for zero; then a select (a conditional move, no jump).
        let (low, high) = self.halves();
        let in_low = 63 - (low | 1).leading_zeros();
        let in_high = 127 - (high | 1).leading_zeros();
        if high != 0 { in_high } else { in_low }
    }

    /// The lowest card's number, 127 for the empty set (no card is that high), without a
    /// branch.
    #[must_use]
    pub(crate) fn bottom(self) -> u32 {
        (self.0 | (1 << 127)).trailing_zeros()
    }

    /// Cards in either set.
    #[must_use]
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Cards in both sets.
    #[must_use]
    pub fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// Cards of `self` not in `other`.
    #[must_use]
    pub fn difference(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// Cards above `card`.
    #[must_use]
    pub fn above(self, card: Card) -> Self {
        let mask = if card.0 >= 127 {
            0
        } else {
            !((1u128 << (card.0 + 1)) - 1)
        };
        Self(self.0 & mask)
    }

    /// Cards below `card`.
    #[must_use]
    pub fn below(self, card: Card) -> Self {
        Self(self.0 & ((1u128 << card.0) - 1))
    }

    /// The cards as a vector, ascending.
    #[must_use]
    pub fn to_vec(self) -> Vec<Card> {
        let mut out = Vec::with_capacity(self.len());
        out.extend(self.iter());
        out
    }

    /// Writes the cards, ascending, to the front of `out` and says how many there are (at
    /// most `out`'s length). A set of consecutive cards, as every deck is, is written by
    /// counting up from its lowest card instead of finding each card's bit (a tenth of the
    /// instructions for a deck of 104).
    pub fn write_ascending(self, out: &mut [Card]) -> usize {
        let (Some(low), Some(high)) = (self.min(), self.max()) else {
            return 0;
        };
        // Consecutive: the bits from the lowest card up are all ones, then all zeros.
        let from_low = self.0 >> low.0;
        if from_low & from_low.wrapping_add(1) == 0 {
            let written = usize::from(high.0 - low.0 + 1).min(out.len());
            for (i, slot) in out[..written].iter_mut().enumerate() {
                #[expect(clippy::cast_possible_truncation, reason = "below 128 cards")]
                let number = low.0.wrapping_add(i as u8);
                *slot = Card(number);
            }
            return written;
        }
        let mut written = 0;
        for (slot, card) in out.iter_mut().zip(self.iter()) {
            *slot = card;
            written += 1;
        }
        written
    }

    /// The cards as an event's list, ascending (inline up to 16 cards).
    #[must_use]
    pub fn to_cards(self) -> Cards {
        const INLINE: usize = 16;
        // The card numbers gathered into the bytes of one `u128` and the list made of them
        // at once: one round per card (a hand, a full row: the same count each time), the
        // lowest card's bit found without a branch on which half holds it. Each card enters
        // at the top byte and the earlier ones move down a byte (a shift by a constant, not
        // by a variable). The rounds count the cards: without a `popcnt` instruction (the
        // baseline x86-64 target) counting them first was a quarter of its instructions.
        // (Written card by card into a buffer, the list was then copied out of those narrow
        // stores with wide loads, which must wait for them; and a loop over each half ended
        // where the cards happened to cross from one half to the other.)
        let mut bytes = 0u128;
        let mut rest = self.0;
        let mut len = 0;
        while rest != 0 && len < INLINE {
            bytes = (bytes >> 8) | (u128::from(rest.trailing_zeros()) << 120);
            rest &= rest.wrapping_sub(1);
            len += 1;
        }
        if rest != 0 {
            return self.iter().collect();
        }
        // The lowest card is at byte `16 - len` (a shift by 128 for no cards: none left).
        let bytes = bytes.checked_shr(8 * (INLINE - len) as u32).unwrap_or(0);
        Cards::from_buf_and_len(bytes.to_le_bytes().map(Card), len)
    }
}

/// The position of the `k`-th lowest set bit of `x` (`k` below its number of ones), without a
/// branch: the bytes' counts summed up by one multiplication say which byte holds it, a
/// table says where in that byte. (The baseline x86-64 target has no `pdep` to do it in one.)
fn select64(x: u64, k: usize) -> u8 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Each byte's count of ones, then the running sum up to and including each byte.
    let mut c = x - ((x >> 1) & 0x5555_5555_5555_5555);
    c = (c & 0x3333_3333_3333_3333) + ((c >> 2) & 0x3333_3333_3333_3333);
    c = (c + (c >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    let sums = c.wrapping_mul(ONES);
    // A byte's high bit is set where its running sum is at most k: those bytes come before
    // the one holding the bit (sums grow byte by byte, and never reach 128).
    let k = k as u64 & 0x3f;
    let ks = k.wrapping_mul(ONES);
    let before = ((ks | HIGHS).wrapping_sub(sums)) & HIGHS;
    let byte = ((before >> 7).wrapping_mul(ONES) >> 56) & 0xf;
    let shift = byte * 8;
    let below = ((sums << 8) >> shift) & 0xff;
    let in_byte = (x >> shift) & 0xff;
    let rank = k.wrapping_sub(below) & 7;
    #[expect(clippy::cast_possible_truncation, reason = "all three are below 64")]
    {
        SELECT_IN_BYTE[in_byte as usize][rank as usize] + shift as u8
    }
}

/// `SELECT_IN_BYTE[b][r]`: the position of the `r`-th lowest set bit of the byte `b`.
static SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut r = 0;
        let mut bit = 0;
        while bit < 8 {
            if b & (1 << bit) != 0 {
                table[b][r] = bit;
                r += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    table
};

/// The cards of a [`CardSet`], ascending; knows its length, so collecting allocates once.
/// (By 64-bit halves: the baseline x86-64 target has no `tzcnt`, so a `u128` bit scan is
/// two scans and a select.)
#[derive(Clone, Debug)]
pub struct CardIter {
    low: u64,
    high: u64,
}

impl Iterator for CardIter {
    type Item = Card;

    fn next(&mut self) -> Option<Card> {
        let n = if self.low != 0 {
            let n = self.low.trailing_zeros();
            self.low &= self.low - 1;
            n
        } else if self.high != 0 {
            let n = 64 + self.high.trailing_zeros();
            self.high &= self.high - 1;
            n
        } else {
            return None;
        };
        // n is at most 104 because only card bits are ever set.
        u8::try_from(n).ok().map(Card)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.low.count_ones() + self.high.count_ones()) as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for CardIter {}

impl FromIterator<Card> for CardSet {
    fn from_iter<I: IntoIterator<Item = Card>>(iter: I) -> Self {
        let mut set = Self::empty();
        for card in iter {
            set.insert(card);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn card(n: u8) -> Card {
        Card::new(n).unwrap()
    }

    #[test]
    fn card_numbers_outside_1_to_104_are_not_cards() {
        assert!(Card::new(0).is_none());
        assert!(Card::new(105).is_none());
        assert_eq!(card(104).number(), 104);
    }

    #[test]
    fn six_nimmt_deck_totals_171_bullheads() {
        let all: Vec<Card> = CardSet::range(104).to_vec();
        assert_eq!(all.len(), 104);
        assert_eq!(ScoreTable::SixNimmt.sum(&all), 171);
    }

    #[test]
    fn bullhead_table_matches_the_rules() {
        let t = ScoreTable::SixNimmt;
        assert_eq!(t.bullheads(card(55)), 7);
        assert_eq!(t.bullheads(card(11)), 5);
        assert_eq!(t.bullheads(card(10)), 3);
        assert_eq!(t.bullheads(card(15)), 2);
        assert_eq!(t.bullheads(card(1)), 1);
        assert_eq!(ScoreTable::ElevenNimmt.bullheads(card(55)), 5);
    }

    #[test]
    fn set_sums_match_card_by_card_sums() {
        for table in [ScoreTable::SixNimmt, ScoreTable::ElevenNimmt] {
            let mut set = CardSet::empty();
            for n in 1..=104 {
                set.insert(card(n));
                assert_eq!(
                    table.sum_set(set),
                    table.sum(&set.to_vec()),
                    "{table:?} up to {n}"
                );
            }
            let odd: CardSet = (1..=104).step_by(3).map(card).collect();
            assert_eq!(table.sum_set(odd), table.sum(&odd.to_vec()));
        }
    }

    #[test]
    fn min_max_nth_above_below() {
        let set: CardSet = [card(7), card(104), card(1), card(55)]
            .into_iter()
            .collect();
        assert_eq!(set.min(), Some(card(1)));
        assert_eq!(set.max(), Some(card(104)));
        assert_eq!(set.nth(2), Some(card(55)));
        assert_eq!(set.nth(4), None);
        assert_eq!(set.above(card(7)).to_vec(), vec![card(55), card(104)]);
        assert_eq!(set.below(card(55)).to_vec(), vec![card(1), card(7)]);
        assert_eq!(CardSet::empty().max(), None);
    }

    /// `to_cards` at the edges of its inline list: none, one, 16 (the lowest card at byte
    /// 0 after the last shift) and 17 (spilled), cards from both halves of the set.
    #[test]
    fn event_lists_at_the_inline_edges() {
        for n in 0..=17u8 {
            let numbers: Vec<u8> = (0..n).map(|i| 104 - i * 6).collect();
            let set: CardSet = numbers.iter().copied().map(card).collect();
            let cards = set.to_cards();
            assert_eq!(cards.as_slice(), set.to_vec().as_slice(), "{n} cards");
            assert_eq!(cards.len(), usize::from(n));
        }
    }

    /// `write_ascending` on consecutive cards (a deck: counted up) and on a set with a gap
    /// (each card's bit), into room enough and into too little.
    #[test]
    fn decks_are_written_ascending() {
        let deck = CardSet::range(104);
        let mut out = [card(1); 104];
        assert_eq!(deck.write_ascending(&mut out), 104);
        assert_eq!(out.to_vec(), deck.to_vec());
        let mut gap = deck;
        gap.remove(card(50));
        let mut out = [card(1); 104];
        assert_eq!(gap.write_ascending(&mut out), 103);
        assert_eq!(out[..103].to_vec(), gap.to_vec());
        let mut short = [card(1); 10];
        assert_eq!(deck.write_ascending(&mut short), 10);
        assert_eq!(gap.write_ascending(&mut short), 10);
        assert_eq!(short.to_vec(), deck.to_vec()[..10].to_vec());
        assert_eq!(CardSet::empty().write_ascending(&mut short), 0);
    }

    proptest::proptest! {
        /// `min`, `max`, `choose` and the iterator's length work on the set's two halves,
        /// `to_cards` gathers the numbers in one `u128`; they agree with the ascending
        /// iteration for any set (both halves, either one, empty; lists longer than the 16
        /// kept inline).
        #[test]
        fn min_max_and_event_lists_agree_with_iteration(
            numbers in proptest::collection::vec(1u8..=104, 0..40),
            pick in 0usize..1000,
        ) {
            let set: CardSet = numbers.iter().copied().map(card).collect();
            let ascending = set.to_vec();
            proptest::prop_assert_eq!(set.iter().len(), set.len());
            proptest::prop_assert_eq!(set.min(), ascending.first().copied());
            proptest::prop_assert_eq!(set.max(), ascending.last().copied());
            let cards = set.to_cards();
            proptest::prop_assert_eq!(cards.as_slice(), ascending.as_slice());
            let mut out = [card(1); 128];
            let written = set.write_ascending(&mut out);
            proptest::prop_assert_eq!(&out[..written], ascending.as_slice());
            proptest::prop_assert_eq!(cards.spilled(), ascending.len() > 16);
            // `choose` asks for a number below the set's length and takes that card.
            let mut asked = None;
            let chosen = set.choose(|len| {
                asked = Some(len);
                pick % len
            });
            let expected = (!ascending.is_empty()).then(|| ascending[pick % ascending.len()]);
            proptest::prop_assert_eq!(chosen, expected);
            proptest::prop_assert_eq!(asked, (!ascending.is_empty()).then_some(ascending.len()));
        }

        /// `nth` (a select without a branch on `k`), `top` and `bottom` (bit scans without a
        /// test for zero) agree with the ascending iteration, for every `k`, the sets of
        /// one half or both, and the empty set.
        #[test]
        fn nth_top_and_bottom_agree_with_iteration(
            numbers in proptest::collection::vec(1u8..=104, 0..70),
        ) {
            let set: CardSet = numbers.iter().copied().map(card).collect();
            let ascending = set.to_vec();
            for k in 0..=ascending.len() + 1 {
                proptest::prop_assert_eq!(set.nth(k), ascending.get(k).copied(), "k = {}", k);
            }
            let top = ascending.last().map_or(0, |c| u32::from(c.number()));
            let bottom = ascending.first().map_or(127, |c| u32::from(c.number()));
            proptest::prop_assert_eq!(set.top(), top);
            proptest::prop_assert_eq!(set.bottom(), bottom);
            for n in (0..=ascending.len() + 1).chain([128, 129, usize::MAX]) {
                proptest::prop_assert_eq!(set.holds_at_least(n), ascending.len() >= n, "n = {}", n);
            }
        }
    }

    #[test]
    fn card_set_iterates_ascending() {
        let set: CardSet = [card(7), card(104), card(1)].into_iter().collect();
        assert_eq!(set.to_vec(), vec![card(1), card(7), card(104)]);
        assert_eq!(set.len(), 3);
    }
}
