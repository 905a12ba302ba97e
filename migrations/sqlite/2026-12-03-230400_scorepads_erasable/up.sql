-- A deleted account's score pads go with it (their player names are free text): the events
-- of a pad whose owner account is deleted may be deleted, in the transaction that deletes
-- the account. Every other UPDATE or DELETE is still refused (a correction is an event,
-- never an edit).
DROP TRIGGER scorepad_events_no_delete;
CREATE TRIGGER scorepad_events_no_delete BEFORE DELETE ON scorepad_events
WHEN NOT EXISTS (
    SELECT 1
    FROM scorepads p
    JOIN accounts a ON a.id = p.owner
    WHERE p.id = OLD.pad_id AND a.deleted_at IS NOT NULL
)
BEGIN
    SELECT RAISE(ABORT, 'scorepad events are append-only: DELETE refused');
END;
