//! QEMU NICs (`PVE::QemuServer::Network`): `parse_net`/`print_net` with generated `BC:24:11`
//! MACs, and `vmconfig_update_net`'s rule for a running VM (the schema check of a `netN` value
//! is `api_schema::qemu`). It must not touch anything but one NIC value.

use std::collections::BTreeSet;

use super::conf::Conf;
use super::model::GuestEvent;
use super::propstr;
use super::qemu::is_net;

/// `$nic_model_list` (the schema's table).
pub(crate) use crate::api_schema::qemu_formats::NIC_MODELS as MODELS;

/// `parse_net` + `print_net`: `<model>=<MAC>` first (a random `BC:24:11` MAC if none, or a
/// new one with `new_mac`), then the other options sorted.
pub(crate) fn print_net(value: &str, new_mac: bool) -> String {
    let mut props = propstr::parse(value, Some("model")).unwrap_or_default();
    let model = props
        .remove("model")
        .or_else(|| {
            MODELS
                .iter()
                .find(|m| props.contains_key(**m))
                .map(|m| (*m).to_owned())
        })
        .unwrap_or_else(|| "virtio".to_owned());
    let mac = props.remove(&model).or_else(|| props.remove("macaddr"));
    props.remove("macaddr");
    let mac = match mac {
        Some(m) if !new_mac => m,
        _ => propstr::random_mac(),
    };
    let rest = propstr::print(&props, None, &[]);
    if rest.is_empty() {
        format!("{model}={mac}")
    } else {
        format!("{model}={mac},{rest}")
    }
}

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

pub(crate) fn with_mac(value: &str) -> String {
    let mut parts: Vec<String> = value.split(',').map(str::to_owned).collect();
    if let Some(first) = parts.first_mut()
        && MODELS.contains(&first.as_str())
    {
        *first = format!("{first}={}", propstr::random_mac());
    }
    parts.join(",")
}

/// `vmconfig_update_net`: bridge/tag/trunks/firewall/rate/link_down are always hot; a new NIC or
/// a model/MAC/queues/mtu change needs the `network` hotplug feature (unplug + plug).
pub(crate) fn net_change(
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
