//! The registered formats the LXC endpoints name, with the message each one `die`s with
//! (pve-common `src/PVE/JSONSchema.pm` unless noted), and the anchored patterns of
//! pve-container's `src/PVE/LXC/Config.pm`, written as predicates.

use std::net::{Ipv4Addr, Ipv6Addr};

/// `is_integer`: `^[+-]?\d+$`.
pub(crate) fn is_integer(v: &str) -> bool {
    let digits = v.strip_prefix(['+', '-']).unwrap_or(v);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `is_number`: `^[+-]?(\d+\.\d+|\d+\.|\.\d+|\d+)([eE][+-]?\d+)?$`.
pub(crate) fn is_number(v: &str) -> bool {
    let v = v.strip_prefix(['+', '-']).unwrap_or(v);
    let (mantissa, exp) = match v.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (v, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((a, b)) => (!a.is_empty() || !b.is_empty()) && digits(a) && digits(b),
        None => !mantissa.is_empty() && digits(mantissa),
    };
    mantissa_ok && exp.is_none_or(is_integer)
}

fn fail(ok: bool, msg: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(msg()) }
}

/// `pve_verify_vmid`: `^[1-9][0-9]{2,8}$`.
pub(crate) fn vmid(v: &str) -> Result<(), String> {
    let ok =
        (3..=9).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()) && !v.starts_with('0');
    fail(ok, || "value does not look like a valid VM ID".to_owned())
}

/// `pve_verify_node_name`: one DNS label.
pub(crate) fn node(v: &str) -> Result<(), String> {
    fail(is_label(v), || {
        "value does not look like a valid node name".to_owned()
    })
}

fn is_label(label: &str) -> bool {
    let b = label.as_bytes();
    !b.is_empty()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// `pve_verify_dns_name`.
pub(crate) fn dns_name(v: &str) -> Result<(), String> {
    fail(v.split('.').all(is_label), || {
        "value does not look like a valid DNS name".to_owned()
    })
}

/// `pve_verify_configid`: `^[a-z][a-z0-9_-]+$` (case-insensitive).
pub(crate) fn configid(v: &str) -> Result<(), String> {
    let mut chars = v.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && v.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    fail(ok, || format!("invalid configuration ID '{v}'"))
}

/// `pve_verify_startup_order` (`pve_parse_startup_order`): `[order=]N`, `up=N`, `down=N`.
pub(crate) fn startup_order(v: &str) -> Result<(), String> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let part_ok = |p: &str| {
        p.trim().is_empty()
            || digits(p)
            || [
                p.strip_prefix("order="),
                p.strip_prefix("up="),
                p.strip_prefix("down="),
            ]
            .into_iter()
            .flatten()
            .any(digits)
    };
    let ok = !v.is_empty() && v != "0" && v.split(',').all(part_ok);
    fail(ok, || "unable to parse startup options".to_owned())
}

/// `parse_storage_id` (`parse_id`).
pub(crate) fn storage_id(v: &str) -> Result<(), String> {
    if v.chars().count() < 2 {
        return Err(format!(
            "storage ID '{v}' cannot be shorter than 2 characters"
        ));
    }
    let b = v.as_bytes();
    let ok = b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
        && b.last().is_some_and(u8::is_ascii_alphanumeric);
    fail(ok, || {
        format!("storage ID '{v}' contains illegal characters")
    })
}

/// `pve_verify_mac_addr`: a unicast MAC.
pub(crate) fn mac_addr(v: &str) -> Result<(), String> {
    fail(crate::propstr::is_mac(v), || {
        "value does not look like a valid unicast MAC address".to_owned()
    })
}

fn cidr(v: &str, v6: bool) -> bool {
    let Some((addr, len)) = v.split_once('/') else {
        return false;
    };
    let (addr_ok, max) = if v6 {
        (addr.parse::<Ipv6Addr>().is_ok(), 128)
    } else {
        (addr.parse::<Ipv4Addr>().is_ok(), 32)
    };
    let len_ok = !len.is_empty() && len.bytes().all(|b| b.is_ascii_digit());
    addr_ok && len_ok && len.parse::<u32>().is_ok_and(|l| l > 7 && l <= max)
}

/// `pve_verify_ipv4_config`: `dhcp`, `manual` or an IPv4 CIDR with a prefix of 8..32.
pub(crate) fn ipv4_config(v: &str) -> Result<(), String> {
    fail(matches!(v, "dhcp" | "manual") || cidr(v, false), || {
        "value does not look like a valid ipv4 network configuration".to_owned()
    })
}

/// `pve_verify_ipv6_config`: `auto`, `dhcp`, `manual` or an IPv6 CIDR.
pub(crate) fn ipv6_config(v: &str) -> Result<(), String> {
    fail(
        matches!(v, "auto" | "dhcp" | "manual") || cidr(v, true),
        || "value does not look like a valid ipv6 network configuration".to_owned(),
    )
}

/// `pve_verify_ipv4`.
pub(crate) fn ipv4(v: &str) -> Result<(), String> {
    fail(v.parse::<Ipv4Addr>().is_ok(), || {
        "value does not look like a valid IPv4 address".to_owned()
    })
}

/// `pve_verify_ipv6`.
pub(crate) fn ipv6(v: &str) -> Result<(), String> {
    fail(v.parse::<Ipv6Addr>().is_ok(), || {
        "value does not look like a valid IPv6 address".to_owned()
    })
}

/// `verify_ip_with_ll_iface` (pve-container `LXC/Config.pm`): an IP, or `fe80::...%iface`.
pub(crate) fn ip_with_ll_iface(v: &str) -> Result<(), String> {
    if let Some((addr, iface)) = v.split_once('%')
        && addr.starts_with("fe80:")
        && addr.parse::<Ipv6Addr>().is_ok()
        && is_iface(iface)
    {
        return Ok(());
    }
    let ok = v.parse::<Ipv4Addr>().is_ok() || v.parse::<Ipv6Addr>().is_ok();
    fail(ok, || {
        "value does not look like a valid IP address".to_owned()
    })
}

/// `pve_verify_iface`: `^[a-z][a-z0-9_]{1,20}([:\.]\d+)?$` (case-insensitive).
fn is_iface(v: &str) -> bool {
    let (name, suffix) = match v.split_once([':', '.']) {
        Some((n, s)) => (n, Some(s)),
        None => (v, None),
    };
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && (2..=21).contains(&name.len())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && suffix.is_none_or(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
}

/// `verify_ct_timezone`: `host`, `UTC` or a zone of `zone.tab` (approximated by its shape:
/// `Area/Location[/Sub]`), else `invalid time zone`.
pub(crate) fn ct_timezone(v: &str) -> Result<(), String> {
    let part = |p: &str| {
        p.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_+-".contains(c))
    };
    let parts: Vec<&str> = v.split('/').collect();
    let ok = v == "host" || v == "UTC" || (parts.len() >= 2 && parts.iter().all(|p| part(p)));
    fail(ok, || format!("invalid time zone '{v}'"))
}

/// `pve_verify_disk_size`: what `parse_size` reads (`^(\d+(\.\d+)?)([KMGT](?:iB)?)?$`).
pub(crate) fn disk_size(v: &str) -> Result<(), String> {
    let number = ["KiB", "MiB", "GiB", "TiB", "K", "M", "G", "T"]
        .iter()
        .find_map(|u| v.strip_suffix(u))
        .unwrap_or(v);
    let ok = match number.split_once('.') {
        Some((a, b)) => digits(a) && digits(b),
        None => digits(number),
    };
    fail(ok, || {
        format!("value does not look like a valid disk size: {v}")
    })
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `verify_lxc_mp_string` (pve-container): no `/./`, `/../`, trailing `/.`/`/..`, leading `../`.
pub(crate) fn lxc_mp_string(v: &str) -> Result<(), String> {
    let bad = v.contains("/./")
        || v.contains("/../")
        || v.ends_with("/.")
        || v.ends_with("/..")
        || v.starts_with("../");
    fail(!bad, || format!("{v} contains illegal character sequences"))
}

/// `verify_lxc_dev_string` (pve-container): under `/dev/`, no `.`/`..` components.
pub(crate) fn lxc_dev_string(v: &str) -> Result<(), String> {
    let bad = v.contains("/./") || v.contains("/../") || v.ends_with("/.") || v.ends_with("/..");
    fail(!bad && v.starts_with("/dev/"), || {
        format!("{v} is not a valid device path")
    })
}

/// `parse_volume_id` (pve-storage): `storage:name`.
pub(crate) fn volume_id(v: &str) -> Result<(), String> {
    let ok = v
        .split_once(':')
        .is_some_and(|(sid, name)| storage_id(sid).is_ok() && !name.is_empty());
    fail(ok, || format!("unable to parse volume ID '{v}'"))
}

/// `pve-tag-list` (`PVE_TAG_RE`: `[a-z0-9_][a-z0-9_\-+.]*`, case-insensitive).
pub(crate) fn tag(v: &str) -> Result<(), String> {
    let mut chars = v.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || "_-+.".contains(c));
    fail(ok, || "invalid characters in tag".to_owned())
}

/// `pve-poolid` (pve-access-control `verify_poolname`): `^[A-Za-z0-9_][A-Za-z0-9_\-]*$`... nested
/// pools separated by `/`.
pub(crate) fn pool_id(v: &str) -> Result<(), String> {
    let seg = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
    };
    fail(v.split('/').all(seg), || {
        format!("pool name '{v}' contains invalid characters")
    })
}

/// `name`/`bridge` of `netN`: `[-_.\w\d]+`.
pub(crate) fn word_dots(v: &str) -> bool {
    !v.is_empty() && v.chars().all(|c| c.is_alphanumeric() || "-_.".contains(c))
}

/// `trunks`: `\d+(?:;\d+)*`.
pub(crate) fn vlan_list(v: &str) -> bool {
    v.split(';').all(digits)
}

/// `features.mount`: `[a-zA-Z0-9_; ]+`.
pub(crate) fn fstype_list(v: &str) -> bool {
    !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_; ".contains(c))
}

/// `mountoptions`: options of `discard|lazytime|noatime|nodev|noexec|nosuid`, `;`-separated.
pub(crate) fn mount_options(v: &str) -> bool {
    const OPTS: &[&str] = &[
        "discard", "lazytime", "noatime", "nodev", "noexec", "nosuid",
    ];
    v.split(';').all(|o| OPTS.contains(&o))
}

/// `idmap` (PVE 9.2): `passthrough` or `[ug]:N:N:M` entries, `;`-separated, `M` > 0.
pub(crate) fn idmap(v: &str) -> bool {
    v == "passthrough"
        || v.split(';').all(|e| {
            let f: Vec<&str> = e.split(':').collect();
            f.len() == 4
                && (f[0] == "u" || f[0] == "g")
                && digits(f[1])
                && digits(f[2])
                && digits(f[3])
                && !f[3].starts_with('0')
        })
}

/// `dev` `mode`: `0[0-7]{3}`.
pub(crate) fn octal_mode(v: &str) -> bool {
    v.len() == 4 && v.starts_with('0') && v.bytes().all(|b| (b'0'..=b'7').contains(&b))
}

/// `entrypoint`: no control characters besides tab.
pub(crate) fn no_controls(v: &str) -> bool {
    !v.is_empty() && !v.chars().any(|c| c.is_control() && c != '\t')
}

/// `env`: `NAME=value` entries separated by NUL, values without control characters.
pub(crate) fn env_list(v: &str) -> bool {
    v.split('\0').all(|e| {
        e.split_once('=').is_some_and(|(k, val)| {
            !k.is_empty()
                && k.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !val.chars().any(|c| c.is_control() && c != '\t')
        })
    })
}

/// The resize `size`: `\+?\d+(\.\d+)?[KMGT]?`.
pub(crate) fn resize_size(v: &str) -> bool {
    let v = v.strip_prefix('+').unwrap_or(v);
    let v = v.strip_suffix(['K', 'M', 'G', 'T']).unwrap_or(v);
    match v.split_once('.') {
        Some((a, b)) => digits(a) && digits(b),
        None => digits(v),
    }
}
