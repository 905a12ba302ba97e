//! Wake-ups for live streams: "game G has new events".
//!
//! A notification is only a hint; streams always read the events table, which is the truth.
//! Within one process a broadcast channel carries the hint. On PostgreSQL every append also
//! runs `pg_notify('stammtisch_events', game_id)` in its transaction, and a listener thread
//! per process forwards what other replicas committed into the same channel.

use std::time::Duration;

use diesel::Connection;
use diesel::connection::SimpleConnection;
use tokio::sync::broadcast;

/// The PostgreSQL channel name.
pub const CHANNEL: &str = "stammtisch_events";

/// Sends and receives "game has new events" hints.
#[derive(Clone)]
pub struct Notifier {
    sender: broadcast::Sender<String>,
}

impl Default for Notifier {
    fn default() -> Self {
        Self::new()
    }
}

impl Notifier {
    /// A notifier with room for a burst of hints (a lagging receiver just re-reads).
    #[must_use]
    pub fn new() -> Self {
        let (sender, _) = broadcast::channel(1024);
        Self { sender }
    }

    /// Tells this process's streams that `game` has new events.
    pub fn notify(&self, game: &str) {
        // No receiver is fine: nobody is watching.
        let _ = self.sender.send(game.to_owned());
    }

    /// A receiver of hints.
    #[must_use]
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.sender.subscribe()
    }

    /// Forwards PostgreSQL notifications from other replicas, on a thread of its own that
    /// reconnects after errors. Polls the connection every 100 ms (diesel's notification
    /// API is non-blocking).
    pub fn listen_postgres(&self, url: String) {
        let notifier = self.clone();
        let spawned = std::thread::Builder::new().name("pg-listen".into()).spawn(move || {
            loop {
                if let Err(e) = notifier.listen_once(&url) {
                    tracing::warn!(error = %crate::telemetry::Chain(&*e), "PostgreSQL LISTEN connection lost; reconnecting");
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        if let Err(e) = spawned {
            tracing::error!(error = %crate::telemetry::Chain(&e), "cannot start the PostgreSQL listener; streams fall back to polling");
        }
    }

    fn listen_once(&self, url: &str) -> Result<(), Box<dyn std::error::Error>> {
        let mut conn = diesel::PgConnection::establish(url)?;
        conn.batch_execute(&format!("LISTEN {CHANNEL}"))?;
        loop {
            for notification in conn.notifications_iter() {
                let n = notification?;
                self.notify(&n.payload);
            }
            // notifications_iter reads what arrived meanwhile (PQconsumeInput) and fails when
            // the connection is gone.
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
