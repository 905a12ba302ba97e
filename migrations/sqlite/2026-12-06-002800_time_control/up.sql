-- A game's time control (issue 28), as JSON, so that lists show it without reading the
-- game's events (the events stay the truth: time_control_set).
ALTER TABLE games ADD COLUMN time_control TEXT;
