ALTER TABLE games DROP COLUMN time_control;
