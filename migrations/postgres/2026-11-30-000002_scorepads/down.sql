DROP TABLE scorepad_events;
DROP TABLE scorepads;
