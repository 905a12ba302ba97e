-- The seats' view as before: resigned by seat_resigned only.
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

ALTER TABLE games DROP COLUMN time_control;
