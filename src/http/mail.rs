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

/// The token of a verification link, sent by the page the link opens.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyBody {
    /// The token from the link.
    #[schema(max_length = 256)]
    pub token: String,
}

/// Confirms an address with the token of its verification link: the address becomes the
/// account's (once; the link expires after 24 hours). Needs no bearer token: the link's
/// own token identifies the account. The web client's page `#/mail/verify/<token>` (where
/// the mailed link leads) sends it when the person presses "Confirm", so that a mail
/// scanner that opens links confirms nothing.
#[utoipa::path(
    operation_id = "verify_mail_address",
    tag = "mail",
    security(()),
    request_body = VerifyBody,
    responses(
        (status = 200, body = Verified),
        (status = 404, description = "`not_found`: unknown, used or expired link", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem)
    )
)]
#[post("/v1/mail/verify")]
pub async fn verify_mail_address(
    state: web::Data<AppState>,
    body: Body<VerifyBody>,
) -> Result<HttpResponse, ApiError> {
    let VerifyBody { token } = body.0;
    let address = blocking(move || state.mail.verify(&token)).await?;
    Ok(HttpResponse::Ok().json(Verified { address }))
}

/// The form of the link that mails sent before 2026-12-07 carry: sends the browser on to
/// the web client's confirmation page (`303`, `Location: …/#/mail/verify/<token>`) and
/// changes nothing, so that opening it (a person, or a mail scanner) confirms nothing by
/// itself.
#[utoipa::path(
    operation_id = "open_mail_verification_link",
    tag = "mail",
    security(()),
    params(VerifyQuery),
    responses(
        (status = 303, description = "to the confirmation page; `Location` names it"),
        (status = 400, description = "`invalid_query`: no token", body = Problem),
        (status = 404, description = "`not_found`: not a token a link can carry", body = Problem)
    )
)]
#[get("/v1/mail/verify")]
pub async fn open_mail_verification_link(
    state: web::Data<AppState>,
    query: web::Query<VerifyQuery>,
) -> Result<HttpResponse, ApiError> {
    let VerifyQuery { token } = query.into_inner();
    let page = state
        .mail
        .confirmation_page(&token)
        .ok_or(crate::mail::MailError::InvalidToken)?;
    Ok(HttpResponse::SeeOther()
        .insert_header((actix_web::http::header::LOCATION, page))
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .finish())
}
