-- Vacation (issue 28): every registered account has STAMMTISCH_VACATION_DAYS days a
-- calendar year (UTC), counted as hours used in `vacation_year` (a row of another year has
-- used none of this year's); `away_until` is the end of an explicit absence. Spending is
-- one UPDATE whose WHERE requires the hours to be left, so two replicas never overspend.
-- `webhook_low_time_minutes`: the account's "time running low" webhook threshold (NULL: off).
ALTER TABLE accounts ADD COLUMN vacation_year INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN vacation_hours_used INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN away_until TIMESTAMP;
ALTER TABLE accounts ADD COLUMN webhook_low_time_minutes INTEGER;
