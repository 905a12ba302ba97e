//! Tournaments (Swiss and duplicate): creating, joining, leaving, the host's early start,
//! a tournament's view, standings and event stream, the list, and the analysts' feed of
//! every tournament's events. The work is in [`crate::tournaments`]; see
//! docs/tournaments.md.

use actix_web::{HttpResponse, get, post, web};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::caller::Caller;
use super::errors::{ApiError, Problem};
use super::{AppState, Body, blocking};
use crate::tournaments::{
    TournamentEventPage, TournamentFeedPage, TournamentListQuery, TournamentPage,
    TournamentStandings, TournamentView,
};
use rules::tournament::TournamentInput;

/// Parses a tournament id from a path (not a UUID: 404).
fn tournament_id(raw: &str) -> Result<crate::ids::TournamentId, ApiError> {
    super::parse_id(raw, "tournament")
}

/// Who may see a private tournament besides its host and players: whoever holds its code.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct InviteParam {
    /// A private tournament's invite code (as its host and players see it).
    pub invite_code: Option<String>,
}

/// Joining, with a private tournament's code.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinTournament {
    /// A private tournament's invite code (not needed for a public one).
    pub invite_code: Option<String>,
}

/// The list's filters.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// `upcoming` (taking people), `running` or `finished` (ended or cancelled); all when
    /// absent.
    #[param(inline)]
    pub status: Option<StatusFilter>,
    /// Only tournaments the caller hosts or joined.
    pub mine: Option<bool>,
    /// `next_cursor` of the previous page (a tournament's id).
    #[param(
        pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    )]
    pub cursor: Option<String>,
    /// Page size, 1–100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// Which tournaments the list shows.
#[derive(Clone, Copy, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusFilter {
    /// Taking people.
    Upcoming,
    /// Playing a round.
    Running,
    /// Ended or cancelled.
    Finished,
}

impl StatusFilter {
    fn as_str(self) -> &'static str {
        match self {
            Self::Upcoming => "upcoming",
            Self::Running => "running",
            Self::Finished => "finished",
        }
    }
}

/// Standings after some rounds.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct StandingsParams {
    /// Standings after this many finished rounds, 0–12 (default: all finished so far);
    /// more than the tournament's rounds is refused.
    #[param(minimum = 0, maximum = 12)]
    pub after_round: Option<u8>,
    /// A private tournament's invite code.
    pub invite_code: Option<String>,
}

/// Paging of a tournament's events.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct EventParams {
    /// Events after this `seq` (default 0: from the start).
    #[param(minimum = 0)]
    pub after: Option<i32>,
    /// Page size, 1–1000 (default 200).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
    /// A private tournament's invite code.
    pub invite_code: Option<String>,
}

/// Paging of the analysts' tournament feed.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct FeedParams {
    /// Events after the event at this position (default 0: from the start).
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Page size, 1–1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

fn view_response(status: actix_web::http::StatusCode, body: &TournamentView) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header(super::etag(body.version))
        .json(body)
}

/// Creates a tournament (Swiss or duplicate). The caller is its host; like everyone, the
/// host takes part only after `join`. Counts against the games-per-hour limit.
#[utoipa::path(
    operation_id = "create_tournament",
    tag = "tournaments",
    request_body = TournamentInput,
    responses(
        (status = 201, body = TournamentView, headers(("Location" = String), ("ETag" = String))),
        (status = 400, description = "malformed body", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`, `invalid_tournament`, `invalid_options`, `invalid_time_control`", body = Problem),
        (status = 429, description = "`too_many_games`; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/tournaments")]
pub async fn create_tournament(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<TournamentInput>,
) -> Result<HttpResponse, ApiError> {
    let input = body.0;
    let view = blocking(move || state.tournaments.create(&caller.id, input)).await?;
    Ok(HttpResponse::Created()
        .insert_header(super::etag(view.version))
        .insert_header((
            actix_web::http::header::LOCATION,
            format!("/v1/tournaments/{}", view.id),
        ))
        .json(view))
}

/// Tournaments: the public ones and the private ones the caller hosts or joined, newest
/// first.
#[utoipa::path(
    operation_id = "list_tournaments",
    tag = "tournaments",
    params(ListParams),
    responses(
        (status = 200, body = TournamentPage),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`: an unknown `status`, `limit` out of range, a bad `cursor`", body = Problem)
    )
)]
#[get("/v1/tournaments")]
pub async fn list_tournaments(
    state: web::Data<AppState>,
    caller: Caller,
    params: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let ListParams {
        status,
        mine,
        cursor,
        limit,
    } = params.into_inner();
    let limit = limit.unwrap_or(50);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::Validation("limit must be 1 to 100".into()));
    }
    let query = TournamentListQuery {
        status: status.map(|s| s.as_str().to_owned()),
        mine: mine.unwrap_or(false),
        cursor,
        limit,
    };
    let page = blocking(move || state.tournaments.list(&caller.id, &query)).await?;
    Ok(HttpResponse::Ok().json(page))
}

/// A tournament: its set-up, people, rounds with their tables and results, and the
/// caller's next table. A private one is `404` to anyone who neither hosts nor joined it
/// nor gives its `invite_code`.
#[utoipa::path(
    operation_id = "get_tournament",
    tag = "tournaments",
    params(("id" = String, Path, description = "The tournament's id"), InviteParam),
    responses(
        (status = 200, body = TournamentView, headers(("ETag" = String))),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem)
    )
)]
#[get("/v1/tournaments/{id}")]
pub async fn get_tournament(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    params: web::Query<InviteParam>,
) -> Result<HttpResponse, ApiError> {
    let id = tournament_id(&path)?;
    let code = params.into_inner().invite_code;
    let view = blocking(move || state.tournaments.view(&id, &caller.id, code.as_deref())).await?;
    Ok(view_response(actix_web::http::StatusCode::OK, &view))
}

/// Joins a tournament that is still taking people (a private one with its `invite_code`).
#[utoipa::path(
    operation_id = "join_tournament",
    tag = "tournaments",
    params(("id" = String, Path, description = "The tournament's id")),
    request_body = JoinTournament,
    responses(
        (status = 200, body = TournamentView, headers(("ETag" = String))),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 422, description = "`tournament_not_open`, `already_joined`, `tournament_full`", body = Problem),
        (status = 429, description = "`too_many_commands`; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/tournaments/{id}/join")]
pub async fn join_tournament(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    body: Body<JoinTournament>,
) -> Result<HttpResponse, ApiError> {
    let id = tournament_id(&path)?;
    let code = body.0.invite_code;
    let view = blocking(move || state.tournaments.join(&id, &caller.id, code.as_deref())).await?;
    Ok(view_response(actix_web::http::StatusCode::OK, &view))
}

/// Leaves a tournament before it starts.
#[utoipa::path(
    operation_id = "leave_tournament",
    tag = "tournaments",
    params(("id" = String, Path, description = "The tournament's id")),
    responses(
        (status = 200, body = TournamentView, headers(("ETag" = String))),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 422, description = "`tournament_not_open`, `not_joined`", body = Problem),
        (status = 429, description = "`too_many_commands`; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/tournaments/{id}/leave")]
pub async fn leave_tournament(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = tournament_id(&path)?;
    let view = blocking(move || state.tournaments.leave(&id, &caller.id)).await?;
    Ok(view_response(actix_web::http::StatusCode::OK, &view))
}

/// The host starts the tournament now (at least two people): round 1 is seated and its
/// games begin.
#[utoipa::path(
    operation_id = "start_tournament",
    tag = "tournaments",
    params(("id" = String, Path, description = "The tournament's id")),
    responses(
        (status = 200, body = TournamentView, headers(("ETag" = String))),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 422, description = "`not_host`, `tournament_not_open`, `too_few_players`", body = Problem),
        (status = 429, description = "`too_many_commands`; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/tournaments/{id}/start")]
pub async fn start_tournament(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = tournament_id(&path)?;
    let view = blocking(move || state.tournaments.start(&id, &caller.id)).await?;
    Ok(view_response(actix_web::http::StatusCode::OK, &view))
}

/// Standings after the finished rounds (or after `after_round` of them): points,
/// tie-break, each person's tables, and for duplicate every deal compared with the other
/// holders of the same hand.
#[utoipa::path(
    operation_id = "tournament_standings",
    tag = "tournaments",
    params(("id" = String, Path, description = "The tournament's id"), StandingsParams),
    responses(
        (status = 200, body = TournamentStandings),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 422, description = "`validation_failed`: `after_round` beyond the tournament's rounds", body = Problem)
    )
)]
#[get("/v1/tournaments/{id}/standings")]
pub async fn tournament_standings(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    params: web::Query<StandingsParams>,
) -> Result<HttpResponse, ApiError> {
    let id = tournament_id(&path)?;
    let StandingsParams {
        after_round,
        invite_code,
    } = params.into_inner();
    let body = blocking(move || {
        state
            .tournaments
            .standings(&id, &caller.id, invite_code.as_deref(), after_round)
    })
    .await?;
    Ok(HttpResponse::Ok().json(body))
}

/// A tournament's event stream (everything in it is public to whoever may see the
/// tournament; a round's seed is in it only once the round ended).
#[utoipa::path(
    operation_id = "tournament_events",
    tag = "tournaments",
    params(("id" = String, Path, description = "The tournament's id"), EventParams),
    responses(
        (status = 200, body = TournamentEventPage),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 422, description = "`validation_failed`: `after` or `limit` out of range", body = Problem)
    )
)]
#[get("/v1/tournaments/{id}/events")]
pub async fn tournament_events(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    params: web::Query<EventParams>,
) -> Result<HttpResponse, ApiError> {
    let id = tournament_id(&path)?;
    let EventParams {
        after,
        limit,
        invite_code,
    } = params.into_inner();
    let after = after.unwrap_or(0);
    let limit = limit.unwrap_or(200);
    if after < 0 || !(1..=1000).contains(&limit) {
        return Err(ApiError::Validation(
            "after must be 0 or more and limit 1 to 1000".into(),
        ));
    }
    let page = blocking(move || {
        state
            .tournaments
            .events(&id, &caller.id, invite_code.as_deref(), after, limit)
    })
    .await?;
    Ok(HttpResponse::Ok().json(page))
}

/// Every tournament's events in commit order (role `analyst`), private tournaments
/// included (as the games' feed includes private games).
#[utoipa::path(
    operation_id = "analytics_tournament_feed",
    tag = "analytics",
    params(FeedParams),
    responses(
        (status = 200, body = TournamentFeedPage),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 403, description = "`not_an_analyst`", body = Problem),
        (status = 422, description = "`validation_failed`: `after` or `limit` out of range", body = Problem)
    )
)]
#[get("/v1/analytics/tournaments/events")]
pub async fn tournament_feed(
    state: web::Data<AppState>,
    caller: Caller,
    params: web::Query<FeedParams>,
) -> Result<HttpResponse, ApiError> {
    let after = params.after.unwrap_or(0);
    let limit = params.limit.unwrap_or(100);
    if after < 0 || !(1..=1000).contains(&limit) {
        return Err(ApiError::Validation(
            "after must be 0 or more and limit 1 to 1000".into(),
        ));
    }
    let page = blocking(move || {
        state.analytics.require_analyst(&caller.id)?;
        state.tournaments.feed(after, limit).map_err(ApiError::from)
    })
    .await?;
    Ok(HttpResponse::Ok().json(page))
}
