//! The reference web client: the files of `clients/web/dist/`, embedded in the binary at
//! build time (so a fresh `cargo run --release` serves it with no Node installed) and
//! served at `/`. The client routes with the URL fragment, so no fallback route is needed.
//!
//! The page names its script and stylesheet with their content hash (`app.js?v=<hash>`):
//! asked for under the hash it has, a file may be kept for a year (`Cache-Control:
//! immutable`); anything else (the page, an old or missing hash) is revalidated by its
//! SHA-256 `ETag` on every load (`no-cache`). Text files go out gzipped to a client that
//! accepts it, compressed once per process.

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
    let path = req.path().trim_start_matches('/');
    let hash = hex::encode(file.metadata.sha256_hash());
    let gzip = accepts_gzip(&req).then(|| gzipped(path)).flatten();
    // A strong ETag names one representation: the gzipped one has its own.
    let etag = match gzip {
        Some(_) => format!("\"{hash}.gz\""),
        None => format!("\"{hash}\""),
    };
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
        .insert_header((header::CACHE_CONTROL, cache_control(&req, &hash)));
    if compressible(file.metadata.mimetype()) {
        response.insert_header((header::VARY, "Accept-Encoding"));
    }
    if fresh {
        return response.finish();
    }
    response.content_type(file.metadata.mimetype());
    match gzip {
        Some(bytes) => response
            .insert_header((header::CONTENT_ENCODING, "gzip"))
            .body(bytes),
        None => response.body(file.data.into_owned()),
    }
}

/// How long a file may be kept: a year, unchanged, when the URL names the file's content
/// (`?v=` and the first 12 hex digits of its SHA-256, as `clients/web/build.mjs` writes
/// them); otherwise it is revalidated on every load.
fn cache_control(req: &HttpRequest, hash: &str) -> &'static str {
    let named = req.query_string().split('&').any(|pair| {
        pair.strip_prefix("v=")
            .is_some_and(|v| hash.get(..12) == Some(v))
    });
    if named {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    }
}

/// Whether the request accepts gzip (`Accept-Encoding`, not with `q=0`).
fn accepts_gzip(req: &HttpRequest) -> bool {
    req.headers()
        .get_all(header::ACCEPT_ENCODING)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let coding = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
}

/// Text is worth compressing; images and fonts are compressed already.
fn compressible(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime.ends_with("javascript")
        || mime.ends_with("json")
        || mime.ends_with("+xml")
}

/// The gzipped bytes of an embedded text file, compressed at the first request for any
/// file and kept for the process; `None` for a file not worth it.
fn gzipped(path: &str) -> Option<Vec<u8>> {
    static GZIPPED: std::sync::OnceLock<std::collections::HashMap<String, Vec<u8>>> =
        std::sync::OnceLock::new();
    GZIPPED
        .get_or_init(|| {
            Assets::iter()
                .filter_map(|name| {
                    let file = Assets::get(&name)?;
                    if !compressible(file.metadata.mimetype()) {
                        return None;
                    }
                    let bytes = gzip(&file.data)?;
                    (bytes.len() < file.data.len()).then(|| (name.into_owned(), bytes))
                })
                .collect()
        })
        .get(path)
        .cloned()
}

fn gzip(data: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).ok()?;
    encoder.finish().ok()
}

/// Whether the build embedded a client (`clients/web/dist/index.html`).
#[must_use]
pub fn has_client() -> bool {
    Assets::get("index.html").is_some()
}
