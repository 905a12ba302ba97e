DROP TABLE idempotency_keys;
DROP TRIGGER events_no_delete;
DROP TRIGGER events_no_update;
DROP TABLE events;
DROP TABLE game_seats;
DROP TABLE games;
DROP TABLE settings;
DROP TABLE accounts;
