//! QEMU config updates as qemu-server makes them: every change is written to the pending
//! section first, then `vmconfig_hotplug_pending` (running VM) applies what it can live, and
//! `vmconfig_apply_pending` (stopped VM, or a full stop+start) applies the rest. Each rule below
//! names the qemu-server function it comes from. Also `netN` parsing and printing
//! (`PVE::QemuServer::Network::parse_net`/`print_net`). It must not allocate or free volumes.

use std::collections::BTreeSet;

use super::conf::Conf;
use super::model::GuestEvent;
use super::propstr;

use super::qemu_net::net_change;
pub(crate) use super::qemu_net::{net_mac, normalize_new, print_net};

/// `$fast_plug_option` in `vmconfig_hotplug_pending`: written at once, even while running.
const FASTPLUG: &[&str] = &[
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
    "ciuser",
    "cipassword",
    "citype",
    "ciupgrade",
    "cicustom",
    "nameserver",
    "searchdomain",
    "sshkeys",
];

pub(crate) fn is_net(key: &str) -> bool {
    key.strip_prefix("net")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

fn is_disk(key: &str) -> bool {
    ["scsi", "virtio", "sata", "ide", "efidisk", "tpmstate"]
        .iter()
        .any(|p| {
            key.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
}

/// The `hotplug` features in effect (`network,disk,usb` by default; `1` = that; `0` = none).
fn hotplug_features(conf: &Conf) -> BTreeSet<String> {
    let text = conf
        .main
        .get("hotplug")
        .map_or("network,disk,usb", String::as_str);
    match text {
        "1" => ["network", "disk", "usb"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        "0" => BTreeSet::new(),
        t => propstr::split_list(t).into_iter().collect(),
    }
}

/// Applies a QEMU config update: `set` values and `delete` keys, hot or pending per 3c.
pub(crate) fn update(
    conf: &mut Conf,
    running: bool,
    set: &[(String, String)],
    delete: &[String],
) -> Vec<GuestEvent> {
    queue(conf, set, delete);
    let features = hotplug_features(conf);
    let mut events = Vec::new();
    for key in conf.pending_delete().into_keys() {
        if !running || FASTPLUG.contains(&key.as_str()) || hot_delete(&key, conf, &features) {
            // `vmconfig_delete_or_detach_drive`: a detached volume is kept as `unusedN`
            if let Some(old) = conf.main.remove(&key) {
                detach(conf, &key, &old, None);
            }
            conf.remove_from_pending_delete(&key);
            let applied = if running {
                GuestEvent::HotApplied(key)
            } else {
                GuestEvent::PendingApplied(key)
            };
            events.push(applied);
        }
    }
    let keys: Vec<String> = conf
        .pending
        .keys()
        .filter(|k| *k != "delete")
        .cloned()
        .collect();
    for key in keys {
        let Some(value) = conf.pending.get(&key).cloned() else {
            continue;
        };
        let event = if !running {
            Some(GuestEvent::PendingApplied(key.clone()))
        } else if FASTPLUG.contains(&key.as_str()) || key.starts_with("ipconfig") {
            Some(GuestEvent::Written(key.clone()))
        } else {
            hot_set(&key, conf, &value, &features)
        };
        if let Some(event) = event {
            conf.pending.remove(&key);
            if let Some(old) = conf.main.insert(key.clone(), value.clone()) {
                detach(conf, &key, &old, Some(&value));
            }
            events.push(event);
        }
    }
    events
}

/// `vmconfig_register_unused_drive`: a disk volume a drive key no longer points at (removed,
/// or replaced by another volume) becomes `unusedN`; CD-ROMs and cloud-init drives do not.
fn detach(conf: &mut Conf, key: &str, old: &str, new: Option<&str>) {
    if !is_disk(key) {
        return;
    }
    let Ok(props) = super::qemu_drive::parse(old) else {
        return;
    };
    let file = props.get("file").cloned().unwrap_or_default();
    let same = new
        .and_then(|n| super::qemu_drive::parse(n).ok())
        .is_some_and(|n| n.get("file") == Some(&file));
    if !same && !super::qemu_drive::is_cdrom(&props) && file.contains(':') {
        super::volumes::add_unused(conf, &file);
    }
}

/// Everything goes to pending first (NICs without a MAC get one), then `cleanup_pending`.
fn queue(conf: &mut Conf, set: &[(String, String)], delete: &[String]) {
    for key in delete {
        conf.add_to_pending_delete(key);
    }
    for (key, value) in set {
        // `update_vm`: `parse_net` + `print_net` (a MAC for a NIC that has none)
        let value = if is_net(key) {
            print_net(value, false)
        } else {
            value.clone()
        };
        conf.pending.insert(key.clone(), value);
        conf.remove_from_pending_delete(key);
    }
    conf.cleanup_pending();
}

/// `vmconfig_hotplug_pending`, the pending-delete loop: which removals apply live.
fn hot_delete(key: &str, conf: &Conf, features: &BTreeSet<String>) -> bool {
    match key {
        // `$cgroup->change_cpu_shares(undef)` / `change_cpu_quota(undef, undef)`
        "cpuunits" | "cpulimit" => true,
        // reset to `memory`, unless the balloon device is disabled (`balloon: 0`)
        "balloon" => conf.main.get("balloon").is_none_or(|b| b != "0"),
        // toggling cpu/memory hotplug needs a restart
        "hotplug" => conf
            .main
            .get("hotplug")
            .is_none_or(|h| !h.contains("cpu") && !h.contains("memory")),
        "tablet" => features.contains("usb"),
        "vcpus" => features.contains("cpu"),
        "memory" => features.contains("memory"),
        k if k.starts_with("usb") => usb_hotplug(conf, features),
        k if is_net(k) => features.contains("network"),
        k if is_disk(k) => {
            features.contains("disk")
                && !["efidisk", "ide", "sata", "tpmstate"]
                    .iter()
                    .any(|p| k.starts_with(p))
        }
        _ => false,
    }
}

/// `$is_usb_hotplug_supported`: the `usb` feature, machine >= 7.1 (always, here) and an
/// `ostype` of `l26` or Windows newer than 7.
fn usb_hotplug(conf: &Conf, features: &BTreeSet<String>) -> bool {
    features.contains("usb")
        && conf
            .main
            .get("ostype")
            .is_some_and(|o| matches!(o.as_str(), "l26" | "win8" | "win10" | "win11"))
}

/// `vmconfig_hotplug_pending`, the add/change loop: which new values apply live.
fn hot_set(key: &str, conf: &Conf, new: &str, features: &BTreeSet<String>) -> Option<GuestEvent> {
    let hot = |yes: bool| yes.then(|| GuestEvent::HotApplied(key.to_owned()));
    let old = conf.main.get(key).map(String::as_str);
    match key {
        // `change_cpu_shares` / `change_cpu_quota` on the VM's cgroup: always live
        "cpuunits" | "cpulimit" => hot(true),
        // enabling or disabling the balloon device is not hotpluggable; a new target is
        "balloon" => hot(old.is_none_or(|b| b != "0") == (new != "0")),
        // `hotplug` itself: pending when cpu or memory hotplug is turned on or was on
        "hotplug" => hot(!new.contains("cpu")
            && !new.contains("memory")
            && old.is_none_or(|h| !h.contains("cpu") && !h.contains("memory"))),
        // `qemu_memory_hotplug` (DIMMs; needs NUMA in PVE) only with the `memory` feature
        "memory" => hot(features.contains("memory")),
        // `qemu_cpu_hotplug` only with the `cpu` feature
        "vcpus" => hot(features.contains("cpu")),
        // `vm_deviceplug` of the tablet only with the `usb` feature
        "tablet" => hot(features.contains("usb")),
        k if k.starts_with("usb") => hot(usb_hotplug(conf, features)),
        // `vmconfig_update_agent`: only `fstrim_cloned_disks` changes live
        "agent" => hot(old.is_some_and(|o| agent_core(o) == agent_core(new))),
        k if is_net(k) => net_change(key, old, new, features),
        // efidisk0/tpmstate0 always pending; the rest per `vmconfig_update_disk`
        "efidisk0" | "tpmstate0" => None,
        k if is_disk(k) => disk_change(key, old, new, features),
        _ => None,
    }
}

/// The agent options other than `fstrim_cloned_disks`, for `vmconfig_update_agent`.
fn agent_core(value: &str) -> propstr::Props {
    let mut p = propstr::parse(value, Some("enabled")).unwrap_or_default();
    p.remove("fstrim_cloned_disks");
    p
}

/// `vmconfig_update_disk`: a CD-ROM medium change and throttle changes on the same volume are
/// live on any bus; aio/discard/iothread/queues/product/cache/ssd/vendor/ro changes stay
/// pending; a new or replaced volume needs the `disk` feature and a bus other than ide/sata.
fn disk_change(
    key: &str,
    old: Option<&str>,
    new: &str,
    features: &BTreeSet<String>,
) -> Option<GuestEvent> {
    let hot = |yes: bool| yes.then(|| GuestEvent::HotApplied(key.to_owned()));
    let b = super::qemu_drive::parse(new).unwrap_or_default();
    if let Some(a) = old.and_then(|o| super::qemu_drive::parse(o).ok()) {
        if super::qemu_drive::is_cdrom(&a) != super::qemu_drive::is_cdrom(&b) {
            return None; // "unable to change media type"
        }
        if super::qemu_drive::is_cdrom(&a) {
            return hot(true); // `change_medium`
        }
        if a.get("file") == b.get("file") {
            let cold = [
                "aio", "discard", "iothread", "queues", "product", "cache", "ssd", "vendor", "ro",
            ];
            return hot(!cold.iter().any(|k| a.get(*k) != b.get(*k)));
        }
    }
    let bus_ok = !key.starts_with("ide") && !key.starts_with("sata");
    hot(features.contains("disk") && bus_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running_vm() -> Conf {
        let mut c = Conf::default();
        c.main.insert("cores".to_owned(), "2".to_owned());
        c.main.insert(
            "net0".to_owned(),
            "virtio=BC:24:11:00:00:01,bridge=vmbr0".to_owned(),
        );
        c
    }

    #[test]
    fn cpuunits_is_hot_on_a_running_vm() {
        let mut c = running_vm();
        update(
            &mut c,
            true,
            &[("cpuunits".to_owned(), "200".to_owned())],
            &[],
        );
        assert!(c.pending.is_empty());
        assert_eq!(c.main.get("cpuunits").map(String::as_str), Some("200"));
    }

    #[test]
    fn serial_and_cores_stay_pending_on_a_running_vm() {
        let mut c = running_vm();
        update(
            &mut c,
            true,
            &[
                ("serial0".to_owned(), "socket".to_owned()),
                ("cores".to_owned(), "4".to_owned()),
            ],
            &[],
        );
        assert_eq!(c.pending.keys().collect::<Vec<_>>(), ["cores", "serial0"]);
    }

    #[test]
    fn memory_needs_the_memory_hotplug_feature() {
        let mut c = running_vm();
        update(
            &mut c,
            true,
            &[("memory".to_owned(), "4096".to_owned())],
            &[],
        );
        assert!(c.pending.contains_key("memory"));
        let mut c = running_vm();
        c.main
            .insert("hotplug".to_owned(), "network,disk,memory".to_owned());
        update(
            &mut c,
            true,
            &[("memory".to_owned(), "4096".to_owned())],
            &[],
        );
        assert!(!c.pending.contains_key("memory"));
    }

    #[test]
    fn qemu_nic_mac_is_found_after_the_model() {
        assert_eq!(
            net_mac("virtio=BC:24:11:AA:BB:CC,bridge=vmbr0").as_deref(),
            Some("BC:24:11:AA:BB:CC")
        );
    }
}
