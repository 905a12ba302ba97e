//! Store operations of the webhooks and their outbox, written once and compiled for both
//! connection types, and the [`Store`] entry points that hand them out.
//!
//! `webhooks` holds the registrations; `webhook_deliveries` is the durable outbox, written
//! in the same transaction as the game events that cause a notification. A delivery is
//! `pending` until it is `delivered`, `failed` (attempts used up) or `dropped` (the game no
//! longer asks for the move it announces). While a worker sends it, its `next_attempt_at`
//! is pushed forward as a lease, so no other worker picks it up meanwhile.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::json::JsonValue;
use super::schema::{
    accounts, game_seats, games, push_subscriptions, webhook_deliveries, webhooks,
};
use super::tx::{Conn, Tx, duplicate_or, on};

/// A delivery that waits to be sent (or sent again).
pub const PENDING: &str = "pending";
/// A delivery the receiver accepted with a 2xx answer.
pub const DELIVERED: &str = "delivered";
/// A delivery given up after its last attempt.
pub const FAILED: &str = "failed";
/// A delivery not sent because the game no longer asks for that move.
pub const DROPPED: &str = "dropped";

/// The changeset of [`dropped`].
pub(super) type Dropped<'a> = (
    diesel::dsl::Eq<webhook_deliveries::status, &'static str>,
    diesel::dsl::Eq<webhook_deliveries::last_error, &'a str>,
    diesel::dsl::Eq<webhook_deliveries::finished_at, NaiveDateTime>,
);

/// The changes that mark pending deliveries `dropped` for `reason` (the webhook outbox and
/// the mail channel both drop what no longer holds).
pub(super) fn dropped(reason: &str, now: NaiveDateTime) -> Dropped<'_> {
    (
        webhook_deliveries::status.eq(DROPPED),
        webhook_deliveries::last_error.eq(reason),
        webhook_deliveries::finished_at.eq(now),
    )
}
/// The outbox channel of a webhook POST.
pub const CHANNEL_WEBHOOK: &str = "webhook";
/// The outbox channel of an e-mail.
pub const CHANNEL_MAIL: &str = "mail";
/// The outbox channel of a Web Push notification.
pub const CHANNEL_PUSH: &str = "push";

/// A registered webhook.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = webhooks)]
pub struct WebhookRow {
    /// Id (UUID text).
    pub id: String,
    /// The account whose notifications go to this URL.
    pub account_id: String,
    /// `http://` or `https://` URL.
    pub url: String,
    /// The HMAC key (hex text), shown once at registration.
    pub secret: String,
    /// Registration time (UTC).
    pub created_at: NaiveDateTime,
}

/// A row of the outbox.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = webhook_deliveries)]
pub struct DeliveryRow {
    /// Id (UUID text), also the payload's `id` and the `Stammtisch-Delivery` header.
    pub id: String,
    /// The webhook it goes to (`None` for a mail or a push).
    pub webhook_id: Option<String>,
    /// The account notified.
    pub account_id: String,
    /// The game it is about.
    pub game_id: String,
    /// `your_turn` or `game_finished`.
    pub kind: String,
    /// The game's version when the notification was written.
    pub game_version: i32,
    /// The JSON body that is sent.
    pub payload: JsonValue,
    /// `pending`, `delivered`, `failed` or `dropped`.
    pub status: String,
    /// Attempts started so far.
    pub attempts: i32,
    /// When a worker may (next) take it; while one sends it, the end of its lease.
    pub next_attempt_at: NaiveDateTime,
    /// What went wrong last time.
    pub last_error: Option<String>,
    /// When it was written (UTC).
    pub created_at: NaiveDateTime,
    /// When it left the `pending` state.
    pub finished_at: Option<NaiveDateTime>,
    /// `webhook`, `mail` or `push`.
    pub channel: String,
    /// The push subscription it goes to (`None` unless a push).
    pub subscription_id: Option<String>,
}

/// What the index says a person is asked in a game now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatAsk {
    /// The person must act now.
    pub awaiting: bool,
    /// The actions asked, comma-separated (`play_card`, `pass,take`, …).
    pub action: Option<String>,
    /// The game's version.
    pub version: i32,
    /// The seat's deadline (a move deadline, or the flag-fall of its running clock).
    pub deadline_at: Option<NaiveDateTime>,
}

/// Which due deliveries a worker lane looks at: one channel, without the accounts, webhook
/// URLs and push endpoints that have as many deliveries in flight as they may.
#[derive(Debug, Clone, Copy)]
pub struct Due<'a> {
    /// `webhook`, `mail` or `push`.
    pub channel: &'a str,
    /// Accounts whose deliveries are skipped.
    pub skip_accounts: &'a [&'a str],
    /// Webhook URLs and push endpoints whose deliveries are skipped.
    pub skip_urls: &'a [&'a str],
}

impl Tx<'_> {
    /// Locks the account's row until the end of the transaction (PostgreSQL; SQLite write
    /// transactions are serialised anyway), so that counting and inserting its webhooks
    /// cannot interleave with another registration.
    ///
    /// # Errors
    /// Database failure.
    pub fn lock_account(&mut self, account: &str) -> Result<(), StoreError> {
        let query = accounts::table.find(account).select(accounts::id);
        // PostgreSQL locks the row; SQLite's `BEGIN IMMEDIATE` already makes write
        // transactions exclusive (and SQLite has no `FOR UPDATE`).
        let _: Option<String> = match &mut self.conn {
            Conn::Pg(c) => query.for_update().first(*c).optional()?,
            Conn::Sqlite(c) => query.first(*c).optional()?,
        };
        Ok(())
    }

    /// Inserts a webhook.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] when the id exists, database failure.
    pub fn insert_webhook(&mut self, row: &WebhookRow) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::insert_into(webhooks::table)
                .values(row.clone())
                .execute(c)
                .map_err(duplicate_or)?;
            Ok(())
        })
    }

    /// An account's webhooks, oldest first.
    ///
    /// # Errors
    /// Database failure.
    pub fn webhooks_of(&mut self, account: &str) -> Result<Vec<WebhookRow>, StoreError> {
        on!(self, |c| {
            Ok(webhooks::table
                .filter(webhooks::account_id.eq(account))
                .order((webhooks::created_at.asc(), webhooks::id.asc()))
                .select(WebhookRow::as_select())
                .load(c)?)
        })
    }

    /// The webhooks of any of these accounts, oldest first.
    ///
    /// # Errors
    /// Database failure.
    pub fn webhooks_of_accounts(
        &mut self,
        accounts: &[&str],
    ) -> Result<Vec<WebhookRow>, StoreError> {
        on!(self, |c| {
            if accounts.is_empty() {
                return Ok(Vec::new());
            }
            Ok(webhooks::table
                .filter(webhooks::account_id.eq_any(accounts))
                .order((webhooks::created_at.asc(), webhooks::id.asc()))
                .select(WebhookRow::as_select())
                .load(c)?)
        })
    }

    /// Deletes an account's webhook (and, by the foreign key, its deliveries); `false` when
    /// the account has no webhook with this id.
    ///
    /// # Errors
    /// Database failure.
    pub fn delete_webhook(&mut self, account: &str, id: &str) -> Result<bool, StoreError> {
        on!(self, |c| {
            let deleted = diesel::delete(
                webhooks::table
                    .filter(webhooks::id.eq(id))
                    .filter(webhooks::account_id.eq(account)),
            )
            .execute(c)?;
            Ok(deleted > 0)
        })
    }

    /// Writes deliveries to the outbox.
    ///
    /// # Errors
    /// Database failure.
    pub fn insert_deliveries(&mut self, rows: &[DeliveryRow]) -> Result<(), StoreError> {
        on!(self, |c| {
            if rows.is_empty() {
                return Ok(());
            }
            diesel::insert_into(webhook_deliveries::table)
                .values(rows.to_vec())
                .execute(c)?;
            Ok(())
        })
    }

    /// Marks an account's pending deliveries of one kind and channel for one game `dropped`
    /// (a newer notification supersedes them); returns how many.
    ///
    /// # Errors
    /// Database failure.
    pub fn drop_pending(
        &mut self,
        game: &str,
        account: &str,
        kind: &str,
        channel: &str,
        reason: &str,
        now: NaiveDateTime,
    ) -> Result<usize, StoreError> {
        on!(self, |c| {
            Ok(diesel::update(
                webhook_deliveries::table
                    .filter(webhook_deliveries::game_id.eq(game))
                    .filter(webhook_deliveries::account_id.eq(account))
                    .filter(webhook_deliveries::kind.eq(kind))
                    .filter(webhook_deliveries::channel.eq(channel))
                    .filter(webhook_deliveries::status.eq(PENDING)),
            )
            .set(dropped(reason, now))
            .execute(c)?)
        })
    }

    /// Records every pending delivery of `game` as delivered at `now`, with one attempt
    /// (`stammtisch fill`: a history's outbox with nothing left to send); how many.
    ///
    /// # Errors
    /// Database failure.
    pub fn settle_game_deliveries(
        &mut self,
        game: &str,
        now: NaiveDateTime,
    ) -> Result<usize, StoreError> {
        on!(self, |c| {
            Ok(diesel::update(
                webhook_deliveries::table
                    .filter(webhook_deliveries::game_id.eq(game))
                    .filter(webhook_deliveries::status.eq(PENDING)),
            )
            .set((
                webhook_deliveries::status.eq(DELIVERED),
                webhook_deliveries::attempts.eq(1),
                webhook_deliveries::finished_at.eq(now),
            ))
            .execute(c)?)
        })
    }

    /// Whether some pending delivery that [`Due`] selects is due at `now` (a plain read,
    /// without locks: lets an idle worker skip the write transaction of a claim).
    ///
    /// # Errors
    /// Database failure.
    pub fn any_due(&mut self, due: &Due<'_>, now: NaiveDateTime) -> Result<bool, StoreError> {
        on!(self, |c| {
            let found: Option<String> = webhook_deliveries::table
                .filter(webhook_deliveries::status.eq(PENDING))
                .filter(webhook_deliveries::next_attempt_at.le(now))
                .filter(webhook_deliveries::channel.eq(due.channel))
                .filter(webhook_deliveries::account_id.ne_all(due.skip_accounts))
                .filter(
                    webhook_deliveries::webhook_id
                        .is_null()
                        .or(webhook_deliveries::webhook_id.ne_all(
                            webhooks::table
                                .filter(webhooks::url.eq_any(due.skip_urls))
                                .select(webhooks::id.nullable()),
                        )),
                )
                .filter(
                    webhook_deliveries::subscription_id.is_null().or(
                        webhook_deliveries::subscription_id.ne_all(
                            push_subscriptions::table
                                .filter(push_subscriptions::endpoint.eq_any(due.skip_urls))
                                .select(push_subscriptions::id.nullable()),
                        ),
                    ),
                )
                .select(webhook_deliveries::id)
                .first(c)
                .optional()?;
            Ok(found.is_some())
        })
    }

    /// Up to `limit` pending deliveries that [`Due`] selects, due at `now`, oldest due first,
    /// locked until the end of the transaction; on PostgreSQL rows that another transaction
    /// holds are skipped.
    ///
    /// # Errors
    /// Database failure.
    pub fn due_deliveries(
        &mut self,
        due: &Due<'_>,
        now: NaiveDateTime,
        limit: i64,
    ) -> Result<Vec<DeliveryRow>, StoreError> {
        let query = webhook_deliveries::table
            .filter(webhook_deliveries::status.eq(PENDING))
            .filter(webhook_deliveries::next_attempt_at.le(now))
            .filter(webhook_deliveries::channel.eq(due.channel))
            .filter(webhook_deliveries::account_id.ne_all(due.skip_accounts))
            .filter(
                webhook_deliveries::webhook_id
                    .is_null()
                    .or(webhook_deliveries::webhook_id.ne_all(
                        webhooks::table
                            .filter(webhooks::url.eq_any(due.skip_urls))
                            .select(webhooks::id.nullable()),
                    )),
            )
            .filter(
                webhook_deliveries::subscription_id.is_null().or(
                    webhook_deliveries::subscription_id.ne_all(
                        push_subscriptions::table
                            .filter(push_subscriptions::endpoint.eq_any(due.skip_urls))
                            .select(push_subscriptions::id.nullable()),
                    ),
                ),
            )
            .order((
                webhook_deliveries::next_attempt_at.asc(),
                webhook_deliveries::id.asc(),
            ))
            .limit(limit);
        // PostgreSQL claims the rows and skips those another worker holds; SQLite's
        // `BEGIN IMMEDIATE` already makes write transactions exclusive.
        Ok(match &mut self.conn {
            // The selection per backend: `as_select` is typed by the backend it reads.
            Conn::Pg(c) => query
                .select(DeliveryRow::as_select())
                .for_update()
                .skip_locked()
                .load(*c)?,
            Conn::Sqlite(c) => query.select(DeliveryRow::as_select()).load(*c)?,
        })
    }

    /// Webhooks by id.
    ///
    /// # Errors
    /// Database failure.
    pub fn webhooks_by_id(&mut self, ids: &[&str]) -> Result<Vec<WebhookRow>, StoreError> {
        on!(self, |c| {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            Ok(webhooks::table
                .filter(webhooks::id.eq_any(ids))
                .select(WebhookRow::as_select())
                .load(c)?)
        })
    }

    /// What the index says `account` is asked in `game` now (`None`: not seated, or no
    /// such game).
    ///
    /// # Errors
    /// Database failure.
    pub fn seat_ask(&mut self, game: &str, account: &str) -> Result<Option<SeatAsk>, StoreError> {
        on!(self, |c| {
            let row: Option<(bool, Option<String>, i32, Option<NaiveDateTime>)> = game_seats::table
                .inner_join(games::table)
                .filter(game_seats::game_id.eq(game))
                .filter(game_seats::account_id.eq(account))
                .select((
                    game_seats::awaiting,
                    game_seats::action,
                    games::version,
                    game_seats::deadline_at,
                ))
                .first(c)
                .optional()?;
            Ok(row.map(|(awaiting, action, version, deadline_at)| SeatAsk {
                awaiting,
                action,
                version,
                deadline_at,
            }))
        })
    }

    /// Starts an attempt: counts it and leases the delivery until `lease_until`.
    ///
    /// # Errors
    /// Database failure.
    pub fn lease_delivery(
        &mut self,
        id: &str,
        lease_until: NaiveDateTime,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(webhook_deliveries::table.find(id))
                .set((
                    webhook_deliveries::attempts.eq(webhook_deliveries::attempts + 1),
                    webhook_deliveries::next_attempt_at.eq(lease_until),
                ))
                .execute(c)?;
            Ok(())
        })
    }

    /// Ends a delivery: `status` is `delivered`, `failed` or `dropped`. A `delivered`
    /// outcome is recorded whatever the row's state (the receiver has it); the others only
    /// while the row is still `pending`.
    ///
    /// # Errors
    /// Database failure.
    pub fn finish_delivery(
        &mut self,
        id: &str,
        status: &str,
        last_error: Option<&str>,
        now: NaiveDateTime,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            let changes = (
                webhook_deliveries::status.eq(status),
                webhook_deliveries::last_error.eq(last_error),
                webhook_deliveries::finished_at.eq(now),
            );
            if status == DELIVERED {
                diesel::update(webhook_deliveries::table.find(id))
                    .set(changes)
                    .execute(c)?;
            } else {
                diesel::update(
                    webhook_deliveries::table
                        .find(id)
                        .filter(webhook_deliveries::status.eq(PENDING)),
                )
                .set(changes)
                .execute(c)?;
            }
            Ok(())
        })
    }

    /// Moves a pending delivery's next attempt to `at` without counting an attempt (its
    /// target is paused).
    ///
    /// # Errors
    /// Database failure.
    pub fn postpone_delivery(&mut self, id: &str, at: NaiveDateTime) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(
                webhook_deliveries::table
                    .find(id)
                    .filter(webhook_deliveries::status.eq(PENDING)),
            )
            .set(webhook_deliveries::next_attempt_at.eq(at))
            .execute(c)?;
            Ok(())
        })
    }

    /// Schedules the next attempt of a pending delivery after a failed one.
    ///
    /// # Errors
    /// Database failure.
    pub fn retry_delivery(
        &mut self,
        id: &str,
        at: NaiveDateTime,
        last_error: &str,
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::update(
                webhook_deliveries::table
                    .find(id)
                    .filter(webhook_deliveries::status.eq(PENDING)),
            )
            .set((
                webhook_deliveries::next_attempt_at.eq(at),
                webhook_deliveries::last_error.eq(last_error),
            ))
            .execute(c)?;
            Ok(())
        })
    }
}
