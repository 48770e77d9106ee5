//! A node's network interfaces (Linux bridges, VLANs, bonds): what a change does to traffic
//! and whose traffic it is. Everything is written to `/etc/network/interfaces.new` and applied
//! by one reload per node; a change that can cut a bridge's traffic (its ports, VLAN
//! awareness, addresses, a lower MTU, autostart off, a VLAN's raw device or id, a bond's
//! slaves or mode, deleting the interface) is `link-reset`; a comment, a higher MTU or
//! autostart on is `live`. The change names the bridges it reaches (itself; for a VLAN or a
//! bond, the bridges it is a port of and the bridge it is a VLAN of) and the guests whose
//! NICs use them, from the inventory.

use std::collections::BTreeSet;

use super::change::ResourceChange;
use super::effect::Effect;
use super::model::{Inventory, LiveObject};
use crate::proxmox::types::{GuestKind, ObjectId, ObjectKind};

/// What PVE reports for a flag its file does not set: an interface without `auto` does not
/// start on boot. (A bridge that is not VLAN aware is asked for as an empty value: PVE takes
/// any `bridge_vlan_aware` it is sent, `0` too, as "yes", so it is deleted instead.)
pub(super) fn pve_default(key: &str) -> Option<&'static str> {
    (key == "autostart").then_some("0")
}

/// What changing one parameter of an interface does to the traffic through it.
pub(super) fn field_effect(key: &str, before: Option<&str>, after: &str) -> Effect {
    let number = |v: Option<&str>| v.and_then(|v| v.parse::<u32>().ok());
    let cuts = match key {
        "comments" => false,
        // an interface no longer `auto` is taken down by `ifreload -a`
        "autostart" => after != "1",
        // a lower MTU drops the larger frames that flow today; unset is 1500
        "mtu" => number(Some(after)).unwrap_or(1500) < number(before).unwrap_or(1500),
        _ => true,
    };
    if cuts {
        Effect::LinkReset
    } else {
        Effect::Live
    }
}

/// The node's interfaces the inventory read, by name.
fn node_ifaces<'a>(id: &ObjectId, inventory: &'a Inventory) -> Vec<(&'a str, &'a LiveObject)> {
    let Some((prefix, _)) = id.collection() else {
        return Vec::new();
    };
    let prefix = format!("{prefix}/");
    inventory
        .objects
        .iter()
        .filter_map(|(path, live)| Some((path.strip_prefix(&prefix)?, live)))
        .filter(|(name, _)| !name.contains('/'))
        .collect()
}

fn words(value: Option<&String>) -> impl Iterator<Item = &str> {
    value.into_iter().flat_map(|v| v.split_whitespace())
}

/// The bridges whose traffic a change to `id` reaches: a bridge itself; a VLAN's or a bond's
/// bridges (those listing it as a port, as the cluster has them now or the configuration
/// wants them) and the bridge a VLAN is made on (`vmbr0.20`, `vlan-raw-device`).
pub(super) fn bridges_reached(
    id: &ObjectId,
    fields: &[&std::collections::BTreeMap<String, String>],
    inventory: &Inventory,
) -> Vec<String> {
    let Some(name) = id.name.as_deref() else {
        return Vec::new();
    };
    let ifaces = node_ifaces(id, inventory);
    let is_bridge = |n: &str| {
        ifaces.iter().any(|(i, live)| {
            *i == n && live.fields.get("type").map(String::as_str) == Some("bridge")
        })
    };
    let mut out = BTreeSet::new();
    if id.kind == ObjectKind::LinuxBridge {
        out.insert(name.to_owned());
        return out.into_iter().collect();
    }
    for (bridge, live) in &ifaces {
        if live.fields.get("type").map(String::as_str) == Some("bridge")
            && words(live.fields.get("bridge_ports")).any(|p| p == name)
        {
            out.insert((*bridge).to_owned());
        }
    }
    if id.kind == ObjectKind::LinuxVlan {
        let own = ifaces
            .iter()
            .find(|(i, _)| *i == name)
            .map(|(_, l)| &l.fields);
        let raw = fields
            .iter()
            .copied()
            .chain(own)
            .filter_map(|f| f.get("vlan-raw-device"))
            .map(String::as_str)
            .chain(name.rsplit_once('.').map(|(dev, _)| dev))
            .filter(|dev| !dev.is_empty());
        out.extend(raw.filter(|dev| is_bridge(dev)).map(str::to_owned));
    }
    out.into_iter().collect()
}

/// The bridge a guest's `netN` value plugs into.
pub(crate) fn nic_bridge(value: &str) -> Option<&str> {
    value
        .split(',')
        .find_map(|part| part.strip_prefix("bridge="))
}

/// The guests on the interface's node with a NIC on one of `bridges`: `CT 101`, `VM 102`.
fn users(id: &ObjectId, bridges: &[String], inventory: &Inventory) -> Vec<String> {
    let Some(node) = id.scope.node() else {
        return Vec::new();
    };
    inventory
        .guests
        .values()
        .filter(|g| g.node == node.as_str())
        .filter(|g| {
            let pending = g.pending.iter().filter_map(|p| {
                p.key
                    .starts_with("net")
                    .then_some(p.pending.as_deref())
                    .flatten()
            });
            g.config
                .iter()
                .filter(|(k, _)| k.starts_with("net"))
                .map(|(_, v)| v.as_str())
                .chain(pending)
                .filter_map(nic_bridge)
                .any(|b| bridges.iter().any(|x| x == b))
        })
        .map(|g| {
            let kind = match g.kind {
                GuestKind::Lxc => "CT",
                GuestKind::Qemu => "VM",
            };
            format!("{kind} {}", g.vm_id)
        })
        .collect()
}

/// Records on the change the bridges it reaches and says which guests use them.
pub(super) fn annotate(
    resource: &mut ResourceChange,
    id: &ObjectId,
    fields: &[&std::collections::BTreeMap<String, String>],
    inventory: &Inventory,
) {
    let bridges = bridges_reached(id, fields, inventory);
    let guests = users(id, &bridges, inventory);
    if !guests.is_empty() {
        let via = if id.kind == ObjectKind::LinuxBridge {
            String::new()
        } else {
            format!(" (through {})", bridges.join(", "))
        };
        resource
            .notes
            .push(format!("used by {}{via}", guests.join(", ")));
    }
    resource.bridges = bridges;
    if let Some(lines) = pending_lines(id, inventory) {
        let node = id.scope.node().map(ToString::to_string).unwrap_or_default();
        let note = format!(
            "node {node} has network changes written but not applied ({lines} changed lines in \
             /etc/network/interfaces.new); the reload after any interface change on it \
             applies them too: review them on the node (or revert them there) first"
        );
        if resource.is_no_op() {
            resource.drift.notes.push(note);
        } else {
            resource.notes.push(note);
        }
    }
}

/// The lines the node's pending network file changes, if any (see `inventory::network`).
fn pending_lines<'a>(id: &ObjectId, inventory: &'a Inventory) -> Option<&'a str> {
    let (base, _) = id.collection()?;
    inventory
        .objects
        .get(&base)?
        .fields
        .get("pending")
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_addresses_and_a_lower_mtu_cut_traffic_while_a_comment_does_not() {
        assert_eq!(field_effect("comments", Some("a"), "b"), Effect::Live);
        assert_eq!(
            field_effect("bridge_ports", Some("eno1"), "eno2"),
            Effect::LinkReset
        );
        assert_eq!(field_effect("cidr", None, "10.0.0.2/24"), Effect::LinkReset);
        assert_eq!(field_effect("mtu", None, "9000"), Effect::Live);
        assert_eq!(field_effect("mtu", Some("9000"), "1500"), Effect::LinkReset);
        assert_eq!(field_effect("mtu", Some("9000"), ""), Effect::LinkReset);
        assert_eq!(field_effect("autostart", Some("1"), "0"), Effect::LinkReset);
        assert_eq!(field_effect("autostart", None, "1"), Effect::Live);
        assert_eq!(field_effect("vlan-id", Some("20"), "30"), Effect::LinkReset);
    }

    #[test]
    fn a_guest_nic_names_its_bridge() {
        assert_eq!(nic_bridge("name=eth0,bridge=vmbr1,tag=20"), Some("vmbr1"));
        assert_eq!(
            nic_bridge("virtio=BC:24:11:00:00:01,bridge=vmbr0"),
            Some("vmbr0")
        );
        assert_eq!(nic_bridge("name=eth0"), None);
    }
}
