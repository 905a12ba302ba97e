-- When an account became registered: at creation for registered accounts, at the moment a
-- guest registers otherwise. The ratings projection counts a person as registered in a game
-- that finished after this instant, so rebuilding from the log gives the same numbers even
-- when a guest registers later.
ALTER TABLE accounts ADD COLUMN registered_at TIMESTAMP;
UPDATE accounts SET registered_at = created_at WHERE NOT guest;
