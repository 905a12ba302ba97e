//! The `Caller` extractor: the account a request speaks for. A bearer token must be well
//! formed, correctly signed, unexpired, name an account that still exists and is not
//! deleted, and carry the account's current token version (checked on every request
//! against the account's row, so logout everywhere, a password change or a deletion
//! revokes every token at once, on every replica).

use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use futures_util::future::LocalBoxFuture;

use super::errors::{ApiError, NotSignedIn};
use super::{AppState, blocking};
use crate::auth::Claims;

/// The authenticated caller of a request.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Account id.
    pub id: String,
    /// Account name.
    pub name: String,
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let claimed = Claimed::extract(req);
        Box::pin(async move {
            let claimed = claimed.await?;
            let state = state.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("no state")))?;
            blocking(move || claimed.resolve(&state)).await
        })
    }
}

/// A request's bearer token, well formed, correctly signed and unexpired, but not yet
/// checked against the account's row: for a handler that does that check
/// ([`Claimed::resolve`]) at the start of its own blocking call, or hands it to the
/// service with the command (`CommandRequest::token_version`: a batched command's account
/// is read with its batch, costing no hand-off or connection of its own on the command
/// path). It must be checked before the handler answers anything else.
#[derive(Debug)]
pub struct Claimed(Claims);

impl Claimed {
    /// The account the token names (not yet checked against its row).
    #[must_use]
    pub fn account(&self) -> &str {
        &self.0.sub
    }

    /// The token version the token carries.
    #[must_use]
    pub fn token_version(&self) -> i32 {
        self.0.ver
    }

    /// The caller, if the token's account still exists, is not deleted and has not
    /// revoked the token. Blocking.
    ///
    /// # Errors
    /// 401 as for [`Caller`], storage failure.
    pub fn resolve(&self, state: &AppState) -> Result<Caller, ApiError> {
        let row = state.accounts.resolve(&self.0)?;
        Ok(Caller {
            id: row.id,
            name: row.name,
        })
    }
}

impl FromRequest for Claimed {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(
            req.app_data::<web::Data<AppState>>()
                .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("no application state")))
                .and_then(|s| claims_of(req, s))
                .map(Claimed),
        )
    }
}

/// The checked claims of the request's bearer token.
fn claims_of(req: &HttpRequest, state: &AppState) -> Result<Claims, ApiError> {
    let header = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .ok_or(ApiError::Unauthorized(NotSignedIn::MissingToken))?;
    let value = header
        .to_str()
        .map_err(|_| ApiError::Unauthorized(NotSignedIn::MalformedHeader))?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .ok_or(ApiError::Unauthorized(NotSignedIn::NotBearer))?;
    state.accounts.tokens().check(token.trim()).map_err(|e| {
        use jsonwebtoken::errors::ErrorKind;
        match e.kind() {
            ErrorKind::ExpiredSignature => ApiError::Unauthorized(NotSignedIn::Expired),
            _ => ApiError::Unauthorized(NotSignedIn::InvalidToken),
        }
    })
}
