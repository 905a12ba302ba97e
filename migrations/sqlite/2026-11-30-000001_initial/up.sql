-- Accounts, settings, the game index, the append-only event store and idempotency keys.

CREATE TABLE accounts (
    id            TEXT PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL,
    password_hash TEXT,
    guest         BOOLEAN NOT NULL,
    roles         TEXT NOT NULL DEFAULT '',
    created_at    TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX accounts_name_unique ON accounts (lower(name)) WHERE NOT guest;

CREATE TABLE settings (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

CREATE TABLE games (
    id           TEXT PRIMARY KEY NOT NULL,
    ruleset      TEXT NOT NULL,
    name         TEXT,
    status       TEXT NOT NULL,
    host_account TEXT NOT NULL,
    version      INTEGER NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);
CREATE INDEX games_status ON games (status, id);

CREATE TABLE game_seats (
    game_id    TEXT NOT NULL REFERENCES games (id),
    seat       INTEGER NOT NULL,
    account_id TEXT,
    awaiting   BOOLEAN NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX game_seats_account ON game_seats (account_id, awaiting);

CREATE TABLE events (
    position       INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id       TEXT NOT NULL UNIQUE,
    game_id        TEXT NOT NULL REFERENCES games (id),
    seq            INTEGER NOT NULL CHECK (seq >= 1),
    event_type     TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    audience       TEXT NOT NULL,
    data           TEXT NOT NULL,
    recorded_at    TIMESTAMP NOT NULL,
    UNIQUE (game_id, seq)
);

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: UPDATE refused');
END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: DELETE refused');
END;

CREATE TABLE idempotency_keys (
    game_id    TEXT NOT NULL REFERENCES games (id),
    account_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    status     INTEGER NOT NULL,
    response   TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, account_id, key)
);
