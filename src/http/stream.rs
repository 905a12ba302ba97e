//! `GET /v1/games/{id}/stream`: the game's events as the caller may see them, live, as
//! server-sent events. Resumes after `Last-Event-ID`, sends keep-alive comments, and ends
//! after `game_finished` or when the server shuts down.
//!
//! A browser's `EventSource` cannot send an `Authorization` header, so a stream may instead
//! be opened with `?ticket=…` from `POST /v1/games/{id}/stream-tickets`: a random,
//! single-use credential bound to the account and the game that expires within seconds.
//! The bearer token never goes into a URL, and the request span logs the path without its
//! query (see `crate::telemetry`), so tickets never reach the log.
//!
//! One reader per game per replica ([`Hub`]): while a game has open streams here, one task
//! re-reads its new events from the table after every wake-up hint (from this process, or
//! from other replicas through PostgreSQL LISTEN/NOTIFY, `crate::store::wakeups`) and every
//! `STREAM_POLL_MS` even without one, so a lost hint delays an event but never loses it. It
//! reads the events of every seat once, renders each once, and broadcasts them to the game's
//! streams; each stream passes on only what its own viewer may see (public events, and its
//! seat's own; server-only events to nobody), deciding the seat from the same read.
//!
//! The events table stays the truth: a stream that starts at an older `Last-Event-ID`, falls
//! behind the broadcast buffer, or sees a batch that does not start where it stands, reads
//! the table itself until it has caught up, then goes on with the shared batches, skipping
//! what it already sent (every batch says which seqs it covers), so nothing is lost or sent
//! twice.
//!
//! A stream lives no longer than the token that opened it: every `STREAM_REVOCATION_CHECK_MS`
//! one task per replica reads the token versions of all accounts with open streams here in
//! one query ([`Hub`]) and ends the streams whose account's version moved past their
//! token's (logout everywhere, a password change) or that was deleted. A ticket carries the
//! version of the token it was issued to, so one issued before a revocation no longer
//! redeems.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use bytes::Bytes;
use rules::Audience;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, watch};
use utoipa::{IntoParams, ToSchema};

use super::caller::{Caller, Claimed};
use super::errors::{ApiError, NotSignedIn, Problem};
use super::games::{EventItem, game_id};
use super::{AppState, blocking};

/// Where to start.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct StreamParams {
    /// Events after this `seq` (the `Last-Event-ID` header wins when both are given).
    #[param(minimum = 0)]
    pub after: Option<i32>,
    /// A stream ticket (for `EventSource`, which cannot send `Authorization`); replaces
    /// the bearer token.
    pub ticket: Option<String>,
}

/// A stream ticket.
#[derive(Debug, Serialize, ToSchema)]
pub struct StreamTicket {
    /// Opaque; pass as `?ticket=` to `GET /v1/games/{id}/stream`. Works once.
    pub ticket: String,
    /// Seconds until it expires.
    pub expires_in: u64,
}

/// Issues a single-use ticket that opens this game's live stream without an
/// `Authorization` header (for a browser's `EventSource`). It is bound to the caller and the
/// game and expires after `expires_in` seconds (at most 60); a reconnect needs a new one.
#[utoipa::path(
    tag = "games",
    operation_id = "create_stream_ticket",
    params(("id" = String, Path, description = "Game id")),
    responses(
        (status = 201, body = StreamTicket),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 404, description = "`not_found`", body = Problem)
    )
)]
#[post("/v1/games/{id}/stream-tickets")]
pub async fn create_stream_ticket(
    state: web::Data<AppState>,
    claimed: Claimed,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (ticket, expires_in) = blocking(move || {
        let caller = claimed.resolve(&state)?;
        // The ticket records the token's version: a revocation after this makes it
        // worthless.
        state
            .service
            .issue_stream_ticket(&id, &caller.id, claimed.token_version())
            .map_err(ApiError::from)
    })
    .await?;
    Ok(HttpResponse::Created()
        .insert_header(("Cache-Control", "no-store"))
        .json(StreamTicket { ticket, expires_in }))
}

/// Streams the game's events (`id: <seq>`, `event: <type>`, `data: {seq, type, at, data}`).
/// Authenticated by the bearer token or by a `ticket` from `create_stream_ticket`.
#[utoipa::path(
    tag = "games",
    operation_id = "stream_events",
    security(("bearer" = []), ()),
    params(
        ("id" = String, Path, description = "Game id"),
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this seq"),
        StreamParams
    ),
    responses(
        (status = 200, description = "text/event-stream of the game's events", content_type = "text/event-stream"),
        (status = 400, description = "`invalid_last_event_id`", body = Problem),
        (status = 401, description = "`unauthorized`: no or a bad token, or an unknown, used or expired ticket, or one issued before the account's tokens were revoked", body = Problem),
        (status = 404, description = "`not_found`", body = Problem),
        (status = 429, description = "`too_many_streams`: the account has `LIMIT_STREAMS` streams open", body = Problem)
    )
)]
#[get("/v1/games/{id}/stream")]
pub async fn stream_events(
    state: web::Data<AppState>,
    path: web::Path<String>,
    params: web::Query<StreamParams>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let params = params.into_inner();
    // The account and the token version the stream is held to.
    let (account, token_version) = match params.ticket {
        Some(ticket) => {
            let (st, gid) = (state.clone(), id.clone());
            blocking(move || st.service.redeem_stream_ticket(&gid, &ticket))
                .await?
                .ok_or(ApiError::Unauthorized(NotSignedIn::BadTicket))?
        }
        None => {
            use actix_web::FromRequest;
            let claimed = Claimed::extract(&req).await?;
            let version = claimed.token_version();
            let st = state.clone();
            let caller: Caller = blocking(move || claimed.resolve(&st)).await?;
            (caller.id, version)
        }
    };
    let after = match req.headers().get("Last-Event-ID") {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
            .ok_or(ApiError::BadRequest {
                code: "invalid_last_event_id",
                detail: "Last-Event-ID must be an event's seq".into(),
            })?,
        None => params.after.unwrap_or(0),
    };
    if after < 0 || params.after.is_some_and(|a| a < 0) {
        return Err(ApiError::Validation("after must be 0 or more".into()));
    }
    tracing::info!(game = %id, after, "stream opened");
    // Existence and access are checked before the stream starts.
    let (st, gid, reader) = (state.clone(), id.clone(), account.clone());
    blocking(move || st.service.events(&gid, &reader, after, 1).map(|_| ())).await?;
    let (limits, holder) = (state.limits.clone(), account.clone());
    let lease = blocking(move || limits.open_stream(&holder)).await?;
    let live = Live {
        _lease: state.streams.hold(&state, lease),
        token: state.streams.watch_token(&state, &account, token_version),
        feed: state.streams.subscribe(&state, &id),
        shutdown: state.shutdown.clone(),
        state,
        game: id,
        account,
        cursor: after,
        catch_up: true,
        queue: VecDeque::new(),
        finished: false,
        last_sent: Instant::now(),
    };
    let body = futures_util::stream::unfold(live, |mut live| async move {
        live.next()
            .await
            .map(|frame| (Ok::<_, actix_web::Error>(frame), live))
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body))
}

/// A stream's place in the per-account limit: renewed with all of this replica's leases
/// while the stream lives ([`Hub`]), given back when it is dropped (a replica that dies
/// leaves leases that expire).
struct Lease {
    limits: crate::limits::Limits,
    id: String,
    held: Arc<Mutex<std::collections::HashSet<String>>>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
        let (limits, id) = (self.limits.clone(), std::mem::take(&mut self.id));
        let close = move || {
            if let Err(e) = limits.close_stream(&id) {
                tracing::warn!(error = %crate::telemetry::Chain(&e), "could not give back a stream lease");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(close);
            }
            Err(_) => close(),
        }
    }
}

/// Batches a game's feed holds for streams that are behind; a stream further behind reads
/// the table itself.
const FEED_BUFFER: usize = 64;

/// Events per read, by the feed and by a stream catching up.
const PAGE: i64 = 500;

/// One rendered event, shared by every stream of its game.
struct Frame {
    seq: i32,
    audience: Audience,
    finished: bool,
    bytes: Bytes,
}

impl Frame {
    fn render(row: &crate::games::ReadEvent) -> Result<Self, ApiError> {
        let item = EventItem {
            seq: row.seq,
            type_: row.event_type.clone(),
            at: row.recorded_at.and_utc().to_rfc3339(),
            data: row.data.clone(),
        };
        let json = serde_json::to_string(&item).map_err(|e| ApiError::Internal(e.into()))?;
        Ok(Self {
            seq: row.seq,
            audience: audience(&row.audience),
            finished: row.event_type == "game_finished",
            bytes: Bytes::from(format!(
                "id: {}\nevent: {}\ndata: {json}\n\n",
                row.seq, row.event_type
            )),
        })
    }
}

/// The stored audience text; anything unknown is the server's (shown to nobody).
fn audience(text: &str) -> Audience {
    match text {
        "public" => Audience::Public,
        _ => text
            .strip_prefix("seat:")
            .and_then(|s| s.parse().ok())
            .map_or(Audience::Server, Audience::Seat),
    }
}

/// What one read of the table found: the events after `from` up to `upto`, for every seat.
struct Batch {
    from: i32,
    upto: i32,
    view: Arc<crate::games::Access>,
    frames: Vec<Arc<Frame>>,
}

impl Batch {
    fn render(from: i32, page: crate::games::StreamPage) -> Result<Self, ApiError> {
        Ok(Self {
            from,
            upto: page.upto,
            view: Arc::new(page.view),
            frames: page
                .events
                .iter()
                .map(|row| Frame::render(row).map(Arc::new))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// A game's reader: its id (a new reader may replace one that is leaving) and broadcast.
type Feed = (u64, broadcast::Sender<Arc<Batch>>);

/// The shared readers of this replica: game id → the broadcast of its reader task, which
/// runs while the game has open streams here.
#[derive(Clone)]
pub struct Hub {
    feeds: Arc<Mutex<HashMap<String, Feed>>>,
    next: Arc<std::sync::atomic::AtomicU64>,
    /// The leases of this replica's open streams, renewed together.
    leases: Arc<Mutex<std::collections::HashSet<String>>>,
    renewing: Arc<std::sync::atomic::AtomicBool>,
    /// The accounts of this replica's open streams, with what the revocation check last
    /// read of each.
    sessions: Sessions,
    checking: Arc<std::sync::atomic::AtomicBool>,
    /// How often the revocation check reads the accounts' token versions.
    check_every: std::time::Duration,
}

/// What the revocation check last read of an account with open streams here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Not read yet.
    Unknown,
    /// The account's token version.
    Version(i32),
    /// Deleted, or no such account.
    Gone,
}

/// An account's streams on this replica: how many, and the check's last reading.
struct Session {
    streams: usize,
    standing: watch::Sender<Standing>,
}

type Sessions = Arc<Mutex<HashMap<String, Session>>>;

/// A stream's hold on its token: tells the stream when the token was revoked, and takes the
/// stream off its account's session when dropped.
struct TokenWatch {
    account: String,
    /// The version of the token (or ticket) that opened the stream.
    version: i32,
    standing: watch::Receiver<Standing>,
    sessions: Sessions,
}

impl TokenWatch {
    /// Whether the stream's token no longer counts: its account is gone, or the account's
    /// version moved past the token's. Versions only grow, so a reading older than the
    /// token (a check that began before the stream opened) says nothing.
    fn revoked(&self) -> bool {
        match *self.standing.borrow() {
            Standing::Unknown => false,
            Standing::Version(v) => v > self.version,
            Standing::Gone => true,
        }
    }
}

impl Drop for TokenWatch {
    fn drop(&mut self) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = sessions.get_mut(&self.account) {
            session.streams = session.streams.saturating_sub(1);
            if session.streams == 0 {
                sessions.remove(&self.account);
            }
        }
    }
}

impl Hub {
    /// An empty hub whose revocation check runs every `check_every`.
    #[must_use]
    pub fn new(check_every: std::time::Duration) -> Self {
        Self {
            feeds: Arc::default(),
            next: Arc::default(),
            leases: Arc::default(),
            renewing: Arc::default(),
            sessions: Arc::default(),
            checking: Arc::default(),
            check_every,
        }
    }

    /// Holds a stream to the token version it was opened with until the returned
    /// [`TokenWatch`] is dropped, starting this replica's revocation check with its first
    /// stream.
    fn watch_token(&self, state: &web::Data<AppState>, account: &str, version: i32) -> TokenWatch {
        let watch = self.register(account, version);
        if !self
            .checking
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            let (hub, state) = (self.clone(), state.clone());
            let mut shutdown = state.shutdown.clone();
            actix_web::rt::spawn(async move {
                loop {
                    tokio::select! {
                        () = tokio::time::sleep(hub.check_every) => {}
                        changed = shutdown.changed() => {
                            if changed.is_err() || *shutdown.borrow() {
                                return;
                            }
                        }
                    }
                    hub.check(&state).await;
                }
            });
        }
        watch
    }

    /// Adds a stream of `account` opened with token version `version` to the sessions.
    fn register(&self, account: &str, version: i32) -> TokenWatch {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let session = sessions
            .entry(account.to_owned())
            .or_insert_with(|| Session {
                streams: 0,
                standing: watch::channel(Standing::Unknown).0,
            });
        session.streams += 1;
        TokenWatch {
            account: account.to_owned(),
            version,
            standing: session.standing.subscribe(),
            sessions: self.sessions.clone(),
        }
    }

    /// Reads the token versions of every account with open streams here, in one read
    /// (one statement per 1,000 accounts, not one per stream), and tells their streams.
    async fn check(&self, state: &web::Data<AppState>) {
        let ids: Vec<String> = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect();
        if ids.is_empty() {
            return;
        }
        let st = state.clone();
        match blocking(move || st.accounts.token_versions(&ids)).await {
            Ok(versions) => self.apply(&versions),
            Err(e) => {
                tracing::warn!(error = %e, "could not check the live streams' tokens");
            }
        }
    }

    /// Checks one account's token version now, on this replica (blocking): after a
    /// revocation made here, its streams here end before the revocation is answered;
    /// other replicas' streams within their next check.
    pub fn recheck(&self, accounts: &crate::accounts::Accounts, account: &str) {
        let watched = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(account);
        if !watched {
            return;
        }
        match accounts.token_versions(&[account.to_owned()]) {
            Ok(versions) => self.apply(&versions),
            // The periodic check will find it.
            Err(e) => {
                tracing::warn!(error = %crate::telemetry::Chain(&e), "could not check an account's live streams");
            }
        }
    }

    /// Records what the check read: a version, or `None` for an account that is deleted
    /// or does not exist. Wakes an account's streams only when its reading changed.
    fn apply(&self, versions: &HashMap<String, Option<i32>>) {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        for (account, version) in versions {
            if let Some(session) = sessions.get(account) {
                let now = version.map_or(Standing::Gone, Standing::Version);
                session.standing.send_if_modified(|standing| {
                    let changed = *standing != now;
                    *standing = now;
                    changed
                });
            }
        }
    }

    /// Keeps a stream's lease renewed until the returned [`Lease`] is dropped. One task per
    /// replica renews all leases together every quarter of [`crate::limits::LEASE`] (one
    /// statement per 1,000 streams, not one per stream).
    fn hold(&self, state: &web::Data<AppState>, id: String) -> Lease {
        self.leases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone());
        if !self
            .renewing
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            let (leases, limits, mut shutdown) = (
                self.leases.clone(),
                state.limits.clone(),
                state.shutdown.clone(),
            );
            actix_web::rt::spawn(async move {
                loop {
                    tokio::select! {
                        () = tokio::time::sleep(crate::limits::LEASE / 4) => {}
                        changed = shutdown.changed() => {
                            if changed.is_err() || *shutdown.borrow() {
                                return;
                            }
                        }
                    }
                    let ids: Vec<String> = leases
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .iter()
                        .cloned()
                        .collect();
                    if ids.is_empty() {
                        continue;
                    }
                    let limits = limits.clone();
                    let renewed = blocking(move || limits.renew_streams(&ids)).await;
                    if let Err(e) = renewed {
                        tracing::warn!(error = %e, "could not renew the stream leases");
                    }
                }
            });
        }
        Lease {
            limits: state.limits.clone(),
            id,
            held: self.leases.clone(),
        }
    }

    /// Joins the game's shared feed, starting its reader when this is the game's first
    /// stream here.
    fn subscribe(
        &self,
        state: &web::Data<AppState>,
        game: &str,
    ) -> broadcast::Receiver<Arc<Batch>> {
        let mut feeds = self.feeds.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, sender)) = feeds.get(game) {
            return sender.subscribe();
        }
        let (sender, receiver) = broadcast::channel(FEED_BUFFER);
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        feeds.insert(game.to_owned(), (id, sender.clone()));
        let reader = Reader {
            hub: self.clone(),
            id,
            state: state.clone(),
            game: game.to_owned(),
            sender,
            hints: state.service.notifier().subscribe(),
            shutdown: state.shutdown.clone(),
            cursor: None,
        };
        actix_web::rt::spawn(reader.run());
        receiver
    }

    /// Open feeds (games with streams on this replica).
    #[must_use]
    pub fn feeds(&self) -> usize {
        self.feeds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// The one reader of a game on this replica.
struct Reader {
    hub: Hub,
    id: u64,
    state: web::Data<AppState>,
    game: String,
    sender: broadcast::Sender<Arc<Batch>>,
    hints: broadcast::Receiver<String>,
    shutdown: watch::Receiver<bool>,
    /// Up to where the game has been read; `None` before the first read.
    cursor: Option<i32>,
}

impl Reader {
    async fn run(mut self) {
        loop {
            if *self.shutdown.borrow() {
                break;
            }
            if let Err(e) = self.read().await {
                // The streams still poll nothing themselves: the next wake-up retries.
                tracing::warn!(error = %crate::telemetry::Chain(&e), game = %self.game, "a live-stream reader could not read the game's events");
            }
            if !self.wait().await || self.retire() {
                break;
            }
        }
        self.retire_now();
    }

    /// Reads everything new and broadcasts it.
    async fn read(&mut self) -> Result<(), ApiError> {
        loop {
            let (st, game) = (self.state.clone(), self.game.clone());
            let (after, limit) = self.cursor.map_or((i32::MAX, 1), |c| (c, PAGE));
            let page = blocking(move || st.service.stream_page(&game, after, limit)).await?;
            let full = i64::try_from(page.events.len()).unwrap_or(i64::MAX) >= limit;
            let Some(from) = self.cursor else {
                self.cursor = Some(page.upto);
                // A stream that joined has read the table up to where it stands; what
                // committed between that read and this one would be in no batch, and the
                // stream would wait for the next move. An empty batch from here makes such
                // a stream (its cursor below `from`) catch up from the table.
                let _ = self.sender.send(Arc::new(Batch::render(page.upto, page)?));
                return Ok(());
            };
            if page.upto <= from {
                return Ok(());
            }
            self.cursor = Some(page.upto);
            // No receiver: the last stream just left; `retire` ends the reader.
            let _ = self.sender.send(Arc::new(Batch::render(from, page)?));
            if !full {
                return Ok(());
            }
        }
    }

    /// Waits for a hint about this game or the poll interval; false on shutdown.
    async fn wait(&mut self) -> bool {
        let deadline = tokio::time::sleep(self.state.stream_poll);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                hint = self.hints.recv() => match hint {
                    Ok(game) if game == self.game || game == crate::notify::EVERY_GAME => return true,
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => return true,
                    Err(broadcast::error::RecvError::Closed) => return false,
                },
                () = &mut deadline => return true,
                changed = self.shutdown.changed() => {
                    if changed.is_err() || *self.shutdown.borrow() {
                        return false;
                    }
                }
            }
        }
    }

    /// Leaves the hub when the game's last stream here has closed; true then. Streams join
    /// under the hub's lock, so none can join a reader that is leaving.
    fn retire(&self) -> bool {
        if self.sender.receiver_count() > 0 {
            return false;
        }
        let mut feeds = self
            .hub
            .feeds
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if self.sender.receiver_count() > 0 {
            return false;
        }
        if feeds.get(&self.game).is_some_and(|(id, _)| *id == self.id) {
            feeds.remove(&self.game);
        }
        true
    }

    /// Leaves the hub (shutdown): streams see the feed close.
    fn retire_now(&self) {
        let mut feeds = self
            .hub
            .feeds
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if feeds.get(&self.game).is_some_and(|(id, _)| *id == self.id) {
            feeds.remove(&self.game);
        }
    }
}

/// When a stream that last sent at `last_sent` sends its keep-alive: `every` later, rounded
/// up to a grid shared by the whole process (a quarter of `every`, at most a second). The
/// streams of a replica that are due within the same step then send theirs in one wake-up
/// of their worker instead of one wake-up each, which idle streams opened over some seconds
/// otherwise cost (docs/scaling.md, "Idle streams: keep-alives on a shared grid").
fn keep_alive_due(last_sent: Instant, every: std::time::Duration) -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let step = (every / 4).min(std::time::Duration::from_secs(1));
    on_grid(last_sent + every, *EPOCH.get_or_init(Instant::now), step)
}

/// `at` rounded up to the next multiple of `step` after `epoch` (`epoch` itself when `at`
/// is earlier).
fn on_grid(at: Instant, epoch: Instant, step: std::time::Duration) -> Instant {
    let step = step.as_nanos().max(1);
    let steps = at
        .saturating_duration_since(epoch)
        .as_nanos()
        .div_ceil(step);
    let offset = steps.saturating_mul(step);
    u64::try_from(offset)
        .ok()
        .and_then(|ns| epoch.checked_add(std::time::Duration::from_nanos(ns)))
        .unwrap_or(at)
}

/// One open stream.
struct Live {
    /// Held for its `Drop`: gives the lease back when the stream ends.
    _lease: Lease,
    /// Ends the stream when its token is revoked.
    token: TokenWatch,
    state: web::Data<AppState>,
    feed: broadcast::Receiver<Arc<Batch>>,
    shutdown: watch::Receiver<bool>,
    game: String,
    account: String,
    /// Everything up to this seq has been sent or is not for this viewer.
    cursor: i32,
    /// Read the table before taking the next shared batch.
    catch_up: bool,
    queue: VecDeque<Bytes>,
    finished: bool,
    last_sent: Instant,
}

impl Live {
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            // Before anything is sent: nothing more goes out on a revoked token.
            if self.token.revoked() {
                tracing::info!(game = %self.game, "ending a stream whose token was revoked");
                return None;
            }
            if let Some(frame) = self.queue.pop_front() {
                self.last_sent = Instant::now();
                if self.queue.is_empty() {
                    return Some(frame);
                }
                // Everything queued in one chunk: one write instead of one per event, which
                // counts when a move wakes thousands of streams.
                let size = frame.len() + self.queue.iter().map(Bytes::len).sum::<usize>();
                let mut all = bytes::BytesMut::with_capacity(size);
                all.extend_from_slice(&frame);
                for more in self.queue.drain(..) {
                    all.extend_from_slice(&more);
                }
                return Some(all.freeze());
            }
            if self.finished || *self.shutdown.borrow() {
                return None;
            }
            if self.catch_up {
                if let Err(e) = self.read_table().await {
                    tracing::warn!(error = %crate::telemetry::Chain(&e), game = %self.game, "ending a stream after a read error");
                    return None;
                }
                continue;
            }
            if !self.wait().await {
                return None;
            }
            if self.queue.is_empty() && self.last_sent.elapsed() >= self.state.stream_keep_alive {
                self.last_sent = Instant::now();
                return Some(Bytes::from_static(b": keep-alive\n\n"));
            }
        }
    }

    /// Reads a page after the cursor from the table itself (at the start, and after falling
    /// behind the shared feed); catching up ends with a short page.
    async fn read_table(&mut self) -> Result<(), ApiError> {
        let (st, game, after) = (self.state.clone(), self.game.clone(), self.cursor);
        let page = blocking(move || st.service.stream_page(&game, after, PAGE)).await?;
        self.catch_up = i64::try_from(page.events.len()).unwrap_or(i64::MAX) >= PAGE;
        let batch = Batch::render(after, page)?;
        self.take(&batch)
    }

    /// Queues the batch's events this viewer may see and has not had.
    fn take(&mut self, batch: &Batch) -> Result<(), ApiError> {
        if !batch.view.admits(&self.account) {
            return Err(ApiError::NotFound("game"));
        }
        let seat = batch.view.seat_of(&self.account);
        for frame in batch.frames.iter().filter(|f| f.seq > self.cursor) {
            if frame.audience.admits(seat) {
                self.queue.push_back(frame.bytes.clone());
                if frame.finished {
                    self.finished = true;
                }
            }
        }
        self.cursor = self.cursor.max(batch.upto);
        Ok(())
    }

    /// Waits for the shared feed, the keep-alive, or shutdown; false on shutdown.
    async fn wait(&mut self) -> bool {
        let keep_alive = tokio::time::sleep_until(
            keep_alive_due(self.last_sent, self.state.stream_keep_alive).into(),
        );
        tokio::pin!(keep_alive);
        loop {
            tokio::select! {
                batch = self.feed.recv() => match batch {
                    Ok(batch) => {
                        if batch.upto <= self.cursor {
                            continue;
                        }
                        if batch.from > self.cursor {
                            // Something between is missing here: the table has it.
                            self.catch_up = true;
                        } else if let Err(e) = self.take(&batch) {
                            tracing::info!(error = %e, game = %self.game, "ending a stream the viewer may no longer see");
                            self.finished = true;
                        }
                        return true;
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        self.catch_up = true;
                        return true;
                    }
                    Err(broadcast::error::RecvError::Closed) => {
                        if *self.shutdown.borrow() {
                            return false;
                        }
                        // The reader left (it only does when nobody listens, or on
                        // shutdown): join a new one and catch up from the table.
                        self.feed = self.state.streams.subscribe(&self.state, &self.game);
                        self.catch_up = true;
                        return true;
                    }
                },
                () = &mut keep_alive => return true,
                changed = self.shutdown.changed() => {
                    if changed.is_err() || *self.shutdown.borrow() {
                        return false;
                    }
                }
                changed = self.token.standing.changed() => {
                    // The session outlives its streams' watches; were it gone, nothing
                    // could tell this stream of a revocation any more.
                    if changed.is_err() {
                        return false;
                    }
                    // `next` ends the stream.
                    if self.token.revoked() {
                        return true;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_stream_is_revoked_once_its_account_moved_past_its_token_or_is_gone() {
        let hub = Hub::new(Duration::from_secs(1));
        let old = hub.register("a", 3);
        let new = hub.register("a", 4);
        let other = hub.register("b", 0);
        // Nothing read yet, or a reading from before the newer token: not revoked.
        assert!(!old.revoked() && !new.revoked());
        hub.apply(&HashMap::from([("a".to_owned(), Some(3))]));
        assert!(!old.revoked() && !new.revoked());
        // The account's version moved on: only the older token's stream ends.
        hub.apply(&HashMap::from([("a".to_owned(), Some(4))]));
        assert!(old.revoked());
        assert!(!new.revoked());
        assert!(!other.revoked());
        // Deleted (or no such account): every stream of it ends.
        hub.apply(&HashMap::from([("a".to_owned(), None)]));
        assert!(new.revoked());
        assert!(!other.revoked());
        // The session goes with the account's last stream.
        drop((old, new));
        let sessions = hub.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(sessions.keys().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn a_stream_opened_after_a_revocation_with_the_old_token_is_revoked_at_once() {
        let hub = Hub::new(Duration::from_secs(1));
        let _fresh = hub.register("a", 5);
        hub.apply(&HashMap::from([("a".to_owned(), Some(5))]));
        // A stream whose old token was checked just before the revocation joins late.
        let late = hub.register("a", 4);
        assert!(late.revoked());
    }

    #[test]
    fn keep_alives_fall_on_a_shared_grid_never_early() {
        let epoch = Instant::now();
        let step = Duration::from_millis(250);
        // Two streams whose keep-alives are due 100 ms apart, within one step: one instant.
        let a = on_grid(epoch + Duration::from_millis(15_010), epoch, step);
        let b = on_grid(epoch + Duration::from_millis(15_110), epoch, step);
        assert_eq!(a, b);
        assert_eq!(a, epoch + Duration::from_millis(15_250));
        // On the grid already: unchanged; never before it is due.
        let on = epoch + Duration::from_millis(15_500);
        assert_eq!(on_grid(on, epoch, step), on);
        for ms in [1, 249, 251, 999, 15_001] {
            let due = epoch + Duration::from_millis(ms);
            let at = on_grid(due, epoch, step);
            assert!(at >= due && at < due + step, "{ms} ms → {:?}", at - epoch);
        }
        // Due before the grid began: at once.
        assert_eq!(
            on_grid(epoch, epoch + Duration::from_secs(1), step),
            epoch + Duration::from_secs(1)
        );
    }

    #[test]
    fn a_keep_alive_comes_after_the_silence_and_at_most_a_quarter_later() {
        for every in [Duration::from_millis(200), Duration::from_secs(15)] {
            let last = Instant::now();
            let due = keep_alive_due(last, every);
            assert!(due >= last + every);
            assert!(due <= last + every + every / 4);
        }
    }
}
