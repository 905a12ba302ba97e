//! Store operations of the account lifecycle (registration of a guest, password change,
//! token revocation, deletion) and of e-mail reminders (settings, verification tokens),
//! written once and compiled for both connection types.
//!
//! A deleted account keeps its row, because the event log refers to its id; its name
//! becomes [`DELETED_NAME`], its password hash and roles are removed, and its webhooks,
//! mail settings, verification tokens, push subscriptions and choices, stream tickets,
//! pending notifications and score pads (with their rounds) go.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::outbox::PENDING;
use super::schema::{
    accounts, mail_settings, mail_verifications, push_settings, push_subscriptions,
    scorepad_events, scorepads, settings, stream_tickets, webhook_deliveries, webhooks,
};
use super::tx::{Tx, duplicate_or, on};

/// An account as stored.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, serde::Deserialize)]
#[diesel(table_name = accounts)]
pub struct AccountRow {
    /// Id (UUID text).
    pub id: String,
    /// The name people see and log in with, unique among live accounts regardless of case.
    pub name: String,
    /// Argon2id PHC string; `None` for guests.
    pub password_hash: Option<String>,
    /// Password-less quick-play account.
    pub guest: bool,
    /// Comma-separated roles.
    pub roles: String,
    /// Creation time (UTC).
    pub created_at: NaiveDateTime,
    /// Bumped to revoke every token issued before (tokens carry the version they were
    /// issued with).
    pub token_version: i32,
    /// When the account was deleted (its name and credentials are gone then).
    pub deleted_at: Option<NaiveDateTime>,
    /// When it became registered (at creation, or when the guest registered); `None` for a
    /// guest. Never changes afterwards, so the ratings projection can rely on it.
    pub registered_at: Option<NaiveDateTime>,
}

diesel::define_sql_function! {
    /// SQL `lower()`, which the case-insensitive name index is built on.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

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

impl Tx<'_> {
    /// Inserts an account; [`StoreError::Duplicate`] when the name is taken.
    ///
    /// # Errors
    /// Duplicate name, database failure.
    pub fn insert_account(&mut self, row: &AccountRow) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::insert_into(accounts::table)
                .values(row.clone())
                .execute(c)
                .map_err(duplicate_or)?;
            Ok(())
        })
    }

    /// A registered (non-guest), not deleted account by name, case-insensitively.
    ///
    /// # Errors
    /// Database failure.
    pub fn account_by_name(&mut self, name: &str) -> Result<Option<AccountRow>, StoreError> {
        on!(self, |c| {
            Ok(accounts::table
                .filter(accounts::guest.eq(false))
                .filter(accounts::deleted_at.is_null())
                .filter(lower(accounts::name).eq(name.to_lowercase()))
                .select(AccountRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// An account by id.
    ///
    /// # Errors
    /// Database failure.
    pub fn account_by_id(&mut self, id: &str) -> Result<Option<AccountRow>, StoreError> {
        on!(self, |c| {
            Ok(accounts::table
                .find(id)
                .select(AccountRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// Replaces an account's roles.
    ///
    /// # Errors
    /// Database failure.
    pub fn set_roles(&mut self, id: &str, roles: &str) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(accounts::table.find(id))
                .set(accounts::roles.eq(roles))
                .execute(c)?;
            Ok(())
        })
    }

    /// A setting.
    ///
    /// # Errors
    /// Database failure.
    pub fn setting(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        on!(self, |c| {
            Ok(settings::table
                .find(key)
                .select(settings::value)
                .first(c)
                .optional()?)
        })
    }

    /// Inserts a setting; [`StoreError::Duplicate`] when it exists.
    ///
    /// # Errors
    /// Duplicate, database failure.
    pub fn insert_setting(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::insert_into(settings::table)
                .values((settings::key.eq(key), settings::value.eq(value)))
                .execute(c)
                .map_err(duplicate_or)?;
            Ok(())
        })
    }

    /// Stores a stream ticket (by its hash) issued under the account's token version
    /// `token_version`, and forgets expired ones.
    ///
    /// # Errors
    /// Database failure.
    pub fn insert_stream_ticket(
        &mut self,
        ticket_hash: &str,
        account: &str,
        token_version: i32,
        game: &str,
        expires_at: NaiveDateTime,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::delete(stream_tickets::table.filter(stream_tickets::expires_at.lt(self.now)))
                .execute(c)?;
            diesel::insert_into(stream_tickets::table)
                .values((
                    stream_tickets::ticket_hash.eq(ticket_hash),
                    stream_tickets::account_id.eq(account),
                    stream_tickets::game_id.eq(game),
                    stream_tickets::expires_at.eq(expires_at),
                    stream_tickets::token_version.eq(token_version),
                ))
                .execute(c)?;
            Ok(())
        })
    }

    /// Redeems a stream ticket for `game`: deletes it and returns its account and the token
    /// version it was issued under when it exists, is for this game and has not expired at
    /// `now`. A ticket works once.
    ///
    /// # Errors
    /// Database failure.
    pub fn redeem_stream_ticket(
        &mut self,
        ticket_hash: &str,
        game: &str,
        now: NaiveDateTime,
    ) -> Result<Option<(String, i32)>, StoreError> {
        on!(self, |c| {
            let found: Option<(String, String, NaiveDateTime, i32)> = stream_tickets::table
                .find(ticket_hash)
                .select((
                    stream_tickets::account_id,
                    stream_tickets::game_id,
                    stream_tickets::expires_at,
                    stream_tickets::token_version,
                ))
                .first(c)
                .optional()?;
            let Some((account, for_game, expires_at, token_version)) = found else {
                return Ok(None);
            };
            // Deleting is the redemption: of two concurrent redeemers only one deletes
            // the row (the other's DELETE matches nothing).
            let deleted = diesel::delete(stream_tickets::table.find(ticket_hash)).execute(c)?;
            Ok((deleted == 1 && for_game == game && expires_at > now)
                .then_some((account, token_version)))
        })
    }

    /// Turns a live guest account into a registered one with `name` and a password hash;
    /// `false` when the account is not a live guest.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] when the name is taken, database failure.
    pub fn register_guest(&mut self, id: &str, name: &str, hash: &str) -> Result<bool, StoreError> {
        on!(self, |c| {
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
                accounts::registered_at.eq(self.now),
            ))
            .execute(c)
            .map_err(duplicate_or)?;
            Ok(changed == 1)
        })
    }

    /// Replaces the password hash and bumps the token version; returns the new version.
    ///
    /// # Errors
    /// Database failure.
    pub fn set_password(&mut self, id: &str, hash: &str) -> Result<i32, StoreError> {
        on!(self, |c| {
            diesel::update(accounts::table.find(id))
                .set(accounts::password_hash.eq(hash))
                .execute(c)
        })?;
        self.bump_token_version(id)
    }

    /// Bumps the token version (every token issued before stops working); returns it.
    ///
    /// # Errors
    /// Database failure.
    pub fn bump_token_version(&mut self, id: &str) -> Result<i32, StoreError> {
        on!(self, |c| {
            diesel::update(accounts::table.find(id))
                .set(accounts::token_version.eq(accounts::token_version + 1))
                .execute(c)?;
            Ok(accounts::table
                .find(id)
                .select(accounts::token_version)
                .first(c)?)
        })
    }

    /// Deletes an account's personal data and credentials (see the module documentation).
    ///
    /// # Errors
    /// Database failure.
    pub fn delete_account(&mut self, id: &str, now: NaiveDateTime) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(accounts::table.find(id))
                .set((
                    accounts::name.eq(DELETED_NAME),
                    accounts::password_hash.eq(None::<String>),
                    accounts::roles.eq(""),
                    accounts::deleted_at.eq(now),
                    accounts::token_version.eq(accounts::token_version + 1),
                ))
                .execute(c)
        })?;
        self.drop_pending_mails(id, "the account was deleted", now)?;
        on!(self, |c| {
            // Deliveries go with their webhook (ON DELETE CASCADE).
            diesel::delete(webhooks::table.filter(webhooks::account_id.eq(id))).execute(c)?;
            diesel::delete(webhook_deliveries::table.filter(webhook_deliveries::account_id.eq(id)))
                .execute(c)?;
            diesel::delete(mail_settings::table.find(id)).execute(c)?;
            diesel::delete(mail_verifications::table.filter(mail_verifications::account_id.eq(id)))
                .execute(c)?;
            diesel::delete(push_subscriptions::table.filter(push_subscriptions::account_id.eq(id)))
                .execute(c)?;
            diesel::delete(push_settings::table.find(id)).execute(c)?;
            diesel::delete(stream_tickets::table.filter(stream_tickets::account_id.eq(id)))
                .execute(c)?;
            // Score pads hold free-text player names: they go, rounds first. The events'
            // append-only trigger lets them go only because the owner is deleted now.
            let pads = scorepads::table
                .filter(scorepads::owner.eq(id))
                .select(scorepads::id);
            diesel::delete(scorepad_events::table.filter(scorepad_events::pad_id.eq_any(pads)))
                .execute(c)?;
            diesel::delete(scorepads::table.filter(scorepads::owner.eq(id))).execute(c)?;
            Ok(())
        })
    }

    /// `(id, name)` of these accounts (deleted ones with [`DELETED_NAME`]).
    ///
    /// # Errors
    /// Database failure.
    pub fn account_names(&mut self, ids: &[&str]) -> Result<Vec<(String, String)>, StoreError> {
        on!(self, |c| {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            Ok(accounts::table
                .filter(accounts::id.eq_any(ids))
                .select((accounts::id, accounts::name))
                .load(c)?)
        })
    }

    /// `(id, token version, deleted)` of these accounts, in one statement (ids that name
    /// no account are left out): what the live streams' revocation check reads.
    ///
    /// # Errors
    /// Database failure.
    pub fn token_versions(&mut self, ids: &[&str]) -> Result<Vec<(String, i32, bool)>, StoreError> {
        on!(self, |c| {
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
                .load(c)?)
        })
    }

    /// An account's mail settings.
    ///
    /// # Errors
    /// Database failure.
    pub fn mail_settings(&mut self, account: &str) -> Result<Option<MailSettingsRow>, StoreError> {
        on!(self, |c| {
            Ok(mail_settings::table
                .find(account)
                .select(MailSettingsRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// The mail settings of these accounts that have a verified address.
    ///
    /// # Errors
    /// Database failure.
    pub fn mail_recipients(
        &mut self,
        accounts: &[&str],
    ) -> Result<Vec<MailSettingsRow>, StoreError> {
        on!(self, |c| {
            if accounts.is_empty() {
                return Ok(Vec::new());
            }
            Ok(mail_settings::table
                .filter(mail_settings::account_id.eq_any(accounts))
                .filter(mail_settings::address.is_not_null())
                .select(MailSettingsRow::as_select())
                .load(c)?)
        })
    }

    /// Inserts or replaces an account's mail settings.
    ///
    /// # Errors
    /// Database failure.
    pub fn save_mail_settings(&mut self, row: &MailSettingsRow) -> Result<(), StoreError> {
        on!(self, |c| {
            let changed = diesel::update(mail_settings::table.find(&row.account_id))
                .set(row.clone())
                .execute(c)?;
            if changed == 0 {
                diesel::insert_into(mail_settings::table)
                    .values(row.clone())
                    .execute(c)?;
            }
            Ok(())
        })
    }

    /// Stores a verification (an account's older ones are forgotten).
    ///
    /// # Errors
    /// Database failure.
    pub fn insert_verification(&mut self, row: &MailVerificationRow) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::delete(
                mail_verifications::table
                    .filter(mail_verifications::account_id.eq(&row.account_id)),
            )
            .execute(c)?;
            diesel::insert_into(mail_verifications::table)
                .values(row.clone())
                .execute(c)
                .map_err(duplicate_or)?;
            Ok(())
        })
    }

    /// Deletes the verification with this token hash and returns it (single use).
    ///
    /// # Errors
    /// Database failure.
    pub fn take_verification(
        &mut self,
        token_hash: &str,
    ) -> Result<Option<MailVerificationRow>, StoreError> {
        on!(self, |c| {
            let row = mail_verifications::table
                .find(token_hash)
                .select(MailVerificationRow::as_select())
                .first(c)
                .optional()?;
            if row.is_some() {
                let deleted =
                    diesel::delete(mail_verifications::table.find(token_hash)).execute(c)?;
                if deleted != 1 {
                    // Another request used it first.
                    return Ok(None);
                }
            }
            Ok(row)
        })
    }

    /// The account's verification waiting for its link, if any.
    ///
    /// # Errors
    /// Database failure.
    pub fn verification_of(
        &mut self,
        account: &str,
    ) -> Result<Option<MailVerificationRow>, StoreError> {
        on!(self, |c| {
            Ok(mail_verifications::table
                .filter(mail_verifications::account_id.eq(account))
                .order(mail_verifications::created_at.desc())
                .select(MailVerificationRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// Forgets the account's verifications.
    ///
    /// # Errors
    /// Database failure.
    pub fn delete_verifications(&mut self, account: &str) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::delete(
                mail_verifications::table.filter(mail_verifications::account_id.eq(account)),
            )
            .execute(c)?;
            Ok(())
        })
    }

    /// Whether the account has a pending outbox row of `kind`.
    ///
    /// # Errors
    /// Database failure.
    pub fn has_pending(&mut self, account: &str, kind: &str) -> Result<bool, StoreError> {
        on!(self, |c| {
            let found: Option<String> = webhook_deliveries::table
                .filter(webhook_deliveries::account_id.eq(account))
                .filter(webhook_deliveries::kind.eq(kind))
                .filter(webhook_deliveries::status.eq(PENDING))
                .select(webhook_deliveries::id)
                .first(c)
                .optional()?;
            Ok(found.is_some())
        })
    }

    /// Drops the account's pending mails (all kinds), e.g. when its address goes.
    ///
    /// # Errors
    /// Database failure.
    pub fn drop_pending_mails(
        &mut self,
        account: &str,
        reason: &str,
        now: NaiveDateTime,
    ) -> Result<usize, StoreError> {
        on!(self, |c| {
            Ok(diesel::update(
                webhook_deliveries::table
                    .filter(webhook_deliveries::account_id.eq(account))
                    .filter(webhook_deliveries::channel.eq(super::outbox::CHANNEL_MAIL))
                    .filter(webhook_deliveries::status.eq(PENDING)),
            )
            .set(super::outbox::dropped(reason, now))
            .execute(c)?)
        })
    }
}
