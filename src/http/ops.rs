//! Health, readiness and metrics.

use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use actix_web::{HttpResponse, get, web};

use super::errors::{ApiError, Problem};
use super::{AppState, blocking};

/// Counters exported at `/metrics`.
#[derive(Default)]
pub struct Metrics {
    /// Commands applied.
    pub commands_applied: AtomicU64,
    /// Commands refused by the rules.
    pub commands_refused: AtomicU64,
    /// Games created.
    pub games_created: AtomicU64,
}

impl Metrics {
    /// Adds one to a counter.
    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Liveness: the process answers.
#[utoipa::path(operation_id = "healthz", tag = "operations", security(()), responses((status = 200, description = "alive")))]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok" }))
}

/// The longest `/readyz` takes: a database that has not answered by then is not ready.
const READY_WITHIN: Duration = Duration::from_secs(1);

/// Readiness: the database answers within a second (503 `database_unavailable` with
/// `Retry-After` otherwise).
#[utoipa::path(
    operation_id = "readyz",
    tag = "operations",
    security(()),
    responses(
        (status = 200, description = "ready"),
        (status = 503, description = "`database_unavailable`: the database did not answer within 1 s", body = Problem, content_type = "application/problem+json")
    )
)]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    // The ping waits at most 800 ms for a connection; the timeout also bounds a query that
    // hangs on a dead network (the blocking thread finishes on its own).
    let ping = blocking(move || Ok::<_, ApiError>(state.service.ready()));
    match tokio::time::timeout(READY_WITHIN, ping).await {
        Ok(Ok(true)) => Ok(HttpResponse::Ok().json(serde_json::json!({ "status": "ready" }))),
        _ => Err(ApiError::Unavailable),
    }
}

/// Prometheus text-format counters.
#[utoipa::path(operation_id = "metrics", tag = "operations", security(()), responses((status = 200, description = "metrics", content_type = "text/plain")))]
#[get("/metrics")]
pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    let m = &state.metrics;
    let line = |name: &str, help: &str, v: &AtomicU64| {
        format!(
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}\n",
            v.load(Ordering::Relaxed)
        )
    };
    let body = [
        line(
            "stammtisch_commands_applied_total",
            "Commands applied.",
            &m.commands_applied,
        ),
        line(
            "stammtisch_commands_refused_total",
            "Commands refused by the rules.",
            &m.commands_refused,
        ),
        line(
            "stammtisch_games_created_total",
            "Games created.",
            &m.games_created,
        ),
    ]
    .concat();
    let batches = state.service.batch_stats();
    let body = format!(
        "{body}# HELP stammtisch_command_batches_total Group-commit batches written (each one \
         transaction for the commands that arrived together).\n\
         # TYPE stammtisch_command_batches_total counter\nstammtisch_command_batches_total {}\n\
         # HELP stammtisch_batched_commands_total Commands that went through the group commit.\n\
         # TYPE stammtisch_batched_commands_total counter\nstammtisch_batched_commands_total {}\n",
        batches.batches, batches.jobs
    );
    let drafts = state.service.draft_stats();
    let body = format!(
        "{body}# HELP stammtisch_batches_appended_with_reads_total Group-commit batches decided \
         on cached states whose appends went in the statement that read their accounts and \
         games (PostgreSQL: one round trip).\n\
         # TYPE stammtisch_batches_appended_with_reads_total counter\n\
         stammtisch_batches_appended_with_reads_total {}\n\
         # HELP stammtisch_batches_decided_again_total Group-commit batches decided on cached \
         states whose reads stood in the way (a token, a limit, someone listening), decided \
         again from the reads.\n\
         # TYPE stammtisch_batches_decided_again_total counter\n\
         stammtisch_batches_decided_again_total {}\n",
        drafts.appended_with_reads, drafts.decided_again
    );
    let cache = state.service.cache_stats();
    let body = format!(
        "{body}# HELP stammtisch_state_cache_hits_total Game loads that started from a cached \
         state (and read only the events after it).\n\
         # TYPE stammtisch_state_cache_hits_total counter\nstammtisch_state_cache_hits_total {}\n\
         # HELP stammtisch_state_cache_misses_total Game loads that replayed the whole stream.\n\
         # TYPE stammtisch_state_cache_misses_total counter\nstammtisch_state_cache_misses_total {}\n\
         # HELP stammtisch_state_cache_entries Game states cached now.\n\
         # TYPE stammtisch_state_cache_entries gauge\nstammtisch_state_cache_entries {}\n\
         # HELP stammtisch_state_cache_bytes Estimated bytes of the cached states \
         (STATE_CACHE_MB bounds it).\n\
         # TYPE stammtisch_state_cache_bytes gauge\nstammtisch_state_cache_bytes {}\n",
        cache.hits, cache.misses, cache.entries, cache.bytes
    );
    let replica = state.service.store().replica_stats();
    let body = format!(
        "{body}# HELP stammtisch_replica_reads_total Reads answered by DATABASE_READ_URL.\n\
         # TYPE stammtisch_replica_reads_total counter\nstammtisch_replica_reads_total {}\n\
         # HELP stammtisch_replica_fallbacks_total Reads that could have gone to the replica \
         but went to the primary (it had not replayed the reader's own write yet, or could \
         not be reached).\n\
         # TYPE stammtisch_replica_fallbacks_total counter\nstammtisch_replica_fallbacks_total {}\n",
        replica.reads, replica.fallbacks
    );
    // The analysts' feed: what a running transaction holds back (PostgreSQL; always 0 on
    // SQLite). Left out when the database does not answer.
    let lag = blocking(move || state.analytics.feed_lag()).await;
    let body = match lag {
        Ok(lag) => format!(
            "{body}# HELP stammtisch_feed_lag_seconds Age of the oldest committed public event \
             the analysts' feed cannot show yet (an older transaction is still running).\n\
             # TYPE stammtisch_feed_lag_seconds gauge\nstammtisch_feed_lag_seconds {:.3}\n\
             # HELP stammtisch_feed_held_events Committed public events the analysts' feed \
             cannot show yet.\n# TYPE stammtisch_feed_held_events gauge\n\
             stammtisch_feed_held_events {}\n",
            lag.seconds, lag.held_events
        ),
        Err(_) => body,
    };
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(body)
}
