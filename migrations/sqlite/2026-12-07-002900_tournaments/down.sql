DROP TABLE tournament_players;
DROP TRIGGER tournament_events_no_delete;
DROP TRIGGER tournament_events_no_update;
DROP TABLE tournament_events;
DROP TABLE tournaments;
