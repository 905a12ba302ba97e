CREATE OR REPLACE VIEW analytics.games AS
SELECT g.id,
       g.ruleset,
       g.name,
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
