//! Accounts, guests, tokens and `/v1/me`.

use actix_web::{HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::errors::{ApiError, Problem};
use super::{AppState, Body, TokenData, blocking};
use crate::auth::{self, Caller};
use crate::store::{AccountRow, StoreError};

/// Registration of an account.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAccount {
    /// 3–32 of `A–Z a–z 0–9 _ -`.
    pub name: String,
    /// 8–128 characters.
    pub password: String,
}

/// A guest's chosen name.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewGuest {
    /// 3–32 of `A–Z a–z 0–9 _ -`.
    pub name: String,
}

/// Login.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    /// Account name.
    pub name: String,
    /// Password.
    pub password: String,
}

/// An account.
#[derive(Serialize, ToSchema)]
pub struct Account {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// A password-less quick-play account.
    pub guest: bool,
    /// Roles such as `analyst`.
    pub roles: Vec<String>,
    /// Creation time (UTC, RFC 3339).
    pub created_at: String,
}

impl From<AccountRow> for Account {
    fn from(a: AccountRow) -> Self {
        Self {
            id: a.id,
            name: a.name,
            guest: a.guest,
            roles: a
                .roles
                .split(',')
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect(),
            created_at: a.created_at.and_utc().to_rfc3339(),
        }
    }
}

/// A bearer token.
#[derive(Serialize, ToSchema)]
pub struct Token {
    /// The JWT.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds until it expires.
    pub expires_in: u64,
}

/// A guest account with its token.
#[derive(Serialize, ToSchema)]
pub struct GuestToken {
    /// The new account.
    pub account: Account,
    /// The JWT.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds until it expires.
    pub expires_in: u64,
}

fn valid_name(name: &str) -> Result<(), ApiError> {
    let ok = (3..=32).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(ApiError::Validation(
            "name must be 3–32 characters of A–Z, a–z, 0–9, _ and -".into(),
        ))
    }
}

fn new_row(name: String, password_hash: Option<String>) -> AccountRow {
    AccountRow {
        id: uuid::Uuid::now_v7().to_string(),
        name,
        guest: password_hash.is_none(),
        password_hash,
        roles: String::new(),
        created_at: chrono::Utc::now().naive_utc(),
    }
}

fn issue(tokens: &TokenData, row: &AccountRow) -> Result<String, ApiError> {
    tokens
        .issue(&row.id, &row.name)
        .map_err(|e| ApiError::Internal(e.into()))
}

/// Creates an account with a password.
#[utoipa::path(
    operation_id = "create_account",
    tag = "identity",
    security(()),
    request_body = NewAccount,
    responses(
        (status = 201, body = Account),
        (status = 409, description = "`name_taken`", body = Problem),
        (status = 422, description = "`validation_failed`", body = Problem)
    )
)]
#[post("/v1/accounts")]
pub async fn create_account(
    state: web::Data<AppState>,
    body: Body<NewAccount>,
) -> Result<HttpResponse, ApiError> {
    let NewAccount { name, password } = body.0;
    valid_name(&name)?;
    if !(8..=128).contains(&password.chars().count()) {
        return Err(ApiError::Validation(
            "password must be 8–128 characters".into(),
        ));
    }
    let row = blocking(move || {
        let hash = auth::hash_password(&password)
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("hashing: {e}")))?;
        let row = new_row(name, Some(hash));
        state
            .service
            .store()
            .write(|tx| match tx.insert_account(&row) {
                Err(StoreError::Duplicate) => Err(ApiError::NameTaken),
                other => other.map_err(ApiError::from),
            })?;
        Ok(row)
    })
    .await?;
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
    responses((status = 201, body = GuestToken), (status = 422, description = "`validation_failed`", body = Problem))
)]
#[post("/v1/guests")]
pub async fn create_guest(
    state: web::Data<AppState>,
    tokens: TokenData,
    body: Body<NewGuest>,
) -> Result<HttpResponse, ApiError> {
    let NewGuest { name } = body.0;
    valid_name(&name)?;
    let row = new_row(name, None);
    let stored = row.clone();
    blocking(move || {
        state
            .service
            .store()
            .write(|tx| tx.insert_account(&stored).map_err(ApiError::from))
    })
    .await?;
    let access_token = issue(&tokens, &row)?;
    Ok(HttpResponse::Created().json(GuestToken {
        account: Account::from(row),
        access_token,
        token_type: "Bearer",
        expires_in: tokens.ttl_seconds(),
    }))
}

/// Issues a token for a name and password. Repeated failures for a name get `429`.
#[utoipa::path(
    operation_id = "create_token",
    tag = "identity",
    security(()),
    request_body = Credentials,
    responses(
        (status = 200, body = Token),
        (status = 401, description = "`invalid_credentials`", body = Problem),
        (status = 429, description = "`rate_limited`", body = Problem)
    )
)]
#[post("/v1/tokens")]
pub async fn create_token(
    state: web::Data<AppState>,
    tokens: TokenData,
    body: Body<Credentials>,
) -> Result<HttpResponse, ApiError> {
    let Credentials { name, password } = body.0;
    if let Some(retry_after) = state.limiter.locked_for(&name) {
        return Err(ApiError::RateLimited { retry_after });
    }
    let lookup = name.clone();
    let st = state.clone();
    let found = blocking(move || {
        let row = st
            .service
            .store()
            .read(|tx| tx.account_by_name(&lookup).map_err(ApiError::from))?;
        // Verify against a dummy hash for unknown names so both answers cost the same.
        let hash = row
            .as_ref()
            .and_then(|r| r.password_hash.clone())
            .unwrap_or_else(|| auth::dummy_hash().to_owned());
        let ok = auth::verify_password(&password, &hash);
        Ok(row.filter(|_| ok))
    })
    .await?;
    let Some(row) = found else {
        state.limiter.failed(&name);
        return Err(ApiError::InvalidCredentials);
    };
    state.limiter.succeeded(&name);
    let access_token = issue(&tokens, &row)?;
    Ok(HttpResponse::Ok().json(Token {
        access_token,
        token_type: "Bearer",
        expires_in: tokens.ttl_seconds(),
    }))
}

/// The caller's account.
#[utoipa::path(
    operation_id = "me",
    tag = "identity",
    responses((status = 200, body = Account), (status = 401, description = "`unauthorized`", body = Problem))
)]
#[get("/v1/me")]
pub async fn me(state: web::Data<AppState>, caller: Caller) -> Result<HttpResponse, ApiError> {
    let row = blocking(move || {
        state
            .service
            .store()
            .read(|tx| tx.account_by_id(&caller.id).map_err(ApiError::from))
    })
    .await?
    .ok_or(ApiError::Unauthorized(
        "the token's account no longer exists",
    ))?;
    Ok(HttpResponse::Ok().json(Account::from(row)))
}
