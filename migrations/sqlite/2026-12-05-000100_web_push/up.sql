-- Web Push: the browsers a person subscribed (each a push service endpoint with the
-- browser's public key and auth secret), the person's push choices, and a push channel in
-- the outbox whose rows name the subscription they go to.

CREATE TABLE push_subscriptions (
    id          TEXT PRIMARY KEY NOT NULL,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    endpoint    TEXT NOT NULL,
    -- The browser's P-256 public key (65 bytes, uncompressed) and auth secret (16 bytes),
    -- base64url without padding, as PushSubscription.toJSON() gives them.
    p256dh      TEXT NOT NULL,
    auth        TEXT NOT NULL,
    -- `en` or `de`: the language of the notifications' texts.
    language    TEXT NOT NULL,
    -- Until then a new "your turn" waits and joins the next one (one notification for
    -- several waiting games, not a burst).
    quiet_until TIMESTAMP,
    created_at  TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX push_subscriptions_endpoint ON push_subscriptions (endpoint);
CREATE INDEX push_subscriptions_account ON push_subscriptions (account_id);

-- An account's push choices (absent: the defaults).
CREATE TABLE push_settings (
    account_id      TEXT PRIMARY KEY NOT NULL REFERENCES accounts (id),
    your_turn       BOOLEAN NOT NULL,
    deadline_hours  INTEGER,
    game_finished   BOOLEAN NOT NULL,
    rematch_offered BOOLEAN NOT NULL,
    updated_at      TIMESTAMP NOT NULL
);

-- A push delivery names its subscription. No foreign key (SQLite can drop only a column
-- without one): removing a subscription drops its pending rows, and the worker drops a
-- row whose subscription is gone.
ALTER TABLE webhook_deliveries ADD COLUMN subscription_id TEXT;
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id) WHERE status = 'pending';
