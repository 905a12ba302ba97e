-- Accounts, settings, the game index, the append-only event store and idempotency keys.

CREATE TABLE accounts (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    password_hash TEXT,
    guest         BOOLEAN NOT NULL,
    roles         TEXT NOT NULL DEFAULT '',
    created_at    TIMESTAMP NOT NULL
);
-- Registered names are unique; guests only borrow a display name.
CREATE UNIQUE INDEX accounts_name_unique ON accounts (lower(name)) WHERE NOT guest;

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- A read model for listing games and the inbox, written in the same transaction as the
-- events it is derived from.
CREATE TABLE games (
    id           TEXT PRIMARY KEY,
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
    position       BIGSERIAL PRIMARY KEY,
    event_id       TEXT NOT NULL UNIQUE,
    game_id        TEXT NOT NULL REFERENCES games (id),
    seq            INTEGER NOT NULL CHECK (seq >= 1),
    event_type     TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    audience       TEXT NOT NULL,
    data           JSONB NOT NULL,
    recorded_at    TIMESTAMP NOT NULL,
    UNIQUE (game_id, seq)
);

CREATE FUNCTION events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER events_append_only
    BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_are_append_only();
CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_are_append_only();

-- The first response to a command sent with an Idempotency-Key, stored in the same
-- transaction as the command's events.
CREATE TABLE idempotency_keys (
    game_id    TEXT NOT NULL REFERENCES games (id),
    account_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    status     INTEGER NOT NULL,
    response   JSONB NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, account_id, key)
);
