-- Accounts for the long run: a token version (bumped to revoke every token of an account on
-- every replica), deletion (the row stays for the event log's references; name and
-- credentials are removed), e-mail reminders and their verification, and a mail channel in
-- the outbox.

ALTER TABLE accounts ADD COLUMN token_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN deleted_at TIMESTAMP;
-- Deleted accounts all show the same neutral name; only live registered names are unique.
DROP INDEX accounts_name_unique;
CREATE UNIQUE INDEX accounts_name_unique ON accounts (lower(name)) WHERE NOT guest AND deleted_at IS NULL;

-- An account's reminder choices and its verified address.
CREATE TABLE mail_settings (
    account_id     TEXT PRIMARY KEY NOT NULL REFERENCES accounts (id),
    address        TEXT,
    your_turn      BOOLEAN NOT NULL,
    deadline_hours INTEGER,
    game_finished  BOOLEAN NOT NULL,
    digest         BOOLEAN NOT NULL,
    updated_at     TIMESTAMP NOT NULL
);

-- Addresses waiting for their verification link; only a hash of the link's token is kept.
CREATE TABLE mail_verifications (
    token_hash TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    address    TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX mail_verifications_account ON mail_verifications (account_id);

-- The outbox carries mails too: a mail has no webhook. SQLite cannot drop a NOT NULL, so
-- the table is rebuilt.
CREATE TABLE webhook_deliveries_new (
    id              TEXT PRIMARY KEY NOT NULL,
    webhook_id      TEXT REFERENCES webhooks (id) ON DELETE CASCADE,
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
    finished_at     TIMESTAMP,
    channel         TEXT NOT NULL DEFAULT 'webhook'
);
INSERT INTO webhook_deliveries_new
    (id, webhook_id, account_id, game_id, kind, game_version, payload, status, attempts,
     next_attempt_at, last_error, created_at, finished_at)
SELECT id, webhook_id, account_id, game_id, kind, game_version, payload, status, attempts,
       next_attempt_at, last_error, created_at, finished_at
FROM webhook_deliveries;
DROP TABLE webhook_deliveries;
ALTER TABLE webhook_deliveries_new RENAME TO webhook_deliveries;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, kind) WHERE status = 'pending';
