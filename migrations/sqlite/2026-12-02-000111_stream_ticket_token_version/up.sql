-- The token version a stream ticket was issued under: redeeming it requires the account's
-- version to be the same still, so a logout everywhere, a password change or a deletion
-- (which bump the version) makes the account's older tickets worthless. Tickets live for
-- seconds; the ones issued before this column existed are simply forgotten.
DELETE FROM stream_tickets;
ALTER TABLE stream_tickets ADD COLUMN token_version INTEGER NOT NULL DEFAULT 0;
