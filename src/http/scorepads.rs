//! Score pads for games played with physical cards: create, show, record a round, take the
//! last round back. A pad is its creator's: to every other account it does not exist (404).

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, delete, get, post, web};
use serde::Deserialize;
use utoipa::ToSchema;

use rules::EndCondition;
use rules::Ruleset;
use rules::pad::{NewPad, PadCommand};

use super::caller::Caller;
use super::errors::{ApiError, Problem};
use super::{AppState, Body, blocking};
use crate::pads::PadBody;

/// A new score pad.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePad {
    /// `6-nimmt`, `11-nimmt`, `x-nimmt` or `nimm-oder-schieb`.
    pub ruleset: Ruleset,
    /// Player names in seating order, 1–32 characters each, all different (ignoring case).
    /// 2–10 players (6-nimmt), 2–9 (11-nimmt), 2–4 (x-nimmt), 3–7 (nimm-oder-schieb).
    #[schema(min_items = 2, max_items = 10)]
    pub players: Vec<String>,
    /// 6-nimmt: `{"points": 33 | 66 | 100}` (default 66) or `{"rounds": k}`; 11-nimmt:
    /// `{"points": 1–999}` (default 66) or `{"rounds": k}`; x-nimmt and nimm-oder-schieb:
    /// `{"rounds": k}` (default 2 and 1). k is 1–50.
    pub end: Option<EndCondition>,
}

/// A round: one entry per player, in player order. Zero is an entry.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordRound {
    /// 6-nimmt, 11-nimmt, x-nimmt: the bullheads each player took (0 or more), bounded by
    /// the cards in play for the number of players (e.g. 6-nimmt with 2 players: the round
    /// adds up to 4 ..= 79). nimm-oder-schieb: each player's score, card points minus chips
    /// (at most 323, at least 3 minus all chips), with one split of the 24 cards and the
    /// chips behind all entries. A round outside the bounds is `impossible_round`.
    #[schema(min_items = 2, max_items = 10)]
    pub scores: Vec<i32>,
}

fn pad_id(raw: &str) -> Result<crate::ids::PadId, ApiError> {
    super::parse_id(raw, "score pad")
}

fn pad_response(status: StatusCode, body: &PadBody) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header(super::etag(body.version))
        .json(body)
}

/// Creates a score pad owned by the caller.
#[utoipa::path(
    operation_id = "create_scorepad",
    tag = "scorepads",
    request_body = CreatePad,
    responses(
        (status = 201, body = PadBody, headers(("Location" = String), ("ETag" = String))),
        (status = 400, description = "malformed body", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`, `invalid_players`, `invalid_end`", body = Problem),
        (status = 429, description = "`too_many_scorepads`: more pads this hour than `LIMIT_GAMES_PER_HOUR`", body = Problem, headers(("Retry-After" = u64)))
    )
)]
#[post("/v1/scorepads")]
pub async fn create_scorepad(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<CreatePad>,
) -> Result<HttpResponse, ApiError> {
    let req = body.0;
    let new = NewPad {
        ruleset: req.ruleset,
        players: req.players,
        end: req.end,
    };
    let body = blocking(move || state.pads.create(&caller.id, new)).await?;
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/scorepads/{}", body.id)))
        .insert_header(super::etag(body.version))
        .json(&body))
}

/// The caller's score pad: players, rounds, totals, standings, `finished`, `winners`.
#[utoipa::path(
    operation_id = "get_scorepad",
    tag = "scorepads",
    params(("id" = String, Path, description = "Score pad id")),
    responses(
        (status = 200, body = PadBody, headers(("ETag" = String))),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found` (also for another account's pad)", body = Problem)
    )
)]
#[get("/v1/scorepads/{id}")]
pub async fn get_scorepad(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = pad_id(&path)?;
    let body = blocking(move || state.pads.view(&id, &caller.id)).await?;
    Ok(pad_response(StatusCode::OK, &body))
}

/// Records a round and answers with the standings. A round that cannot happen in the
/// ruleset is refused (`impossible_round`), as is one after the end (`pad_finished`).
#[utoipa::path(
    operation_id = "record_round",
    tag = "scorepads",
    params(
        ("id" = String, Path, description = "Score pad id"),
        ("If-Match" = Option<String>, Header, description = "Expected version, e.g. \"3\"")
    ),
    request_body = RecordRound,
    responses(
        (status = 200, body = PadBody, headers(("ETag" = String))),
        (status = 400, description = "malformed body or headers", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 409, description = "`version_conflict`", body = Problem),
        (status = 422, description = "`validation_failed`, `wrong_number_of_scores`, `impossible_round`, `pad_finished`", body = Problem),
        (status = 429, description = "`too_many_commands`: a round counts as a command", body = Problem, headers(("Retry-After" = u64)))
    )
)]
#[post("/v1/scorepads/{id}/rounds")]
pub async fn record_round(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    req: HttpRequest,
    body: Body<RecordRound>,
) -> Result<HttpResponse, ApiError> {
    let id = pad_id(&path)?;
    let expected = super::if_match(req.headers())?;
    let command = PadCommand::RecordRound {
        scores: body.0.scores,
    };
    let body = blocking(move || state.pads.execute(&id, &caller.id, &command, expected)).await?;
    Ok(pad_response(StatusCode::OK, &body))
}

/// Takes the last round back (a correction); reopens a pad that the round had finished.
#[utoipa::path(
    operation_id = "take_back_round",
    tag = "scorepads",
    params(
        ("id" = String, Path, description = "Score pad id"),
        ("If-Match" = Option<String>, Header, description = "Expected version, e.g. \"3\"")
    ),
    responses(
        (status = 200, body = PadBody, headers(("ETag" = String))),
        (status = 400, description = "malformed headers", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 409, description = "`version_conflict`", body = Problem),
        (status = 422, description = "`no_round_to_take_back`", body = Problem),
        (status = 429, description = "`too_many_commands`: a correction counts as a command", body = Problem, headers(("Retry-After" = u64)))
    )
)]
#[delete("/v1/scorepads/{id}/rounds/last")]
pub async fn take_back_round(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = pad_id(&path)?;
    let expected = super::if_match(req.headers())?;
    let body = blocking(move || {
        state
            .pads
            .execute(&id, &caller.id, &PadCommand::TakeBackLastRound, expected)
    })
    .await?;
    Ok(pad_response(StatusCode::OK, &body))
}
