DROP TRIGGER scorepad_events_no_delete;
CREATE TRIGGER scorepad_events_no_delete BEFORE DELETE ON scorepad_events
BEGIN
    SELECT RAISE(ABORT, 'scorepad events are append-only: DELETE refused');
END;
