//! The cards of "Nimm oder schieb" (seed 000): the values 3–35 drawn as standard-deck cards,
//! and the score of a hand.
//!
//! ♣ 3–10, J, Q, K = 3–13; ♦ A, 2–10, J, Q, K = 14–26; ♥ A, 2–9 = 27–35. Runs of consecutive
//! values count only their lowest value (runs cross suits); each chip left is one point off.

use serde::{Deserialize, Serialize};

use crate::card::CardSet;

/// Lowest card value.
pub const LOWEST: u8 = 3;
/// Highest card value.
pub const HIGHEST: u8 = 35;

/// A card of the game, by value (3–35).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NosCard(u8);

/// A suit of the standard deck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Suit {
    /// ♣
    Clubs,
    /// ♦
    Diamonds,
    /// ♥
    Hearts,
}

impl Suit {
    fn symbol(self) -> char {
        match self {
            Self::Clubs => '♣',
            Self::Diamonds => '♦',
            Self::Hearts => '♥',
        }
    }

    fn from_symbol(c: char) -> Option<Self> {
        match c {
            '♣' | 'C' | 'c' => Some(Self::Clubs),
            '♦' | 'D' | 'd' => Some(Self::Diamonds),
            '♥' | 'H' | 'h' => Some(Self::Hearts),
            _ => None,
        }
    }

    /// Value of this suit's ace position (rank 1) minus one.
    fn offset(self) -> u8 {
        match self {
            Self::Clubs => 0,
            Self::Diamonds => 13,
            Self::Hearts => 26,
        }
    }
}

/// A card as frontends draw it: `{"value": 23, "suit": "diamonds", "rank": "10", "label": "10♦"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardFace {
    /// The card's value, 3–35.
    pub value: u8,
    /// `clubs` (values 3–13), `diamonds` (14–26) or `hearts` (27–35).
    pub suit: Suit,
    /// `A`, `2`–`10`, `J`, `Q` or `K`.
    pub rank: String,
    /// Rank and suit symbol, e.g. `10♦`.
    pub label: String,
}

fn rank_name(rank: u8) -> String {
    match rank {
        1 => "A".into(),
        11 => "J".into(),
        12 => "Q".into(),
        13 => "K".into(),
        n => n.to_string(),
    }
}

fn rank_number(name: &str) -> Option<u8> {
    match name {
        "A" | "a" => Some(1),
        "J" | "j" | "B" => Some(11),
        "Q" | "q" | "D" => Some(12),
        "K" | "k" => Some(13),
        n => n.parse().ok().filter(|r| (2..=10).contains(r)),
    }
}

impl NosCard {
    /// The card with this value, if it is one of the 33.
    #[must_use]
    pub fn new(value: u8) -> Option<Self> {
        (LOWEST..=HIGHEST).contains(&value).then_some(Self(value))
    }

    /// The card's value.
    #[must_use]
    pub fn value(self) -> u8 {
        self.0
    }

    /// All 33 cards, ascending.
    pub fn all() -> impl Iterator<Item = Self> {
        (LOWEST..=HIGHEST).map(Self)
    }

    /// Suit and rank.
    #[must_use]
    pub fn suit_rank(self) -> (Suit, u8) {
        match self.0 {
            v @ 3..=13 => (Suit::Clubs, v),
            v @ 14..=26 => (Suit::Diamonds, v - 13),
            v => (Suit::Hearts, v - 26),
        }
    }

    /// The card as frontends draw it.
    #[must_use]
    pub fn face(self) -> CardFace {
        let (suit, rank) = self.suit_rank();
        let rank = rank_name(rank);
        CardFace {
            value: self.0,
            suit,
            label: format!("{rank}{}", suit.symbol()),
            rank,
        }
    }

    /// Parses a label such as `10♦`, `K♣`, `A♥` (also `10D`, `KC`, `AH`).
    #[must_use]
    pub fn from_label(label: &str) -> Option<Self> {
        let label = label.trim();
        let suit_char = label.chars().last()?;
        let suit = Suit::from_symbol(suit_char)?;
        let rank = rank_number(&label[..label.len() - suit_char.len_utf8()])?;
        let card = Self::new(suit.offset() + rank)?;
        (card.suit_rank() == (suit, rank)).then_some(card)
    }
}

/// The score of a hand: its runs, their card points, and the total after chips.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HandScore {
    /// Runs of consecutive values, ascending; each counts only its lowest value.
    pub runs: Vec<Vec<u8>>,
    /// Sum of the runs' lowest values.
    pub card_points: i32,
    /// Chips left.
    pub chips: i32,
    /// `card_points − chips` (lower is better).
    pub total: i32,
}

/// Scores a set of distinct cards with `chips` chips left.
#[must_use]
pub fn score(cards: &[NosCard], chips: u32) -> HandScore {
    let mut values: Vec<u8> = cards.iter().map(|c| c.value()).collect();
    values.sort_unstable();
    values.dedup();
    let mut runs: Vec<Vec<u8>> = Vec::new();
    for v in values {
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|last| last + 1 == v) => run.push(v),
            _ => runs.push(vec![v]),
        }
    }
    let card_points: i32 = runs
        .iter()
        .filter_map(|r| r.first())
        .map(|v| i32::from(*v))
        .sum();
    let chips = i32::try_from(chips).unwrap_or(i32::MAX);
    HandScore {
        runs,
        card_points,
        chips,
        total: card_points - chips,
    }
}

/// The card points of a set of card values (3–35): the sum of each run's lowest value.
/// The same as [`score`]'s `card_points`, without allocating.
#[must_use]
pub fn card_points(cards: CardSet) -> i32 {
    cards
        .run_heads()
        .iter()
        .map(|c| i32::from(c.number()))
        .sum()
}

/// Chips each player starts a game with.
#[must_use]
pub fn starting_chips(players: u8) -> u8 {
    match players {
        0..=5 => 11,
        6 => 9,
        _ => 7,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::card::Card;

    proptest::proptest! {
        /// The card points of any set of values (by the runs' lowest cards, as a bit mask)
        /// are the points `score` finds by building the runs.
        #[test]
        fn card_points_agree_with_the_runs_of_score(
            values in proptest::collection::btree_set(3u8..=35, 0..=24),
        ) {
            let set: CardSet = values.iter().map(|v| Card::new(*v).unwrap()).collect();
            let hand: Vec<NosCard> = values.iter().map(|v| NosCard::new(*v).unwrap()).collect();
            proptest::prop_assert_eq!(card_points(set), score(&hand, 0).card_points);
        }
    }

    fn cards(values: &[u8]) -> Vec<NosCard> {
        values.iter().map(|v| NosCard::new(*v).unwrap()).collect()
    }

    #[test]
    fn the_seeds_example_scores_77() {
        let s = score(&cards(&[6, 8, 9, 10, 13, 14, 15, 23, 24, 33]), 6);
        assert_eq!(
            s.runs,
            vec![
                vec![6],
                vec![8, 9, 10],
                vec![13, 14, 15],
                vec![23, 24],
                vec![33]
            ]
        );
        assert_eq!(s.card_points, 83);
        assert_eq!(s.total, 77);
    }

    #[test]
    fn labels_match_the_seed_table() {
        assert_eq!(NosCard::new(23).unwrap().face().label, "10♦");
        assert_eq!(NosCard::new(3).unwrap().face().label, "3♣");
        assert_eq!(NosCard::new(13).unwrap().face().label, "K♣");
        assert_eq!(NosCard::new(14).unwrap().face().label, "A♦");
        assert_eq!(NosCard::new(26).unwrap().face().label, "K♦");
        assert_eq!(NosCard::new(27).unwrap().face().label, "A♥");
        assert_eq!(NosCard::new(35).unwrap().face().label, "9♥");
        for card in NosCard::all() {
            assert_eq!(NosCard::from_label(&card.face().label), Some(card));
        }
        assert_eq!(NosCard::from_label("2♣"), None, "clubs start at 3");
        assert_eq!(NosCard::from_label("10♥"), None, "hearts end at 9");
        assert_eq!(NosCard::from_label("10D"), NosCard::new(23));
    }

    #[test]
    fn card_points_of_a_set_match_the_score() {
        let values = [6, 8, 9, 10, 13, 14, 15, 23, 24, 33];
        let set: CardSet = values.iter().map(|v| Card::new(*v).unwrap()).collect();
        assert_eq!(card_points(set), 83);
        assert_eq!(card_points(CardSet::empty()), 0);
        let three: CardSet = [3, 4, 35].iter().map(|v| Card::new(*v).unwrap()).collect();
        assert_eq!(card_points(three), 38);
        assert_eq!(
            card_points(three),
            score(&cards(&[3, 4, 35]), 0).card_points
        );
    }

    #[test]
    fn chips_by_player_count() {
        assert_eq!(
            (
                starting_chips(3),
                starting_chips(5),
                starting_chips(6),
                starting_chips(7)
            ),
            (11, 11, 9, 7)
        );
    }
}
