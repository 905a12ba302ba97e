DROP INDEX events_finished;
