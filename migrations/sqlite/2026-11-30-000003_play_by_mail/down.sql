DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
ALTER TABLE games DROP COLUMN invite_code;
ALTER TABLE games DROP COLUMN public;
DROP INDEX game_seats_deadline;
ALTER TABLE game_seats DROP COLUMN deadline_at;
ALTER TABLE game_seats DROP COLUMN action;
