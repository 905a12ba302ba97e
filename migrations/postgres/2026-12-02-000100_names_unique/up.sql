-- A name belongs to one live account, guest or registered: two guests took the name of a
-- registered person, and views could not tell them apart. Guests that share a live name
-- with a registered account or an older guest are renamed first (a suffix from their id).
UPDATE accounts SET name = name || '-' || right(id, 8)
WHERE guest AND deleted_at IS NULL AND EXISTS (
    SELECT 1 FROM accounts b
    WHERE b.id <> accounts.id AND b.deleted_at IS NULL AND lower(b.name) = lower(accounts.name)
      AND (NOT b.guest OR b.id < accounts.id));
DROP INDEX accounts_name_unique;
CREATE UNIQUE INDEX accounts_name_unique ON accounts (lower(name)) WHERE deleted_at IS NULL;
