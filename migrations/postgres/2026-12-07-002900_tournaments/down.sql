DROP TABLE tournament_players;
DROP TRIGGER tournament_events_no_truncate ON tournament_events;
DROP TRIGGER tournament_events_append_only ON tournament_events;
DROP TABLE tournament_events;
DROP TABLE tournaments;
