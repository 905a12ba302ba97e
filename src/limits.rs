//! Rate limits: guests and registrations per client address, games and open lobbies per
//! account, commands per account, concurrent live streams per account, password checks
//! per client address, failed password checks per name and client address and per client
//! address, verification mails per account and per recipient.
//!
//! Failed logins never lock a person out from elsewhere: they count per name *and*
//! address (and per address overall), so the owner signing in from their own address gets
//! in while someone else's guesses are refused. An attempt is reserved (counted as a
//! failure) before the password is checked, atomically, and given back when it succeeds:
//! parallel guesses cannot all pass a check made before any of them was counted.
//!
//! Counts are shared by every replica on PostgreSQL and kept in memory on SQLite (see
//! `store::counters`). A refusal says how long to wait (`Retry-After`). Knows no HTTP.

use std::time::Duration;

use crate::store::{Store, StoreError};

/// Limits per subject; `0` switches a limit off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitConfig {
    /// Guest accounts per client address and hour.
    pub guests_per_hour: u32,
    /// Games created per account and hour.
    pub games_per_hour: u32,
    /// Lobbies (games not yet started) an account may host at once.
    pub open_lobbies: u32,
    /// Commands per account and minute.
    pub commands_per_minute: u32,
    /// Live streams an account may hold open at once.
    pub streams: u32,
    /// Failed password checks per name and client address within [`LOGIN_WINDOW`].
    pub failed_logins: u32,
    /// Failed password checks per client address (any names) within [`LOGIN_WINDOW`].
    pub failed_logins_per_address: u32,
    /// Password checks (logins, password changes, deletions) per client address and
    /// minute, successful or not.
    pub logins_per_minute: u32,
    /// Registered accounts created per client address and hour.
    pub accounts_per_hour: u32,
    /// Verification mails per account and per recipient address and hour.
    pub mails_per_hour: u32,
}

impl LimitConfig {
    /// No limits at all (tools and measurements).
    pub const NONE: Self = Self {
        guests_per_hour: 0,
        games_per_hour: 0,
        open_lobbies: 0,
        commands_per_minute: 0,
        streams: 0,
        failed_logins: 0,
        failed_logins_per_address: 0,
        logins_per_minute: 0,
        accounts_per_hour: 0,
        mails_per_hour: 0,
    };
}

impl Default for LimitConfig {
    fn default() -> Self {
        Self {
            guests_per_hour: 30,
            games_per_hour: 60,
            open_lobbies: 10,
            commands_per_minute: 600,
            streams: 20,
            failed_logins: 5,
            failed_logins_per_address: 20,
            logins_per_minute: 30,
            accounts_per_hour: 10,
            mails_per_hour: 5,
        }
    }
}

/// The window of the failed-login limit.
pub const LOGIN_WINDOW: Duration = Duration::from_secs(300);
/// How long a stream lease lasts without renewal (its holder renews it every half of it).
pub const LEASE: Duration = Duration::from_secs(60);

/// A refusal: which limit, and how long until it lifts.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    /// Over a limit.
    #[error("{what}; retry in {retry_after} s")]
    Exceeded {
        /// Stable code, e.g. `too_many_commands`.
        code: &'static str,
        /// What was exceeded, for people.
        what: String,
        /// Seconds until it may succeed.
        retry_after: u64,
    },
    /// Counting failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What is counted.
#[derive(Debug, Clone, Copy)]
enum Counted {
    Guests,
    Games,
    Commands,
    /// Per `name@address`.
    FailedLogins,
    /// Per address.
    FailedLoginsFrom,
    Logins,
    Accounts,
    Mails,
}

impl Counted {
    fn key(self, subject: &str) -> String {
        let kind = match self {
            Self::Guests => "guests",
            Self::Games => "games",
            Self::Commands => "commands",
            Self::FailedLogins => "logins",
            Self::FailedLoginsFrom => "logins-from",
            Self::Logins => "checks",
            Self::Accounts => "accounts",
            Self::Mails => "mails",
        };
        format!("{kind}:{subject}")
    }
}

/// The command limit's window, code and wording.
const COMMAND_WINDOW: Duration = Duration::from_secs(60);
const COMMAND_CODE: &str = "too_many_commands";
const COMMAND_WHAT: &str = "too many commands";

/// A refusal of the limit `code`.
fn exceeded(code: &'static str, what: &str, retry_after: u64) -> LimitError {
    LimitError::Exceeded {
        code,
        what: what.to_owned(),
        retry_after,
    }
}

/// A fixed counting window that contains now.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: i64,
    length: i64,
    now: i64,
}

impl Window {
    /// The window of length `window` that contains `now` (seconds since the epoch).
    fn at(window: Duration, now: i64) -> Self {
        let length = i64::try_from(window.as_secs()).unwrap_or(i64::MAX).max(1);
        Self {
            start: now - now.rem_euclid(length),
            length,
            now,
        }
    }

    /// `None` when `current + previous` hits are within `limit`; otherwise the seconds
    /// until that may change.
    fn verdict(&self, current: i32, previous: i32, limit: u32) -> Option<u64> {
        let limit = i64::from(limit);
        if i64::from(current) + i64::from(previous) <= limit {
            return None;
        }
        // The previous window ages out at the end of this one; this window's hits one
        // window later.
        let until = if i64::from(current) > limit {
            self.start + 2 * self.length
        } else {
            self.start + self.length
        };
        Some(u64::try_from(until - self.now).unwrap_or(1).max(1))
    }
}

/// The window of the command limit at one moment ([`Limits::command_window`]).
#[derive(Debug, Clone, Copy)]
pub struct CommandWindow(Window);

impl CommandWindow {
    /// The window's start (seconds since the epoch).
    #[must_use]
    pub fn start(&self) -> i64 {
        self.0.start
    }

    /// The window's length in seconds.
    #[must_use]
    pub fn length(&self) -> i64 {
        self.0.length
    }

    /// The counter key of `account`'s commands.
    #[must_use]
    pub fn key(account: &str) -> String {
        Counted::Commands.key(account)
    }
}

/// A password check counted as a failure until it succeeds
/// ([`Limits::check_password`]).
#[derive(Debug)]
#[must_use = "hand the reservation back when the password was right"]
pub struct Reservation {
    window: Window,
    /// The `name@address` key, when that limit is on.
    pair: Option<String>,
    /// The address key, when that limit is on.
    address: Option<String>,
}

/// The limits service.
#[derive(Clone)]
pub struct Limits {
    store: Store,
    config: LimitConfig,
    /// Where the windows and stream leases read the time.
    clock: crate::clock::Clock,
}

impl Limits {
    /// Limits counted in `store`.
    #[must_use]
    pub fn new(store: Store, config: LimitConfig) -> Self {
        Self {
            store,
            config,
            clock: crate::clock::Clock::system(),
        }
    }

    /// The same limits with windows and leases measured by `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: crate::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The configured limits.
    #[must_use]
    pub fn config(&self) -> LimitConfig {
        self.config
    }

    /// Counts `add` hits for `key`; when the current and the previous window together hold
    /// more than `limit`, the seconds until that may change (a sliding window, approximated
    /// from above: a refusal lasts until enough hits are two windows old).
    fn over(
        &self,
        key: &str,
        limit: u32,
        window: Duration,
        add: i32,
    ) -> Result<Option<u64>, LimitError> {
        let w = Window::at(window, self.clock.timestamp());
        let (current, previous) = self.store.count(key, w.start, w.length, add)?;
        Ok(w.verdict(current, previous, limit))
    }

    /// Counts one hit; refuses when it is over `limit`.
    fn hit(
        &self,
        counted: Counted,
        subject: &str,
        limit: u32,
        window: Duration,
        code: &'static str,
        what: &str,
    ) -> Result<(), LimitError> {
        if limit == 0 {
            return Ok(());
        }
        match self.over(&counted.key(subject), limit, window, 1)? {
            None => Ok(()),
            Some(retry_after) => Err(exceeded(code, what, retry_after)),
        }
    }

    /// One more guest account from `address`.
    ///
    /// # Errors
    /// Over the limit, or the count failed.
    pub fn guest(&self, address: &str) -> Result<(), LimitError> {
        self.hit(
            Counted::Guests,
            address,
            self.config.guests_per_hour,
            Duration::from_secs(3600),
            "too_many_guests",
            "too many guest accounts from this address",
        )
    }

    /// One more game created by `account`, which hosts `open_lobbies` lobbies now.
    ///
    /// # Errors
    /// Over a limit, or the count failed.
    pub fn game(&self, account: &str, open_lobbies: i64) -> Result<(), LimitError> {
        let most = self.config.open_lobbies;
        if most > 0 && open_lobbies >= i64::from(most) {
            return Err(LimitError::Exceeded {
                code: "too_many_open_lobbies",
                what: format!(
                    "you host {open_lobbies} games that have not started (at most {most})"
                ),
                retry_after: 60,
            });
        }
        self.hit(
            Counted::Games,
            account,
            self.config.games_per_hour,
            Duration::from_secs(3600),
            "too_many_games",
            "too many games created",
        )
    }

    /// One more command by `account`.
    ///
    /// # Errors
    /// Over the limit, or the count failed.
    pub fn command(&self, account: &str) -> Result<(), LimitError> {
        self.hit(
            Counted::Commands,
            account,
            self.config.commands_per_minute,
            COMMAND_WINDOW,
            COMMAND_CODE,
            COMMAND_WHAT,
        )
    }

    /// The command limit: commands per window of [`Limits::command_window`] (0: none).
    #[must_use]
    pub fn command_limit(&self) -> u32 {
        self.config.commands_per_minute
    }

    /// The window that commands are counted in now, or `None` when the command limit is
    /// off. The group commit takes it before its first statement, which counts the
    /// batch's commands on PostgreSQL ([`crate::store::Tx::batch_reads`]).
    #[must_use]
    pub fn command_window(&self) -> Option<CommandWindow> {
        (self.config.commands_per_minute > 0)
            .then(|| CommandWindow(Window::at(COMMAND_WINDOW, self.clock.timestamp())))
    }

    /// One more command by each of `accounts` (an account may come more than once), in
    /// `window`: each command's verdict, in order, as if they had come one after the
    /// other. The counting is the same as [`Limits::command`]. `counted`: the counts after
    /// these commands where the group commit's first statement made them (PostgreSQL, in
    /// the batch's transaction); otherwise they are counted now (SQLite: in the process).
    ///
    /// # Errors
    /// The count failed.
    pub fn commands_in(
        &self,
        accounts: &[&str],
        window: &CommandWindow,
        counted: Option<&[crate::store::KeyCounts]>,
    ) -> Result<Vec<Result<(), LimitError>>, LimitError> {
        let limit = self.config.commands_per_minute;
        if limit == 0 || accounts.is_empty() {
            return Ok(accounts.iter().map(|_| Ok(())).collect());
        }
        // Each account's key once, with its number of commands; `slot` maps a command
        // to its key.
        let mut keys: Vec<(String, i32)> = Vec::new();
        let mut slot = Vec::with_capacity(accounts.len());
        for account in accounts {
            let key = Counted::Commands.key(account);
            let i = match keys.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    keys.push((key, 0));
                    keys.len() - 1
                }
            };
            if let Some((_, n)) = keys.get_mut(i) {
                *n += 1;
            }
            slot.push(i);
        }
        let hits: Vec<(&str, i32)> = keys.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        let w = window.0;
        let counts: Vec<(i32, i32)> = match counted {
            Some(counted) => hits
                .iter()
                .map(|(key, _)| {
                    counted
                        .iter()
                        .find(|c| c.key == *key)
                        .map_or((0, 0), |c| (c.current, c.previous))
                })
                .collect(),
            None => hits
                .iter()
                .map(|(key, add)| self.store.count(key, w.start, w.length, *add))
                .collect::<Result<_, _>>()?,
        };
        // The i-th of an account's n commands saw the count n - i lower than the last.
        let mut seen: Vec<i32> = vec![0; keys.len()];
        Ok(slot
            .into_iter()
            .map(|i| {
                let n = hits.get(i).map_or(1, |(_, n)| *n);
                let (current, previous) = counts.get(i).copied().unwrap_or_default();
                let nth = seen.get_mut(i).map_or(n, |s| {
                    *s += 1;
                    *s
                });
                match w.verdict(current - n + nth, previous, limit) {
                    None => Ok(()),
                    Some(retry_after) => Err(exceeded(COMMAND_CODE, COMMAND_WHAT, retry_after)),
                }
            })
            .collect())
    }

    /// Starts a password check for `name` from `address` (a login, or a check of the
    /// current password behind a token): counts it against the checks per address, and
    /// reserves it as a failure of `name` from `address` and of `address`, atomically,
    /// before the password is verified. Refused when any of the three is over its limit.
    /// Hand the reservation back with [`Limits::check_succeeded`] or
    /// [`Limits::check_abandoned`]; a failed check simply keeps it.
    ///
    /// # Errors
    /// Over a limit (`rate_limited`), or the count failed.
    pub fn check_password(&self, name: &str, address: &str) -> Result<Reservation, LimitError> {
        const WHAT: &str = "too many password attempts";
        self.hit(
            Counted::Logins,
            address,
            self.config.logins_per_minute,
            Duration::from_secs(60),
            "rate_limited",
            WHAT,
        )?;
        let reservation = Reservation {
            window: Window::at(LOGIN_WINDOW, self.clock.timestamp()),
            pair: (self.config.failed_logins > 0)
                .then(|| Counted::FailedLogins.key(&format!("{}@{address}", name.to_lowercase()))),
            address: (self.config.failed_logins_per_address > 0)
                .then(|| Counted::FailedLoginsFrom.key(address)),
        };
        let mut refusal = None;
        for (key, limit) in [
            (&reservation.pair, self.config.failed_logins),
            (&reservation.address, self.config.failed_logins_per_address),
        ] {
            if let Some(key) = key {
                let w = reservation.window;
                let (current, previous) = self.store.count(key, w.start, w.length, 1)?;
                if let Some(retry_after) = w.verdict(current, previous, limit) {
                    refusal = Some(refusal.map_or(retry_after, |r: u64| r.max(retry_after)));
                }
            }
        }
        // A refused attempt stays counted on both keys: guessing on only lengthens the
        // wait. The two keys count independently, so among simultaneous attempts one within
        // its name's limit may still be refused by its address's, never let through by it.
        match refusal {
            Some(retry_after) => Err(exceeded("rate_limited", WHAT, retry_after)),
            None => Ok(reservation),
        }
    }

    /// The password was right: the failures of its name from its address are forgotten,
    /// and the address's reservation is given back.
    ///
    /// # Errors
    /// The store failed.
    pub fn check_succeeded(&self, reservation: Reservation) -> Result<(), LimitError> {
        if let Some(pair) = &reservation.pair {
            self.store.clear_count(pair)?;
        }
        self.give_back(reservation.address.as_deref(), reservation.window)
    }

    /// The password was never checked (no hashing slot): the reservation is given back.
    ///
    /// # Errors
    /// The store failed.
    pub fn check_abandoned(&self, reservation: Reservation) -> Result<(), LimitError> {
        self.give_back(reservation.pair.as_deref(), reservation.window)?;
        self.give_back(reservation.address.as_deref(), reservation.window)
    }

    fn give_back(&self, key: Option<&str>, w: Window) -> Result<(), LimitError> {
        if let Some(key) = key {
            self.store.count(key, w.start, w.length, -1)?;
        }
        Ok(())
    }

    /// One more registered account from `address`.
    ///
    /// # Errors
    /// Over the limit, or the count failed.
    pub fn account(&self, address: &str) -> Result<(), LimitError> {
        self.hit(
            Counted::Accounts,
            address,
            self.config.accounts_per_hour,
            Duration::from_secs(3600),
            "too_many_accounts",
            "too many accounts registered from this address",
        )
    }

    /// One more verification mail by `account` to `recipient`: counted per account and per
    /// recipient (case-insensitive), so neither many addresses from one account nor one
    /// address from many accounts can be flooded.
    ///
    /// # Errors
    /// Over the limit, or the count failed.
    pub fn mail(&self, account: &str, recipient: &str) -> Result<(), LimitError> {
        for subject in [
            format!("account:{account}"),
            format!("to:{}", recipient.to_lowercase()),
        ] {
            self.hit(
                Counted::Mails,
                &subject,
                self.config.mails_per_hour,
                Duration::from_secs(3600),
                "too_many_mails",
                "too many verification mails",
            )?;
        }
        Ok(())
    }

    /// Opens a stream for `account`: a lease to renew with [`Limits::renew_stream`] and to
    /// give back with [`Limits::close_stream`].
    ///
    /// # Errors
    /// Over the limit, or the store failed.
    pub fn open_stream(&self, account: &str) -> Result<String, LimitError> {
        let id = uuid::Uuid::new_v4().to_string();
        let limit = match self.config.streams {
            0 => i64::MAX,
            n => i64::from(n),
        };
        let now = self.clock.naive();
        let until = now + chrono::Duration::seconds(i64::try_from(LEASE.as_secs()).unwrap_or(60));
        if self.store.take_lease(&id, account, limit, now, until)? {
            Ok(id)
        } else {
            Err(LimitError::Exceeded {
                code: "too_many_streams",
                what: format!("you have {limit} live streams open"),
                retry_after: 5,
            })
        }
    }

    /// Extends a stream's lease.
    ///
    /// # Errors
    /// The store failed.
    pub fn renew_stream(&self, lease: &str) -> Result<(), StoreError> {
        let until = self.clock.naive()
            + chrono::Duration::seconds(i64::try_from(LEASE.as_secs()).unwrap_or(60));
        self.store.renew_lease(lease, Some(until))
    }

    /// Extends the leases of many streams at once (a replica renews all of its streams'
    /// leases together, in statements of up to 1,000).
    ///
    /// # Errors
    /// The store failed.
    pub fn renew_streams(&self, leases: &[String]) -> Result<(), StoreError> {
        let until = self.clock.naive()
            + chrono::Duration::seconds(i64::try_from(LEASE.as_secs()).unwrap_or(60));
        for chunk in leases.chunks(1_000) {
            self.store.renew_leases(chunk, until)?;
        }
        Ok(())
    }

    /// Gives a stream's lease back.
    ///
    /// # Errors
    /// The store failed.
    pub fn close_stream(&self, lease: &str) -> Result<(), StoreError> {
        self.store.renew_lease(lease, None)
    }

    /// Forgets windows that no limit weighs any more (two of the longest, an hour) and
    /// expired leases.
    ///
    /// # Errors
    /// The store failed.
    pub fn prune(&self) -> Result<(), StoreError> {
        let now = self.clock.now();
        self.store
            .prune_counters(now.timestamp() - 2 * 3600, now.naive_utc())
    }

    /// One more score pad created by `account`: as many per hour as games
    /// (`games_per_hour`), counted apart from them. A pad's rounds count as commands
    /// ([`Limits::command`]).
    ///
    /// # Errors
    /// Over the limit, or the count failed.
    pub fn pad(&self, account: &str) -> Result<(), LimitError> {
        let limit = self.config.games_per_hour;
        if limit == 0 {
            return Ok(());
        }
        match self.over(
            &format!("pads:{account}"),
            limit,
            Duration::from_secs(3600),
            1,
        )? {
            None => Ok(()),
            Some(retry_after) => Err(exceeded(
                "too_many_scorepads",
                "too many score pads created",
                retry_after,
            )),
        }
    }
}
