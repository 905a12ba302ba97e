-- Idempotency keys remember which request they answered (a SHA-256 of the command), so
-- the same key with another request is refused instead of replayed; keys expire after
-- 24 hours (the expiry index serves the periodic purge).
ALTER TABLE idempotency_keys ADD COLUMN request_hash TEXT;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
