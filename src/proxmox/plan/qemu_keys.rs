//! QEMU config keys as the plan compares and shows them: PVE's value for an absent key,
//! which keys hold property strings, one canonical spelling per value (so a VM created from
//! atoll's request compares equal to what qemu-server stored), and the bpg attribute path of
//! each key and field (`cpu.units`, `network_device[0].bridge`, `disk[scsi0].size`).

use super::normalize::indexed;
use super::paths::Kind;
use super::propstr::{PropString, canonical_bool, canonical_number, format_size, size_bytes};

/// NIC models: in PVE's stored form the model names the field holding the MAC
/// (`virtio=BC:24:11:..`).
const NIC_MODELS: &[&str] = &[
    "virtio", "e1000", "e1000e", "rtl8139", "vmxnet3", "ne2k_pci", "pcnet", "i82551", "i82557b",
    "i82559er",
];

/// PVE clamps `cpuunits` to this on cgroup v2 hosts (qemu-server `PVE::QemuServer::Helpers`
/// via `PVE::CGroup::clamp_cpu_shares`).
const CPUUNITS_MAX: f64 = 10_000.0;

/// The value qemu-server uses for a key absent from the config (its JSON schema's default).
pub(crate) fn default(key: &str) -> Option<&'static str> {
    Some(match key {
        "acpi" | "tablet" | "kvm" => "1",
        "onboot" | "protection" | "template" | "numa" | "cpulimit" | "keephugepages" => "0",
        "agent" => "enabled=0",
        "cores" | "sockets" => "1",
        "memory" => "512",
        "cpuunits" => "100",
        "bios" => "seabios",
        "scsihw" => "lsi",
        "hotplug" => "network,disk,usb",
        "description" | "tags" | "hookscript" | "startup" | "nameserver" | "searchdomain"
        | "machine" | "affinity" | "hugepages" | "keyboard" | "ciuser" | "citype" | "cicustom"
        | "sshkeys" => "",
        _ => return None,
    })
}

/// Whether `key` names a drive (`scsi0`, `virtio1`, `sata2`, `ide3`, `efidisk0`,
/// `tpmstate0`, `unused0`).
pub(crate) fn is_drive(key: &str) -> bool {
    ["scsi", "virtio", "sata", "ide", "unused"]
        .iter()
        .any(|p| indexed(key, p).is_some())
        || key == "efidisk0"
        || key == "tpmstate0"
}

/// The field a bare leading item is stored under, for keys holding property strings;
/// `Some(None)` for property strings without one, `None` for plain values.
pub(crate) fn prop_default_key(key: &str) -> Option<Option<&'static str>> {
    if is_drive(key) {
        return Some(Some("volume"));
    }
    let indexed_key = |prefix| indexed(key, prefix).is_some();
    Some(match key {
        "agent" => Some("enabled"),
        "boot" => Some("legacy"),
        "cpu" => Some("cputype"),
        "vga" => Some("type"),
        "watchdog" => Some("model"),
        "rng0" => Some("source"),
        "startup" => Some("order"),
        "audio0" | "smbios1" | "amd-sev" | "clone" => None,
        _ if indexed_key("net") || indexed_key("ipconfig") || indexed_key("numa") => None,
        _ if indexed_key("hostpci") || indexed_key("usb") => Some("host"),
        _ if indexed_key("virtiofs") => Some("dirid"),
        _ => return None,
    })
}

fn split_list(value: &str, separators: &[char]) -> Vec<String> {
    value
        .split(|c| separators.contains(&c))
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

fn sorted(mut items: Vec<String>, join: &str) -> String {
    items.sort();
    items.dedup();
    items.join(join)
}

/// Percent-decoding of `sshkeys` (PVE stores the URL-encoded text it was sent).
fn url_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let (h, l) = (hex(h).unwrap_or(0), hex(l).unwrap_or(0));
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b'+', ..) => {
                out.push(b' ');
                i += 1;
            }
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Canonical form of one QEMU config value.
pub(crate) fn normalize(key: &str, value: &str) -> String {
    match key {
        "tags" => super::normalize::without_markers(&sorted(
            split_list(&value.to_lowercase(), &[';', ',', ' ']),
            ";",
        )),
        "description" => value.replace("\r\n", "\n").trim_end().to_owned(),
        "nameserver" | "searchdomain" => split_list(value, &[',', ';', ' ']).join(" "),
        "sshkeys" => split_list(&url_decode(value), &['\n']).join("\n"),
        "hotplug" => match value.trim() {
            "1" => "disk,network,usb".to_owned(),
            "0" => String::new(),
            list => sorted(split_list(list, &[',']), ","),
        },
        "cpuunits" => match value.trim().parse::<f64>() {
            Ok(units) => canonical_number(&units.min(CPUUNITS_MAX).to_string()),
            Err(_) => value.trim().to_owned(),
        },
        // PVE 8.1+ may store `memory: current=2048`
        "memory" => canonical_number(value.trim().trim_start_matches("current=")),
        "balloon" | "cores" | "sockets" | "vcpus" | "cpulimit" | "shares" => {
            canonical_number(value)
        }
        "acpi" | "onboot" | "protection" | "template" | "numa" | "tablet" | "kvm"
        | "keephugepages" | "ciupgrade" => canonical_bool(value.trim()),
        _ if indexed(key, "net").is_some() => normalize_net(value),
        _ => match prop_default_key(key) {
            Some(default_key) => normalize_prop(key, value, default_key),
            None => value.trim().to_owned(),
        },
    }
}

/// `virtio=BC:..,bridge=vmbr0` and `model=virtio,macaddr=bc:..,bridge=vmbr0` alike, as
/// `model`, `macaddr` (uppercase) and the other fields with PVE's defaults left out.
fn normalize_net(value: &str) -> String {
    let prop = PropString::parse(value, None);
    let mut out = PropString::default();
    for (field, raw) in prop.fields {
        let (field, canonical) = match field.as_str() {
            f if NIC_MODELS.contains(&f) => {
                out.fields.insert("model".to_owned(), f.to_owned());
                if raw == "1" {
                    continue;
                }
                ("macaddr".to_owned(), raw.to_ascii_uppercase())
            }
            "macaddr" => (field, raw.to_ascii_uppercase()),
            "firewall" | "link_down" => match canonical_bool(&raw).as_str() {
                "0" => continue,
                flag => (field, flag.to_owned()),
            },
            "queues" | "tag" | "mtu" | "rate" => match canonical_number(&raw).as_str() {
                "0" => continue,
                n => (field, n.to_owned()),
            },
            "trunks" => (field, sorted(split_list(&raw, &[';']), ";")),
            _ => (field, raw),
        };
        if !canonical.is_empty() {
            out.fields.insert(field, canonical);
        }
    }
    out.print()
}

/// Drive and device fields with PVE's defaults left out, booleans and sizes in one spelling.
fn normalize_prop(key: &str, value: &str, default_key: Option<&str>) -> String {
    let mut prop = PropString::parse(value, default_key);
    if let Some(file) = prop.fields.remove("file") {
        prop.fields.insert("volume".to_owned(), file);
    }
    let drive = is_drive(key);
    let cloud_init = drive && prop.get("volume").is_some_and(is_cloud_init);
    let fixed_size = key == "efidisk0" || key == "tpmstate0";
    let mut out = PropString::default();
    for (field, raw) in std::mem::take(&mut prop.fields) {
        let canonical = match (field.as_str(), raw.as_str()) {
            ("volume", v) if cloud_init => cloud_init_volume(v),
            // what the drive was created from or as: not part of the stored drive
            ("import-from" | "format", _) if drive => continue,
            ("size" | "media", _) if cloud_init => continue,
            ("size", _) if fixed_size => continue,
            ("size", v) => size_bytes(v).map_or_else(|| v.to_owned(), format_size),
            // qemu-server's drive defaults
            ("backup" | "replicate", v) if drive && canonical_bool(v) == "1" => continue,
            ("iothread" | "ssd", v) if drive && canonical_bool(v) == "0" => continue,
            ("aio", "io_uring") | ("cache", "none") | ("discard", "ignore") if drive => continue,
            ("enabled", v) if key == "agent" => canonical_bool(v),
            ("fstrim_cloned_disks", v) if canonical_bool(v) == "0" => continue,
            ("type", "virtio") if key == "agent" => continue,
            ("pre-enrolled-keys" | "pcie" | "x-vga" | "usb3", v) => {
                match canonical_bool(v).as_str() {
                    "0" => continue,
                    flag => flag.to_owned(),
                }
            }
            ("rombar", v) => match canonical_bool(v).as_str() {
                "1" => continue,
                flag => flag.to_owned(),
            },
            ("ip" | "gw" | "ip6" | "gw6", v) => v.to_ascii_lowercase(),
            ("order" | "up" | "down" | "memory" | "max_bytes" | "period", v) => canonical_number(v),
            ("efitype", v) => v.to_ascii_lowercase(),
            (_, v) => v.to_owned(),
        };
        if !canonical.is_empty() {
            out.fields.insert(field, canonical);
        }
    }
    out.print()
}

/// Whether a drive's volume is a cloud-init drive: `local-lvm:cloudinit` as sent, or
/// `local-lvm:vm-100-cloudinit` as qemu-server names it (`PVE::QemuServer::Cloudinit`).
pub(crate) fn is_cloud_init(volume: &str) -> bool {
    volume.ends_with(":cloudinit") || volume.contains("-cloudinit")
}

/// `local-lvm:vm-100-cloudinit` (or `.qcow2`) -> `local-lvm:cloudinit`.
fn cloud_init_volume(volume: &str) -> String {
    match volume.split_once(':') {
        Some((storage, _)) => format!("{storage}:cloudinit"),
        None => volume.to_owned(),
    }
}

/// The bpg attribute path and kind for a QEMU key and optional property-string field.
pub(crate) fn path(key: &str, field: Option<&str>) -> (String, Kind) {
    if let Some(i) = indexed(key, "net") {
        return net_path(i, field);
    }
    if let Some(i) = indexed(key, "ipconfig") {
        let ip = format!("initialization.ip_config[{i}]");
        let leaf = match field {
            Some("ip") => "ipv4.address",
            Some("gw") => "ipv4.gateway",
            Some("ip6") => "ipv6.address",
            Some("gw6") => "ipv6.gateway",
            _ => return (ip, Kind::Text),
        };
        return (format!("{ip}.{leaf}"), Kind::Text);
    }
    if is_drive(key) {
        return drive_path(key, field);
    }
    for (prefix, block) in [
        ("serial", "serial_device"),
        ("hostpci", "hostpci"),
        ("usb", "usb"),
        ("numa", "numa"),
        ("virtiofs", "virtiofs"),
    ] {
        if let Some(i) = indexed(key, prefix) {
            let base = format!("{block}[{i}]");
            return match (prefix, field) {
                ("serial", _) => (format!("{base}.device"), Kind::Text),
                (_, None) => (base, Kind::Text),
                (_, Some(f)) => (format!("{base}.{}", field_name(f)), field_kind(f)),
            };
        }
    }
    let block_field = |block: &str, f: &str| (format!("{block}.{}", field_name(f)), field_kind(f));
    match (key, field) {
        ("agent", Some("fstrim_cloned_disks")) => ("agent.trim".to_owned(), Kind::Bool),
        ("agent", Some(f)) => block_field("agent", f),
        ("cpu", Some("cputype")) => ("cpu.type".to_owned(), Kind::Text),
        ("cpu", Some("flags")) => ("cpu.flags".to_owned(), Kind::List(';')),
        ("boot", Some("order")) => ("boot_order".to_owned(), Kind::List(';')),
        ("startup", Some(f)) => {
            let name = match f {
                "up" => "up_delay",
                "down" => "down_delay",
                other => other,
            };
            (format!("startup.{name}"), Kind::Number)
        }
        ("clone", Some("vmid")) => ("clone.vm_id".to_owned(), Kind::Number),
        ("clone", Some("node")) => ("clone.node_name".to_owned(), Kind::Text),
        ("clone", Some("storage")) => ("clone.datastore_id".to_owned(), Kind::Text),
        ("audio0", Some(f)) => block_field("audio_device", f),
        ("rng0", Some(f)) => block_field("rng[0]", f),
        ("cicustom", Some(f)) => (format!("initialization.{f}_data_file_id"), Kind::Text),
        ("vga", Some(f)) => block_field("vga", f),
        ("watchdog", Some(f)) => block_field("watchdog", f),
        ("smbios1", Some(f)) => block_field("smbios", f),
        ("clone", Some(f)) => block_field("clone", f),
        _ => plain_path(key),
    }
}

/// What a drive key holds, which decides the block it belongs to in bpg's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DriveRole {
    Disk,
    CloudInit,
    Cdrom,
}

fn drive_role(value: &str) -> DriveRole {
    let prop = PropString::parse(value, Some("volume"));
    let volume = prop
        .get("volume")
        .or_else(|| prop.get("file"))
        .unwrap_or("");
    if is_cloud_init(volume) {
        DriveRole::CloudInit
    } else if prop.get("media") == Some("cdrom") {
        DriveRole::Cdrom
    } else {
        DriveRole::Disk
    }
}

/// [`path`], knowing the value: a drive holding the cloud-init disk is part of
/// `initialization`, one holding a CD-ROM is `cdrom`. `None` for a field that is not an
/// attribute of its own (a CD-ROM's `media`).
pub(crate) fn path_of(
    key: &str,
    field: Option<&str>,
    value: Option<&str>,
) -> Option<(String, Kind)> {
    let role = match value {
        Some(value) if is_drive(key) => drive_role(value),
        _ => DriveRole::Disk,
    };
    Some(match (role, field) {
        (DriveRole::Disk, _) => path(key, field),
        (DriveRole::CloudInit, Some("volume")) => {
            ("initialization.datastore_id".to_owned(), Kind::Storage)
        }
        (DriveRole::CloudInit, Some(_)) => return None,
        (DriveRole::CloudInit, None) => ("initialization.interface".to_owned(), Kind::Text),
        (DriveRole::Cdrom, Some("volume")) => ("cdrom.file_id".to_owned(), Kind::Text),
        (DriveRole::Cdrom, Some(_)) => return None,
        (DriveRole::Cdrom, None) => ("cdrom.interface".to_owned(), Kind::Text),
    })
}

/// The attribute a drive's key itself stands for (`disk[scsi0].interface = "scsi0"`).
pub(crate) fn drive_interface(key: &str, value: &str) -> Option<(String, String)> {
    if !is_drive(key) || key == "efidisk0" || key == "tpmstate0" {
        return None;
    }
    let (path, _) = path_of(key, None, Some(value))?;
    let path = if path.ends_with(".interface") {
        path
    } else {
        format!("{path}.interface")
    };
    Some((path, key.to_owned()))
}

fn field_name(field: &str) -> &str {
    match field {
        "host" => "id",
        "romfile" => "rom_file",
        "x-vga" => "xvga",
        "dirid" => "mapping",
        "direct-io" => "direct_io",
        "expose-acl" => "expose_acl",
        "expose-xattr" => "expose_xattr",
        "max_bytes" | "period" => field,
        other => other,
    }
}

fn field_kind(field: &str) -> Kind {
    match field {
        "enabled" | "pcie" | "rombar" | "x-vga" | "usb3" | "full" | "direct-io" | "expose-acl"
        | "expose-xattr" => Kind::Bool,
        "memory" | "max_bytes" | "period" | "order" | "vmid" => Kind::Number,
        _ => Kind::Text,
    }
}

fn plain_path(key: &str) -> (String, Kind) {
    let (path, kind) = match key {
        "cores" => ("cpu.cores", Kind::Number),
        "sockets" => ("cpu.sockets", Kind::Number),
        "vcpus" => ("cpu.hotplugged", Kind::Number),
        "cpulimit" => ("cpu.limit", Kind::Number),
        "cpuunits" => ("cpu.units", Kind::Number),
        "numa" => ("cpu.numa", Kind::Bool),
        "affinity" => ("cpu.affinity", Kind::Text),
        "cpu" => ("cpu.type", Kind::Text),
        "memory" => ("memory.dedicated", Kind::Number),
        "balloon" => ("memory.floating", Kind::Number),
        "hugepages" => ("memory.hugepages", Kind::Text),
        "keephugepages" => ("memory.keep_hugepages", Kind::Bool),
        "keyboard" => ("keyboard_layout", Kind::Text),
        "scsihw" => ("scsi_hardware", Kind::Text),
        "tablet" => ("tablet_device", Kind::Bool),
        "onboot" => ("on_boot", Kind::Bool),
        "ostype" => ("operating_system.type", Kind::Text),
        "hookscript" => ("hook_script_file_id", Kind::Text),
        "pool" => ("pool_id", Kind::Text),
        "node" => ("node_name", Kind::Text),
        "vmid" => ("vm_id", Kind::Number),
        "tags" => ("tags", Kind::List(';')),
        "nameserver" => ("initialization.dns.servers", Kind::List(' ')),
        "searchdomain" => ("initialization.dns.domain", Kind::Text),
        "ciuser" => ("initialization.user_account.username", Kind::Text),
        "cipassword" => ("initialization.user_account.password", Kind::Text),
        "sshkeys" => ("initialization.user_account.keys", Kind::List('\n')),
        "citype" => ("initialization.type", Kind::Text),
        "ciupgrade" => ("initialization.upgrade", Kind::Bool),
        "agent" => ("agent.enabled", Kind::Bool),
        "acpi" | "protection" | "template" | "started" => (key, Kind::Bool),
        _ => (key, Kind::Text),
    };
    (path.to_owned(), kind)
}

fn net_path(index: u32, field: Option<&str>) -> (String, Kind) {
    let nic = format!("network_device[{index}]");
    let (name, kind) = match field {
        None => return (nic, Kind::Text),
        Some("macaddr") => ("mac_address", Kind::Text),
        Some("rate") => ("rate_limit", Kind::Number),
        Some("tag") => ("vlan_id", Kind::Number),
        Some(f @ ("mtu" | "queues")) => (f, Kind::Number),
        Some("firewall") => ("firewall", Kind::Bool),
        Some("link_down") => ("disconnected", Kind::Bool),
        Some(other) => (other, Kind::Text),
    };
    (format!("{nic}.{name}"), kind)
}

fn drive_path(key: &str, field: Option<&str>) -> (String, Kind) {
    let base = match key {
        "efidisk0" => "efi_disk".to_owned(),
        "tpmstate0" => "tpm_state".to_owned(),
        _ => format!("disk[{key}]"),
    };
    let (name, kind) = match field {
        None => return (base, Kind::Text),
        Some("volume") => ("datastore_id", Kind::Storage),
        Some("size") => ("size", Kind::Gigabytes),
        Some("efitype") => ("type", Kind::Text),
        Some("pre-enrolled-keys") => ("pre_enrolled_keys", Kind::Bool),
        Some(f @ ("backup" | "iothread" | "replicate" | "ssd")) => (f, Kind::Bool),
        Some("iops_rd") => ("speed.iops_read", Kind::Number),
        Some("iops_rd_max") => ("speed.iops_read_burstable", Kind::Number),
        Some("iops_wr") => ("speed.iops_write", Kind::Number),
        Some("iops_wr_max") => ("speed.iops_write_burstable", Kind::Number),
        Some("mbps_rd") => ("speed.read", Kind::Number),
        Some("mbps_rd_max") => ("speed.read_burstable", Kind::Number),
        Some("mbps_wr") => ("speed.write", Kind::Number),
        Some("mbps_wr_max") => ("speed.write_burstable", Kind::Number),
        Some(other) => (other, Kind::Text),
    };
    (format!("{base}.{name}"), kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nic_as_sent_equals_the_nic_as_qemu_server_stores_it() {
        let sent = "model=virtio,bridge=vmbr0,firewall=0,macaddr=bc:24:11:00:00:01";
        let stored = "virtio=BC:24:11:00:00:01,bridge=vmbr0";
        assert_eq!(normalize("net0", sent), normalize("net0", stored));
        assert_ne!(
            normalize("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0,tag=5"),
            normalize("net0", stored)
        );
    }

    #[test]
    fn drive_defaults_and_the_cloud_init_volume_name_do_not_count() {
        let sent = "local-lvm:vm-100-disk-0,aio=io_uring,backup=1,iothread=0,ssd=0,discard=ignore,cache=none,replicate=1,size=8G";
        let stored = "local-lvm:vm-100-disk-0,size=8G";
        assert_eq!(normalize("scsi0", sent), normalize("scsi0", stored));
        assert_eq!(
            normalize("ide2", "local-lvm:cloudinit"),
            normalize("ide2", "local-lvm:vm-100-cloudinit,media=cdrom,size=4M")
        );
    }

    #[test]
    fn ssh_keys_compare_decoded() {
        assert_eq!(
            normalize("sshkeys", "ssh-ed25519%20AAAA%20me%0A"),
            "ssh-ed25519 AAAA me"
        );
    }

    #[test]
    fn qemu_keys_map_to_the_bpg_paths_users_write() {
        assert_eq!(path("cpuunits", None).0, "cpu.units");
        assert_eq!(path("serial0", None).0, "serial_device[0].device");
        assert_eq!(path("net1", Some("tag")).0, "network_device[1].vlan_id");
        assert_eq!(path("scsi0", Some("size")).0, "disk[scsi0].size");
        assert_eq!(path("cpu", Some("cputype")).0, "cpu.type");
        assert_eq!(path("vga", Some("type")).0, "vga.type");
        assert_eq!(path("smbios1", Some("serial")).0, "smbios.serial");
        assert_eq!(path("clone", Some("vmid")).0, "clone.vm_id");
        assert_eq!(
            path("ipconfig0", Some("gw")).0,
            "initialization.ip_config[0].ipv4.gateway"
        );
    }
}
