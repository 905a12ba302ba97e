//! Accounts: registration, guests, logins, and resolving a token to a live account.
//!
//! Password work (Argon2id) and token issue happen here, never in a handler. Blocking:
//! call from `web::block`. Knows no HTTP; returns [`AccountError`].

use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::auth::{self, Claims, HashError, Hasher, Tokens};
use crate::limits::{LimitError, Limits};
use crate::store::{AccountRow, Store, StoreError};

/// Why an account use case failed.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// A name outside 3–32 of `A–Z a–z 0–9 _ -`.
    #[error("name must be 3–32 characters of A–Z, a–z, 0–9, _ and -")]
    InvalidName,
    /// A password outside 8–128 characters.
    #[error("password must be 8–128 characters")]
    InvalidPassword,
    /// The name is taken.
    #[error("the name is taken")]
    NameTaken,
    /// Unknown name or wrong password (one answer for both).
    #[error("invalid name or password")]
    InvalidCredentials,
    /// The token's account does not exist (any more).
    #[error("the token's account does not exist")]
    UnknownAccount,
    /// The token was revoked (logout everywhere, a password change, deletion).
    #[error("the token was revoked")]
    Revoked,
    /// Only a guest account can register.
    #[error("the account is registered already")]
    AlreadyRegistered,
    /// A guest has no password to change.
    #[error("a guest account has no password; register first")]
    NotRegistered,
    /// The current password given is wrong.
    #[error("the current password is wrong")]
    WrongPassword,
    /// Over a rate limit.
    #[error(transparent)]
    Limited(#[from] LimitError),
    /// Every password-hashing slot stayed taken while the request waited.
    #[error("the server is busy checking passwords; try again")]
    Busy,
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Hashing or signing failed.
    #[error("{0}")]
    Crypto(String),
}

/// An account as the services hand it out: who it is, never its credentials or how it is
/// stored.
#[derive(Debug, Clone)]
pub struct Account {
    /// The account's id (a UUID v7).
    pub id: String,
    /// The name people see and log in with.
    pub name: String,
    /// A password-less quick-play account.
    pub guest: bool,
    /// Roles such as `analyst`.
    pub roles: Vec<String>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

impl From<AccountRow> for Account {
    fn from(row: AccountRow) -> Self {
        Self {
            id: row.id,
            name: row.name,
            guest: row.guest,
            roles: row
                .roles
                .split(',')
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect(),
            created_at: row.created_at.and_utc(),
        }
    }
}

/// A freshly issued bearer token.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The signed JWT (HS256).
    pub token: String,
    /// Seconds until it expires.
    pub expires_in: u64,
}

/// The accounts service.
#[derive(Clone)]
pub struct Accounts {
    store: Store,
    tokens: Arc<Tokens>,
    limits: Limits,
    hasher: Arc<Hasher>,
    /// Where account creation and deletion read the time.
    clock: crate::clock::Clock,
}

impl From<HashError> for AccountError {
    fn from(e: HashError) -> Self {
        match e {
            HashError::Busy => Self::Busy,
            HashError::Failed(why) => Self::Crypto(why),
        }
    }
}

/// The longest name and password a login may carry: nothing longer can exist, so it is
/// refused before any counting or hashing.
const MAX_NAME_CHARS: usize = 32;
const MAX_PASSWORD_CHARS: usize = 128;

/// Longer than any password can be: refused before it is counted or hashed.
fn over_long(password: &str) -> bool {
    password.chars().count() > MAX_PASSWORD_CHARS
}

/// A storage error as the accounts service reports it: a duplicate is a taken name (the
/// only unique key an account write can hit).
fn name_taken_or(e: StoreError) -> AccountError {
    match e {
        StoreError::Duplicate => AccountError::NameTaken,
        other => other.into(),
    }
}

fn valid_name(name: &str) -> Result<(), AccountError> {
    let ok = (3..=32).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then_some(()).ok_or(AccountError::InvalidName)
}

fn new_row(name: String, password_hash: Option<String>, now: NaiveDateTime) -> AccountRow {
    AccountRow {
        id: uuid::Uuid::now_v7().to_string(),
        name,
        guest: password_hash.is_none(),
        registered_at: password_hash.is_some().then_some(now),
        password_hash,
        roles: String::new(),
        created_at: now,
        token_version: 0,
        deleted_at: None,
    }
}

fn valid_password(password: &str) -> Result<(), AccountError> {
    if (8..=128).contains(&password.chars().count()) {
        Ok(())
    } else {
        Err(AccountError::InvalidPassword)
    }
}

impl Accounts {
    /// The service over a store, with the token keys, the limits and the bounded password
    /// hasher.
    #[must_use]
    pub fn new(store: Store, tokens: Arc<Tokens>, limits: Limits, hasher: Arc<Hasher>) -> Self {
        Self {
            store,
            tokens,
            limits,
            hasher,
            clock: crate::clock::Clock::system(),
        }
    }

    /// The same service reading the time from `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: crate::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    fn hash(&self, password: &str) -> Result<String, AccountError> {
        Ok(self.hasher.hash(password)?)
    }

    /// Checks `password` against the hash `stored` loads (a dummy hash when it finds
    /// none, so that an unknown name costs the same), counted against the password-check
    /// limits of `name` from `address`. The attempt is counted before anything else, so a
    /// caller over the limit costs one count and no database read.
    fn check(
        &self,
        name: &str,
        address: &str,
        password: &str,
        stored: impl FnOnce() -> Result<Option<String>, AccountError>,
    ) -> Result<bool, AccountError> {
        let reservation = self.limits.check_password(name, address)?;
        let stored = match stored() {
            Ok(stored) => stored,
            Err(e) => {
                self.limits.check_abandoned(reservation)?;
                return Err(e);
            }
        };
        let hash = stored.as_deref().unwrap_or_else(|| auth::dummy_hash());
        match self.hasher.verify(password, hash) {
            Ok(true) => {
                self.limits.check_succeeded(reservation)?;
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(e) => {
                self.limits.check_abandoned(reservation)?;
                Err(e.into())
            }
        }
    }

    /// The token keys.
    #[must_use]
    pub fn tokens(&self) -> &Tokens {
        &self.tokens
    }

    fn issue(&self, row: &AccountRow) -> Result<Issued, AccountError> {
        let token = self
            .tokens
            .issue(&row.id, &row.name, row.token_version)
            .map_err(|e| AccountError::Crypto(e.to_string()))?;
        Ok(Issued {
            token,
            expires_in: self.tokens.ttl_seconds(),
        })
    }

    /// Registers an account with a password.
    ///
    /// # Errors
    /// Invalid name or password, a taken name, storage failure.
    pub fn register(
        &self,
        name: String,
        password: &str,
        address: &str,
    ) -> Result<Account, AccountError> {
        valid_name(&name)?;
        valid_password(password)?;
        self.limits.account(address)?;
        let row = new_row(name, Some(self.hash(password)?), self.clock.naive());
        self.store
            .write(|tx| tx.insert_account(&row).map_err(name_taken_or))?;
        Ok(row.into())
    }

    /// Creates a password-less guest account for a client at `address` and a token for it.
    ///
    /// # Errors
    /// Invalid name, too many guests from the address, storage failure.
    pub fn guest(&self, name: String, address: &str) -> Result<(Account, Issued), AccountError> {
        valid_name(&name)?;
        self.limits.guest(address)?;
        let row = new_row(name, None, self.clock.naive());
        self.store
            .write(|tx| tx.insert_account(&row).map_err(name_taken_or))?;
        let issued = self.issue(&row)?;
        Ok((row.into(), issued))
    }

    /// Issues a token for a name and password, from a client at `address`. Failures are
    /// counted per name and address and per address, on every replica (see
    /// [`crate::limits`]).
    ///
    /// # Errors
    /// Over-long input, invalid credentials, a limit, no hashing slot, storage failure.
    pub fn login(&self, name: &str, password: &str, address: &str) -> Result<Issued, AccountError> {
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(AccountError::InvalidName);
        }
        if over_long(password) {
            return Err(AccountError::InvalidPassword);
        }
        let mut row = None;
        let ok = self.check(name, address, password, || {
            row = self
                .store
                .read(|tx| tx.account_by_name(name).map_err(AccountError::from))?;
            Ok(row.as_ref().and_then(|r| r.password_hash.clone()))
        })?;
        match row.filter(|_| ok) {
            Some(row) => self.issue(&row),
            None => Err(AccountError::InvalidCredentials),
        }
    }

    /// The account a checked token speaks for; [`AccountError::UnknownAccount`] when it no
    /// longer exists.
    ///
    /// # Errors
    /// An unknown account, storage failure.
    pub fn resolve(&self, claims: &Claims) -> Result<Account, AccountError> {
        admit(self.row(&claims.sub)?, claims.ver).map(Account::from)
    }

    /// Turns the guest account `id` into a registered one, keeping its id and so its games,
    /// seats and results; `name` defaults to the guest's name. Returns the account and a
    /// token for its new name; every token the guest had stops working (whoever held the
    /// guest's token does not hold the registered account).
    ///
    /// # Errors
    /// Not a guest, an invalid name or password, a taken name, storage failure.
    pub fn register_guest(
        &self,
        id: &str,
        name: Option<String>,
        password: &str,
    ) -> Result<(Account, Issued), AccountError> {
        let current = self.row(id)?.ok_or(AccountError::UnknownAccount)?;
        if !current.guest {
            return Err(AccountError::AlreadyRegistered);
        }
        let name = name.unwrap_or(current.name);
        valid_name(&name)?;
        valid_password(password)?;
        let hash = self.hash(password)?;
        let changed = self.store.write(|tx| {
            let changed = tx.register_guest(id, &name, &hash).map_err(name_taken_or)?;
            if changed {
                tx.bump_token_version(id)?;
            }
            Ok::<_, AccountError>(changed)
        })?;
        if !changed {
            return Err(AccountError::AlreadyRegistered);
        }
        let row = self.row(id)?.ok_or(AccountError::UnknownAccount)?;
        let issued = self.issue(&row)?;
        Ok((row.into(), issued))
    }

    /// Changes a registered account's password after checking the current one. Every token
    /// issued before stops working; returns a fresh token.
    ///
    /// # Errors
    /// A guest, a wrong current password, an invalid new one, storage failure.
    pub fn change_password(
        &self,
        id: &str,
        current: &str,
        new: &str,
        address: &str,
    ) -> Result<Issued, AccountError> {
        let row = self.row(id)?.ok_or(AccountError::UnknownAccount)?;
        let Some(stored) = row.password_hash.as_deref() else {
            return Err(AccountError::NotRegistered);
        };
        valid_password(new)?;
        if over_long(current)
            || !self.check(&row.name, address, current, || Ok(Some(stored.to_owned())))?
        {
            return Err(AccountError::WrongPassword);
        }
        let hash = self.hash(new)?;
        self.store
            .write(|tx| tx.set_password(id, &hash).map_err(AccountError::from))?;
        let row = self.row(id)?.ok_or(AccountError::UnknownAccount)?;
        self.issue(&row)
    }

    /// Revokes every token of the account, on every replica (the version is in the
    /// account's row, which every request reads).
    ///
    /// # Errors
    /// Storage failure.
    pub fn logout_everywhere(&self, id: &str) -> Result<(), AccountError> {
        self.store.write(|tx| {
            tx.bump_token_version(id)
                .map(|_| ())
                .map_err(AccountError::from)
        })
    }

    /// Deletes an account: its name, password, roles, e-mail address, webhooks and score
    /// pads go (in one transaction), its tokens stop working, and views show it as "deleted player". The event log keeps the
    /// account's id (never a name). A registered account must confirm with its password.
    ///
    /// # Errors
    /// A wrong or missing password, a limit, no hashing slot, storage failure.
    pub fn delete(
        &self,
        id: &str,
        password: Option<&str>,
        address: &str,
    ) -> Result<(), AccountError> {
        let row = self.row(id)?.ok_or(AccountError::UnknownAccount)?;
        if let Some(stored) = row.password_hash.as_deref() {
            let right = match password {
                Some(p) if !over_long(p) => {
                    self.check(&row.name, address, p, || Ok(Some(stored.to_owned())))?
                }
                _ => false,
            };
            if !right {
                return Err(AccountError::WrongPassword);
            }
        }
        let now = self.clock.naive();
        self.store
            .write(|tx| tx.delete_account(id, now).map_err(AccountError::from))
    }

    /// Display names of accounts by id, for views: a deleted account shows
    /// [`crate::store::DELETED_NAME`].
    ///
    /// # Errors
    /// Storage failure.
    pub fn names(
        &self,
        ids: &[&str],
    ) -> Result<std::collections::HashMap<String, String>, AccountError> {
        Ok(self
            .store
            .read(|tx| tx.account_names(ids))?
            .into_iter()
            .collect())
    }

    /// The current token version of each of these accounts, `None` for one that is
    /// deleted or does not exist: one read, one statement per 1,000 accounts (the live
    /// streams' revocation check asks this for every account with an open stream).
    ///
    /// # Errors
    /// Storage failure.
    pub fn token_versions(
        &self,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, Option<i32>>, AccountError> {
        let mut out: std::collections::HashMap<String, Option<i32>> =
            ids.iter().map(|id| (id.clone(), None)).collect();
        self.store.read(|tx| {
            for chunk in ids.chunks(1_000) {
                let chunk: Vec<&str> = chunk.iter().map(String::as_str).collect();
                for (id, version, deleted) in tx.token_versions(&chunk)? {
                    out.insert(id, (!deleted).then_some(version));
                }
            }
            Ok::<_, AccountError>(())
        })?;
        Ok(out)
    }

    /// An account by id.
    ///
    /// # Errors
    /// Storage failure.
    pub fn find(&self, id: &str) -> Result<Option<Account>, AccountError> {
        Ok(self.row(id)?.map(Account::from))
    }

    fn row(&self, id: &str) -> Result<Option<AccountRow>, AccountError> {
        self.store
            .read(|tx| tx.account_by_id(id).map_err(AccountError::from))
    }
}

/// Whether a token of version `token_version` speaks for `row` (the account as stored): it
/// must exist, not be deleted, and not have revoked the token.
///
/// # Errors
/// [`AccountError::UnknownAccount`], [`AccountError::Revoked`].
pub fn admit(row: Option<AccountRow>, token_version: i32) -> Result<AccountRow, AccountError> {
    let row = row
        .filter(|r| r.deleted_at.is_none())
        .ok_or(AccountError::UnknownAccount)?;
    if row.token_version != token_version {
        return Err(AccountError::Revoked);
    }
    Ok(row)
}
