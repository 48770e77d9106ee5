//! Value formats of qemu-server's config schema (`PVE::JSONSchema` formats registered by
//! qemu-server: memory, cpu, machine, agent, vga, hotplug, boot, ipconfig, urlencoded ssh keys),
//! each returning PVE's error text. It must not know which key uses which format.

use super::{propstr, qemu_drive};

/// `PVE::QemuServer::CPUConfig` built-in models (x86_64 and aarch64) plus `host`.
#[rustfmt::skip]
const CPU_MODELS: &[&str] = &[
    "486", "pentium", "pentium2", "pentium3", "coreduo", "core2duo", "Conroe", "Penryn", "Nehalem",
    "Nehalem-IBRS", "Westmere", "Westmere-IBRS", "SandyBridge", "SandyBridge-IBRS", "IvyBridge",
    "IvyBridge-IBRS", "Haswell", "Haswell-IBRS", "Haswell-noTSX", "Haswell-noTSX-IBRS", "Broadwell",
    "Broadwell-IBRS", "Broadwell-noTSX", "Broadwell-noTSX-IBRS", "Skylake-Client",
    "Skylake-Client-IBRS", "Skylake-Client-noTSX-IBRS", "Skylake-Client-v4", "Skylake-Server",
    "Skylake-Server-IBRS", "Skylake-Server-noTSX-IBRS", "Skylake-Server-v4", "Skylake-Server-v5",
    "Cascadelake-Server", "Cascadelake-Server-v2", "Cascadelake-Server-noTSX",
    "Cascadelake-Server-v4", "Cascadelake-Server-v5", "Cooperlake", "Cooperlake-v2", "KnightsMill",
    "Icelake-Client", "Icelake-Client-noTSX", "Icelake-Server", "Icelake-Server-noTSX",
    "Icelake-Server-v3", "Icelake-Server-v4", "Icelake-Server-v5", "Icelake-Server-v6",
    "Icelake-Server-v7", "SapphireRapids", "SapphireRapids-v2", "SapphireRapids-v3",
    "SapphireRapids-v4", "GraniteRapids", "GraniteRapids-v2", "GraniteRapids-v3", "SierraForest",
    "SierraForest-v2", "SierraForest-v3", "ClearwaterForest", "athlon", "phenom", "Opteron_G1",
    "Opteron_G2", "Opteron_G3", "Opteron_G4", "Opteron_G5", "EPYC", "EPYC-IBPB", "EPYC-v3",
    "EPYC-v4", "EPYC-v5", "EPYC-Rome", "EPYC-Rome-v2", "EPYC-Rome-v3", "EPYC-Rome-v4",
    "EPYC-Rome-v5", "EPYC-Milan", "EPYC-Milan-v2", "EPYC-Milan-v3", "EPYC-Genoa", "EPYC-Genoa-v2",
    "EPYC-Turin", "kvm32", "kvm64", "qemu32", "qemu64", "max", "host", "x86-64-v2", "x86-64-v2-AES",
    "x86-64-v3", "x86-64-v4", "a64fx", "cortex-a35", "cortex-a53", "cortex-a55", "cortex-a57",
    "cortex-a710", "cortex-a72", "cortex-a76", "neoverse-n1", "neoverse-n2", "neoverse-v1",
];
const VGA_TYPES: &[&str] = &[
    "cirrus",
    "qxl",
    "qxl2",
    "qxl3",
    "qxl4",
    "none",
    "serial0",
    "serial1",
    "serial2",
    "serial3",
    "std",
    "virtio",
    "virtio-gl",
    "vmware",
];

pub(crate) fn indexed(key: &str, prefix: &str, count: u32) -> bool {
    key.strip_prefix(prefix)
        .filter(|n| !n.is_empty() && (n.len() == 1 || !n.starts_with('0')))
        .and_then(|n| n.parse::<u32>().ok())
        .is_some_and(|n| n < count)
}

pub(crate) fn check_bool(value: &str) -> Result<String, String> {
    match value {
        "1" | "0" => Ok(value.to_owned()),
        v if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("yes") || v == "on" => {
            Ok("1".to_owned())
        }
        v if v.eq_ignore_ascii_case("false") || v.eq_ignore_ascii_case("no") || v == "off" => {
            Ok("0".to_owned())
        }
        _ => Err(format!("type check ('boolean') failed - got '{value}'")),
    }
}

pub(crate) fn check_int(value: &str, min: i64, max: Option<i64>) -> Result<String, String> {
    let n: i64 = value
        .parse()
        .map_err(|_| format!("type check ('integer') failed - got '{value}'"))?;
    if n < min {
        return Err(format!("value must have a minimum value of {min}"));
    }
    if let Some(max) = max.filter(|m| n > *m) {
        return Err(format!("value must have a maximum value of {max}"));
    }
    Ok(n.to_string())
}

pub(crate) fn check_number(value: &str, min: f64, max: f64) -> Result<String, String> {
    let n: f64 = value
        .parse()
        .map_err(|_| format!("type check ('number') failed - got '{value}'"))?;
    if n < min {
        return Err(format!("value must have a minimum value of {min}"));
    }
    if n > max {
        return Err(format!("value must have a maximum value of {max}"));
    }
    Ok(value.to_owned())
}

pub(crate) fn check_enum(value: &str, allowed: &[&str]) -> Result<String, String> {
    if allowed.contains(&value) {
        return Ok(value.to_owned());
    }
    Err(format!(
        "value '{value}' does not have a value in the enumeration '{}'",
        allowed.join(", ")
    ))
}

/// Runs `f` on a property string; errors become `invalid format - ...`.
pub(crate) fn props_of(
    value: &str,
    default_key: &str,
    keys: &[&str],
) -> Result<propstr::Props, String> {
    let props =
        propstr::parse(value, Some(default_key)).map_err(|e| format!("invalid format - {e}"))?;
    if let Some(bad) = props.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(format!(
            "invalid format - property string: unknown key '{bad}'"
        ));
    }
    Ok(props)
}

/// `$PVE::QemuServer::Memory::memory_fmt`: `current` (default key), integer >= 16.
pub(crate) fn check_memory(value: &str) -> Result<String, String> {
    let props = props_of(value, "current", &["current"])?;
    let current = props.get("current").map_or("", String::as_str);
    check_int(current, 16, None)
        .map(|_| value.to_owned())
        .map_err(|e| format!("invalid format - current: {e}"))
}

/// `validate_vm_cpu_conf`: a built-in model (or `custom-*`) and `+flag;-flag` flags.
pub(crate) fn check_cpu(value: &str) -> Result<String, String> {
    let keys = [
        "cputype",
        "flags",
        "hidden",
        "hv-vendor-id",
        "phys-bits",
        "guest-phys-bits",
    ];
    let props = props_of(value, "cputype", &keys)?;
    let cputype = props.get("cputype").map_or("kvm64", String::as_str);
    if !cputype.starts_with("custom-") && !CPU_MODELS.contains(&cputype) {
        return Err(format!(
            "invalid format - Built-in cputype '{cputype}' is not defined (missing 'custom-' prefix?)"
        ));
    }
    Ok(value.to_owned())
}

/// `pve-qemu-machine-fmt`'s `type` pattern, plus `viommu`.
pub(crate) fn check_machine(value: &str) -> Result<String, String> {
    let props = props_of(
        value,
        "type",
        &["type", "viommu", "aw-bits", "enable-s3", "enable-s4"],
    )?;
    let t = props.get("type").map_or("", String::as_str);
    let versioned = |prefix: &str| {
        t.strip_prefix(prefix).is_some_and(|rest| {
            let v = rest
                .split("+pve")
                .next()
                .unwrap_or_default()
                .trim_end_matches(".pxe");
            !v.is_empty()
                && v.split('.')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
    };
    let ok = t.is_empty()
        || matches!(t, "pc" | "q35" | "virt")
        || ["pc-i440fx-", "pc-", "pc-q35-", "virt-"]
            .iter()
            .any(|p| versioned(p));
    if !ok {
        return Err("invalid format - type: value does not match the regex pattern".to_owned());
    }
    if let Some(v) = props.get("viommu") {
        check_enum(v, &["intel", "virtio"]).map_err(|e| format!("invalid format - viommu: {e}"))?;
    }
    Ok(value.to_owned())
}

/// `$agent_fmt`: `enabled` (default key, boolean), `fstrim_cloned_disks`, `freeze-fs`, `type`.
pub(crate) fn check_agent(value: &str) -> Result<String, String> {
    let keys = [
        "enabled",
        "fstrim_cloned_disks",
        "freeze-fs-on-backup",
        "freeze-fs",
        "guest-fsfreeze",
        "type",
    ];
    let props = props_of(value, "enabled", &keys)?;
    for (k, v) in &props {
        if k == "type" {
            check_enum(v, &["virtio", "isa"]).map_err(|e| format!("invalid format - type: {e}"))?;
        } else {
            check_bool(v).map_err(|e| format!("invalid format - {k}: {e}"))?;
        }
    }
    Ok(value.to_owned())
}

pub(crate) fn check_vga(value: &str) -> Result<String, String> {
    let props = props_of(value, "type", &["type", "memory", "clipboard"])?;
    if let Some(t) = props.get("type") {
        check_enum(t, VGA_TYPES).map_err(|e| format!("invalid format - type: {e}"))?;
    }
    if let Some(m) = props.get("memory") {
        check_int(m, 4, Some(512)).map_err(|e| format!("invalid format - memory: {e}"))?;
    }
    Ok(value.to_owned())
}

/// `parse_hotplug_features`: `0`, `1`, or a list of network/disk/cpu/memory/usb/cloudinit.
pub(crate) fn check_hotplug(value: &str) -> Result<String, String> {
    let known = ["network", "disk", "cpu", "memory", "usb", "cloudinit"];
    if value == "0"
        || value == "1"
        || propstr::split_list(value)
            .iter()
            .all(|f| known.contains(&f.as_str()))
    {
        return Ok(value.to_owned());
    }
    Err("invalid format - unable to parse hotplug option".to_owned())
}

pub(crate) fn check_dns_name(value: &str) -> Result<String, String> {
    let ok = value.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
            && b.first().is_some_and(u8::is_ascii_alphanumeric)
            && b.last().is_some_and(u8::is_ascii_alphanumeric)
    });
    ok.then(|| value.to_owned())
        .ok_or_else(|| "invalid format - value does not look like a valid DNS name".to_owned())
}

pub(crate) fn check_tags(value: &str) -> Result<String, String> {
    let ok = propstr::split_list(value).iter().all(|t| {
        let mut c = t.chars();
        c.next()
            .is_some_and(|f| f.is_ascii_alphanumeric() || f == '_')
            && c.all(|x| x.is_ascii_alphanumeric() || "_-+.".contains(x))
    });
    ok.then(|| value.to_owned())
        .ok_or_else(|| "invalid format - invalid characters in tag".to_owned())
}

/// `pve_verify_urlencoded`.
pub(crate) fn check_urlencoded(value: &str) -> Result<String, String> {
    if value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-%_.!~*'()".contains(c))
    {
        return Ok(value.to_owned());
    }
    Err(format!(
        "invalid format - invalid urlencoded string: {value}"
    ))
}

pub(crate) fn check_vmgenid(value: &str) -> Result<String, String> {
    let uuid = value.len() == 36
        && value.char_indices().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    (uuid || value == "0" || value == "1")
        .then(|| value.to_owned())
        .ok_or_else(|| "value does not match the regex pattern".to_owned())
}

/// `pve-qm-boot`: legacy `[acdn]{1,4}` or `order=<dev>;<dev>` with `verify_bootdev`.
pub(crate) fn check_boot_format(value: &str) -> Result<String, String> {
    let props = props_of(value, "legacy", &["legacy", "order"])?;
    let legacy_ok =
        |l: &String| (1..=4).contains(&l.len()) && l.chars().all(|c| "acdn".contains(c));
    if props.get("legacy").is_some_and(|l| !legacy_ok(l)) {
        return Err("invalid format - legacy: value does not match the regex pattern".to_owned());
    }
    for dev in props
        .get("order")
        .map(|o| propstr::split_list(o))
        .unwrap_or_default()
    {
        let special = dev.starts_with("efidisk") || dev.starts_with("tpmstate");
        let ok = (qemu_drive::is_drive_key(&dev) && !special)
            || indexed(&dev, "net", 32)
            || indexed(&dev, "usb", 14)
            || indexed(&dev, "hostpci", 16);
        if !ok {
            return Err(format!(
                "invalid format - order: invalid boot device '{dev}'"
            ));
        }
    }
    Ok(value.to_owned())
}

/// `$ipconfig_fmt` (`PVE::QemuServer::Network`): `ip=dhcp|<cidr>`, `gw`, `ip6=auto|dhcp|<cidr>`, `gw6`.
pub(crate) fn check_ipconfig(value: &str) -> Result<String, String> {
    let props = propstr::parse(value, None).map_err(|e| format!("invalid format - {e}"))?;
    for (k, v) in &props {
        let ok = match k.as_str() {
            "ip" => v == "dhcp" || is_cidr(v, false),
            "ip6" => v == "dhcp" || v == "auto" || is_cidr(v, true),
            "gw" => v.parse::<std::net::Ipv4Addr>().is_ok(),
            "gw6" => v.parse::<std::net::Ipv6Addr>().is_ok(),
            _ => {
                return Err(format!(
                    "invalid format - property string: unknown key '{k}'"
                ));
            }
        };
        if !ok {
            return Err(format!(
                "invalid format - {k}: value does not look like a valid address"
            ));
        }
    }
    Ok(value.to_owned())
}

pub(crate) fn is_cidr(text: &str, v6: bool) -> bool {
    let Some((addr, len)) = text.split_once('/') else {
        return false;
    };
    let max = if v6 { 128 } else { 32 };
    let addr_ok = if v6 {
        addr.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        addr.parse::<std::net::Ipv4Addr>().is_ok()
    };
    addr_ok && len.parse::<u8>().is_ok_and(|l| l <= max)
}

/// `validate_ssh_public_keys` on the `uri_unescape`d value: every non-empty line must be
/// `<type> <base64> [comment]` (ssh-keygen's check), else `SSH public key validation error`.
pub(crate) fn check_ssh_keys(urlencoded: &str) -> Result<(), String> {
    let raw = percent_encoding::percent_decode_str(urlencoded)
        .decode_utf8_lossy()
        .into_owned();
    check_ssh_key_lines(&raw)
}

/// `PVE::Tools::validate_ssh_public_keys` on plain text (the container's `ssh-public-keys`).
pub(crate) fn check_ssh_key_lines(raw: &str) -> Result<(), String> {
    use base64::Engine as _;
    for line in raw.lines().filter(|l| !l.trim().is_empty()) {
        let mut parts = line.split_whitespace();
        let kind = parts.next().unwrap_or_default();
        let blob = parts.next().unwrap_or_default();
        let kind_ok =
            kind.starts_with("ssh-") || kind.starts_with("ecdsa-") || kind.starts_with("sk-");
        let blob_ok = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .is_ok_and(|b| b.len() > 16);
        if !kind_ok || !blob_ok {
            return Err("SSH public key validation error".to_owned());
        }
    }
    Ok(())
}
