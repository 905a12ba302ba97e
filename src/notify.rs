//! Wake-ups for live streams: "game G has new events".
//!
//! A notification is only a hint; streams always read the events table, which is the truth.
//! Within one process a broadcast channel carries the hint. On PostgreSQL the service's
//! hints (sent after commit) also go to the other replicas, in batches, through the
//! replica's wake-up connection ([`crate::store::wakeups`]), which brings theirs back.

/// The hint "any game may have new events" (see [`crate::store::wakeups::EVERY_GAME`]).
pub use crate::store::wakeups::EVERY_GAME;

use tokio::sync::broadcast;

/// Sends and receives "game has new events" hints.
#[derive(Clone)]
pub struct Notifier {
    sender: broadcast::Sender<String>,
    /// To the other replicas (PostgreSQL).
    replicas: Option<std::sync::mpsc::Sender<String>>,
}

impl Default for Notifier {
    fn default() -> Self {
        Self::new()
    }
}

impl Notifier {
    /// A notifier with room for a burst of hints (a lagging receiver just re-reads), for
    /// this process only.
    #[must_use]
    pub fn new() -> Self {
        let (sender, _) = broadcast::channel(1024);
        Self {
            sender,
            replicas: None,
        }
    }

    /// A notifier that also tells the other replicas on the PostgreSQL database at `url`
    /// and hears theirs, through a wake-up connection of its own (a thread that reconnects
    /// after errors). Without it, streams still see other replicas' moves by polling.
    #[must_use]
    pub fn with_postgres(url: String) -> Self {
        let (sender, _) = broadcast::channel(1024);
        let (outbox, queued) = std::sync::mpsc::channel();
        let local = sender.clone();
        let replicas = match crate::store::wakeups::spawn_postgres(url, queued, move |game| {
            // No receiver is fine: nobody here is watching.
            let _ = local.send(game.to_owned());
        }) {
            Ok(()) => Some(outbox),
            Err(e) => {
                tracing::error!(error = %crate::telemetry::Chain(&e), "cannot start the PostgreSQL wake-up connection; streams fall back to polling");
                None
            }
        };
        Self { sender, replicas }
    }

    /// Tells this process's streams, and the other replicas', that `game` has new events.
    /// Call after the commit.
    pub fn notify(&self, game: &str) {
        // No receiver is fine: nobody is watching.
        let _ = self.sender.send(game.to_owned());
        if let Some(replicas) = &self.replicas {
            // Closed only when the wake-up thread ended; then streams poll.
            let _ = replicas.send(game.to_owned());
        }
    }

    /// A receiver of hints.
    #[must_use]
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.sender.subscribe()
    }
}
