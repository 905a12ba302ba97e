DROP INDEX games_reserved_until;
ALTER TABLE games DROP COLUMN reserved_until;
