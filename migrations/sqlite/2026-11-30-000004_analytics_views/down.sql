-- The analysts' views are PostgreSQL-only; nothing to drop on SQLite.
SELECT 1;
