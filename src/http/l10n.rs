//! Languages: English (the default) and German, chosen by `Accept-Language`.
//!
//! What follows the language: the problem `title` and `detail` of every error, and the
//! display texts of `GET /v1/rulesets` (ruleset names, option, value and preset labels, the
//! nimm-oder-schieb card labels). What never does: codes, ids, `type` URIs, field names,
//! option values — a client may switch language at any time and keep its logic.
//!
//! How: [`crate::http::errors::ApiError`] renders its body in English and attaches the German
//! body as a response extension ([`GermanProblem`]); the [`localize`] middleware, outermost
//! in the app, picks the one the request asked for and sets `Content-Language` and
//! `Vary: Accept-Language`. Handlers with localized content take [`Lang`] as an extractor.

pub mod german;
pub mod rounds;

use std::future::{Ready, ready};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, Header, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage, HttpRequest};

/// A language the server answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    /// English, when nothing else is asked for or nothing asked for is offered.
    #[default]
    En,
    /// German, when a German tag (`de`, `de-AT`, …) ranks highest among the offered ones.
    De,
}

impl Lang {
    /// The language tag for `Content-Language`.
    #[must_use]
    pub fn tag(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::De => "de",
        }
    }

    /// The best offered language for a request: the highest-ranked `Accept-Language` entry
    /// whose primary subtag is `en` or `de` (`de-AT` is German); `*`, a missing or
    /// unparsable header, or only other languages give English.
    #[must_use]
    pub fn of(req: &impl HttpMessage) -> Self {
        let Ok(accept) = header::AcceptLanguage::parse(req) else {
            return Self::En;
        };
        accept
            .ranked()
            .into_iter()
            .find_map(|pref| match pref {
                header::Preference::Any => Some(Self::En),
                header::Preference::Specific(tag) => {
                    match tag.primary_language().to_ascii_lowercase().as_str() {
                        "de" => Some(Self::De),
                        "en" => Some(Self::En),
                        _ => None,
                    }
                }
            })
            .unwrap_or_default()
    }

    /// `en` or `de` text, whichever this language is.
    #[must_use]
    pub fn pick<T>(self, en: T, de: T) -> T {
        match self {
            Self::En => en,
            Self::De => de,
        }
    }
}

impl FromRequest for Lang {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Self::of(req)))
    }
}

/// Whether a response with these headers is problem+json.
#[must_use]
pub fn is_problem(headers: &header::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/problem+json"))
}

/// The German body of a problem response, attached by the code that rendered the English
/// one; [`localize`] swaps it in when German was asked for.
#[derive(Debug, Clone)]
pub struct GermanProblem(pub String);

/// The problem `title` for a status in a language (English: the status's reason phrase).
#[must_use]
pub fn title(status: StatusCode, lang: Lang) -> String {
    let english = status.canonical_reason().unwrap_or("Error");
    if lang == Lang::En {
        return english.to_owned();
    }
    match status.as_u16() {
        400 => "Ungültige Anfrage",
        401 => "Nicht angemeldet",
        403 => "Nicht erlaubt",
        404 => "Nicht gefunden",
        405 => "Methode nicht erlaubt",
        406 => "Nicht annehmbar",
        408 => "Zeitüberschreitung der Anfrage",
        409 => "Konflikt",
        412 => "Vorbedingung nicht erfüllt",
        413 => "Anfrage zu groß",
        415 => "Nicht unterstütztes Format",
        422 => "Nicht ausführbar",
        428 => "Vorbedingung verlangt",
        429 => "Zu viele Anfragen",
        431 => "Kopfzeilen zu groß",
        500 => "Interner Fehler",
        503 => "Vorübergehend nicht verfügbar",
        _ => "Fehler",
    }
    .to_owned()
}

/// Middleware: answers in the language the request asked for. Problem responses get the
/// German body when German was asked for and one is attached; every problem response and
/// every response a handler marked with `Content-Language` gets `Vary: Accept-Language`.
///
/// # Errors
/// Those of the wrapped service.
pub async fn localize(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let lang = Lang::of(&req);
    let mut res = next.call(req).await?.map_into_boxed_body();
    if is_problem(res.headers()) {
        let german = res.response().extensions().get::<GermanProblem>().cloned();
        if let (Lang::De, Some(GermanProblem(body))) = (lang, german) {
            res = res.map_body(|_, _| BoxBody::new(body));
            res.headers_mut().remove(header::CONTENT_LENGTH);
            res.headers_mut().insert(
                header::CONTENT_LANGUAGE,
                HeaderValue::from_static(Lang::De.tag()),
            );
        } else {
            res.headers_mut().insert(
                header::CONTENT_LANGUAGE,
                HeaderValue::from_static(Lang::En.tag()),
            );
        }
    }
    if res.headers().contains_key(header::CONTENT_LANGUAGE) {
        res.headers_mut()
            .append(header::VARY, HeaderValue::from_static("Accept-Language"));
    }
    Ok(res)
}
