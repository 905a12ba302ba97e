-- A game's name is its host's free text: analysts see it only for games that are public
-- now (`games.public`, which follows `visibility_set`). For every other game
-- analytics.games.name is null, and so is the `name` in the data of its `game_created`
-- event in analytics.events (as in the HTTP feed and archive).
CREATE OR REPLACE VIEW analytics.events AS
SELECT e.game_id,
       e.seq,
       e.event_type AS type,
       e.audience,
       e.schema_version,
       e.recorded_at,
       CASE
           WHEN e.event_type = 'seat_taken' THEN e.data - 'name'
           WHEN e.event_type = 'game_created'
                AND NOT EXISTS (SELECT 1 FROM games g WHERE g.id = e.game_id AND g.public)
               THEN jsonb_set(e.data, '{name}', 'null')
           ELSE e.data
       END AS data
FROM events e
WHERE e.audience = 'public';

CREATE OR REPLACE VIEW analytics.games AS
SELECT g.id,
       g.ruleset,
       CASE WHEN g.public THEN g.name END AS name,
       g.status,
       g.created_at,
       f.recorded_at AS finished_at,
       (c.data ->> 'rules_version')::integer AS rules_version,
       CASE g.ruleset
           WHEN '6-nimmt' THEN (c.data -> 'options') - 'chips'
           WHEN '11-nimmt' THEN jsonb_build_object('end', c.data -> 'options' -> 'end')
           WHEN 'x-nimmt' THEN
               jsonb_build_object('deals', c.data -> 'options' -> 'end' -> 'rounds')
           WHEN 'nimm-oder-schieb' THEN
               jsonb_build_object('games', c.data -> 'options' -> 'end' -> 'rounds',
                                  'chips', COALESCE(c.data -> 'options' -> 'chips', '"hidden"'))
           ELSE c.data -> 'options'
       END AS options,
       (c.data ->> 'players')::integer AS players
FROM games g
LEFT JOIN analytics.events c ON c.game_id = g.id AND c.type = 'game_created'
LEFT JOIN analytics.events f ON f.game_id = g.id AND f.type = 'game_finished';
