//! `POST /test/clock`: moves the server's test clock forward, so that the HTTP tests see
//! deadlines, expiry, rematch windows, reminders and webhook retries come due without
//! waiting for them, and runs one pass of the deadline sweeper ([`crate::sweeper`]) before
//! it answers, so that what the move made due has been acted on when the answer arrives.
//!
//! `POST /test/outbox` settles the outbox's worker the same way (see [`settle_outbox`]),
//! and `POST /test/ratings` brings the ratings projection up to date ([`catch_up_ratings`]).
//!
//! The routes are not part of the API and not in the OpenAPI document. A server runs with a
//! test clock only when started with `STAMMTISCH_TEST_CLOCK=true` (and says so loudly in
//! its log); on any other server they answer `404`, like a path that does not exist.

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

/// Moves the test clock forward, runs one pass of the deadline sweeper (after any pass the
/// sweeper's own thread is in: passes take turns), and answers the server's new time and
/// what the pass did. `advance_seconds: 0` runs a pass without moving the clock (after a
/// restart, say).
///
/// The deadline moves, clock run-outs, released reservations and tournament steps that
/// came due are therefore written when the answer arrives. The outbox (webhooks, push,
/// mail) is not settled here (its sends go over the network, and a receiver may hang on
/// purpose): `POST /test/outbox` does that.
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
    let sweeper = state.sweeper.clone();
    let swept = web::block(move || sweeper.pass())
        .await
        .map_err(|e| ApiError::Internal(anyhow::Error::new(e).context("the sweeper's pass")))?;
    Ok(HttpResponse::Ok().json(serde_json::json!({
        "now": now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "swept": swept,
    })))
}

/// `POST /test/outbox`'s query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettleQuery {
    /// `false`: one claim, without waiting for any send (`Outbox::claim_once`).
    #[serde(default = "waits")]
    pub wait: bool,
}

fn waits() -> bool {
    true
}

/// `POST /test/outbox`: claims every delivery due at the test clock's time (after any
/// claim the worker's own threads are in) and answers once every send in flight has been
/// answered and recorded, at most the longest lease of its lanes later
/// (`WorkerConfig::longest_lease`): `{"claimed", "in_flight"}`. With `in_flight: 0`, a
/// receiver has got everything due at the clock's time, and a delivery it has not got was
/// not due. No body.
///
/// `?wait=false`: one claim on every lane, answered at once with what it claimed and the
/// sends in flight after it. With `claimed: 0`, nothing due could start now; for tests
/// whose receivers hang on purpose (a settle would wait for them).
///
/// # Errors
/// `404` unless the server runs with a test clock.
pub async fn settle_outbox(
    state: web::Data<AppState>,
    // Read after the clock's check: without a test clock even a bad query answers 404.
    query: Result<web::Query<SettleQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    if !state.service.clock().is_test() {
        return Err(ApiError::NotFound("route"));
    }
    let query = query.map_err(|e| ApiError::Validation(e.to_string()))?;
    let Some(outbox) = state.outbox.get().cloned() else {
        return Err(ApiError::Internal(anyhow::anyhow!(
            "the outbox worker has not started"
        )));
    };
    let wait = query.wait;
    let settled = web::block(move || {
        if wait {
            outbox.settle()
        } else {
            outbox.claim_once()
        }
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::Error::new(e).context("settling the outbox")))?;
    Ok(HttpResponse::Ok().json(settled))
}

/// `POST /test/ratings`: folds what the ratings projection has not read yet of the event
/// log (`Ratings::catch_up`; passes take turns on the projection's checkpoint, so it runs
/// after any pass the projection's own thread is in) and answers `{"read": n}`, the events
/// it read. On PostgreSQL the feed it reads stops before the oldest transaction still
/// running in the cluster (another test's, say), so a test looks again when its game is
/// not folded yet. No body.
///
/// # Errors
/// `404` unless the server runs with a test clock; a storage failure.
pub async fn catch_up_ratings(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    if !state.service.clock().is_test() {
        return Err(ApiError::NotFound("route"));
    }
    let ratings = state.ratings.clone();
    let read = web::block(move || ratings.catch_up()).await.map_err(|e| {
        ApiError::Internal(anyhow::Error::new(e).context("the ratings' catch-up"))
    })??;
    Ok(HttpResponse::Ok().json(serde_json::json!({ "read": read })))
}
