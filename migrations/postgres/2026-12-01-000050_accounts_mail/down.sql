CREATE OR REPLACE VIEW analytics.events AS
SELECT e.game_id,
       e.seq,
       e.event_type AS type,
       e.audience,
       e.schema_version,
       e.recorded_at,
       e.data
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
       s.data ->> 'name' AS name,
       s.data ->> 'strategy' AS strategy,
       EXISTS (SELECT 1
               FROM analytics.events r
               WHERE r.game_id = s.game_id
                 AND r.type = 'seat_resigned'
                 AND (r.data ->> 'seat')::integer = s.seat) AS resigned
FROM seat_events s
WHERE s.latest = 1
  AND s.type IN ('seat_taken', 'bot_added');

DROP INDEX webhook_deliveries_account;
DELETE FROM webhook_deliveries WHERE channel <> 'webhook';
ALTER TABLE webhook_deliveries DROP COLUMN channel;
ALTER TABLE webhook_deliveries ALTER COLUMN webhook_id SET NOT NULL;
DROP TABLE mail_verifications;
DROP TABLE mail_settings;
DROP INDEX accounts_name_unique;
CREATE UNIQUE INDEX accounts_name_unique ON accounts (lower(name)) WHERE NOT guest;
ALTER TABLE accounts DROP COLUMN deleted_at;
ALTER TABLE accounts DROP COLUMN token_version;
