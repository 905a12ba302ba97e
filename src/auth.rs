//! Identity primitives: password hashes (Argon2id) and bearer tokens (JWT HS256). Never
//! logs a token or a password. The accounts service (`crate::accounts`) uses them; the
//! `Caller` extractor lives in `crate::http::caller`.

use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::{
    PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng,
};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

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
    /// The account's token version at issue: a token whose version is not the account's
    /// current one is revoked (logout everywhere, password change, deletion). Tokens from
    /// before versions existed read as 0.
    #[serde(default)]
    pub ver: i32,
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
        version: i32,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let now = chrono::Utc::now().timestamp();
        let claims = Claims {
            sub: account_id.into(),
            name: name.into(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            iat: now,
            exp: now + i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX / 2),
            ver: version,
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
