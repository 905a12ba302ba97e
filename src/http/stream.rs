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
//! The events table is the truth: a stream re-reads it after every wake-up hint (from this
//! process, or from other replicas through PostgreSQL LISTEN/NOTIFY, `crate::store::wakeups`) and every
//! `STREAM_POLL_MS` even without one, so a lost hint delays an event but never loses it.

use std::collections::VecDeque;
use std::time::Instant;

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, watch};
use utoipa::{IntoParams, ToSchema};

use super::caller::Caller;
use super::errors::{ApiError, Problem};
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
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (ticket, expires_in) = blocking(move || {
        state
            .service
            .issue_stream_ticket(&id, &caller.id)
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
        (status = 401, description = "`unauthorized`: no or a bad token, or an unknown, used or expired ticket", body = Problem),
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
    let account = match params.ticket {
        Some(ticket) => {
            let (st, gid) = (state.clone(), id.clone());
            blocking(move || {
                st.service
                    .redeem_stream_ticket(&gid, &ticket)
                    .map_err(ApiError::from)
            })
            .await?
            .ok_or(ApiError::Unauthorized(
                "unknown, used or expired stream ticket",
            ))?
        }
        None => {
            use actix_web::FromRequest;
            Caller::extract(&req).await?.id
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
    blocking(move || {
        st.service
            .events(&gid, &reader, after, 1)
            .map(|_| ())
            .map_err(ApiError::from)
    })
    .await?;
    let (limits, holder) = (state.limits.clone(), account.clone());
    let lease = blocking(move || limits.open_stream(&holder).map_err(ApiError::from)).await?;
    let live = Live {
        lease: Lease {
            limits: state.limits.clone(),
            id: lease,
            renewed: Instant::now(),
        },
        hints: state.service.notifier().subscribe(),
        shutdown: state.shutdown.clone(),
        state,
        game: id,
        account,
        after,
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

/// A stream's place in the per-account limit: renewed while the stream lives, given back
/// when it is dropped (a replica that dies leaves leases that expire).
struct Lease {
    limits: crate::limits::Limits,
    id: String,
    renewed: Instant,
}

impl Lease {
    fn renew_if_due(&mut self) {
        if self.renewed.elapsed() < crate::limits::LEASE / 2 {
            return;
        }
        self.renewed = Instant::now();
        let (limits, id) = (self.limits.clone(), self.id.clone());
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn_blocking(move || {
                if let Err(e) = limits.renew_stream(&id) {
                    tracing::warn!(error = %crate::telemetry::Chain(&e), "could not renew a stream lease");
                }
            });
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
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

/// One open stream.
struct Live {
    lease: Lease,
    state: web::Data<AppState>,
    hints: broadcast::Receiver<String>,
    shutdown: watch::Receiver<bool>,
    game: String,
    account: String,
    after: i32,
    queue: VecDeque<Bytes>,
    finished: bool,
    last_sent: Instant,
}

impl Live {
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(frame) = self.queue.pop_front() {
                self.last_sent = Instant::now();
                return Some(frame);
            }
            if self.finished || *self.shutdown.borrow() {
                return None;
            }
            match self.fetch().await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %crate::telemetry::Chain(&e), game = %self.game, "ending a stream after a read error");
                    return None;
                }
            }
            if !self.wait().await {
                return None;
            }
            self.lease.renew_if_due();
            if self.last_sent.elapsed() >= self.state.stream_keep_alive {
                self.last_sent = Instant::now();
                return Some(Bytes::from_static(b": keep-alive\n\n"));
            }
        }
    }

    /// Reads events after `after` into the queue; true when there were any.
    async fn fetch(&mut self) -> Result<bool, ApiError> {
        let (st, game, account, after) = (
            self.state.clone(),
            self.game.clone(),
            self.account.clone(),
            self.after,
        );
        let rows = blocking(move || {
            st.service
                .events(&game, &account, after, 500)
                .map_err(ApiError::from)
        })
        .await?;
        for row in &rows {
            let item = EventItem {
                seq: row.seq,
                type_: row.event_type.clone(),
                at: row.recorded_at.and_utc().to_rfc3339(),
                data: row.data.clone(),
            };
            let json = serde_json::to_string(&item).map_err(|e| ApiError::Internal(e.into()))?;
            self.queue.push_back(Bytes::from(format!(
                "id: {}\nevent: {}\ndata: {json}\n\n",
                row.seq, row.event_type
            )));
            self.after = row.seq;
            if row.event_type == "game_finished" {
                self.finished = true;
            }
        }
        Ok(!rows.is_empty())
    }

    /// Waits for a hint about this game, the poll interval, or shutdown; false on shutdown.
    async fn wait(&mut self) -> bool {
        let poll = self.state.stream_poll.min(self.state.stream_keep_alive);
        let deadline = tokio::time::sleep(poll);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                hint = self.hints.recv() => match hint {
                    Ok(game) if game == self.game => return true,
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
}
