//! Web Push: the server's VAPID public key, the caller's browsers (push subscriptions)
//! and push choices. A subscription is its owner's: to every other account it does not
//! exist.

use actix_web::http::header;
use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::Serialize;
use utoipa::ToSchema;

use super::caller::Caller;
use super::errors::{ApiError, Problem};
use super::l10n::Lang;
use super::{AppState, Body, blocking};
use crate::push::{NewSubscription, PushChoices, PushSettings, SubscriptionBody};

/// The key browsers subscribe with.
#[derive(Debug, Serialize, ToSchema)]
pub struct PushKey {
    /// The server's VAPID public key (RFC 8292): the uncompressed P-256 point, base64url
    /// without padding. Pass it, decoded, as `applicationServerKey` to
    /// `pushManager.subscribe`.
    pub public_key: String,
}

/// The caller's push subscriptions.
#[derive(Debug, Serialize, ToSchema)]
pub struct PushSubscriptionPage {
    /// Subscriptions, oldest first (at most 10).
    pub items: Vec<SubscriptionBody>,
    /// Always `null`: the list fits one page.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// The server's VAPID public key, for `pushManager.subscribe({ userVisibleOnly: true,
/// applicationServerKey })`. It stays the same across restarts (kept in the database, or
/// `VAPID_PRIVATE_KEY`).
#[utoipa::path(
    operation_id = "get_push_key",
    tag = "push",
    security(()),
    responses((status = 200, body = PushKey))
)]
#[get("/v1/push/key")]
pub async fn push_key(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(PushKey {
        public_key: state.push.public_key().to_owned(),
    })
}

/// The caller's push choices and how many browsers it subscribed.
#[utoipa::path(
    operation_id = "get_push_settings",
    tag = "push",
    responses(
        (status = 200, body = PushSettings),
        (status = 401, description = "`unauthorized`", body = Problem)
    )
)]
#[get("/v1/me/push")]
pub async fn get_push_settings(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let body = blocking(move || state.push.settings(&caller.id)).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// Changes the caller's push choices ("your turn", "deadline in less than N hours", "game
/// finished", "rematch offered"); absent fields stay. They hold for every browser of the
/// caller.
#[utoipa::path(
    operation_id = "set_push_choices",
    tag = "push",
    request_body = PushChoices,
    responses(
        (status = 200, body = PushSettings),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem)
    )
)]
#[patch("/v1/me/push")]
pub async fn set_push_choices(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<PushChoices>,
) -> Result<HttpResponse, ApiError> {
    let choices = body.0;
    let body = blocking(move || state.push.choose(&caller.id, &choices)).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// Subscribes a browser to the caller's notifications: the body is the browser's
/// `PushSubscription.toJSON()` (optionally with `language`). The server then sends its
/// notifications to the endpoint, encrypted for the browser (RFC 8291, `aes128gcm`) and
/// signed with its VAPID key (RFC 8292); each decrypts to a JSON object with `kind`,
/// `title`, `body`, `url` (`#/games/<id>`), `tag`, `game_id` and `ruleset`. The same
/// browser again keeps its subscription with the new keys (`200`); an endpoint another
/// account subscribed moves to the caller. See docs/push.md.
#[utoipa::path(
    operation_id = "create_push_subscription",
    tag = "push",
    request_body = NewSubscription,
    responses(
        (status = 201, description = "subscribed", body = SubscriptionBody, headers(("Location" = String))),
        (status = 200, description = "the browser was subscribed already; its keys and language are updated", body = SubscriptionBody),
        (status = 400, description = "malformed body", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`, `invalid_push_endpoint` (not an https URL), `push_endpoint_not_allowed` (a private, loopback, link-local, metadata or other internal address, or a name resolving to one), `invalid_push_keys`, `too_many_push_subscriptions` (at most 10 per account)", body = Problem)
    )
)]
#[post("/v1/me/push-subscriptions")]
pub async fn create_push_subscription(
    state: web::Data<AppState>,
    caller: Caller,
    lang: Lang,
    body: Body<NewSubscription>,
) -> Result<HttpResponse, ApiError> {
    let new = body.0;
    let service = state.push.clone();
    let (created, fresh) =
        blocking(move || service.subscribe(&caller.id, &new, lang.tag())).await?;
    Ok(if fresh {
        HttpResponse::Created()
            .insert_header((
                header::LOCATION,
                format!("/v1/me/push-subscriptions/{}", created.id),
            ))
            .json(&created)
    } else {
        HttpResponse::Ok().json(&created)
    })
}

/// The caller's push subscriptions, without their keys.
#[utoipa::path(
    operation_id = "list_push_subscriptions",
    tag = "push",
    responses(
        (status = 200, body = PushSubscriptionPage),
        (status = 401, description = "`unauthorized`", body = Problem)
    )
)]
#[get("/v1/me/push-subscriptions")]
pub async fn list_push_subscriptions(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let service = state.push.clone();
    let items = blocking(move || service.list(&caller.id)).await?;
    Ok(HttpResponse::Ok().json(PushSubscriptionPage {
        items,
        next_cursor: None,
    }))
}

/// Unsubscribes one of the caller's browsers; its notifications not yet sent are dropped.
#[utoipa::path(
    operation_id = "delete_push_subscription",
    tag = "push",
    params(("id" = String, Path, description = "Push subscription id")),
    responses(
        (status = 204, description = "deleted"),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found` (also for another account's subscription)", body = Problem)
    )
)]
#[delete("/v1/me/push-subscriptions/{id}")]
pub async fn delete_push_subscription(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = uuid::Uuid::parse_str(&path)
        .map(|u| u.to_string())
        .map_err(|_| ApiError::NotFound("push subscription"))?;
    let service = state.push.clone();
    blocking(move || service.unsubscribe(&caller.id, &id)).await?;
    Ok(HttpResponse::NoContent().finish())
}
