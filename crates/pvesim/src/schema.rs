//! The LXC configuration schema (`PVE::LXC::Config` `$confdesc`): which keys exist, their
//! types, how a value is checked (JSONSchema messages), and how GET renders it (integers and
//! booleans as JSON numbers, `number` keys such as `cpulimit` as strings).

use serde_json::Value;

use super::propstr;

/// The type of one configuration key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Bool,
    Int { min: i64, max: i64 },
    Number { min: f64, max: f64 },
    Str,
    Enum(&'static [&'static str]),
    Net,
    Volume { rootfs: bool },
    Dev,
    Features,
    Unused,
    DnsName,
    Tags,
}

const NET_KEYS: &[&str] = &[
    "name",
    "bridge",
    "firewall",
    "gw",
    "gw6",
    "host-managed",
    "hwaddr",
    "ip",
    "ip6",
    "link_down",
    "mtu",
    "rate",
    "tag",
    "trunks",
    "type",
];
const VOLUME_KEYS: &[&str] = &[
    "volume",
    "mp",
    "acl",
    "backup",
    "mountoptions",
    "quota",
    "replicate",
    "ro",
    "shared",
    "size",
    "keepattrs",
];
const FEATURE_KEYS: &[&str] = &[
    "fuse",
    "keyctl",
    "mknod",
    "mount",
    "nesting",
    "force_rw_sys",
];
const DEV_KEYS: &[&str] = &["path", "deny-write", "gid", "mode", "uid"];
const OSTYPES: &[&str] = &[
    "debian",
    "devuan",
    "ubuntu",
    "centos",
    "fedora",
    "opensuse",
    "archlinux",
    "alpine",
    "gentoo",
    "nixos",
    "unmanaged",
];
const LOCKS: &[&str] = &[
    "backup",
    "create",
    "destroyed",
    "disk",
    "fstrim",
    "migrate",
    "mounted",
    "rollback",
    "snapshot",
    "snapshot-delete",
];

fn indexed(key: &str, prefix: &str, count: u32) -> bool {
    key.strip_prefix(prefix)
        .filter(|n| !n.is_empty() && (n.len() == 1 || !n.starts_with('0')))
        .and_then(|n| n.parse::<u32>().ok())
        .is_some_and(|n| n < count)
}

/// The kind of an LXC configuration key, or `None` when the schema has no such key.
pub(crate) fn lxc_kind(key: &str) -> Option<Kind> {
    let int = |min, max| Some(Kind::Int { min, max });
    match key {
        "onboot" | "template" | "console" | "protection" | "unprivileged" | "debug" => {
            Some(Kind::Bool)
        }
        "tty" => int(0, 6),
        "cores" => int(1, 8192),
        "cpuunits" => int(0, 500_000),
        "memory" => int(16, i64::MAX),
        "swap" => int(0, i64::MAX),
        "cpulimit" => Some(Kind::Number {
            min: 0.0,
            max: 8192.0,
        }),
        "arch" => Some(Kind::Enum(&[
            "amd64", "i386", "arm64", "armhf", "riscv32", "riscv64",
        ])),
        "ostype" => Some(Kind::Enum(OSTYPES)),
        "cmode" => Some(Kind::Enum(&["shell", "console", "tty"])),
        "lock" => Some(Kind::Enum(LOCKS)),
        "hostname" => Some(Kind::DnsName),
        "tags" => Some(Kind::Tags),
        "startup" | "description" | "searchdomain" | "nameserver" | "timezone" | "entrypoint"
        | "env" | "hookscript" => Some(Kind::Str),
        "features" => Some(Kind::Features),
        "rootfs" => Some(Kind::Volume { rootfs: true }),
        k if indexed(k, "net", 32) => Some(Kind::Net),
        k if indexed(k, "mp", 256) => Some(Kind::Volume { rootfs: false }),
        k if indexed(k, "dev", 256) => Some(Kind::Dev),
        k if indexed(k, "unused", 256) => Some(Kind::Unused),
        _ => None,
    }
}

/// Checks one value against its kind; returns the value as PVE stores it.
pub(crate) fn check(kind: Kind, value: &str) -> Result<String, String> {
    match kind {
        Kind::Bool => match value {
            "1" | "0" => Ok(value.to_owned()),
            v if v.eq_ignore_ascii_case("true") => Ok("1".to_owned()),
            v if v.eq_ignore_ascii_case("false") => Ok("0".to_owned()),
            _ => Err(format!("type check ('boolean') failed - got '{value}'")),
        },
        Kind::Int { min, max } => {
            let n: i64 = value
                .parse()
                .map_err(|_| format!("type check ('integer') failed - got '{value}'"))?;
            range(n as f64, min as f64, max as f64)?;
            Ok(n.to_string())
        }
        Kind::Number { min, max } => {
            let n: f64 = value
                .parse()
                .map_err(|_| format!("type check ('number') failed - got '{value}'"))?;
            range(n, min, max)?;
            Ok(value.to_owned())
        }
        Kind::Enum(allowed) if !allowed.contains(&value) => Err(format!(
            "value '{value}' does not have a value in the enumeration '{}'",
            allowed.join(", ")
        )),
        Kind::Enum(_) | Kind::Str | Kind::Unused => Ok(value.to_owned()),
        Kind::DnsName if is_dns_name(value) => Ok(value.to_owned()),
        Kind::DnsName => {
            Err("invalid format - value does not look like a valid DNS name".to_owned())
        }
        Kind::Tags if propstr::split_list(value).iter().all(|t| is_tag(t)) => Ok(value.to_owned()),
        Kind::Tags => Err("invalid format - invalid characters in tag".to_owned()),
        Kind::Net => check_props(value, None, NET_KEYS, &["name"])
            .and_then(|p| check_net(&p))
            .map(|()| value.to_owned()),
        Kind::Volume { rootfs } => {
            let required: &[&str] = if rootfs { &[] } else { &["mp"] };
            check_props(value, Some("volume"), VOLUME_KEYS, required).map(|_| value.to_owned())
        }
        Kind::Features => check_props(value, None, FEATURE_KEYS, &[]).map(|_| value.to_owned()),
        Kind::Dev => check_props(value, Some("path"), DEV_KEYS, &[]).map(|_| value.to_owned()),
    }
}

/// `pve_verify_dns_name`: dot-separated labels of letters, digits and inner hyphens.
fn is_dns_name(name: &str) -> bool {
    name.split('.').all(|label| {
        let bytes = label.as_bytes();
        !bytes.is_empty()
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
            && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
            && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
    })
}

/// `PVE_TAG_RE`: `[a-z0-9_][a-z0-9_\-+.]*`, case-insensitive.
fn is_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || "_-+.".contains(c))
}

fn range(n: f64, min: f64, max: f64) -> Result<(), String> {
    if n < min {
        return Err(format!("value must have a minimum value of {min}"));
    }
    if n > max {
        return Err(format!("value must have a maximum value of {max}"));
    }
    Ok(())
}

fn check_props(
    value: &str,
    default_key: Option<&str>,
    keys: &[&str],
    required: &[&str],
) -> Result<propstr::Props, String> {
    let props = propstr::parse(value, default_key).map_err(|e| format!("invalid format - {e}"))?;
    if let Some(bad) = props.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(format!(
            "invalid format - property string: unknown key '{bad}'"
        ));
    }
    let default_present = default_key.is_some_and(|dk| props.contains_key(dk));
    if let Some(missing) = required.iter().find(|k| !props.contains_key(**k)) {
        return Err(format!(
            "invalid format - property string: {missing}: property is missing and it is not optional"
        ));
    }
    if default_key.is_some() && !default_present {
        let dk = default_key.unwrap_or_default();
        return Err(format!(
            "invalid format - property string: {dk}: property is missing and it is not optional"
        ));
    }
    Ok(props)
}

fn check_net(props: &propstr::Props) -> Result<(), String> {
    if let Some(mac) = props.get("hwaddr")
        && !propstr::is_mac(mac)
    {
        return Err(format!(
            "invalid format - property string: hwaddr: value does not look like a valid unicast MAC address: {mac}"
        ));
    }
    for (key, lo, hi) in [("mtu", 64, 65535), ("tag", 1, 4094)] {
        if let Some(v) = props.get(key) {
            let n: i64 = v.parse().map_err(|_| {
                format!("invalid format - {key}: type check ('integer') failed - got '{v}'")
            })?;
            range(n as f64, lo as f64, hi as f64)
                .map_err(|e| format!("invalid format - {key}: {e}"))?;
        }
    }
    if props.get("type").is_some_and(|t| t != "veth") {
        return Err(
            "invalid format - type: value does not have a value in the enumeration 'veth'"
                .to_owned(),
        );
    }
    Ok(())
}

/// Renders a stored value for GET: integers and booleans as numbers, the rest as strings.
pub(crate) fn typed(key: &str, value: &str) -> Value {
    match lxc_kind(key).or_else(|| qemu_int_key(key).then_some(Kind::Int { min: 0, max: 0 })) {
        Some(Kind::Bool | Kind::Int { .. }) => value
            .parse::<i64>()
            .map_or_else(|_| Value::from(value), Value::from),
        _ => Value::from(value),
    }
}

fn qemu_int_key(key: &str) -> bool {
    matches!(
        key,
        "cores"
            | "sockets"
            | "vcpus"
            | "memory"
            | "balloon"
            | "shares"
            | "cpuunits"
            | "onboot"
            | "protection"
            | "numa"
            | "template"
            | "kvm"
            | "acpi"
            | "agent_enabled"
    )
}

/// `PVE::CGroup::clamp_cpu_shares` on cgroup v2.
pub(crate) fn clamp_cpuunits(value: &str) -> String {
    match value.parse::<u64>() {
        Ok(n) => n.clamp(1, 10_000).to_string(),
        Err(_) => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_not_in_the_schema() {
        assert_eq!(lxc_kind("net32"), None);
        assert_eq!(lxc_kind("net01"), None);
        assert_eq!(lxc_kind("net31"), Some(Kind::Net));
        assert_eq!(lxc_kind("ostemplate"), None);
    }

    #[test]
    fn integer_check_reports_pve_message() {
        let kind = lxc_kind("memory").unwrap_or(Kind::Str);
        assert_eq!(
            check(kind, "abc"),
            Err("type check ('integer') failed - got 'abc'".to_owned())
        );
        assert_eq!(
            check(kind, "8"),
            Err("value must have a minimum value of 16".to_owned())
        );
    }

    #[test]
    fn hostnames_and_tags_are_checked_like_pve() {
        assert!(check(Kind::DnsName, "web-01.example").is_ok());
        assert!(check(Kind::DnsName, "-web").is_err());
        assert!(check(Kind::DnsName, "web_01").is_err());
        assert!(check(Kind::Tags, "Prod;web+1").is_ok());
        assert_eq!(
            check(Kind::Tags, "bad!tag"),
            Err("invalid format - invalid characters in tag".to_owned())
        );
    }

    #[test]
    fn net_without_name_is_refused() {
        assert!(check(Kind::Net, "bridge=vmbr0").is_err());
        assert!(check(Kind::Net, "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01").is_ok());
    }
}
