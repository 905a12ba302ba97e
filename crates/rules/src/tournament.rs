//! Tournaments (issue 29): Swiss and duplicate, as an aggregate folded from its own event
//! stream, like a game. Pure: no I/O, no clock, no randomness — every function that needs
//! the time takes `now`, ids and seeds come from the caller.
//!
//! The server asks [`Tournament::due`] what to do next and appends the events it names;
//! seating ([`Tournament::seating`]) and standings ([`Tournament::standings`]) are derived
//! from the folded state alone, so every replica and every refold arrives at the same ones.

use std::cell::Cell;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::clocks::{AtZero, TimeControl};
use crate::error::RuleError;
use crate::game::Game;
use crate::model::Status;
use crate::options::{DealOption, EndCondition, OptionsInput, Preset, Ruleset, Setup};

/// Most rounds a tournament has.
pub const MAX_ROUNDS: u8 = 12;
/// Most people a tournament takes.
pub const MAX_PLAYERS: u16 = 256;
/// Most deals per round in a duplicate tournament.
pub const MAX_DEALS_PER_ROUND: u16 = 5;
/// People a tournament takes when `max_players` is not given.
pub const DEFAULT_MAX_PLAYERS: u16 = 64;
/// Shortest round, in seconds.
pub const MIN_ROUND_SECONDS: u32 = 60;
/// Longest round, in seconds (30 days).
pub const MAX_ROUND_SECONDS: u32 = 2_592_000;

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
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 64))]
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
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 12))]
    pub rounds: u8,
    /// Seats per table, within the ruleset's player range.
    #[cfg_attr(feature = "openapi", schema(minimum = 2, maximum = 10))]
    pub table_size: u8,
    /// Duplicate only: deals every table plays per round, 1–5 (default 1). Swiss: refused.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 5))]
    pub deals_per_round: Option<u16>,
    /// The tables' clocks. `vacation: true` is refused; `at_zero` must be `bot_moves`.
    pub time_control: TimeControl,
    /// The most a round lasts, 60 s – 30 days; default [`default_round_seconds`].
    #[cfg_attr(feature = "openapi", schema(minimum = 60, maximum = 2_592_000))]
    pub round_seconds: Option<u32>,
    /// When it starts; absent: when `max_players` have joined (or the host starts it).
    /// Must be after `now` when given.
    pub starts_at: Option<DateTime<Utc>>,
    /// 2–256 (default 64).
    #[cfg_attr(feature = "openapi", schema(minimum = 2, maximum = 256))]
    pub max_players: Option<u16>,
    /// Listed for everyone (default false: by invitation).
    pub public: Option<bool>,
}

/// A validated tournament setup (what `tournament_created` records). One that exists is
/// valid: [`TournamentSetup::from_input`] is the only way to make one from outside.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TournamentSetup {
    /// The tournament's name (trimmed).
    pub name: String,
    /// `swiss` or `duplicate`.
    pub format: Format,
    /// The tables' game setup: ruleset, options (duplicate: `end` = rounds
    /// `deals_per_round`), `players` = `table_size`.
    pub game: Setup,
    /// The preset given, kept for display.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub preset: Option<Preset>,
    /// Rounds, 1–12.
    pub rounds: u8,
    /// Seats per table (bots fill what people leave free).
    pub table_size: u8,
    /// 1 for Swiss.
    pub deals_per_round: u16,
    /// The tables' clocks (`vacation: false`, `at_zero: bot_moves`).
    pub time_control: TimeControl,
    /// The most a round lasts, in seconds.
    pub round_seconds: u32,
    /// When it starts; `None`: when full or when the host starts it.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub starts_at: Option<DateTime<Utc>>,
    /// Most people, 2–256.
    pub max_players: u16,
    /// Listed for everyone; otherwise by invitation.
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
        let bad = |m: String| Err(RuleError::InvalidTournament(m));
        let name = input.name.trim().to_owned();
        let length = name.chars().count();
        if !(1..=64).contains(&length) {
            return bad("name must be 1 to 64 characters".into());
        }
        if name.chars().any(crate::text::unprintable) {
            return bad("name must not contain control or invisible characters".into());
        }
        if !(1..=MAX_ROUNDS).contains(&input.rounds) {
            return bad(format!("rounds must be 1 to {MAX_ROUNDS}"));
        }
        let (fewest, most) = input.ruleset.players();
        if !(fewest..=most).contains(&input.table_size) {
            return bad(format!(
                "table_size must be {fewest} to {most} for {}",
                input.ruleset.name()
            ));
        }
        let mut options = input.options;
        let deals_per_round = match input.format {
            Format::Swiss => {
                if input.deals_per_round.is_some() {
                    return bad("deals_per_round is for duplicate tournaments only".into());
                }
                1
            }
            Format::Duplicate => {
                if input.ruleset != Ruleset::SixNimmt {
                    return bad("ruleset must be 6-nimmt in a duplicate tournament".into());
                }
                let deals = input.deals_per_round.unwrap_or(1);
                if !(1..=MAX_DEALS_PER_ROUND).contains(&deals) {
                    return bad(format!(
                        "deals_per_round must be 1 to {MAX_DEALS_PER_ROUND}"
                    ));
                }
                let mut given = options.unwrap_or_default();
                if given.end.is_some() {
                    return bad(
                        "options.end is set by a duplicate tournament (deals_per_round rounds)"
                            .into(),
                    );
                }
                given.end = Some(EndCondition::Rounds(deals));
                options = Some(given);
                deals
            }
        };
        let tc = input.time_control;
        if tc.vacation {
            return bad("time_control.vacation must be false: a round has a deadline".into());
        }
        if tc.at_zero != AtZero::BotMoves {
            return bad("time_control.at_zero must be bot_moves: a round cannot wait".into());
        }
        let round_seconds = match input.round_seconds {
            Some(secs) if !(MIN_ROUND_SECONDS..=MAX_ROUND_SECONDS).contains(&secs) => {
                return bad(format!(
                    "round_seconds must be {MIN_ROUND_SECONDS} to {MAX_ROUND_SECONDS}"
                ));
            }
            Some(secs) => secs,
            None => default_round_seconds(input.table_size, deals_per_round, &tc),
        };
        if let Some(at) = input.starts_at
            && at <= now
        {
            return bad("starts_at must be in the future".into());
        }
        let max_players = input.max_players.unwrap_or(DEFAULT_MAX_PLAYERS);
        if !(2..=MAX_PLAYERS).contains(&max_players) {
            return bad(format!("max_players must be 2 to {MAX_PLAYERS}"));
        }
        let game = Setup::from_input(input.ruleset, input.table_size, input.preset, options)?;
        if input.format == Format::Duplicate && game.options.deal == DealOption::Draft {
            return bad(
                "options.deal must not be draft in a duplicate tournament (every table is dealt the same hands)".into(),
            );
        }
        Ok(Self {
            name,
            format: input.format,
            game,
            preset: input.preset,
            rounds: input.rounds,
            table_size: input.table_size,
            deals_per_round,
            time_control: tc,
            round_seconds,
            starts_at: input.starts_at,
            max_players,
            public: input.public.unwrap_or(false),
        })
    }
}

/// Default round length: `table_size × (initial_seconds + 30 × increment_seconds) ×
/// deals_per_round + 60`, capped at 30 days.
#[must_use]
pub fn default_round_seconds(table_size: u8, deals_per_round: u16, tc: &TimeControl) -> u32 {
    let per_seat = u64::from(tc.initial_seconds) + 30 * u64::from(tc.increment_seconds);
    let secs = u64::from(table_size)
        .saturating_mul(per_seat)
        .saturating_mul(u64::from(deals_per_round))
        .saturating_add(60);
    u32::try_from(secs.min(u64::from(MAX_ROUND_SECONDS))).unwrap_or(MAX_ROUND_SECONDS)
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
    /// The seat (0-based).
    pub seat: u8,
    /// `null` for a bot.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub account: Option<String>,
    /// 1 = best; equal totals share a place; resigned seats share the last place
    /// (the rule of [`places`], which the ratings use too).
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TournamentEvent {
    /// Created, by `host`.
    TournamentCreated {
        /// What it is played with.
        setup: Box<TournamentSetup>,
        /// The creator's account.
        host: String,
    },
    /// Someone joined (while open).
    PlayerJoined {
        /// Their account.
        account: String,
    },
    /// Someone left (while open).
    PlayerLeft {
        /// Their account.
        account: String,
    },
    /// A round began: its tables and games; duplicate: the round's seed commitment
    /// (hex SHA-256 of the seed that every table's game shares).
    RoundStarted {
        /// The round (1-based).
        round: u8,
        /// RFC 3339; the round ends at the latest then.
        deadline: DateTime<Utc>,
        /// Duplicate: hex SHA-256 of the round's seed; Swiss: `null`.
        commitment: Option<String>,
        /// The tables, in order, with their games and seats.
        tables: Vec<TablePlan>,
    },
    /// A table's game finished: every seat's result.
    TableFinished {
        /// The round.
        round: u8,
        /// The table (1-based).
        table: u16,
        /// Its game.
        game: String,
        /// By its rules or at the round's deadline.
        end: TableEnd,
        /// Per seat, in seat order.
        results: Vec<SeatResult>,
    },
    /// Every table of the round finished; duplicate: the seed revealed.
    RoundFinished {
        /// The round.
        round: u8,
        /// Duplicate: the round's seed; Swiss: `null`.
        seed: Option<String>,
    },
    /// The last round finished.
    TournamentEnded {},
    /// Not started: fewer than 2 people at the start time, or the host cancelled.
    TournamentCancelled {
        /// Why, in English.
        reason: String,
    },
}

impl TournamentEvent {
    /// The stored `event_type` (the serde tag).
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::TournamentCreated { .. } => "tournament_created",
            Self::PlayerJoined { .. } => "player_joined",
            Self::PlayerLeft { .. } => "player_left",
            Self::RoundStarted { .. } => "round_started",
            Self::TableFinished { .. } => "table_finished",
            Self::RoundFinished { .. } => "round_finished",
            Self::TournamentEnded {} => "tournament_ended",
            Self::TournamentCancelled { .. } => "tournament_cancelled",
        }
    }
}

/// `open` (taking people), `running`, `finished` or `cancelled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
/// Taking people.
pub enum TournamentStatus {
    /// Taking people.
    Open,
    /// Playing its rounds.
    Running,
    /// Every round played.
    Finished,
    /// Never started (see [`Tournament::cancelled`]).
    Cancelled,
}

/// A round as folded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundState {
    /// 1-based.
    pub round: u8,
    /// The round ends at the latest then: the server hands the tables still playing to bots.
    pub deadline: DateTime<Utc>,
    /// Duplicate: hex SHA-256 of the round's seed, from the start.
    pub commitment: Option<String>,
    /// Duplicate: the seed, once the round is finished.
    pub seed: Option<String>,
    /// Its tables, in order.
    pub tables: Vec<TablePlan>,
    /// table number → its end and results, once finished.
    pub finished: BTreeMap<u16, (TableEnd, Vec<SeatResult>)>,
    /// Every table finished and the round is recorded as finished.
    pub done: bool,
}

/// The tournament aggregate, folded from its events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tournament {
    /// What it was created with.
    pub setup: TournamentSetup,
    /// The account that created it (it may start it early).
    pub host: String,
    /// Where it stands.
    pub status: TournamentStatus,
    /// People in join order (those who left are removed).
    pub players: Vec<String>,
    /// The rounds started so far, in order.
    pub rounds: Vec<RoundState>,
    /// Why it was cancelled, if it was.
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
        /// The round to start.
        round: u8,
        /// Per table, per seat: the account, or `None` for a bot.
        seating: Vec<Vec<SeatPlan>>,
    },
    /// Look at the unfinished tables' games (their ids); for finished games append
    /// [`Tournament::table_finished`]. When `deadline_passed`, the server first hands
    /// every remaining person of those games to a bot so the game plays out.
    CheckTables {
        /// The running round.
        round: u8,
        /// The games of its tables that have not finished.
        games: Vec<String>,
        /// The round's deadline has passed.
        deadline_passed: bool,
    },
    /// Every table finished: append [`TournamentEvent::RoundFinished`] (with the seed for
    /// duplicate, read from a table's game), then `TournamentEnded` if it was the last.
    FinishRound {
        /// The round whose tables all finished.
        round: u8,
    },
}

impl Tournament {
    /// Folds a stream. `None` when it does not start with `tournament_created`.
    #[must_use]
    pub fn from_events(events: &[TournamentEvent]) -> Option<Self> {
        let (first, rest) = events.split_first()?;
        let TournamentEvent::TournamentCreated { setup, host } = first else {
            return None;
        };
        let mut tournament = Self {
            setup: (**setup).clone(),
            host: host.clone(),
            status: TournamentStatus::Open,
            players: Vec::new(),
            rounds: Vec::new(),
            cancelled: None,
        };
        for event in rest {
            tournament.apply(event);
        }
        Some(tournament)
    }

    /// Applies one event (never fails: events are facts).
    pub fn apply(&mut self, event: &TournamentEvent) {
        match event {
            // Only the first event creates; a later one is no fact about this tournament.
            TournamentEvent::TournamentCreated { .. } => {}
            TournamentEvent::PlayerJoined { account } => {
                if !self.players.contains(account) {
                    self.players.push(account.clone());
                }
            }
            TournamentEvent::PlayerLeft { account } => self.players.retain(|p| p != account),
            TournamentEvent::RoundStarted {
                round,
                deadline,
                commitment,
                tables,
            } => {
                self.status = TournamentStatus::Running;
                self.rounds.push(RoundState {
                    round: *round,
                    deadline: *deadline,
                    commitment: commitment.clone(),
                    seed: None,
                    tables: tables.clone(),
                    finished: BTreeMap::new(),
                    done: false,
                });
            }
            TournamentEvent::TableFinished {
                round,
                table,
                end,
                results,
                ..
            } => {
                if let Some(state) = self.rounds.iter_mut().find(|r| r.round == *round) {
                    state.finished.insert(*table, (*end, results.clone()));
                }
            }
            TournamentEvent::RoundFinished { round, seed } => {
                if let Some(state) = self.rounds.iter_mut().find(|r| r.round == *round) {
                    state.done = true;
                    state.seed.clone_from(seed);
                }
            }
            TournamentEvent::TournamentEnded {} => self.status = TournamentStatus::Finished,
            TournamentEvent::TournamentCancelled { reason } => {
                self.status = TournamentStatus::Cancelled;
                self.cancelled = Some(reason.clone());
            }
        }
    }

    /// The events that create a tournament.
    #[must_use]
    pub fn create(setup: TournamentSetup, host: &str) -> Vec<TournamentEvent> {
        vec![TournamentEvent::TournamentCreated {
            setup: Box::new(setup),
            host: host.to_owned(),
        }]
    }

    /// Joining: only while `open`, not twice, not beyond `max_players`.
    ///
    /// # Errors
    /// `RuleError::TournamentNotOpen`, `RuleError::AlreadyJoined`,
    /// `RuleError::TournamentFull` (new variants).
    pub fn join(&self, account: &str) -> Result<Vec<TournamentEvent>, RuleError> {
        if self.status != TournamentStatus::Open {
            return Err(RuleError::TournamentNotOpen);
        }
        if self.players.iter().any(|p| p == account) {
            return Err(RuleError::AlreadyJoined);
        }
        if self.players.len() >= usize::from(self.setup.max_players) {
            return Err(RuleError::TournamentFull);
        }
        Ok(vec![TournamentEvent::PlayerJoined {
            account: account.to_owned(),
        }])
    }

    /// Leaving: only while `open` and joined (the host may leave and stays host).
    ///
    /// # Errors
    /// `RuleError::TournamentNotOpen`, `RuleError::NotJoined` (new).
    pub fn leave(&self, account: &str) -> Result<Vec<TournamentEvent>, RuleError> {
        if self.status != TournamentStatus::Open {
            return Err(RuleError::TournamentNotOpen);
        }
        if !self.players.iter().any(|p| p == account) {
            return Err(RuleError::NotJoined);
        }
        Ok(vec![TournamentEvent::PlayerLeft {
            account: account.to_owned(),
        }])
    }

    /// The host starts early: allowed while `open` with at least 2 people. Returns the
    /// seating of round 1 (the server then creates the games and appends
    /// [`Tournament::round_started`]).
    ///
    /// # Errors
    /// `RuleError::NotHost`, `RuleError::TournamentNotOpen`,
    /// `RuleError::TooFewPlayers` (new).
    pub fn start_early(&self, account: &str) -> Result<Vec<Vec<SeatPlan>>, RuleError> {
        if self.host != account {
            return Err(RuleError::NotHost);
        }
        if self.status != TournamentStatus::Open {
            return Err(RuleError::TournamentNotOpen);
        }
        if self.players.len() < 2 {
            return Err(RuleError::TooFewPlayers);
        }
        Ok(self.seating())
    }

    /// What is due at `now`: open and (`starts_at` ≤ now or full) → `StartRound 1` or
    /// `Cancel`; running → `CheckTables` of the current round's unfinished tables (with
    /// `deadline_passed = now ≥ deadline`), or `FinishRound` when all are finished, or
    /// `StartRound r+1` when round r is done and r < rounds; otherwise `Nothing`.
    #[must_use]
    pub fn due(&self, now: DateTime<Utc>) -> Due {
        match self.status {
            TournamentStatus::Open => {
                let time = self.setup.starts_at.is_some_and(|at| at <= now);
                let full = self.players.len() >= usize::from(self.setup.max_players);
                if !time && !full {
                    Due::Nothing
                } else if self.players.len() < 2 {
                    Due::Cancel("fewer than two people had joined at the start time".into())
                } else {
                    Due::StartRound {
                        round: 1,
                        seating: self.seating(),
                    }
                }
            }
            TournamentStatus::Running => match self.rounds.last() {
                None => Due::StartRound {
                    round: 1,
                    seating: self.seating(),
                },
                Some(state) if !state.done => {
                    let games: Vec<String> = state
                        .tables
                        .iter()
                        .filter(|t| !state.finished.contains_key(&t.table))
                        .map(|t| t.game.clone())
                        .collect();
                    if games.is_empty() {
                        Due::FinishRound { round: state.round }
                    } else {
                        Due::CheckTables {
                            round: state.round,
                            games,
                            deadline_passed: now >= state.deadline,
                        }
                    }
                }
                Some(state) if state.round < self.setup.rounds => Due::StartRound {
                    round: state.round + 1,
                    seating: self.seating(),
                },
                Some(_) => Due::Nothing,
            },
            TournamentStatus::Finished | TournamentStatus::Cancelled => Due::Nothing,
        }
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
        let order: Vec<String> = if self.rounds.iter().any(|r| r.done) {
            self.standings(None)
                .rows
                .into_iter()
                .map(|row| row.account)
                .collect()
        } else {
            self.players.clone()
        };
        let met = self.meetings();
        // The rounds after the one being seated.
        let later = usize::from(self.setup.rounds).saturating_sub(self.rounds.len() + 1);
        seat(&order, usize::from(self.setup.table_size), &met, later)
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
        let deadline = now + chrono::Duration::seconds(i64::from(self.setup.round_seconds));
        let tables = seating
            .into_iter()
            .zip(games)
            .enumerate()
            .map(|(i, (seats, game))| TablePlan {
                table: u16::try_from(i + 1).unwrap_or(u16::MAX),
                game,
                seats,
            })
            .collect();
        TournamentEvent::RoundStarted {
            round,
            deadline,
            commitment,
            tables,
        }
    }

    /// The `table_finished` event for a finished table's game (results from the game:
    /// places as in ratings, per-deal scores from `game.scores`, totals from
    /// `game.totals()`). `None` when the game is not finished, is no table of `round`, or
    /// its table's result is recorded already.
    #[must_use]
    pub fn table_finished(
        &self,
        round: u8,
        game_id: &str,
        game: &Game,
        end: TableEnd,
    ) -> Option<TournamentEvent> {
        if game.status() != Status::Finished {
            return None;
        }
        let state = self.rounds.iter().find(|r| r.round == round)?;
        let plan = state.tables.iter().find(|t| t.game == game_id)?;
        if state.finished.contains_key(&plan.table) {
            return None;
        }
        let places = places(game);
        let totals = game.totals();
        let results = game
            .seats
            .iter()
            .enumerate()
            .map(|(i, seat)| SeatResult {
                seat: u8::try_from(i).unwrap_or(u8::MAX),
                account: seat.account().map(str::to_owned),
                place: places
                    .get(i)
                    .and_then(|p| u8::try_from(*p).ok())
                    .unwrap_or(u8::MAX),
                total: totals.get(i).copied().unwrap_or(0),
                deal_scores: game
                    .scores
                    .iter()
                    .map(|deal| deal.get(i).copied().unwrap_or(0))
                    .collect(),
                resigned: seat.resigned,
            })
            .collect();
        Some(TournamentEvent::TableFinished {
            round,
            table: plan.table,
            game: game_id.to_owned(),
            end,
            results,
        })
    }

    /// The account seated next: the table of the current running round whose game this
    /// person plays and that has not finished, if any.
    #[must_use]
    pub fn next_table(&self, account: &str) -> Option<(u8, &TablePlan)> {
        if self.status != TournamentStatus::Running {
            return None;
        }
        let state = self.rounds.last().filter(|r| !r.done)?;
        state
            .tables
            .iter()
            .find(|t| {
                !state.finished.contains_key(&t.table)
                    && t.seats.iter().any(|s| s.as_deref() == Some(account))
            })
            .map(|t| (state.round, t))
    }

    /// Standings after `after_round` finished rounds (`None`: all finished rounds so far;
    /// standings after round 0 list everyone with 0 points in join order).
    #[must_use]
    pub fn standings(&self, after_round: Option<u8>) -> Standings {
        standings(self, after_round)
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

/// One person's standing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StandingRow {
    /// 1-based; equal on every tie-break → equal rank.
    pub rank: u16,
    /// The person's account id.
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

/// One round of a person's standing: the table they played and what it brought.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StandingTable {
    /// The round.
    pub round: u8,
    /// The table (1-based).
    pub table: u16,
    /// The game played there.
    pub game: String,
    /// Your seat.
    pub seat: u8,
    /// Your place at the table.
    pub place: u8,
    /// Your game total there.
    pub total: i32,
    /// Points this table brought (Swiss) or matchpoints of its deals (duplicate).
    pub points: f64,
    /// Why the table finished.
    pub end: TableEnd,
}

/// Duplicate: one deal as one holder of a hand saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DealComparison {
    /// The round.
    pub round: u8,
    /// 1-based within the round.
    pub deal: u16,
    /// 1-based across the tournament: (round − 1) × deals_per_round + deal.
    pub number: u16,
    /// The hand: the seat it is dealt to (the same seat at every table of the round).
    pub hand: u8,
    /// Your table.
    pub table: u16,
    /// Your score on that deal (bullheads).
    pub score: i32,
    /// The other holders of the same hand, one per other table.
    pub others: Vec<OtherHolder>,
    /// How many of them you did better than (fewer bullheads), ties half.
    pub matchpoints: f64,
}

/// Another holder of the same hand on the same deal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OtherHolder {
    /// Their table.
    pub table: u16,
    /// `null` for a bot.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub account: Option<String>,
    /// Their score on that deal.
    pub score: i32,
}

/// Places of every seat of a finished game: 1 = best; equal totals share a place
/// (nimm-oder-schieb: the winners' chip tie-break decides first place); resigned seats
/// share the last place. Ratings and tournaments both place by this rule.
#[must_use]
pub fn places(game: &Game) -> Vec<i32> {
    let totals = game.totals();
    let resigned: Vec<bool> = game.seats.iter().map(|s| s.resigned).collect();
    let playing = resigned.iter().filter(|r| !**r).count();
    let winner = |s: usize| u8::try_from(s).is_ok_and(|s| game.winners.contains(&s));
    (0..totals.len())
        .map(|i| {
            if resigned.get(i).copied().unwrap_or(false) {
                return i32::try_from(playing).unwrap_or(i32::MAX) + 1;
            }
            if winner(i) {
                return 1;
            }
            let ahead = (0..totals.len())
                .filter(|&j| !resigned.get(j).copied().unwrap_or(false))
                .filter(|&j| totals[j] < totals[i] || (totals[j] == totals[i] && winner(j)))
                .count();
            i32::try_from(ahead).unwrap_or(i32::MAX) + 1
        })
        .collect()
}

/// The most steps (candidates looked at) one seating search takes before it settles for the
/// best seating found so far.
const SEATING_STEPS: u64 = 400_000;

impl Tournament {
    /// How often each pair of people sat at one table so far (every started round; bots
    /// are nobody). Keys are ordered pairs `(a, b)` with `a < b`.
    fn meetings(&self) -> BTreeMap<(String, String), u32> {
        let mut met = BTreeMap::new();
        for table in self.rounds.iter().flat_map(|r| &r.tables) {
            let people: Vec<&String> = table.seats.iter().flatten().collect();
            for (i, a) in people.iter().enumerate() {
                for b in &people[i + 1..] {
                    let key = if a < b {
                        ((*a).clone(), (*b).clone())
                    } else {
                        ((*b).clone(), (*a).clone())
                    };
                    *met.entry(key).or_insert(0) += 1;
                }
            }
        }
        met
    }
}

/// Seats `order` (best first) at tables of `table_size`: `ceil(n / table_size)` tables,
/// `n mod tables` of them one person larger than the others, bots (`None`) filling each
/// table's last seats. Among all such seatings it looks for one without a repeated meeting,
/// preferring people close in `order` at one table (a bounded depth-first search); in fields
/// of up to [`LOOKAHEAD_PEOPLE`] it prefers one that leaves the `later` rounds a seating
/// without repeats too. When it finds none it takes the one with the fewest repeated
/// meetings it found and improves it by swapping people between tables ([`improve`]).
/// Repeated meetings count a pair that met twice before as two.
fn seat(
    order: &[String],
    table_size: usize,
    met: &BTreeMap<(String, String), u32>,
    later: usize,
) -> Vec<Vec<SeatPlan>> {
    let n = order.len();
    if n == 0 || table_size == 0 {
        return Vec::new();
    }
    let tables = n.div_ceil(table_size);
    let (base, larger) = (n / tables, n % tables);
    let mut weight = vec![vec![0_u32; n]; n];
    for (i, a) in order.iter().enumerate() {
        for (j, b) in order.iter().enumerate().skip(i + 1) {
            let key = if a < b {
                (a.clone(), b.clone())
            } else {
                (b.clone(), a.clone())
            };
            let times = met.get(&key).copied().unwrap_or(0);
            weight[i][j] = times;
            weight[j][i] = times;
        }
    }
    let lookahead = Cell::new(0);
    let mut search = Search {
        n,
        base,
        larger,
        smaller: tables - larger,
        sizes: (larger, tables - larger),
        weight: &weight,
        used: vec![false; n],
        tables: Vec::with_capacity(tables),
        best: None,
        steps: 0,
        later: if n <= LOOKAHEAD_PEOPLE { later } else { 0 },
        lookahead: &lookahead,
        nested: false,
        dead_end: None,
    };
    search.run(0);
    let best = match (search.best, search.dead_end) {
        (Some((0, chosen)), _) | (_, Some(chosen)) => Some((0, chosen)),
        (best, None) => best,
    };
    let Some((cost, mut chosen)) = best else {
        return Vec::new();
    };
    if cost > 0 {
        improve(&mut chosen, &weight);
    }
    for members in &mut chosen {
        members.sort_unstable();
    }
    chosen.sort_unstable();
    chosen
        .into_iter()
        .map(|members| {
            let mut seats: Vec<SeatPlan> =
                members.iter().map(|&i| Some(order[i].clone())).collect();
            seats.resize(table_size, None);
            seats
        })
        .collect()
}

/// The most swaps [`improve`] weighs.
const IMPROVE_STEPS: u64 = 200_000;

/// Improves a seating that repeats meetings by an iterated local search: swaps two people
/// of different tables whenever that lowers the repeated meetings; when no swap does, it
/// goes back to the best seating so far and moves a few people who meet again to other
/// tables (chosen by a fixed pseudo-random sequence, so the result is deterministic), until
/// no repeat is left or [`IMPROVE_STEPS`] swaps were weighed. Keeps the best seating seen.
fn improve(tables: &mut Vec<Vec<usize>>, weight: &[Vec<u32>]) {
    if tables.len() < 2 {
        return;
    }
    let delta = |tables: &[Vec<usize>], a: usize, x: usize, b: usize, y: usize| -> i64 {
        let (i, j) = (tables[a][x], tables[b][y]);
        let gain = |table: &[usize], out: usize, into: usize| -> i64 {
            table
                .iter()
                .filter(|&&m| m != out)
                .map(|&m| i64::from(weight[into][m]) - i64::from(weight[out][m]))
                .sum()
        };
        gain(&tables[a], i, j) + gain(&tables[b], j, i)
    };
    let total = |tables: &[Vec<usize>]| -> i64 {
        tables
            .iter()
            .map(|t| {
                t.iter()
                    .enumerate()
                    .flat_map(|(k, &i)| t[k + 1..].iter().map(move |&j| i64::from(weight[i][j])))
                    .sum::<i64>()
            })
            .sum()
    };
    let mut cost = total(tables);
    let mut best = (cost, tables.clone());
    let mut random: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |below: usize| -> usize {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        usize::try_from(random % u64::try_from(below.max(1)).unwrap_or(1)).unwrap_or(0)
    };
    let mut steps: u64 = 0;
    loop {
        let mut better = true;
        while better && steps < IMPROVE_STEPS {
            better = false;
            for a in 0..tables.len() {
                for b in a + 1..tables.len() {
                    for x in 0..tables[a].len() {
                        for y in 0..tables[b].len() {
                            steps += 1;
                            let d = delta(tables, a, x, b, y);
                            if d < 0 {
                                let (i, j) = (tables[a][x], tables[b][y]);
                                tables[a][x] = j;
                                tables[b][y] = i;
                                cost += d;
                                better = true;
                            }
                        }
                    }
                }
            }
        }
        if cost < best.0 {
            best = (cost, tables.clone());
        }
        if best.0 == 0 || steps >= IMPROVE_STEPS {
            break;
        }
        tables.clone_from(&best.1);
        cost = best.0;
        // Kick: move two people who meet again to other tables.
        for _ in 0..2 {
            let repeating: Vec<(usize, usize)> = tables
                .iter()
                .enumerate()
                .flat_map(|(a, t)| {
                    t.iter().enumerate().filter_map(move |(x, &i)| {
                        t.iter().any(|&m| weight[i][m] > 0).then_some((a, x))
                    })
                })
                .collect();
            if repeating.is_empty() {
                break;
            }
            let (a, x) = repeating[next(repeating.len())];
            let b = (a + 1 + next(tables.len() - 1)) % tables.len();
            let y = next(tables[b].len());
            cost += delta(tables, a, x, b, y);
            let (i, j) = (tables[a][x], tables[b][y]);
            tables[a][x] = j;
            tables[b][y] = i;
        }
    }
    *tables = best.1;
}

/// Small fields look ahead: a seating without repeats is taken only if the later rounds
/// can be seated without repeats too (8 people at tables of 2 can be led into a dead end
/// after five rounds), as far as [`LOOKAHEAD_STEPS`] allow.
const LOOKAHEAD_PEOPLE: usize = 32;
/// The most steps the look-ahead of one seating takes, over all its nested searches.
const LOOKAHEAD_STEPS: u64 = 300_000;

/// A depth-first branch-and-bound search over seatings: tables are opened one after the
/// other by the best person not yet seated, with either size still to give; their other
/// seats are taken in rising order (so every seating is visited once), the candidates that
/// add the fewest repeated meetings first.
struct Search<'a> {
    n: usize,
    /// The tables of each size in all: `(larger, smaller)`.
    sizes: (usize, usize),
    /// The smaller table size.
    base: usize,
    /// Tables of `base + 1` still to open.
    larger: usize,
    /// Tables of `base` still to open.
    smaller: usize,
    weight: &'a [Vec<u32>],
    used: Vec<bool>,
    /// The tables opened so far: size and members.
    tables: Vec<(usize, Vec<usize>)>,
    /// The fewest repeats found and its seating.
    best: Option<(u32, Vec<Vec<usize>>)>,
    steps: u64,
    /// Later rounds a seating without repeats must leave room for.
    later: usize,
    /// Steps spent looking ahead, by every nested search.
    lookahead: &'a Cell<u64>,
    /// A look-ahead's search: only seatings without repeats count.
    nested: bool,
    /// The first seating without repeats that leads into a dead end later.
    dead_end: Option<Vec<Vec<usize>>>,
}

impl Search<'_> {
    /// Whether the search should stop: a seating without repeats found, or out of steps
    /// with some seating found.
    fn done(&self) -> bool {
        if matches!(self.best, Some((0, _))) {
            return true;
        }
        if self.nested {
            return self.lookahead.get() >= LOOKAHEAD_STEPS;
        }
        self.steps >= SEATING_STEPS && (self.best.is_some() || self.dead_end.is_some())
    }

    /// Counts `k` steps.
    fn spend(&mut self, k: u64) {
        self.steps += k;
        if self.nested {
            self.lookahead.set(self.lookahead.get() + k);
        }
    }

    /// Whether the later rounds can be seated without repeats after `seating`: `None` when
    /// the look-ahead ran out of steps before it knew.
    fn leaves_room(&self, seating: &[Vec<usize>]) -> Option<bool> {
        let mut weight = self.weight.to_vec();
        for table in seating {
            for (k, &i) in table.iter().enumerate() {
                for &j in &table[k + 1..] {
                    weight[i][j] += 1;
                    weight[j][i] += 1;
                }
            }
        }
        let mut next = Search {
            n: self.n,
            sizes: self.sizes,
            base: self.base,
            larger: self.sizes.0,
            smaller: self.sizes.1,
            weight: &weight,
            used: vec![false; self.n],
            tables: Vec::with_capacity(seating.len()),
            // Anything that repeats is pruned at once.
            best: Some((1, Vec::new())),
            steps: 0,
            later: self.later - 1,
            lookahead: self.lookahead,
            nested: true,
            dead_end: None,
        };
        next.run(0);
        match next.best {
            Some((0, _)) => Some(true),
            _ if self.lookahead.get() >= LOOKAHEAD_STEPS => None,
            _ => Some(false),
        }
    }

    /// Seats the next person, `cost` repeats so far.
    fn run(&mut self, cost: u32) {
        if self.done() || self.best.as_ref().is_some_and(|(b, _)| cost >= *b) {
            return;
        }
        match self.tables.last() {
            Some((size, members)) if members.len() < *size => {
                let size = *size;
                let members = members.clone();
                self.extend(&members, size, cost);
            }
            _ => self.open(cost),
        }
    }

    /// Opens the next table with the best person not yet seated, or records a complete
    /// seating.
    fn open(&mut self, cost: u32) {
        let Some(first) = (0..self.n).find(|&i| !self.used[i]) else {
            let seating: Vec<Vec<usize>> = self.tables.iter().map(|(_, m)| m.clone()).collect();
            if cost == 0 && self.later > 0 && self.leaves_room(&seating) == Some(false) {
                if self.dead_end.is_none() && !self.nested {
                    self.dead_end = Some(seating);
                }
                return;
            }
            self.best = Some((cost, seating));
            return;
        };
        self.spend(1);
        self.used[first] = true;
        for larger in [true, false] {
            if self.done() {
                break;
            }
            let size = if larger {
                if self.larger == 0 {
                    continue;
                }
                self.larger -= 1;
                self.base + 1
            } else {
                if self.smaller == 0 {
                    continue;
                }
                self.smaller -= 1;
                self.base
            };
            self.tables.push((size, vec![first]));
            self.run(cost);
            self.tables.pop();
            if larger {
                self.larger += 1;
            } else {
                self.smaller += 1;
            }
        }
        self.used[first] = false;
    }

    /// Takes one more person at the open table (`members`, of `size`).
    fn extend(&mut self, members: &[usize], size: usize, cost: u32) {
        let Some(&last) = members.last() else {
            return;
        };
        let still = size - members.len() - 1;
        let free: Vec<usize> = (last + 1..self.n).filter(|&i| !self.used[i]).collect();
        let mut candidates: Vec<(u32, usize)> = free
            .iter()
            .enumerate()
            .filter(|(k, _)| free.len() - k > still)
            .map(|(_, &c)| (members.iter().map(|&m| self.weight[m][c]).sum(), c))
            .collect();
        self.spend(candidates.len() as u64);
        candidates.sort_unstable();
        for (added, c) in candidates {
            if self.done() {
                return;
            }
            self.used[c] = true;
            if let Some((_, open)) = self.tables.last_mut() {
                open.push(c);
            }
            self.run(cost + added);
            if let Some((_, open)) = self.tables.last_mut() {
                open.pop();
            }
            self.used[c] = false;
        }
    }
}

/// [`Tournament::standings`].
fn standings(t: &Tournament, after_round: Option<u8>) -> Standings {
    let limit = after_round.unwrap_or(u8::MAX);
    let counted: Vec<&RoundState> = t
        .rounds
        .iter()
        .filter(|r| r.done && r.round <= limit)
        .collect();
    let index: BTreeMap<&str, usize> = t
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let mut rows: Vec<StandingRow> = t
        .players
        .iter()
        .map(|account| StandingRow {
            rank: 0,
            account: account.clone(),
            points: 0.0,
            tiebreak: 0.0,
            total: 0,
            tables: Vec::new(),
            deals: Vec::new(),
        })
        .collect();
    // Every person's table of every counted round, with the Swiss points it brought.
    for round in &counted {
        for (table, (end, results)) in &round.finished {
            let game = round
                .tables
                .iter()
                .find(|p| p.table == *table)
                .map(|p| p.game.clone())
                .unwrap_or_default();
            for result in results {
                let Some(&i) = result.account.as_deref().and_then(|a| index.get(a)) else {
                    continue;
                };
                let behind = results.iter().filter(|o| o.place > result.place).count();
                let level = results
                    .iter()
                    .filter(|o| o.seat != result.seat && o.place == result.place)
                    .count();
                let swiss = count_f64(behind) + 0.5 * count_f64(level);
                let row = &mut rows[i];
                row.total += result.total;
                row.tables.push(StandingTable {
                    round: round.round,
                    table: *table,
                    game: game.clone(),
                    seat: result.seat,
                    place: result.place,
                    total: result.total,
                    points: if t.setup.format == Format::Swiss {
                        swiss
                    } else {
                        0.0
                    },
                    end: *end,
                });
            }
        }
    }
    match t.setup.format {
        Format::Swiss => {
            for row in &mut rows {
                row.points = row.tables.iter().map(|s| s.points).sum();
            }
            let points: Vec<f64> = rows.iter().map(|r| r.points).collect();
            for round in &counted {
                for results in round.finished.values().map(|(_, r)| r) {
                    let people: Vec<usize> = results
                        .iter()
                        .filter_map(|r| r.account.as_deref().and_then(|a| index.get(a)).copied())
                        .collect();
                    for &me in &people {
                        let others: f64 = people
                            .iter()
                            .filter(|&&o| o != me)
                            .map(|&o| points[o])
                            .sum();
                        rows[me].tiebreak += others;
                    }
                }
            }
        }
        Format::Duplicate => duplicate(t, &counted, &index, &mut rows),
    }
    let ascending = t.setup.format == Format::Duplicate;
    let order = |a: &StandingRow, b: &StandingRow| {
        let tiebreak = if ascending {
            a.tiebreak.total_cmp(&b.tiebreak)
        } else {
            b.tiebreak.total_cmp(&a.tiebreak)
        };
        b.points.total_cmp(&a.points).then(tiebreak)
    };
    // Stable: equal rows stay in join order.
    rows.sort_by(order);
    let mut ranks = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let rank = match i.checked_sub(1) {
            Some(p) if order(&rows[p], row).is_eq() => ranks[p],
            _ => u16::try_from(i + 1).unwrap_or(u16::MAX),
        };
        ranks.push(rank);
    }
    for (row, rank) in rows.iter_mut().zip(ranks) {
        row.rank = rank;
    }
    Standings {
        after_round: counted.iter().map(|r| r.round).max().unwrap_or(0),
        rows,
    }
}

/// Duplicate scoring: per round, deal and hand, each holder against the other holders.
fn duplicate(
    t: &Tournament,
    counted: &[&RoundState],
    index: &BTreeMap<&str, usize>,
    rows: &mut [StandingRow],
) {
    let per_round = t.setup.deals_per_round;
    for round in counted {
        for deal in 1..=per_round {
            let d = usize::from(deal) - 1;
            for hand in 0..t.setup.table_size {
                let holders: Vec<(u16, Option<&str>, i32)> = round
                    .finished
                    .iter()
                    .filter_map(|(table, (_, results))| {
                        let r = results.iter().find(|r| r.seat == hand)?;
                        let score = *r.deal_scores.get(d)?;
                        Some((*table, r.account.as_deref(), score))
                    })
                    .collect();
                for (k, &(table, account, score)) in holders.iter().enumerate() {
                    let Some(&i) = account.and_then(|a| index.get(a)) else {
                        continue;
                    };
                    let others: Vec<OtherHolder> = holders
                        .iter()
                        .enumerate()
                        .filter(|(o, _)| *o != k)
                        .map(|(_, &(table, account, score))| OtherHolder {
                            table,
                            account: account.map(str::to_owned),
                            score,
                        })
                        .collect();
                    let better = others.iter().filter(|o| o.score > score).count();
                    let equal = others.iter().filter(|o| o.score == score).count();
                    let matchpoints = count_f64(better) + 0.5 * count_f64(equal);
                    let row = &mut rows[i];
                    row.points += matchpoints;
                    row.tiebreak += f64::from(score);
                    if let Some(st) = row
                        .tables
                        .iter_mut()
                        .find(|s| s.round == round.round && s.table == table)
                    {
                        st.points += matchpoints;
                    }
                    row.deals.push(DealComparison {
                        round: round.round,
                        deal,
                        number: (u16::from(round.round) - 1) * per_round + deal,
                        hand,
                        table,
                        score,
                        others,
                        matchpoints,
                    });
                }
            }
        }
    }
}

/// A count as a float (counts here are at most a few hundred).
fn count_f64(n: usize) -> f64 {
    f64::from(u32::try_from(n).unwrap_or(u32::MAX))
}
