//! Security headers on every answer: a Content-Security-Policy, `Referrer-Policy:
//! no-referrer` (invite codes and stream tickets travel in URLs, which must not leak to
//! other sites through `Referer`), `X-Frame-Options: DENY` (with `frame-ancestors 'none'`:
//! no page may frame ours) and `X-Content-Type-Options: nosniff`.
//!
//! The web client (`/` and its files) and every API answer get [`PAGE_POLICY`]: scripts,
//! styles, fonts and connections from this origin only, no inline script or style, no
//! `eval`. The interactive API documentation under `/docs/` (Swagger UI) inserts a `<style>`
//! element from its script, so it gets [`DOCS_POLICY`], which differs only in allowing
//! inline styles (`style-src 'unsafe-inline'`); its scripts stay this origin's files, and
//! "Try it out" works (`connect-src 'self'`). The docs show no input of players.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;

/// The policy of the web client, its files and the API's answers.
pub const PAGE_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The policy of the API documentation (Swagger UI) under `/docs/`.
pub const DOCS_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
     font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

/// Middleware: adds the security headers to every answer, errors included.
///
/// # Errors
/// None of its own; passes on an error of the inner service.
pub async fn security(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let path = req.path();
    let policy = if path == "/docs" || path.starts_with("/docs/") {
        DOCS_POLICY
    } else {
        PAGE_POLICY
    };
    // Inner errors are answers by now (`ErrorHandlers` and the handlers' `ApiError`s).
    let mut res = next.call(req).await?.map_into_boxed_body();
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(policy),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(res)
}
