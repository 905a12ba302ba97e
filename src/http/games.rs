//! Games: create, list, view, commands, events.

use actix_web::http::header::{self, HeaderMap};
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use rules::{Command, Deal, OptionsInput, Preset, Ruleset, Setup, Status};

use super::caller::{Caller, Claimed};
use super::errors::{ApiError, Problem};
use super::ops::Metrics;
use super::{AppState, Body, blocking, etag, if_match};
use crate::games::{
    CommandOutcome, CommandRequest, CreateRequest, GameBody, GameSummary, InvitePreview,
    ListRequest, QuickRequest, ServiceError,
};

/// The body of `POST /v1/games`: the game to create.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGame {
    /// `6-nimmt`, `11-nimmt`, `x-nimmt` or `nimm-oder-schieb`.
    #[schema(value_type = Ruleset)]
    pub ruleset: String,
    /// Number of seats: 2–10 (6-nimmt), 2–9 (11-nimmt), 2–4 (x-nimmt), 3–7
    /// (nimm-oder-schieb).
    #[schema(minimum = 2, maximum = 10)]
    pub players: u8,
    /// Options; override the preset's.
    pub options: Option<OptionsInput>,
    /// 6-nimmt: `standard`, `taktik`, `logik`, `profi`; `options` given beside it override it.
    pub preset: Option<Preset>,
    /// Display name (at most 64 characters; no control characters such as line breaks, no
    /// invisible format characters).
    #[schema(max_length = 64)]
    pub name: Option<String>,
    /// Seconds per move, 1 to 2,592,000 (30 days): a seat that lets its deadline pass is
    /// moved for by the server (`take_row`: the cheapest row; other moves: the heuristic
    /// bot's choice), and those events carry `"cause": "deadline"`.
    #[schema(minimum = 1, maximum = 2_592_000)]
    pub move_deadline_seconds: Option<u32>,
    /// Clocks for the game: a bank per seat plus an increment per move (see "Clocks" in
    /// docs/api.md). Not together with `move_deadline_seconds`.
    pub time_control: Option<rules::TimeControl>,
    /// The exact first deal (then `prepared_deal: true` for everyone).
    pub deal: Option<Deal>,
    /// Listed for and watchable by every account (default `false`: players only; others
    /// join with the game's `invite_code`).
    pub public: Option<bool>,
}

/// The longest move deadline: 30 days.
pub const MAX_MOVE_DEADLINE_SECONDS: u32 = 30 * 24 * 3600;

/// A page of games.
#[derive(Debug, Serialize, ToSchema)]
pub struct GamePage {
    /// Games, newest first.
    pub items: Vec<GameSummary>,
    /// Pass as `cursor` for the next page; `null` at the end.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// Filters of the game list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// `lobby`, `active` or `finished`.
    #[param(value_type = Option<Status>)]
    pub status: Option<String>,
    /// Only games of this ruleset.
    #[param(value_type = Option<Ruleset>)]
    pub ruleset: Option<String>,
    /// Only games the caller sits in.
    pub mine: Option<bool>,
    /// `me`: the inbox, games in which the caller must act now.
    #[param(pattern = "^me$")]
    pub awaiting: Option<String>,
    /// Only games with at least this many free seats, e.g. `1` for lobbies with room.
    #[param(minimum = 1, maximum = 10)]
    pub free_seats: Option<i32>,
    /// Page size, 1–500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// From `next_cursor`.
    pub cursor: Option<String>,
}

/// Paging of the event list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct EventParams {
    /// Only events with a higher `seq` (default 0).
    #[param(minimum = 0)]
    pub after: Option<i32>,
    /// Page size, 1–500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

/// An event as the caller may see it.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventItem {
    /// Position in the game's stream, from 1.
    pub seq: i32,
    /// Event type, e.g. `card_placed`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Time of the append (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub at: String,
    /// Payload.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
}

/// A page of events.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventPage {
    /// Events in order.
    pub items: Vec<EventItem>,
    /// Pass as `after` for the next page; `null` at the end.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// Parses a game id from a path (not a UUID: 404).
pub(crate) fn game_id(raw: &str) -> Result<crate::ids::GameId, ApiError> {
    super::parse_id(raw, "game")
}

fn game_response(status: actix_web::http::StatusCode, body: &GameBody) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header(etag(body.version))
        .json(body)
}

/// Creates a game in the lobby; the caller is its host at seat 0.
#[utoipa::path(
    operation_id = "create_game",
    tag = "games",
    request_body = CreateGame,
    responses(
        (status = 201, body = GameBody, headers(("Location" = String), ("ETag" = String))),
        (status = 400, description = "malformed body", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`, `invalid_options`, `unsupported_option`, `invalid_deal`", body = Problem),
        (status = 429, description = "`too_many_games`, `too_many_open_lobbies`; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/games")]
pub async fn create_game(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<CreateGame>,
) -> Result<HttpResponse, ApiError> {
    let req = body.0;
    let ruleset = Ruleset::from_name(&req.ruleset)
        .ok_or_else(|| ApiError::Validation(format!("unknown ruleset {:?}", req.ruleset)))?;
    if req
        .move_deadline_seconds
        .is_some_and(|d| !(1..=MAX_MOVE_DEADLINE_SECONDS).contains(&d))
    {
        return Err(ApiError::Validation(format!(
            "move_deadline_seconds must be 1 to {MAX_MOVE_DEADLINE_SECONDS} (30 days)"
        )));
    }
    if req.time_control.is_some() && req.move_deadline_seconds.is_some() {
        return Err(ApiError::Validation(
            "time_control and move_deadline_seconds cannot be combined".into(),
        ));
    }
    if req.name.as_ref().is_some_and(|n| n.chars().count() > 64) {
        return Err(ApiError::Validation(
            "name must be at most 64 characters".into(),
        ));
    }
    if req
        .name
        .as_ref()
        .is_some_and(|n| n.chars().any(rules::text::unprintable))
    {
        return Err(ApiError::Validation(
            "name cannot contain control characters (such as line breaks) or invisible \
             format characters"
                .into(),
        ));
    }
    let setup =
        Setup::from_input(ruleset, req.players, req.preset, req.options).map_err(ApiError::Rule)?;
    let st = state.clone();
    let body = blocking(move || {
        st.service.create(CreateRequest {
            account: &caller.id,
            name: &caller.name,
            setup,
            game_name: req.name,
            deal: req.deal,
            move_deadline_seconds: req.move_deadline_seconds,
            time_control: req.time_control,
            public: req.public.unwrap_or(false),
        })
    })
    .await?;
    Metrics::inc(&state.metrics.games_created);
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/games/{}", body.id)))
        .insert_header(etag(body.version))
        .json(&body))
}

/// Lists games: the caller's games and open lobbies; `mine=true` only the caller's;
/// `awaiting=me` the inbox (games in which the caller must act now).
#[utoipa::path(
    operation_id = "list_games",
    tag = "games",
    params(ListParams),
    responses(
        (status = 200, body = GamePage),
        (status = 400, description = "`invalid_query`", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem)
    )
)]
#[get("/v1/games")]
pub async fn list_games(
    state: web::Data<AppState>,
    caller: Caller,
    params: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let p = params.into_inner();
    let limit = super::page_limit(p.limit)?;
    if p.awaiting.as_deref().is_some_and(|a| a != "me") {
        return Err(ApiError::Validation("awaiting accepts only \"me\"".into()));
    }
    let status = match p.status.as_deref() {
        None => None,
        Some("lobby") => Some(Status::Lobby),
        Some("active") => Some(Status::Active),
        Some("finished") => Some(Status::Finished),
        Some(_) => {
            return Err(ApiError::Validation(
                "status must be lobby, active or finished".into(),
            ));
        }
    };
    if p.free_seats.is_some_and(|f| !(1..=10).contains(&f)) {
        return Err(ApiError::Validation("free_seats must be 1 to 10".into()));
    }
    let ruleset = match p.ruleset.as_deref() {
        None => None,
        Some(name) => Some(Ruleset::from_name(name).ok_or_else(|| {
            ApiError::Validation(
                "ruleset must be 6-nimmt, 11-nimmt, x-nimmt or nimm-oder-schieb".into(),
            )
        })?),
    };
    let page = blocking(move || {
        state.service.list_games(&ListRequest {
            account: &caller.id,
            mine: p.mine.unwrap_or(false),
            inbox: p.awaiting.is_some(),
            status,
            ruleset,
            min_free_seats: p.free_seats,
            cursor: p.cursor.as_deref(),
            limit,
        })
    })
    .await?;
    Ok(HttpResponse::Ok().json(GamePage {
        items: page.games,
        next_cursor: page.next_cursor,
    }))
}

/// The game as the caller may see it (`you: null` for a spectator).
#[utoipa::path(
    operation_id = "get_game",
    tag = "games",
    params(("id" = String, Path, description = "Game id")),
    responses(
        (status = 200, body = GameBody, headers(("ETag" = String))),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem)
    )
)]
#[get("/v1/games/{id}")]
pub async fn get_game(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let body = blocking(move || state.service.view(&id, &caller.id)).await?;
    Ok(game_response(actix_web::http::StatusCode::OK, &body))
}

/// Splits a command body into the command and, for `join`, the invite code of a private game.
fn command_of(
    mut body: serde_json::Map<String, serde_json::Value>,
) -> Result<(Command, Option<String>), ApiError> {
    let joining = body.get("type").and_then(serde_json::Value::as_str) == Some("join");
    let invite_code = match body.remove("invite_code") {
        None => None,
        Some(serde_json::Value::String(code)) if joining => Some(code),
        Some(_) if joining => {
            return Err(ApiError::Validation("invite_code must be a string".into()));
        }
        Some(_) => {
            return Err(ApiError::Validation(
                "unknown field `invite_code`: only `join` takes it".into(),
            ));
        }
    };
    let command = serde_json::from_value(serde_json::Value::Object(body))
        .map_err(|e| ApiError::Validation(e.to_string()))?;
    Ok((command, invite_code))
}

fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("Idempotency-Key") else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|k| (1..=200).contains(&k.len()));
    key.map(|k| Some(k.to_owned())).ok_or(ApiError::BadRequest {
        code: "invalid_idempotency_key",
        detail: "Idempotency-Key must be 1–200 visible ASCII characters".into(),
    })
}

/// Sends a command (`{"type": "play_card", "card": 17}`, …). Bots answer in the same request.
#[utoipa::path(
    operation_id = "post_command",
    tag = "games",
    params(
        ("id" = String, Path, description = "Game id"),
        ("If-Match" = Option<String>, Header, description = "Expected version, e.g. \"12\""),
        ("Idempotency-Key" = Option<String>, Header, description = "Repeat-safe key (per account and game)")
    ),
    request_body = Command,
    responses(
        (status = 200, body = GameBody, headers(("ETag" = String))),
        (status = 400, description = "malformed body or headers", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 403, description = "`not_a_player`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 409, description = "`version_conflict`", body = Problem),
        (status = 422, description = "a rule violation: `not_your_turn`, `card_not_in_hand`, …", body = Problem),
        (status = 429, description = "`too_many_commands`; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/games/{id}/commands")]
pub async fn post_command(
    state: web::Data<AppState>,
    claimed: Claimed,
    path: web::Path<String>,
    req: HttpRequest,
    body: Result<Body<super::StrictObject>, actix_web::Error>,
) -> Result<HttpResponse, actix_web::Error> {
    // The account is checked once, as `Caller` does for every other handler, so that a
    // revoked token hears 401 whatever else is wrong with the request: a well-formed
    // command's account with the command itself (in its group-commit batch: one read for
    // the batch, no hand-off or connection of its own), a malformed one's here, before its
    // 400 or 422. Parsing is cheap and needs no thread of its own.
    let parsed = body.and_then(|body| {
        let (id, expected, key) = (
            game_id(&path)?,
            if_match(req.headers())?,
            idempotency_key(req.headers())?,
        );
        let (command, invite_code) = command_of(body.0.0)?;
        Ok::<_, actix_web::Error>((id, expected, key, command, invite_code))
    });
    let (id, expected, key, command, invite_code) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let st = state.clone();
            blocking(move || claimed.resolve(&st)).await?;
            return Err(e);
        }
    };
    // Announced before the hand-off to a blocking thread, so that a group-commit batch
    // being formed may wait for it (`crate::group`).
    let announced = state.service.announce(&id);
    let st = state.clone();
    let outcome = blocking(move || {
        st.service
            .execute(&CommandRequest {
                game: &id,
                account: claimed.account(),
                name: "",
                command,
                if_match: expected,
                idempotency_key: key.as_deref(),
                invite_code: invite_code.as_deref(),
                token_version: Some(claimed.token_version()),
                announced: announced.as_ref(),
            })
            .map_err(|e| {
                if matches!(e, ServiceError::Rule(_)) {
                    Metrics::inc(&st.metrics.commands_refused);
                }
                ApiError::from(e)
            })
    })
    .await?;
    match outcome {
        CommandOutcome::Applied(body) => {
            Metrics::inc(&state.metrics.commands_applied);
            Ok(game_response(actix_web::http::StatusCode::OK, &body))
        }
        CommandOutcome::Replayed { version, body } => Ok(HttpResponse::Ok()
            .insert_header(etag(version))
            .insert_header(("Idempotent-Replayed", "true"))
            .json(body)),
    }
}

/// Whether `code` could be an invite code at all: short and alphanumeric (anything else
/// names no game, and is answered as an unknown code is).
fn plausible_invite_code(code: &str) -> bool {
    (1..=32).contains(&code.len()) && code.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// What an invite link shows before anyone signs in: the game (ruleset, variant, options,
/// name), who invites (the host's name), how many of its seats are taken, and whether it has
/// begun or ended. Needs no token: the code is what admits, as it is for joining. Nothing
/// of the play is in it (no hand, seed or prepared deal). A code that names no game is
/// answered exactly as `POST /v1/invites/{code}/join` answers it.
#[utoipa::path(
    operation_id = "get_invite",
    tag = "games",
    security(()),
    params(("code" = String, Path, description = "Invite code, e.g. `K7QX2MPW9R`")),
    responses(
        (status = 200, body = InvitePreview, description = "the game the code invites to, whatever its state"),
        (status = 404, description = "`not_found`: no game has this invite code", body = Problem)
    )
)]
#[get("/v1/invites/{code}")]
pub async fn get_invite(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let code = path.into_inner();
    if !plausible_invite_code(&code) {
        return Err(ApiError::NotFound("invite"));
    }
    let preview = blocking(move || state.service.invite_preview(&code))
        .await
        .map_err(|e| match e {
            ApiError::NotFound(_) => ApiError::NotFound("invite"),
            other => other,
        })?;
    Ok(HttpResponse::Ok().json(preview))
}

/// Joins a private game by its invite code alone (the 10 characters one player passes on
/// to another), as `join` with `invite_code` does beside the game's id: the caller takes the
/// lowest free seat and gets the game (its id in `Location`).
#[utoipa::path(
    operation_id = "join_by_invite",
    tag = "games",
    params(("code" = String, Path, description = "Invite code, e.g. `K7QX2MPW9R`")),
    responses(
        (status = 200, body = GameBody, headers(("Location" = String), ("ETag" = String))),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`: no game has this invite code", body = Problem),
        (status = 422, description = "`already_seated`, `game_full`, `not_in_lobby`", body = Problem),
        (status = 429, description = "`too_many_commands` (a join is a command); see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/invites/{code}/join")]
pub async fn join_by_invite(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let code = path.into_inner();
    if !plausible_invite_code(&code) {
        return Err(ApiError::NotFound("invite"));
    }
    let st = state.clone();
    let outcome = blocking(move || {
        let id = st.service.game_of_invite(&code)?;
        st.service
            .execute(&CommandRequest {
                game: &id,
                account: &caller.id,
                name: &caller.name,
                command: Command::Join {},
                if_match: None,
                idempotency_key: None,
                invite_code: Some(&code),
                token_version: None,
                announced: None,
            })
            .map_err(|e| {
                if matches!(e, ServiceError::Rule(_)) {
                    Metrics::inc(&st.metrics.commands_refused);
                }
                ApiError::from(e)
            })
    })
    .await
    .map_err(|e| match e {
        ApiError::NotFound(_) => ApiError::NotFound("invite"),
        other => other,
    });
    match outcome? {
        CommandOutcome::Applied(body) => {
            Metrics::inc(&state.metrics.commands_applied);
            Ok(HttpResponse::Ok()
                .insert_header((header::LOCATION, format!("/v1/games/{}", body.id)))
                .insert_header(etag(body.version))
                .json(&*body))
        }
        // No Idempotency-Key is sent here, so nothing is replayed.
        CommandOutcome::Replayed { body, .. } => Ok(HttpResponse::Ok().json(body)),
    }
}

/// The game's events as the caller may see them: public events and those of the caller's
/// own seat.
#[utoipa::path(
    operation_id = "list_events",
    tag = "games",
    params(("id" = String, Path, description = "Game id"), EventParams),
    responses(
        (status = 200, body = EventPage),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem)
    )
)]
#[get("/v1/games/{id}/events")]
pub async fn list_events(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    params: web::Query<EventParams>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let limit = super::page_limit(params.limit)?;
    let after = params.after.unwrap_or(0);
    if after < 0 {
        return Err(ApiError::Validation("after must be 0 or more".into()));
    }
    let rows = blocking(move || state.service.events(&id, &caller.id, after, limit)).await?;
    let items: Vec<EventItem> = rows
        .into_iter()
        .map(|e| EventItem {
            seq: e.seq,
            at: e.recorded_at.and_utc().to_rfc3339(),
            data: e.data,
            type_: e.event_type,
        })
        .collect();
    let next_cursor = (i64::try_from(items.len()).unwrap_or(i64::MAX) == limit)
        .then(|| items.last().map(|e| e.seq.to_string()))
        .flatten();
    Ok(HttpResponse::Ok().json(EventPage { items, next_cursor }))
}

/// What a host may change of a game.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GamePatch {
    /// Make the game public (listed and watchable by everyone) or private.
    pub public: bool,
}

/// Changes a game's visibility (host only).
#[utoipa::path(
    operation_id = "patch_game",
    tag = "games",
    params(("id" = String, Path, description = "Game id")),
    request_body = GamePatch,
    responses(
        (status = 200, body = GameBody),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 422, description = "`not_host`", body = Problem)
    )
)]
#[patch("/v1/games/{id}")]
pub async fn patch_game(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    body: Body<GamePatch>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let public = body.0.public;
    let body = blocking(move || state.service.set_public(&id, &caller.id, public)).await?;
    Ok(game_response(actix_web::http::StatusCode::OK, &body))
}

/// Starts the rematch of a finished game (one of its people), or returns the one already
/// started: same ruleset, options, visibility and people (bots with their strategies), a
/// fresh seed. The caller hosts it; the other people's seats are kept for them for
/// `REMATCH_WINDOW_SECONDS` (they take them with `join`, no invite code needed) and their
/// webhooks get a `rematch_offered` notification. Both games link to each other
/// (`rematch_of`, `rematch`).
#[utoipa::path(
    operation_id = "rematch",
    tag = "games",
    params(("id" = String, Path, description = "The finished game's id")),
    responses(
        (status = 201, body = GameBody, description = "the rematch, started now", headers(("Location" = String), ("ETag" = String))),
        (status = 200, body = GameBody, description = "the rematch someone started before", headers(("ETag" = String))),
        (status = 403, description = "`not_a_player`: only the game's people start its rematch", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 409, description = "`game_not_finished`", body = Problem),
        (status = 429, description = "`too_many_games`, `too_many_open_lobbies`", body = Problem)
    )
)]
#[post("/v1/games/{id}/rematch")]
pub async fn rematch(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (body, created) =
        blocking(move || state.service.rematch(&id, &caller.id, &caller.name)).await?;
    Ok(created_or_found(&body, created))
}

fn created_or_found(body: &GameBody, created: bool) -> HttpResponse {
    if created {
        HttpResponse::Created()
            .insert_header((header::LOCATION, format!("/v1/games/{}", body.id)))
            .insert_header(etag(body.version))
            .json(body)
    } else {
        game_response(actix_web::http::StatusCode::OK, body)
    }
}

/// What quick play looks for.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuickPlay {
    /// `6-nimmt`, `11-nimmt`, `x-nimmt` or `nimm-oder-schieb`.
    pub ruleset: Ruleset,
    /// Table size; any table when left out (a new one gets 4 seats, x-nimmt 3).
    #[schema(minimum = 2, maximum = 10)]
    pub players: Option<u8>,
    /// Options; any when left out (a new table gets the defaults).
    pub options: Option<OptionsInput>,
}

/// Quick play: takes a free seat at the oldest public quick-play table that fits, or opens
/// one (public, starting by itself when its last seat is taken). Simultaneous callers fill
/// one table before the next is opened.
#[utoipa::path(
    operation_id = "quick_play",
    tag = "games",
    request_body = QuickPlay,
    responses(
        (status = 201, body = GameBody, description = "a new table, waiting for players", headers(("Location" = String), ("ETag" = String))),
        (status = 200, body = GameBody, description = "a seat at a waiting table (or the caller's own)", headers(("ETag" = String))),
        (status = 422, description = "`invalid_options`: players or options the ruleset does not take", body = Problem),
        (status = 429, description = "`too_many_games`, `too_many_open_lobbies`", body = Problem)
    )
)]
#[post("/v1/games/quick")]
pub async fn quick_play(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<QuickPlay>,
) -> Result<HttpResponse, ApiError> {
    let QuickPlay {
        ruleset,
        players,
        options,
    } = body.0;
    // Wait for the turn here, holding neither a connection nor a blocking thread.
    let turn = state.service.quick_turn(ruleset).await;
    let (body, created) = blocking(move || {
        state.service.quick_play(
            turn,
            &QuickRequest {
                account: &caller.id,
                name: &caller.name,
                players,
                options,
            },
        )
    })
    .await?;
    Ok(created_or_found(&body, created))
}
