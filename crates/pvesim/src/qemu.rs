//! QEMU guests, far enough for self-discovery (`netN` MACs, status) and qemu-server's
//! `vmconfig_hotplug_pending` rules (fast-plug keys, always-hot `cpuunits`/`cpulimit`/`balloon`,
//! the `hotplug` feature list gating network/disk/memory/cpu/usb, everything else pending).

use std::collections::BTreeSet;

use super::conf::Conf;
use super::model::GuestEvent;
use super::propstr;

const MODELS: &[&str] = &[
    "virtio", "e1000", "e1000e", "rtl8139", "vmxnet3", "ne2k_pci", "pcnet", "i82551", "i82557b",
    "i82559er",
];

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

/// The MAC of a QEMU `netN` value (`virtio=BC:24:11:..,bridge=vmbr0` or `macaddr=`).
pub(crate) fn net_mac(value: &str) -> Option<String> {
    let props = propstr::parse(value, None).ok()?;
    MODELS
        .iter()
        .find_map(|m| props.get(*m).cloned())
        .or_else(|| props.get("macaddr").cloned())
}

/// Gives every `netN` without a MAC a generated one (`model=MAC`), like qemu-server on create.
pub(crate) fn normalize_new(conf: &mut Conf) {
    let nets: Vec<String> = conf.main.keys().filter(|k| is_net(k)).cloned().collect();
    for key in nets {
        if let Some(value) = conf.main.get(&key).cloned() {
            conf.main.insert(key, with_mac(&value));
        }
    }
}

fn with_mac(value: &str) -> String {
    let mut parts: Vec<String> = value.split(',').map(str::to_owned).collect();
    if let Some(first) = parts.first_mut()
        && MODELS.contains(&first.as_str())
    {
        *first = format!("{first}={}", propstr::random_mac());
    }
    parts.join(",")
}

fn is_net(key: &str) -> bool {
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
        if !running || FASTPLUG.contains(&key.as_str()) || hot_delete(&key, &features) {
            conf.main.remove(&key);
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
            hot_set(
                &key,
                conf.main.get(&key).map(String::as_str),
                &value,
                &features,
            )
        };
        if let Some(event) = event {
            conf.pending.remove(&key);
            conf.main.insert(key, value);
            events.push(event);
        }
    }
    events
}

/// Everything goes to pending first (NICs without a MAC get one), then `cleanup_pending`.
fn queue(conf: &mut Conf, set: &[(String, String)], delete: &[String]) {
    for key in delete {
        conf.add_to_pending_delete(key);
    }
    for (key, value) in set {
        let value = if is_net(key) && net_mac(value).is_none() {
            with_mac(value)
        } else {
            value.clone()
        };
        conf.pending.insert(key.clone(), value);
        conf.remove_from_pending_delete(key);
    }
    conf.cleanup_pending();
}

fn hot_delete(key: &str, features: &BTreeSet<String>) -> bool {
    match key {
        "cpuunits" | "cpulimit" | "balloon" => true,
        k if is_net(k) => features.contains("network"),
        k if is_disk(k) && !k.starts_with("ide") && !k.starts_with("sata") => {
            features.contains("disk")
        }
        k if k.starts_with("usb") => features.contains("usb"),
        _ => false,
    }
}

fn hot_set(
    key: &str,
    old: Option<&str>,
    new: &str,
    features: &BTreeSet<String>,
) -> Option<GuestEvent> {
    let hot = |feature: &str| {
        features
            .contains(feature)
            .then(|| GuestEvent::HotApplied(key.to_owned()))
    };
    match key {
        "cpuunits" | "cpulimit" | "balloon" => Some(GuestEvent::HotApplied(key.to_owned())),
        "memory" => hot("memory"),
        "vcpus" => hot("cpu"),
        k if is_net(k) => net_change(key, old, new, features),
        k if is_disk(k)
            && !["ide", "sata", "efidisk", "tpmstate"]
                .iter()
                .any(|p| k.starts_with(p)) =>
        {
            hot("disk")
        }
        k if k.starts_with("usb") || k == "tablet" => hot("usb"),
        _ => None,
    }
}

/// `vmconfig_update_net`: bridge/tag/trunks/firewall/rate/link_down are always hot; a new NIC or
/// a model/MAC/queues/mtu change needs the `network` hotplug feature (unplug + plug).
fn net_change(
    key: &str,
    old: Option<&str>,
    new: &str,
    features: &BTreeSet<String>,
) -> Option<GuestEvent> {
    let Some(old) = old else {
        return features
            .contains("network")
            .then(|| GuestEvent::LinkCreated(key.to_owned()));
    };
    let a = propstr::parse(old, None).unwrap_or_default();
    let b = propstr::parse(new, None).unwrap_or_default();
    let ident = |p: &propstr::Props| {
        let model = MODELS
            .iter()
            .find(|m| p.contains_key(**m))
            .copied()
            .unwrap_or_default();
        (
            model.to_owned(),
            net_mac(&propstr::print(p, None, &[])),
            p.get("queues").cloned(),
            p.get("mtu").cloned(),
        )
    };
    if ident(&a) != ident(&b) {
        return features
            .contains("network")
            .then(|| GuestEvent::LinkRecreated(key.to_owned()));
    }
    let replug = ["bridge", "tag", "trunks", "firewall", "link_down"]
        .iter()
        .any(|k| a.get(*k) != b.get(*k));
    Some(if replug {
        GuestEvent::LinkReplugged(key.to_owned())
    } else {
        GuestEvent::HotApplied(key.to_owned())
    })
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
