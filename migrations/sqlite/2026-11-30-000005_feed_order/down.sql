DROP INDEX events_public_position;
