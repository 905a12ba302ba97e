-- The analytics views exist on PostgreSQL only (docs/analytics.md); this keeps the trees in step.
SELECT 1;
