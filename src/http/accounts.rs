//! Accounts, guests, tokens and `/v1/me`.

use actix_web::{HttpRequest, HttpResponse, delete, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::caller::Caller;
use super::errors::{ApiError, NotSignedIn, Problem};
use super::{AppState, Body, blocking};
use crate::accounts;

/// Registration of an account.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAccount {
    /// 3–32 of `A–Z a–z 0–9 _ -`.
    #[schema(min_length = 3, max_length = 32, pattern = "^[A-Za-z0-9_-]{3,32}$")]
    pub name: String,
    /// 8–128 characters.
    #[schema(min_length = 8, max_length = 128)]
    pub password: String,
}

/// A guest's chosen name.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewGuest {
    /// 3–32 of `A–Z a–z 0–9 _ -`.
    #[schema(min_length = 3, max_length = 32, pattern = "^[A-Za-z0-9_-]{3,32}$")]
    pub name: String,
}

/// An account's name and password, exchanged for a token at `POST /v1/tokens`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    /// Account name (longer names cannot exist and are refused before any work).
    #[schema(max_length = 32)]
    pub name: String,
    /// Password (at most 128 characters, like every password).
    #[schema(max_length = 128)]
    pub password: String,
}

/// An account as its owner sees it.
#[derive(Serialize, ToSchema)]
pub struct Account {
    /// The account's id (a UUID); games, events and `/v1/players/{id}` name people by it.
    pub id: String,
    /// The name the account logs in with and others see (3–32 of `A–Z a–z 0–9 _ -`).
    pub name: String,
    /// A password-less quick-play account.
    pub guest: bool,
    /// Roles such as `analyst`.
    pub roles: Vec<String>,
    /// Creation time (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<accounts::Account> for Account {
    fn from(a: accounts::Account) -> Self {
        Self {
            id: a.id,
            name: a.name,
            guest: a.guest,
            roles: a.roles,
            created_at: a.created_at.to_rfc3339(),
        }
    }
}

/// An access token for the `Authorization: Bearer` header.
#[derive(Serialize, ToSchema)]
pub struct Token {
    /// The signed JWT to send as `Authorization: Bearer <access_token>`.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds until it expires.
    pub expires_in: u64,
}

impl From<crate::accounts::Issued> for Token {
    fn from(issued: crate::accounts::Issued) -> Self {
        Self {
            access_token: issued.token,
            token_type: "Bearer",
            expires_in: issued.expires_in,
        }
    }
}

/// A guest account with its token.
#[derive(Serialize, ToSchema)]
pub struct GuestToken {
    /// The new account.
    pub account: Account,
    /// The signed JWT to send as `Authorization: Bearer <access_token>`.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds until it expires.
    pub expires_in: u64,
}

/// Creates an account with a password.
#[utoipa::path(
    operation_id = "create_account",
    tag = "identity",
    security(()),
    request_body = NewAccount,
    responses(
        (status = 201, body = Account),
        (status = 409, description = "`name_taken` (by a registered account or a guest)", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem),
        (status = 429, description = "`too_many_accounts` from this client address", body = Problem),
        (status = 503, description = "`server_busy`: no password-hashing slot in time; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/accounts")]
pub async fn create_account(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body<NewAccount>,
) -> Result<HttpResponse, ApiError> {
    let NewAccount { name, password } = body.0;
    let address = super::client_address(&req);
    let row = blocking(move || state.accounts.register(name, &password, &address)).await?;
    Ok(HttpResponse::Created()
        .insert_header(("Location", format!("/v1/accounts/{}", row.id)))
        .json(Account::from(row)))
}

/// Creates a password-less guest account and returns a token for it.
#[utoipa::path(
    operation_id = "create_guest",
    tag = "identity",
    security(()),
    request_body = NewGuest,
    responses(
        (status = 201, body = GuestToken),
        (status = 409, description = "`name_taken` (by a registered account or a guest)", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem),
        (status = 429, description = "`too_many_guests` from this client address", body = Problem)
    )
)]
#[post("/v1/guests")]
pub async fn create_guest(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body<NewGuest>,
) -> Result<HttpResponse, ApiError> {
    let NewGuest { name } = body.0;
    let address = super::client_address(&req);
    let (row, issued) = blocking(move || state.accounts.guest(name, &address)).await?;
    Ok(HttpResponse::Created().json(GuestToken {
        account: Account::from(row),
        access_token: issued.token,
        token_type: "Bearer",
        expires_in: issued.expires_in,
    }))
}

/// Issues a token for a name and password. Too many attempts from the client's address,
/// or too many failures for the name from that address, get `429`; the owner signing in
/// from another address is not affected.
#[utoipa::path(
    operation_id = "create_token",
    tag = "identity",
    security(()),
    request_body = Credentials,
    responses(
        (status = 200, body = Token),
        (status = 401, description = "`invalid_credentials`", body = Problem),
        (status = 422, description = "`validation_failed`: a name or password longer than any can be", body = Problem),
        (status = 429, description = "`rate_limited`: too many password attempts from this address (for the name, or overall)", body = Problem),
        (status = 503, description = "`server_busy`: no password-hashing slot in time; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/tokens")]
pub async fn create_token(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body<Credentials>,
) -> Result<HttpResponse, ApiError> {
    let Credentials { name, password } = body.0;
    let address = super::client_address(&req);
    let issued = blocking(move || state.accounts.login(&name, &password, &address)).await?;
    Ok(HttpResponse::Ok().json(Token::from(issued)))
}

/// The caller's account.
#[utoipa::path(
    operation_id = "me",
    tag = "identity",
    responses((status = 200, body = Account), (status = 401, description = "`unauthorized`", body = Problem))
)]
#[get("/v1/me")]
pub async fn me(state: web::Data<AppState>, caller: Caller) -> Result<HttpResponse, ApiError> {
    let row = blocking(move || state.accounts.find(&caller.id))
        .await?
        .ok_or(ApiError::Unauthorized(NotSignedIn::UnknownAccount))?;
    Ok(HttpResponse::Ok().json(Account::from(row)))
}

/// A guest's registration: the account keeps its id, games, seats and results.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    /// The registered name (3–32 of `A–Z a–z 0–9 _ -`); the guest's name when absent.
    #[schema(min_length = 3, max_length = 32, pattern = "^[A-Za-z0-9_-]{3,32}$")]
    pub name: Option<String>,
    /// 8–128 characters.
    #[schema(min_length = 8, max_length = 128)]
    pub password: String,
}

/// An account with a fresh token for it.
#[derive(Serialize, ToSchema)]
pub struct AccountToken {
    /// The account, now registered (its id unchanged).
    pub account: Account,
    /// The signed JWT to send as `Authorization: Bearer <access_token>`.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds until it expires.
    pub expires_in: u64,
}

/// A password change.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordChange {
    /// The current password.
    pub current_password: String,
    /// The new password, 8–128 characters.
    #[schema(min_length = 8, max_length = 128)]
    pub new_password: String,
}

/// The confirmation of an account's deletion.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Deletion {
    /// The account's password (required for a registered account; a guest has none).
    pub password: Option<String>,
}

/// Turns the caller's guest account into a registered one: the same id, so its games,
/// seats and results stay. Answers the account and a token for its new name; the guest's
/// older tokens stop working.
#[utoipa::path(
    operation_id = "register_guest",
    tag = "identity",
    request_body = Registration,
    responses(
        (status = 200, body = AccountToken),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 409, description = "`already_registered`, `name_taken`", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem),
        (status = 503, description = "`server_busy`: no password-hashing slot in time; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/me/register")]
pub async fn register_guest(
    state: web::Data<AppState>,
    caller: Caller,
    body: Body<Registration>,
) -> Result<HttpResponse, ApiError> {
    let Registration { name, password } = body.0;
    let (row, issued) = blocking(move || {
        let registered = state.accounts.register_guest(&caller.id, name, &password)?;
        // The guest's tokens are revoked: so are the streams they opened.
        state.streams.recheck(&caller.id);
        Ok::<_, ApiError>(registered)
    })
    .await?;
    Ok(HttpResponse::Ok().json(AccountToken {
        account: Account::from(row),
        access_token: issued.token,
        token_type: "Bearer",
        expires_in: issued.expires_in,
    }))
}

/// Changes the caller's password (the current one is required). Every token issued before
/// stops working, on every replica; the answer carries a fresh one.
#[utoipa::path(
    operation_id = "change_password",
    tag = "identity",
    request_body = PasswordChange,
    responses(
        (status = 200, body = Token),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 403, description = "`wrong_password`: the current password is wrong", body = Problem),
        (status = 409, description = "`not_registered`: a guest has no password", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem),
        (status = 429, description = "`rate_limited`: too many password attempts (counted with the logins)", body = Problem),
        (status = 503, description = "`server_busy`: no password-hashing slot in time; see `Retry-After`", body = Problem)
    )
)]
#[post("/v1/me/password")]
pub async fn change_password(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    body: Body<PasswordChange>,
) -> Result<HttpResponse, ApiError> {
    let PasswordChange {
        current_password,
        new_password,
    } = body.0;
    let address = super::client_address(&req);
    let issued = blocking(move || {
        let issued = state.accounts.change_password(
            &caller.id,
            &current_password,
            &new_password,
            &address,
        )?;
        state.streams.recheck(&caller.id);
        Ok::<_, ApiError>(issued)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Token::from(issued)))
}

/// Logs the caller out everywhere: every token of the account stops working at once, on
/// every replica (the account's token version, in the database, is checked per request),
/// its live streams end (on other replicas within `STREAM_REVOCATION_CHECK_MS`) and its
/// stream tickets no longer redeem.
#[utoipa::path(
    operation_id = "logout_everywhere",
    tag = "identity",
    responses(
        (status = 204, description = "every token of the account is revoked"),
        (status = 401, description = "`unauthorized`", body = Problem)
    )
)]
#[post("/v1/me/logout")]
pub async fn logout_everywhere(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    blocking(move || {
        state.accounts.logout_everywhere(&caller.id)?;
        // This replica's streams of the account end before the answer (others' within
        // `STREAM_REVOCATION_CHECK_MS`).
        state.streams.recheck(&caller.id);
        Ok::<_, ApiError>(())
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Deletes the caller's account: name, password, roles, e-mail address, reminders and
/// webhooks are removed and every token stops working. Games keep the seat, shown as
/// `deleted player`: in running games a bot plays it from then on (`seat_resigned`), and it
/// leaves the lobbies it sits in. A lobby it hosts (which nobody else could start) is closed
/// to everyone else: made private without an invite code, the seats a rematch kept released
/// and the other seats freed (`seat_removed`). The event log, which names accounts by id
/// only, stays intact.
#[utoipa::path(
    operation_id = "delete_me",
    tag = "identity",
    request_body = Deletion,
    responses(
        (status = 204, description = "deleted"),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 403, description = "`wrong_password`: missing or wrong password", body = Problem),
        (status = 429, description = "`rate_limited`: too many password attempts (counted with the logins)", body = Problem),
        (status = 503, description = "`server_busy`: no password-hashing slot in time; see `Retry-After`", body = Problem)
    )
)]
#[delete("/v1/me")]
pub async fn delete_me(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    body: Body<Deletion>,
) -> Result<HttpResponse, ApiError> {
    let Deletion { password } = body.0;
    let address = super::client_address(&req);
    blocking(move || {
        state
            .accounts
            .delete(&caller.id, password.as_deref(), &address)
            ?;
        state.streams.recheck(&caller.id);
        // The account is gone either way; a game that cannot be handed over is logged.
        if let Err(e) = state.service.hand_over_seats(&caller.id) {
            tracing::warn!(error = %crate::telemetry::Chain(&e), "could not hand a deleted account's seats to bots");
        }
        Ok::<_, ApiError>(())
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}
