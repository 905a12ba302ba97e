//! Analytics: the global feed of public events and the archive of finished games
//! (role `analyst`).

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::caller::Caller;
use super::errors::{ApiError, Problem};
use super::games::game_id;
use super::{AppState, blocking};
use crate::analytics::{AnalyticsError, FeedCursor, ReadEvent};

impl From<AnalyticsError> for ApiError {
    fn from(e: AnalyticsError) -> Self {
        match e {
            AnalyticsError::NotAnalyst => ApiError::Forbidden {
                code: "not_an_analyst",
                detail: "this needs the analyst role".into(),
            },
            AnalyticsError::GameNotFound => ApiError::NotFound("game"),
            AnalyticsError::NotFinished => ApiError::Conflict {
                code: "game_not_finished",
                detail: "the complete log is available once the game is finished".into(),
            },
            AnalyticsError::UnknownPosition(_) => ApiError::Validation(e.to_string()),
            AnalyticsError::Store(s) => s.into(),
        }
    }
}

/// Paging of the feed.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct FeedParams {
    /// Events after the event at this position: the `position` of the last item read, or
    /// `next_cursor` (default 0: from the start). `422` when no event has it.
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Page size, 1–1000 (default 100; the NDJSON stream reads in pages of this size).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

/// A public event in the global order.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeedItem {
    /// Global position: unique. Pass the last item's as `after` to read on. The feed is in
    /// commit order, which on PostgreSQL is not always position order (an append that
    /// commits late is delivered after what committed before it, never skipped).
    pub position: i64,
    /// Id of the game the event belongs to.
    pub game_id: String,
    /// Position in the game's stream.
    pub seq: i32,
    /// Event type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Time of the append (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub at: String,
    /// Payload, in the current schema.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
}

/// A page of the feed.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeedPage {
    /// Events in feed (commit) order.
    pub items: Vec<FeedItem>,
    /// Pass as `after` for the next page; `null` when this page was the last.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// An event of a finished game's complete log.
#[derive(Debug, Serialize, ToSchema)]
pub struct ArchivedEvent {
    /// Position in the game's stream.
    pub seq: i32,
    /// Event type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Who could read it while the game ran: `public`, `seat:N` or `server`.
    pub audience: String,
    /// The payload's stored schema version (the payload is shown upcast).
    pub schema_version: i32,
    /// Time of the append (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub at: String,
    /// Payload, in the current schema.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
}

/// The complete log.
#[derive(Debug, Serialize, ToSchema)]
pub struct ArchivePage {
    /// Every event of the game.
    pub items: Vec<ArchivedEvent>,
}

/// The next page of an NDJSON export.
enum Export {
    /// Read already (it resolved `after`).
    First(Vec<ReadEvent>),
    /// Read on after this cursor.
    After(FeedCursor),
}

fn item(e: ReadEvent) -> FeedItem {
    FeedItem {
        position: e.position,
        game_id: e.game_id,
        seq: e.seq,
        at: e.recorded_at.and_utc().to_rfc3339(),
        data: e.data,
        type_: e.event_type,
    }
}

/// Every game's public events in one global order (a game's name in `game_created` only
/// while the game is public, `null` otherwise). A reader that follows `after` never
/// misses an event that commits late: the feed shows only what no running transaction can
/// still precede (see docs/architecture.md, "The analysts' feed"). With
/// `Accept: application/x-ndjson` the rest of the feed streams as one JSON object a line.
#[utoipa::path(
    operation_id = "analytics_feed",
    tag = "analytics",
    params(FeedParams),
    responses(
        (status = 200, body = FeedPage, description = "a page, or an NDJSON stream of FeedItem"),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 403, description = "`not_an_analyst`", body = Problem),
        (status = 422, description = "`validation_failed`: `limit` out of range, or `after` naming no event", body = Problem)
    )
)]
#[get("/v1/analytics/events")]
pub async fn feed(
    state: web::Data<AppState>,
    caller: Caller,
    params: web::Query<FeedParams>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let limit = params.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::Validation("limit must be 1 to 1000".into()));
    }
    let after = params.after.unwrap_or(0);
    if after < 0 {
        return Err(ApiError::Validation("after must be 0 or more".into()));
    }
    let st = state.clone();
    blocking(move || st.analytics.require_analyst(&caller.id)).await?;
    let ndjson = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/x-ndjson"));
    if ndjson {
        // The first page resolves `after` (a bad one is refused before the stream starts);
        // later pages go on from the last event's cursor.
        let st = state.clone();
        let first = blocking(move || st.analytics.feed(after, limit)).await?;
        let body = futures_util::stream::unfold(Some(Export::First(first)), move |next| {
            let state = state.clone();
            async move {
                let page = match next? {
                    Export::First(rows) => Ok(rows),
                    Export::After(cursor) => {
                        blocking(move || state.analytics.feed_from(cursor, limit)).await
                    }
                };
                match page {
                    Ok(rows) if rows.is_empty() => None,
                    Ok(rows) => {
                        let next = rows.last().map(FeedCursor::from);
                        let full = i64::try_from(rows.len()).unwrap_or(i64::MAX) == limit;
                        let mut text = String::new();
                        for row in rows {
                            text.push_str(&serde_json::to_string(&item(row)).unwrap_or_default());
                            text.push('\n');
                        }
                        Some((
                            Ok::<_, actix_web::Error>(Bytes::from(text)),
                            next.filter(|_| full).map(Export::After),
                        ))
                    }
                    Err(e) => {
                        tracing::warn!(error = %crate::telemetry::Chain(&e), "feed export stopped");
                        None
                    }
                }
            }
        });
        return Ok(HttpResponse::Ok()
            .content_type("application/x-ndjson")
            .streaming(body));
    }
    let rows = blocking(move || state.analytics.feed(after, limit)).await?;
    let full = i64::try_from(rows.len()).unwrap_or(i64::MAX) == limit;
    let items: Vec<FeedItem> = rows.into_iter().map(item).collect();
    let next_cursor = items
        .last()
        .filter(|_| full)
        .map(|i| i.position.to_string());
    Ok(HttpResponse::Ok().json(FeedPage { items, next_cursor }))
}

/// The complete, unredacted log of a finished game (refused while it runs), but for the
/// game's name: `null` in `game_created` unless the game is public now.
#[utoipa::path(
    operation_id = "analytics_archive",
    tag = "analytics",
    params(("id" = String, Path, description = "Game id")),
    responses(
        (status = 200, body = ArchivePage),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 403, description = "`not_an_analyst`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 409, description = "`game_not_finished`", body = Problem)
    )
)]
#[get("/v1/analytics/games/{id}/events")]
pub async fn archive(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let rows = blocking(move || {
        state.analytics.require_analyst(&caller.id)?;
        Ok::<_, ApiError>(state.analytics.archive(&id)?)
    })
    .await?;
    let items = rows
        .into_iter()
        .map(|e| ArchivedEvent {
            seq: e.seq,
            at: e.recorded_at.and_utc().to_rfc3339(),
            data: e.data,
            audience: e.audience,
            schema_version: e.stored_schema_version,
            type_: e.event_type,
        })
        .collect();
    Ok(HttpResponse::Ok().json(ArchivePage { items }))
}
