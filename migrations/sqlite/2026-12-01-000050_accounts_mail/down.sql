CREATE TABLE webhook_deliveries_old (
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
INSERT INTO webhook_deliveries_old
SELECT id, webhook_id, account_id, game_id, kind, game_version, payload, status, attempts,
       next_attempt_at, last_error, created_at, finished_at
FROM webhook_deliveries WHERE channel = 'webhook';
DROP TABLE webhook_deliveries;
ALTER TABLE webhook_deliveries_old RENAME TO webhook_deliveries;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
DROP TABLE mail_verifications;
DROP TABLE mail_settings;
DROP INDEX accounts_name_unique;
CREATE UNIQUE INDEX accounts_name_unique ON accounts (lower(name)) WHERE NOT guest;
ALTER TABLE accounts DROP COLUMN deleted_at;
ALTER TABLE accounts DROP COLUMN token_version;
