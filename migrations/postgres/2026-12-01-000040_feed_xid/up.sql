-- The analysts' feed in commit order without serialising writers (README, "The analysts'
-- feed"). Positions come from the sequence again (no counter row locked until commit);
-- every event records the transaction that wrote it, and readers see only events whose
-- transaction is below the oldest one still running, in (tx_id, position) order. So a late
-- commit is delivered after what committed before it became visible, never skipped.
--
-- tx_id = feed_base + the 64-bit transaction id. After a restore into a new cluster the
-- transaction ids start low again; the server notices at start (events above the current
-- id) and raises feed_base by replacing these two functions, so new events still sort
-- after the restored ones.
CREATE FUNCTION feed_tx() RETURNS BIGINT LANGUAGE sql STABLE PARALLEL SAFE AS
    $$ SELECT 0 + pg_current_xact_id()::text::bigint $$;
-- Everything below the horizon has committed or rolled back.
CREATE FUNCTION feed_horizon() RETURNS BIGINT LANGUAGE sql STABLE PARALLEL SAFE AS
    $$ SELECT 0 + pg_snapshot_xmin(pg_current_snapshot())::text::bigint $$;

-- Events written before this migration keep tx_id 0: they were committed in position order.
ALTER TABLE events ADD COLUMN tx_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE events ALTER COLUMN tx_id SET DEFAULT feed_tx();
-- The feed's keyset: an index range scan in key order.
DROP INDEX events_public_position;
CREATE INDEX events_feed ON events (tx_id, position) WHERE audience = 'public';
-- A page of the feed. The plan must not depend on statistics: on a table that was never
-- analysed the planner guesses that few rows follow the cursor and chooses a bitmap scan
-- and a sort of everything after it (a page of 1,000 then reads the whole rest of the
-- table). With these settings the only plan left is the ordered range scan of events_feed,
-- which stops after `page` rows. STABLE: the horizon and the rows come from the snapshot
-- of the calling statement.
CREATE FUNCTION feed_page(after_tx BIGINT, after_position BIGINT, page BIGINT)
RETURNS SETOF events LANGUAGE sql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off AS $$
    SELECT * FROM events
    WHERE audience = 'public' AND (tx_id, position) > (after_tx, after_position)
      AND tx_id < feed_horizon()
    ORDER BY tx_id, position
    LIMIT page
$$;

-- The transaction of a game's last append: an append whose transaction id is below it
-- (its id was taken before the previous append's) conflicts and is retried, so a game's
-- events are in seq order in the feed too.
ALTER TABLE games ADD COLUMN last_tx BIGINT NOT NULL DEFAULT 0;
ALTER TABLE games ALTER COLUMN last_tx SET DEFAULT feed_tx();

DROP TABLE event_counter;
SELECT setval(pg_get_serial_sequence('events', 'position'), COALESCE(MAX(position), 0) + 1, false)
FROM events;
