DROP TRIGGER scorepad_events_append_only ON scorepad_events;
CREATE TRIGGER scorepad_events_append_only
    BEFORE UPDATE OR DELETE ON scorepad_events
    FOR EACH ROW EXECUTE FUNCTION events_are_append_only();
DROP FUNCTION scorepad_events_erasable();
