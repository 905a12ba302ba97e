//! Fencing a person's reads after their own writes, when reads may go to a replica
//! (`DATABASE_READ_URL`; see `store::replica`).

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{FromRequest, web};

use super::caller::Claimed;
use super::{AppState, blocking};

/// After a successful request that may have written (any method but `GET`, `HEAD` and
/// `OPTIONS`) by a signed-in person, notes the primary's WAL position for them before the
/// answer leaves, so the reads they send after it never see the database from before their
/// write. Nothing without a replica.
///
/// # Errors
/// Those of the wrapped service.
pub async fn fence_writes(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let writer = match &state {
        Some(state)
            if state.service.store().has_replica()
                && !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) =>
        {
            Claimed::extract(req.request())
                .await
                .ok()
                .map(|c| c.account().to_owned())
        }
        _ => None,
    };
    let res = next.call(req).await?;
    if let (Some(state), Some(account)) = (state, writer)
        && res.status().is_success()
    {
        // A fence that cannot be noted (the primary just went away) leaves the reads
        // where the replica sends them; the write itself has committed.
        if let Err(e) = blocking(move || {
            state
                .service
                .store()
                .fence_reads(&account)
                .map_err(super::errors::ApiError::from)
        })
        .await
        {
            tracing::warn!(error = %e, "could not note a write's WAL position");
        }
    }
    Ok(res)
}
