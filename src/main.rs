//! The `stammtisch` command: `serve` (default), `migrate`, `grant-role`, `openapi`,
//! `rebuild-ratings`, `rebuild-tournaments`, `simulate`, `export`, `fill`.

use std::io::Write;
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use anyhow::Context;
use clap::{Parser, Subcommand};
use utoipa_actix_web::AppExt;
use utoipa_swagger_ui::SwaggerUi;

use stammtisch::accounts::Accounts;
use stammtisch::auth::Tokens;
use stammtisch::config::Config;
use stammtisch::games::Service;
use stammtisch::http::{self, AppState};
use stammtisch::limits::Limits;
use stammtisch::store::{Store, StoreError};

#[derive(Parser)]
#[command(
    name = "stammtisch",
    about = "Game server for the 6 nimmt! family and Nimm oder schieb",
    version
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the HTTP server (the default). Configuration from the environment: DATABASE_URL,
    /// BIND_ADDR, JWT_SECRET, TOKEN_TTL_SECONDS, RUST_LOG.
    Serve,
    /// Run pending database migrations and exit.
    Migrate,
    /// Give a registered account a role, e.g. `analyst`.
    GrantRole {
        /// Account name.
        name: String,
        /// The role to give: `analyst` reads the analysts' feed and archive.
        role: String,
    },
    /// Print the OpenAPI document (the source of `openapi/openapi.json`).
    Openapi,
    /// Forget every rating, result and profile figure and compute them again from the
    /// event log (they come out exactly the same).
    RebuildRatings,
    /// Fold every tournament's state (the live standings the reads use) again from its
    /// event stream.
    RebuildTournaments,
    /// Play all-bot games and write a balance report (crates/lab; no database).
    Simulate(lab::SimulateArgs),
    /// Write the analysts' feed as Parquet files into a directory (events, and the games,
    /// seats and results of finished games, by month), going on from where the last export
    /// into it stopped (docs/analytics.md, "Exports (Parquet)").
    Export(ExportArgs),
    /// Fill the database with a year of played history for the data-volume benchmark:
    /// registered accounts `fill-<seed>-<n>` (a webhook for one in fifty) and games of every
    /// ruleset played by the rules (finished, running and open), written in batches with
    /// their time spread over the year. Run `rebuild-ratings` afterwards (or start the
    /// server) for the ratings (docs/scaling.md, "A year of data").
    Fill(FillArgs),
}

#[derive(clap::Args)]
struct FillArgs {
    /// Games to write.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    games: u64,
    /// Registered accounts that play them (default: one per 15 games, at least 40).
    #[arg(long, value_parser = clap::value_parser!(u64).range(20..=10_000_000))]
    accounts: Option<u64>,
    /// Days of history.
    #[arg(long, default_value_t = 365, value_parser = clap::value_parser!(u32).range(3..=3650))]
    days: u32,
    /// Games per transaction.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    batch: u64,
    /// Seeds the fill's choices (the deals' shuffles and the bots' moves are the server's
    /// own, not seeded).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The password of every account the fill makes.
    #[arg(long, env = "FILL_PASSWORD", default_value = "fill-password")]
    password: String,
}

#[derive(clap::Args)]
struct ExportArgs {
    /// The export directory (made when missing; holds `_export_state.json`).
    #[arg(long)]
    out: std::path::PathBuf,
    /// Only events recorded at or after this instant (RFC 3339, e.g. 2026-01-01T00:00:00Z).
    /// A directory keeps the --from it was first exported with.
    #[arg(long, value_parser = instant)]
    from: Option<chrono::DateTime<chrono::Utc>>,
    /// Stop at the first event recorded at or after this instant (RFC 3339); the next run
    /// goes on from there.
    #[arg(long, value_parser = instant)]
    to: Option<chrono::DateTime<chrono::Utc>>,
    /// Events per batch: the most the export holds in memory and the most rows of a file.
    #[arg(long, default_value_t = 50_000, value_parser = clap::value_parser!(u32).range(1..))]
    batch_events: u32,
}

/// An RFC 3339 instant of the command line, in UTC.
fn instant(text: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| format!("{e}: an RFC 3339 instant looks like 2026-01-01T00:00:00Z"))
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if matches!(cli.command, Some(Cmd::Openapi)) {
        let json = http::openapi_json()?;
        std::io::stdout().write_all(json.as_bytes())?;
        return Ok(());
    }
    if let Some(Cmd::Simulate(args)) = &cli.command {
        return lab::cli::run(args);
    }
    if let Some(Cmd::Export(ExportArgs {
        from: Some(from),
        to: Some(to),
        ..
    })) = &cli.command
        && from >= to
    {
        anyhow::bail!("--from {from} is not before --to {to}: nothing to export");
    }
    stammtisch::telemetry::init();
    let config = Config::from_env().context("reading the configuration")?;
    let store = Store::connect_with(
        &config.database_url,
        stammtisch::store::StoreOptions {
            sqlite_synchronous: config.sqlite_synchronous,
            pool_timeout: config.database_pool_timeout,
        },
    )
    .context("connecting to the database")?;
    store.migrate().context("running migrations")?;
    if let Some(sync) = store.sqlite_synchronous()? {
        tracing::info!(synchronous = sync, "SQLite commits are synced");
    }
    match cli.command.unwrap_or(Cmd::Serve) {
        Cmd::Serve => serve(config, store),
        Cmd::Migrate => {
            tracing::info!("migrations are up to date");
            Ok(())
        }
        Cmd::GrantRole { name, role } => grant_role(&store, &name, &role),
        Cmd::RebuildRatings => {
            let games = stammtisch::ratings::Ratings::new(store).rebuild()?;
            println!("ratings rebuilt from {games} finished games");
            Ok(())
        }
        Cmd::RebuildTournaments => {
            let clock = stammtisch::clock::Clock::system();
            let notifier = stammtisch::notify::Notifier::new();
            let games = Service::new(store.clone(), notifier).with_clock(clock.clone());
            let count = stammtisch::tournaments::Tournaments::new(store, games, clock).rebuild()?;
            println!("{count} tournaments folded again from their events");
            Ok(())
        }
        Cmd::Export(args) => export(store, args),
        Cmd::Fill(args) => fill(store, args),
        Cmd::Openapi | Cmd::Simulate(_) => Ok(()),
    }
}

fn export(store: Store, args: ExportArgs) -> anyhow::Result<()> {
    use stammtisch::export::{ExportOptions, export};
    let options = ExportOptions {
        from: args.from,
        to: args.to,
        batch_events: usize::try_from(args.batch_events)?,
        ..ExportOptions::new(args.out)
    };
    let started = std::time::Instant::now();
    let analytics = stammtisch::analytics::Analytics::new(store);
    let summary = export(&analytics, &options, &mut std::io::stderr())
        .with_context(|| format!("exporting into {}", options.out.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    let rate = summary.events as f64 / seconds.max(0.001);
    println!(
        "exported {} events and {} finished games into {} files ({} bytes) in {seconds:.2} s \
         ({rate:.0} events/s); {} holds {} events{}, the next run goes on after position {}",
        summary.events,
        summary.games,
        summary.files,
        summary.bytes,
        options.out.display(),
        summary.total_events,
        if summary.resumed { " (resumed)" } else { "" },
        summary.position,
    );
    Ok(())
}

fn fill(store: Store, args: FillArgs) -> anyhow::Result<()> {
    use stammtisch::games::{FillOptions, history_start};
    let start = history_start(stammtisch::clock::Clock::system().now(), args.days);
    let clock = stammtisch::clock::Clock::test_from(start);
    let store = store.with_clock(clock.clone());
    let games = Service::new(store, stammtisch::notify::Notifier::new()).with_clock(clock);
    let options = FillOptions {
        games: usize::try_from(args.games)?,
        accounts: args.accounts.map(usize::try_from).transpose()?,
        days: args.days,
        batch: usize::try_from(args.batch)?,
        seed: args.seed,
        password_hash: stammtisch::auth::hash_password(&args.password)
            .map_err(|e| anyhow::anyhow!("hashing the password: {e}"))?,
    };
    let started = std::time::Instant::now();
    let summary = games.fill(&options, &mut std::io::stderr())?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "filled {} games ({} finished, {} active, {} lobby) with {} events, {} accounts, {} \
         webhooks and {} deliveries in {seconds:.1} s ({:.0} games/s, {:.0} events/s)",
        summary.finished + summary.active + summary.lobby,
        summary.finished,
        summary.active,
        summary.lobby,
        summary.events,
        summary.accounts,
        summary.webhooks,
        summary.deliveries,
        options.games as f64 / seconds.max(0.001),
        summary.events as f64 / seconds.max(0.001),
    );
    Ok(())
}

fn grant_role(store: &Store, name: &str, role: &str) -> anyhow::Result<()> {
    if role.is_empty() || !role.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
        anyhow::bail!("a role is lower-case letters and _");
    }
    store.write(|tx| {
        let account = tx
            .account_by_name(name)?
            .ok_or_else(|| anyhow::anyhow!("no registered account named {name}"))?;
        let mut roles: Vec<&str> = account.roles.split(',').filter(|r| !r.is_empty()).collect();
        if !roles.contains(&role) {
            roles.push(role);
        }
        tx.set_roles(&account.id, &roles.join(","))?;
        Ok::<_, GrantError>(())
    })?;
    println!("{name} now has the role {role}");
    Ok(())
}

/// Errors of `grant-role` inside a transaction.
#[derive(Debug, thiserror::Error)]
enum GrantError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Query(#[from] diesel::result::Error),
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

/// The JWT secret: from the configuration, or generated once and kept in the database.
fn jwt_secret(config: &Config, store: &Store) -> anyhow::Result<Vec<u8>> {
    if let Some(secret) = &config.jwt_secret {
        return Ok(secret.as_bytes().to_vec());
    }
    let fresh = stammtisch::fairness::new_seed();
    let secret = store.write(|tx| {
        if let Some(existing) = tx.setting("jwt_secret")? {
            return Ok::<_, GrantError>(existing);
        }
        tx.insert_setting("jwt_secret", &fresh)?;
        Ok(fresh.clone())
    })?;
    Ok(secret.into_bytes())
}

/// The VAPID keys that sign pushes: from `VAPID_PRIVATE_KEY`, else the key generated on
/// the first start and kept in the database (as the JWT secret is), so that browsers'
/// subscriptions, which are bound to the public key, outlive restarts and are shared by
/// every replica.
fn vapid_keys(config: &Config, store: &Store) -> anyhow::Result<stammtisch::push::VapidKeys> {
    let private = match &config.vapid_private_key {
        Some(key) => key.clone(),
        None => {
            let fresh = stammtisch::push::VapidKeys::generate_private();
            store.write(|tx| {
                if let Some(existing) = tx.setting("vapid_private_key")? {
                    return Ok::<_, GrantError>(existing);
                }
                tx.insert_setting("vapid_private_key", &fresh)?;
                Ok(fresh.clone())
            })?
        }
    };
    stammtisch::push::VapidKeys::from_private(&private, &config.vapid_subject)
        .map_err(|e| anyhow::anyhow!("the stored VAPID key: {e}"))
}

/// Moves for seats whose deadline passed, every 250 ms, until shutdown
/// ([`stammtisch::sweeper`]). Every replica runs one; the store's compare-and-set makes each
/// deadline fire once. The same thread forgets old rate-limit windows, expired stream
/// leases and idempotency keys older than 24 hours every minute.
fn watch_deadlines(
    sweeper: stammtisch::sweeper::Sweeper,
    service: Service,
    limits: Limits,
    shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let spawned = std::thread::Builder::new().name("deadlines".into()).spawn(move || {
        let mut pruned = std::time::Instant::now();
        while !*shutdown.borrow() {
            if pruned.elapsed() >= Duration::from_secs(60) {
                pruned = std::time::Instant::now();
                if let Err(e) = limits.prune() {
                    tracing::warn!(error = %stammtisch::telemetry::Chain(&e), "could not prune rate-limit counters");
                }
                if let Err(e) = service.prune_idempotency_keys() {
                    tracing::warn!(error = %stammtisch::telemetry::Chain(&e), "could not forget expired idempotency keys");
                }
            }
            sweeper.pass();
            std::thread::sleep(Duration::from_millis(250));
        }
    });
    if let Err(e) = spawned {
        tracing::error!(error = %stammtisch::telemetry::Chain(&e), "cannot start the deadline watcher");
    }
}

/// Keeps the ratings, results and profiles up with the event log (`stammtisch::ratings`),
/// every 500 ms, until shutdown. Every replica runs one; they take turns on the
/// projection's checkpoint.
fn project_ratings(
    ratings: stammtisch::ratings::Ratings,
    shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let spawned = std::thread::Builder::new().name("ratings".into()).spawn(move || {
        while !*shutdown.borrow() {
            if let Err(e) = ratings.catch_up() {
                tracing::warn!(error = %stammtisch::telemetry::Chain(&e), "could not update the ratings");
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the ratings projection");
    }
}

/// SIGTERM or SIGINT (Ctrl-C where there are no Unix signals). The handlers are in place
/// once this returns, not when the future is first polled: a signal that comes as soon as
/// the server says it listens must not meet the default action, which ends the process
/// by the signal instead of shutting down.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let handlers = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        );
        async move {
            match handlers {
                (Ok(mut term), Ok(mut int)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = int.recv() => {}
                    }
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[actix_web::main]
async fn serve(config: Config, store: Store) -> anyhow::Result<()> {
    let secret = jwt_secret(&config, &store)?;
    let vapid = vapid_keys(&config, &store)?;
    let backend = store.backend();
    let clock = if config.test_clock {
        tracing::warn!(
            "STAMMTISCH_TEST_CLOCK is on: POST /test/clock lets anyone who reaches this server \
             move its clock forward (deadlines, expiry, token lifetimes). For tests only; \
             never on a server people use"
        );
        stammtisch::clock::Clock::test()
    } else {
        stammtisch::clock::Clock::system()
    };
    let store = store.with_clock(clock.clone());
    let store = match &config.database_read_url {
        Some(url) => {
            tracing::info!(
                "lists, the analysts' feed, leaderboards and profiles read from DATABASE_READ_URL"
            );
            store
                .with_replica(url, config.database_pool_timeout)
                .context("DATABASE_READ_URL: a PostgreSQL replica of a PostgreSQL DATABASE_URL")?
        }
        None => store,
    };
    for (pool, jit) in store.pg_jit() {
        match jit {
            Ok(jit) => tracing::info!(pool, jit, "PostgreSQL session"),
            Err(e) => tracing::warn!(
                pool,
                error = %stammtisch::telemetry::Chain(&e),
                "cannot read the PostgreSQL session's settings"
            ),
        }
    }
    let tokens = std::sync::Arc::new(
        Tokens::new(&secret, config.token_ttl)
            .context("JWT secret")?
            .with_clock(clock.clone()),
    );
    let limits = Limits::new(store.clone(), config.limits).with_clock(clock.clone());
    let notifier = if backend == stammtisch::store::Backend::Postgres {
        stammtisch::notify::Notifier::with_postgres(config.database_url.clone())
    } else {
        stammtisch::notify::Notifier::new()
    };
    let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
    let hasher = std::sync::Arc::new(
        stammtisch::auth::Hasher::new(config.password_hash_threads, config.password_hash_wait)
            .context("password hashing threads")?,
    );
    let accounts =
        Accounts::new(store.clone(), tokens, limits.clone(), hasher).with_clock(clock.clone());
    let pads = stammtisch::pads::Pads::new(store.clone())
        .with_limits(limits.clone())
        .with_clock(clock.clone());
    let analytics = stammtisch::analytics::Analytics::new(store.clone());
    let ratings = stammtisch::ratings::Ratings::new(store.clone());
    let webhooks = stammtisch::webhooks::Webhooks::new(store.clone(), config.webhook_targets)
        .with_clock(clock.clone());
    project_ratings(ratings.clone(), shutdown_rx.clone());
    let mut service = Service::new(store, notifier)
        .with_clock(clock.clone())
        .with_cache_bytes(config.state_cache_bytes)
        .with_ticket_ttl(config.stream_ticket_ttl)
        .with_stand_in(config.stand_in)
        .with_rematch_window(config.rematch_window)
        .with_push_window(config.push_window)
        .with_vacation_days(config.vacation_days)
        .with_limits(limits.clone())
        .with_group_commit(
            config.command_batch_lanes,
            config.command_batch_max,
            config.command_batch_linger,
        );
    if let Some(mail) = &config.mail {
        service = service.with_mail(mail.digest_interval);
    }
    let tournaments = stammtisch::tournaments::Tournaments::new(
        service.store().clone(),
        service.clone(),
        clock.clone(),
    );
    let sweeper = stammtisch::sweeper::Sweeper::new(service.clone(), tournaments.clone());
    watch_deadlines(
        sweeper.clone(),
        service.clone(),
        limits.clone(),
        shutdown_rx.clone(),
    );
    let mut worker = config.outbox_worker();
    worker.clock = clock.clone();
    let push = stammtisch::push::Push::new(
        service.store().clone(),
        config.webhook_targets,
        vapid.public_key(),
    )
    .with_clock(clock.clone());
    worker.vapid = Some(vapid);
    let mail = stammtisch::mail::Mail::new(service.store().clone(), config.mail.clone())
        .map_err(|e| anyhow::anyhow!(e))?
        .with_clock(clock.clone());
    let vacation =
        stammtisch::vacation::Vacation::new(service.store().clone(), config.vacation_days)
            .with_clock(clock);
    let store_for_worker = service.store().clone();
    let shutdown_rx_worker = shutdown_rx.clone();
    let streams = stammtisch::games::live::Hub::new(stammtisch::games::live::Wiring {
        service: service.clone(),
        accounts: accounts.clone(),
        limits: limits.clone(),
        shutdown: shutdown_rx.clone(),
        poll: config.stream_poll,
        keep_alive: config.stream_keep_alive,
        check_every: config.stream_revocation_check,
        render: http::stream::render_event,
    });
    let outbox = stammtisch::outbox::worker::OutboxSlot::default();
    let state = web::Data::new(AppState {
        service,
        accounts,
        pads,
        analytics,
        ratings,
        limits: limits.clone(),
        client_address: config.client_address,
        body_timeout: config.body_timeout,
        metrics: http::ops::Metrics::default(),
        shutdown: shutdown_rx,
        streams,
        webhooks,
        mail,
        push,
        vacation,
        tournaments,
        sweeper,
        outbox: outbox.clone(),
    });
    let api = http::openapi();
    let cors_origins = config.cors_origins.clone();
    // Before the server listens (see `shutdown_signal`).
    let signal = shutdown_signal();
    let server = HttpServer::new(move || {
        let (app, _) = App::new()
            // Innermost: after a person's write, before the answer (`http::replica`).
            .wrap(actix_web::middleware::from_fn(http::replica::fence_writes))
            .wrap(http::cors(&cors_origins))
            .wrap(tracing_actix_web::TracingLogger::<
                stammtisch::telemetry::RequestSpan,
            >::new())
            // Outermost: whatever answers with a bare error (actix, the docs UI, CORS),
            // the client gets problem+json.
            .wrap(
                actix_web::middleware::ErrorHandlers::new()
                    .default_handler(http::problem::bare_error_to_problem),
            )
            // The security headers on every answer, problems included (`http::headers`).
            .wrap(actix_web::middleware::from_fn(http::headers::security))
            // Outermost of all: the problem in the language asked for.
            .wrap(actix_web::middleware::from_fn(http::l10n::localize))
            .app_data(state.clone())
            .configure(http::configure_extractors)
            .into_utoipa_app()
            .configure(http::routes)
            .split_for_parts();
        let api_json = api.clone();
        app.route(
            "/openapi.json",
            web::get().to(move || {
                let doc = api_json.clone();
                async move { HttpResponse::Ok().json(doc) }
            }),
        )
        // Not in the OpenAPI document: these answer 404 unless the server runs with a
        // test clock (`STAMMTISCH_TEST_CLOCK`).
        .route("/test/clock", web::post().to(http::test_clock::advance))
        .route(
            "/test/outbox",
            web::post().to(http::test_clock::settle_outbox),
        )
        .route(
            "/test/ratings",
            web::post().to(http::test_clock::catch_up_ratings),
        )
        .service(web::redirect("/docs", "/docs/"))
        .service(SwaggerUi::new("/docs/{_:.*}").url("/openapi.json", api.clone()))
        .default_service(web::to(http::client::asset_or_not_found))
    })
    .shutdown_timeout(10)
    .bind(&config.bind_addr)
    .with_context(|| format!("binding {}", config.bind_addr))?;
    for addr in server.addrs() {
        // Tests and scripts read this line to find the port.
        println!("listening on http://{addr}");
    }
    // Links in mails point at PUBLIC_URL, or else at the address the server listens on
    // (set once for every clone of the mail configuration: the outbox's reminders and the
    // verification mail alike).
    if let (None, Some(mail), Some(addr)) =
        (&config.public_url, &config.mail, server.addrs().first())
    {
        mail.listening_on(format!("http://{addr}"));
    }
    let worker =
        stammtisch::outbox::worker::spawn_worker(store_for_worker, worker, shutdown_rx_worker);
    // Set once, before the server runs: `POST /test/outbox` always finds it.
    let _ = outbox.set(worker);
    std::io::stdout().flush()?;
    tracing::info!(?backend, "stammtisch is serving");
    let server = server.disable_signals().run();
    let handle = server.handle();
    // On SIGTERM or SIGINT: end the live streams, stop accepting, let in-flight requests
    // finish (up to the shutdown timeout), then exit.
    actix_web::rt::spawn(async move {
        signal.await;
        tracing::info!("shutting down");
        let _ = shutdown_tx.send(true);
        handle.stop(true).await;
    });
    server.await?;
    tracing::info!("stopped");
    Ok(())
}
