-- Tournaments (issue 29): an index row per tournament (status, visibility, host, version for
-- the compare-and-set of every append) whose `state` is the folded aggregate (JSON), written
-- in the same transaction as each append: the live projection every read uses;
-- `stammtisch rebuild-tournaments` refolds it from `tournament_events`. SQLite serialises
-- writers, so positions commit in order without the advisory lock PostgreSQL takes.

CREATE TABLE tournaments (
    id            TEXT PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL,
    format        TEXT NOT NULL,
    ruleset       TEXT NOT NULL,
    status        TEXT NOT NULL,
    public        BOOLEAN NOT NULL,
    host_account  TEXT NOT NULL REFERENCES accounts (id),
    invite_code   TEXT,
    version       INTEGER NOT NULL,
    players       INTEGER NOT NULL,
    max_players   INTEGER NOT NULL,
    starts_at     TIMESTAMP,
    current_round INTEGER NOT NULL,
    state         TEXT NOT NULL,
    created_at    TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);
CREATE INDEX tournaments_status ON tournaments (status, created_at, id);
CREATE UNIQUE INDEX tournaments_invite_code ON tournaments (invite_code) WHERE invite_code IS NOT NULL;

CREATE TABLE tournament_events (
    position       INTEGER PRIMARY KEY AUTOINCREMENT,
    tournament_id  TEXT NOT NULL REFERENCES tournaments (id),
    seq            INTEGER NOT NULL CHECK (seq >= 1),
    event_type     TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    data           TEXT NOT NULL,
    recorded_at    TIMESTAMP NOT NULL,
    UNIQUE (tournament_id, seq)
);
CREATE TRIGGER tournament_events_no_update BEFORE UPDATE ON tournament_events
BEGIN
    SELECT RAISE(ABORT, 'tournament events are append-only: UPDATE refused');
END;
CREATE TRIGGER tournament_events_no_delete BEFORE DELETE ON tournament_events
BEGIN
    SELECT RAISE(ABORT, 'tournament events are append-only: DELETE refused');
END;

CREATE TABLE tournament_players (
    tournament_id TEXT NOT NULL REFERENCES tournaments (id),
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    PRIMARY KEY (tournament_id, account_id)
);
CREATE INDEX tournament_players_account ON tournament_players (account_id);
