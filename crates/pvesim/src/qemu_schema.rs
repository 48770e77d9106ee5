//! qemu-server's config keys as the API code sees them after the schema check
//! (`api_schema::qemu` checks the values): which keys exist (`option_exists`) and which only
//! `root@pam` may set (`$check_vm_modify_config_perm`).
//! It must not decide hot or pending: that is `qemu`'s job.

use super::qemu_format::indexed;
use super::{propstr, qemu_drive};

pub(crate) use super::qemu_format::check_ssh_keys;

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

/// Whether `key` is in qemu-server's config schema (`option_exists`): the table of
/// `api_schema::qemu`, plus the keys `json_config_properties` leaves out.
pub(crate) fn exists(key: &str) -> bool {
    crate::api_schema::qemu::config_prop(key).is_some()
        || matches!(
            key,
            "parent"
                | "snaptime"
                | "vmstate"
                | "meta"
                | "runningmachine"
                | "runningcpu"
                | "running-nets-host-mtu"
        )
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
