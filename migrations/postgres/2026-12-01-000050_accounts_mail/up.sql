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
    account_id     TEXT PRIMARY KEY REFERENCES accounts (id),
    address        TEXT,
    your_turn      BOOLEAN NOT NULL,
    deadline_hours INTEGER,
    game_finished  BOOLEAN NOT NULL,
    digest         BOOLEAN NOT NULL,
    updated_at     TIMESTAMP NOT NULL
);

-- Addresses waiting for their verification link; only a hash of the link's token is kept.
CREATE TABLE mail_verifications (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    address    TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX mail_verifications_account ON mail_verifications (account_id);

-- The outbox carries mails too: a mail has no webhook.
ALTER TABLE webhook_deliveries ALTER COLUMN webhook_id DROP NOT NULL;
ALTER TABLE webhook_deliveries ADD COLUMN channel TEXT NOT NULL DEFAULT 'webhook';
CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, kind) WHERE status = 'pending';

-- Events name people by account id only: `seat_taken` lost its `name` (schema 2). The
-- analysts' views read stored rows as they are, so they drop it from rows of schema 1 too,
-- and `analytics.seats.name` is, like the game view's, a bot's name or the person's current
-- account name (`deleted player` once the account is deleted).
CREATE OR REPLACE VIEW analytics.events AS
SELECT e.game_id,
       e.seq,
       e.event_type AS type,
       e.audience,
       e.schema_version,
       e.recorded_at,
       CASE WHEN e.event_type = 'seat_taken' THEN e.data - 'name' ELSE e.data END AS data
FROM events e
WHERE e.audience = 'public';

CREATE OR REPLACE VIEW analytics.seats AS
WITH seat_events AS (
    SELECT e.game_id,
           (e.data ->> 'seat')::integer AS seat,
           e.type,
           e.data,
           row_number() OVER (PARTITION BY e.game_id, (e.data ->> 'seat')::integer
                              ORDER BY e.seq DESC) AS latest
    FROM analytics.events e
    WHERE e.type IN ('seat_taken', 'bot_added', 'seat_left', 'seat_removed')
)
SELECT s.game_id,
       s.seat,
       CASE WHEN s.type = 'seat_taken' THEN s.data ->> 'account' END AS account_id,
       s.type = 'bot_added' AS bot,
       CASE WHEN s.type = 'bot_added' THEN s.data ->> 'name' ELSE a.name END AS name,
       s.data ->> 'strategy' AS strategy,
       EXISTS (SELECT 1
               FROM analytics.events r
               WHERE r.game_id = s.game_id
                 AND r.type = 'seat_resigned'
                 AND (r.data ->> 'seat')::integer = s.seat) AS resigned
FROM seat_events s
LEFT JOIN accounts a ON s.type = 'seat_taken' AND a.id = s.data ->> 'account'
WHERE s.latest = 1
  AND s.type IN ('seat_taken', 'bot_added');
