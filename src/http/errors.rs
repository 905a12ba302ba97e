//! One error type for the HTTP layer, rendered as RFC 9457 problem+json with a stable `code`.

use serde::Serialize;

use crate::contention::Contention;
use crate::games::ServiceError;
use crate::store::StoreError;

/// Seconds a client is asked to wait (`Retry-After`) when the database is unavailable.
pub const RETRY_AFTER_UNAVAILABLE: u64 = 2;
/// `Retry-After` of `503 server_busy` (no password-hashing slot), in seconds.
pub const RETRY_AFTER_OVERLOADED: u64 = 1;

/// The body of every error response.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Problem {
    /// A URI naming the problem type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Short summary of the problem type: one per `type` (and `code`) and language,
    /// whatever happened this time (that is the `detail`).
    pub title: String,
    /// The response's HTTP status code (e.g. `422`), repeated in the body.
    pub status: u16,
    /// What went wrong this time.
    pub detail: String,
    /// Stable machine-readable code, e.g. `card_not_in_hand`.
    pub code: String,
    /// For `version_conflict`: the game's current version.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub current_version: Option<i32>,
}

/// Why a request counts as not signed in (`401 unauthorized`); the `detail` says which,
/// in English and in German.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotSignedIn {
    /// No `Authorization` header.
    MissingToken,
    /// An `Authorization` header that is not readable text.
    MalformedHeader,
    /// An `Authorization` header of another scheme than `Bearer`.
    NotBearer,
    /// A token past its expiry.
    Expired,
    /// A token that is not one of ours (bad signature, malformed, wrong claims).
    InvalidToken,
    /// A well-signed token whose account is gone.
    UnknownAccount,
    /// A token issued before its account revoked every token (logout everywhere, a
    /// password change).
    Revoked,
    /// A stream ticket that is unknown, used or expired.
    BadTicket,
}

impl NotSignedIn {
    /// The English `detail`.
    #[must_use]
    pub fn english(self) -> &'static str {
        match self {
            Self::MissingToken => "missing bearer token",
            Self::MalformedHeader => "malformed Authorization header",
            Self::NotBearer => "Authorization must be a Bearer token",
            Self::Expired => "token expired",
            Self::InvalidToken => "invalid token",
            Self::UnknownAccount => "the token's account does not exist",
            Self::Revoked => "the token was revoked",
            Self::BadTicket => "unknown, used or expired stream ticket",
        }
    }

    /// The German `detail`.
    #[must_use]
    pub fn german(self) -> &'static str {
        match self {
            Self::MissingToken => "Bitte melde dich an: Es fehlt das Bearer-Token.",
            Self::MalformedHeader => "Der Authorization-Header ist fehlerhaft.",
            Self::NotBearer => "Der Authorization-Header muss ein Bearer-Token tragen.",
            Self::Expired => "Deine Anmeldung ist abgelaufen; bitte melde dich neu an.",
            Self::InvalidToken => "Das Token ist ungültig; bitte melde dich neu an.",
            Self::UnknownAccount => "Das Konto dieses Tokens gibt es nicht (mehr).",
            Self::Revoked => "Dieses Token wurde zurückgezogen; bitte melde dich neu an.",
            Self::BadTicket => "Das Stream-Ticket ist unbekannt, schon benutzt oder abgelaufen.",
        }
    }
}

/// Everything a handler can answer with instead of success.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No or a bad token.
    #[error("{}", .0.english())]
    Unauthorized(NotSignedIn),
    /// Wrong name or password.
    #[error("invalid name or password")]
    InvalidCredentials,
    /// Authenticated but not allowed.
    #[error("{detail}")]
    Forbidden {
        /// The problem's stable `code`.
        code: &'static str,
        /// The problem's `detail` in English (`l10n::german` words it for German callers).
        detail: String,
    },
    /// No such resource.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The name is taken.
    #[error("the name is taken")]
    NameTaken,
    /// The resource is in a state that does not allow this.
    #[error("{detail}")]
    Conflict {
        /// The problem's stable `code`.
        code: &'static str,
        /// The problem's `detail` in English (`l10n::german` words it for German callers).
        detail: String,
    },
    /// Another write came first: `409 version_conflict` or `503 busy`.
    #[error(transparent)]
    Contention(Contention),
    /// A rule refuses the command.
    #[error(transparent)]
    Rule(rules::RuleError),
    /// A score pad refuses the command.
    #[error(transparent)]
    Pad(rules::pad::PadError),
    /// A well-formed request with invalid content.
    #[error("{0}")]
    Validation(String),
    /// A well-formed request that cannot be carried out, with its own code.
    #[error("{detail}")]
    Unprocessable {
        /// The problem's stable `code`.
        code: &'static str,
        /// The problem's `detail` in English (`l10n::german` words it for German callers).
        detail: String,
    },
    /// A request that cannot be parsed.
    #[error("{detail}")]
    BadRequest {
        /// The problem's stable `code`.
        code: &'static str,
        /// The problem's `detail` in English (`l10n::german` words it for German callers).
        detail: String,
    },
    /// The body did not arrive in time.
    #[error("the request body did not arrive in time")]
    RequestTimeout,
    /// Body over the limit.
    #[error("the request body is too large")]
    PayloadTooLarge,
    /// Wrong content type.
    #[error("send application/json")]
    UnsupportedMediaType,
    /// Over a rate limit.
    #[error("{detail}")]
    RateLimited {
        /// Code, e.g. `too_many_commands`.
        code: &'static str,
        /// The problem's `detail` in English (`l10n::german` words it for German callers).
        detail: String,
        /// Seconds until a retry can succeed: the `Retry-After` header.
        retry_after: u64,
    },
    /// The mail server refused or could not be reached (`mail_unavailable`).
    #[error("the mail could not be sent; try again later")]
    MailUnavailable,
    /// Every password-hashing slot stayed taken (`server_busy`, with `Retry-After`).
    #[error("the server is busy checking passwords; retry in {RETRY_AFTER_OVERLOADED} s")]
    Overloaded,
    /// The database is unreachable, or the connection broke mid-query.
    #[error("the database is unavailable; retry in {RETRY_AFTER_UNAVAILABLE} s")]
    Unavailable,
    /// The path exists, but not for this method.
    #[error("this resource answers {allow} only")]
    MethodNotAllowed {
        /// The methods it answers, for the `Allow` header.
        allow: String,
    },
    /// A bug or an outage; the body stays opaque, the log has the cause chain.
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    /// The problem's stable `code` (listed with its titles in `problem_types`).
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unauthorized(_) => "unauthorized",
            Self::InvalidCredentials => "invalid_credentials",
            Self::Forbidden { code, .. }
            | Self::BadRequest { code, .. }
            | Self::Conflict { code, .. }
            | Self::Unprocessable { code, .. }
            | Self::RateLimited { code, .. } => code,
            Self::NotFound(_) => "not_found",
            Self::NameTaken => "name_taken",
            Self::Contention(Contention::VersionConflict { .. }) => "version_conflict",
            Self::Contention(Contention::Busy) => "busy",
            Self::Rule(e) => e.code(),
            Self::Pad(e) => e.code(),
            Self::Validation(_) => "validation_failed",
            Self::PayloadTooLarge => "payload_too_large",
            Self::RequestTimeout => "request_timeout",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::Unavailable => "database_unavailable",
            Self::Overloaded => "server_busy",
            Self::MailUnavailable => "mail_unavailable",
            Self::MethodNotAllowed { .. } => "method_not_allowed",
            Self::Internal(_) => "internal_error",
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::GameNotFound => Self::NotFound("game"),
            ServiceError::TournamentNotFound => Self::NotFound("tournament"),
            ServiceError::Rule(rule) => Self::Rule(rule),
            ServiceError::Contention(c) => Self::Contention(c),
            ServiceError::Store(store) => store.into(),
            ServiceError::Limited(limit) => limit.into(),
            ServiceError::Account(account) => account.into(),
            ServiceError::InvalidCursor => Self::Validation("invalid cursor".into()),
            ServiceError::PlayerNotFound => Self::NotFound("player"),
            ServiceError::NotFinished => Self::Conflict {
                code: "game_not_finished",
                detail: "a rematch needs a finished game".into(),
            },
            ServiceError::IdempotencyKeyReused => Self::Unprocessable {
                code: "idempotency_key_reused",
                detail: "this Idempotency-Key was used for another request within 24 hours".into(),
            },
            other @ (ServiceError::Corrupt { .. } | ServiceError::Encode(_)) => {
                Self::Internal(anyhow::Error::new(other))
            }
        }
    }
}

impl From<crate::pads::PadServiceError> for ApiError {
    fn from(e: crate::pads::PadServiceError) -> Self {
        use crate::pads::PadServiceError as P;
        match e {
            P::NotFound => Self::NotFound("score pad"),
            P::Pad(refusal) => Self::Pad(refusal),
            P::Contention(c) => Self::Contention(c),
            P::Limit(limit) => limit.into(),
            P::Store(store) => store.into(),
            other @ (P::Corrupt { .. } | P::Encode(_)) => Self::Internal(anyhow::Error::new(other)),
        }
    }
}

impl From<crate::limits::LimitError> for ApiError {
    fn from(e: crate::limits::LimitError) -> Self {
        match e {
            crate::limits::LimitError::Exceeded {
                code,
                what,
                retry_after,
            } => Self::RateLimited {
                code,
                detail: format!("{what}; retry in {retry_after} s"),
                retry_after,
            },
            crate::limits::LimitError::Store(e) => e.into(),
        }
    }
}

impl From<crate::accounts::AccountError> for ApiError {
    fn from(e: crate::accounts::AccountError) -> Self {
        use crate::accounts::AccountError as A;
        match e {
            A::InvalidName | A::InvalidPassword => Self::Validation(e.to_string()),
            A::NameTaken => Self::NameTaken,
            A::InvalidCredentials => Self::InvalidCredentials,
            A::UnknownAccount => Self::Unauthorized(NotSignedIn::UnknownAccount),
            A::Revoked => Self::Unauthorized(NotSignedIn::Revoked),
            A::AlreadyRegistered | A::NotRegistered => Self::Conflict {
                code: if matches!(e, A::AlreadyRegistered) {
                    "already_registered"
                } else {
                    "not_registered"
                },
                detail: e.to_string(),
            },
            A::WrongPassword => Self::Forbidden {
                code: "wrong_password",
                detail: e.to_string(),
            },
            A::Limited(limit) => limit.into(),
            A::Busy => Self::Overloaded,
            A::Store(store) => store.into(),
            A::Crypto(_) => Self::Internal(anyhow::Error::new(e)),
        }
    }
}

impl From<crate::vacation::VacationError> for ApiError {
    fn from(e: crate::vacation::VacationError) -> Self {
        use crate::vacation::VacationError as V;
        match e {
            V::Guest => Self::Forbidden {
                code: "guest_has_no_vacation",
                detail: e.to_string(),
            },
            V::NotEnough { .. } => Self::Unprocessable {
                code: "not_enough_vacation",
                detail: e.to_string(),
            },
            V::Invalid(detail) => Self::Validation(detail),
            V::Store(store) => store.into(),
        }
    }
}

impl From<crate::mail::MailError> for ApiError {
    fn from(e: crate::mail::MailError) -> Self {
        use crate::mail::MailError as M;
        match e {
            M::Disabled => Self::Conflict {
                code: "mail_disabled",
                detail: e.to_string(),
            },
            M::Invalid(detail) => Self::Validation(detail),
            M::InvalidToken => Self::NotFound("verification link"),
            M::Send(_) => Self::MailUnavailable,
            M::Store(store) => store.into(),
        }
    }
}

impl From<crate::webhooks::WebhookError> for ApiError {
    fn from(e: crate::webhooks::WebhookError) -> Self {
        use crate::webhooks::WebhookError as W;
        let code = match e {
            W::NotFound => return Self::NotFound("webhook"),
            W::Store(store) => return store.into(),
            W::Invalid(detail) => return Self::Validation(detail),
            W::InvalidUrl(_) => "invalid_url",
            W::NotAllowed(_) => "webhook_url_not_allowed",
            W::TooMany => "too_many_webhooks",
        };
        Self::Unprocessable {
            code,
            detail: e.to_string(),
        }
    }
}

impl From<crate::push::PushError> for ApiError {
    fn from(e: crate::push::PushError) -> Self {
        use crate::push::PushError as P;
        let detail = e.to_string();
        match e {
            P::NotFound => Self::NotFound("push subscription"),
            P::Store(store) => store.into(),
            P::Invalid(detail) => Self::Validation(detail),
            P::InvalidEndpoint(_) => Self::Unprocessable {
                code: "invalid_push_endpoint",
                detail,
            },
            P::EndpointNotAllowed(_) => Self::Unprocessable {
                code: "push_endpoint_not_allowed",
                detail,
            },
            P::InvalidKeys(_) => Self::Unprocessable {
                code: "invalid_push_keys",
                detail,
            },
            P::TooMany => Self::Unprocessable {
                code: "too_many_push_subscriptions",
                detail,
            },
        }
    }
}

impl From<StoreError> for ApiError {
    /// The one mapping of storage failures: an outage or a broken connection
    /// ([`StoreError::is_unavailable`], by error kind) is `503 database_unavailable`, logged
    /// as one warning line; anything else is a 500 with its cause chain in the log.
    fn from(e: StoreError) -> Self {
        if e.is_unavailable() {
            tracing::warn!(error = %crate::telemetry::Chain(&e), "database unavailable");
            Self::Unavailable
        } else {
            Self::Internal(anyhow::Error::new(e))
        }
    }
}

impl From<diesel::result::Error> for ApiError {
    fn from(e: diesel::result::Error) -> Self {
        StoreError::Query(e).into()
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(e: actix_web::error::BlockingError) -> Self {
        Self::Internal(anyhow::anyhow!("blocking task failed: {e}"))
    }
}

/// Maps a JSON body error: syntax → 400, content → 422, size → 413, type → 415.
pub fn json_error(
    err: actix_web::error::JsonPayloadError,
    _req: &actix_web::HttpRequest,
) -> actix_web::Error {
    use actix_web::error::JsonPayloadError as E;
    let api = match &err {
        E::OverflowKnownLength { .. } | E::Overflow { .. } => ApiError::PayloadTooLarge,
        E::ContentType => ApiError::UnsupportedMediaType,
        E::Deserialize(e) if e.is_data() => ApiError::Validation(e.to_string()),
        E::Deserialize(e) => ApiError::BadRequest {
            code: "malformed_json",
            detail: e.to_string(),
        },
        other => ApiError::BadRequest {
            code: "malformed_body",
            detail: other.to_string(),
        },
    };
    api.into()
}

/// Maps a query-string error to 400.
pub fn query_error(
    err: actix_web::error::QueryPayloadError,
    _req: &actix_web::HttpRequest,
) -> actix_web::Error {
    ApiError::BadRequest {
        code: "invalid_query",
        detail: err.to_string(),
    }
    .into()
}

/// Maps a path error to 404.
pub fn path_error(
    _err: actix_web::error::PathError,
    _req: &actix_web::HttpRequest,
) -> actix_web::Error {
    ApiError::NotFound("resource").into()
}
