//! Webhooks: register a URL for the caller's notifications (`your_turn`, `game_finished`),
//! list and delete them. A webhook is its owner's: to every other account it does not exist.

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError, delete, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::caller::Caller;
use super::errors::{ApiError, Problem};
use super::{AppState, Body};
use crate::webhooks::{self, CreatedWebhook, WebhookBody, WebhookError};

/// A new webhook.
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
    pub next_cursor: Option<String>,
}

/// A webhook handler's failure: an [`ApiError`], or a registration refused with `422` and
/// its own code.
#[derive(Debug, thiserror::Error)]
pub enum WebhookApiError {
    /// Authentication, lookup, storage.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// A refused registration.
    #[error("{detail}")]
    Refused {
        /// `invalid_url`, `webhook_url_not_allowed` or `too_many_webhooks`.
        code: &'static str,
        /// What is wrong.
        detail: String,
    },
}

impl From<WebhookError> for WebhookApiError {
    fn from(e: WebhookError) -> Self {
        match e {
            WebhookError::InvalidUrl(detail) => Self::Refused {
                code: "invalid_url",
                detail,
            },
            WebhookError::NotAllowed(detail) => Self::Refused {
                code: "webhook_url_not_allowed",
                detail,
            },
            too_many @ WebhookError::TooMany => Self::Refused {
                code: "too_many_webhooks",
                detail: too_many.to_string(),
            },
            WebhookError::NotFound => Self::Api(ApiError::NotFound("webhook")),
            WebhookError::Store(store) => Self::Api(store.into()),
        }
    }
}

impl ResponseError for WebhookApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Api(e) => e.status_code(),
            Self::Refused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let (code, detail) = match self {
            Self::Api(e) => return e.error_response(),
            Self::Refused { code, detail } => (*code, detail),
        };
        let status = StatusCode::UNPROCESSABLE_ENTITY;
        let problem = Problem {
            type_: format!(
                "https://stammtisch.example/problems/{}",
                code.replace('_', "-")
            ),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail: detail.clone(),
            code: code.to_owned(),
            current_version: None,
        };
        HttpResponse::build(status)
            .insert_header((header::CONTENT_TYPE, "application/problem+json"))
            .body(serde_json::to_string(&problem).unwrap_or_default())
    }
}

/// Runs a blocking use case on the thread pool.
async fn blocking<T, F>(f: F) -> Result<T, WebhookApiError>
where
    F: FnOnce() -> Result<T, WebhookError> + Send + 'static,
    T: Send + 'static,
{
    Ok(web::block(f).await.map_err(ApiError::from)??)
}

/// Registers a webhook for the caller. When it becomes the caller's turn in a game, or a
/// game the caller sits in ends, the server POSTs a JSON notification there, signed with
/// the `secret` of this response (shown only here): header `Stammtisch-Signature:
/// t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, with the delivery id in
/// `Stammtisch-Delivery` (stable across retries). See the README's "Webhooks" section.
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
) -> Result<HttpResponse, WebhookApiError> {
    let url = body.0.url;
    let store = state.service.store().clone();
    let targets = state.webhook_targets;
    let created = blocking(move || webhooks::register(&store, &caller.id, &url, targets)).await?;
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
) -> Result<HttpResponse, WebhookApiError> {
    let store = state.service.store().clone();
    let items = blocking(move || webhooks::list(&store, &caller.id)).await?;
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
) -> Result<HttpResponse, WebhookApiError> {
    let id = uuid::Uuid::parse_str(&path)
        .map(|u| u.to_string())
        .map_err(|_| ApiError::NotFound("webhook"))?;
    let store = state.service.store().clone();
    blocking(move || webhooks::delete(&store, &caller.id, &id)).await?;
    Ok(HttpResponse::NoContent().finish())
}
