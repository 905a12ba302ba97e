//! Rulesets and their options, parsed into types: an `Options` value that exists is valid.

use serde::{Deserialize, Serialize};

use crate::card::{CardSet, ScoreTable};
use crate::error::RuleError;

/// The row games the server plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Ruleset {
    /// 6 nimmt! (seeds 001, 003).
    #[serde(rename = "6-nimmt")]
    SixNimmt,
    /// 11 nimmt! as seed 004 describes it.
    #[serde(rename = "11-nimmt")]
    ElevenNimmt,
    /// X nimmt! (seed 002).
    #[serde(rename = "x-nimmt")]
    XNimmt,
    /// Nimm oder schieb (seed 000), a take-or-pass game on a standard deck.
    #[serde(rename = "nimm-oder-schieb")]
    NimmOderSchieb,
}

impl Ruleset {
    /// Every playable ruleset.
    pub const ALL: [Self; 4] = [
        Self::SixNimmt,
        Self::ElevenNimmt,
        Self::XNimmt,
        Self::NimmOderSchieb,
    ];

    /// The API name, e.g. `6-nimmt`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::SixNimmt => "6-nimmt",
            Self::ElevenNimmt => "11-nimmt",
            Self::XNimmt => "x-nimmt",
            Self::NimmOderSchieb => "nimm-oder-schieb",
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
            Self::ElevenNimmt => (2, 9),
            Self::XNimmt => (2, 4),
            Self::NimmOderSchieb => (3, 7),
        }
    }

    /// The bullhead column this ruleset scores by.
    #[must_use]
    pub fn score_table(self) -> ScoreTable {
        match self {
            Self::SixNimmt | Self::XNimmt | Self::NimmOderSchieb => ScoreTable::SixNimmt,
            Self::ElevenNimmt => ScoreTable::ElevenNimmt,
        }
    }

    /// Highest card number of the full deck.
    #[must_use]
    pub fn deck_max(self) -> u8 {
        match self {
            Self::SixNimmt => 104,
            Self::ElevenNimmt | Self::XNimmt => 100,
            Self::NimmOderSchieb => crate::nos_cards::HIGHEST,
        }
    }

    /// The default options.
    #[must_use]
    pub fn default_options(self) -> Options {
        let end = match self {
            Self::SixNimmt | Self::ElevenNimmt => EndCondition::Points(66),
            Self::XNimmt => EndCondition::Rounds(2),
            Self::NimmOderSchieb => EndCondition::Rounds(1),
        };
        Options {
            end,
            ..Options::default()
        }
    }

    /// Whether the options `deck`, `deal`, `placement` exist in this ruleset.
    #[must_use]
    pub fn has_variants(self) -> bool {
        self == Self::SixNimmt
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

/// The options of a game as the rules hold them (a preset's, a `game_created` event's).
/// Reading fills in a missing field with its default; writing always sends all but
/// `chips`, which is left out while `hidden`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Options {
    /// `full` (default) or `tactical`.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub deck: DeckOption,
    /// `random` (default) or `draft`.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub deal: DealOption,
    /// `right` (default) or `both_ends`.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub placement: PlacementOption,
    /// `{"points": 66}` (default) or `{"rounds": k}`; for x-nimmt the deals, for
    /// nimm-oder-schieb the games of a match, as rounds.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub end: EndCondition,
    /// nimm-oder-schieb: whether chip counts are `hidden` (default) or `open`.
    #[serde(default, skip_serializing_if = "ChipsOption::is_hidden")]
    pub chips: ChipsOption,
}

/// `chips` (nimm-oder-schieb): who sees chip counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ChipsOption {
    /// Each player sees only their own count.
    #[default]
    Hidden,
    /// Everyone's count is shown.
    Open,
}

impl ChipsOption {
    /// Whether this is the default (left out of serialised options).
    #[must_use]
    pub fn is_hidden(&self) -> bool {
        *self == Self::Hidden
    }
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
            chips: ChipsOption::Hidden,
        }
    }
}

impl Options {
    /// Checks the options against the ruleset and the number of players.
    ///
    /// # Errors
    /// [`RuleError::InvalidOptions`] for out-of-range values or combinations the rules forbid.
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
            EndCondition::Points(_) if ruleset == Ruleset::XNimmt => {
                return Err(RuleError::InvalidOptions(
                    "x-nimmt ends after a number of deals (`deals`)".into(),
                ));
            }
            EndCondition::Points(_) if ruleset == Ruleset::NimmOderSchieb => {
                return Err(RuleError::InvalidOptions(
                    "nimm-oder-schieb ends after a number of games (`games`)".into(),
                ));
            }
            _ => {}
        }
        if self.chips != ChipsOption::Hidden && ruleset != Ruleset::NimmOderSchieb {
            return Err(RuleError::InvalidOptions(
                "`chips` is a nimm-oder-schieb option".into(),
            ));
        }
        let plain = Options {
            end: self.end,
            chips: self.chips,
            ..Options::default()
        };
        if !ruleset.has_variants() && *self != plain {
            return Err(RuleError::InvalidOptions(format!(
                "{} has no deck, deal or placement options",
                ruleset.name()
            )));
        }
        if self.deal == DealOption::Draft && self.deck != DeckOption::Tactical {
            return Err(RuleError::InvalidOptions(
                "deal: draft requires deck: tactical".into(),
            ));
        }
        Ok(())
    }

    /// The cards in play for `players` players, ascending.
    #[must_use]
    pub fn deck(&self, ruleset: Ruleset, players: u8) -> CardSet {
        if ruleset == Ruleset::NimmOderSchieb {
            // The 33 cards 3–35.
            return CardSet::range(crate::nos_cards::HIGHEST)
                .difference(CardSet::range(crate::nos_cards::LOWEST - 1));
        }
        match self.deck {
            DeckOption::Full => CardSet::range(ruleset.deck_max()),
            DeckOption::Tactical => CardSet::range(players.saturating_mul(10).saturating_add(4)),
        }
    }
}

/// The shape of a game's table, derived from ruleset and options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The ruleset.
    pub ruleset: Ruleset,
    /// Bullhead column.
    pub table: ScoreTable,
    /// Number of centre rows.
    pub rows: usize,
    /// Most cards that can lie in each row; the next card takes them.
    pub max_lying: [usize; MAX_ROWS],
    /// The capacity printed on each row card (6 nimmt!: full at 5; X nimmt!: 3, 4, 5 —
    /// the card that makes the row reach it takes the others).
    pub capacity: [usize; MAX_ROWS],
    /// Hand cards dealt per player.
    pub hand_size: usize,
    /// Personal X rows and X stacks (X nimmt!).
    pub x_rows: bool,
    /// The options.
    pub options: Options,
}

/// Most centre rows of any ruleset.
pub const MAX_ROWS: usize = 4;
/// Most seats of any ruleset.
pub const MAX_SEATS: usize = 10;
/// Most seats of a ruleset with X rows (x-nimmt).
pub const MAX_X_SEATS: usize = 4;

impl Layout {
    /// The layout of a ruleset with options.
    #[must_use]
    pub fn new(ruleset: Ruleset, options: Options) -> Self {
        match ruleset {
            Ruleset::SixNimmt | Ruleset::ElevenNimmt => Self {
                ruleset,
                table: ruleset.score_table(),
                rows: 4,
                max_lying: [5; MAX_ROWS],
                capacity: [5; MAX_ROWS],
                hand_size: 10,
                x_rows: false,
                options,
            },
            Ruleset::XNimmt => Self {
                ruleset,
                table: ruleset.score_table(),
                rows: 3,
                max_lying: [2, 3, 4, 0],
                capacity: [3, 4, 5, 0],
                hand_size: 8,
                x_rows: true,
                options,
            },
            Ruleset::NimmOderSchieb => Self {
                ruleset,
                table: ruleset.score_table(),
                rows: 0,
                max_lying: [0; MAX_ROWS],
                capacity: [0; MAX_ROWS],
                hand_size: 0,
                x_rows: false,
                options,
            },
        }
    }

    /// The cards in play for `players` players.
    #[must_use]
    pub fn deck(&self, players: u8) -> CardSet {
        self.options.deck(self.ruleset, players)
    }

    /// Whether this is the take-or-pass game rather than a row game.
    #[must_use]
    pub fn take_or_pass(&self) -> bool {
        self.ruleset == Ruleset::NimmOderSchieb
    }
}

/// Options as a client sends them when creating a game. Which fields a ruleset takes is
/// part of the API: `6-nimmt` `deck`, `deal`, `placement`, `end` (and a `preset`);
/// `11-nimmt` `end`; `x-nimmt` `deals`; `nimm-oder-schieb` `games` and `chips`. Fields
/// left out take the preset's or the default value; a field the ruleset does not take is
/// refused, whatever its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OptionsInput {
    /// 6-nimmt: `full` or `tactical`.
    pub deck: Option<DeckOption>,
    /// 6-nimmt: `random` or `draft` (needs `deck: tactical`).
    pub deal: Option<DealOption>,
    /// 6-nimmt: `right` or `both_ends`.
    pub placement: Option<PlacementOption>,
    /// 6-nimmt, 11-nimmt: `{"points": N}` (1–999) or `{"rounds": k}` (1–50).
    pub end: Option<EndCondition>,
    /// x-nimmt: the number of deals, 1–50 (default 2).
    pub deals: Option<u16>,
    /// nimm-oder-schieb: the number of games of the match, 1–50 (default 1).
    pub games: Option<u16>,
    /// nimm-oder-schieb: `hidden` (default) or `open` chip counts.
    pub chips: Option<ChipsOption>,
}

/// A game's options as the API shows them: exactly the fields its ruleset takes at
/// creation ([`OptionsInput`]), with the defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OptionsView {
    /// 6-nimmt: `full` or `tactical`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub deck: Option<DeckOption>,
    /// 6-nimmt: `random` or `draft`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub deal: Option<DealOption>,
    /// 6-nimmt: `right` or `both_ends`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub placement: Option<PlacementOption>,
    /// 6-nimmt, 11-nimmt: when the game ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub end: Option<EndCondition>,
    /// x-nimmt: the number of deals.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub deals: Option<u16>,
    /// nimm-oder-schieb: the number of games of the match.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub games: Option<u16>,
    /// nimm-oder-schieb: who sees chip counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub chips: Option<ChipsOption>,
}

impl Options {
    /// The options as the API shows them for `ruleset` (see [`OptionsView`]).
    #[must_use]
    pub fn view(&self, ruleset: Ruleset) -> OptionsView {
        let rounds = match self.end {
            EndCondition::Rounds(r) => Some(r),
            EndCondition::Points(_) => None,
        };
        let none = OptionsView {
            deck: None,
            deal: None,
            placement: None,
            end: None,
            deals: None,
            games: None,
            chips: None,
        };
        match ruleset {
            Ruleset::SixNimmt => OptionsView {
                deck: Some(self.deck),
                deal: Some(self.deal),
                placement: Some(self.placement),
                end: Some(self.end),
                ..none
            },
            Ruleset::ElevenNimmt => OptionsView {
                end: Some(self.end),
                ..none
            },
            Ruleset::XNimmt => OptionsView {
                deals: rounds,
                ..none
            },
            Ruleset::NimmOderSchieb => OptionsView {
                games: rounds,
                chips: Some(self.chips),
                ..none
            },
        }
    }
}

/// The ruleset, options and table size a game is created with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Setup {
    /// Which game is played.
    pub ruleset: Ruleset,
    /// Options (validated).
    pub options: Options,
    /// Number of seats.
    pub players: u8,
}

impl Setup {
    /// The setup of a new game from what a client sends: the ruleset, the number of seats,
    /// a preset (6-nimmt only) and options that override the preset's or the defaults.
    ///
    /// # Errors
    /// [`RuleError::InvalidOptions`] for a field the ruleset does not take, a preset for
    /// another ruleset, or values the rules forbid (see [`Options::validate`]).
    pub fn from_input(
        ruleset: Ruleset,
        players: u8,
        preset: Option<Preset>,
        input: Option<OptionsInput>,
    ) -> Result<Self, RuleError> {
        let input = input.unwrap_or_default();
        let given = |present: bool, field: &str, takers: &str| {
            if present {
                Err(RuleError::InvalidOptions(format!(
                    "`{field}` is an option of {takers}, not of {}",
                    ruleset.name()
                )))
            } else {
                Ok(())
            }
        };
        let six = ruleset == Ruleset::SixNimmt;
        given(!six && input.deck.is_some(), "deck", "6-nimmt")?;
        given(!six && input.deal.is_some(), "deal", "6-nimmt")?;
        given(!six && input.placement.is_some(), "placement", "6-nimmt")?;
        given(!six && preset.is_some(), "preset", "6-nimmt")?;
        given(
            matches!(ruleset, Ruleset::XNimmt | Ruleset::NimmOderSchieb) && input.end.is_some(),
            "end",
            "6-nimmt and 11-nimmt (x-nimmt counts `deals`, nimm-oder-schieb `games`)",
        )?;
        given(
            ruleset != Ruleset::XNimmt && input.deals.is_some(),
            "deals",
            "x-nimmt",
        )?;
        given(
            ruleset != Ruleset::NimmOderSchieb && input.games.is_some(),
            "games",
            "nimm-oder-schieb",
        )?;
        given(
            ruleset != Ruleset::NimmOderSchieb && input.chips.is_some(),
            "chips",
            "nimm-oder-schieb",
        )?;
        let mut options = preset.map_or_else(|| ruleset.default_options(), Preset::options);
        options.deck = input.deck.unwrap_or(options.deck);
        options.deal = input.deal.unwrap_or(options.deal);
        options.placement = input.placement.unwrap_or(options.placement);
        options.end = input
            .end
            .or(input.deals.or(input.games).map(EndCondition::Rounds))
            .unwrap_or(options.end);
        options.chips = input.chips.unwrap_or(options.chips);
        options.validate(ruleset, players)?;
        Ok(Self {
            ruleset,
            options,
            players,
        })
    }
}
