-- Play by mail: what each seat is asked and until when, public games and invite codes,
-- webhooks and their durable outbox.

ALTER TABLE game_seats ADD COLUMN action TEXT;
ALTER TABLE game_seats ADD COLUMN deadline_at TIMESTAMP;
CREATE INDEX game_seats_deadline ON game_seats (deadline_at) WHERE deadline_at IS NOT NULL;

ALTER TABLE games ADD COLUMN public BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE games ADD COLUMN invite_code TEXT;

CREATE TABLE webhooks (
    id         TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    url        TEXT NOT NULL,
    secret     TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX webhooks_account ON webhooks (account_id);

-- The outbox: written in the same transaction as the events that cause a notification.
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY NOT NULL,
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    account_id      TEXT NOT NULL,
    game_id         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    game_version    INTEGER NOT NULL,
    payload         TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at TIMESTAMP NOT NULL,
    last_error      TEXT,
    created_at      TIMESTAMP NOT NULL,
    finished_at     TIMESTAMP
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
