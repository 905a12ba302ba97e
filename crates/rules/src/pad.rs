//! Score pads (seed 003's "Tafel"): keeping score of a game played with physical cards.
//!
//! A pad is event-sourced like a game: [`Pad::create`] checks a new pad and returns its
//! first event, [`Pad::decide`] checks a command against the state and returns events,
//! [`Pad::apply`] folds an event into the state and cannot fail. Totals, the end and the
//! winners are derived from the recorded rounds, so taking the last round back simply
//! reopens a finished pad.
//!
//! A round has one entry per player (zero is an explicit entry) and is refused when it
//! cannot happen in the ruleset (see [`Ruleset::check_round`]).

use serde::{Deserialize, Serialize};

use crate::options::{EndCondition, Ruleset};
use crate::pad_bounds::nos_all_chips;
pub use crate::pad_bounds::{RoundBounds, nos_split_exists};

/// Longest player name, in characters.
pub const MAX_NAME_CHARS: usize = 32;
/// Most rounds an end condition `{"rounds": k}` may name.
pub const MAX_END_ROUNDS: u16 = 50;
/// The point limits the 6 nimmt! board offers (seed 003: 33, 66 or 100).
pub const SIX_NIMMT_POINT_LIMITS: [u16; 3] = [33, 66, 100];
/// Highest point limit of 11 nimmt!.
pub const MAX_POINT_LIMIT: u16 = 999;

pub use crate::pad_bounds::{NOS_CARDS_IN_PLAY, NOS_MOST_HAND_POINTS};

/// Pad rules of each ruleset (the rulesets are the games' own: [`Ruleset`]).
impl Ruleset {
    /// The end condition when the creator names none (the game's default).
    #[must_use]
    pub fn default_end(self) -> EndCondition {
        self.default_options().end
    }

    /// Checks an end condition for this ruleset.
    ///
    /// # Errors
    /// [`PadError::InvalidEnd`] for a limit out of range or a points limit where the game
    /// ends after a number of rounds.
    pub fn check_end(self, end: EndCondition) -> Result<(), PadError> {
        match (self, end) {
            (_, EndCondition::Rounds(k)) if !(1..=MAX_END_ROUNDS).contains(&k) => Err(
                PadError::InvalidEnd(format!("rounds must be 1 to {MAX_END_ROUNDS}, not {k}")),
            ),
            (_, EndCondition::Rounds(_)) => Ok(()),
            (Self::SixNimmt, EndCondition::Points(p)) if !SIX_NIMMT_POINT_LIMITS.contains(&p) => {
                Err(PadError::InvalidEnd(format!(
                    "6-nimmt is played to 33, 66 or 100 points, not {p}"
                )))
            }
            (Self::ElevenNimmt, EndCondition::Points(p)) if !(1..=MAX_POINT_LIMIT).contains(&p) => {
                Err(PadError::InvalidEnd(format!(
                    "11-nimmt is played to 1 to {MAX_POINT_LIMIT} points, not {p}"
                )))
            }
            (Self::SixNimmt | Self::ElevenNimmt, EndCondition::Points(_)) => Ok(()),
            (Self::XNimmt | Self::NimmOderSchieb, EndCondition::Points(_)) => {
                Err(PadError::InvalidEnd(format!(
                    "{} ends after a number of rounds ({{\"rounds\": k}}), not at a point limit",
                    self.name()
                )))
            }
        }
    }

    /// The bounds of one round's entries at a table of `players`; see [`RoundBounds`] for
    /// their derivation.
    #[must_use]
    pub fn round_bounds(self, players: usize) -> RoundBounds {
        match self {
            Self::SixNimmt | Self::ElevenNimmt => RoundBounds::ten_card_rows(self, players),
            Self::XNimmt => RoundBounds::x_nimmt(players),
            Self::NimmOderSchieb => RoundBounds::nimm_oder_schieb(players),
        }
    }

    /// Checks that a round with these entries (one per player, as many as `scores`) can
    /// happen in this ruleset at a table of that many players: every entry and their sum
    /// within [`Ruleset::round_bounds`], and for Nimm oder schieb also one split of the cards
    /// and chips that gives every player their entry at once ([`nos_split_exists`]).
    ///
    /// # Errors
    /// [`PadError::ImpossibleRound`] with the bound that is broken and its numbers (the
    /// players' names are the pad's to add: [`ImpossibleRound::named`]).
    pub fn check_round(self, scores: &[i32]) -> Result<(), PadError> {
        let players = scores.len();
        let refuse = |broken: BrokenBound| {
            Err(PadError::ImpossibleRound(ImpossibleRound {
                ruleset: self,
                players,
                names: Vec::new(),
                broken,
            }))
        };
        let (min, max) = self.players();
        if !(usize::from(min)..=usize::from(max)).contains(&players) {
            return refuse(BrokenBound::PlayerCount { min, max });
        }
        let b = self.round_bounds(players);
        if let Some((player, score)) = scores
            .iter()
            .enumerate()
            .find(|(_, s)| !(b.entry_min..=b.entry_max).contains(&i64::from(**s)))
        {
            let score = *score;
            return refuse(if b.entry_min == 0 && score < 0 {
                BrokenBound::NegativeEntry { player, score }
            } else {
                BrokenBound::Entry {
                    player,
                    score,
                    min: b.entry_min,
                    max: b.entry_max,
                }
            });
        }
        let sum: i64 = scores.iter().map(|s| i64::from(*s)).sum();
        if !(b.sum_min..=b.sum_max).contains(&sum) {
            return refuse(BrokenBound::Sum {
                sum,
                min: b.sum_min,
                max: b.sum_max,
            });
        }
        if self == Self::NimmOderSchieb
            && let Some(player) = (0..players).find(|x| !nos_split_exists(scores, *x))
        {
            return refuse(BrokenBound::NoSplit {
                player,
                score: scores.get(player).copied().unwrap_or_default(),
                cards: NOS_CARDS_IN_PLAY,
                chips: nos_all_chips(players),
            });
        }
        Ok(())
    }
}

/// Why a round cannot happen: the ruleset, the number of players, the bound the entries
/// break with its numbers, and the players' names once the pad has added them — everything
/// a sentence in any language needs (the server words it in English and German).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImpossibleRound {
    /// The game scored.
    pub ruleset: Ruleset,
    /// Players at the table (entries sent).
    pub players: usize,
    /// The players' names in order; empty when the round was checked without a pad.
    pub names: Vec<String>,
    /// The bound that is broken.
    pub broken: BrokenBound,
}

/// The bound an impossible round breaks (see [`RoundBounds`] for where they come from).
/// `player` is a 0-based index into the entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokenBound {
    /// The ruleset is played by `min ..= max` players.
    PlayerCount {
        /// Fewest players.
        min: u8,
        /// Most players.
        max: u8,
    },
    /// A negative entry where entries count bullheads.
    NegativeEntry {
        /// The player.
        player: usize,
        /// Their entry.
        score: i32,
    },
    /// An entry that one player cannot get in one round: it lies within `min ..= max`.
    Entry {
        /// The player.
        player: usize,
        /// Their entry.
        score: i32,
        /// Lowest entry of one player.
        min: i64,
        /// Highest entry of one player.
        max: i64,
    },
    /// Entries whose sum a round cannot give: it lies within `min ..= max`.
    Sum {
        /// The entries' sum.
        sum: i64,
        /// Lowest sum of a round.
        min: i64,
        /// Highest sum of a round.
        max: i64,
    },
    /// Nimm oder schieb: no split of the `cards` in play and the `chips` gives this
    /// player's entry beside the others.
    NoSplit {
        /// The player.
        player: usize,
        /// Their entry.
        score: i32,
        /// Cards in play.
        cards: u8,
        /// Chips at the table.
        chips: i64,
    },
}

impl ImpossibleRound {
    /// The same refusal with the players' names (in player order).
    #[must_use]
    pub fn named(mut self, names: &[String]) -> Self {
        self.names = names.to_vec();
        self
    }

    /// The name of `player`, when the names are known.
    #[must_use]
    pub fn name(&self, player: usize) -> Option<&str> {
        self.names.get(player).map(String::as_str)
    }
}

/// A plain English statement of the numbers, for logs and tests; the sentences players
/// read are the server's (`src/http/l10n/rounds.rs`).
impl std::fmt::Display for ImpossibleRound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.ruleset.name();
        let players = self.players;
        let who = |player: usize| {
            self.name(player)
                .map_or_else(|| format!("player {player}"), |n| format!("{n:?}"))
        };
        match self.broken {
            BrokenBound::PlayerCount { min, max } => {
                write!(
                    f,
                    "{name} is played by {min} to {max} players, not {players}"
                )
            }
            BrokenBound::NegativeEntry { player, score } => write!(
                f,
                "{} has {score}, but {name} entries are bullheads and cannot be negative",
                who(player)
            ),
            BrokenBound::Entry {
                player,
                score,
                min,
                max,
            } => write!(
                f,
                "{} has {score}, but with {players} players an entry of {name} lies within \
                 {min} ..= {max}",
                who(player)
            ),
            BrokenBound::Sum { sum, min, max } => write!(
                f,
                "the entries add up to {sum}, but with {players} players a round of {name} adds \
                 up to {min} ..= {max}"
            ),
            BrokenBound::NoSplit {
                player,
                score,
                cards,
                chips,
            } => write!(
                f,
                "{} cannot have {score} beside the other entries: no split of the {cards} \
                 cards in play and the {chips} chips gives them all",
                who(player)
            ),
        }
    }
}

/// Why the pad refuses a new pad or a command. Each variant has a stable [`PadError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PadError {
    /// Too few or too many players, or names that are empty, too long or repeated.
    #[error("invalid players: {0}")]
    InvalidPlayers(String),
    /// An end condition the ruleset does not offer.
    #[error("invalid end: {0}")]
    InvalidEnd(String),
    /// A round needs exactly one entry per player.
    #[error("a round needs {expected} entries, one per player; got {got}")]
    WrongNumberOfScores {
        /// Players of the pad.
        expected: usize,
        /// Entries sent.
        got: usize,
    },
    /// Entries that cannot happen in one round of the game, and why.
    #[error("impossible round: {0}")]
    ImpossibleRound(ImpossibleRound),
    /// The end condition is met; take the last round back to correct it.
    #[error("the pad is finished; take the last round back to correct it")]
    PadFinished,
    /// Nothing to take back.
    #[error("no round has been recorded")]
    NoRoundToTakeBack,
}

impl PadError {
    /// Stable machine-readable code.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidPlayers(_) => "invalid_players",
            Self::InvalidEnd(_) => "invalid_end",
            Self::WrongNumberOfScores { .. } => "wrong_number_of_scores",
            Self::ImpossibleRound(_) => "impossible_round",
            Self::PadFinished => "pad_finished",
            Self::NoRoundToTakeBack => "no_round_to_take_back",
        }
    }
}

/// A new pad as its creator describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewPad {
    /// The game scored.
    pub ruleset: Ruleset,
    /// Player names in seating order (surrounding white space is dropped).
    pub players: Vec<String>,
    /// The end condition; `None` takes the ruleset's default.
    pub end: Option<EndCondition>,
}

/// What can be done to an existing pad.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PadCommand {
    /// Writes a round: one entry per player, in player order.
    RecordRound {
        /// The round's entries, one per player in player order.
        scores: Vec<i32>,
    },
    /// Takes the last round back (a correction).
    TakeBackLastRound,
}

/// Events of a pad, past tense. Serialised as `{"type": …, "data": {…}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum PadEvent {
    /// The pad exists.
    PadCreated {
        /// The game scored.
        ruleset: Ruleset,
        /// Player names in order.
        players: Vec<String>,
        /// The end condition.
        end: EndCondition,
    },
    /// A round was written.
    RoundRecorded {
        /// One entry per player.
        scores: Vec<i32>,
    },
    /// The last round was taken back.
    RoundTakenBack {},
}

impl PadEvent {
    /// The event's type name (`pad_created`, …).
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::PadCreated { .. } => "pad_created",
            Self::RoundRecorded { .. } => "round_recorded",
            Self::RoundTakenBack {} => "round_taken_back",
        }
    }
}

/// A player's place in the standings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Standing {
    /// 1 for the lowest total; equal totals share a place (1, 2, 2, 4).
    pub place: usize,
    /// The player's 0-based index in `players`.
    pub player: usize,
    /// The player's name as given when the pad was created.
    pub name: String,
    /// Sum of the player's entries in the rounds recorded so far.
    pub total: i64,
}

/// The state of a pad as clients see it (a pad has no hidden information).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PadView {
    /// The game scored.
    pub ruleset: Ruleset,
    /// The end condition.
    pub end: EndCondition,
    /// Player names; indexes are player numbers.
    pub players: Vec<String>,
    /// Entries per round and player (`rounds[r][p]`).
    pub rounds: Vec<Vec<i32>>,
    /// Totals per player.
    pub totals: Vec<i64>,
    /// Players by total, lowest first (ties keep player order).
    pub standings: Vec<Standing>,
    /// Whether the end condition is met.
    pub finished: bool,
    /// Player indexes with the lowest total once finished (ties share), else `null`.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub winners: Option<Vec<usize>>,
}

/// A score pad.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pad {
    ruleset: Ruleset,
    players: Vec<String>,
    end: EndCondition,
    rounds: Vec<Vec<i32>>,
}

fn check_players(ruleset: Ruleset, names: &[String]) -> Result<Vec<String>, PadError> {
    let (min, max) = ruleset.players();
    let (min, max) = (usize::from(min), usize::from(max));
    if !(min..=max).contains(&names.len()) {
        return Err(PadError::InvalidPlayers(format!(
            "{} is played by {min} to {max} players, not {}",
            ruleset.name(),
            names.len()
        )));
    }
    let mut checked: Vec<String> = Vec::with_capacity(names.len());
    for (i, raw) in names.iter().enumerate() {
        let name = raw.trim();
        let chars = name.chars().count();
        if !(1..=MAX_NAME_CHARS).contains(&chars) {
            return Err(PadError::InvalidPlayers(format!(
                "player {i}: a name has 1 to {MAX_NAME_CHARS} characters, not {chars}"
            )));
        }
        if name.chars().any(crate::text::unprintable) {
            return Err(PadError::InvalidPlayers(format!(
                "player {i}: a name cannot contain control or invisible format characters"
            )));
        }
        let lower = name.to_lowercase();
        if let Some(j) = checked.iter().position(|c| c.to_lowercase() == lower) {
            return Err(PadError::InvalidPlayers(format!(
                "players {j} and {i} are both called {name:?}; names must differ"
            )));
        }
        checked.push(name.to_owned());
    }
    Ok(checked)
}

impl Pad {
    /// The events that create a pad: checks the player count, the names and the end.
    ///
    /// # Errors
    /// [`PadError::InvalidPlayers`], [`PadError::InvalidEnd`].
    pub fn create(new: NewPad) -> Result<Vec<PadEvent>, PadError> {
        let players = check_players(new.ruleset, &new.players)?;
        let end = new.end.unwrap_or_else(|| new.ruleset.default_end());
        new.ruleset.check_end(end)?;
        Ok(vec![PadEvent::PadCreated {
            ruleset: new.ruleset,
            players,
            end,
        }])
    }

    /// Rebuilds a pad from its events. `None` when the first event is not `pad_created`.
    #[must_use]
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a PadEvent>) -> Option<Self> {
        let mut iter = events.into_iter();
        let Some(PadEvent::PadCreated {
            ruleset,
            players,
            end,
        }) = iter.next()
        else {
            return None;
        };
        let mut pad = Self {
            ruleset: *ruleset,
            players: players.clone(),
            end: *end,
            rounds: Vec::new(),
        };
        for event in iter {
            pad.apply(event);
        }
        Some(pad)
    }

    /// Checks a command and returns the events it causes.
    ///
    /// # Errors
    /// [`PadError::WrongNumberOfScores`], [`PadError::ImpossibleRound`],
    /// [`PadError::PadFinished`], [`PadError::NoRoundToTakeBack`].
    pub fn decide(&self, command: &PadCommand) -> Result<Vec<PadEvent>, PadError> {
        match command {
            PadCommand::RecordRound { scores } => {
                if self.finished() {
                    return Err(PadError::PadFinished);
                }
                if scores.len() != self.players.len() {
                    return Err(PadError::WrongNumberOfScores {
                        expected: self.players.len(),
                        got: scores.len(),
                    });
                }
                self.ruleset.check_round(scores).map_err(|e| match e {
                    PadError::ImpossibleRound(why) => {
                        PadError::ImpossibleRound(why.named(&self.players))
                    }
                    other => other,
                })?;
                Ok(vec![PadEvent::RoundRecorded {
                    scores: scores.clone(),
                }])
            }
            PadCommand::TakeBackLastRound => {
                if self.rounds.is_empty() {
                    return Err(PadError::NoRoundToTakeBack);
                }
                Ok(vec![PadEvent::RoundTakenBack {}])
            }
        }
    }

    /// Folds an event into the state. A second `pad_created` is ignored.
    pub fn apply(&mut self, event: &PadEvent) {
        match event {
            PadEvent::PadCreated { .. } => {}
            PadEvent::RoundRecorded { scores } => self.rounds.push(scores.clone()),
            PadEvent::RoundTakenBack {} => {
                self.rounds.pop();
            }
        }
    }

    /// The game scored.
    #[must_use]
    pub fn ruleset(&self) -> Ruleset {
        self.ruleset
    }

    /// Player names.
    #[must_use]
    pub fn players(&self) -> &[String] {
        &self.players
    }

    /// The end condition.
    #[must_use]
    pub fn end(&self) -> EndCondition {
        self.end
    }

    /// Entries per round and player.
    #[must_use]
    pub fn rounds(&self) -> &[Vec<i32>] {
        &self.rounds
    }

    /// Totals per player.
    #[must_use]
    pub fn totals(&self) -> Vec<i64> {
        let mut totals = vec![0i64; self.players.len()];
        for round in &self.rounds {
            for (total, score) in totals.iter_mut().zip(round) {
                *total += i64::from(*score);
            }
        }
        totals
    }

    /// Whether the end condition is met: `{"points": N}` after a round in which someone's
    /// total reaches N, `{"rounds": k}` after k rounds.
    #[must_use]
    pub fn finished(&self) -> bool {
        match self.end {
            EndCondition::Points(limit) => {
                !self.rounds.is_empty() && self.totals().iter().any(|t| *t >= i64::from(limit))
            }
            EndCondition::Rounds(k) => self.rounds.len() >= usize::from(k),
        }
    }

    /// The players with the lowest total once the pad is finished (equal totals share the
    /// win; a pad knows no chips, so Nimm oder schieb's chip tie-break is the players'
    /// business), else `None`.
    #[must_use]
    pub fn winners(&self) -> Option<Vec<usize>> {
        if !self.finished() {
            return None;
        }
        let totals = self.totals();
        let best = totals.iter().min()?;
        Some(
            totals
                .iter()
                .enumerate()
                .filter(|(_, t)| *t == best)
                .map(|(i, _)| i)
                .collect(),
        )
    }

    /// Players by total, lowest first; equal totals share a place.
    #[must_use]
    pub fn standings(&self) -> Vec<Standing> {
        let totals = self.totals();
        let mut order: Vec<usize> = (0..totals.len()).collect();
        order.sort_by_key(|&i| totals.get(i).copied().unwrap_or_default());
        let mut standings: Vec<Standing> = Vec::with_capacity(order.len());
        for (rank, &player) in order.iter().enumerate() {
            let total = totals.get(player).copied().unwrap_or_default();
            let place = match standings.last() {
                Some(prev) if prev.total == total => prev.place,
                _ => rank + 1,
            };
            standings.push(Standing {
                place,
                player,
                name: self.players.get(player).cloned().unwrap_or_default(),
                total,
            });
        }
        standings
    }

    /// The pad as clients see it.
    #[must_use]
    pub fn view(&self) -> PadView {
        PadView {
            ruleset: self.ruleset,
            end: self.end,
            players: self.players.clone(),
            rounds: self.rounds.clone(),
            totals: self.totals(),
            standings: self.standings(),
            finished: self.finished(),
            winners: self.winners(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(n: usize) -> Vec<String> {
        [
            "Anna", "Ben", "Carla", "Dan", "Eva", "Fritz", "Gabi", "Hans", "Ida", "Jan", "Kai",
        ]
        .iter()
        .take(n)
        .map(|s| (*s).to_owned())
        .collect()
    }

    fn pad(ruleset: Ruleset, players: usize, end: Option<EndCondition>) -> Pad {
        let events = Pad::create(NewPad {
            ruleset,
            players: names(players),
            end,
        })
        .unwrap();
        Pad::from_events(&events).unwrap()
    }

    fn record(pad: &mut Pad, scores: &[i32]) -> Result<(), PadError> {
        let events = pad.decide(&PadCommand::RecordRound {
            scores: scores.to_vec(),
        })?;
        events.iter().for_each(|e| pad.apply(e));
        Ok(())
    }

    fn take_back(pad: &mut Pad) -> Result<(), PadError> {
        let events = pad.decide(&PadCommand::TakeBackLastRound)?;
        events.iter().for_each(|e| pad.apply(e));
        Ok(())
    }

    fn code<T: std::fmt::Debug>(r: Result<T, PadError>) -> &'static str {
        r.unwrap_err().code()
    }

    #[test]
    fn rulesets_have_api_names_player_ranges_and_default_ends() {
        for r in Ruleset::ALL {
            assert_eq!(Ruleset::from_name(r.name()), Some(r));
            assert_eq!(serde_json::to_value(r).unwrap(), r.name());
        }
        assert_eq!(Ruleset::from_name("7-nimmt"), None);
        assert_eq!(Ruleset::SixNimmt.players(), (2, 10));
        assert_eq!(Ruleset::ElevenNimmt.players(), (2, 9));
        assert_eq!(Ruleset::XNimmt.players(), (2, 4));
        assert_eq!(Ruleset::NimmOderSchieb.players(), (3, 7));
        assert_eq!(
            pad(Ruleset::SixNimmt, 3, None).end(),
            EndCondition::Points(66)
        );
        assert_eq!(
            pad(Ruleset::ElevenNimmt, 3, None).end(),
            EndCondition::Points(66)
        );
        assert_eq!(pad(Ruleset::XNimmt, 3, None).end(), EndCondition::Rounds(2));
        assert_eq!(
            pad(Ruleset::NimmOderSchieb, 3, None).end(),
            EndCondition::Rounds(1)
        );
    }

    #[test]
    fn player_counts_outside_the_ruleset_are_refused() {
        for r in Ruleset::ALL {
            let (min, max) = r.players();
            let (min, max) = (usize::from(min), usize::from(max));
            for n in [min - 1, max + 1] {
                let e = Pad::create(NewPad {
                    ruleset: r,
                    players: names(n),
                    end: None,
                });
                assert_eq!(code(e), "invalid_players", "{} with {n}", r.name());
            }
            for n in [min, max] {
                assert!(
                    Pad::create(NewPad {
                        ruleset: r,
                        players: names(n),
                        end: None
                    })
                    .is_ok()
                );
            }
        }
    }

    #[test]
    fn names_are_trimmed_one_to_32_characters_and_distinct() {
        let create = |players: &[&str]| {
            Pad::create(NewPad {
                ruleset: Ruleset::SixNimmt,
                players: players.iter().map(|s| (*s).to_owned()).collect(),
                end: None,
            })
        };
        let events = create(&[" Anna ", "Ben"]).unwrap();
        assert_eq!(
            Pad::from_events(&events).unwrap().players(),
            ["Anna".to_owned(), "Ben".to_owned()]
        );
        assert_eq!(code(create(&["Anna", ""])), "invalid_players");
        assert_eq!(code(create(&["Anna", "   "])), "invalid_players");
        assert_eq!(code(create(&["Anna", &"x".repeat(33)])), "invalid_players");
        assert!(
            create(&["Anna", &"ö".repeat(32)]).is_ok(),
            "characters, not bytes"
        );
        assert_eq!(code(create(&["Anna", "anna"])), "invalid_players");
        assert_eq!(code(create(&["Anna", "B\nen"])), "invalid_players");
    }

    #[test]
    fn end_conditions_by_ruleset() {
        let create = |r: Ruleset, end: EndCondition| {
            Pad::create(NewPad {
                ruleset: r,
                players: names(3),
                end: Some(end),
            })
        };
        use EndCondition::{Points, Rounds};
        for p in SIX_NIMMT_POINT_LIMITS {
            assert!(create(Ruleset::SixNimmt, Points(p)).is_ok());
        }
        for p in [0, 1, 50, 65, 67, 999] {
            assert_eq!(code(create(Ruleset::SixNimmt, Points(p))), "invalid_end");
        }
        for p in [1, 40, 999] {
            assert!(create(Ruleset::ElevenNimmt, Points(p)).is_ok());
        }
        for p in [0, 1000] {
            assert_eq!(code(create(Ruleset::ElevenNimmt, Points(p))), "invalid_end");
        }
        for r in Ruleset::ALL {
            assert!(create(r, Rounds(1)).is_ok());
            assert!(create(r, Rounds(50)).is_ok());
            assert_eq!(code(create(r, Rounds(0))), "invalid_end");
            assert_eq!(code(create(r, Rounds(51))), "invalid_end");
        }
        assert_eq!(code(create(Ruleset::XNimmt, Points(66))), "invalid_end");
        assert_eq!(
            code(create(Ruleset::NimmOderSchieb, Points(66))),
            "invalid_end"
        );
    }

    #[test]
    fn six_nimmt_rounds_are_bounded_by_the_cards_in_play() {
        // 3 players: 34 cards in play, 14 to 30 of them taken.
        let b = Ruleset::SixNimmt.round_bounds(3);
        assert_eq!(
            b,
            RoundBounds {
                entry_min: 0,
                entry_max: 97,
                sum_min: 14,
                sum_max: 97
            }
        );
        let mut p = pad(Ruleset::SixNimmt, 3, Some(EndCondition::Points(100)));
        assert_eq!(code(record(&mut p, &[-1, 5, 10])), "impossible_round");
        assert_eq!(code(record(&mut p, &[60, 38, 0])), "impossible_round");
        assert_eq!(code(record(&mut p, &[0, 0, 0])), "impossible_round");
        assert_eq!(code(record(&mut p, &[13, 0, 0])), "impossible_round");
        assert!(p.rounds().is_empty(), "a refused round changes nothing");
        record(&mut p, &[14, 0, 0]).unwrap();
        record(&mut p, &[60, 37, 0]).unwrap();
        assert_eq!(p.totals(), vec![74, 37, 0]);
        // 2 players: 24 cards, 4 to 20 taken; 10 players: the whole deck, 84 to 100 taken,
        // one player at most 50 of them.
        assert_eq!(
            Ruleset::SixNimmt.round_bounds(2),
            RoundBounds {
                entry_min: 0,
                entry_max: 79,
                sum_min: 4,
                sum_max: 79
            }
        );
        assert_eq!(
            Ruleset::SixNimmt.round_bounds(10),
            RoundBounds {
                entry_min: 0,
                entry_max: 117,
                sum_min: 92,
                sum_max: 171 - 4
            }
        );
    }

    #[test]
    fn eleven_and_x_nimmt_bounds() {
        assert_eq!(
            Ruleset::ElevenNimmt.round_bounds(2),
            RoundBounds {
                entry_min: 0,
                entry_max: 77,
                sum_min: 4,
                sum_max: 77
            }
        );
        assert_eq!(Ruleset::ElevenNimmt.round_bounds(9).sum_min, 76);
        let mut p = pad(Ruleset::ElevenNimmt, 2, Some(EndCondition::Rounds(5)));
        assert_eq!(code(record(&mut p, &[70, 8])), "impossible_round");
        assert_eq!(code(record(&mut p, &[-3, 6])), "impossible_round");
        assert_eq!(code(record(&mut p, &[3, 0])), "impossible_round");
        record(&mut p, &[70, 7]).unwrap();
        record(&mut p, &[0, 4]).unwrap();
        // X nimmt!: 8 of 19 cards at most off the table with 2 players, each counted twice.
        assert_eq!(Ruleset::XNimmt.round_bounds(2).sum_max, 136);
        assert_eq!(Ruleset::XNimmt.round_bounds(4).sum_max, 198);
        let mut x = pad(Ruleset::XNimmt, 2, None);
        assert_eq!(code(record(&mut x, &[300, 0])), "impossible_round");
        assert_eq!(code(record(&mut x, &[100, 37])), "impossible_round");
        assert_eq!(code(record(&mut x, &[0, -1])), "impossible_round");
        record(&mut x, &[100, 36]).unwrap();
        record(&mut x, &[0, 0]).unwrap();
    }

    #[test]
    fn nimm_oder_schieb_bounds_follow_chips_and_cards() {
        // 3 players × 11 chips = 33; 7 players × 7 chips = 49; 6 × 9 = 54; 5 × 11 = 55.
        assert_eq!(
            Ruleset::NimmOderSchieb.round_bounds(3),
            RoundBounds {
                entry_min: 3 - 33,
                entry_max: 323,
                sum_min: 3 - 33,
                sum_max: 564 - 33
            }
        );
        assert_eq!(Ruleset::NimmOderSchieb.round_bounds(7).entry_min, 3 - 49);
        assert_eq!(Ruleset::NimmOderSchieb.round_bounds(6).entry_min, 3 - 54);
        assert_eq!(Ruleset::NimmOderSchieb.round_bounds(5).sum_max, 564 - 55);
        let mut p = pad(Ruleset::NimmOderSchieb, 3, Some(EndCondition::Rounds(3)));
        assert_eq!(code(record(&mut p, &[-31, 40, 40])), "impossible_round");
        assert_eq!(code(record(&mut p, &[324, -30, 0])), "impossible_round");
        assert_eq!(
            code(record(&mut p, &[-30, -1, 0])),
            "impossible_round",
            "sum −31 < −30"
        );
        // The example: two players with 11 chips each beside 300 points.
        assert_eq!(code(record(&mut p, &[-11, -11, 300])), "impossible_round");
        record(&mut p, &[-11, 0, 40]).unwrap();
        // The seed's example hand (77) beside two others.
        record(&mut p, &[77, 60, -5]).unwrap();
        record(&mut p, &[-30, 0, 0]).unwrap();
        assert_eq!(p.totals(), vec![36, 60, 35]);
        assert_eq!(p.winners(), Some(vec![2]));
    }

    #[test]
    fn an_impossible_round_names_the_player_and_the_numbers() {
        let mut p = pad(Ruleset::SixNimmt, 4, Some(EndCondition::Points(100)));
        let PadError::ImpossibleRound(why) = record(&mut p, &[0, 300, 0, 0]).unwrap_err() else {
            panic!("an impossible round");
        };
        let b = Ruleset::SixNimmt.round_bounds(4);
        assert_eq!(
            (why.ruleset, why.players, why.name(1), why.broken),
            (
                Ruleset::SixNimmt,
                4,
                Some("Ben"),
                BrokenBound::Entry {
                    player: 1,
                    score: 300,
                    min: 0,
                    max: b.entry_max
                }
            )
        );
        let PadError::ImpossibleRound(why) = record(&mut p, &[0, 0, -2, 0]).unwrap_err() else {
            panic!("an impossible round");
        };
        assert_eq!(
            (why.name(2), why.broken),
            (
                Some("Carla"),
                BrokenBound::NegativeEntry {
                    player: 2,
                    score: -2
                }
            )
        );
        let PadError::ImpossibleRound(why) = record(&mut p, &[0, 0, 0, 0]).unwrap_err() else {
            panic!("an impossible round");
        };
        assert_eq!(
            why.broken,
            BrokenBound::Sum {
                sum: 0,
                min: b.sum_min,
                max: b.sum_max
            }
        );
        let mut n = pad(Ruleset::NimmOderSchieb, 3, None);
        let PadError::ImpossibleRound(why) = record(&mut n, &[-11, -11, 300]).unwrap_err() else {
            panic!("an impossible round");
        };
        let BrokenBound::NoSplit {
            player,
            score,
            cards,
            chips,
        } = why.broken
        else {
            panic!("no split: {why}");
        };
        assert_eq!((cards, chips), (24, 33));
        assert_eq!(why.name(player), names(3).get(player).map(String::as_str));
        assert_eq!([-11, -11, 300].get(player), Some(&score));
        // Checked without a pad, the round knows no names.
        let Err(PadError::ImpossibleRound(bare)) = Ruleset::SixNimmt.check_round(&[0, 300, 0, 0])
        else {
            panic!("an impossible round");
        };
        assert_eq!(bare.name(1), None);
        assert!(bare.to_string().contains("player 1 has 300"), "{bare}");
    }

    #[test]
    fn one_entry_per_player() {
        let mut p = pad(Ruleset::SixNimmt, 3, None);
        assert_eq!(
            record(&mut p, &[1, 2]).unwrap_err(),
            PadError::WrongNumberOfScores {
                expected: 3,
                got: 2
            }
        );
        assert_eq!(
            code(record(&mut p, &[1, 2, 3, 4])),
            "wrong_number_of_scores"
        );
        assert_eq!(code(record(&mut p, &[])), "wrong_number_of_scores");
    }

    #[test]
    fn a_points_pad_ends_after_the_round_that_reaches_the_limit() {
        let mut p = pad(Ruleset::SixNimmt, 3, Some(EndCondition::Points(33)));
        record(&mut p, &[10, 0, 22]).unwrap();
        assert!(!p.finished());
        assert_eq!(p.winners(), None);
        record(&mut p, &[12, 5, 10]).unwrap();
        assert_eq!(p.totals(), vec![22, 5, 32]);
        assert!(!p.finished(), "32 is below 33");
        record(&mut p, &[0, 3, 11]).unwrap();
        assert!(p.finished(), "33 reached");
        assert_eq!(p.winners(), Some(vec![1]));
        assert_eq!(code(record(&mut p, &[0, 0, 0])), "pad_finished");
    }

    #[test]
    fn a_rounds_pad_ends_after_k_rounds_and_ties_share_the_win() {
        let mut p = pad(Ruleset::XNimmt, 4, None);
        record(&mut p, &[3, 7, 3, 10]).unwrap();
        assert!(!p.finished());
        record(&mut p, &[4, 1, 4, 1]).unwrap();
        assert!(p.finished());
        assert_eq!(p.winners(), Some(vec![0, 2]));
        let places: Vec<(usize, usize, i64)> = p
            .standings()
            .iter()
            .map(|s| (s.place, s.player, s.total))
            .collect();
        assert_eq!(places, vec![(1, 0, 7), (1, 2, 7), (3, 1, 8), (4, 3, 11)]);
    }

    #[test]
    fn taking_back_the_last_round_reopens_a_finished_pad() {
        let mut p = pad(Ruleset::NimmOderSchieb, 4, None);
        assert_eq!(code(take_back(&mut p)), "no_round_to_take_back");
        record(&mut p, &[10, 20, 30, -10]).unwrap();
        assert!(p.finished());
        assert_eq!(p.winners(), Some(vec![3]));
        take_back(&mut p).unwrap();
        assert!(!p.finished());
        assert_eq!(p.winners(), None);
        assert_eq!(p.totals(), vec![0, 0, 0, 0]);
        record(&mut p, &[10, 20, -10, 30]).unwrap();
        assert_eq!(p.winners(), Some(vec![2]));
    }

    #[test]
    fn events_round_trip_through_json_and_replay_to_the_same_pad() {
        let mut events = Pad::create(NewPad {
            ruleset: Ruleset::ElevenNimmt,
            players: names(2),
            end: Some(EndCondition::Rounds(3)),
        })
        .unwrap();
        let mut p = Pad::from_events(&events).unwrap();
        for cmd in [
            PadCommand::RecordRound { scores: vec![1, 3] },
            PadCommand::RecordRound { scores: vec![3, 4] },
            PadCommand::TakeBackLastRound,
            PadCommand::RecordRound { scores: vec![0, 9] },
        ] {
            let new = p.decide(&cmd).unwrap();
            new.iter().for_each(|e| p.apply(e));
            events.extend(new);
        }
        let json = serde_json::to_value(&events).unwrap();
        assert_eq!(json[0]["type"], "pad_created");
        assert_eq!(
            json[0]["data"]["players"],
            serde_json::json!(["Anna", "Ben"])
        );
        assert_eq!(json[0]["data"]["end"], serde_json::json!({ "rounds": 3 }));
        assert_eq!(
            json[3],
            serde_json::json!({ "type": "round_taken_back", "data": {} })
        );
        for (e, j) in events.iter().zip(json.as_array().unwrap()) {
            assert_eq!(e.type_name(), j["type"]);
        }
        let decoded: Vec<PadEvent> = serde_json::from_value(json).unwrap();
        let replayed = Pad::from_events(&decoded).unwrap();
        assert_eq!(replayed, p);
        assert_eq!(replayed.rounds(), [vec![1, 3], vec![0, 9]]);
        assert_eq!(
            Pad::from_events(&decoded[1..]),
            None,
            "a stream must start with pad_created"
        );
    }

    #[test]
    fn extreme_entries_do_not_overflow() {
        let mut p = pad(Ruleset::NimmOderSchieb, 3, Some(EndCondition::Rounds(50)));
        assert_eq!(
            code(record(&mut p, &[i32::MAX, i32::MAX, i32::MIN])),
            "impossible_round"
        );
        assert_eq!(code(record(&mut p, &[i32::MIN, 0, 0])), "impossible_round");
        let mut s = pad(Ruleset::SixNimmt, 3, None);
        assert_eq!(
            code(record(&mut s, &[i32::MAX, i32::MAX, 0])),
            "impossible_round"
        );
    }
}
