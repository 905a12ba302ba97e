-- Rate limits shared by every replica. UNLOGGED: a count costs no WAL write or fsync, and
-- a crash only forgets counts (SQLite keeps these in process memory instead).
CREATE UNLOGGED TABLE rate_counters (
    key          TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (key, window_start)
);

-- Open live streams per account; the holder renews its lease, a dead replica's expire.
CREATE UNLOGGED TABLE stream_leases (
    id         TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX stream_leases_account ON stream_leases (account_id, expires_at);

-- The open-lobbies limit counts a host's games in the lobby at every game creation.
CREATE INDEX games_host_status ON games (host_account, status);
