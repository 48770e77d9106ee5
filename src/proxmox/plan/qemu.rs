//! Effects of config changes on a QEMU guest (qemu-server `vmconfig_hotplug_pending` and
//! `vmconfig_update_net`; reference/proxmox.md section 3c). atoll manages containers, but it
//! may itself run in a VM, so the guard needs these rules for protected QEMU guests.

use super::effect::{Effect, Power};
use super::normalize::indexed;
use super::propstr::PropString;

/// Written to the config at once, in effect now (metadata).
const QEMU_FASTPLUG: &[&str] = &[
    "description",
    "hookscript",
    "lock",
    "migrate_downtime",
    "migrate_speed",
    "name",
    "onboot",
    "protection",
    "shares",
    "startup",
    "tags",
    "vmstatestorage",
];

/// Cloud-init keys: written at once, seen by the guest only after cloud-init regenerates.
const QEMU_CLOUD_INIT: &[&str] = &[
    "ciuser",
    "cipassword",
    "citype",
    "ciupgrade",
    "cicustom",
    "nameserver",
    "searchdomain",
    "sshkeys",
];

/// NIC models whose `model=MAC` field names the MAC address.
const NIC_MODELS: &[&str] = &["virtio", "e1000", "e1000e", "rtl8139", "vmxnet3"];

/// The `hotplug` option of a VM: which device classes it may hot-plug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hotplug {
    network: bool,
    disk: bool,
    usb: bool,
    memory: bool,
    cpu: bool,
}

impl Hotplug {
    /// Whether `feature` (`network`, `disk`, `usb`, `memory`, `cpu`) may be hot-plugged.
    pub fn has(&self, feature: &str) -> bool {
        match feature {
            "network" => self.network,
            "disk" => self.disk,
            "usb" => self.usb,
            "memory" => self.memory,
            "cpu" => self.cpu,
            _ => false,
        }
    }

    /// Parses PVE's `hotplug` value; absent means PVE's default `network,disk,usb`.
    pub fn parse(value: Option<&str>) -> Self {
        let value = match value.map(str::trim) {
            None | Some("1") => "network,disk,usb",
            Some("0") => "",
            Some(other) => other,
        };
        let has = |name: &str| value.split(',').any(|item| item.trim() == name);
        Self {
            network: has("network"),
            disk: has("disk"),
            usb: has("usb"),
            memory: has("memory"),
            cpu: has("cpu"),
        }
    }
}

/// The effect of changing QEMU key `key` (`field` set for one changed `netN` field; `None`
/// for a whole-key add, delete or plain change).
pub fn classify_qemu(key: &str, field: Option<&str>, power: Power, hotplug: &Hotplug) -> Effect {
    if power == Power::Stopped {
        return Effect::Deferred;
    }
    if QEMU_FASTPLUG.contains(&key) {
        return Effect::Live;
    }
    if QEMU_CLOUD_INIT.contains(&key) || indexed(key, "ipconfig").is_some() {
        return Effect::Deferred;
    }
    let hot = |enabled: bool, effect: Effect| if enabled { effect } else { Effect::Restart };
    if indexed(key, "net").is_some() {
        return match field {
            Some("bridge" | "tag" | "firewall" | "link_down") => Effect::LinkReset,
            Some("rate" | "trunks") => Effect::Live,
            // add/remove, model, MAC, queues, mtu: hot-unplug and replug when allowed
            _ => hot(hotplug.network, Effect::LinkReset),
        };
    }
    if is_disk(key) {
        let never_hot = ["ide", "sata"].iter().any(|p| indexed(key, p).is_some())
            || key == "efidisk0"
            || key == "tpmstate0";
        return if never_hot {
            Effect::Restart
        } else {
            hot(hotplug.disk, Effect::Live)
        };
    }
    if indexed(key, "usb").is_some() || key == "tablet" {
        return hot(hotplug.usb, Effect::Live);
    }
    match key {
        "cpuunits" | "cpulimit" | "balloon" => Effect::Live,
        // `vmconfig_hotplug_pending`: only the fstrim option of the agent changes live
        "agent" if field == Some("fstrim_cloned_disks") => Effect::Live,
        "memory" => hot(hotplug.memory, Effect::Live),
        "vcpus" => hot(hotplug.cpu, Effect::Live),
        _ => Effect::Restart,
    }
}

fn is_disk(key: &str) -> bool {
    ["scsi", "virtio", "ide", "sata", "unused"]
        .iter()
        .any(|p| indexed(key, p).is_some())
        || key == "efidisk0"
        || key == "tpmstate0"
}

/// The MAC address in a QEMU `netN` value (`virtio=BC:24:11:..,bridge=vmbr0`), uppercase.
pub fn qemu_mac(net: &str) -> Option<String> {
    let prop = PropString::parse(net, None);
    let mac = NIC_MODELS
        .iter()
        .find_map(|model| prop.get(model))
        .or_else(|| prop.get("macaddr"))?;
    Some(mac.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qemu_cpuunits_are_live_but_cores_and_serial_need_a_restart() {
        let hp = Hotplug::parse(None);
        assert_eq!(
            classify_qemu("cpuunits", None, Power::Running, &hp),
            Effect::Live
        );
        assert_eq!(
            classify_qemu("cores", None, Power::Running, &hp),
            Effect::Restart
        );
        assert_eq!(
            classify_qemu("serial0", None, Power::Running, &hp),
            Effect::Restart
        );
    }

    #[test]
    fn qemu_memory_is_live_only_with_memory_hotplug() {
        let default = Hotplug::parse(None);
        let with_memory = Hotplug::parse(Some("network,disk,memory"));
        assert_eq!(
            classify_qemu("memory", None, Power::Running, &default),
            Effect::Restart
        );
        assert_eq!(
            classify_qemu("memory", None, Power::Running, &with_memory),
            Effect::Live
        );
    }

    #[test]
    fn qemu_nic_changes_reset_the_link_or_restart_without_network_hotplug() {
        let none = Hotplug::parse(Some("0"));
        let default = Hotplug::parse(None);
        let run = Power::Running;
        assert_eq!(
            classify_qemu("net0", Some("bridge"), run, &none),
            Effect::LinkReset
        );
        assert_eq!(
            classify_qemu("net0", Some("virtio"), run, &default),
            Effect::LinkReset
        );
        assert_eq!(
            classify_qemu("net0", Some("virtio"), run, &none),
            Effect::Restart
        );
        assert_eq!(
            classify_qemu("net0", Some("rate"), run, &none),
            Effect::Live
        );
    }

    #[test]
    fn qemu_sata_disks_never_hotplug() {
        let hp = Hotplug::parse(None);
        assert_eq!(
            classify_qemu("scsi1", None, Power::Running, &hp),
            Effect::Live
        );
        assert_eq!(
            classify_qemu("sata1", None, Power::Running, &hp),
            Effect::Restart
        );
    }

    #[test]
    fn qemu_mac_is_read_from_the_model_field() {
        let net = "virtio=bc:24:11:aa:bb:cc,bridge=vmbr0,firewall=1";
        assert_eq!(qemu_mac(net).as_deref(), Some("BC:24:11:AA:BB:CC"));
    }
}
