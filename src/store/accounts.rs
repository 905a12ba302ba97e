//! Store operations of the account lifecycle (registration of a guest, password change,
//! token revocation, deletion) and of e-mail reminders (settings, verification tokens),
//! written once and compiled for both connection types.
//!
//! A deleted account keeps its row, because the event log refers to its id; its name
//! becomes [`DELETED_NAME`], its password hash and roles are removed, and its webhooks,
//! mail settings, verification tokens, stream tickets, pending notifications and score pads
//! (with their rounds) go.

use chrono::NaiveDateTime;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;

use super::StoreError;
use super::schema::{
    accounts, mail_settings, mail_verifications, scorepad_events, scorepads, stream_tickets,
    webhook_deliveries, webhooks,
};
use super::webhooks::PENDING;

/// The neutral name every deleted account shows.
pub const DELETED_NAME: &str = "deleted player";

/// An account's reminder choices and its verified address.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = mail_settings, treat_none_as_null = true)]
pub struct MailSettingsRow {
    /// The account.
    pub account_id: String,
    /// The verified address (`None`: no address, nothing is sent).
    pub address: Option<String>,
    /// A mail when it becomes the account's turn.
    pub your_turn: bool,
    /// A mail when a move deadline is less than this many hours away (`None`: off).
    pub deadline_hours: Option<i32>,
    /// A mail when a game of the account ends.
    pub game_finished: bool,
    /// One mail a day listing the games awaiting the account, instead of a mail per turn.
    pub digest: bool,
    /// Last change (UTC).
    pub updated_at: NaiveDateTime,
}

/// An address waiting for its verification link.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = mail_verifications)]
pub struct MailVerificationRow {
    /// Hex SHA-256 of the link's token (the token itself is never stored).
    pub token_hash: String,
    /// The account.
    pub account_id: String,
    /// The address to verify.
    pub address: String,
    /// The link works until then (UTC).
    pub expires_at: NaiveDateTime,
    /// When the link was sent (UTC).
    pub created_at: NaiveDateTime,
}

/// The account-lifecycle and mail operations of one transaction (or one connection).
pub trait AccountMailTx {
    /// Turns a live guest account into a registered one with `name` and a password hash;
    /// `false` when the account is not a live guest.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] when the name is taken, database failure.
    fn register_guest(&mut self, id: &str, name: &str, hash: &str) -> Result<bool, StoreError>;
    /// Replaces the password hash and bumps the token version; returns the new version.
    ///
    /// # Errors
    /// Database failure.
    fn set_password(&mut self, id: &str, hash: &str) -> Result<i32, StoreError>;
    /// Bumps the token version (every token issued before stops working); returns it.
    ///
    /// # Errors
    /// Database failure.
    fn bump_token_version(&mut self, id: &str) -> Result<i32, StoreError>;
    /// Deletes an account's personal data and credentials (see the module documentation).
    ///
    /// # Errors
    /// Database failure.
    fn delete_account(&mut self, id: &str, now: NaiveDateTime) -> Result<(), StoreError>;
    /// `(id, name)` of these accounts (deleted ones with [`DELETED_NAME`]).
    ///
    /// # Errors
    /// Database failure.
    fn account_names(&mut self, ids: &[&str]) -> Result<Vec<(String, String)>, StoreError>;
    /// `(id, token version, deleted)` of these accounts, in one statement (ids that name
    /// no account are left out): what the live streams' revocation check reads.
    ///
    /// # Errors
    /// Database failure.
    fn token_versions(&mut self, ids: &[&str]) -> Result<Vec<(String, i32, bool)>, StoreError>;
    /// An account's mail settings.
    ///
    /// # Errors
    /// Database failure.
    fn mail_settings(&mut self, account: &str) -> Result<Option<MailSettingsRow>, StoreError>;
    /// The mail settings of these accounts that have a verified address.
    ///
    /// # Errors
    /// Database failure.
    fn mail_recipients(&mut self, accounts: &[&str]) -> Result<Vec<MailSettingsRow>, StoreError>;
    /// Inserts or replaces an account's mail settings.
    ///
    /// # Errors
    /// Database failure.
    fn save_mail_settings(&mut self, row: &MailSettingsRow) -> Result<(), StoreError>;
    /// Stores a verification (an account's older ones are forgotten).
    ///
    /// # Errors
    /// Database failure.
    fn insert_verification(&mut self, row: &MailVerificationRow) -> Result<(), StoreError>;
    /// Deletes the verification with this token hash and returns it (single use).
    ///
    /// # Errors
    /// Database failure.
    fn take_verification(
        &mut self,
        token_hash: &str,
    ) -> Result<Option<MailVerificationRow>, StoreError>;
    /// The account's verification waiting for its link, if any.
    ///
    /// # Errors
    /// Database failure.
    fn verification_of(&mut self, account: &str)
    -> Result<Option<MailVerificationRow>, StoreError>;
    /// Forgets the account's verifications.
    ///
    /// # Errors
    /// Database failure.
    fn delete_verifications(&mut self, account: &str) -> Result<(), StoreError>;
    /// Whether the account has a pending outbox row of `kind`.
    ///
    /// # Errors
    /// Database failure.
    fn has_pending(&mut self, account: &str, kind: &str) -> Result<bool, StoreError>;
    /// Drops the account's pending mails (all kinds), e.g. when its address goes.
    ///
    /// # Errors
    /// Database failure.
    fn drop_pending_mails(
        &mut self,
        account: &str,
        reason: &str,
        now: NaiveDateTime,
    ) -> Result<usize, StoreError>;
}

use super::ops::duplicate_or;

macro_rules! impl_account_mail_tx {
    ($conn:ty) => {
        impl AccountMailTx for $conn {
            fn register_guest(
                &mut self,
                id: &str,
                name: &str,
                hash: &str,
            ) -> Result<bool, StoreError> {
                let changed = diesel::update(
                    accounts::table
                        .find(id)
                        .filter(accounts::guest.eq(true))
                        .filter(accounts::deleted_at.is_null()),
                )
                .set((
                    accounts::name.eq(name),
                    accounts::password_hash.eq(hash),
                    accounts::guest.eq(false),
                    accounts::registered_at.eq(chrono::Utc::now().naive_utc()),
                ))
                .execute(self)
                .map_err(duplicate_or)?;
                Ok(changed == 1)
            }

            fn set_password(&mut self, id: &str, hash: &str) -> Result<i32, StoreError> {
                diesel::update(accounts::table.find(id))
                    .set(accounts::password_hash.eq(hash))
                    .execute(self)?;
                self.bump_token_version(id)
            }

            fn bump_token_version(&mut self, id: &str) -> Result<i32, StoreError> {
                diesel::update(accounts::table.find(id))
                    .set(accounts::token_version.eq(accounts::token_version + 1))
                    .execute(self)?;
                Ok(accounts::table
                    .find(id)
                    .select(accounts::token_version)
                    .first(self)?)
            }

            fn delete_account(&mut self, id: &str, now: NaiveDateTime) -> Result<(), StoreError> {
                diesel::update(accounts::table.find(id))
                    .set((
                        accounts::name.eq(DELETED_NAME),
                        accounts::password_hash.eq(None::<String>),
                        accounts::roles.eq(""),
                        accounts::deleted_at.eq(now),
                        accounts::token_version.eq(accounts::token_version + 1),
                    ))
                    .execute(self)?;
                self.drop_pending_mails(id, "the account was deleted", now)?;
                // Deliveries go with their webhook (ON DELETE CASCADE).
                diesel::delete(webhooks::table.filter(webhooks::account_id.eq(id)))
                    .execute(self)?;
                diesel::delete(
                    webhook_deliveries::table.filter(webhook_deliveries::account_id.eq(id)),
                )
                .execute(self)?;
                diesel::delete(mail_settings::table.find(id)).execute(self)?;
                diesel::delete(
                    mail_verifications::table.filter(mail_verifications::account_id.eq(id)),
                )
                .execute(self)?;
                diesel::delete(stream_tickets::table.filter(stream_tickets::account_id.eq(id)))
                    .execute(self)?;
                // Score pads hold free-text player names: they go, rounds first. The events'
                // append-only trigger lets them go only because the owner is deleted now.
                let pads = scorepads::table
                    .filter(scorepads::owner.eq(id))
                    .select(scorepads::id);
                diesel::delete(scorepad_events::table.filter(scorepad_events::pad_id.eq_any(pads)))
                    .execute(self)?;
                diesel::delete(scorepads::table.filter(scorepads::owner.eq(id))).execute(self)?;
                Ok(())
            }

            fn account_names(&mut self, ids: &[&str]) -> Result<Vec<(String, String)>, StoreError> {
                if ids.is_empty() {
                    return Ok(Vec::new());
                }
                Ok(accounts::table
                    .filter(accounts::id.eq_any(ids))
                    .select((accounts::id, accounts::name))
                    .load(self)?)
            }

            fn token_versions(
                &mut self,
                ids: &[&str],
            ) -> Result<Vec<(String, i32, bool)>, StoreError> {
                if ids.is_empty() {
                    return Ok(Vec::new());
                }
                Ok(accounts::table
                    .filter(accounts::id.eq_any(ids))
                    .select((
                        accounts::id,
                        accounts::token_version,
                        accounts::deleted_at.is_not_null(),
                    ))
                    .load(self)?)
            }

            fn mail_settings(
                &mut self,
                account: &str,
            ) -> Result<Option<MailSettingsRow>, StoreError> {
                Ok(mail_settings::table
                    .find(account)
                    .select(MailSettingsRow::as_select())
                    .first(self)
                    .optional()?)
            }

            fn mail_recipients(
                &mut self,
                accounts: &[&str],
            ) -> Result<Vec<MailSettingsRow>, StoreError> {
                if accounts.is_empty() {
                    return Ok(Vec::new());
                }
                Ok(mail_settings::table
                    .filter(mail_settings::account_id.eq_any(accounts))
                    .filter(mail_settings::address.is_not_null())
                    .select(MailSettingsRow::as_select())
                    .load(self)?)
            }

            fn save_mail_settings(&mut self, row: &MailSettingsRow) -> Result<(), StoreError> {
                let changed = diesel::update(mail_settings::table.find(&row.account_id))
                    .set(row.clone())
                    .execute(self)?;
                if changed == 0 {
                    diesel::insert_into(mail_settings::table)
                        .values(row.clone())
                        .execute(self)?;
                }
                Ok(())
            }

            fn insert_verification(&mut self, row: &MailVerificationRow) -> Result<(), StoreError> {
                diesel::delete(
                    mail_verifications::table
                        .filter(mail_verifications::account_id.eq(&row.account_id)),
                )
                .execute(self)?;
                diesel::insert_into(mail_verifications::table)
                    .values(row.clone())
                    .execute(self)
                    .map_err(duplicate_or)?;
                Ok(())
            }

            fn take_verification(
                &mut self,
                token_hash: &str,
            ) -> Result<Option<MailVerificationRow>, StoreError> {
                let row = mail_verifications::table
                    .find(token_hash)
                    .select(MailVerificationRow::as_select())
                    .first(self)
                    .optional()?;
                if row.is_some() {
                    let deleted =
                        diesel::delete(mail_verifications::table.find(token_hash)).execute(self)?;
                    if deleted != 1 {
                        // Another request used it first.
                        return Ok(None);
                    }
                }
                Ok(row)
            }

            fn verification_of(
                &mut self,
                account: &str,
            ) -> Result<Option<MailVerificationRow>, StoreError> {
                Ok(mail_verifications::table
                    .filter(mail_verifications::account_id.eq(account))
                    .order(mail_verifications::created_at.desc())
                    .select(MailVerificationRow::as_select())
                    .first(self)
                    .optional()?)
            }

            fn delete_verifications(&mut self, account: &str) -> Result<(), StoreError> {
                diesel::delete(
                    mail_verifications::table.filter(mail_verifications::account_id.eq(account)),
                )
                .execute(self)?;
                Ok(())
            }

            fn has_pending(&mut self, account: &str, kind: &str) -> Result<bool, StoreError> {
                let found: Option<String> = webhook_deliveries::table
                    .filter(webhook_deliveries::account_id.eq(account))
                    .filter(webhook_deliveries::kind.eq(kind))
                    .filter(webhook_deliveries::status.eq(PENDING))
                    .select(webhook_deliveries::id)
                    .first(self)
                    .optional()?;
                Ok(found.is_some())
            }

            fn drop_pending_mails(
                &mut self,
                account: &str,
                reason: &str,
                now: NaiveDateTime,
            ) -> Result<usize, StoreError> {
                Ok(diesel::update(
                    webhook_deliveries::table
                        .filter(webhook_deliveries::account_id.eq(account))
                        .filter(webhook_deliveries::channel.eq(super::webhooks::CHANNEL_MAIL))
                        .filter(webhook_deliveries::status.eq(PENDING)),
                )
                .set(super::webhooks::dropped(reason, now))
                .execute(self)?)
            }
        }
    };
}

impl_account_mail_tx!(PgConnection);
impl_account_mail_tx!(SqliteConnection);
