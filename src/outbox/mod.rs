//! The durable outbox of notifications: webhook POSTs, e-mail reminders and Web Push
//! notifications, one table (`webhook_deliveries`) with a channel per kind of sender
//! (`webhook`, `mail`, `push`).
//!
//! The channels put their rows into the queue themselves, in the transaction that appends
//! the game change that causes them (`crate::webhooks::enqueue`, `crate::mail::enqueue`,
//! `crate::push::enqueue`),
//! so a notification exists exactly when its cause was committed; this module holds what
//! they share: the kinds both announce, what a change of a game announces
//! ([`Announcements`]), the retry bounds and the worker's limits ([`DeliveryLimits`]).
//!
//! The worker of each replica ([`worker`]) has a lane per channel, each with its own sender
//! capacity: a lane claims the due rows its [`gate::Gate`] admits (bounded per account and
//! per URL, none to a paused URL), checks that the game still asks for the move a row
//! announces (otherwise the row is `dropped`), and sends each on a thread of its own, which
//! records the outcome: `delivered` on success, another attempt after an exponential
//! backoff otherwise, `failed` after [`MAX_ATTEMPTS`]. No send waits for another, so a slow
//! receiver holds back only its own deliveries. A delivery keeps its id across attempts,
//! so receivers drop duplicates by it.
//!
//! Blocking: call from `web::block` or a thread of its own. Knows no HTTP routes.

pub mod gate;
pub mod worker;

use std::time::Duration;

use serde_json::{Value, json};

use rules::{Game, Status};

use gate::LaneLimits;

/// A delivery is given up (`failed`) after this many attempts.
pub const MAX_ATTEMPTS: i32 = 10;
/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(600);
/// Notification kind: the account must act in a game.
pub const YOUR_TURN: &str = "your_turn";
/// Webhook kind: the account's time for a move asked of it runs low (its seat's deadline,
/// or the flag-fall of its clock, is less than the account's `low_time_minutes` away).
pub const TIME_RUNNING_LOW: &str = "time_running_low";
/// Notification kind: a game the account sits in has ended.
pub const GAME_FINISHED: &str = "game_finished";

/// How one attempt to send a delivery went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// The receiver accepted it.
    Delivered,
    /// It failed; another attempt follows after the backoff, or after `retry_after` (the
    /// receiver's `Retry-After`) when that is longer, until [`MAX_ATTEMPTS`].
    Failed {
        /// What went wrong.
        error: String,
        /// How long the receiver asked to wait.
        retry_after: Option<Duration>,
    },
    /// The receiver refused it in a way another attempt would meet again: given up now.
    Refused(String),
    /// The push service no longer knows the subscription (404, 410): given up, and the
    /// subscription removed.
    Gone(String),
}

impl Attempt {
    /// Whether the receiver answered as a working receiver does (the breaker counts the
    /// other outcomes as failures of its target).
    #[must_use]
    pub fn answered(&self) -> bool {
        !matches!(self, Self::Failed { .. })
    }
}

impl From<Result<(), String>> for Attempt {
    fn from(outcome: Result<(), String>) -> Self {
        match outcome {
            Ok(()) => Self::Delivered,
            Err(error) => Self::Failed {
                error,
                retry_after: None,
            },
        }
    }
}

/// What a seat holds and has done, as the seat itself sees it: it changes when the seat
/// acts (a card played or taken, chips paid, a new deal), and not when others act. An ask
/// with the same actions but another fingerprint is a new ask (the next turn).
fn fingerprint(game: &Game, seat: u8, account: &str) -> Value {
    let view = game.view_for(Some(account));
    let mut seat_view = view
        .seats
        .get(usize::from(seat))
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(Value::Null);
    if let Some(object) = seat_view.as_object_mut() {
        object.remove("deadline_at");
    }
    json!({
        "round": view.round,
        "you": serde_json::to_value(&view.you).unwrap_or(Value::Null),
        "seat": seat_view,
    })
}

/// The people asked to act in `after` who were not asked the same in `before` (other
/// actions, or the same actions at a later point of the game: a new turn). Webhooks and
/// mails announce exactly these.
#[must_use]
pub fn new_asks<'a>(before: &Game, after: &'a Game) -> Vec<rules::PersonAsk<'a>> {
    let asked_before = before.person_asks();
    after
        .person_asks()
        .into_iter()
        .filter(|ask| {
            let same = asked_before.iter().any(|b| {
                b.seat == ask.seat && b.account == ask.account && b.actions == ask.actions
            }) && fingerprint(before, ask.seat, ask.account)
                == fingerprint(after, ask.seat, ask.account);
            !same
        })
        .collect()
}

/// The seated people `(seat, account)` of a game that `after` finished (empty unless this
/// change ended it).
#[must_use]
pub fn finished_seats<'a>(before: &Game, after: &'a Game) -> Vec<(u8, &'a str)> {
    if after.status() == Status::Finished && before.status() != Status::Finished {
        after
            .seats
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((u8::try_from(i).ok()?, s.account()?)))
            .collect()
    } else {
        Vec::new()
    }
}

/// The seats a rematch keeps, with the account each is kept for: `(seat, account)`.
#[must_use]
pub fn kept_seats(game: &Game) -> Vec<(u8, &str)> {
    game.seats
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((u8::try_from(i).ok()?, s.reserved_for.as_deref()?)))
        .collect()
}

/// What a change of a game announces, worked out once per append for every channel
/// (webhooks and mail reminders): the people newly asked to act ([`new_asks`], which renders
/// views, so it is not worth doing twice) and the seated people of a game the change ended.
pub struct Announcements<'a> {
    /// New asks.
    pub turns: Vec<rules::PersonAsk<'a>>,
    /// `(seat, account)` of every seated person, when the change ended the game.
    pub finished: Vec<(u8, &'a str)>,
}

impl<'a> Announcements<'a> {
    /// What the change from `before` to `after` announces.
    #[must_use]
    pub fn of(before: &Game, after: &'a Game) -> Self {
        Self {
            turns: new_asks(before, after),
            finished: finished_seats(before, after),
        }
    }

    /// Nothing to announce.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty() && self.finished.is_empty()
    }

    /// Everyone concerned, sorted, once each.
    #[must_use]
    pub fn accounts(&self) -> Vec<&'a str> {
        let mut accounts: Vec<&str> = self
            .turns
            .iter()
            .map(|t| t.account)
            .chain(self.finished.iter().map(|(_, a)| *a))
            .collect();
        accounts.sort_unstable();
        accounts.dedup();
        accounts
    }
}

/// The actions a `your_turn` payload announces (`["play_card"]`, `["pass", "take"]`).
pub(crate) fn announced_actions(payload: &Value) -> Option<Vec<&str>> {
    payload
        .get("actions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
}

/// How many deliveries the worker of one replica sends at once, and when it pauses a
/// failing webhook URL or push endpoint (see [`gate`]): `WEBHOOK_CONCURRENCY`,
/// `MAIL_CONCURRENCY`, `PUSH_CONCURRENCY`, `WEBHOOK_PER_TARGET`, `WEBHOOK_PER_ACCOUNT`,
/// `WEBHOOK_BREAKER_FAILURES` and `WEBHOOK_BREAKER_PAUSE_MS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryLimits {
    /// Webhook POSTs in flight at once (at least 1).
    pub concurrency: usize,
    /// Mails in flight at once, beside the webhooks (at least 1).
    pub mail_concurrency: usize,
    /// Pushes in flight at once, beside the webhooks and mails (at least 1).
    pub push_concurrency: usize,
    /// Deliveries to one webhook URL or push endpoint in flight at once (`0`: no limit).
    pub per_target: usize,
    /// Deliveries of one account in flight at once, per lane (`0`: no limit).
    pub per_account: usize,
    /// Failed attempts in a row that pause a webhook URL or push endpoint (`0`: never
    /// paused).
    pub breaker_failures: u32,
    /// The first pause of a failing URL; doubling with each further trip, up to
    /// [`MAX_BACKOFF`].
    pub breaker_pause: Duration,
}

impl Default for DeliveryLimits {
    fn default() -> Self {
        Self {
            concurrency: 32,
            mail_concurrency: 4,
            push_concurrency: 8,
            per_target: 2,
            per_account: 4,
            breaker_failures: 3,
            breaker_pause: Duration::from_secs(30),
        }
    }
}

impl DeliveryLimits {
    /// The limits of the webhook lane.
    #[must_use]
    pub fn webhook_lane(&self) -> LaneLimits {
        LaneLimits {
            concurrency: self.concurrency.max(1),
            per_account: self.per_account,
            per_target: self.per_target,
            breaker_failures: self.breaker_failures,
            pause: self.breaker_pause,
        }
    }

    /// The limits of the mail lane: all mail goes to the one mail server, so there is no
    /// per-target limit or breaker (a failing server fails every mail alike, and each mail
    /// follows the retry schedule).
    #[must_use]
    pub fn mail_lane(&self) -> LaneLimits {
        LaneLimits {
            concurrency: self.mail_concurrency.max(1),
            per_account: self.per_account,
            per_target: 0,
            breaker_failures: 0,
            pause: self.breaker_pause,
        }
    }

    /// The limits of the push lane: like the webhook lane's, per push endpoint (one
    /// browser), with the breaker pausing an endpoint that keeps failing.
    #[must_use]
    pub fn push_lane(&self) -> LaneLimits {
        LaneLimits {
            concurrency: self.push_concurrency.max(1),
            ..self.webhook_lane()
        }
    }
}
