//! Name lookups with a time limit. The system's resolver (`getaddrinfo`) takes no timeout
//! and cannot be cancelled, so a lookup runs on a thread of its own and the caller stops
//! waiting after its limit; the thread ends when the resolver returns, and its answer is
//! dropped. Used where a hanging resolver must not hold up what waits: a webhook's
//! registration, and a mail's SMTP server, whose lease counts every step of the
//! conversation ([`crate::mail::Mailer`]).

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::Duration;

/// A resolver: the addresses `name` resolves to (with `port`). Blocking, and allowed to
/// hang: [`lookup_with`] bounds it.
pub type Resolve = fn(&str, u16) -> std::io::Result<Vec<SocketAddr>>;

/// The system's resolver (`getaddrinfo`).
///
/// # Errors
/// The name does not resolve.
pub fn system(name: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    (name, port).to_socket_addrs().map(Iterator::collect)
}

/// The addresses `name` resolves to by the system's resolver, in its order, or `None`
/// when it does not resolve within `timeout` (or to nothing).
#[must_use]
pub fn lookup(name: &str, port: u16, timeout: Duration) -> Option<Vec<SocketAddr>> {
    lookup_with(system, name, port, timeout)
}

/// [`lookup`] by `resolve`.
#[must_use]
pub fn lookup_with(
    resolve: Resolve,
    name: &str,
    port: u16,
    timeout: Duration,
) -> Option<Vec<SocketAddr>> {
    let (tx, rx) = mpsc::sync_channel(1);
    let name = name.to_owned();
    let spawned = std::thread::Builder::new()
        .name("name-lookup".into())
        .spawn(move || {
            let _ = tx.send(resolve(&name, port).ok());
        });
    if spawned.is_err() {
        return None;
    }
    rx.recv_timeout(timeout)
        .ok()
        .flatten()
        .filter(|a| !a.is_empty())
}
