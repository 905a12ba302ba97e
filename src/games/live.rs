//! The live-stream engine behind `GET /v1/games/{id}/stream`; the HTTP layer
//! (`src/http/stream.rs`) frames what it yields as server-sent events.
//!
//! One reader per game per replica ([`Hub`]): while a game has open streams here, one task
//! re-reads its new events from the table after every wake-up hint (from this process, or
//! from other replicas through PostgreSQL LISTEN/NOTIFY, `crate::store::wakeups`) and every
//! `STREAM_POLL_MS` even without one, so a lost hint delays an event but never loses it. It
//! reads the events of every seat once, renders each once (with the [`Render`] the hub was
//! built with), and broadcasts them to the game's streams; each stream ([`Live`]) passes on
//! only what its own viewer may see (public events, and its seat's own; server-only events
//! to nobody), deciding the seat from the same read.
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
//!
//! A stream's place in the per-account stream limit is a lease, renewed with all of this
//! replica's leases by one task and given back when the stream ends.
//!
//! Async, unlike the rest of `crate::games`: it runs on the server's runtime (its tasks are
//! spawned on the current worker thread) and calls the blocking services on the blocking
//! pool.

use std::collections::{HashMap, HashSet, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::task::AtomicWaker;
use rules::Audience;
use tokio::sync::{broadcast, watch};
use tokio::time::Sleep;

use super::{Access, ReadEvent, Service, ServiceError, StreamPage};
use crate::accounts::{AccountError, Accounts};
use crate::limits::Limits;
use crate::store::StoreError;

/// Turns one event into the bytes every stream of its game sends for it (rendered once per
/// event, whatever the number of streams).
pub type Render = fn(&ReadEvent) -> Result<Bytes, serde_json::Error>;

/// What the engine needs: the services it reads, the server's shutdown signal, its timings
/// and how an event is rendered.
pub struct Wiring {
    /// Reads the games' events.
    pub service: Service,
    /// Reads the token versions of the streams' accounts.
    pub accounts: Accounts,
    /// Renews and gives back the streams' leases.
    pub limits: Limits,
    /// Turns true when the server shuts down (streams end).
    pub shutdown: watch::Receiver<bool>,
    /// A game's shared reader re-reads the table at least this often (`STREAM_POLL_MS`).
    pub poll: Duration,
    /// A stream sends a keep-alive after this much silence (`STREAM_KEEPALIVE_MS`).
    pub keep_alive: Duration,
    /// How often the revocation check reads the accounts' token versions
    /// (`STREAM_REVOCATION_CHECK_MS`).
    pub check_every: Duration,
    /// How an event is rendered for the streams.
    pub render: Render,
}

/// Why a read of the engine failed (logged; the stream or the reader goes on or ends).
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// Reading the game failed, or the viewer may no longer see it.
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// Reading the accounts' token versions failed.
    #[error(transparent)]
    Account(#[from] AccountError),
    /// Renewing the leases failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An event could not be rendered.
    #[error("could not render an event")]
    Render(#[source] serde_json::Error),
    /// The blocking task failed.
    #[error("blocking task failed")]
    Task(#[from] tokio::task::JoinError),
}

/// Runs a blocking closure on the blocking pool and flattens its result.
async fn blocking<T, E, F>(f: F) -> Result<T, LiveError>
where
    F: FnOnce() -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: Into<LiveError> + Send + 'static,
{
    tokio::task::spawn_blocking(f).await?.map_err(Into::into)
}

/// What a stream sends next.
#[derive(Debug)]
pub enum Chunk {
    /// Rendered events, all queued ones in one chunk.
    Events(Bytes),
    /// Nothing happened for the keep-alive interval.
    KeepAlive,
}
/// A stream's place in the per-account limit: renewed with all of this replica's leases
/// while the stream lives ([`Hub`]), given back when it is dropped (a replica that dies
/// leaves leases that expire).
struct Lease {
    limits: Limits,
    id: String,
    held: Arc<Mutex<HashSet<String>>>,
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
    fn render(row: &ReadEvent, render: Render) -> Result<Self, LiveError> {
        Ok(Self {
            seq: row.seq,
            audience: audience(&row.audience),
            finished: row.event_type == "game_finished",
            bytes: render(row).map_err(LiveError::Render)?,
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
    view: Arc<Access>,
    frames: Vec<Arc<Frame>>,
    /// What the batch sends each kind of viewer that stands at its start, by seat (index 0:
    /// a viewer without a seat), made by the first such stream: a move wakes every stream
    /// of the game at once, and they share one buffer instead of each joining its own.
    shares: Box<[OnceLock<Share>]>,
}

/// The part of a batch one kind of viewer sees, joined ([`Batch::share`]).
#[derive(Clone)]
struct Share {
    bytes: Bytes,
    finished: bool,
}

impl Batch {
    /// The batch of `page`, read after `from`. Its view is `last` when that is the same,
    /// so that streams can tell by the pointer that they know their place in it.
    fn render(
        from: i32,
        page: StreamPage,
        render: Render,
        last: Option<&Arc<Access>>,
    ) -> Result<Self, LiveError> {
        let shares = (0..=page.view.seats.len())
            .map(|_| OnceLock::new())
            .collect();
        let view = match last {
            Some(last) if **last == page.view => last.clone(),
            _ => Arc::new(page.view),
        };
        Ok(Self {
            from,
            upto: page.upto,
            view,
            frames: page
                .events
                .iter()
                .map(|row| Frame::render(row, render).map(Arc::new))
                .collect::<Result<_, _>>()?,
            shares,
        })
    }

    /// What the viewer in `seat` gets of the batch after `cursor`: the frames it may see,
    /// in one buffer, and whether one of them ends the game. A viewer at the batch's start
    /// gets the copy shared by every viewer of its seat.
    fn share(&self, seat: Option<u8>, cursor: i32) -> Share {
        let join = || {
            let mut bytes = bytes::BytesMut::new();
            let mut finished = false;
            let seen = self.frames.iter().filter(|f| f.seq > cursor);
            for frame in seen.filter(|f| f.audience.admits(seat)) {
                bytes.extend_from_slice(&frame.bytes);
                finished |= frame.finished;
            }
            Share {
                bytes: bytes.freeze(),
                finished,
            }
        };
        let index = seat.map_or(0, |s| usize::from(s) + 1);
        match self.shares.get(index) {
            // Every frame's seq is past `from`: all of it, as every other viewer of the
            // seat at its start sees it.
            Some(cell) if cursor <= self.from => cell.get_or_init(join).clone(),
            _ => join(),
        }
    }
}

/// A game's reader: its id (a new reader may replace one that is leaving) and broadcast.
type Feed = (u64, broadcast::Sender<Arc<Batch>>);

/// The live-stream engine of this replica: opens streams ([`Hub::open`]) and holds the
/// shared readers (game id → the broadcast of its reader task, which runs while the game
/// has open streams here), the streams' leases and the revocation check.
#[derive(Clone)]
pub struct Hub {
    wiring: Arc<Wiring>,
    feeds: Arc<Mutex<HashMap<String, Feed>>>,
    next: Arc<AtomicU64>,
    /// The leases of this replica's open streams, renewed together.
    leases: Arc<Mutex<HashSet<String>>>,
    renewing: Arc<AtomicBool>,
    /// The accounts of this replica's open streams, with what the revocation check last
    /// read of each.
    sessions: Sessions,
    checking: Arc<AtomicBool>,
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

/// An account's streams on this replica (each with its token's version), and the check's
/// last reading.
struct Session {
    streams: HashMap<u64, (i32, Arc<Revocation>)>,
    next: u64,
    standing: Standing,
}

type Sessions = Arc<Mutex<HashMap<String, Session>>>;

/// A stream's hold on its token: tells the stream when the token was revoked, and takes the
/// stream off its account's session when dropped.
struct TokenWatch {
    account: String,
    /// The stream's key in its account's session.
    id: u64,
    revocation: Arc<Revocation>,
    sessions: Sessions,
}

impl TokenWatch {
    /// Whether the stream's token no longer counts (see [`revokes`]).
    fn revoked(&self) -> bool {
        self.revocation.revoked.load(Ordering::Acquire)
    }
}

impl Drop for TokenWatch {
    fn drop(&mut self) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = sessions.get_mut(&self.account) {
            session.streams.remove(&self.id);
            if session.streams.is_empty() {
                sessions.remove(&self.account);
            }
        }
    }
}

/// The revocation check's word to one stream: set once its token is revoked, and the
/// stream woken. One per stream, so that a stream woken by a move polls two atomics of its
/// own here; waiting on a watch shared by the account's streams instead registered and
/// dropped a waiter under the watch's lock at every wake-up of every stream (with the same
/// for the shutdown watch, 4.2 % of the server's CPU with 10,000 streams,
/// docs/scaling.md).
#[derive(Default)]
struct Revocation {
    revoked: AtomicBool,
    waker: AtomicWaker,
}

impl Revocation {
    fn revoke(&self) {
        self.revoked.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// Ready once revoked.
    fn poll(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.revoked.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        self.waker.register(cx.waker());
        // Revoked between the load and the registration: that wake-up went to the old
        // waker.
        if self.revoked.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Whether a stream opened with token version `version` ends by the check's reading: the
/// account is gone, or its version moved past the token's. Versions only grow, so a
/// reading older than the token (a check that began before the stream opened) says
/// nothing.
fn revokes(standing: Standing, version: i32) -> bool {
    match standing {
        Standing::Unknown => false,
        Standing::Version(v) => v > version,
        Standing::Gone => true,
    }
}

impl Hub {
    /// An empty hub over `wiring`.
    #[must_use]
    pub fn new(wiring: Wiring) -> Self {
        Self {
            wiring: Arc::new(wiring),
            feeds: Arc::default(),
            next: Arc::default(),
            leases: Arc::default(),
            renewing: Arc::default(),
            sessions: Sessions::default(),
            checking: Arc::default(),
        }
    }

    /// Opens a stream of `game` for `account`, held to the token version it was opened
    /// with, after `after`, holding the stream lease `lease` (from
    /// [`Limits::open_stream`]) until the stream is dropped. Existence and access are
    /// checked by the caller before; the stream ends when the viewer may no longer see the
    /// game.
    #[must_use]
    pub fn open(
        &self,
        game: String,
        account: String,
        token_version: i32,
        after: i32,
        lease: String,
    ) -> Live {
        Live {
            _lease: self.hold(lease),
            token: self.watch_token(&account, token_version),
            feed: self.subscribe(&game),
            shutdown: self.wiring.shutdown.clone(),
            hub: self.clone(),
            game,
            account,
            cursor: after,
            catch_up: true,
            queue: VecDeque::new(),
            finished: false,
            last_sent: Instant::now(),
            keep_alive: Box::pin(tokio::time::sleep_until(
                keep_alive_due(Instant::now(), self.wiring.keep_alive).into(),
            )),
            rearm: false,
            seen: None,
        }
    }

    /// Holds a stream to the token version it was opened with until the returned
    /// [`TokenWatch`] is dropped, starting this replica's revocation check with its first
    /// stream.
    fn watch_token(&self, account: &str, version: i32) -> TokenWatch {
        let watch = register(&self.sessions, account, version);
        if !self.checking.swap(true, Ordering::SeqCst) {
            let hub = self.clone();
            let mut shutdown = self.wiring.shutdown.clone();
            tokio::task::spawn_local(async move {
                loop {
                    tokio::select! {
                        () = tokio::time::sleep(hub.wiring.check_every) => {}
                        changed = shutdown.changed() => {
                            if changed.is_err() || *shutdown.borrow() {
                                return;
                            }
                        }
                    }
                    hub.check().await;
                }
            });
        }
        watch
    }

    /// Reads the token versions of every account with open streams here, in one read
    /// (one statement per 1,000 accounts, not one per stream), and tells their streams.
    async fn check(&self) {
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
        let accounts = self.wiring.accounts.clone();
        match blocking(move || accounts.token_versions(&ids)).await {
            Ok(versions) => apply(&self.sessions, &versions),
            Err(e) => {
                tracing::warn!(error = %e, "could not check the live streams' tokens");
            }
        }
    }

    /// Checks one account's token version now, on this replica (blocking): after a
    /// revocation made here, its streams here end before the revocation is answered;
    /// other replicas' streams within their next check.
    pub fn recheck(&self, account: &str) {
        let watched = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(account);
        if !watched {
            return;
        }
        match self.wiring.accounts.token_versions(&[account.to_owned()]) {
            Ok(versions) => apply(&self.sessions, &versions),
            // The periodic check will find it.
            Err(e) => {
                tracing::warn!(error = %crate::telemetry::Chain(&e), "could not check an account's live streams");
            }
        }
    }

    /// Keeps a stream's lease renewed until the returned [`Lease`] is dropped. One task per
    /// replica renews all leases together every quarter of [`crate::limits::LEASE`] (one
    /// statement per 1,000 streams, not one per stream).
    fn hold(&self, id: String) -> Lease {
        self.leases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone());
        if !self.renewing.swap(true, Ordering::SeqCst) {
            let (leases, limits, mut shutdown) = (
                self.leases.clone(),
                self.wiring.limits.clone(),
                self.wiring.shutdown.clone(),
            );
            tokio::task::spawn_local(async move {
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
            limits: self.wiring.limits.clone(),
            id,
            held: self.leases.clone(),
        }
    }

    /// Joins the game's shared feed, starting its reader when this is the game's first
    /// stream here.
    fn subscribe(&self, game: &str) -> broadcast::Receiver<Arc<Batch>> {
        let mut feeds = self.feeds.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, sender)) = feeds.get(game) {
            return sender.subscribe();
        }
        let (sender, receiver) = broadcast::channel(FEED_BUFFER);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        feeds.insert(game.to_owned(), (id, sender.clone()));
        let reader = Reader {
            hub: self.clone(),
            id,
            game: game.to_owned(),
            sender,
            hints: self.wiring.service.notifier().subscribe(),
            shutdown: self.wiring.shutdown.clone(),
            cursor: None,
            view: None,
        };
        tokio::task::spawn_local(reader.run());
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

/// Adds a stream of `account` opened with token version `version` to the sessions; it
/// is revoked at once when the check's last reading already revokes it.
fn register(sessions: &Sessions, account: &str, version: i32) -> TokenWatch {
    let mut all = sessions.lock().unwrap_or_else(PoisonError::into_inner);
    let session = all.entry(account.to_owned()).or_insert_with(|| Session {
        streams: HashMap::new(),
        next: 0,
        standing: Standing::Unknown,
    });
    let revocation = Arc::new(Revocation::default());
    if revokes(session.standing, version) {
        revocation.revoke();
    }
    let id = session.next;
    session.next += 1;
    session.streams.insert(id, (version, revocation.clone()));
    TokenWatch {
        account: account.to_owned(),
        id,
        revocation,
        sessions: sessions.clone(),
    }
}

/// Records what the check read: a version, or `None` for an account that is deleted or
/// does not exist, and revokes (and wakes) the streams that reading ends.
fn apply(sessions: &Sessions, versions: &HashMap<String, Option<i32>>) {
    let mut sessions = sessions.lock().unwrap_or_else(PoisonError::into_inner);
    for (account, version) in versions {
        if let Some(session) = sessions.get_mut(account) {
            let now = version.map_or(Standing::Gone, Standing::Version);
            if session.standing == now {
                continue;
            }
            session.standing = now;
            for (version, revocation) in session.streams.values() {
                if revokes(now, *version) && !revocation.revoked.load(Ordering::Acquire) {
                    revocation.revoke();
                }
            }
        }
    }
}

/// The one reader of a game on this replica.
struct Reader {
    hub: Hub,
    id: u64,
    game: String,
    sender: broadcast::Sender<Arc<Batch>>,
    hints: broadcast::Receiver<String>,
    shutdown: watch::Receiver<bool>,
    /// Up to where the game has been read; `None` before the first read.
    cursor: Option<i32>,
    /// The view of the last batch sent.
    view: Option<Arc<Access>>,
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
    async fn read(&mut self) -> Result<(), LiveError> {
        let render = self.hub.wiring.render;
        loop {
            let (service, game) = (self.hub.wiring.service.clone(), self.game.clone());
            let (after, limit) = self.cursor.map_or((i32::MAX, 1), |c| (c, PAGE));
            let page = blocking(move || service.stream_page(&game, after, limit)).await?;
            let full = i64::try_from(page.events.len()).unwrap_or(i64::MAX) >= limit;
            let Some(from) = self.cursor else {
                self.cursor = Some(page.upto);
                // A stream that joined has read the table up to where it stands; what
                // committed between that read and this one would be in no batch, and the
                // stream would wait for the next move. An empty batch from here makes such
                // a stream (its cursor below `from`) catch up from the table.
                let batch = Batch::render(page.upto, page, render, self.view.as_ref())?;
                self.view = Some(batch.view.clone());
                let _ = self.sender.send(Arc::new(batch));
                return Ok(());
            };
            if page.upto <= from {
                return Ok(());
            }
            self.cursor = Some(page.upto);
            // No receiver: the last stream just left; `retire` ends the reader.
            let batch = Batch::render(from, page, render, self.view.as_ref())?;
            self.view = Some(batch.view.clone());
            let _ = self.sender.send(Arc::new(batch));
            if !full {
                return Ok(());
            }
        }
    }

    /// Waits for a hint about this game or the poll interval; false on shutdown.
    async fn wait(&mut self) -> bool {
        let deadline = tokio::time::sleep(self.hub.wiring.poll);
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
fn keep_alive_due(last_sent: Instant, every: Duration) -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let step = (every / 4).min(Duration::from_secs(1));
    on_grid(last_sent + every, *EPOCH.get_or_init(Instant::now), step)
}

/// `at` rounded up to the next multiple of `step` after `epoch` (`epoch` itself when `at`
/// is earlier).
fn on_grid(at: Instant, epoch: Instant, step: Duration) -> Instant {
    let step = step.as_nanos().max(1);
    let steps = at
        .saturating_duration_since(epoch)
        .as_nanos()
        .div_ceil(step);
    let offset = steps.saturating_mul(step);
    u64::try_from(offset)
        .ok()
        .and_then(|ns| epoch.checked_add(Duration::from_nanos(ns)))
        .unwrap_or(at)
}

/// One open stream ([`Hub::open`]); [`Live::next`] says what it sends next.
pub struct Live {
    /// Held for its `Drop`: gives the lease back when the stream ends.
    _lease: Lease,
    /// Ends the stream when its token is revoked.
    token: TokenWatch,
    hub: Hub,
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
    /// Wakes the stream to see whether a keep-alive is due. Kept across waits and set again
    /// only when it has fired (sends in between only move when the next keep-alive is
    /// due), so a move's wake-up of thousands of streams neither starts nor cancels a
    /// timer each.
    keep_alive: Pin<Box<Sleep>>,
    /// The keep-alive timer fired and is to be set again.
    rearm: bool,
    /// The view this stream last found itself in: whether it admits the viewer, and its
    /// seat (a game's reader passes the same view on while it does not change).
    seen: Option<(Arc<Access>, bool, Option<u8>)>,
}

impl Live {
    /// The next chunk to send; `None` when the stream ends (the game finished, the token
    /// was revoked, the viewer may no longer see the game, a read failed, or the server
    /// shuts down).
    pub async fn next(&mut self) -> Option<Chunk> {
        loop {
            // Before anything is sent: nothing more goes out on a revoked token.
            if self.token.revoked() {
                tracing::info!(game = %self.game, "ending a stream whose token was revoked");
                return None;
            }
            if let Some(frame) = self.queue.pop_front() {
                self.last_sent = Instant::now();
                if self.queue.is_empty() {
                    return Some(Chunk::Events(frame));
                }
                // Everything queued in one chunk: one write instead of one per event, which
                // counts when a move wakes thousands of streams.
                let size = frame.len() + self.queue.iter().map(Bytes::len).sum::<usize>();
                let mut all = bytes::BytesMut::with_capacity(size);
                all.extend_from_slice(&frame);
                for more in self.queue.drain(..) {
                    all.extend_from_slice(&more);
                }
                return Some(Chunk::Events(all.freeze()));
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
            if self.queue.is_empty() && self.last_sent.elapsed() >= self.hub.wiring.keep_alive {
                self.last_sent = Instant::now();
                return Some(Chunk::KeepAlive);
            }
        }
    }

    /// Reads a page after the cursor from the table itself (at the start, and after falling
    /// behind the shared feed); catching up ends with a short page.
    async fn read_table(&mut self) -> Result<(), LiveError> {
        let (service, game, after) = (
            self.hub.wiring.service.clone(),
            self.game.clone(),
            self.cursor,
        );
        let page = blocking(move || service.stream_page(&game, after, PAGE)).await?;
        self.catch_up = i64::try_from(page.events.len()).unwrap_or(i64::MAX) >= PAGE;
        let batch = Batch::render(after, page, self.hub.wiring.render, None)?;
        self.take(&batch)
    }

    /// Queues the batch's events this viewer may see and has not had.
    fn take(&mut self, batch: &Batch) -> Result<(), LiveError> {
        let (admits, seat) = match &self.seen {
            Some((view, admits, seat)) if Arc::ptr_eq(view, &batch.view) => (*admits, *seat),
            _ => {
                let view = &batch.view;
                let (admits, seat) = (view.admits(&self.account), view.seat_of(&self.account));
                self.seen = Some((view.clone(), admits, seat));
                (admits, seat)
            }
        };
        if !admits {
            return Err(ServiceError::GameNotFound.into());
        }
        let share = batch.share(seat, self.cursor);
        if !share.bytes.is_empty() {
            self.queue.push_back(share.bytes);
        }
        self.finished |= share.finished;
        self.cursor = self.cursor.max(batch.upto);
        Ok(())
    }

    /// Waits for the shared feed, the keep-alive's time, or the token's revocation; false
    /// on shutdown.
    ///
    /// Shutdown comes through the feed: the game's reader ends on shutdown, which closes
    /// the feed, and a stream that then subscribes again starts a reader that ends at
    /// once. So a move's wake-up polls nothing shared beyond the feed itself.
    async fn wait(&mut self) -> bool {
        if std::mem::take(&mut self.rearm) {
            let due = keep_alive_due(self.last_sent, self.hub.wiring.keep_alive);
            self.keep_alive.as_mut().reset(due.into());
        }
        loop {
            tokio::select! {
                biased;
                // `next` ends the stream.
                () = std::future::poll_fn(|cx| self.token.revocation.poll(cx)) => return true,
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
                        self.feed = self.hub.subscribe(&self.game);
                        self.catch_up = true;
                        return true;
                    }
                },
                // `next` sends a keep-alive if one is due by now.
                () = self.keep_alive.as_mut() => {
                    self.rearm = true;
                    return true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_is_revoked_once_its_account_moved_past_its_token_or_is_gone() {
        let sessions = Sessions::default();
        let old = register(&sessions, "a", 3);
        let new = register(&sessions, "a", 4);
        let other = register(&sessions, "b", 0);
        // Nothing read yet, or a reading from before the newer token: not revoked.
        assert!(!old.revoked() && !new.revoked());
        apply(&sessions, &HashMap::from([("a".to_owned(), Some(3))]));
        assert!(!old.revoked() && !new.revoked());
        // The account's version moved on: only the older token's stream ends.
        apply(&sessions, &HashMap::from([("a".to_owned(), Some(4))]));
        assert!(old.revoked());
        assert!(!new.revoked());
        assert!(!other.revoked());
        // Deleted (or no such account): every stream of it ends.
        apply(&sessions, &HashMap::from([("a".to_owned(), None)]));
        assert!(new.revoked());
        assert!(!other.revoked());
        // The session goes with the account's last stream.
        drop((old, new));
        let all = sessions.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(all.keys().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn a_stream_opened_after_a_revocation_with_the_old_token_is_revoked_at_once() {
        let sessions = Sessions::default();
        let _fresh = register(&sessions, "a", 5);
        apply(&sessions, &HashMap::from([("a".to_owned(), Some(5))]));
        // A stream whose old token was checked just before the revocation joins late.
        let late = register(&sessions, "a", 4);
        assert!(late.revoked());
    }

    /// A batch of events 5 (public), 6 (seat 0's), 7 (public, ends the game) read after 4.
    fn batch() -> Batch {
        let frame = |seq: i32, audience, finished| {
            Arc::new(Frame {
                seq,
                audience,
                finished,
                bytes: Bytes::from(format!("<{seq}>")),
            })
        };
        Batch {
            from: 4,
            upto: 7,
            view: Arc::new(Access {
                public: true,
                seats: vec![Some("a".into()), Some("b".into())],
                kept: Vec::new(),
            }),
            frames: vec![
                frame(5, Audience::Public, false),
                frame(6, Audience::Seat(0), false),
                frame(7, Audience::Public, true),
            ],
            shares: (0..3).map(|_| OnceLock::new()).collect(),
        }
    }

    #[test]
    fn a_viewer_gets_what_its_seat_may_see_after_where_it_stands() {
        let batch = batch();
        let share = |seat, cursor| {
            let s = batch.share(seat, cursor);
            (String::from_utf8_lossy(&s.bytes).into_owned(), s.finished)
        };
        assert_eq!(share(None, 4), ("<5><7>".to_owned(), true));
        assert_eq!(share(Some(0), 4), ("<5><6><7>".to_owned(), true));
        assert_eq!(share(Some(1), 4), ("<5><7>".to_owned(), true));
        // Further on: only what comes after the viewer's place.
        assert_eq!(share(Some(0), 5), ("<6><7>".to_owned(), true));
        assert_eq!(share(None, 6), ("<7>".to_owned(), true));
        assert_eq!(share(Some(0), 7), (String::new(), false));
        // Viewers of one seat at the batch's start share one buffer.
        let (one, two) = (batch.share(Some(0), 4), batch.share(Some(0), 4));
        assert_eq!(one.bytes.as_ptr(), two.bytes.as_ptr());
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
