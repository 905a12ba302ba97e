//! Identity: password hashes (Argon2id), bearer tokens (JWT HS256), the `Caller` extractor
//! and the failed-login limiter. Never logs a token or a password.

use std::collections::HashMap;
use std::future::{Ready, ready};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use argon2::Argon2;
use argon2::password_hash::{
    PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng,
};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::http::errors::ApiError;

/// Token issuer and audience.
pub const ISSUER: &str = "stammtisch";
/// Token audience.
pub const AUDIENCE: &str = "stammtisch-api";

/// Hashes a password with Argon2id and a random salt (PHC string).
///
/// # Errors
/// Only if the hasher fails, which it does not for valid parameters.
pub fn hash_password(password: &str) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::generate(&mut OsRng);
    Ok(Argon2::default()
        .hash_password(password.as_bytes(), &salt)?
        .to_string())
}

/// Whether `password` matches the PHC `hash`.
#[must_use]
pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

/// A burnt hash to verify against for unknown names, so both answers take as long.
pub fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| hash_password("not a password of anyone").unwrap_or_default())
}

/// Claims of an access token.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    /// Account id.
    pub sub: String,
    /// Account name.
    pub name: String,
    /// Issuer.
    pub iss: String,
    /// Audience.
    pub aud: String,
    /// Issued at (seconds).
    pub iat: i64,
    /// Expiry (seconds).
    pub exp: i64,
}

/// Signs and checks tokens with one HS256 secret.
pub struct Tokens {
    encoding: EncodingKey,
    decoding: DecodingKey,
    ttl: Duration,
}

impl Tokens {
    /// Keys from a secret.
    ///
    /// # Errors
    /// A secret the key constructors refuse.
    pub fn new(secret: &[u8], ttl: Duration) -> Result<Self, jsonwebtoken::errors::Error> {
        Ok(Self {
            encoding: EncodingKey::from_secret(secret)?,
            decoding: DecodingKey::from_secret(secret)?,
            ttl,
        })
    }

    /// Lifetime of issued tokens in seconds.
    #[must_use]
    pub fn ttl_seconds(&self) -> u64 {
        self.ttl.as_secs()
    }

    /// Issues a token for an account.
    ///
    /// # Errors
    /// Signing failure.
    pub fn issue(
        &self,
        account_id: &str,
        name: &str,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let now = chrono::Utc::now().timestamp();
        let claims = Claims {
            sub: account_id.into(),
            name: name.into(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            iat: now,
            exp: now + i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX / 2),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
    }

    /// Checks a token: HS256 only, signature, `exp`, `iss` and `aud`.
    ///
    /// # Errors
    /// Any defect of the token.
    pub fn check(&self, token: &str) -> Result<Claims, jsonwebtoken::errors::Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[AUDIENCE]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 5;
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation).map(|d| d.claims)
    }
}

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
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(caller_of(req))
    }
}

/// The caller of a request, from its bearer token.
///
/// # Errors
/// No, a malformed, an expired or a wrongly signed token.
pub fn caller_of(req: &HttpRequest) -> Result<Caller, ApiError> {
    let tokens = req
        .app_data::<web::Data<Tokens>>()
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("token keys not configured")))?;
    let header = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .ok_or(ApiError::Unauthorized("missing bearer token"))?;
    let value = header
        .to_str()
        .map_err(|_| ApiError::Unauthorized("malformed Authorization header"))?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .ok_or(ApiError::Unauthorized(
            "Authorization must be a Bearer token",
        ))?;
    let claims = tokens.check(token.trim()).map_err(|e| {
        use jsonwebtoken::errors::ErrorKind;
        match e.kind() {
            ErrorKind::ExpiredSignature => ApiError::Unauthorized("token expired"),
            _ => ApiError::Unauthorized("invalid token"),
        }
    })?;
    Ok(Caller {
        id: claims.sub,
        name: claims.name,
    })
}

/// Counts failed logins per name; too many within the window get `429`.
pub struct LoginLimiter {
    failures: Mutex<HashMap<String, (u32, Instant)>>,
    max_failures: u32,
    window: Duration,
}

impl LoginLimiter {
    /// A limiter allowing `max_failures` per `window` and name.
    #[must_use]
    pub fn new(max_failures: u32, window: Duration) -> Self {
        Self {
            failures: Mutex::new(HashMap::new()),
            max_failures,
            window,
        }
    }

    /// Seconds to wait when the name is locked out now.
    #[must_use]
    pub fn locked_for(&self, name: &str) -> Option<u64> {
        let map = self
            .failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (count, since) = map.get(&name.to_lowercase())?;
        let elapsed = since.elapsed();
        (*count >= self.max_failures && elapsed < self.window)
            .then(|| (self.window - elapsed).as_secs().max(1))
    }

    /// Records a failed attempt.
    pub fn failed(&self, name: &str) {
        let mut map = self
            .failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.len() > 100_000 {
            let window = self.window;
            map.retain(|_, (_, since)| since.elapsed() < window);
        }
        let entry = map
            .entry(name.to_lowercase())
            .or_insert((0, Instant::now()));
        if entry.1.elapsed() >= self.window {
            *entry = (0, Instant::now());
        }
        entry.0 += 1;
    }

    /// Forgets failures after a successful login.
    pub fn succeeded(&self, name: &str) {
        self.failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&name.to_lowercase());
    }
}
