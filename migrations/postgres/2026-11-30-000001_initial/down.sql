DROP TABLE idempotency_keys;
DROP TABLE events;
DROP FUNCTION events_are_append_only();
DROP TABLE game_seats;
DROP TABLE games;
DROP TABLE settings;
DROP TABLE accounts;
