//! Wake-ups across replicas on PostgreSQL: "game G has new events", sent after commit.
//!
//! A hint is only a hint; streams always read the events table, which is the truth (a lost
//! hint costs one poll interval). Each replica keeps one connection of its own: it
//! `LISTEN`s on [`CHANNEL`], and it sends the hints of the commits this replica made, in
//! batches, with `pg_notify` outside any append (so an append takes no lock on the
//! notification queue, and a busy replica sends one notification per batch, not one per
//! command). A payload is `REPLICA GAME GAME …`; a replica skips its own.

use std::collections::BTreeSet;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection, RunQueryDsl};

/// The PostgreSQL channel name.
pub const CHANNEL: &str = "stammtisch_events";

/// The hint "any game may have new events" (no game id is `*`): delivered when the
/// connection starts listening, since hints sent before that (at start-up, or while the
/// connection was lost) were not heard.
pub const EVERY_GAME: &str = "*";

/// How long the connection waits for hints to send before it looks for other replicas'.
const POLL: Duration = Duration::from_millis(20);
/// At most one notification per this interval: hints that arrive meanwhile wait for it
/// (a busy replica sends one notification for many commands; a hint waits at most this).
const BATCH: Duration = Duration::from_millis(10);
/// Stays below PostgreSQL's 8,000-byte payload limit.
const MAX_PAYLOAD: usize = 7_000;

/// Runs the wake-up connection on a thread of its own, reconnecting after errors: sends
/// the game ids that arrive on `outbox` to the other replicas, and hands the ids other
/// replicas send to `deliver`. Ends when `outbox` is closed.
///
/// # Errors
/// The thread cannot be started.
pub fn spawn_postgres(
    url: String,
    outbox: Receiver<String>,
    deliver: impl Fn(&str) + Send + 'static,
) -> std::io::Result<()> {
    let me = format!("{:016x}", rand::random::<u64>());
    std::thread::Builder::new()
        .name("pg-wakeups".into())
        .spawn(move || {
            loop {
                match run(&url, &me, &outbox, &deliver) {
                    Ok(()) => return,
                    Err(e) => tracing::warn!(
                        error = %crate::telemetry::Chain(&*e),
                        "PostgreSQL wake-up connection lost; reconnecting"
                    ),
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
        .map(|_| ())
}

fn run(
    url: &str,
    me: &str,
    outbox: &Receiver<String>,
    deliver: &impl Fn(&str),
) -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = PgConnection::establish(url)?;
    conn.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    deliver(EVERY_GAME);
    let mut sent = Instant::now();
    loop {
        let mut games = BTreeSet::new();
        match outbox.recv_timeout(POLL) {
            Ok(game) => {
                games.insert(game);
                if let Some(wait) = (sent + BATCH).checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                games.extend(outbox.try_iter());
                sent = Instant::now();
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        }
        for payload in payloads(me, &games) {
            diesel::sql_query("SELECT pg_notify($1, $2)")
                .bind::<diesel::sql_types::Text, _>(CHANNEL)
                .bind::<diesel::sql_types::Text, _>(payload)
                .execute(&mut conn)?;
        }
        // Reads what arrived meanwhile (PQconsumeInput); fails when the connection is gone.
        for notification in conn.notifications_iter() {
            let n = notification?;
            let mut words = n.payload.split(' ');
            if words.next() == Some(me) {
                continue;
            }
            words.filter(|g| !g.is_empty()).for_each(deliver);
        }
    }
}

/// `games` as notification payloads of at most [`MAX_PAYLOAD`] bytes, each led by `me`.
fn payloads(me: &str, games: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::from(me);
    for game in games {
        if current.len() + 1 + game.len() > MAX_PAYLOAD && current.len() > me.len() {
            out.push(std::mem::replace(&mut current, String::from(me)));
        }
        current.push(' ');
        current.push_str(game);
    }
    if current.len() > me.len() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{MAX_PAYLOAD, payloads};

    #[test]
    fn payloads_carry_every_game_once_within_the_limit() {
        assert!(payloads("me", &BTreeSet::new()).is_empty());
        let games: BTreeSet<String> = (0..1000).map(|i| format!("{i:036}")).collect();
        let out = payloads("me", &games);
        assert!(out.len() > 1);
        assert!(
            out.iter()
                .all(|p| p.len() <= MAX_PAYLOAD && p.starts_with("me "))
        );
        let back: BTreeSet<String> = out
            .iter()
            .flat_map(|p| p.split(' ').skip(1).map(str::to_owned))
            .collect();
        assert_eq!(back, games);
    }
}
