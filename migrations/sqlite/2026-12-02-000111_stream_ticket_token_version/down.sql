ALTER TABLE stream_tickets DROP COLUMN token_version;
