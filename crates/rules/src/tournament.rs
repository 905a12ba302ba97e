#![allow(unused_variables, clippy::missing_errors_doc, missing_docs)] // skeleton: helper A fills the bodies and removes this line
//! Tournaments (issue 29): Swiss and duplicate, as an aggregate folded from its own event
//! stream, like a game. Pure: no I/O, no clock, no randomness — every function that needs
//! the time takes `now`, ids and seeds come from the caller.
//!
//! CONTRACT SKELETON (written by the lead). Names, fields and signatures below are fixed:
//! the server is written against them in parallel. Bodies marked `todo!()` are helper A's.
//! Adding private helpers, fields marked "free" and tests is fine; renaming is not.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::clocks::{AtZero, TimeControl};
use crate::error::RuleError;
use crate::game::Game;
use crate::options::{OptionsInput, Preset, Ruleset, Setup};

/// Most rounds a tournament has.
pub const MAX_ROUNDS: u8 = 12;
/// Most people a tournament takes.
pub const MAX_PLAYERS: u16 = 256;
/// Most deals per round in a duplicate tournament.
pub const MAX_DEALS_PER_ROUND: u16 = 5;

/// `swiss` or `duplicate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Format {
    /// Each round seats people by standing; points by place at the table.
    Swiss,
    /// Each round's deals are played at every table; matchpoints per hand.
    Duplicate,
}

/// A tournament as `POST /v1/tournaments` sends it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TournamentInput {
    /// 1–64 characters, no unprintable ones (`crate::text::unprintable`).
    pub name: String,
    /// `6-nimmt`, `11-nimmt`, `x-nimmt`, `nimm-oder-schieb`. Duplicate: `6-nimmt` only.
    pub ruleset: Ruleset,
    /// 6-nimmt variant (as in `POST /v1/games`).
    pub preset: Option<Preset>,
    /// Options (as in `POST /v1/games`). Duplicate: `deal: draft` is refused, and `end` is
    /// set by the tournament (`{"rounds": deals_per_round}`), so sending `end` is refused.
    pub options: Option<OptionsInput>,
    /// `swiss` or `duplicate`.
    pub format: Format,
    /// 1–12.
    pub rounds: u8,
    /// Seats per table, within the ruleset's player range.
    pub table_size: u8,
    /// Duplicate only: deals every table plays per round, 1–5 (default 1). Swiss: refused.
    pub deals_per_round: Option<u16>,
    /// The tables' clocks. `vacation: true` is refused; `at_zero` must be `bot_moves`.
    pub time_control: TimeControl,
    /// The most a round lasts, 60 s – 30 days; default [`default_round_seconds`].
    pub round_seconds: Option<u32>,
    /// When it starts; absent: when `max_players` have joined (or the host starts it).
    /// Must be after `now` when given.
    pub starts_at: Option<DateTime<Utc>>,
    /// 2–256 (default 64).
    pub max_players: Option<u16>,
    /// Listed for everyone (default false: by invitation).
    pub public: Option<bool>,
}

/// A validated tournament setup (what `tournament_created` records). One that exists is
/// valid: [`TournamentSetup::from_input`] is the only way to make one from outside.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentSetup {
    pub name: String,
    pub format: Format,
    /// The tables' game setup: ruleset, options (duplicate: `end` = rounds
    /// `deals_per_round`), `players` = `table_size`.
    pub game: Setup,
    /// The preset given, kept for display.
    pub preset: Option<Preset>,
    pub rounds: u8,
    pub table_size: u8,
    /// 1 for Swiss.
    pub deals_per_round: u16,
    pub time_control: TimeControl,
    pub round_seconds: u32,
    pub starts_at: Option<DateTime<Utc>>,
    pub max_players: u16,
    pub public: bool,
}

impl TournamentSetup {
    /// Validates what a client sent.
    ///
    /// # Errors
    /// [`RuleError::InvalidTournament`] (new variant, message in English saying which
    /// field and why) for anything out of range; [`RuleError::InvalidOptions`] passes
    /// through from `Setup::from_input`.
    pub fn from_input(input: TournamentInput, now: DateTime<Utc>) -> Result<Self, RuleError> {
        todo!()
    }
}

/// Default round length: `table_size × (initial_seconds + 30 × increment_seconds) ×
/// deals_per_round + 60`, capped at 30 days.
#[must_use]
pub fn default_round_seconds(table_size: u8, deals_per_round: u16, tc: &TimeControl) -> u32 {
    todo!()
}

/// Who sits at a seat of a tournament table.
pub type SeatPlan = Option<String>; // account id; None = a bot

/// One table of a round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TablePlan {
    /// 1-based.
    pub table: u16,
    /// The game played there.
    pub game: String,
    /// Per seat (index = seat): the account, or `null` for a bot.
    pub seats: Vec<Option<String>>,
}

/// One seat's result at a finished table, taken from the finished game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeatResult {
    pub seat: u8,
    /// `null` for a bot.
    pub account: Option<String>,
    /// 1 = best; equal totals share a place; resigned seats share the last place
    /// (the same rule as ratings: src/ratings.rs `places`).
    pub place: u8,
    /// The seat's game total (bullheads, or nimm-oder-schieb points).
    pub total: i32,
    /// Per deal (the game's rounds, in order): the seat's score of that deal.
    pub deal_scores: Vec<i32>,
    /// The person resigned or was handed to a bot for good.
    pub resigned: bool,
}

/// Why a table finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TableEnd {
    /// The game ended by its rules.
    Finished,
    /// The round's deadline passed: the server handed the remaining people to bots, which
    /// played it out (the time control's `bot_moves`).
    RoundDeadline,
}

/// The tournament's events. Stored as `event_type` = the tag, `data` = the content, like
/// game events. All are public (nothing secret is ever in a tournament's stream: a round's
/// seed is in its games' server-only events until the round ends).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum TournamentEvent {
    /// Created, by `host`.
    TournamentCreated {
        setup: Box<TournamentSetup>,
        host: String,
    },
    PlayerJoined {
        account: String,
    },
    PlayerLeft {
        account: String,
    },
    /// A round began: its tables and games; duplicate: the round's seed commitment
    /// (hex SHA-256 of the seed that every table's game shares).
    RoundStarted {
        round: u8,
        /// RFC 3339; the round ends at the latest then.
        deadline: DateTime<Utc>,
        commitment: Option<String>,
        tables: Vec<TablePlan>,
    },
    TableFinished {
        round: u8,
        table: u16,
        game: String,
        end: TableEnd,
        results: Vec<SeatResult>,
    },
    /// Every table of the round finished; duplicate: the seed revealed.
    RoundFinished {
        round: u8,
        seed: Option<String>,
    },
    TournamentEnded {},
    /// Not started: fewer than 2 people at the start time, or the host cancelled.
    TournamentCancelled {
        reason: String,
    },
}

impl TournamentEvent {
    /// The stored `event_type` (the serde tag).
    #[must_use]
    pub fn kind(&self) -> &'static str {
        todo!()
    }
}

/// `open` (taking people), `running`, `finished` or `cancelled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TournamentStatus {
    Open,
    Running,
    Finished,
    Cancelled,
}

/// A round as folded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundState {
    pub round: u8,
    pub deadline: DateTime<Utc>,
    pub commitment: Option<String>,
    pub seed: Option<String>,
    pub tables: Vec<TablePlan>,
    /// table number → its end and results, once finished.
    pub finished: BTreeMap<u16, (TableEnd, Vec<SeatResult>)>,
    pub done: bool,
}

/// The tournament aggregate, folded from its events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tournament {
    pub setup: TournamentSetup,
    pub host: String,
    pub status: TournamentStatus,
    /// People in join order (those who left are removed).
    pub players: Vec<String>,
    pub rounds: Vec<RoundState>,
    pub cancelled: Option<String>,
}

/// What the server should do next with a tournament, at `now` ([`Tournament::due`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Due {
    /// Nothing now.
    Nothing,
    /// Cancel it (fewer than 2 people when it should start): append this.
    Cancel(String),
    /// Start round `round` with these tables (seats as accounts / bots); the server
    /// creates the games, then appends [`Tournament::round_started`].
    StartRound {
        round: u8,
        seating: Vec<Vec<SeatPlan>>,
    },
    /// Look at the unfinished tables' games (their ids); for finished games append
    /// [`Tournament::table_finished`]. When `deadline_passed`, the server first hands
    /// every remaining person of those games to a bot so the game plays out.
    CheckTables {
        round: u8,
        games: Vec<String>,
        deadline_passed: bool,
    },
    /// Every table finished: append [`TournamentEvent::RoundFinished`] (with the seed for
    /// duplicate, read from a table's game), then `TournamentEnded` if it was the last.
    FinishRound { round: u8 },
}

impl Tournament {
    /// Folds a stream. `None` when it does not start with `tournament_created`.
    #[must_use]
    pub fn from_events(events: &[TournamentEvent]) -> Option<Self> {
        todo!()
    }

    /// Applies one event (never fails: events are facts).
    pub fn apply(&mut self, event: &TournamentEvent) {
        todo!()
    }

    /// The events that create a tournament.
    #[must_use]
    pub fn create(setup: TournamentSetup, host: &str) -> Vec<TournamentEvent> {
        todo!()
    }

    /// Joining: only while `open`, not twice, not beyond `max_players`.
    ///
    /// # Errors
    /// `RuleError::TournamentNotOpen`, `RuleError::AlreadyJoined`,
    /// `RuleError::TournamentFull` (new variants).
    pub fn join(&self, account: &str) -> Result<Vec<TournamentEvent>, RuleError> {
        todo!()
    }

    /// Leaving: only while `open` and joined (the host may leave and stays host).
    ///
    /// # Errors
    /// `RuleError::TournamentNotOpen`, `RuleError::NotJoined` (new).
    pub fn leave(&self, account: &str) -> Result<Vec<TournamentEvent>, RuleError> {
        todo!()
    }

    /// The host starts early: allowed while `open` with at least 2 people. Returns the
    /// seating of round 1 (the server then creates the games and appends
    /// [`Tournament::round_started`]).
    ///
    /// # Errors
    /// `RuleError::NotHost`, `RuleError::TournamentNotOpen`,
    /// `RuleError::TooFewPlayers` (new).
    pub fn start_early(&self, account: &str) -> Result<Vec<Vec<SeatPlan>>, RuleError> {
        todo!()
    }

    /// What is due at `now`: open and (`starts_at` ≤ now or full) → `StartRound 1` or
    /// `Cancel`; running → `CheckTables` of the current round's unfinished tables (with
    /// `deadline_passed = now ≥ deadline`), or `FinishRound` when all are finished, or
    /// `StartRound r+1` when round r is done and r < rounds; otherwise `Nothing`.
    #[must_use]
    pub fn due(&self, now: DateTime<Utc>) -> Due {
        todo!()
    }

    /// The seating of the next round: tables of `table_size`, as many as
    /// `ceil(people / table_size)`, people spread evenly (table sizes differ by at most
    /// one; the rest of each table's seats are bots, `None`, at the table's end). People
    /// are taken by standing (round 1: join order); Swiss and duplicate alike avoid seating
    /// two people together who met before wherever some seating allows it (search with
    /// backtracking, bounded; otherwise the seating with the fewest repeated meetings).
    /// Deterministic.
    #[must_use]
    pub fn seating(&self) -> Vec<Vec<SeatPlan>> {
        todo!()
    }

    /// The `round_started` event for `seating` with its games' ids (same order).
    #[must_use]
    pub fn round_started(
        &self,
        round: u8,
        seating: Vec<Vec<SeatPlan>>,
        games: Vec<String>,
        commitment: Option<String>,
        now: DateTime<Utc>,
    ) -> TournamentEvent {
        todo!()
    }

    /// The `table_finished` event for a finished table's game (results from the game:
    /// places as in ratings, per-deal scores from `game.scores`, totals from
    /// `game.totals()`). `None` when the game is not finished or is no table of `round`.
    #[must_use]
    pub fn table_finished(
        &self,
        round: u8,
        game_id: &str,
        game: &Game,
        end: TableEnd,
    ) -> Option<TournamentEvent> {
        todo!()
    }

    /// The account seated next: the table of the current running round whose game this
    /// person plays and that has not finished, if any.
    #[must_use]
    pub fn next_table(&self, account: &str) -> Option<(u8, &TablePlan)> {
        todo!()
    }

    /// Standings after `after_round` finished rounds (`None`: all finished rounds so far;
    /// standings after round 0 list everyone with 0 points in join order).
    #[must_use]
    pub fn standings(&self, after_round: Option<u8>) -> Standings {
        todo!()
    }
}

/// Standings as the API shows them (`GET /v1/tournaments/{id}/standings`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Standings {
    /// The number of finished rounds counted.
    pub after_round: u8,
    /// Best first.
    pub rows: Vec<StandingRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StandingRow {
    /// 1-based; equal on every tie-break → equal rank.
    pub rank: u16,
    pub account: String,
    /// Swiss: per table, the seats placed behind you, plus half of those placed level
    /// (bots count as seats). Duplicate: the sum of matchpoints.
    pub points: f64,
    /// Swiss: Buchholz, the sum of the points of the people you sat with (each table
    /// counted once per meeting). Duplicate: the sum of your per-deal scores (lower is
    /// better; a second tie-break).
    pub tiebreak: f64,
    /// Sum of your game totals.
    pub total: i32,
    /// Per round played: your table.
    pub tables: Vec<StandingTable>,
    /// Duplicate: every deal you played, compared with the other holders of your hand.
    /// Swiss: empty.
    pub deals: Vec<DealComparison>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StandingTable {
    pub round: u8,
    pub table: u16,
    pub game: String,
    pub seat: u8,
    pub place: u8,
    pub total: i32,
    /// Points this table brought (Swiss) or matchpoints of its deals (duplicate).
    pub points: f64,
    pub end: TableEnd,
}

/// Duplicate: one deal as one holder of a hand saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DealComparison {
    pub round: u8,
    /// 1-based within the round.
    pub deal: u16,
    /// 1-based across the tournament: (round − 1) × deals_per_round + deal.
    pub number: u16,
    /// The hand: the seat it is dealt to (the same seat at every table of the round).
    pub hand: u8,
    pub table: u16,
    /// Your score on that deal (bullheads).
    pub score: i32,
    /// The other holders of the same hand, one per other table.
    pub others: Vec<OtherHolder>,
    /// How many of them you did better than (fewer bullheads), ties half.
    pub matchpoints: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OtherHolder {
    pub table: u16,
    /// `null` for a bot.
    pub account: Option<String>,
    pub score: i32,
}
