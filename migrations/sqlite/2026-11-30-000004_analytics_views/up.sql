-- The analysts' views (schema `analytics`) are PostgreSQL-only: SQLite has no schemas.
-- This migration exists so both backends share one migration history; see docs/analytics.md.
SELECT 1;
