-- Global positions in commit order. A sequence hands out positions at insert time, so a
-- transaction that took position 10 can commit after one that took 11, and a reader that
-- follows `position > N` would skip it. Instead every append takes its positions from this
-- one counter row as part of its transaction: the row lock is held until commit, so
-- positions are gapless and committed in order (Commanded EventStore's approach).
CREATE TABLE event_counter (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last BIGINT NOT NULL
);
INSERT INTO event_counter (id, last) SELECT 1, COALESCE(MAX(position), 0) FROM events;
CREATE INDEX events_public_position ON events (position) WHERE audience = 'public';
