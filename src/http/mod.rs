//! The HTTP face: routes, extractor configuration, OpenAPI and docs. Handlers are thin:
//! extract → authorise → service (in `web::block`) → response.

pub mod accounts;
pub mod analytics;
pub mod calculator;
pub mod caller;
pub mod client;
pub mod errors;
pub mod games;
pub mod headers;
pub mod l10n;
pub mod mail;
pub mod ops;
pub mod players;
pub mod problem;
pub mod problem_types;
pub mod push;
pub mod replica;
pub mod rulesets;
pub mod schema;
pub mod scorepads;
pub mod stream;
pub mod test_clock;
pub mod tournaments;
pub mod vacation;
pub mod webhooks;

use actix_web::web;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_actix_web::AppExt;

use crate::accounts::Accounts;
use crate::games::Service;
use crate::limits::Limits;

/// Largest JSON body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Shared state of every handler.
pub struct AppState {
    /// Games: commands, lobby, reads, rematch and quick play.
    pub service: Service,
    /// Accounts, guests, logins, tokens.
    pub accounts: Accounts,
    /// Score pads.
    pub pads: crate::pads::Pads,
    /// The analysts' feed and archive.
    pub analytics: crate::analytics::Analytics,
    /// Ratings, leaderboards, profiles.
    pub ratings: crate::ratings::Ratings,
    /// Rate limits.
    pub limits: Limits,
    /// Where the client address of per-address limits comes from (see `crate::address`).
    pub client_address: crate::address::ClientAddress,
    /// A request body must arrive within this time.
    pub body_timeout: std::time::Duration,
    /// Counters for `/metrics`.
    pub metrics: ops::Metrics,
    /// Turns true when the server shuts down (streams end).
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// The live-stream engine: the shared readers of the games with live streams on this
    /// replica.
    pub streams: crate::games::live::Hub,
    /// Webhook registrations.
    pub webhooks: crate::webhooks::Webhooks,
    /// E-mail addresses, their verification and reminder choices.
    pub mail: crate::mail::Mail,
    /// Web Push: the VAPID public key, browsers' subscriptions, push choices.
    pub push: crate::push::Push,
    /// Vacation hours and explicit absences.
    pub vacation: crate::vacation::Vacation,
    /// Tournaments.
    pub tournaments: crate::tournaments::Tournaments,
    /// One pass over what the clock made due (`POST /test/clock` runs one).
    pub sweeper: crate::sweeper::Sweeper,
    /// This replica's outbox worker, once it runs (`POST /test/outbox` settles it).
    pub outbox: crate::outbox::worker::OutboxSlot,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Stammtisch",
        description = "Game server for the 6 nimmt! family and Nimm oder schieb. Errors are \
                       application/problem+json with a stable `code`.",
        version = "1"
    ),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    components(schemas(errors::Problem, rules::Event, rules::tournament::TournamentEvent))
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            ),
        );
    }
}

/// Registers every documented route.
pub fn routes(cfg: &mut utoipa_actix_web::service_config::ServiceConfig<'_>) {
    cfg.service(accounts::create_account)
        .service(accounts::create_guest)
        .service(accounts::create_token)
        .service(accounts::me)
        .service(accounts::register_guest)
        .service(accounts::change_password)
        .service(accounts::logout_everywhere)
        .service(accounts::delete_me)
        .service(vacation::get_vacation)
        .service(vacation::set_vacation)
        .service(mail::get_mail_settings)
        .service(mail::set_mail_choices)
        .service(mail::add_mail_address)
        .service(mail::remove_mail_address)
        .service(mail::verify_mail_address)
        .service(mail::open_mail_verification_link)
        .service(push::push_key)
        .service(push::get_push_settings)
        .service(push::set_push_choices)
        .service(push::create_push_subscription)
        .service(push::list_push_subscriptions)
        .service(push::delete_push_subscription)
        .service(rulesets::list_rulesets)
        .service(games::quick_play)
        .service(games::create_game)
        .service(games::list_games)
        .service(games::get_game)
        .service(games::patch_game)
        .service(games::rematch)
        .service(games::get_invite)
        .service(games::join_by_invite)
        .service(games::post_command)
        .service(games::list_events)
        .service(stream::stream_events)
        .service(stream::create_stream_ticket)
        .service(scorepads::create_scorepad)
        .service(scorepads::get_scorepad)
        .service(scorepads::record_round)
        .service(scorepads::take_back_round)
        .service(calculator::score_nimm_oder_schieb)
        .service(webhooks::get_webhook_choices)
        .service(webhooks::set_webhook_choices)
        .service(webhooks::create_webhook)
        .service(webhooks::list_webhooks)
        .service(webhooks::delete_webhook)
        .service(analytics::feed)
        .service(analytics::archive)
        .service(tournaments::create_tournament)
        .service(tournaments::list_tournaments)
        .service(tournaments::get_tournament)
        .service(tournaments::join_tournament)
        .service(tournaments::leave_tournament)
        .service(tournaments::start_tournament)
        .service(tournaments::tournament_standings)
        .service(tournaments::tournament_events)
        .service(tournaments::tournament_feed)
        .service(players::leaderboard)
        .service(players::player)
        .service(players::player_games)
        .service(ops::healthz)
        .service(ops::readyz)
        .service(ops::metrics);
}

/// The OpenAPI document of the server.
#[must_use]
pub fn openapi() -> utoipa::openapi::OpenApi {
    let (_, api) = actix_web::App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        .configure(routes)
        .split_for_parts();
    let mut api = api;
    // After the routes: they bring the schemas (such as `Command`) that this shapes.
    schema::NamedVariants.modify(&mut api);
    schema::ProblemResponses.modify(&mut api);
    api
}

/// The OpenAPI document as pretty JSON with a trailing newline (the committed file's form).
///
/// # Errors
/// Serialisation failure.
pub fn openapi_json() -> Result<String, serde_json::Error> {
    openapi().to_pretty_json().map(|mut s| {
        s.push('\n');
        s
    })
}

/// Extractor limits and error mapping shared by all routes.
pub fn configure_extractors(cfg: &mut web::ServiceConfig) {
    cfg.app_data(
        web::JsonConfig::default()
            .limit(MAX_BODY_BYTES)
            .error_handler(errors::json_error),
    )
    .app_data(web::QueryConfig::default().error_handler(errors::query_error))
    .app_data(web::PathConfig::default().error_handler(errors::path_error))
    .app_data(web::PayloadConfig::default().limit(MAX_BODY_BYTES));
}

/// The CORS middleware for `CORS_ORIGINS`: listed origins (or any, for `*`) get
/// `Access-Control-Allow-Origin`; others get no CORS headers (their browser refuses the
/// response) but are not blocked, so same-origin pages, which send `Origin` on POST, work.
/// Disabled when no origin is configured.
#[must_use]
pub fn cors(
    origins: &crate::config::CorsOrigins,
) -> actix_web::middleware::Condition<actix_cors::Cors> {
    use crate::config::CorsOrigins;
    use actix_web::http::header::{self, HeaderName};
    let base = actix_cors::Cors::default()
        .allowed_methods(["GET", "HEAD", "POST", "PATCH", "DELETE"])
        .allowed_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            header::ACCEPT_LANGUAGE,
            header::IF_MATCH,
            HeaderName::from_static("idempotency-key"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([
            header::ETAG,
            header::LOCATION,
            header::RETRY_AFTER,
            header::CONTENT_LANGUAGE,
            HeaderName::from_static("idempotent-replayed"),
        ])
        .max_age(3600)
        .block_on_origin_mismatch(false);
    let (enabled, cors) = match origins {
        CorsOrigins::None => (false, base),
        CorsOrigins::Any => (true, base.allow_any_origin().send_wildcard()),
        CorsOrigins::List(list) => (
            true,
            list.iter()
                .fold(base, |cors, origin| cors.allowed_origin(origin)),
        ),
    };
    actix_web::middleware::Condition::new(enabled, cors)
}

/// Runs a blocking closure on the thread pool and flattens its result.
///
/// # Errors
/// The closure's error, or a failed blocking task.
pub async fn blocking<T, E, F>(f: F) -> Result<T, errors::ApiError>
where
    F: FnOnce() -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: Into<errors::ApiError> + Send + 'static,
{
    web::block(f).await?.map_err(Into::into)
}

/// A JSON request body that must be an object (serde's derived structs would also take an
/// array of field values), decoded into `T` with duplicate and unknown fields refused.
pub struct Body<T>(pub T);

impl<T: serde::de::DeserializeOwned + 'static> actix_web::FromRequest for Body<T> {
    type Error = actix_web::Error;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(
        req: &actix_web::HttpRequest,
        payload: &mut actix_web::dev::Payload,
    ) -> Self::Future {
        let raw = web::Json::<Box<serde_json::value::RawValue>>::from_request(req, payload);
        let limit = req
            .app_data::<web::Data<AppState>>()
            .map_or(std::time::Duration::from_secs(10), |s| s.body_timeout);
        Box::pin(async move {
            // A body that trickles in would hold a connection forever: it must arrive
            // within the body timeout.
            let raw = tokio::time::timeout(limit, raw)
                .await
                .map_err(|_| errors::ApiError::RequestTimeout)??
                .into_inner();
            if !raw.get().trim_start().starts_with('{') {
                return Err(
                    errors::ApiError::Validation("the body must be a JSON object".into()).into(),
                );
            }
            serde_json::from_str(raw.get())
                .map(Body)
                .map_err(|e| errors::ApiError::Validation(e.to_string()).into())
        })
    }
}

/// A JSON object whose keys must be distinct (serde_json's `Map` keeps the last of equal
/// keys silently; a command with two `card` fields is refused instead).
pub struct StrictObject(pub serde_json::Map<String, serde_json::Value>);

impl<'de> serde::Deserialize<'de> for StrictObject {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = StrictObject;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<StrictObject, A::Error> {
                let mut map = serde_json::Map::new();
                while let Some((key, value)) = access.next_entry::<String, serde_json::Value>()? {
                    if map.contains_key(&key) {
                        return Err(serde::de::Error::custom(format!("duplicate field `{key}`")));
                    }
                    map.insert(key, value);
                }
                Ok(StrictObject(map))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The methods that `path` answers, as an `Allow` value, when it is a route of the API
/// (read from the API description, so it cannot drift from the routes); `None` otherwise.
pub(crate) fn methods_of(path: &str) -> Option<String> {
    static ROUTES: std::sync::OnceLock<Vec<(Vec<String>, String)>> = std::sync::OnceLock::new();
    let routes = ROUTES.get_or_init(|| {
        let doc = serde_json::to_value(openapi()).unwrap_or_default();
        let mut routes: Vec<(Vec<String>, String)> = doc["paths"]
            .as_object()
            .map(|paths| {
                paths
                    .iter()
                    .map(|(template, item)| {
                        let methods: Vec<String> = item
                            .as_object()
                            .map(|ops| ops.keys().map(|m| m.to_uppercase()).collect())
                            .unwrap_or_default();
                        (segments(template), methods.join(", "))
                    })
                    .collect()
            })
            .unwrap_or_default();
        routes.push((segments("/openapi.json"), "GET".into()));
        routes
    });
    let wanted = segments(path);
    routes
        .iter()
        .find(|(template, _)| {
            template.len() == wanted.len()
                && template
                    .iter()
                    .zip(&wanted)
                    .all(|(t, w)| t == w || (t.starts_with('{') && t.ends_with('}')))
        })
        .map(|(_, methods)| methods.clone())
}

fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The client's address for per-address limits: the peer, or behind trusted proxies the
/// entry the nearest proxy appended to its header, IPv6 per /64 ([`crate::address`]).
pub(crate) fn client_address(req: &actix_web::HttpRequest) -> String {
    let config = req
        .app_data::<web::Data<AppState>>()
        .map(|s| s.client_address)
        .unwrap_or_default();
    let name = match config.header {
        Some(crate::address::ProxyHeader::Forwarded) => actix_web::http::header::FORWARDED,
        _ => actix_web::http::header::HeaderName::from_static("x-forwarded-for"),
    };
    let lines = req.headers().get_all(name).filter_map(|v| v.to_str().ok());
    config.subject(req.peer_addr().map(|a| a.ip()), lines)
}

/// Parses a resource id from a path; anything but a UUID is "not found".
pub(crate) fn parse_id<K>(
    raw: &str,
    what: &'static str,
) -> Result<crate::ids::Id<K>, errors::ApiError> {
    crate::ids::Id::parse(raw).ok_or(errors::ApiError::NotFound(what))
}

/// The `ETag` header for a version: `"<version>"`.
pub(crate) fn etag(version: i32) -> (actix_web::http::header::HeaderName, String) {
    (actix_web::http::header::ETAG, format!("\"{version}\""))
}

/// Parses `If-Match` (RFC 9110): `"<version>"` pins the command to that version; `*`
/// only asks that the game exists, which every command does anyway. `If-Match` compares
/// strongly, so a weak tag (`W/"3"`) can never match and is refused, as is anything else.
pub(crate) fn if_match(
    headers: &actix_web::http::header::HeaderMap,
) -> Result<Option<i32>, errors::ApiError> {
    let Some(value) = headers.get(actix_web::http::header::IF_MATCH) else {
        return Ok(None);
    };
    let bad = |detail: &str| errors::ApiError::BadRequest {
        code: "invalid_if_match",
        detail: detail.into(),
    };
    let text = value
        .to_str()
        .map_err(|_| bad("If-Match must be \"<version>\" or *"))?
        .trim();
    if text == "*" {
        return Ok(None);
    }
    if text.starts_with("W/") {
        return Err(bad(
            "If-Match compares strongly; send the ETag as given, \"<version>\", not a weak tag",
        ));
    }
    // The tag as sent in the ETag, `"12"`; a bare `12` is taken too.
    let tag = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    Some(tag)
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse::<i32>().ok())
        .map(Some)
        .ok_or_else(|| bad("If-Match must be one \"<version>\" (as in the ETag) or *"))
}

/// A page size from `limit`: 50 when absent, 1 to 500 otherwise (`validation_failed`).
pub(crate) fn page_limit(limit: Option<i64>) -> Result<i64, errors::ApiError> {
    match limit {
        None => Ok(50),
        Some(l) if (1..=500).contains(&l) => Ok(l),
        Some(_) => Err(errors::ApiError::Validation(
            "limit must be 1 to 500".into(),
        )),
    }
}
