-- The ratings projection folds finished games only: it reads the feed's `game_finished`
-- events, not every public event (half of all events), in the feed's order, from the
-- same checkpoint. A partial index holds just those events, one per finished game.
CREATE INDEX events_finished ON events (tx_id, position)
    WHERE audience = 'public' AND event_type = 'game_finished';
-- A page of them, as feed_page (migration 000040_feed_xid) pages the feed: only events
-- below the horizon, a keyset range scan in key order whatever the statistics say.
CREATE FUNCTION finished_page(after_tx BIGINT, after_position BIGINT, page BIGINT)
RETURNS SETOF events LANGUAGE sql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off AS $$
    SELECT * FROM events
    WHERE audience = 'public' AND event_type = 'game_finished'
      AND (tx_id, position) > (after_tx, after_position)
      AND tx_id < feed_horizon()
    ORDER BY tx_id, position
    LIMIT page
$$;
