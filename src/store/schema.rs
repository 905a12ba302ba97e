//! Table definitions for both backends (see `diesel.toml`).

diesel::table! {
    use diesel::sql_types::*;

    accounts (id) {
        id -> Text,
        name -> Text,
        password_hash -> Nullable<Text>,
        guest -> Bool,
        roles -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;

    settings (key) {
        key -> Text,
        value -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::*;

    games (id) {
        id -> Text,
        ruleset -> Text,
        name -> Nullable<Text>,
        status -> Text,
        host_account -> Text,
        version -> Integer,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        public -> Bool,
        invite_code -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;

    game_seats (game_id, seat) {
        game_id -> Text,
        seat -> Integer,
        account_id -> Nullable<Text>,
        awaiting -> Bool,
        action -> Nullable<Text>,
        deadline_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Json;

    events (position) {
        position -> BigInt,
        event_id -> Text,
        game_id -> Text,
        seq -> Integer,
        event_type -> Text,
        schema_version -> Integer,
        audience -> Text,
        data -> Json,
        recorded_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Json;

    idempotency_keys (game_id, account_id, key) {
        game_id -> Text,
        account_id -> Text,
        key -> Text,
        status -> Integer,
        response -> Json,
        created_at -> Timestamp,
        request_hash -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;

    webhooks (id) {
        id -> Text,
        account_id -> Text,
        url -> Text,
        secret -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Json;

    webhook_deliveries (id) {
        id -> Text,
        webhook_id -> Text,
        account_id -> Text,
        game_id -> Text,
        kind -> Text,
        game_version -> Integer,
        payload -> Json,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Timestamp,
        last_error -> Nullable<Text>,
        created_at -> Timestamp,
        finished_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;

    stream_tickets (ticket_hash) {
        ticket_hash -> Text,
        account_id -> Text,
        game_id -> Text,
        expires_at -> Timestamp,
    }
}

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
diesel::joinable!(game_seats -> games (game_id));
diesel::joinable!(events -> games (game_id));
diesel::allow_tables_to_appear_in_same_query!(
    accounts,
    settings,
    games,
    game_seats,
    events,
    idempotency_keys,
    webhooks,
    webhook_deliveries,
    stream_tickets,
    scorepads,
    scorepad_events
);
