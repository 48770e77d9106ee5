//! The value formats of firewall rules and objects, with pve-firewall's messages: IP addresses
//! and CIDRs (`IPorCIDR`), address lists with ranges, alias and ipset references
//! (`pve-fw-addr-spec`), port lists (`pve-fw-sport-spec`/`pve-fw-dport-spec`), protocols,
//! ICMP types and interface names.
//!
//! The messages of Perl's `Net::IP` (wrapped as `invalid IP address: ...`) are approximated.

use std::net::IpAddr;

use super::tables::{ICMP_TYPES, ICMPV6_TYPES, PROTOCOLS, SERVICES};

/// `[A-Za-z][A-Za-z0-9\-\_]+`: security group, ipset and alias names.
pub(crate) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The IP version of an address (no prefix), or `None`.
fn ip_version(s: &str) -> Option<u8> {
    match s.parse::<IpAddr>().ok()? {
        IpAddr::V4(_) => Some(4),
        IpAddr::V6(_) => Some(6),
    }
}

/// Splits `ip[/len]` and checks both parts; the version and the prefix length.
fn split_cidr(s: &str) -> Option<(IpAddr, u8, Option<u32>)> {
    let (ip, len) = match s.split_once('/') {
        Some((ip, len)) => (ip, Some(len)),
        None => (s, None),
    };
    let addr: IpAddr = ip.parse().ok()?;
    let version = ip_version(ip)?;
    let len = match len {
        None => None,
        Some(l) if !l.is_empty() && l.chars().all(|c| c.is_ascii_digit()) => Some(l.parse().ok()?),
        Some(_) => return None,
    };
    Some((addr, version, len))
}

fn max_len(version: u8) -> u32 {
    if version == 4 { 32 } else { 128 }
}

/// `pve_verify_ip_or_cidr` (format `IPorCIDR`): host bits may be set (PVE cleans them first).
pub(crate) fn verify_ip_or_cidr(s: &str) -> Result<(), String> {
    let Some((_, version, len)) = split_cidr(s) else {
        return Err("value does not look like a valid IP address or CIDR network".to_owned());
    };
    match len {
        Some(l) if l > max_len(version) => Err(format!("Invalid prefix length /{l}")),
        _ => Ok(()),
    }
}

/// `pve_verify_ip_or_cidr_or_alias` (format `IPorCIDRorAlias`, ipset entries).
pub(crate) fn verify_ip_or_cidr_or_alias(s: &str) -> Result<(), String> {
    if alias_ref(s).is_some() {
        return Ok(());
    }
    verify_ip_or_cidr(s)
}

/// `(scope, name)` when `s` is an alias reference `[dc/|guest/]name`.
pub(crate) fn alias_ref(s: &str) -> Option<(&str, &str)> {
    let (scope, name) = if let Some(n) = s.strip_prefix("dc/") {
        ("dc/", n)
    } else if let Some(n) = s.strip_prefix("guest/") {
        ("guest/", n)
    } else {
        ("", s)
    };
    is_name(name).then_some((scope, name))
}

/// `parse_ip_or_cidr`: the address with a full-length prefix dropped, and its version.
pub(crate) fn parse_ip_or_cidr(s: &str) -> Result<(String, u8), String> {
    let Some((_, version, len)) = split_cidr(s) else {
        return Err("value does not look like a valid IP address or CIDR network".to_owned());
    };
    let text = match len {
        Some(l) if l == max_len(version) => s.split('/').next().unwrap_or(s).to_owned(),
        _ => s.to_owned(),
    };
    Ok((text, version))
}

/// `clean_cidr`: clears the host bits of `ip/len`.
pub(crate) fn clean_cidr(s: &str) -> String {
    let Some((addr, version, Some(len))) = split_cidr(s) else {
        return s.to_owned();
    };
    if len == 0 || len > max_len(version) {
        return s.to_owned();
    }
    let clean = match addr {
        IpAddr::V4(a) => IpAddr::from((u32::from(a) & (u32::MAX << (32 - len))).to_be_bytes()),
        IpAddr::V6(a) => IpAddr::from((u128::from(a) & (u128::MAX << (128 - len))).to_be_bytes()),
    };
    format!("{clean}/{len}")
}

/// One element of an address list as `Net::IP->new` takes it: an address, a network without
/// host bits, or a range `a-b`.
fn net_ip(elem: &str) -> Result<u8, String> {
    if let Some((a, b)) = elem.split_once('-') {
        let (a, b) = (a.trim(), b.trim());
        return match (ip_version(a), ip_version(b)) {
            (Some(va), Some(vb)) if va == vb => {
                let (x, y) = (a.parse::<IpAddr>(), b.parse::<IpAddr>());
                match (x, y) {
                    (Ok(x), Ok(y)) if x <= y => Ok(va),
                    _ => Err(format!(
                        "Begin address is greater than End address {a} - {b}"
                    )),
                }
            }
            _ => Err(format!("Invalid IP address {elem}")),
        };
    }
    let Some((addr, version, len)) = split_cidr(elem) else {
        return Err(format!("Invalid IP address {elem}"));
    };
    if let Some(len) = len {
        if len > max_len(version) {
            return Err(format!("Invalid prefix length /{len}"));
        }
        if clean_cidr(elem) != format!("{addr}/{len}") {
            return Err(format!("Invalid prefix {}/{len}", binary(addr)));
        }
    }
    Ok(version)
}

fn binary(addr: IpAddr) -> String {
    match addr {
        IpAddr::V4(a) => format!("{:032b}", u32::from(a)),
        IpAddr::V6(a) => format!("{:0128b}", u128::from(a)),
    }
}

/// Perl's `split(/,/, $s)`: trailing empty fields dropped.
fn perl_split(s: &str) -> Vec<&str> {
    let mut items: Vec<&str> = s.split(',').collect();
    while items.last().is_some_and(|i| i.is_empty()) {
        items.pop();
    }
    items
}

/// `parse_address_list` (format `pve-fw-addr-spec`): the IP version of a literal list.
pub(crate) fn parse_address_list(s: &str) -> Result<Option<u8>, String> {
    if s.len() > 1 && s.starts_with('+') && !s.contains(char::is_whitespace) {
        if s.len() > 65 {
            return Err("ipset name too long".to_owned());
        }
        return Ok(None);
    }
    if alias_ref(s).is_some() {
        if s.len() > 64 {
            return Err("alias name too long".to_owned());
        }
        return Ok(None);
    }
    let elements = perl_split(s);
    if s != elements.join(",") {
        return Err("extraneous commas in list".to_owned());
    }
    let mut version = None;
    let mut range = false;
    for elem in &elements {
        let v = net_ip(elem).map_err(|e| format!("invalid IP address: {e}"))?;
        range |= elem.contains('-');
        if version.is_some_and(|old| old != v) {
            return Err(format!(
                "detected mixed ipv4/ipv6 addresses in address list '{s}'"
            ));
        }
        version = Some(v);
    }
    if range && elements.len() > 1 {
        return Err("you can't use a range in a list".to_owned());
    }
    Ok(version)
}

fn is_service(name: &str) -> bool {
    SERVICES.split_whitespace().any(|s| s == name)
}

pub(crate) fn is_icmp_type(name: &str) -> bool {
    ICMP_TYPES.contains(&name)
}

pub(crate) fn is_icmpv6_type(name: &str) -> bool {
    ICMPV6_TYPES.contains(&name)
}

/// `parse_port_name_number_or_range`; `dport` allows ICMP type names (for ICMP protocols).
pub(crate) fn parse_ports(s: &str, dport: bool) -> Result<(), String> {
    let elements = perl_split(s);
    if s != elements.join(",") {
        return Err("extraneous commas in list".to_owned());
    }
    let port = |p: &str| match p.parse::<u64>() {
        Ok(n) if n <= 65535 => Ok(n),
        _ => Err(format!("invalid port '{p}'")),
    };
    let digits = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    let (mut count, mut icmp) = (0, false);
    for item in elements {
        if let Some((a, b)) = item.split_once(':').filter(|(a, b)| digits(a) && digits(b)) {
            count += 2;
            let (x, y) = (port(a)?, port(b)?);
            if x > y {
                return Err(format!(
                    "backwards range '{a}:{b}' not allowed, did you mean '{b}:{a}'?"
                ));
            }
        } else if digits(item) {
            count += 1;
            port(item)?;
        } else if dport && (is_icmp_type(item) || is_icmpv6_type(item)) {
            icmp = true;
        } else if !is_service(item) {
            return Err(format!("invalid port '{item}'"));
        }
    }
    if icmp && count > 0 {
        return Err("ICMP ports not allowed in port range".to_owned());
    }
    if count > 15 {
        return Err("too many entries in port list (> 15 numbers)".to_owned());
    }
    Ok(())
}

/// `pve_fw_verify_protocol_spec`: a name or number from `/etc/protocols`, or `icmpv6`.
pub(crate) fn verify_protocol(proto: &str) -> Result<(), String> {
    let known = proto == "icmpv6"
        || PROTOCOLS
            .iter()
            .any(|(name, id)| *name == proto || id.to_string() == proto);
    if proto.is_empty() || known {
        Ok(())
    } else {
        Err(format!("unknown protocol '{proto}'"))
    }
}

pub(crate) fn is_icmp_proto(proto: &str) -> bool {
    matches!(proto, "icmp" | "icmpv6" | "ipv6-icmp")
}

/// Protocols whose rules may restrict ports (`$PROTOCOLS_WITH_PORTS`).
pub(crate) fn has_ports(proto: &str) -> bool {
    matches!(
        proto,
        "udp" | "17" | "udplite" | "136" | "tcp" | "6" | "dccp" | "33" | "sctp" | "132"
    )
}

/// `pve_verify_iface`.
pub(crate) fn verify_iface(s: &str) -> Result<(), String> {
    let (name, suffix) = match s.find([':', '.']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let name_ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && (2..=21).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let suffix_ok = suffix.is_none_or(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()));
    if name_ok && suffix_ok {
        Ok(())
    } else {
        Err(format!("invalid network interface name '{s}'"))
    }
}

/// `pve_fw_verify_icmp_type_spec`.
pub(crate) fn verify_icmp_type(s: &str) -> Result<(), String> {
    if s.is_empty() || is_icmp_type(s) || is_icmpv6_type(s) {
        Ok(())
    } else {
        Err(format!("invalid icmp-type value '{s}'"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_lists_follow_pve() {
        assert_eq!(parse_address_list("10.0.0.0/8,192.168.1.1"), Ok(Some(4)));
        assert_eq!(parse_address_list("+myset"), Ok(None));
        assert_eq!(parse_address_list("dc/office"), Ok(None));
        assert_eq!(
            parse_address_list("10.0.0.1,"),
            Err("extraneous commas in list".to_owned())
        );
        assert_eq!(
            parse_address_list("10.0.0.1,fd00::1"),
            Err("detected mixed ipv4/ipv6 addresses in address list '10.0.0.1,fd00::1'".to_owned())
        );
        assert_eq!(
            parse_address_list("10.0.0.1-10.0.0.9,10.1.0.1"),
            Err("you can't use a range in a list".to_owned())
        );
        assert!(parse_address_list("10.0.0.1/24").is_err());
    }

    #[test]
    fn port_specs_follow_pve() {
        assert_eq!(parse_ports("22,80:85,https", true), Ok(()));
        assert_eq!(
            parse_ports("90:80", false),
            Err("backwards range '90:80' not allowed, did you mean '80:90'?".to_owned())
        );
        assert_eq!(
            parse_ports("70000", false),
            Err("invalid port '70000'".to_owned())
        );
        assert_eq!(
            parse_ports("nosuch", false),
            Err("invalid port 'nosuch'".to_owned())
        );
        assert_eq!(
            parse_ports("echo-request,22", true),
            Err("ICMP ports not allowed in port range".to_owned())
        );
    }

    #[test]
    fn cidrs_clean_and_normalize() {
        assert_eq!(clean_cidr("192.168.1.155/24"), "192.168.1.0/24");
        assert_eq!(
            parse_ip_or_cidr("10.0.0.5/32"),
            Ok(("10.0.0.5".to_owned(), 4))
        );
        assert!(verify_ip_or_cidr("10.0.0.300").is_err());
    }
}
