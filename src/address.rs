//! The client address that per-address limits count against.
//!
//! Without a proxy it is the peer of the connection. Behind proxies
//! (`TRUST_FORWARDED_FOR=true`) it is the entry that the trusted proxy itself appended to
//! `X-Forwarded-For` (or to `Forwarded`, when `FORWARDED_HEADER=forwarded`): the
//! `TRUSTED_PROXY_HOPS`-th from the right. Everything left of it was written by the client
//! and proves nothing; taking the left-most entry let anyone pick a fresh address per
//! request. IPv6 addresses count per /64, the block one subscriber gets. Knows no HTTP
//! framework: it reads header values as strings.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

/// Which header a trusted proxy writes the client's address to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyHeader {
    /// `X-Forwarded-For: client, proxy1, …` (the default).
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=…`.
    Forwarded,
}

impl FromStr for ProxyHeader {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Ok(Self::XForwardedFor),
            "forwarded" => Ok(Self::Forwarded),
            _ => Err("use x-forwarded-for or forwarded".into()),
        }
    }
}

/// How the client address is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress {
    /// `None`: the peer address (no proxy is trusted).
    pub header: Option<ProxyHeader>,
    /// How many proxies append to the header; the client is this many entries from the
    /// right (at least 1).
    pub hops: usize,
}

impl Default for ClientAddress {
    fn default() -> Self {
        Self {
            header: None,
            hops: 1,
        }
    }
}

impl ClientAddress {
    /// The limit subject of a request from `peer` whose proxy header lines (of the
    /// configured header, in order) are `lines`: a trusted entry when there is one that is
    /// an address, otherwise the peer. `"unknown"` without either.
    #[must_use]
    pub fn subject<'a>(
        &self,
        peer: Option<IpAddr>,
        lines: impl IntoIterator<Item = &'a str>,
    ) -> String {
        let trusted = self.header.and_then(|header| {
            let entries: Vec<&str> = lines.into_iter().flat_map(|l| l.split(',')).collect();
            let index = entries.len().checked_sub(self.hops.max(1))?;
            let entry = entries.get(index)?;
            match header {
                ProxyHeader::XForwardedFor => parse_node(entry),
                ProxyHeader::Forwarded => forwarded_for(entry).and_then(parse_node),
            }
        });
        trusted.or(peer).map_or_else(|| "unknown".to_owned(), group)
    }
}

/// The `for=` value of one `Forwarded` element (`for=1.2.3.4;proto=https`).
fn forwarded_for(element: &str) -> Option<&str> {
    element.split(';').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("for")
            .then(|| value.trim().trim_matches('"'))
    })
}

/// An address as proxies write it: `1.2.3.4`, `1.2.3.4:80`, `2001:db8::1`,
/// `[2001:db8::1]:80`. `unknown`, obfuscated names and garbage are `None`.
fn parse_node(raw: &str) -> Option<IpAddr> {
    let raw = raw.trim();
    raw.parse::<IpAddr>()
        .ok()
        .or_else(|| raw.parse::<SocketAddr>().ok().map(|a| a.ip()))
        .or_else(|| {
            raw.strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|r| r.parse().ok())
        })
}

/// The subject an address counts as: IPv4 as it is (an IPv4-mapped IPv6 address too),
/// IPv6 by its /64 network.
#[must_use]
pub fn group(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let network = u128::from(v6) & (u128::MAX << 64);
                format!("{}/64", Ipv6Addr::from(network))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Option<IpAddr> {
        s.parse().ok()
    }

    const PEER: &str = "10.0.0.9";

    fn xff(hops: usize) -> ClientAddress {
        ClientAddress {
            header: Some(ProxyHeader::XForwardedFor),
            hops,
        }
    }

    #[test]
    fn without_trust_the_peer_counts_and_headers_are_ignored() {
        let c = ClientAddress::default();
        assert_eq!(c.subject(ip(PEER), ["1.2.3.4"]), PEER);
        assert_eq!(c.subject(None, ["1.2.3.4"]), "unknown");
    }

    #[test]
    fn the_entry_the_proxy_appended_counts_not_what_the_client_wrote() {
        // The client wrote "6.6.6.6"; the proxy appended the address it saw.
        assert_eq!(
            xff(1).subject(ip(PEER), ["6.6.6.6, 203.0.113.7"]),
            "203.0.113.7"
        );
        // Repeated header lines are one list, in order.
        assert_eq!(
            xff(1).subject(ip(PEER), ["6.6.6.6", "203.0.113.7"]),
            "203.0.113.7"
        );
        // Two proxies: the client is the second entry from the right.
        assert_eq!(
            xff(2).subject(ip(PEER), ["6.6.6.6, 203.0.113.7, 10.1.1.1"]),
            "203.0.113.7"
        );
    }

    #[test]
    fn a_short_or_bad_chain_falls_back_to_the_peer() {
        assert_eq!(xff(2).subject(ip(PEER), ["203.0.113.7"]), PEER);
        assert_eq!(xff(1).subject(ip(PEER), Vec::<&str>::new()), PEER);
        assert_eq!(xff(1).subject(ip(PEER), ["unknown"]), PEER);
        assert_eq!(xff(1).subject(ip(PEER), ["1.2.3.4, not-an-ip"]), PEER);
    }

    #[test]
    fn forwarded_is_read_only_when_configured_and_then_from_the_right() {
        let fwd = ClientAddress {
            header: Some(ProxyHeader::Forwarded),
            hops: 1,
        };
        let line = r#"for=6.6.6.6, for="[2001:db8:cafe:1:2:3:4:5]:4711";proto=https"#;
        assert_eq!(fwd.subject(ip(PEER), [line]), "2001:db8:cafe:1::/64");
        assert_eq!(fwd.subject(ip(PEER), ["for=_hidden"]), PEER);
        // X-Forwarded-For's parser does not read Forwarded's syntax.
        assert_eq!(xff(1).subject(ip(PEER), ["for=1.2.3.4"]), PEER);
    }

    #[test]
    fn ipv6_counts_per_64_and_mapped_ipv4_as_ipv4() {
        assert_eq!(
            group(
                "2001:db8:1:2:aaaa::1"
                    .parse()
                    .unwrap_or(IpAddr::V4(0.into()))
            ),
            "2001:db8:1:2::/64"
        );
        let a = xff(1).subject(None, ["2001:db8:1:2::1"]);
        let b = xff(1).subject(None, ["2001:db8:1:2:ffff::9"]);
        assert_eq!(a, b);
        assert_eq!(xff(1).subject(None, ["::ffff:192.0.2.1"]), "192.0.2.1");
        assert_eq!(xff(1).subject(None, ["198.51.100.2:8080"]), "198.51.100.2");
    }
}
