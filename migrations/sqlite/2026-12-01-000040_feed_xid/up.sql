-- The same columns as on PostgreSQL (see its migration). SQLite's writers are serialised
-- (BEGIN IMMEDIATE), so AUTOINCREMENT positions are in commit order and the feed reads
-- them in position order; these columns stay 0.
ALTER TABLE events ADD COLUMN tx_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN last_tx BIGINT NOT NULL DEFAULT 0;
