//! Rulesets and their options, parsed into types: an `Options` value that exists is valid.

use serde::{Deserialize, Serialize};

use crate::card::{Card, CardSet, ScoreTable};
use crate::error::RuleError;

/// The rulesets the server knows. Only the row games listed here can be played so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Ruleset {
    /// 6 nimmt! (seeds 001, 003).
    #[serde(rename = "6-nimmt")]
    SixNimmt,
}

impl Ruleset {
    /// Every playable ruleset.
    pub const ALL: [Self; 1] = [Self::SixNimmt];

    /// The API name, e.g. `6-nimmt`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::SixNimmt => "6-nimmt",
        }
    }

    /// Parses an API name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Fewest and most players.
    #[must_use]
    pub fn players(self) -> (u8, u8) {
        match self {
            Self::SixNimmt => (2, 10),
        }
    }

    /// The bullhead column this ruleset scores by.
    #[must_use]
    pub fn score_table(self) -> ScoreTable {
        match self {
            Self::SixNimmt => ScoreTable::SixNimmt,
        }
    }

    /// Highest card number of the full deck.
    #[must_use]
    pub fn deck_max(self) -> u8 {
        match self {
            Self::SixNimmt => 104,
        }
    }
}

/// `deck`: which cards are in play.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum DeckOption {
    /// All 104 cards.
    #[default]
    Full,
    /// Only 1 … 10·players+4, so every card is in play.
    Tactical,
}

/// `deal`: how hands are formed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum DealOption {
    /// Shuffled and dealt.
    #[default]
    Random,
    /// The open draft (needs `deck: tactical`).
    Draft,
}

/// `placement`: where a card may go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum PlacementOption {
    /// Right end only.
    #[default]
    Right,
    /// Left or right end (Profi).
    BothEnds,
}

/// When the game ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EndCondition {
    /// After the round in which someone's total reaches this many points (1–999).
    Points(u16),
    /// After this many rounds (1–50).
    Rounds(u16),
}

impl Default for EndCondition {
    fn default() -> Self {
        Self::Points(66)
    }
}

/// Options of a row game, as sent by a client (every field optional).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Options {
    /// `full` (default) or `tactical`.
    pub deck: DeckOption,
    /// `random` (default) or `draft`.
    pub deal: DealOption,
    /// `right` (default) or `both_ends`.
    pub placement: PlacementOption,
    /// `{"points": 66}` (default) or `{"rounds": k}`.
    pub end: EndCondition,
}

/// The named option sets of the seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Preset {
    /// full / random / right.
    Standard,
    /// tactical / random / right.
    Taktik,
    /// tactical / draft / right.
    Logik,
    /// full / random / both ends.
    Profi,
}

impl Preset {
    /// Every preset.
    pub const ALL: [Self; 4] = [Self::Standard, Self::Taktik, Self::Logik, Self::Profi];

    /// The options this preset stands for (with the default end).
    #[must_use]
    pub fn options(self) -> Options {
        let (deck, deal, placement) = match self {
            Self::Standard => (DeckOption::Full, DealOption::Random, PlacementOption::Right),
            Self::Taktik => (
                DeckOption::Tactical,
                DealOption::Random,
                PlacementOption::Right,
            ),
            Self::Logik => (
                DeckOption::Tactical,
                DealOption::Draft,
                PlacementOption::Right,
            ),
            Self::Profi => (
                DeckOption::Full,
                DealOption::Random,
                PlacementOption::BothEnds,
            ),
        };
        Options {
            deck,
            deal,
            placement,
            end: EndCondition::default(),
        }
    }
}

impl Options {
    /// Checks the options against the ruleset and the number of players.
    ///
    /// # Errors
    /// [`RuleError::InvalidOptions`] for out-of-range values or combinations the rules forbid,
    /// [`RuleError::UnsupportedOption`] for options this server cannot play yet.
    pub fn validate(&self, ruleset: Ruleset, players: u8) -> Result<(), RuleError> {
        let (min, max) = ruleset.players();
        if players < min || players > max {
            return Err(RuleError::InvalidOptions(format!(
                "{} is played by {min} to {max} players, not {players}",
                ruleset.name()
            )));
        }
        match self.end {
            EndCondition::Points(p) if !(1..=999).contains(&p) => {
                return Err(RuleError::InvalidOptions(
                    "end.points must be 1 to 999".into(),
                ));
            }
            EndCondition::Rounds(r) if !(1..=50).contains(&r) => {
                return Err(RuleError::InvalidOptions(
                    "end.rounds must be 1 to 50".into(),
                ));
            }
            _ => {}
        }
        if self.deal == DealOption::Draft && self.deck != DeckOption::Tactical {
            return Err(RuleError::InvalidOptions(
                "deal: draft requires deck: tactical".into(),
            ));
        }
        if self.deal == DealOption::Draft {
            return Err(RuleError::UnsupportedOption("deal: draft".into()));
        }
        if self.placement == PlacementOption::BothEnds {
            return Err(RuleError::UnsupportedOption("placement: both_ends".into()));
        }
        Ok(())
    }

    /// The cards in play for `players` players, ascending.
    #[must_use]
    pub fn deck(&self, ruleset: Ruleset, players: u8) -> CardSet {
        match self.deck {
            DeckOption::Full => CardSet::range(ruleset.deck_max()),
            DeckOption::Tactical => CardSet::range(players.saturating_mul(10).saturating_add(4)),
        }
    }
}

/// Number of centre rows and their capacity.
pub const ROWS: usize = 4;
/// A row is full at this many cards: the next card takes them.
pub const ROW_CAPACITY: usize = 5;
/// Hand cards per player and round.
pub const HAND_SIZE: usize = 10;

/// Whether `card` is in the deck of this game.
#[must_use]
pub fn in_deck(options: &Options, ruleset: Ruleset, players: u8, card: Card) -> bool {
    options.deck(ruleset, players).contains(card)
}
