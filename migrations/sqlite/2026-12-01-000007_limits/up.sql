-- Rate-limit counters and stream leases live in process memory on SQLite (one process owns
-- the file; see src/store/counters.rs). This migration keeps the two trees in step.

-- The open-lobbies limit counts a host's games in the lobby at every game creation.
CREATE INDEX games_host_status ON games (host_account, status);
