//! Table definitions of the score pads (migration `2026-11-30-000002_scorepads`), for both
//! backends: `data` is `jsonb` on PostgreSQL and `TEXT` on SQLite (see [`super::json`]).

diesel::table! {
    use diesel::sql_types::*;

    scorepads (id) {
        id -> Text,
        owner -> Text,
        ruleset -> Text,
        version -> Integer,
        created_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Json;

    scorepad_events (position) {
        position -> BigInt,
        pad_id -> Text,
        seq -> Integer,
        event_type -> Text,
        schema_version -> Integer,
        data -> Json,
        recorded_at -> Timestamp,
    }
}

diesel::joinable!(scorepad_events -> scorepads (pad_id));
diesel::allow_tables_to_appear_in_same_query!(scorepads, scorepad_events);
