// @generated automatically by Diesel CLI.

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    accounts (id) {
        id -> Text,
        name -> Text,
        password_hash -> Nullable<Text>,
        guest -> Bool,
        roles -> Text,
        created_at -> Timestamp,
        token_version -> Int4,
        deleted_at -> Nullable<Timestamp>,
        registered_at -> Nullable<Timestamp>,
        vacation_year -> Int4,
        vacation_hours_used -> Int4,
        away_until -> Nullable<Timestamp>,
        webhook_low_time_minutes -> Nullable<Int4>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    events (position) {
        position -> Int8,
        event_id -> Text,
        game_id -> Text,
        seq -> Int4,
        event_type -> Text,
        schema_version -> Int4,
        audience -> Text,
        data -> Jsonb,
        recorded_at -> Timestamp,
        tx_id -> Int8,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    game_seats (game_id, seat) {
        game_id -> Text,
        seat -> Int4,
        account_id -> Nullable<Text>,
        awaiting -> Bool,
        action -> Nullable<Text>,
        deadline_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    games (id) {
        id -> Text,
        ruleset -> Text,
        name -> Nullable<Text>,
        status -> Text,
        host_account -> Text,
        version -> Int4,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        public -> Bool,
        invite_code -> Nullable<Text>,
        free_seats -> Int4,
        reserved_until -> Nullable<Timestamp>,
        last_tx -> Int8,
        time_control -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    idempotency_keys (game_id, account_id, key) {
        game_id -> Text,
        account_id -> Text,
        key -> Text,
        status -> Int4,
        response -> Jsonb,
        created_at -> Timestamp,
        request_hash -> Nullable<Text>,
        version -> Nullable<Int4>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    mail_settings (account_id) {
        account_id -> Text,
        address -> Nullable<Text>,
        your_turn -> Bool,
        deadline_hours -> Nullable<Int4>,
        game_finished -> Bool,
        digest -> Bool,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    mail_verifications (token_hash) {
        token_hash -> Text,
        account_id -> Text,
        address -> Text,
        expires_at -> Timestamp,
        created_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    player_results (game_id, account_id) {
        game_id -> Text,
        account_id -> Text,
        ruleset -> Text,
        seat -> Int4,
        place -> Int4,
        players -> Int4,
        total -> Int4,
        rounds -> Int4,
        won -> Bool,
        resigned -> Bool,
        public -> Bool,
        rated -> Bool,
        rating_after -> Nullable<Float8>,
        finished_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    player_stats (account_id, ruleset, public) {
        account_id -> Text,
        ruleset -> Text,
        public -> Bool,
        games -> Int8,
        wins -> Int8,
        total -> Int8,
        rounds -> Int8,
        resigned -> Int8,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    projections (name) {
        name -> Text,
        checkpoint -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    push_settings (account_id) {
        account_id -> Text,
        your_turn -> Bool,
        deadline_hours -> Nullable<Int4>,
        game_finished -> Bool,
        rematch_offered -> Bool,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    push_subscriptions (id) {
        id -> Text,
        account_id -> Text,
        endpoint -> Text,
        p256dh -> Text,
        auth -> Text,
        language -> Text,
        quiet_until -> Nullable<Timestamp>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    rate_counters (key, window_start) {
        key -> Text,
        window_start -> Int8,
        count -> Int4,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    ratings (account_id, ruleset) {
        account_id -> Text,
        ruleset -> Text,
        rating -> Float8,
        uncertainty -> Float8,
        score -> Float8,
        games -> Int4,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    scorepad_events (position) {
        position -> Int8,
        pad_id -> Text,
        seq -> Int4,
        event_type -> Text,
        schema_version -> Int4,
        data -> Jsonb,
        recorded_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    scorepads (id) {
        id -> Text,
        owner -> Text,
        ruleset -> Text,
        version -> Int4,
        created_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    settings (key) {
        key -> Text,
        value -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    stream_leases (id) {
        id -> Text,
        account_id -> Text,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    stream_tickets (ticket_hash) {
        ticket_hash -> Text,
        account_id -> Text,
        game_id -> Text,
        expires_at -> Timestamp,
        token_version -> Int4,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    tournament_events (position) {
        position -> Int8,
        tournament_id -> Text,
        seq -> Int4,
        event_type -> Text,
        schema_version -> Int4,
        data -> Jsonb,
        recorded_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    tournament_players (tournament_id, account_id) {
        tournament_id -> Text,
        account_id -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    tournaments (id) {
        id -> Text,
        name -> Text,
        format -> Text,
        ruleset -> Text,
        status -> Text,
        public -> Bool,
        host_account -> Text,
        invite_code -> Nullable<Text>,
        version -> Int4,
        players -> Int4,
        max_players -> Int4,
        starts_at -> Nullable<Timestamp>,
        current_round -> Int4,
        state -> Jsonb,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    webhook_deliveries (id) {
        id -> Text,
        webhook_id -> Nullable<Text>,
        account_id -> Text,
        game_id -> Text,
        kind -> Text,
        game_version -> Int4,
        payload -> Jsonb,
        status -> Text,
        attempts -> Int4,
        next_attempt_at -> Timestamp,
        last_error -> Nullable<Text>,
        created_at -> Timestamp,
        finished_at -> Nullable<Timestamp>,
        channel -> Text,
        subscription_id -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::store::json::Jsonb;

    webhooks (id) {
        id -> Text,
        account_id -> Text,
        url -> Text,
        secret -> Text,
        created_at -> Timestamp,
    }
}

diesel::joinable!(events -> games (game_id));
diesel::joinable!(game_seats -> games (game_id));
diesel::joinable!(idempotency_keys -> games (game_id));
diesel::joinable!(mail_settings -> accounts (account_id));
diesel::joinable!(mail_verifications -> accounts (account_id));
diesel::joinable!(push_settings -> accounts (account_id));
diesel::joinable!(push_subscriptions -> accounts (account_id));
diesel::joinable!(scorepad_events -> scorepads (pad_id));
diesel::joinable!(scorepads -> accounts (owner));
diesel::joinable!(tournament_events -> tournaments (tournament_id));
diesel::joinable!(tournament_players -> accounts (account_id));
diesel::joinable!(tournament_players -> tournaments (tournament_id));
diesel::joinable!(tournaments -> accounts (host_account));
diesel::joinable!(webhook_deliveries -> webhooks (webhook_id));
diesel::joinable!(webhooks -> accounts (account_id));

diesel::allow_tables_to_appear_in_same_query!(
    accounts,
    events,
    game_seats,
    games,
    idempotency_keys,
    mail_settings,
    mail_verifications,
    player_results,
    player_stats,
    projections,
    push_settings,
    push_subscriptions,
    rate_counters,
    ratings,
    scorepad_events,
    scorepads,
    settings,
    stream_leases,
    stream_tickets,
    tournament_events,
    tournament_players,
    tournaments,
    webhook_deliveries,
    webhooks,
);
