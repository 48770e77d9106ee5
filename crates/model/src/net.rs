//! IP address ranges, as settings name them (`server.trusted_proxies`) and the HTTP edge checks
//! them.

use std::net::IpAddr;

/// An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) as the IPv4 address it is; others as they are.
pub fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// An address range, `10.0.0.0/8` or `::1` (a single address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNetwork {
    base: IpAddr,
    prefix: u8,
}

impl IpNetwork {
    /// Parses `ADDR` or `ADDR/PREFIX`; the message says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let base: IpAddr = addr.parse().map_err(|_| {
            format!("{text:?} is not an IP address or range like 10.0.0.0/8 or ::1")
        })?;
        let base = canonical_ip(base);
        let max = if base.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => match p.parse::<u8>() {
                Ok(n) if n <= max => n,
                _ => return Err(format!("{text:?}: the prefix must be 0 to {max}")),
            },
        };
        Ok(Self { base, prefix })
    }

    /// Whether `ip` lies in this range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.base, canonical_ip(ip)) {
            (IpAddr::V4(b), IpAddr::V4(i)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(b) & mask == u32::from(i) & mask
            }
            (IpAddr::V6(b), IpAddr::V6(i)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(b) & mask == u128::from(i) & mask
            }
            _ => false,
        }
    }
}
