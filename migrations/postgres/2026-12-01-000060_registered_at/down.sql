ALTER TABLE accounts DROP COLUMN registered_at;
