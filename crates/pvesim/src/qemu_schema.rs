//! qemu-server's configuration schema (`PVE::QemuServer` `$confdesc`, `$confdesc_cloudinit` and
//! the per-device formats): which keys exist, how a value is checked (PVE's JSONSchema
//! messages), and which keys only `root@pam` may set (`$check_vm_modify_config_perm`).
//! It must not decide hot or pending: that is `qemu`'s job.

use super::qemu_format::{
    check_agent, check_bool, check_boot_format, check_cpu, check_dns_name, check_enum,
    check_hotplug, check_int, check_ipconfig, check_machine, check_memory, check_number,
    check_tags, check_urlencoded, check_vga, check_vmgenid, indexed,
};
use super::{propstr, qemu_drive};

pub(crate) use super::qemu_format::check_ssh_keys;

const OSTYPES: &[&str] = &[
    "other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24",
    "l26", "solaris",
];
const SCSIHW: &[&str] = &[
    "lsi",
    "lsi53c810",
    "virtio-scsi-pci",
    "virtio-scsi-single",
    "megasas",
    "pvscsi",
];
const LOCKS: &[&str] = &[
    "backup",
    "clone",
    "create",
    "migrate",
    "rollback",
    "snapshot",
    "snapshot-delete",
    "suspending",
    "suspended",
];
const BOOLS: &[&str] = &[
    "onboot",
    "autostart",
    "reboot",
    "numa",
    "keephugepages",
    "acpi",
    "kvm",
    "tdf",
    "localtime",
    "freeze",
    "template",
    "tablet",
    "protection",
    "allow-ksm",
    "ciupgrade",
];
const STRINGS: &[&str] = &[
    "description",
    "args",
    "startup",
    "ciuser",
    "cipassword",
    "searchdomain",
    "nameserver",
    "cicustom",
    "hookscript",
    "vmstatestorage",
    "affinity",
    "amd-sev",
    "intel-tdx",
    "ivshmem",
    "spice_enhancements",
    "meta",
    "watchdog",
    "audio0",
    "rng0",
    "keyboard",
    "startdate",
    "vmstate",
    "parent",
    "runningmachine",
    "runningcpu",
    "running-nets-host-mtu",
    "bootdisk",
];

/// Keys `$check_vm_modify_config_perm` lets a non-root caller set (given the privilege); any
/// other key dies with `only root can set '<key>' config`.
const NON_ROOT: &[&str] = &[
    "cores",
    "cpu",
    "cpulimit",
    "cpuunits",
    "numa",
    "smp",
    "sockets",
    "vcpus",
    "memory",
    "balloon",
    "shares",
    "allow-ksm",
    "acpi",
    "hotplug",
    "kvm",
    "machine",
    "scsihw",
    "smbios1",
    "tablet",
    "vga",
    "watchdog",
    "audio0",
    "rng0",
    "agent",
    "autostart",
    "bios",
    "description",
    "keyboard",
    "localtime",
    "migrate_downtime",
    "migrate_speed",
    "name",
    "onboot",
    "ostype",
    "protection",
    "reboot",
    "startdate",
    "startup",
    "tdf",
    "template",
    "freeze",
    "boot",
    "bootdisk",
    "vmstatestorage",
    "cicustom",
    "cipassword",
    "citype",
    "ciuser",
    "ciupgrade",
    "nameserver",
    "searchdomain",
    "sshkeys",
    "tags",
    "cdrom",
    "vmstate",
];

/// Whether `key` is in qemu-server's config schema (`option_exists`).
pub(crate) fn exists(key: &str) -> bool {
    BOOLS.contains(&key)
        || STRINGS.contains(&key)
        || NON_ROOT.contains(&key)
        || matches!(key, "lock" | "arch" | "vmgenid" | "hugepages" | "snaptime")
        || qemu_drive::is_drive_key(key)
        || [
            ("net", 32),
            ("ipconfig", 32),
            ("numa", 8),
            ("virtiofs", 10),
            ("serial", 4),
            ("parallel", 3),
            ("hostpci", 16),
            ("usb", 14),
            ("unused", 256),
        ]
        .iter()
        .any(|(p, n)| indexed(key, p, *n))
}

/// `$check_vm_modify_config_perm` (plus the value-dependent serial/usb/hostpci checks of
/// `$check_vm_create_serial_perm`, `check_usb_perm`, `check_hostpci_perm`): the message a
/// non-root caller gets for `key`, if any.
pub(crate) fn root_only(key: &str, value: &str) -> Option<String> {
    let props = || propstr::parse(value, None).unwrap_or_default();
    if indexed(key, "serial", 4) {
        return (value != "socket")
            .then(|| format!("only root can set '{key}' config for real devices"));
    }
    if indexed(key, "usb", 14) {
        let host = props().get("host").cloned();
        return host
            .filter(|h| !h.eq_ignore_ascii_case("spice"))
            .map(|_| format!("only root can set '{key}' config for real devices"));
    }
    if indexed(key, "hostpci", 16) {
        let p = propstr::parse(value, Some("host")).unwrap_or_default();
        return p
            .contains_key("host")
            .then(|| format!("only root can set '{key}' config for non-mapped devices"));
    }
    let allowed = NON_ROOT.contains(&key)
        || qemu_drive::is_drive_key(key)
        || ["net", "ipconfig", "numa", "unused", "virtiofs"]
            .iter()
            .any(|p| indexed(key, p, 256));
    (!allowed).then(|| format!("only root can set '{key}' config"))
}

/// Checks one value; returns it as PVE stores it, or the JSONSchema error text.
pub(crate) fn check(key: &str, value: &str) -> Result<String, String> {
    let int = |min: i64, max: Option<i64>| check_int(value, min, max);
    match key {
        k if BOOLS.contains(&k) => check_bool(value),
        "cores" | "sockets" | "smp" | "vcpus" => int(1, None),
        "cpuunits" => int(1, Some(262_144)),
        "balloon" | "migrate_speed" | "snaptime" => int(0, None),
        "shares" => int(0, Some(50_000)),
        "cpulimit" => check_number(value, 0.0, 128.0),
        "migrate_downtime" => check_number(value, 0.0, f64::MAX),
        "memory" => check_memory(value),
        "cpu" => check_cpu(value),
        "scsihw" => check_enum(value, SCSIHW),
        "bios" => check_enum(value, &["seabios", "ovmf"]),
        "ostype" => check_enum(value, OSTYPES),
        "arch" => check_enum(value, &["x86_64", "aarch64"]),
        "lock" => check_enum(value, LOCKS),
        "hugepages" => check_enum(value, &["any", "2", "1024"]),
        "citype" => check_enum(value, &["configdrive2", "nocloud", "opennebula"]),
        "machine" => check_machine(value),
        "agent" => check_agent(value),
        "vga" => check_vga(value),
        "hotplug" => check_hotplug(value),
        "name" => check_dns_name(value),
        "tags" => check_tags(value),
        "sshkeys" => check_urlencoded(value),
        "vmgenid" => check_vmgenid(value),
        "boot" => check_boot_format(value),
        "smbios1" => Ok(value.to_owned()),
        k if indexed(k, "serial", 4) => {
            let ok = value == "socket"
                || value
                    .strip_prefix("/dev/")
                    .is_some_and(|d| !d.is_empty() && !d.contains(','));
            ok.then(|| value.to_owned())
                .ok_or_else(|| "value does not match the regex pattern".to_owned())
        }
        k if indexed(k, "ipconfig", 32) => check_ipconfig(value),
        k if indexed(k, "net", 32) => super::qemu::check_net(value),
        k if qemu_drive::is_drive_key(k) => qemu_drive::check(k, value),
        _ => Ok(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_below_one_and_unknown_cpu_types_are_refused() {
        assert_eq!(
            check("cores", "0"),
            Err("value must have a minimum value of 1".to_owned())
        );
        assert!(check("cpu", "x86-64-v2-AES").is_ok());
        assert!(check("cpu", "cputype=host,flags=+aes").is_ok());
        assert!(check("cpu", "pentium9").is_err_and(|e| e.contains("is not defined")));
    }

    #[test]
    fn args_and_hookscript_are_root_only_but_cores_are_not() {
        assert_eq!(
            root_only("args", "-no-reboot").as_deref(),
            Some("only root can set 'args' config")
        );
        assert!(root_only("hookscript", "local:snippets/h.pl").is_some());
        assert_eq!(root_only("cores", "2"), None);
        assert_eq!(root_only("serial0", "socket"), None);
        assert!(root_only("serial0", "/dev/ttyS0").is_some());
        assert!(root_only("hostpci0", "host=0000:01:00.0").is_some());
    }

    #[test]
    fn sshkeys_must_be_urlencoded() {
        assert!(check("sshkeys", "ssh-ed25519%20AAAA").is_ok());
        assert!(check("sshkeys", "ssh-ed25519 AAAA").is_err());
    }
}
