-- The ratings projection folds finished games only: it reads the feed's `game_finished`
-- events in the feed's order (position), not every public event. A partial index holds
-- just those events, one per finished game.
CREATE INDEX events_finished ON events (position)
    WHERE audience = 'public' AND event_type = 'game_finished';
