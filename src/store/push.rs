//! Store operations of Web Push: the push subscriptions of accounts (a browser's endpoint
//! and keys), the accounts' push choices, and the outbox queries that coalesce "your turn"
//! notifications, written once and compiled for both connection types.
//!
//! A subscription's endpoint is unique (one browser, one row). Push deliveries are outbox rows of channel
//! `push` that name their subscription (`webhook_deliveries.subscription_id`, without a
//! foreign key): removing a subscription drops its pending rows.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::outbox::{CHANNEL_PUSH, DeliveryRow, PENDING, dropped};
use super::schema::{push_settings, push_subscriptions, webhook_deliveries};
use super::tx::{Tx, duplicate_or, on};

/// A browser's push subscription.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = push_subscriptions)]
pub struct PushSubscriptionRow {
    /// Id (UUID text).
    pub id: String,
    /// The account whose notifications go there.
    pub account_id: String,
    /// The push service's URL for this browser.
    pub endpoint: String,
    /// The browser's P-256 public key, base64url (65 bytes, uncompressed point).
    pub p256dh: String,
    /// The browser's auth secret, base64url (16 bytes).
    pub auth: String,
    /// `en` or `de`: the language of the texts.
    pub language: String,
    /// Until then a new "your turn" waits and joins the next one.
    pub quiet_until: Option<NaiveDateTime>,
    /// When it was subscribed (UTC).
    pub created_at: NaiveDateTime,
}

/// An account's push choices.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = push_settings, treat_none_as_null = true)]
pub struct PushSettingsRow {
    /// The account.
    pub account_id: String,
    /// A notification when it becomes the account's turn.
    pub your_turn: bool,
    /// A notification when a move deadline is less than this many hours away (`None`: off).
    pub deadline_hours: Option<i32>,
    /// A notification when a game of the account ends.
    pub game_finished: bool,
    /// A notification when a rematch keeps a seat for the account.
    pub rematch_offered: bool,
    /// Last change (UTC).
    pub updated_at: NaiveDateTime,
}

impl Tx<'_> {
    /// Inserts a subscription.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] when the id or the endpoint exists, database failure.
    pub fn insert_push_subscription(
        &mut self,
        row: &PushSubscriptionRow,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::insert_into(push_subscriptions::table)
                .values(row.clone())
                .execute(c)
                .map_err(duplicate_or)?;
            Ok(())
        })
    }

    /// Stores a subscription's new keys and language (the browser subscribed again).
    ///
    /// # Errors
    /// Database failure.
    pub fn update_push_subscription(
        &mut self,
        row: &PushSubscriptionRow,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(push_subscriptions::table.find(&row.id))
                .set((
                    push_subscriptions::p256dh.eq(&row.p256dh),
                    push_subscriptions::auth.eq(&row.auth),
                    push_subscriptions::language.eq(&row.language),
                ))
                .execute(c)?;
            Ok(())
        })
    }

    /// The subscription with this endpoint, whoseever it is.
    ///
    /// # Errors
    /// Database failure.
    pub fn push_subscription_by_endpoint(
        &mut self,
        endpoint: &str,
    ) -> Result<Option<PushSubscriptionRow>, StoreError> {
        on!(self, |c| {
            Ok(push_subscriptions::table
                .filter(push_subscriptions::endpoint.eq(endpoint))
                .select(PushSubscriptionRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// An account's subscriptions, oldest first.
    ///
    /// # Errors
    /// Database failure.
    pub fn push_subscriptions_of(
        &mut self,
        account: &str,
    ) -> Result<Vec<PushSubscriptionRow>, StoreError> {
        on!(self, |c| {
            Ok(push_subscriptions::table
                .filter(push_subscriptions::account_id.eq(account))
                .order((
                    push_subscriptions::created_at.asc(),
                    push_subscriptions::id.asc(),
                ))
                .select(PushSubscriptionRow::as_select())
                .load(c)?)
        })
    }

    /// The subscriptions of any of these accounts, oldest first.
    ///
    /// # Errors
    /// Database failure.
    pub fn push_subscriptions_of_accounts(
        &mut self,
        accounts: &[&str],
    ) -> Result<Vec<PushSubscriptionRow>, StoreError> {
        on!(self, |c| {
            if accounts.is_empty() {
                return Ok(Vec::new());
            }
            Ok(push_subscriptions::table
                .filter(push_subscriptions::account_id.eq_any(accounts))
                .order((
                    push_subscriptions::created_at.asc(),
                    push_subscriptions::id.asc(),
                ))
                .select(PushSubscriptionRow::as_select())
                .load(c)?)
        })
    }

    /// Subscriptions by id.
    ///
    /// # Errors
    /// Database failure.
    pub fn push_subscriptions_by_id(
        &mut self,
        ids: &[&str],
    ) -> Result<Vec<PushSubscriptionRow>, StoreError> {
        on!(self, |c| {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            Ok(push_subscriptions::table
                .filter(push_subscriptions::id.eq_any(ids))
                .select(PushSubscriptionRow::as_select())
                .load(c)?)
        })
    }

    /// Removes a subscription and drops its pending deliveries (for `reason`); `false` when
    /// there is none with this id.
    ///
    /// # Errors
    /// Database failure.
    pub fn remove_push_subscription(
        &mut self,
        id: &str,
        reason: &str,
        now: NaiveDateTime,
    ) -> Result<bool, StoreError> {
        on!(self, |c| {
            diesel::update(
                webhook_deliveries::table
                    .filter(webhook_deliveries::subscription_id.eq(id))
                    .filter(webhook_deliveries::status.eq(PENDING)),
            )
            .set(dropped(reason, now))
            .execute(c)?;
            let deleted = diesel::delete(push_subscriptions::table.find(id)).execute(c)?;
            Ok(deleted > 0)
        })
    }

    /// Whether `account` has the subscription `id`.
    ///
    /// # Errors
    /// Database failure.
    pub fn owns_push_subscription(&mut self, account: &str, id: &str) -> Result<bool, StoreError> {
        on!(self, |c| {
            let found: Option<String> = push_subscriptions::table
                .find(id)
                .filter(push_subscriptions::account_id.eq(account))
                .select(push_subscriptions::id)
                .first(c)
                .optional()?;
            Ok(found.is_some())
        })
    }

    /// Sets until when a subscription's new "your turn" notifications wait.
    ///
    /// # Errors
    /// Database failure.
    pub fn set_push_quiet_until(
        &mut self,
        id: &str,
        until: NaiveDateTime,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(push_subscriptions::table.find(id))
                .set(push_subscriptions::quiet_until.eq(until))
                .execute(c)?;
            Ok(())
        })
    }

    /// The pending push deliveries of `kind` to a subscription that no attempt has started
    /// yet.
    ///
    /// # Errors
    /// Database failure.
    pub fn unsent_pushes(
        &mut self,
        subscription: &str,
        kind: &str,
    ) -> Result<Vec<DeliveryRow>, StoreError> {
        on!(self, |c| {
            Ok(webhook_deliveries::table
                .filter(webhook_deliveries::subscription_id.eq(subscription))
                .filter(webhook_deliveries::channel.eq(CHANNEL_PUSH))
                .filter(webhook_deliveries::kind.eq(kind))
                .filter(webhook_deliveries::status.eq(PENDING))
                .filter(webhook_deliveries::attempts.eq(0))
                .select(DeliveryRow::as_select())
                .load(c)?)
        })
    }

    /// Marks deliveries `dropped` for `reason` (those still pending).
    ///
    /// # Errors
    /// Database failure.
    pub fn drop_deliveries(
        &mut self,
        ids: &[&str],
        reason: &str,
        now: NaiveDateTime,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            if ids.is_empty() {
                return Ok(());
            }
            diesel::update(
                webhook_deliveries::table
                    .filter(webhook_deliveries::id.eq_any(ids))
                    .filter(webhook_deliveries::status.eq(PENDING)),
            )
            .set(dropped(reason, now))
            .execute(c)?;
            Ok(())
        })
    }

    /// An account's push choices (`None`: the defaults).
    ///
    /// # Errors
    /// Database failure.
    pub fn push_settings(&mut self, account: &str) -> Result<Option<PushSettingsRow>, StoreError> {
        on!(self, |c| {
            Ok(push_settings::table
                .find(account)
                .select(PushSettingsRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// The push choices of these accounts that have stored any (the others have the
    /// defaults).
    ///
    /// # Errors
    /// Database failure.
    pub fn push_settings_of(
        &mut self,
        accounts: &[&str],
    ) -> Result<Vec<PushSettingsRow>, StoreError> {
        on!(self, |c| {
            if accounts.is_empty() {
                return Ok(Vec::new());
            }
            Ok(push_settings::table
                .filter(push_settings::account_id.eq_any(accounts))
                .select(PushSettingsRow::as_select())
                .load(c)?)
        })
    }

    /// Inserts or replaces an account's push choices.
    ///
    /// # Errors
    /// Database failure.
    pub fn save_push_settings(&mut self, row: &PushSettingsRow) -> Result<(), StoreError> {
        on!(self, |c| {
            let changed = diesel::update(push_settings::table.find(&row.account_id))
                .set(row.clone())
                .execute(c)?;
            if changed == 0 {
                diesel::insert_into(push_settings::table)
                    .values(row.clone())
                    .execute(c)?;
            }
            Ok(())
        })
    }
}
