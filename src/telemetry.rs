//! Logging: `tracing` to standard error, filtered by `RUST_LOG` (default `info`).

/// Installs the subscriber once.
pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}

/// The span of every HTTP request. Like tracing-actix-web's default, but it records the
/// path without the query string: a query may carry a stream ticket, which must never
/// reach the log.
pub struct RequestSpan;

impl tracing_actix_web::RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &actix_web::dev::ServiceRequest) -> tracing::Span {
        let route = request.match_pattern().unwrap_or_else(|| "default".into());
        tracing::info_span!(
            "HTTP request",
            http.method = %request.method(),
            http.route = %route,
            http.target = %request.path(),
            http.status_code = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            exception.message = tracing::field::Empty,
            exception.details = tracing::field::Empty,
            request_id = %request_id(request),
        )
    }

    fn on_request_end<B: actix_web::body::MessageBody>(
        span: tracing::Span,
        outcome: &Result<actix_web::dev::ServiceResponse<B>, actix_web::Error>,
    ) {
        tracing_actix_web::DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}

fn request_id(request: &actix_web::dev::ServiceRequest) -> String {
    use actix_web::HttpMessage;
    request
        .extensions()
        .get::<tracing_actix_web::RequestId>()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// An error with its whole cause chain for a log field: `error = %Chain(&e)` writes
/// "outer: cause: root cause" instead of the outermost message alone.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_chain_shows_every_cause() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::io::Error);
        let e = Outer(std::io::Error::other("root"));
        assert_eq!(super::Chain(&e).to_string(), "outer: root");
    }
}
