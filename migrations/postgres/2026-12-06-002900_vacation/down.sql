ALTER TABLE accounts DROP COLUMN webhook_low_time_minutes;
ALTER TABLE accounts DROP COLUMN away_until;
ALTER TABLE accounts DROP COLUMN vacation_hours_used;
ALTER TABLE accounts DROP COLUMN vacation_year;
