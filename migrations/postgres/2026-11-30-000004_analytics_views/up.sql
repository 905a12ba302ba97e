-- Views for analysts (docs/analytics.md). Everything in the schema `analytics` is derived
-- from the games index and the PUBLIC events only, so SQL run against it never sees a hand,
-- a selection before the reveal, a draw pile or a seed of a running game. Grant analysts
-- USAGE on the schema and SELECT on its views, not access to the base tables: a view reads
-- with its owner's rights.
--
-- The base tables are named without a schema, as the migrations that created them did.

CREATE SCHEMA analytics;

-- Public events with their JSON (`data` is the event's `data` object as the API shows it).
CREATE VIEW analytics.events AS
SELECT e.game_id,
       e.seq,
       e.event_type AS type,
       e.audience,
       e.schema_version,
       e.recorded_at,
       e.data
FROM events e
WHERE e.audience = 'public';

-- One row per game, with what it was created with.
CREATE VIEW analytics.games AS
SELECT g.id,
       g.ruleset,
       g.name,
       g.status,
       g.created_at,
       f.recorded_at AS finished_at,
       (c.data ->> 'rules_version')::integer AS rules_version,
       c.data -> 'options' AS options,
       (c.data ->> 'players')::integer AS players
FROM games g
LEFT JOIN analytics.events c ON c.game_id = g.id AND c.type = 'game_created'
LEFT JOIN analytics.events f ON f.game_id = g.id AND f.type = 'game_finished';

-- Who sits at each seat: the last of seat_taken / bot_added / seat_left / seat_removed per
-- seat decides. `bot` is a seat the host gave to a bot; `resigned` a person's seat that a
-- bot played after the person resigned.
CREATE VIEW analytics.seats AS
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

-- Finished rounds: deals of the row games, games of a nimm-oder-schieb match.
CREATE VIEW analytics.rounds AS
SELECT e.game_id,
       (e.data ->> 'round')::integer AS round,
       e.recorded_at AS ended_at
FROM analytics.events e
WHERE e.type = 'round_ended'
UNION ALL
SELECT e.game_id,
       (e.data ->> 'game')::integer AS round,
       e.recorded_at AS ended_at
FROM analytics.events e
WHERE e.type = 'nos_game_ended';

-- One row per seat and finished round: bullheads taken (row games), or card points minus
-- chips (nimm-oder-schieb). Lower is better in every ruleset.
CREATE VIEW analytics.scores AS
SELECT e.game_id,
       COALESCE(e.data ->> 'round', e.data ->> 'game')::integer AS round,
       (s.ordinality - 1)::integer AS seat,
       s.value::integer AS score
FROM analytics.events e
CROSS JOIN LATERAL jsonb_array_elements_text(e.data -> 'scores') WITH ORDINALITY AS s (value, ordinality)
WHERE e.type IN ('round_ended', 'nos_game_ended');

-- Bullheads of a card in a row game (NULL for nimm-oder-schieb, which has none).
CREATE FUNCTION analytics.bullheads(ruleset text, card integer) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE
        WHEN ruleset = 'nimm-oder-schieb' THEN NULL
        WHEN card = 55 THEN CASE WHEN ruleset = '11-nimmt' THEN 5 ELSE 7 END
        WHEN card % 11 = 0 THEN 5
        WHEN card % 10 = 0 THEN 3
        WHEN card % 5 = 0 THEN 2
        ELSE 1
    END
$$;
