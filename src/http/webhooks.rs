//! Webhooks: register a URL for the caller's notifications (`your_turn`, `game_finished`),
//! list and delete them. A webhook is its owner's: to every other account it does not exist.

use actix_web::http::header;
use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::caller::Caller;
use super::errors::{ApiError, Problem};
use super::{AppState, Body, blocking};
use crate::webhooks::{CreatedWebhook, WebhookBody, WebhookChoices, WebhookChoicesChange};

/// The body of `POST /v1/webhooks`: where to send the caller's notifications.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhook {
    /// An absolute `http://` or `https://` URL (at most 2048 characters, no credentials or
    /// fragment) to which the server POSTs the caller's notifications. It may not name, or
    /// resolve to, a private, loopback, link-local, unique-local, multicast, metadata or
    /// other internal address (`webhook_url_not_allowed`); it is stored normalised (WHATWG).
    #[schema(max_length = 2048, pattern = "^https?://[^\\s]+$")]
    pub url: String,
}

/// The caller's webhooks.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookPage {
    /// Webhooks, oldest first (at most 10).
    pub items: Vec<WebhookBody>,
    /// Always `null`: the list fits one page.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// Registers a webhook for the caller. When it becomes the caller's turn in a game, or a
/// game the caller sits in ends, the server POSTs a JSON notification there, signed with
/// the `secret` of this response (shown only here): header `Stammtisch-Signature:
/// t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, with the delivery id in
/// `Stammtisch-Delivery` (stable across retries). See docs/webhooks-and-mail.md, "Webhooks".
#[utoipa::path(
    operation_id = "create_webhook",
    tag = "webhooks",
    request_body = CreateWebhook,
    responses(
        (status = 201, body = CreatedWebhook, headers(("Location" = String))),
        (status = 400, description = "malformed body", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`, `invalid_url`, `webhook_url_not_allowed` (a private, loopback, link-local, metadata or other internal address, or a name resolving to one), `too_many_webhooks` (at most 10 per account)", body = Problem)
    )
)]
#[post("/v1/webhooks")]
pub async fn create_webhook(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<CreateWebhook>,
) -> Result<HttpResponse, ApiError> {
    let url = body.0.url;
    let service = state.webhooks.clone();
    let created = blocking(move || service.register(&caller.id, &url)).await?;
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/webhooks/{}", created.id)))
        .json(&created))
}

/// The caller's webhooks, without their secrets.
#[utoipa::path(
    operation_id = "list_webhooks",
    tag = "webhooks",
    responses(
        (status = 200, body = WebhookPage),
        (status = 401, description = "`unauthorized`", body = Problem)
    )
)]
#[get("/v1/webhooks")]
pub async fn list_webhooks(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let service = state.webhooks.clone();
    let items = blocking(move || service.list(&caller.id)).await?;
    Ok(HttpResponse::Ok().json(WebhookPage {
        items,
        next_cursor: None,
    }))
}

/// Deletes one of the caller's webhooks; its notifications not yet delivered are dropped.
#[utoipa::path(
    operation_id = "delete_webhook",
    tag = "webhooks",
    params(("id" = String, Path, description = "Webhook id")),
    responses(
        (status = 204, description = "deleted"),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found` (also for another account's webhook)", body = Problem)
    )
)]
#[delete("/v1/webhooks/{id}")]
pub async fn delete_webhook(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = uuid::Uuid::parse_str(&path)
        .map(|u| u.to_string())
        .map_err(|_| ApiError::NotFound("webhook"))?;
    let service = state.webhooks.clone();
    blocking(move || service.delete(&caller.id, &id)).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The caller's webhook choices: the `time_running_low` threshold.
#[utoipa::path(
    operation_id = "get_webhook_choices",
    tag = "webhooks",
    responses(
        (status = 200, body = WebhookChoices),
        (status = 401, description = "`unauthorized`", body = Problem)
    )
)]
#[get("/v1/me/webhook-choices")]
pub async fn get_webhook_choices(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let service = state.webhooks.clone();
    let body = blocking(move || service.choices(&caller.id)).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// Changes the caller's webhook choices; absent fields stay. `low_time_minutes` (1–43200,
/// `0`: off) sends `time_running_low` to the caller's webhooks when a move asked of it has
/// less than that many minutes left (see docs/webhooks-and-mail.md).
#[utoipa::path(
    operation_id = "set_webhook_choices",
    tag = "webhooks",
    request_body = WebhookChoicesChange,
    responses(
        (status = 200, body = WebhookChoices),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem)
    )
)]
#[patch("/v1/me/webhook-choices")]
pub async fn set_webhook_choices(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<WebhookChoicesChange>,
) -> Result<HttpResponse, ApiError> {
    let change = body.0;
    let service = state.webhooks.clone();
    let body = blocking(move || service.choose(&caller.id, &change)).await?;
    Ok(HttpResponse::Ok().json(body))
}
