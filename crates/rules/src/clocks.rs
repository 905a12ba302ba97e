//! Clocks (issue 28): a game's time control, the seats' time banks folded from events, and
//! the pure arithmetic over them. The rules read no clock: every function that needs the
//! time takes `now`.
//!
//! The banks live in the last `clocks_set` event: the bank of every seat at its instant
//! `at`, and which clocks run from then on. A running clock's bank at `T` is
//! `remaining_ms - (T - at)`, never below zero. The server writes a new `clocks_set`
//! whenever a command or an expiry changes which clocks run or their banks
//! ([`Game::next_clocks`]); the seats' deadlines are derived from it (the flag-fall
//! instants, [`Game::apply`] of `clocks_set`), so the server's deadline machinery wakes a
//! game when a flag falls. See `docs/clocks.md`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::RuleError;
use crate::game::Game;
use crate::model::{Command, Event, SeatDeadline, Status};

/// Run-outs after which a seat is handed to a bot.
pub const MAX_TIMEOUTS: u8 = 3;

/// Live or correspondence play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ClockKind {
    /// Minutes per game, seconds per move.
    Live,
    /// Days per game; pauses by agreement and vacation.
    Correspondence,
}

/// What happens when a seat's bank reaches zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum AtZero {
    /// The server moves for the seat (the heuristic bot; `take_row`: the cheapest row).
    #[default]
    BotMoves,
    /// The seat's clock stops, flagged; the other people may hand it to a bot
    /// (`hand_to_bot`) or wait. Only in games without bots at the start (else `bot_moves`).
    OthersDecide,
}

/// A game's time control, as sent in `POST /v1/games` and as recorded (defaults filled).
/// One that exists is valid: it is checked as it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "TimeControlInput")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TimeControl {
    /// `live` or `correspondence`.
    pub kind: ClockKind,
    /// Each seat's bank at the start. live: 30–7200; correspondence: 3600–2592000 (30 days).
    pub initial_seconds: u32,
    /// Added to a seat's bank when it completes a move. live: 0–600; correspondence:
    /// 0–2592000.
    pub increment_seconds: u32,
    /// The most a bank holds after an increment (at least `initial_seconds`); absent: no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false, minimum = 30))]
    pub max_seconds: Option<u32>,
    /// What happens at zero (default `bot_moves`).
    #[serde(default)]
    pub at_zero: AtZero,
    /// Correspondence only (default `true`): whether the seats' accounts may spend vacation
    /// in this game. Always `false` for live games.
    #[serde(default)]
    pub vacation: bool,
}

/// The unchecked form of a [`TimeControl`].
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimeControlInput {
    kind: ClockKind,
    initial_seconds: u32,
    #[serde(default)]
    increment_seconds: u32,
    #[serde(default)]
    max_seconds: Option<u32>,
    #[serde(default)]
    at_zero: AtZero,
    #[serde(default)]
    vacation: Option<bool>,
}

/// The longest bank a time control may set (a year), so sums of milliseconds stay small.
const MAX_BANK_SECONDS: u32 = 31_536_000;

impl TryFrom<TimeControlInput> for TimeControl {
    type Error = RuleError;
    fn try_from(input: TimeControlInput) -> Result<Self, RuleError> {
        let bad = |m: String| Err(RuleError::InvalidTimeControl(m));
        let (initial, increment) = match input.kind {
            ClockKind::Live => (30..=7200, 0..=600),
            ClockKind::Correspondence => (3600..=2_592_000, 0..=2_592_000),
        };
        let kind = match input.kind {
            ClockKind::Live => "live",
            ClockKind::Correspondence => "correspondence",
        };
        if !initial.contains(&input.initial_seconds) {
            return bad(format!(
                "initial_seconds of a {kind} game must be {} to {}",
                initial.start(),
                initial.end()
            ));
        }
        if !increment.contains(&input.increment_seconds) {
            return bad(format!(
                "increment_seconds of a {kind} game must be {} to {}",
                increment.start(),
                increment.end()
            ));
        }
        if let Some(max) = input.max_seconds
            && (max < input.initial_seconds || max > MAX_BANK_SECONDS)
        {
            return bad(format!(
                "max_seconds must be at least initial_seconds and at most {MAX_BANK_SECONDS}"
            ));
        }
        let vacation = match (input.kind, input.vacation) {
            (ClockKind::Live, Some(true)) => {
                return bad("vacation is for correspondence games only".into());
            }
            (ClockKind::Live, _) => false,
            (ClockKind::Correspondence, v) => v.unwrap_or(true),
        };
        Ok(Self {
            kind: input.kind,
            initial_seconds: input.initial_seconds,
            increment_seconds: input.increment_seconds,
            max_seconds: input.max_seconds,
            at_zero: input.at_zero,
            vacation,
        })
    }
}

/// One seat's clock at an instant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeatClock {
    /// The seat (0-based).
    pub seat: u8,
    /// The bank at the instant (`at` of the event, `clocks_at` of a view), never negative.
    pub remaining_ms: u64,
    /// Counting down from that instant.
    pub running: bool,
    /// Reached zero and waits for the others (`at_zero: others_decide`).
    pub flagged: bool,
    /// On vacation until then: the clock does not run.
    #[serde(default, with = "optional_instant")]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub away_until: Option<DateTime<Utc>>,
}

/// The data of a `clocks_set` event: every seat's bank at `at`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClocksSnapshot {
    /// The instant the banks were computed (UTC, milliseconds).
    #[serde(with = "crate::model::rfc3339_millis")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub at: DateTime<Utc>,
    /// One per seat, seat 0 first.
    pub clocks: Vec<SeatClock>,
    /// The clocks are paused by agreement.
    pub paused: bool,
}

/// A pause by agreement (correspondence games).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PauseView {
    /// The seat that proposed it.
    pub proposed_by: u8,
    /// The seats that accepted it (the proposer included).
    pub accepted: Vec<u8>,
    /// Every person accepted: the clocks stand still until a seat resumes.
    pub paused: bool,
}

/// Why a seat went to a bot because of its clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum HandedCause {
    /// Its third run-out.
    Timeouts,
    /// The other people chose `hand_to_bot` while it was flagged.
    Others,
    /// A tournament round's deadline passed with the game unfinished: the server handed
    /// every remaining person to a bot, which played the game out.
    RoundDeadline,
}

/// The clock state of a game with a time control, folded from its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockState {
    /// The time control.
    pub control: TimeControl,
    /// The banks as of the last `clocks_set` (with run-outs and vacation folded in).
    pub snapshot: Option<ClocksSnapshot>,
    /// Run-outs per seat.
    pub timeouts: Vec<u8>,
    /// Seats handed to a bot because of their clock.
    pub lost_on_time: Vec<bool>,
    /// A pause proposed or in force.
    pub pause: Option<PauseView>,
    /// Bots sat at the table when the game started (`others_decide` then acts as
    /// `bot_moves`).
    pub bots_at_start: bool,
}

impl ClockState {
    fn new(control: TimeControl, players: u8) -> Self {
        Self {
            control,
            snapshot: None,
            timeouts: vec![0; usize::from(players)],
            lost_on_time: vec![false; usize::from(players)],
            pause: None,
            bots_at_start: false,
        }
    }

    /// What happens at zero in this game (`others_decide` needs a table without bots at
    /// the start).
    #[must_use]
    pub fn at_zero(&self) -> AtZero {
        if self.bots_at_start {
            AtZero::BotMoves
        } else {
            self.control.at_zero
        }
    }

    fn paused(&self) -> bool {
        self.pause.as_ref().is_some_and(|p| p.paused)
    }
}

/// A bank after `elapsed` ms of running, never below zero.
#[must_use]
pub fn charge(remaining_ms: u64, elapsed_ms: u64) -> u64 {
    remaining_ms.saturating_sub(elapsed_ms)
}

/// A bank after a completed move: plus the increment, capped at `max_seconds` (a bank
/// already above the cap, e.g. by vacation, keeps what it has).
#[must_use]
pub fn credit(remaining_ms: u64, control: &TimeControl) -> u64 {
    let raised = remaining_ms.saturating_add(u64::from(control.increment_seconds) * 1000);
    match control.max_seconds {
        Some(max) => raised.min((u64::from(max) * 1000).max(remaining_ms)),
        None => raised,
    }
}

fn elapsed_ms(from: DateTime<Utc>, to: DateTime<Utc>) -> u64 {
    u64::try_from((to - from).num_milliseconds()).unwrap_or(0)
}

/// `now` as stored: milliseconds.
#[must_use]
pub fn millis(now: DateTime<Utc>) -> DateTime<Utc> {
    chrono::SubsecRound::trunc_subsecs(now, 3)
}

impl Game {
    /// The seats' clocks at `now` (`None`: no time control, or the game has not started).
    #[must_use]
    pub fn clocks_at(&self, now: DateTime<Utc>) -> Option<Vec<SeatClock>> {
        let snapshot = self.clock.as_ref()?.snapshot.as_ref()?;
        Some(
            snapshot
                .clocks
                .iter()
                .map(|c| SeatClock {
                    remaining_ms: if c.running {
                        charge(c.remaining_ms, elapsed_ms(snapshot.at, millis(now)))
                    } else {
                        c.remaining_ms
                    },
                    ..c.clone()
                })
                .collect(),
        )
    }

    /// Whether `seat`'s clock runs now by the state of play (asked to act, a person, the
    /// game active and not paused); flags and vacation are the caller's.
    fn clock_should_run(&self, seat: u8) -> bool {
        let Some(clock) = &self.clock else {
            return false;
        };
        self.status() == Status::Active
            && !clock.paused()
            && self
                .seats
                .get(usize::from(seat))
                .is_some_and(|s| s.account().is_some() && !s.bot_controlled())
            && self.is_awaited(seat)
    }

    /// The `clocks_set` a change calls for, or `None` when nothing changed. `self` is the
    /// game after the change's events (its snapshot is still the one before); `acted` is
    /// the seat that completed a move in it (its bank gets the increment when its clock
    /// ran or was flagged). Clocks start at the first call after the game started.
    #[must_use]
    pub fn next_clocks(&self, acted: Option<u8>, now: DateTime<Utc>) -> Option<Event> {
        self.clocks_event(acted, now, false)
    }

    /// [`Game::next_clocks`], written even when nothing else changed: after a run-out,
    /// whose flag (or bank of zero) the stream must show.
    #[must_use]
    pub fn clocks_after_run_out(&self, acted: Option<u8>, now: DateTime<Utc>) -> Option<Event> {
        self.clocks_event(acted, now, true)
    }

    fn clocks_event(&self, acted: Option<u8>, now: DateTime<Utc>, force: bool) -> Option<Event> {
        let clock = self.clock.as_ref()?;
        if self.status() == Status::Lobby {
            return None;
        }
        let now = millis(now);
        let before = self.clocks_at(now);
        let initial = u64::from(clock.control.initial_seconds) * 1000;
        let clocks: Vec<SeatClock> = (0..self.setup.players)
            .map(|seat| {
                let old = before.as_ref().and_then(|b| b.get(usize::from(seat)));
                let mut remaining = old.map_or(initial, |c| c.remaining_ms);
                let mut flagged = old.is_some_and(|c| c.flagged);
                let was_on = old.is_some_and(|c| c.running || c.flagged);
                if acted == Some(seat) && was_on {
                    remaining = credit(remaining, &clock.control);
                    flagged = false;
                }
                let bot = self
                    .seats
                    .get(usize::from(seat))
                    .is_none_or(crate::model::Seat::bot_controlled);
                if bot || self.status() != Status::Active {
                    flagged = false;
                }
                let away_until = old.and_then(|c| c.away_until).filter(|t| *t > now);
                SeatClock {
                    seat,
                    remaining_ms: remaining,
                    running: !flagged && away_until.is_none() && self.clock_should_run(seat),
                    flagged,
                    away_until,
                }
            })
            .collect();
        let paused = clock.paused();
        let next = ClocksSnapshot {
            at: now,
            clocks,
            paused,
        };
        let unchanged = before.as_ref().is_some_and(|b| *b == next.clocks)
            && clock.snapshot.as_ref().is_some_and(|s| s.paused == paused)
            && self.flag_falls(&next) == self.deadlines;
        (force || !unchanged).then_some(Event::ClocksSet(Box::new(next)))
    }

    /// The deadlines a snapshot means: each running clock's flag-fall instant, and for a
    /// seat away on vacation and asked to act, the instant it comes back.
    #[must_use]
    pub fn flag_falls(&self, snapshot: &ClocksSnapshot) -> Vec<SeatDeadline> {
        let asks = self.awaiting();
        snapshot
            .clocks
            .iter()
            .filter_map(|c| {
                let action = asks.iter().find(|a| a.seat == c.seat)?.action;
                let at = if c.running {
                    snapshot.at
                        + chrono::Duration::milliseconds(
                            i64::try_from(c.remaining_ms).unwrap_or(i64::MAX / 2),
                        )
                } else {
                    let away = c.away_until?;
                    if c.flagged || !self.clock_should_run(c.seat) {
                        return None;
                    }
                    away
                };
                Some(SeatDeadline {
                    seat: c.seat,
                    action: action.to_owned(),
                    at,
                })
            })
            .collect()
    }

    /// The events of a seat's run-out: `clock_ran_out`, and at the third
    /// `seat_handed_to_bot`.
    #[must_use]
    pub fn run_out(&self, seat: u8) -> Vec<Event> {
        let Some(clock) = &self.clock else {
            return Vec::new();
        };
        let timeouts = clock
            .timeouts
            .get(usize::from(seat))
            .copied()
            .unwrap_or(0)
            .saturating_add(1);
        let mut events = vec![Event::ClockRanOut { seat, timeouts }];
        if timeouts >= MAX_TIMEOUTS {
            events.push(Event::SeatHandedToBot {
                seat,
                cause: HandedCause::Timeouts,
            });
        }
        events
    }

    /// Whether a seat's clock is flagged (reached zero, waiting for the others).
    #[must_use]
    pub fn is_flagged(&self, seat: u8) -> bool {
        self.clock
            .as_ref()
            .and_then(|c| c.snapshot.as_ref())
            .and_then(|s| s.clocks.get(usize::from(seat)))
            .is_some_and(|c| c.flagged)
    }

    /// The seat a person sits at and plays (not handed to a bot), for clock commands.
    fn person_seat(&self, account: &str) -> Result<u8, RuleError> {
        let seat = self.seat_of(account).ok_or(RuleError::NotAPlayer)?;
        if self.status() != Status::Active {
            return Err(RuleError::GameNotActive);
        }
        if self.seats[usize::from(seat)].bot_controlled() {
            return Err(RuleError::Resigned);
        }
        Ok(seat)
    }

    /// The seats a person still plays (taken by an account and not handed to a bot).
    #[must_use]
    pub fn people(&self) -> Vec<u8> {
        (0..self.setup.players)
            .filter(|s| {
                self.seats
                    .get(usize::from(*s))
                    .is_some_and(|x| x.account().is_some() && !x.bot_controlled())
            })
            .collect()
    }

    /// Decides a clock command (`hand_to_bot`, `propose_pause`, `accept_pause`,
    /// `decline_pause`, `resume`) of a person.
    ///
    /// # Errors
    /// The rule it breaks.
    pub fn decide_clock(&self, account: &str, command: &Command) -> Result<Vec<Event>, RuleError> {
        let clock = self.clock.as_ref().ok_or(RuleError::NoTimeControl)?;
        let seat = self.person_seat(account)?;
        let correspondence = clock.control.kind == ClockKind::Correspondence;
        let pause = clock.pause.as_ref();
        match command {
            Command::HandToBot { seat: target } => {
                if *target == seat || !self.is_flagged(*target) {
                    return Err(RuleError::NotFlagged { seat: *target });
                }
                Ok(vec![Event::SeatHandedToBot {
                    seat: *target,
                    cause: HandedCause::Others,
                }])
            }
            Command::ProposePause {} => {
                if !correspondence {
                    return Err(RuleError::PauseNotAllowed);
                }
                if pause.is_some() {
                    return Err(RuleError::PauseAlreadyProposed);
                }
                let mut events = vec![Event::PauseProposed { seat }];
                if self.people() == [seat] {
                    events.push(Event::ClocksPaused {});
                }
                Ok(events)
            }
            Command::AcceptPause {} => {
                let p = pause
                    .filter(|p| !p.paused)
                    .ok_or(RuleError::NoPauseProposed)?;
                if p.accepted.contains(&seat) {
                    return Err(RuleError::PauseAlreadyAccepted);
                }
                let mut events = vec![Event::PauseAccepted { seat }];
                let all = self
                    .people()
                    .iter()
                    .all(|s| *s == seat || p.accepted.contains(s));
                if all {
                    events.push(Event::ClocksPaused {});
                }
                Ok(events)
            }
            Command::DeclinePause {} => {
                pause
                    .filter(|p| !p.paused)
                    .ok_or(RuleError::NoPauseProposed)?;
                Ok(vec![Event::PauseDeclined { seat }])
            }
            Command::Resume {} => {
                pause.filter(|p| p.paused).ok_or(RuleError::NotPaused)?;
                Ok(vec![Event::ClocksResumed { seat }])
            }
            other => Err(RuleError::UnknownCommand {
                command: other.name(),
            }),
        }
    }

    /// The clock commands `account` may send now.
    #[must_use]
    pub fn clock_legal(&self, account: &str) -> Vec<Command> {
        let Some(clock) = &self.clock else {
            return Vec::new();
        };
        let Ok(seat) = self.person_seat(account) else {
            return Vec::new();
        };
        let mut legal: Vec<Command> = (0..self.setup.players)
            .filter(|s| *s != seat && self.is_flagged(*s))
            .map(|s| Command::HandToBot { seat: s })
            .collect();
        if clock.control.kind == ClockKind::Correspondence {
            match &clock.pause {
                None => legal.push(Command::ProposePause {}),
                Some(p) if p.paused => legal.push(Command::Resume {}),
                Some(p) => {
                    if !p.accepted.contains(&seat) {
                        legal.push(Command::AcceptPause {});
                    }
                    legal.push(Command::DeclinePause {});
                }
            }
        }
        legal
    }

    /// Folds a clock event into the state.
    pub(crate) fn apply_clock(&mut self, event: &Event) {
        if let Event::TimeControlSet { time_control } = event {
            self.clock = Some(ClockState::new(*time_control, self.setup.players));
            return;
        }
        if let Event::ClocksSet(snapshot) = event {
            let deadlines = self.flag_falls(snapshot);
            if let Some(clock) = &mut self.clock {
                clock.snapshot = Some(snapshot.as_ref().clone());
            }
            self.deadlines = deadlines;
            return;
        }
        if let Event::SeatHandedToBot { seat, .. } = event
            && let Some(s) = self.seats.get_mut(usize::from(*seat))
        {
            s.resigned = true;
        }
        let bots = self.seats.iter().any(crate::model::Seat::bot_controlled);
        let Some(clock) = &mut self.clock else {
            return;
        };
        match event {
            Event::GameStarted {} => clock.bots_at_start = bots,
            Event::ClockRanOut { seat, timeouts } => {
                let mode = clock.at_zero();
                if let Some(t) = clock.timeouts.get_mut(usize::from(*seat)) {
                    *t = *timeouts;
                }
                if let Some(c) = clock
                    .snapshot
                    .as_mut()
                    .and_then(|s| s.clocks.get_mut(usize::from(*seat)))
                {
                    // At zero: waiting for the others, or still "on" for the bot's move
                    // that completes the seat's turn (its bank becomes the increment).
                    c.remaining_ms = 0;
                    c.flagged = mode == AtZero::OthersDecide;
                    c.running = mode == AtZero::BotMoves;
                }
                self.deadlines.retain(|d| d.seat != *seat);
            }
            Event::SeatHandedToBot { seat, .. } => {
                if let Some(l) = clock.lost_on_time.get_mut(usize::from(*seat)) {
                    *l = true;
                }
            }
            Event::VacationSpent { seat, hours } => {
                if let Some(c) = clock
                    .snapshot
                    .as_mut()
                    .and_then(|s| s.clocks.get_mut(usize::from(*seat)))
                {
                    c.remaining_ms = c.remaining_ms.saturating_add(u64::from(*hours) * 3_600_000);
                }
            }
            Event::PauseProposed { seat } => {
                clock.pause = Some(PauseView {
                    proposed_by: *seat,
                    accepted: vec![*seat],
                    paused: false,
                });
            }
            Event::PauseAccepted { seat } => {
                if let Some(p) = &mut clock.pause
                    && !p.accepted.contains(seat)
                {
                    p.accepted.push(*seat);
                }
            }
            Event::PauseDeclined { .. } | Event::ClocksResumed { .. } => clock.pause = None,
            Event::ClocksPaused {} => {
                if let Some(p) = &mut clock.pause {
                    p.paused = true;
                }
            }
            _ => {}
        }
    }
}

/// An optional instant in the wire form of [`crate::model::rfc3339_millis`].
mod optional_instant {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        at: &Option<DateTime<Utc>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match at {
            Some(at) => crate::model::rfc3339_millis::serialize(at, s),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<DateTime<Utc>>, D::Error> {
        let text = Option::<String>::deserialize(d)?;
        text.map(|t| {
            DateTime::parse_from_rfc3339(&t)
                .map(|t| t.with_timezone(&Utc))
                .map_err(serde::de::Error::custom)
        })
        .transpose()
    }
}
