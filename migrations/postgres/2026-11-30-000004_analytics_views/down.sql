DROP FUNCTION analytics.bullheads(text, integer);
DROP VIEW analytics.scores;
DROP VIEW analytics.rounds;
DROP VIEW analytics.seats;
DROP VIEW analytics.games;
DROP VIEW analytics.events;
DROP SCHEMA analytics;
