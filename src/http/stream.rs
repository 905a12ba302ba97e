//! `GET /v1/games/{id}/stream`: the game's events as the caller may see them, live, as
//! server-sent events. Resumes after `Last-Event-ID`, sends keep-alive comments, and ends
//! after `game_finished`, when the stream's token is revoked, or when the server shuts down.
//!
//! A browser's `EventSource` cannot send an `Authorization` header, so a stream may instead
//! be opened with `?ticket=…` from `POST /v1/games/{id}/stream-tickets`: a random,
//! single-use credential bound to the account and the game that expires within seconds.
//! The bearer token never goes into a URL, and the request span logs the path without its
//! query (see `crate::telemetry`), so tickets never reach the log.
//!
//! This file holds the routes and the server-sent-event framing ([`render_event`], the
//! keep-alive comment); the engine behind them (one shared reader per game and replica,
//! per-viewer audience filter, catching up from the table, token revocation, stream leases)
//! is `crate::games::live`.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::games::ReadEvent;
use crate::games::live::Chunk;

use super::caller::{Caller, Claimed};
use super::errors::{ApiError, NotSignedIn, Problem};
use super::games::{EventItem, game_id};
use super::{AppState, blocking};

/// Where to start.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct StreamParams {
    /// Events after this `seq` (the `Last-Event-ID` header wins when both are given).
    #[param(minimum = 0)]
    pub after: Option<i32>,
    /// A stream ticket (for `EventSource`, which cannot send `Authorization`); replaces
    /// the bearer token.
    pub ticket: Option<String>,
}

/// A stream ticket.
#[derive(Debug, Serialize, ToSchema)]
pub struct StreamTicket {
    /// Opaque; pass as `?ticket=` to `GET /v1/games/{id}/stream`. Works once.
    pub ticket: String,
    /// Seconds until it expires.
    pub expires_in: u64,
}

/// Issues a single-use ticket that opens this game's live stream without an
/// `Authorization` header (for a browser's `EventSource`). It is bound to the caller and the
/// game and expires after `expires_in` seconds (at most 60); a reconnect needs a new one.
#[utoipa::path(
    tag = "games",
    operation_id = "create_stream_ticket",
    params(("id" = String, Path, description = "Game id")),
    responses(
        (status = 201, body = StreamTicket),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem)
    )
)]
#[post("/v1/games/{id}/stream-tickets")]
pub async fn create_stream_ticket(
    state: web::Data<AppState>,
    claimed: Claimed,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (ticket, expires_in) = blocking(move || {
        let caller = claimed.resolve(&state)?;
        // The ticket records the token's version: a revocation after this makes it
        // worthless.
        state
            .service
            .issue_stream_ticket(&id, &caller.id, claimed.token_version())
            .map_err(ApiError::from)
    })
    .await?;
    Ok(HttpResponse::Created()
        .insert_header(("Cache-Control", "no-store"))
        .json(StreamTicket { ticket, expires_in }))
}

/// Streams the game's events (`id: <seq>`, `event: <type>`, `data: {seq, type, at, data}`).
/// Authenticated by the bearer token or by a `ticket` from `create_stream_ticket`.
#[utoipa::path(
    tag = "games",
    operation_id = "stream_events",
    security(("bearer" = []), ()),
    params(
        ("id" = String, Path, description = "Game id"),
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this seq"),
        StreamParams
    ),
    responses(
        (status = 200, description = "text/event-stream of the game's events", content_type = "text/event-stream"),
        (status = 400, description = "`invalid_last_event_id`", body = Problem),
        (status = 401, description = "`unauthorized`: no or a bad token, or an unknown, used or expired ticket, or one issued before the account's tokens were revoked", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 429, description = "`too_many_streams`: the account has `LIMIT_STREAMS` streams open", body = Problem)
    )
)]
#[get("/v1/games/{id}/stream")]
pub async fn stream_events(
    state: web::Data<AppState>,
    path: web::Path<String>,
    params: web::Query<StreamParams>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let params = params.into_inner();
    // The account and the token version the stream is held to.
    let (account, token_version) = match params.ticket {
        Some(ticket) => {
            let (st, gid) = (state.clone(), id.clone());
            blocking(move || st.service.redeem_stream_ticket(&gid, &ticket))
                .await?
                .ok_or(ApiError::Unauthorized(NotSignedIn::BadTicket))?
        }
        None => {
            use actix_web::FromRequest;
            let claimed = Claimed::extract(&req).await?;
            let version = claimed.token_version();
            let st = state.clone();
            let caller: Caller = blocking(move || claimed.resolve(&st)).await?;
            (caller.id, version)
        }
    };
    let after = match req.headers().get("Last-Event-ID") {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
            .ok_or(ApiError::BadRequest {
                code: "invalid_last_event_id",
                detail: "Last-Event-ID must be an event's seq".into(),
            })?,
        None => params.after.unwrap_or(0),
    };
    if after < 0 || params.after.is_some_and(|a| a < 0) {
        return Err(ApiError::Validation("after must be 0 or more".into()));
    }
    tracing::info!(game = %id, after, "stream opened");
    // Existence and access are checked before the stream starts.
    let (st, gid, reader) = (state.clone(), id.clone(), account.clone());
    blocking(move || st.service.events(&gid, &reader, after, 1).map(|_| ())).await?;
    let (limits, holder) = (state.limits.clone(), account.clone());
    let lease = blocking(move || limits.open_stream(&holder)).await?;
    let live = state
        .streams
        .open(id.into(), account, token_version, after, lease);
    let body = futures_util::stream::unfold(live, |mut live| async move {
        live.next()
            .await
            .map(|chunk| (Ok::<_, actix_web::Error>(frame(chunk)), live))
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body))
}

/// One event as a server-sent event: `id: <seq>`, `event: <type>`, `data: <EventItem as
/// JSON>`. The live-stream engine renders each event once with this and shares the bytes
/// among the game's streams.
///
/// # Errors
/// The event could not be encoded.
pub fn render_event(row: &ReadEvent) -> Result<Bytes, serde_json::Error> {
    let item = EventItem {
        seq: row.seq,
        type_: row.event_type.clone(),
        at: row.recorded_at.and_utc().to_rfc3339(),
        data: row.data.clone(),
    };
    let json = serde_json::to_string(&item)?;
    Ok(Bytes::from(format!(
        "id: {}\nevent: {}\ndata: {json}\n\n",
        row.seq, row.event_type
    )))
}

/// What goes on the wire for a chunk of the engine: the rendered events as they are, a
/// comment for a keep-alive.
fn frame(chunk: Chunk) -> Bytes {
    match chunk {
        Chunk::Events(bytes) => bytes,
        Chunk::KeepAlive => Bytes::from_static(b": keep-alive\n\n"),
    }
}
