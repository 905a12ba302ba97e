-- Score pads for games played with physical cards: an index row per pad (owner, version)
-- and the pad's append-only event stream, like games and events.

CREATE TABLE scorepads (
    id         TEXT PRIMARY KEY NOT NULL,
    owner      TEXT NOT NULL REFERENCES accounts (id),
    ruleset    TEXT NOT NULL,
    version    INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX scorepads_owner ON scorepads (owner, id);

CREATE TABLE scorepad_events (
    position       INTEGER PRIMARY KEY AUTOINCREMENT,
    pad_id         TEXT NOT NULL REFERENCES scorepads (id),
    seq            INTEGER NOT NULL CHECK (seq >= 1),
    event_type     TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    data           TEXT NOT NULL,
    recorded_at    TIMESTAMP NOT NULL,
    UNIQUE (pad_id, seq)
);

-- A correction is an event (round_taken_back), never an edit.
CREATE TRIGGER scorepad_events_no_update BEFORE UPDATE ON scorepad_events
BEGIN
    SELECT RAISE(ABORT, 'scorepad events are append-only: UPDATE refused');
END;
CREATE TRIGGER scorepad_events_no_delete BEFORE DELETE ON scorepad_events
BEGIN
    SELECT RAISE(ABORT, 'scorepad events are append-only: DELETE refused');
END;
