DROP INDEX events_public_position;
DROP TABLE event_counter;
