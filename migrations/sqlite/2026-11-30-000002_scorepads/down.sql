DROP TRIGGER scorepad_events_no_delete;
DROP TRIGGER scorepad_events_no_update;
DROP TABLE scorepad_events;
DROP TABLE scorepads;
