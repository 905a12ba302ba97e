//! The outbox's worker: every replica runs one, with a sender lane per channel (webhooks,
//! mail, push), each with its own capacity, so no channel waits for another. A lane claims
//! the due rows its [`Gate`] admits, drops those no longer true, leases the others and
//! sends each on a thread of its own (a signed POST, [`crate::webhooks::sign`], to the
//! addresses the webhook's host resolves to and its policy allows; a mail rendered when it
//! is sent, [`crate::mail::render`]; a push rendered when it is sent,
//! [`crate::push::render`], encrypted and VAPID-signed, [`crate::push::deliver`], through
//! the same address policy), then records the outcome: `delivered`, another attempt after
//! a backoff, or `failed` after [`MAX_ATTEMPTS`] (at once for a refusal that would meet
//! every attempt; a push subscription its service no longer knows is removed).
//!
//! Blocking: runs on threads of its own.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use chrono::{NaiveDateTime, TimeDelta};

use super::gate::{Gate, LaneLimits};
use super::{
    Attempt, DeliveryLimits, MAX_ATTEMPTS, MAX_BACKOFF, TIME_RUNNING_LOW, YOUR_TURN,
    announced_actions,
};
use crate::store::{
    CHANNEL_MAIL, CHANNEL_PUSH, CHANNEL_WEBHOOK, DELIVERED, DROPPED, DeliveryRow, Due, FAILED,
    Store, StoreError, Tx,
};
use crate::webhooks::{CheckedResolver, DELIVERY_HEADER, SIGNATURE_HEADER, Targets, sign};

/// How the delivery worker runs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The wait after a first failed attempt; it doubles with each further failure, up to
    /// [`MAX_BACKOFF`] (`WEBHOOK_BACKOFF_MS`).
    pub backoff: Duration,
    /// The limit of one POST, connect to last byte (`WEBHOOK_TIMEOUT_MS`).
    pub timeout: Duration,
    /// Which addresses a delivery may connect to (`WEBHOOK_ALLOW_LOOPBACK`).
    pub targets: Targets,
    /// How often the outbox is looked at when nothing ends meanwhile (200 ms).
    pub poll: Duration,
    /// How much is sent at once, per account and per URL, and when a URL is paused.
    pub limits: DeliveryLimits,
    /// E-mail reminders (`SMTP_URL` set), sent from the same outbox; `None`: mail rows
    /// are dropped.
    pub mail: Option<crate::mail::MailConfig>,
    /// The VAPID keys that sign pushes; `None`: push rows are dropped.
    pub vapid: Option<crate::push::VapidKeys>,
    /// What due dates, leases, backoffs, pauses and signature timestamps are measured
    /// against (the system clock unless the server runs with a test clock).
    pub clock: crate::clock::Clock,
}

/// The steps of sending a mail that each may take up to the mail server's timeout (it is a
/// limit per step, not for the whole conversation): the lookup of the server's name, a
/// connection to each address tried ([`crate::mail::SMTP_ADDRESSES`]), and the replies the
/// conversation waits for: the greeting, `EHLO`, `STARTTLS` and `EHLO` again, `AUTH` (up to
/// three exchanges), `MAIL FROM`, `RCPT TO`, `DATA`, the message's end and `QUIT`.
#[allow(clippy::cast_possible_truncation)]
const SMTP_STEPS: u32 = 1 + crate::mail::SMTP_ADDRESSES as u32 + 12;

impl WorkerConfig {
    /// How long a claimed webhook or push delivery stays invisible to other workers: twice
    /// the POST timeout, so a lease never ends while its POST can still be under way.
    #[must_use]
    pub fn lease(&self) -> Duration {
        self.timeout.saturating_mul(2)
    }

    /// The lease of a claimed delivery of `channel`: [`WorkerConfig::lease`], but for a
    /// mail the mail server's timeout (the one lettre is given) once per step of the SMTP
    /// conversation, each of which may take up to the whole timeout, so that a slow mail
    /// server cannot outlast the lease and have the mail claimed and sent a second time.
    /// (With mail off a mail is dropped, not sent: the plain lease.)
    #[must_use]
    pub fn lease_of(&self, channel: &str) -> Duration {
        match &self.mail {
            Some(mail) if channel == CHANNEL_MAIL => mail.timeout.saturating_mul(SMTP_STEPS),
            _ => self.lease(),
        }
    }

    /// The longest lease of the lanes, within which every send ends.
    #[must_use]
    pub fn longest_lease(&self) -> Duration {
        self.lease().max(self.lease_of(CHANNEL_MAIL))
    }

    /// The wait before attempt `attempts + 1`, after `attempts` failed ones.
    #[must_use]
    pub fn backoff_after(&self, attempts: i32) -> Duration {
        let doublings = u32::try_from(attempts.saturating_sub(1))
            .unwrap_or(0)
            .min(30);
        self.backoff
            .saturating_mul(1u32 << doublings)
            .min(MAX_BACKOFF)
    }
}

fn delta(d: Duration) -> TimeDelta {
    TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX)
}

/// Where a leased delivery goes.
enum Target {
    /// A webhook POST.
    Hook {
        /// The URL.
        url: String,
        /// The HMAC key.
        secret: String,
    },
    /// A mail, rendered.
    Mail(crate::mail::Outgoing),
    /// A push, rendered (encrypted when it is sent).
    Push(crate::push::Outgoing),
}

/// A delivery a worker has leased, with where it goes.
struct Claimed {
    delivery: DeliveryRow,
    target: Target,
}

impl Claimed {
    /// The URL a webhook delivery or a push goes to (`None`: a mail), the key of the
    /// per-target limit and of the breaker.
    fn url(&self) -> Option<&str> {
        match &self.target {
            Target::Hook { url, .. } => Some(url),
            Target::Push(push) => Some(&push.endpoint),
            Target::Mail(_) => None,
        }
    }
}

/// Whether the game still asks the delivery's account for the actions its `your_turn`
/// payload announces: the seat is awaited with the same actions, and the game has not gone
/// back to before the notification.
fn still_asked(tx: &mut Tx<'_>, d: &DeliveryRow) -> Result<Asked, StoreError> {
    let announced = announced_actions(&d.payload.0).map(|a| a.join(","));
    let Some(ask) = tx.seat_ask(&d.game_id, &d.account_id)? else {
        return Ok(Asked::No);
    };
    let asked = ask.awaiting
        && ask.action.is_some()
        && ask.action == announced
        && ask.version >= d.game_version;
    if !asked {
        return Ok(Asked::No);
    }
    let low_time = d.kind == TIME_RUNNING_LOW || d.kind == crate::mail::DEADLINE_SOON;
    if !low_time {
        return Ok(Asked::Yes(None));
    }
    // A reminder of time running low is true only while the seat's deadline is within the
    // account's threshold now: the deadline may have moved later since it was written (a
    // vacation hour spent, an absence, a pause) or the threshold changed.
    let Some(deadline) = ask.deadline_at else {
        // Still asked but no deadline now: the clocks are paused, or the seat is flagged
        // and waits for the others. Looked at again in an hour (a resumed clock has a
        // deadline again, and the reminder is then due by it).
        return Ok(Asked::Later(tx.now() + TimeDelta::hours(1)));
    };
    let threshold = if d.kind == TIME_RUNNING_LOW {
        tx.vacation(&d.account_id)?
            .and_then(|v| v.webhook_low_time_minutes)
            .map(|m| TimeDelta::minutes(i64::from(m)))
    } else if d.channel == CHANNEL_PUSH {
        tx.push_settings(&d.account_id)?
            .and_then(|p| p.deadline_hours)
            .map(|h| TimeDelta::hours(i64::from(h)))
    } else {
        tx.mail_settings(&d.account_id)?
            .and_then(|m| m.deadline_hours)
            .map(|h| TimeDelta::hours(i64::from(h)))
    };
    let Some(threshold) = threshold else {
        return Ok(Asked::No);
    };
    let due = deadline - threshold;
    Ok(if due > tx.now() {
        Asked::Later(due)
    } else {
        Asked::Yes(Some(deadline))
    })
}

/// Whether a notification of a move is still true.
enum Asked {
    /// Yes: send it (a reminder of time running low with the seat's deadline as it is now).
    Yes(Option<NaiveDateTime>),
    /// The move is no longer asked (or the reminder no longer wanted): drop it.
    No,
    /// A reminder of time running low whose time is not yet low: put off until then.
    Later(NaiveDateTime),
}

/// Runs `f` with the outbox filter of a lane on `channel` whose gate is `gate`: the
/// channel's due rows but those of accounts and URLs that have no room in the gate.
fn with_due<T>(gate: &Gate, channel: &str, f: impl FnOnce(&Due<'_>) -> T) -> T {
    let skip_accounts = gate.full_accounts();
    let skip_urls = gate.full_targets();
    f(&Due {
        channel,
        skip_accounts: &skip_accounts,
        skip_urls: &skip_urls,
    })
}

/// What one claim did: the deliveries leased to be sent now, and how many other due rows
/// it settled (dropped, or postponed while their URL is paused).
struct Claim {
    leased: Vec<Claimed>,
    settled: usize,
}

/// Takes the due deliveries of `channel` that `gate` admits now (as many as the lane has
/// room for, at most `per_account` of an account and `per_target` to a URL in flight): drops
/// the `your_turn` ones the game no longer asks for, postpones those whose URL is paused
/// (without counting an attempt), counts an attempt for the others and leases them; those
/// the gate does not admit stay due. PostgreSQL skips rows another replica holds (`FOR
/// UPDATE SKIP LOCKED`), so no delivery is sent twice at the same time. `gate` is this
/// claim's copy of the lane's gate; the leased deliveries are started in it.
///
/// Mails (channel `mail`) are rendered here ([`crate::mail::render`]); one no longer
/// wanted (no address, the choice switched off, an empty digest) is dropped too, and so is
/// every mail while mail is off. So are pushes ([`crate::push::render`]): one whose
/// subscription is gone, whose kind is no longer chosen, or a "your turn" none of whose
/// games waits any more, is dropped. (A push "your turn" may stand for several games, so
/// it is checked when rendered, not by the game it was written for.)
fn claim(
    full: &mut Tx<'_>,
    config: &WorkerConfig,
    channel: &str,
    gate: &mut Gate,
) -> Result<Claim, StoreError> {
    let now = config.clock.naive();
    let mut done = Claim {
        leased: Vec::new(),
        settled: 0,
    };
    let free = gate.free();
    if free == 0 {
        return Ok(done);
    }
    // Rows the gate turns away in this claim (an account or URL filled by the rows before)
    // still take room in the window; the next claim skips them in the query.
    let window = i64::try_from(free.saturating_mul(4).clamp(16, 256)).unwrap_or(256);
    let due = with_due(gate, channel, |due| full.due_deliveries(due, now, window))?;
    if due.is_empty() {
        return Ok(done);
    }
    let hook_ids: Vec<&str> = due.iter().filter_map(|d| d.webhook_id.as_deref()).collect();
    let hooks = full.webhooks_by_id(&hook_ids)?;
    let subscription_ids: Vec<&str> = due
        .iter()
        .filter_map(|d| d.subscription_id.as_deref())
        .collect();
    let subscriptions = full.push_subscriptions_by_id(&subscription_ids)?;
    let lease_until = now + delta(config.lease_of(channel));
    for mut delivery in due {
        if gate.free() == 0 {
            break;
        }
        let asks_move = (delivery.kind == YOUR_TURN && delivery.channel != CHANNEL_PUSH)
            || delivery.kind == crate::mail::DEADLINE_SOON
            || delivery.kind == TIME_RUNNING_LOW;
        let asked = if asks_move {
            still_asked(full, &delivery)?
        } else {
            Asked::Yes(None)
        };
        if let Asked::Later(until) = asked {
            full.postpone_delivery(&delivery.id, until)?;
            tracing::debug!(
                delivery = delivery.id,
                %until,
                "put off a reminder whose deadline moved later"
            );
            done.settled += 1;
            continue;
        }
        if let Asked::Yes(Some(deadline)) = asked
            && let Some(payload) = delivery.payload.0.as_object_mut()
        {
            // The deadline as it is now (a vacation hour or an absence may have moved it
            // since the reminder was written).
            payload.insert(
                "deadline_at".into(),
                deadline
                    .and_utc()
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                    .into(),
            );
        }
        if matches!(asked, Asked::No) {
            full.finish_delivery(
                &delivery.id,
                DROPPED,
                Some("the game no longer asks for this move"),
                now,
            )?;
            tracing::debug!(
                delivery = delivery.id,
                "dropped a notification for a move no longer asked"
            );
            done.settled += 1;
            continue;
        }
        let subscription = if delivery.channel == CHANNEL_PUSH {
            let found = subscriptions
                .iter()
                .find(|s| Some(s.id.as_str()) == delivery.subscription_id.as_deref());
            let Some(found) = found else {
                full.finish_delivery(
                    &delivery.id,
                    DROPPED,
                    Some("the push subscription was removed"),
                    now,
                )?;
                done.settled += 1;
                continue;
            };
            Some(found)
        } else {
            None
        };
        let hook = if delivery.channel == CHANNEL_MAIL || delivery.channel == CHANNEL_PUSH {
            None
        } else {
            // The foreign key deletes deliveries with their webhook, so this always finds one.
            let Some(hook) = hooks
                .iter()
                .find(|h| Some(h.id.as_str()) == delivery.webhook_id.as_deref())
            else {
                continue;
            };
            Some(hook)
        };
        let url = hook
            .map(|h| h.url.as_str())
            .or(subscription.map(|s| s.endpoint.as_str()));
        if let Some(until) = url.and_then(|url| gate.paused_until(url, now)) {
            full.postpone_delivery(&delivery.id, until)?;
            tracing::debug!(
                delivery = delivery.id,
                %until,
                "postponed a delivery while its target is paused"
            );
            done.settled += 1;
            continue;
        }
        if !gate.admits(url, &delivery.account_id, now) {
            continue;
        }
        let target = if let Some(hook) = hook {
            Target::Hook {
                url: hook.url.clone(),
                secret: hook.secret.clone(),
            }
        } else if let Some(subscription) = subscription {
            let rendered = match &config.vapid {
                Some(_) => crate::push::render(full, &delivery, subscription)?,
                None => None,
            };
            let Some(push) = rendered else {
                full.finish_delivery(
                    &delivery.id,
                    DROPPED,
                    Some("no longer wanted (choice changed, no game waits, or push is off)"),
                    now,
                )?;
                done.settled += 1;
                continue;
            };
            Target::Push(push)
        } else {
            let rendered = match &config.mail {
                Some(mail) => crate::mail::render(full, &delivery, mail.link_base())?,
                None => None,
            };
            let Some(mail) = rendered else {
                full.finish_delivery(
                    &delivery.id,
                    DROPPED,
                    Some("no longer wanted (address, choice or inbox changed, or mail is off)"),
                    now,
                )?;
                done.settled += 1;
                continue;
            };
            Target::Mail(mail)
        };
        full.lease_delivery(&delivery.id, lease_until)?;
        delivery.attempts += 1;
        gate.start(url, &delivery.account_id);
        done.leased.push(Claimed { delivery, target });
    }
    Ok(done)
}

/// Sends one delivery (a POST, a mail or a push).
fn send(
    agent: &ureq::Agent,
    mailer: Option<&crate::mail::Mailer>,
    config: &WorkerConfig,
    c: &Claimed,
) -> Attempt {
    let clock = &config.clock;
    let (url, secret) = match &c.target {
        Target::Hook { url, secret } => (url, secret),
        Target::Mail(mail) => {
            return match mailer {
                Some(mailer) => mailer.send(mail).into(),
                None => Err("mail is not configured".to_owned()).into(),
            };
        }
        Target::Push(push) => {
            return match &config.vapid {
                Some(keys) => crate::push::deliver(agent, keys, push, clock.now()),
                None => Err("push is not configured".to_owned()).into(),
            };
        }
    };
    post(agent, clock, c, url, secret).into()
}

/// A signed webhook POST; `Err` describes a failed attempt.
fn post(
    agent: &ureq::Agent,
    clock: &crate::clock::Clock,
    c: &Claimed,
    url: &str,
    secret: &str,
) -> Result<(), String> {
    let body = serde_json::to_string(&c.delivery.payload.0).map_err(|e| e.to_string())?;
    let timestamp = clock.timestamp();
    let signature = sign(secret, timestamp, body.as_bytes());
    let response = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header(DELIVERY_HEADER, &c.delivery.id)
        .header(SIGNATURE_HEADER, format!("t={timestamp},v1={signature}"))
        .send(body.as_str())
        .map_err(|e| e.to_string())?;
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("the receiver answered {status}"))
    }
}

/// Records the outcome of an attempt: a retry waits the backoff, or the receiver's
/// `Retry-After` when that is longer.
fn record(
    store: &Store,
    config: &WorkerConfig,
    c: &Claimed,
    outcome: Attempt,
) -> Result<(), StoreError> {
    let now = config.clock.naive();
    let id = c.delivery.id.as_str();
    let channel = c.delivery.channel.as_str();
    let short = |error: &str| -> String { error.chars().take(500).collect() };
    store.write(|tx| match &outcome {
        Attempt::Delivered => tx.finish_delivery(id, DELIVERED, None, now),
        Attempt::Refused(error) => {
            let error = short(error);
            tracing::warn!(
                delivery = id,
                channel,
                error,
                "giving up a refused delivery"
            );
            tx.finish_delivery(id, FAILED, Some(&error), now)
        }
        Attempt::Gone(error) => {
            let error = short(error);
            tx.finish_delivery(id, FAILED, Some(&error), now)?;
            if let Some(subscription) = c.delivery.subscription_id.as_deref() {
                tracing::info!(
                    delivery = id,
                    subscription,
                    error,
                    "removing a push subscription its service no longer knows"
                );
                tx.remove_push_subscription(subscription, "the subscription has ended", now)?;
            }
            Ok(())
        }
        Attempt::Failed { error, retry_after } => {
            let error = short(error);
            if c.delivery.attempts >= MAX_ATTEMPTS {
                tracing::warn!(delivery = id, channel, error, "giving up a delivery");
                tx.finish_delivery(id, FAILED, Some(&error), now)
            } else {
                let wait = config
                    .backoff_after(c.delivery.attempts)
                    .max(retry_after.unwrap_or_default());
                tracing::info!(
                    delivery = id,
                    channel,
                    error,
                    ?wait,
                    "delivery failed; will retry"
                );
                tx.retry_delivery(id, now + delta(wait), &error)
            }
        }
    })
}

/// The HTTP client of the worker: the configured timeout, no redirects, no proxy (so the
/// address checked is the address connected to), non-2xx statuses as answers rather than
/// errors, and the [`CheckedResolver`] of the configured targets.
#[must_use]
pub fn agent(config: &WorkerConfig) -> ureq::Agent {
    let http = ureq::Agent::config_builder()
        .timeout_global(Some(config.timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .user_agent(concat!("stammtisch-webhooks/", env!("CARGO_PKG_VERSION")))
        .build();
    ureq::Agent::with_parts(
        http,
        ureq::unversioned::transport::DefaultConnector::default(),
        CheckedResolver::new(config.targets),
    )
}

/// What every sender of a replica shares.
struct Worker {
    store: Store,
    config: WorkerConfig,
    agent: ureq::Agent,
    mailer: Option<crate::mail::Mailer>,
}

/// The in-flight deliveries of a lane, and a count of the sends ended so far (it wakes the
/// lane's claimer, so a freed slot is used at once rather than at the next poll).
struct LaneState {
    gate: Gate,
    ended: u64,
}

/// One sender lane: the deliveries of one outbox channel, with sender capacity of its own,
/// so no channel waits for another. Its claimer thread claims what the lane's [`Gate`]
/// admits and starts a thread per delivery; each send ends on its own and frees its slot,
/// so a slow receiver holds back only what waits for its own slots.
struct Lane {
    channel: &'static str,
    state: Mutex<LaneState>,
    changed: Condvar,
    /// Held through a claim, from reading the due rows to starting the leased ones in the
    /// gate, so that claims take turns: once [`Outbox::settle`]'s own claim is done, every
    /// row another claim of this lane leased is in the gate's count of sends in flight.
    claiming: Mutex<()>,
}

impl Lane {
    fn new(channel: &'static str, limits: LaneLimits) -> Arc<Self> {
        Arc::new(Self {
            channel,
            state: Mutex::new(LaneState {
                gate: Gate::new(limits),
                ended: 0,
            }),
            changed: Condvar::new(),
            claiming: Mutex::new(()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, LaneState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims until nothing more is due or admitted, waiting a poll interval (or until a
    /// send ends) in between; until shutdown.
    fn run(self: &Arc<Self>, worker: &Arc<Worker>, shutdown: &tokio::sync::watch::Receiver<bool>) {
        while !*shutdown.borrow() {
            let ended = self.lock().ended;
            let claimed = {
                let _turn = self.claim_turn();
                self.dispatch(worker)
            };
            match claimed {
                Ok(progress) if progress > 0 => continue,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(channel = self.channel, error = %crate::telemetry::Chain(&e), "could not claim deliveries");
                }
            }
            let state = self.lock();
            if state.ended == ended {
                let _ = self
                    .changed
                    .wait_timeout_while(state, worker.config.poll, |s| s.ended == ended);
            }
        }
    }

    /// This lane's turn to claim (see `claiming`), held while the guard lives.
    fn claim_turn(&self) -> MutexGuard<'_, ()> {
        self.claiming.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until no send of this lane is in flight, or until `until`; returns how many
    /// still are.
    fn wait_idle(&self, until: Instant) -> usize {
        let mut state = self.lock();
        while state.gate.in_flight() > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state.gate.in_flight()
    }

    /// One claim: starts a sender per leased delivery; returns how many due rows it leased
    /// or settled.
    fn dispatch(self: &Arc<Self>, worker: &Arc<Worker>) -> Result<usize, StoreError> {
        let now = worker.config.clock.naive();
        // A copy: the claim must not hold the lock (senders end meanwhile, which only frees
        // room), and a claim that fails leaves the lane's gate untouched.
        let mut gate = {
            let state = self.lock();
            if state.gate.free() == 0 {
                return Ok(0);
            }
            state.gate.clone()
        };
        let any = with_due(&gate, self.channel, |due| {
            worker.store.read(|tx| tx.any_due(due, now))
        })?;
        if !any {
            return Ok(0);
        }
        let claim = worker
            .store
            .write(|tx| claim(tx, &worker.config, self.channel, &mut gate))?;
        {
            let mut state = self.lock();
            for c in &claim.leased {
                state.gate.start(c.url(), &c.delivery.account_id);
            }
        }
        let progress = claim.settled + claim.leased.len();
        for c in claim.leased {
            self.spawn_send(worker, c);
        }
        Ok(progress)
    }

    /// Sends and records one delivery on a thread of its own.
    fn spawn_send(self: &Arc<Self>, worker: &Arc<Worker>, c: Claimed) {
        let slot = Slot {
            lane: Arc::clone(self),
            url: c.url().map(str::to_owned),
            account: c.delivery.account_id.clone(),
        };
        let worker = Arc::clone(worker);
        let spawned = std::thread::Builder::new()
            .name(format!("{}-send", self.channel))
            .spawn(move || {
                let config = &worker.config;
                let outcome = send(&worker.agent, worker.mailer.as_ref(), config, &c);
                // The breaker learns the outcome before it is recorded: once the outbox
                // shows a failure, the pause it caused is in force.
                slot.outcome(outcome.answered(), config.clock.naive());
                if let Err(e) = record(&worker.store, &worker.config, &c, outcome) {
                    tracing::warn!(delivery = c.delivery.id, error = %crate::telemetry::Chain(&e), "could not record a delivery");
                }
            });
        // On failure the closure, and with it the slot, is dropped: the slot is freed and
        // the lease ends in time, as after a crash.
        if let Err(e) = spawned {
            tracing::error!(error = %crate::telemetry::Chain(&e), "cannot start a delivery");
        }
    }
}

/// A started delivery's place in its lane, freed when its sender ends, whichever way.
struct Slot {
    lane: Arc<Lane>,
    url: Option<String>,
    account: String,
}

impl Slot {
    /// Tells the lane's breaker how the attempt went, at `now`.
    fn outcome(&self, ok: bool, now: NaiveDateTime) {
        self.lane.lock().gate.outcome(self.url.as_deref(), ok, now);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut state = self.lane.lock();
        state.gate.release(self.url.as_deref(), &self.account);
        state.ended = state.ended.wrapping_add(1);
        drop(state);
        self.lane.changed.notify_all();
    }
}

/// The lanes of a replica's worker, to settle the outbox on demand (the test clock's
/// `POST /test/outbox`: tests see at once what is sent at the clock's time, and that
/// nothing else is, instead of waiting for the worker's poll).
#[derive(Clone)]
pub struct Outbox {
    worker: Arc<Worker>,
    lanes: Arc<[Arc<Lane>]>,
}

/// What [`Outbox::settle`] or [`Outbox::claim_once`] did.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Settled {
    /// Due rows its own claims leased or settled (the worker's threads may have claimed
    /// others meanwhile; `settle` waited for their sends too).
    pub claimed: usize,
    /// Sends in flight when it returned: for `settle`, those it stopped waiting for (0
    /// unless a receiver hangs); for `claim_once`, every send under way right after its
    /// claim.
    pub in_flight: usize,
}

impl Outbox {
    /// Claims what is due now on every lane, after any claim the lane's own thread is in,
    /// and waits (on real time, at most the longest lease, within which every send
    /// ends: [`WorkerConfig::longest_lease`]) until no send is in flight, that is
    /// until every send has been answered and its outcome recorded; again until a round
    /// that began with no send in flight claims nothing. (A claim leaves due rows where
    /// the lane, an account or a URL has no room; and a failed send may be due again at
    /// once.) When it returns with nothing in flight, everything due at the clock's time
    /// has been sent, and nothing else.
    #[must_use]
    pub fn settle(&self) -> Settled {
        let until = Instant::now() + self.worker.config.longest_lease();
        let mut claimed = 0;
        loop {
            let (progress, began_idle) = self.claim_round();
            claimed += progress;
            let in_flight = self.lanes.iter().map(|l| l.wait_idle(until)).sum();
            if in_flight > 0 || Instant::now() >= until || (progress == 0 && began_idle) {
                return Settled { claimed, in_flight };
            }
        }
    }

    /// One claim on every lane, as [`Outbox::settle`] makes, but without waiting for any
    /// send: the due rows it leased or settled, and the sends in flight after it. With
    /// `claimed: 0`, nothing due could start now: what is due waits for room (a lane's, an
    /// account's, a URL's), which only a send that ends can make. (Where receivers hang on
    /// purpose, `settle` would wait for them.)
    #[must_use]
    pub fn claim_once(&self) -> Settled {
        let (claimed, _) = self.claim_round();
        let in_flight = self.lanes.iter().map(|l| l.lock().gate.in_flight()).sum();
        Settled { claimed, in_flight }
    }

    /// Claims what is due on every lane, each in the lane's turn (after any claim its own
    /// thread is in): the due rows leased or settled, and whether no lane had a send in
    /// flight when its turn began.
    fn claim_round(&self) -> (usize, bool) {
        let mut progress = 0;
        let mut began_idle = true;
        for lane in self.lanes.iter() {
            // In the lane's turn, sends only end: none starts between the look at the gate
            // and the claim.
            let _turn = lane.claim_turn();
            began_idle &= lane.lock().gate.in_flight() == 0;
            match lane.dispatch(&self.worker) {
                Ok(n) => progress += n,
                Err(e) => {
                    tracing::warn!(channel = lane.channel, error = %crate::telemetry::Chain(&e), "could not claim deliveries");
                }
            }
        }
        (progress, began_idle)
    }
}

/// Where a replica's [`Outbox`] is found once its worker runs (it starts after the server
/// binds its address, which mail links may need).
pub type OutboxSlot = Arc<OnceLock<Outbox>>;

/// Sends due deliveries on threads of their own, until shutdown: one claimer thread per
/// lane (webhooks, mail, push) looks at the outbox every 200 ms and whenever a send ends, and
/// starts a thread per delivery it leases. Every replica runs one of each; leases (and
/// `SKIP LOCKED` on PostgreSQL) keep them from sending the same delivery at once.
pub fn spawn_worker(
    store: Store,
    config: WorkerConfig,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> Outbox {
    let mailer = config
        .mail
        .as_ref()
        .and_then(|m| match crate::mail::Mailer::new(m) {
            Ok(mailer) => Some(mailer),
            Err(e) => {
                tracing::error!(error = e, "cannot send mail");
                None
            }
        });
    let lanes = [
        (
            "webhooks",
            Lane::new(CHANNEL_WEBHOOK, config.limits.webhook_lane()),
        ),
        ("mail", Lane::new(CHANNEL_MAIL, config.limits.mail_lane())),
        ("push", Lane::new(CHANNEL_PUSH, config.limits.push_lane())),
    ];
    let worker = Arc::new(Worker {
        agent: agent(&config),
        store,
        config,
        mailer,
    });
    for (name, lane) in &lanes {
        let worker = Arc::clone(&worker);
        let lane = Arc::clone(lane);
        let shutdown = shutdown.clone();
        let spawned = std::thread::Builder::new()
            .name((*name).into())
            .spawn(move || lane.run(&worker, &shutdown));
        if let Err(e) = spawned {
            tracing::error!(lane = name, error = %crate::telemetry::Chain(&e), "cannot start a delivery worker");
        }
    }
    Outbox {
        worker,
        lanes: lanes.into_iter().map(|(_, lane)| lane).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_the_base_up_to_ten_minutes() {
        let config = WorkerConfig {
            backoff: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
            targets: Targets::default(),
            poll: Duration::from_millis(200),
            limits: DeliveryLimits::default(),
            mail: None,
            vapid: None,
            clock: crate::clock::Clock::system(),
        };
        let waits: Vec<u64> = (1..=12)
            .map(|n| config.backoff_after(n).as_secs())
            .collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600]);
        assert_eq!(config.backoff_after(i32::MAX), MAX_BACKOFF);
        assert_eq!(config.lease(), Duration::from_secs(20));
        assert_eq!(config.lease_of(CHANNEL_WEBHOOK), Duration::from_secs(20));
        assert_eq!(config.lease_of(CHANNEL_PUSH), Duration::from_secs(20));
        assert_eq!(
            config.longest_lease(),
            Duration::from_secs(20),
            "mail is off"
        );
        // A mail's lease outlasts a send whose every step takes the whole timeout (the mail
        // server's, as lettre has it): the name's lookup, two connections, twelve replies.
        let config = WorkerConfig {
            mail: Some(crate::mail::MailConfig {
                smtp_url: "smtp://127.0.0.1:25".into(),
                from: "Stammtisch <noreply@example.org>".into(),
                public_url: "https://play.example.org".into(),
                digest_interval: Duration::from_secs(86_400),
                timeout: Duration::from_secs(10),
                bound: std::sync::Arc::default(),
            }),
            ..config
        };
        assert_eq!(config.lease_of(CHANNEL_MAIL), Duration::from_secs(150));
        assert_eq!(config.lease_of(CHANNEL_WEBHOOK), Duration::from_secs(20));
        assert_eq!(config.longest_lease(), Duration::from_secs(150));
    }
}
