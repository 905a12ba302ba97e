//! Vacation: the caller's vacation hours of this year and its explicit absence ("away
//! until"). Guests have none (`403 guest_has_no_vacation`).

use actix_web::{HttpResponse, get, put, web};

use super::caller::Caller;
use super::errors::{ApiError, Problem};
use super::{AppState, Body, blocking};
use crate::vacation::{AwayChange, VacationBody};

/// The caller's vacation: days per year, whole hours left this calendar year (UTC), and
/// the end of its explicit absence.
#[utoipa::path(
    operation_id = "get_vacation",
    tag = "identity",
    responses(
        (status = 200, body = VacationBody),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 403, description = "`guest_has_no_vacation`", body = Problem)
    )
)]
#[get("/v1/account/vacation")]
pub async fn get_vacation(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let body = blocking(move || state.vacation.get(&caller.id)).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// Goes away until an instant, or (`"away_until": null`) comes back now. Going away spends
/// the whole hours until then at once (rounded up); replacing an absence or coming back
/// early gives back the whole hours not used. While away, the caller's seats in running
/// correspondence games that allow vacation do not run (see docs/api.md, "Vacation").
#[utoipa::path(
    operation_id = "set_vacation",
    tag = "identity",
    request_body = AwayChange,
    responses(
        (status = 200, body = VacationBody),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 403, description = "`guest_has_no_vacation`", body = Problem),
        (status = 422, description = "`validation_failed` (not an instant in the future), `not_enough_vacation` (more hours than are left this year)", body = Problem)
    )
)]
#[put("/v1/account/vacation")]
pub async fn set_vacation(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<AwayChange>,
) -> Result<HttpResponse, ApiError> {
    let AwayChange { away_until } = body.0;
    let body = blocking(move || {
        let (body, changed) = state.vacation.set_away(&caller.id, away_until.as_deref())?;
        if changed {
            // The absence is the account's now; its games follow (a game that cannot be
            // written is logged, and its clock runs as before).
            let until = body
                .away_until
                .as_deref()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&chrono::Utc));
            state.service.apply_away(&caller.id, until)?;
        }
        Ok::<_, ApiError>(body)
    })
    .await?;
    Ok(HttpResponse::Ok().json(body))
}
