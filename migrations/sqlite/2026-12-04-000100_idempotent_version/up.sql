-- The version an idempotent command's first answer left the game at, kept with the answer
-- so that a replay sends the same ETag without reading it back out of the JSON. Answers
-- stored before get it from their body once, here.
ALTER TABLE idempotency_keys ADD COLUMN version INTEGER;
UPDATE idempotency_keys SET version = json_extract(response, '$.version');
