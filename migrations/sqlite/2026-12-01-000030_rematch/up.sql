-- A rematch keeps seats for the people of the finished game until this time; then the
-- deadline watcher releases them (an event in the game's log) and clears it.
ALTER TABLE games ADD COLUMN reserved_until TIMESTAMP;
CREATE INDEX games_reserved_until ON games (reserved_until) WHERE reserved_until IS NOT NULL;
