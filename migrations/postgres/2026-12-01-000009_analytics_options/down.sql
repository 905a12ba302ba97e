CREATE OR REPLACE VIEW analytics.games AS
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
