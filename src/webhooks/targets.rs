//! Where webhooks may point: the address policy that keeps notifications from reaching the
//! server's own network (server-side request forgery).
//!
//! Owns the parsing of webhook URLs (WHATWG, with the `url` crate, so odd IPv4 notations
//! like `http://2852039166/` or `http://0251.0376.0251.0376/` are read as the address they
//! name), the list of forbidden address ranges, the check of a URL at registration, and the
//! [`CheckedResolver`] that checks the resolved addresses again when a delivery connects and
//! hands exactly those addresses to the connection (so a name cannot resolve to a public
//! address when checked and to a private one when connected: DNS rebinding). Knows no
//! storage and no HTTP routes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;
use url::{Host, Url};

/// How long a registration waits for the name of a webhook URL to resolve.
pub const REGISTRATION_LOOKUP_TIMEOUT: Duration = Duration::from_secs(2);

/// Which addresses deliveries may reach: public unicast addresses only, and loopback when
/// `WEBHOOK_ALLOW_LOOPBACK=true` (development and tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Targets {
    /// Whether `127.0.0.0/8` and `::1` (also as `::ffff:127.x.y.z`) are allowed.
    pub allow_loopback: bool,
}

/// IPv4 ranges no webhook may reach, with the reason shown to the caller.
const FORBIDDEN_V4: [(Ipv4Addr, u8, &str); 16] = [
    (
        Ipv4Addr::new(0, 0, 0, 0),
        8,
        "\"this network\" (unspecified)",
    ),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private"),
    (
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        "shared address space (CGNAT)",
    ),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "loopback"),
    (
        Ipv4Addr::new(169, 254, 0, 0),
        16,
        "link-local (cloud metadata)",
    ),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignments"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "documentation"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "6to4 relay anycast"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "documentation"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    (Ipv4Addr::new(255, 255, 255, 255), 32, "broadcast"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "reserved"),
];

/// IPv6 ranges inside the global unicast block `2000::/3` that no webhook may reach.
const FORBIDDEN_V6_GLOBAL: [(Ipv6Addr, u8, &str); 4] = [
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, "Teredo"),
    (Ipv6Addr::new(0x2001, 0x10, 0, 0, 0, 0, 0, 0), 28, "ORCHID"),
    (
        Ipv6Addr::new(0x2001, 0x20, 0, 0, 0, 0, 0, 0),
        28,
        "ORCHIDv2",
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        "documentation",
    ),
];

fn in_v4(ip: Ipv4Addr, net: Ipv4Addr, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(ip) & mask == u32::from(net) & mask
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(ip) & mask == u128::from(net) & mask
}

/// The IPv4 address an IPv6 address stands for: IPv4-mapped `::ffff:a.b.c.d`,
/// IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d` and 6to4 `2002:AABB:CCDD::`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0, 0, 0, 0, 0xffff, 0, hi, lo] => Some(v4(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(v4(hi, lo)),
        [0x2002, hi, lo, ..] => Some(v4(hi, lo)),
        _ => None,
    }
}

impl Targets {
    /// Why a delivery may not connect to `ip`; `None` when it may.
    #[must_use]
    pub fn refusal(self, ip: IpAddr) -> Option<String> {
        match ip {
            IpAddr::V4(v4) => self.refusal_v4(v4).map(str::to_owned),
            IpAddr::V6(v6) => self.refusal_v6(v6),
        }
    }

    fn refusal_v4(self, ip: Ipv4Addr) -> Option<&'static str> {
        if self.allow_loopback && ip.is_loopback() {
            return None;
        }
        FORBIDDEN_V4
            .iter()
            .find(|(net, len, _)| in_v4(ip, *net, *len))
            .map(|(_, _, why)| *why)
    }

    fn refusal_v6(self, ip: Ipv6Addr) -> Option<String> {
        if let Some(v4) = embedded_v4(ip) {
            return self
                .refusal_v4(v4)
                .map(|why| format!("{why}, as the IPv4 address {v4} inside an IPv6 address"));
        }
        if ip.is_loopback() {
            return (!self.allow_loopback).then(|| "loopback".to_owned());
        }
        if ip.is_unspecified() {
            return Some("unspecified".to_owned());
        }
        // Outside 2000::/3: unique local (fc00::/7, e.g. fd00:ec2::254), link-local
        // (fe80::/10), site-local, multicast (ff00::/8), IPv4-compatible (::/96), the
        // discard prefix (100::/64), local-use NAT64 (64:ff9b:1::/48), …
        let global = Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0);
        if !in_v6(ip, global, 3) {
            let why = if in_v6(ip, Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7) {
                "unique local"
            } else if in_v6(ip, Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10) {
                "link-local"
            } else if in_v6(ip, Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8) {
                "multicast"
            } else {
                "not a global unicast address"
            };
            return Some(why.to_owned());
        }
        FORBIDDEN_V6_GLOBAL
            .iter()
            .find(|(net, len, _)| in_v6(ip, *net, *len))
            .map(|(_, _, why)| (*why).to_owned())
    }

    /// Refuses `addrs` when any of them is forbidden (a name that resolves to a public and a
    /// private address is refused, not half-used).
    fn check_all<'a>(
        self,
        host: &str,
        addrs: impl IntoIterator<Item = &'a SocketAddr>,
    ) -> Result<(), String> {
        for addr in addrs {
            if let Some(why) = self.refusal(addr.ip()) {
                return Err(if host.trim_matches(['[', ']']) == addr.ip().to_string() {
                    format!("the address {} is not allowed ({why})", addr.ip())
                } else {
                    format!(
                        "{host} resolves to {}, which is not allowed ({why})",
                        addr.ip()
                    )
                });
            }
        }
        Ok(())
    }
}

/// Why a webhook URL is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlRefusal {
    /// Not an absolute `http(s)` URL with a host, or with credentials or a fragment.
    Invalid(String),
    /// It names, or its host resolves to, an address webhooks may not reach.
    NotAllowed(String),
}

/// Parses and checks a webhook URL for registration: at most `max_len` bytes, no
/// whitespace, control characters or fragment, `http` or `https`, a host, no credentials;
/// an address literal must be allowed, and a name must not resolve to a forbidden address
/// (a name that does not resolve within [`REGISTRATION_LOOKUP_TIMEOUT`] is accepted: every
/// delivery checks again at connect time). Returns the URL as the server will call it
/// (normalised: `http://2852039166/` becomes `http://169.254.169.254/`). Blocking.
///
/// # Errors
/// [`UrlRefusal`] saying what is wrong.
pub fn check_url(raw: &str, max_len: usize, targets: Targets) -> Result<Url, UrlRefusal> {
    let invalid = |why: &str| Err(UrlRefusal::Invalid(why.to_owned()));
    if raw.len() > max_len {
        return invalid("url must be at most 2048 characters");
    }
    if raw.chars().any(|c| c.is_whitespace() || c.is_control()) || raw.contains('#') {
        return invalid("url must not contain whitespace, control characters or a fragment");
    }
    let Ok(url) = Url::parse(raw) else {
        return invalid("url is not a valid URL");
    };
    if !matches!(url.scheme(), "http" | "https") {
        return invalid("url must start with http:// or https://");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return invalid("url must not contain credentials");
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let not_allowed = |e: String| UrlRefusal::NotAllowed(e);
    match url.host() {
        None => invalid("url must name a host"),
        Some(Host::Ipv4(ip)) => {
            let addr = SocketAddr::new(IpAddr::V4(ip), port);
            targets
                .check_all(&ip.to_string(), [&addr])
                .map_err(not_allowed)?;
            Ok(url)
        }
        Some(Host::Ipv6(ip)) => {
            let addr = SocketAddr::new(IpAddr::V6(ip), port);
            targets
                .check_all(&ip.to_string(), [&addr])
                .map_err(not_allowed)?;
            Ok(url)
        }
        Some(Host::Domain(name)) => {
            if let Some(addrs) = crate::lookup::lookup(name, port, REGISTRATION_LOOKUP_TIMEOUT) {
                targets.check_all(name, &addrs).map_err(not_allowed)?;
            }
            Ok(url)
        }
    }
}

/// ureq's resolver with the address policy: resolves as usual, refuses the connection when
/// any address is forbidden, and otherwise hands ureq exactly the addresses it checked, so
/// the connection goes to a checked address and no second lookup happens.
#[derive(Debug, Default)]
pub struct CheckedResolver {
    targets: Targets,
    inner: DefaultResolver,
}

impl CheckedResolver {
    /// A resolver that allows what `targets` allows.
    #[must_use]
    pub fn new(targets: Targets) -> Self {
        Self {
            targets,
            inner: DefaultResolver::default(),
        }
    }
}

impl Resolver for CheckedResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.inner.resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or_default();
        self.targets.check_all(host, &addrs).map_err(|why| {
            ureq::Error::Io(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("webhook target refused: {why}"),
            ))
        })?;
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn refused(url: &str) -> Option<String> {
        match check_url(url, 2048, Targets::default()) {
            Err(UrlRefusal::NotAllowed(why)) => Some(why),
            Ok(_) => None,
            Err(UrlRefusal::Invalid(why)) => panic!("{url} is invalid: {why}"),
        }
    }

    #[test]
    fn private_loopback_link_local_and_metadata_addresses_are_refused() {
        for url in [
            "http://127.0.0.1:8080/",
            "http://127.1/",
            "http://[::1]/",
            "http://0.0.0.0/",
            "http://[::]/",
            "http://10.0.0.1/",
            "http://172.16.5.4/",
            "http://172.31.255.255/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://100.64.0.1/",
            "http://100.127.255.254/",
            "http://224.0.0.1/",
            "http://239.255.255.250/",
            "http://255.255.255.255/",
            "http://240.0.0.1/",
            "http://198.18.0.1/",
            "http://192.0.2.1/",
            "http://[fd00:ec2::254]/",
            "http://[fc00::1]/",
            "http://[fe80::1]/",
            "http://[ff02::1]/",
            "http://[::ffff:169.254.169.254]/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://[::ffff:0:a9fe:a9fe]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[64:ff9b:1::1]/",
            "http://[2002:a9fe:a9fe::1]/",
            "http://[::a9fe:a9fe]/",
            "http://[100::1]/",
            "http://[2001:db8::1]/",
            "http://[2001::1]/",
            // Odd IPv4 notations, as browsers (WHATWG) read them.
            "http://2852039166/",
            "http://0xA9FEA9FE/",
            "http://0251.0376.0251.0376/",
            "http://0xa9.0xfe.0xa9.0xfe/",
            "http://169.254.43518/",
            "http://017700000001/",
            "https://169.254.169.254.:443/",
        ] {
            assert!(refused(url).is_some(), "{url} was allowed");
        }
        let why = refused("http://2852039166/").unwrap();
        assert!(
            why.contains("169.254.169.254") && why.contains("link-local"),
            "{why}"
        );
    }

    #[test]
    fn public_addresses_are_allowed_and_odd_notations_normalised() {
        for url in [
            "https://93.184.215.14/hook",
            "http://8.8.8.8:8080/",
            "https://[2606:4700:4700::1111]/",
            "https://[::ffff:8.8.8.8]/",
            "https://[2002:808:808::1]/",
        ] {
            assert_eq!(refused(url), None, "{url}");
        }
        let url = check_url("http://0x08080808:81/x", 2048, Targets::default()).unwrap();
        assert_eq!(url.as_str(), "http://8.8.8.8:81/x");
    }

    #[test]
    fn loopback_only_is_allowed_by_the_setting() {
        let dev = Targets {
            allow_loopback: true,
        };
        for ip in ["127.0.0.1", "127.5.6.7", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(dev.refusal(ip.parse().unwrap()), None, "{ip}");
            assert!(Targets::default().refusal(ip.parse().unwrap()).is_some());
        }
        for ip in [
            "10.0.0.1",
            "169.254.169.254",
            "::ffff:192.168.0.1",
            "fd00:ec2::254",
            "0.0.0.0",
        ] {
            assert!(dev.refusal(ip.parse().unwrap()).is_some(), "{ip}");
        }
    }

    #[test]
    fn names_are_checked_by_what_they_resolve_to() {
        // /etc/hosts: localhost is 127.0.0.1 (and ::1).
        let why = refused("http://localhost:9/").unwrap();
        assert!(why.contains("localhost resolves to"), "{why}");
        let dev = Targets {
            allow_loopback: true,
        };
        assert!(check_url("http://localhost:9/", 2048, dev).is_ok());
    }

    #[test]
    fn malformed_urls_are_invalid_not_refused() {
        for url in [
            "",
            "ftp://example.org/",
            "example.org",
            "https://",
            "https://u:p@example.org/",
            "https://example.org/#x",
            "https://exa mple.org/",
            "http://[::1/",
            "http://999.1.1.1/",
        ] {
            assert!(
                matches!(
                    check_url(url, 2048, Targets::default()),
                    Err(UrlRefusal::Invalid(_))
                ),
                "{url}"
            );
        }
    }
}
