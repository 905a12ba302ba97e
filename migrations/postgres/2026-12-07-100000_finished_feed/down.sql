DROP FUNCTION finished_page(BIGINT, BIGINT, BIGINT);
DROP INDEX events_finished;
