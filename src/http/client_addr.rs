//! Who is on the other end of a request: the TCP peer, or, when the peer is a trusted proxy
//! (`server.trusted_proxies`), the client its `X-Forwarded-For` names. Per-client limits (the
//! login's) key on this; nothing else trusts a forwarded header.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::http::HeaderMap;
pub use model::IpNetwork;
use model::canonical_ip as canonical;

/// The address a request is attributed to, put on every request's extensions by the listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub IpAddr);

impl ClientAddr {
    /// The peer, or the rightmost `X-Forwarded-For` entry that is not itself a trusted proxy
    /// when the peer is one. Entries left of that are the client's own claims and are ignored.
    pub fn resolve(peer: SocketAddr, headers: &HeaderMap, trusted: &[IpNetwork]) -> Self {
        let peer = canonical(peer.ip());
        if !trusted.iter().any(|n| n.contains(peer)) {
            return Self(peer);
        }
        let forwarded = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .rev()
            .map(|entry| entry.trim().parse::<IpAddr>().map(canonical))
            .find(|ip| {
                !ip.as_ref()
                    .is_ok_and(|ip| trusted.iter().any(|n| n.contains(*ip)))
            });
        match forwarded {
            Some(Ok(ip)) => Self(ip),
            // Nothing usable was forwarded: the proxy itself is the client.
            Some(Err(_)) | None => Self(peer),
        }
    }

    /// The key limits count under: the address, with IPv6 cut to its /64 (one site's range).
    pub fn limit_key(self) -> IpAddr {
        match self.0 {
            IpAddr::V4(v4) => IpAddr::V4(v4),
            IpAddr::V6(v6) => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        }
    }
}

impl fmt::Display for ClientAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
#[cfg(test)]
mod tests {
    use super::*;

    fn net(s: &str) -> IpNetwork {
        IpNetwork::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    fn headers(xff: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            xff.parse().unwrap_or_else(|e| panic!("{e}")),
        );
        h
    }

    fn peer(s: &str) -> SocketAddr {
        SocketAddr::new(s.parse().unwrap_or_else(|e| panic!("{e}")), 4000)
    }

    #[test]
    fn ranges_match_their_addresses_only() {
        assert!(net("10.0.0.0/8").contains("10.200.1.2".parse().unwrap_or_else(|e| panic!("{e}"))));
        assert!(!net("10.0.0.0/8").contains("11.0.0.1".parse().unwrap_or_else(|e| panic!("{e}"))));
        assert!(net("::1").contains("::1".parse().unwrap_or_else(|e| panic!("{e}"))));
        assert!(net("0.0.0.0/0").contains("192.0.2.1".parse().unwrap_or_else(|e| panic!("{e}"))));
        assert!(IpNetwork::parse("10.0.0.0/33").is_err());
        assert!(IpNetwork::parse("proxy.local").is_err());
    }

    #[test]
    fn forwarded_for_counts_only_from_a_trusted_proxy() {
        let trusted = [net("127.0.0.1")];
        let h = headers("203.0.113.9, 198.51.100.7");
        assert_eq!(
            ClientAddr::resolve(peer("127.0.0.1"), &h, &trusted).to_string(),
            "198.51.100.7"
        );
        assert_eq!(
            ClientAddr::resolve(peer("192.0.2.1"), &h, &trusted).to_string(),
            "192.0.2.1"
        );
        assert_eq!(
            ClientAddr::resolve(peer("127.0.0.1"), &HeaderMap::new(), &trusted).to_string(),
            "127.0.0.1"
        );
    }

    #[test]
    fn ipv6_clients_are_limited_by_their_64() {
        let a = ClientAddr(
            "2001:db8:1:2:aaaa::1"
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
        );
        let b = ClientAddr(
            "2001:db8:1:2:bbbb::9"
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
        );
        assert_eq!(a.limit_key(), b.limit_key());
    }
}
