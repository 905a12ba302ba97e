//! E-mail reminders: the caller's address (verified by a link) and reminder choices.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::caller::Caller;
use super::errors::{ApiError, Problem};
use super::{AppState, Body, blocking};
use crate::mail::{MailChoices, MailSettings};

/// An address to send reminders to.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAddress {
    /// The e-mail address; a verification link is sent to it.
    #[schema(max_length = 254)]
    pub address: String,
}

/// The token of a verification link.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VerifyQuery {
    /// The token from the link.
    pub token: String,
}

/// A verified address.
#[derive(Serialize, ToSchema)]
pub struct Verified {
    /// The address reminders go to now.
    pub address: String,
}

/// The caller's address and reminder choices.
#[utoipa::path(
    operation_id = "get_mail_settings",
    tag = "mail",
    responses(
        (status = 200, body = MailSettings),
        (status = 401, description = "`unauthorized`", body = Problem)
    )
)]
#[get("/v1/me/mail")]
pub async fn get_mail_settings(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let body = blocking(move || state.mail.settings(&caller.id)).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// Changes the caller's reminder choices ("your turn", "deadline in less than N hours",
/// "game finished", daily digest); absent fields stay.
#[utoipa::path(
    operation_id = "set_mail_choices",
    tag = "mail",
    request_body = MailChoices,
    responses(
        (status = 200, body = MailSettings),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem)
    )
)]
#[patch("/v1/me/mail")]
pub async fn set_mail_choices(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<MailChoices>,
) -> Result<HttpResponse, ApiError> {
    let choices = body.0;
    let body = blocking(move || state.mail.choose(&caller.id, &choices)).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// Sends a verification link (valid 24 hours, single use) to an address; it receives the
/// caller's reminders once the link is opened.
#[utoipa::path(
    operation_id = "add_mail_address",
    tag = "mail",
    request_body = NewAddress,
    responses(
        (status = 202, description = "the link was sent", body = MailSettings),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 409, description = "`mail_disabled`: this server sends no e-mail", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem),
        (status = 429, description = "`too_many_mails`: too many links sent by this account or to this address", body = Problem),
        (status = 503, description = "`mail_unavailable`: the mail server refused", body = Problem)
    )
)]
#[post("/v1/me/mail/address")]
pub async fn add_mail_address(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<NewAddress>,
) -> Result<HttpResponse, ApiError> {
    let NewAddress { address } = body.0;
    let body = blocking(move || {
        if !state.mail.enabled() {
            return Err(crate::mail::MailError::Disabled.into());
        }
        // Counted per account and per recipient before anything is sent.
        let valid = crate::mail::validate_address(&address)?;
        state.limits.mail(&caller.id, &valid)?;
        state
            .mail
            .request_address(&caller.id, &valid)
            .map_err(ApiError::from)
    })
    .await?;
    Ok(HttpResponse::Accepted().json(body))
}

/// Removes the caller's address: no more mails.
#[utoipa::path(
    operation_id = "remove_mail_address",
    tag = "mail",
    responses(
        (status = 204, description = "removed"),
        (status = 401, description = "`unauthorized`", body = Problem)
    )
)]
#[delete("/v1/me/mail/address")]
pub async fn remove_mail_address(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    blocking(move || state.mail.remove_address(&caller.id)).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The verification link of a mail: makes its address the account's (once; the link
/// expires after 24 hours). Needs no token: the link's own token identifies the account.
#[utoipa::path(
    operation_id = "verify_mail_address",
    tag = "mail",
    security(()),
    params(VerifyQuery),
    responses(
        (status = 200, body = Verified),
        (status = 404, description = "`not_found`: unknown, used or expired link", body = Problem)
    )
)]
#[get("/v1/mail/verify")]
pub async fn verify_mail_address(
    state: web::Data<AppState>,
    query: web::Query<VerifyQuery>,
) -> Result<HttpResponse, ApiError> {
    let VerifyQuery { token } = query.into_inner();
    let address = blocking(move || state.mail.verify(&token)).await?;
    Ok(HttpResponse::Ok().json(Verified { address }))
}
