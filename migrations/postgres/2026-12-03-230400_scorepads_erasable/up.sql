-- A deleted account's score pads go with it (their player names are free text): the events
-- of a pad whose owner account is deleted may be deleted, in the transaction that deletes
-- the account. Every other UPDATE or DELETE is still refused (a correction is an event,
-- never an edit).
CREATE FUNCTION scorepad_events_erasable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND EXISTS (
        SELECT 1
        FROM scorepads p
        JOIN accounts a ON a.id = p.owner
        WHERE p.id = OLD.pad_id AND a.deleted_at IS NOT NULL
    ) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'scorepad events are append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END
$$;
DROP TRIGGER scorepad_events_append_only ON scorepad_events;
CREATE TRIGGER scorepad_events_append_only
    BEFORE UPDATE OR DELETE ON scorepad_events
    FOR EACH ROW EXECUTE FUNCTION scorepad_events_erasable();
