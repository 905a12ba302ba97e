CREATE TABLE event_counter (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last BIGINT NOT NULL
);
INSERT INTO event_counter (id, last) SELECT 1, COALESCE(MAX(position), 0) FROM events;
ALTER TABLE games DROP COLUMN last_tx;
DROP FUNCTION feed_page(BIGINT, BIGINT, BIGINT);
DROP INDEX events_feed;
CREATE INDEX events_public_position ON events (position) WHERE audience = 'public';
ALTER TABLE events DROP COLUMN tx_id;
DROP FUNCTION feed_horizon();
DROP FUNCTION feed_tx();
