//! How an [`ApiError`] becomes a response: RFC 9457 problem+json with its stable `code`,
//! titled and worded in English, with the German body attached for [`super::l10n`] to swap
//! in, and the headers a code asks for (`Retry-After`, `WWW-Authenticate`, `Allow`). Also
//! turns the bare error responses of actix and middlewares into problem+json.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};

use super::errors::{ApiError, Problem, RETRY_AFTER_OVERLOADED, RETRY_AFTER_UNAVAILABLE};
use super::l10n::{GermanProblem, Lang, is_problem};
use crate::contention::Contention;

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Unauthorized(_) | Self::InvalidCredentials => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } | Self::Rule(rules::RuleError::NotAPlayer) => {
                StatusCode::FORBIDDEN
            }
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::NameTaken
            | Self::Contention(Contention::VersionConflict { .. })
            | Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::Contention(Contention::Busy)
            | Self::Unavailable
            | Self::MailUnavailable
            | Self::Overloaded => StatusCode::SERVICE_UNAVAILABLE,
            Self::Rule(_) | Self::Pad(_) | Self::Validation(_) | Self::Unprocessable { .. } => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            Self::BadRequest { .. } => StatusCode::BAD_REQUEST,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        if let Self::Internal(e) = self {
            tracing::error!(error = ?e, "internal error");
        }
        let current_version = match self {
            Self::Contention(Contention::VersionConflict { current }) => Some(*current),
            _ => None,
        };
        let english = match self {
            Self::Pad(rules::pad::PadError::ImpossibleRound(why)) => {
                super::l10n::rounds::sentence(why, Lang::En)
            }
            _ => self.to_string(),
        };
        let body = problem_body(status, self.code(), english, current_version, Lang::En);
        let german = problem_body(
            status,
            self.code(),
            super::l10n::german::detail(self),
            current_version,
            Lang::De,
        );
        let mut response = HttpResponse::build(status);
        response.insert_header((header::CONTENT_TYPE, "application/problem+json"));
        match self {
            Self::Unauthorized(_) => {
                response.insert_header((
                    header::WWW_AUTHENTICATE,
                    "Bearer realm=\"stammtisch\", error=\"invalid_token\"",
                ));
            }
            Self::InvalidCredentials => {
                response.insert_header((header::WWW_AUTHENTICATE, "Bearer realm=\"stammtisch\""));
            }
            Self::RateLimited { retry_after, .. } => {
                if let Ok(v) = HeaderValue::from_str(&retry_after.to_string()) {
                    response.insert_header((header::RETRY_AFTER, v));
                }
            }
            Self::Unavailable => {
                response.insert_header((header::RETRY_AFTER, RETRY_AFTER_UNAVAILABLE));
            }
            Self::Overloaded => {
                response.insert_header((header::RETRY_AFTER, RETRY_AFTER_OVERLOADED));
            }
            Self::MethodNotAllowed { allow } => {
                if let Ok(v) = HeaderValue::from_str(allow) {
                    response.insert_header((header::ALLOW, v));
                }
            }
            _ => {}
        }
        let mut response = response.body(body);
        response.extensions_mut().insert(GermanProblem(german));
        response
    }
}

/// A problem+json body for `status` with `code` and `detail`, titled in `lang`.
fn problem_body(
    status: StatusCode,
    code: &str,
    detail: String,
    current_version: Option<i32>,
    lang: Lang,
) -> String {
    serde_json::to_string(&Problem {
        type_: format!(
            "https://stammtisch.example/problems/{}",
            code.replace('_', "-")
        ),
        title: super::problem_types::title(code, lang).to_owned(),
        status: status.as_u16(),
        detail,
        code: code.to_owned(),
        current_version,
    })
    .unwrap_or_default()
}

/// Rewrites an error response that is not problem+json — made by actix itself, the docs
/// UI or a middleware — into one, keeping its status and headers (`Allow`, CORS, …).
///
/// # Errors
/// None; the signature is the one `ErrorHandlers` wants.
pub fn bare_error_to_problem<B>(
    res: actix_web::dev::ServiceResponse<B>,
) -> actix_web::Result<actix_web::middleware::ErrorHandlerResponse<B>> {
    use actix_web::middleware::ErrorHandlerResponse;
    if is_problem(res.headers()) {
        return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
    }
    let status = res.status();
    let code = match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::REQUEST_TIMEOUT => "request_timeout",
        StatusCode::SERVICE_UNAVAILABLE => "unavailable",
        s if s.is_server_error() => "internal_error",
        _ => "bad_request",
    };
    let detail = status
        .canonical_reason()
        .unwrap_or("the request was refused")
        .to_lowercase();
    let german = format!("{}.", super::l10n::title(status, Lang::De));
    let (req, old) = res.into_parts();
    let mut new = HttpResponse::build(status)
        .content_type("application/problem+json")
        .body(problem_body(status, code, detail, None, Lang::En));
    new.extensions_mut().insert(GermanProblem(problem_body(
        status,
        code,
        german,
        None,
        Lang::De,
    )));
    for (name, value) in old.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            new.headers_mut().append(name.clone(), value.clone());
        }
    }
    Ok(ErrorHandlerResponse::Response(
        actix_web::dev::ServiceResponse::new(req, new).map_into_right_body(),
    ))
}
