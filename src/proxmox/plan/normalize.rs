//! Normalisation of LXC config values, so a value PVE stores differently from how it was sent
//! (tag case and order, MAC case, description newline, property-string order, defaults) does
//! not show up as a change in the next plan.

use super::keys;
use super::model::GuestKind;
use super::propstr::{PropString, canonical_bool, canonical_number, format_size, size_bytes};

/// PVE clamps `cpuunits` to this on cgroup v2 hosts (`PVE::CGroup::clamp_cpu_shares`).
const CPUUNITS_MAX: f64 = 10_000.0;

/// The value PVE uses for an LXC key that is absent from the config, if it has one.
/// Keys listed with `""` are "not set" when absent, and an empty desired value equals that.
pub(crate) fn lxc_default(key: &str) -> Option<&'static str> {
    Some(match key {
        "memory" | "swap" => "512",
        "cpulimit" | "onboot" | "protection" | "template" | "unprivileged" | "debug" => "0",
        "cpuunits" => "100",
        "console" => "1",
        "cmode" => "tty",
        "tty" => "2",
        "arch" => "amd64",
        "entrypoint" => "/sbin/init",
        "description" | "tags" | "features" | "hookscript" | "startup" | "nameserver"
        | "searchdomain" | "env" | "timezone" => "",
        _ => return None,
    })
}

/// Whether `key` is a numbered key of `prefix` (`net0`, `mp12`), returning the index.
pub(crate) fn indexed(key: &str, prefix: &str) -> Option<u32> {
    key.strip_prefix(prefix)
        .filter(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|rest| rest.parse().ok())
}

/// The field PVE stores a bare leading item under, for keys holding property strings;
/// `Some(None)` for property strings without a default key, `None` for plain values.
pub(crate) fn prop_default_key(key: &str) -> Option<Option<&'static str>> {
    if key == "rootfs" || indexed(key, "mp").is_some() {
        Some(Some("volume"))
    } else if indexed(key, "dev").is_some() {
        Some(Some("path"))
    } else if key == "startup" {
        Some(Some("order"))
    } else if key == "features" || key == "clone" || indexed(key, "net").is_some() {
        Some(None)
    } else {
        None
    }
}

fn split_list(value: &str, separators: &[char]) -> Vec<String> {
    value
        .split(|c| separators.contains(&c))
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

fn sorted_list(value: &str, separators: &[char], join: &str) -> String {
    let mut items = split_list(value, separators);
    items.sort();
    items.dedup();
    items.join(join)
}

/// A sorted `;`-joined tag list without atoll's marker and owner tags: they are bookkeeping,
/// never a change the plan shows (a guest imported without them plans no change for them).
pub(crate) fn without_markers(tags: &str) -> String {
    let kept: Vec<&str> = tags
        .split(';')
        .filter(|t| !crate::proxmox::owner::is_marker(t))
        .collect();
    kept.join(";")
}

/// Canonical form of one LXC config value.
pub(crate) fn normalize(key: &str, value: &str) -> String {
    match key {
        "tags" => without_markers(&sorted_list(&value.to_lowercase(), &[';', ',', ' '], ";")),
        "description" => value.replace("\r\n", "\n").trim_end().to_owned(),
        "nameserver" | "searchdomain" => split_list(value, &[',', ';', ' ']).join(" "),
        "env" => sorted_list(value, &['\0'], "\0"),
        "cpuunits" => match value.trim().parse::<f64>() {
            Ok(units) => canonical_number(&units.min(CPUUNITS_MAX).to_string()),
            Err(_) => value.trim().to_owned(),
        },
        "memory" | "swap" | "cores" | "cpulimit" | "tty" => canonical_number(value),
        "onboot" | "protection" | "template" | "unprivileged" | "debug" | "console" => {
            canonical_bool(value.trim())
        }
        _ => match prop_default_key(key) {
            Some(default_key) => normalize_prop(key, value, default_key),
            None => value.trim().to_owned(),
        },
    }
}

fn normalize_prop(key: &str, value: &str, default_key: Option<&str>) -> String {
    let mut prop = PropString::parse(value, default_key);
    let is_mount = key == "rootfs" || indexed(key, "mp").is_some();
    let mut out = PropString::default();
    for (field, raw) in std::mem::take(&mut prop.fields) {
        let canonical = match field.as_str() {
            "hwaddr" => raw.to_ascii_uppercase(),
            "rate" | "tag" | "mtu" | "order" | "up" | "down" | "uid" | "gid" => {
                canonical_number(&raw)
            }
            "trunks" | "mount" | "mountoptions" => sorted_list(&raw, &[';'], ";"),
            "size" => size_bytes(&raw).map_or(raw, format_size),
            "type" if raw == "veth" => continue,
            "replicate" if is_mount && canonical_bool(&raw) == "1" => continue,
            "firewall" | "link_down" | "host-managed" | "nesting" | "keyctl" | "fuse" | "mknod"
            | "force_rw_sys" | "quota" | "ro" | "shared" | "backup" | "deny-write"
            | "keepattrs" => {
                let flag = canonical_bool(&raw);
                if flag == "0" {
                    continue;
                }
                flag
            }
            "acl" | "replicate" => canonical_bool(&raw),
            _ => raw,
        };
        if !canonical.is_empty() {
            out.fields.insert(field, canonical);
        }
    }
    out.print()
}

/// Brings a desired value into the form PVE will hold after applying it, given the live value:
/// a volume to allocate (`local-lvm:8`) on the storage the live volume is already on becomes
/// that volume with `size=8G`; a NIC without a MAC keeps the live MAC, and a VM's `smbios1`
/// without a `uuid` the live one (PVE would otherwise generate new ones). Returns the
/// canonical desired value.
pub(crate) fn normalize_desired(
    kind: GuestKind,
    key: &str,
    desired: &str,
    live: Option<&str>,
) -> String {
    let normalized = keys::canonical(kind, key, desired);
    let Some(live) = live else { return normalized };
    let Some(default_key) = keys::prop_key(kind, key) else {
        return normalized;
    };
    let mut want = PropString::parse(&normalized, default_key);
    let have = PropString::parse(&keys::canonical(kind, key, live), default_key);
    let generated = match kind {
        _ if indexed(key, "net").is_some() => Some(keys::mac_field(kind)),
        GuestKind::Qemu if key == "smbios1" => Some("uuid"),
        _ => None,
    };
    if let Some(field) = generated
        && want.get(field).is_none()
        && let Some(value) = have.get(field)
    {
        want.fields.insert(field.to_owned(), value.to_owned());
    }
    if key == "rootfs" {
        keep_live_root_parts(&mut want, &have, desired);
    }
    if let (Some(volume), Some(live_volume)) = (want.get("volume"), have.get("volume"))
        && let Some((storage, gigabytes)) = allocation(volume)
        && volume_storage(live_volume) == Some(storage)
    {
        let size = format_size(gigabytes << 30);
        want.fields
            .insert("volume".to_owned(), live_volume.to_owned());
        want.fields.entry("size".to_owned()).or_insert(size);
    }
    if want.get("size").is_none()
        && want.get("volume").is_some()
        && let Some(size) = have.get("size")
    {
        // `size` is informational (changed only through `resize`): absent means "as is"
        want.fields.insert("size".to_owned(), size.to_owned());
    }
    // once more through the kind's rules: a VM's EFI disk has no size to compare
    keys::canonical(kind, key, &want.print())
}

/// A container's root disk keeps what the configuration does not say: a clone's volume (its
/// `disk` names no storage), and `replicate` when the raw value has none (bpg sends the flag
/// only when it is on, and then the canonical form has dropped it as PVE's default).
fn keep_live_root_parts(want: &mut PropString, have: &PropString, desired: &str) {
    if want.get("volume").is_none()
        && let Some(volume) = have.get("volume")
    {
        want.fields.insert("volume".to_owned(), volume.to_owned());
    }
    let raw = PropString::parse(desired, Some("volume"));
    if raw.get("replicate").is_none()
        && let Some(replicate) = have.get("replicate")
    {
        want.fields
            .insert("replicate".to_owned(), replicate.to_owned());
    }
}

/// `local-lvm:8` -> (`local-lvm`, 8): a volume PVE allocates at create.
pub(crate) fn allocation(volume: &str) -> Option<(&str, u64)> {
    let (storage, size) = volume.split_once(':')?;
    let size = size.parse().ok()?;
    Some((storage, size))
}

/// The storage a volume id lives on (`local-lvm:vm-100-disk-0` -> `local-lvm`); `None` for
/// bind mounts and devices (absolute paths).
pub(crate) fn volume_storage(volume: &str) -> Option<&str> {
    if volume.starts_with('/') {
        return None;
    }
    volume.split_once(':').map(|(storage, _)| storage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_ignore_case_order_duplicates_and_atolls_markers() {
        assert_eq!(normalize("tags", "Web;ci,web"), normalize("tags", "ci;web"));
        assert_eq!(
            normalize("tags", "atoll;atoll-0123456789;web"),
            normalize("tags", "web")
        );
        assert_eq!(normalize("tags", "atoll;atoll-0123456789"), "");
        assert_eq!(normalize("tags", "atoll-old;web"), "atoll-old;web");
    }

    #[test]
    fn description_ignores_trailing_newline_and_crlf() {
        assert_eq!(
            normalize("description", "a\r\nb"),
            normalize("description", "a\nb\n")
        );
    }

    #[test]
    fn mac_case_and_net_field_order_do_not_matter() {
        let sent = "bridge=vmbr0,name=eth0,hwaddr=bc:24:11:00:00:01,firewall=0";
        let stored = "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01,type=veth";
        assert_eq!(normalize("net0", sent), normalize("net0", stored));
    }

    #[test]
    fn cpuunits_above_the_cgroup_v2_limit_equal_the_clamped_value() {
        assert_eq!(
            normalize("cpuunits", "20000"),
            normalize("cpuunits", "10000")
        );
    }

    #[test]
    fn allocation_on_the_same_storage_matches_the_allocated_volume() {
        let live = "local-lvm:vm-100-disk-0,size=8G";
        assert_eq!(
            normalize_desired(GuestKind::Lxc, "rootfs", "local-lvm:8", Some(live)),
            normalize("rootfs", live)
        );
        assert_ne!(
            normalize_desired(GuestKind::Lxc, "rootfs", "zfs:8", Some(live)),
            normalize("rootfs", live)
        );
    }

    #[test]
    fn net_without_hwaddr_keeps_the_live_mac() {
        let live = "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01,type=veth";
        assert_eq!(
            normalize_desired(GuestKind::Lxc, "net0", "name=eth0,bridge=vmbr0", Some(live)),
            normalize("net0", live)
        );
    }

    #[test]
    fn empty_features_equal_all_flags_off() {
        assert_eq!(
            normalize("features", "nesting=0,keyctl=0"),
            normalize("features", "")
        );
    }
}
