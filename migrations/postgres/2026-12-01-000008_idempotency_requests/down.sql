DROP INDEX idempotency_keys_created;
ALTER TABLE idempotency_keys DROP COLUMN request_hash;
