//! The reference web client: the files of `clients/web/dist/`, embedded in the binary at
//! build time (so a fresh `cargo run --release` serves it with no Node installed) and
//! served at `/`. The client routes with the URL fragment, so no fallback route is needed.
//! Files are revalidated by their SHA-256 `ETag` on every load (`Cache-Control: no-cache`).

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};

use super::errors::ApiError;

#[derive(rust_embed::Embed)]
#[folder = "clients/web/dist/"]
struct Assets;

/// Serves an embedded file for `GET`/`HEAD` of a path that is not an API route; another
/// method on an API route is a `405` problem with `Allow`; anything else a `404` problem.
pub async fn asset_or_not_found(req: HttpRequest) -> HttpResponse {
    let found = (req.method() == actix_web::http::Method::GET
        || req.method() == actix_web::http::Method::HEAD)
        .then(|| {
            let path = req.path().trim_start_matches('/');
            let path = if path.is_empty() { "index.html" } else { path };
            Assets::get(path)
        })
        .flatten();
    let Some(file) = found else {
        let error = match super::methods_of(req.path()) {
            Some(allow) => ApiError::MethodNotAllowed { allow },
            None => ApiError::NotFound("route"),
        };
        return actix_web::ResponseError::error_response(&error);
    };
    let etag = format!("\"{}\"", hex::encode(file.metadata.sha256_hash()));
    let fresh = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut response = if fresh {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    // `X-Content-Type-Options: nosniff` comes with every answer (`super::headers`).
    response
        .insert_header((header::ETAG, etag))
        .insert_header((header::CACHE_CONTROL, "no-cache"));
    if fresh {
        return response.finish();
    }
    response
        .content_type(file.metadata.mimetype())
        .body(file.data.into_owned())
}

/// Whether the build embedded a client (`clients/web/dist/index.html`).
#[must_use]
pub fn has_client() -> bool {
    Assets::get("index.html").is_some()
}
