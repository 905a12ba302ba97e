//! `POST /test/clock`: moves the server's test clock forward, so that the HTTP tests see
//! deadlines, expiry, rematch windows, reminders and webhook retries come due without
//! waiting for them.
//!
//! The route is not part of the API and not in the OpenAPI document. A server runs with a
//! test clock only when started with `STAMMTISCH_TEST_CLOCK=true` (and says so loudly in
//! its log); on any other server the route answers `404`, like a path that does not exist.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::AppState;
use super::errors::ApiError;

/// How far to move the clock.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Advance {
    /// Seconds to move forward (the clock never goes back).
    pub advance_seconds: u64,
}

/// Moves the test clock forward and answers the server's new time.
///
/// The background workers (deadlines, the outbox) look at the clock every few hundred
/// milliseconds on real time, so what came due acts within a poll interval; the tests wait
/// for its effect with a bounded poll.
///
/// # Errors
/// `404` unless the server runs with a test clock.
pub async fn advance(
    state: web::Data<AppState>,
    body: web::Json<Advance>,
) -> Result<HttpResponse, ApiError> {
    let by = std::time::Duration::from_secs(body.advance_seconds);
    let Some(now) = state.service.clock().advance(by) else {
        return Err(ApiError::NotFound("route"));
    };
    tracing::warn!(advance_seconds = body.advance_seconds, %now, "the test clock was moved forward");
    Ok(HttpResponse::Ok().json(serde_json::json!({
        "now": now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    })))
}
