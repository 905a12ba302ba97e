-- SQLite writers are serialised (BEGIN IMMEDIATE), so AUTOINCREMENT positions are already
-- assigned in commit order; only the feed's index is needed.
CREATE INDEX events_public_position ON events (position) WHERE audience = 'public';
