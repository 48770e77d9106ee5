//! A node's network interfaces: bpg's arguments of `proxmox_network_linux_bridge`, `_vlan`
//! and `_bond` as PVE's parameters, and what an interface that sets no value for a parameter
//! asks for. An optional argument bpg deletes when it is unset (`cidr`, `gateway`, `mtu`,
//! `comments`, ...) is an empty value here, which apply sends as `delete`.

use std::collections::BTreeMap;

use super::object::Conv::{self, Flag, Number, Text, Words};
use crate::proxmox::types::{ObjectId, ObjectKind};

type Params = &'static [(&'static str, &'static str, Conv)];

/// What every interface takes.
macro_rules! common {
    ($($extra:expr),* $(,)?) => {
        &[
            ("address", "cidr", Text),
            ("gateway", "gateway", Text),
            ("address6", "cidr6", Text),
            ("gateway6", "gateway6", Text),
            ("autostart", "autostart", Flag),
            ("mtu", "mtu", Number),
            ("comment", "comments", Text),
            $($extra),*
        ]
    };
}

pub(super) const BRIDGE: Params = common!(
    ("ports", "bridge_ports", Words),
    ("vlan_aware", "bridge_vlan_aware", Flag),
    ("vids", "bridge_vids", Text),
);

pub(super) const VLAN: Params = common!(
    ("interface", "vlan-raw-device", Text),
    ("vlan", "vlan-id", Number),
);

pub(super) const BOND: Params = common!(
    ("slaves", "slaves", Words),
    ("bond_mode", "bond_mode", Text),
    ("bond_primary", "bond-primary", Text),
    ("bond_xmit_hash_policy", "bond_xmit_hash_policy", Text),
);

/// The optional arguments bpg computes when they are unset (unknown at plan): left as PVE
/// has them.
pub(super) const COMPUTED: &[&str] = &["vlan_aware", "vids", "interface", "vlan", "bond_mode"];

/// The parameters bpg deletes when their argument is unset.
const CLEARED: &[&str] = &[
    "cidr",
    "cidr6",
    "gateway",
    "gateway6",
    "mtu",
    "comments",
    "bond-primary",
    "bond_xmit_hash_policy",
];

/// Completes an interface's parameters: the unset ones bpg deletes are empty, a bridge that
/// is not VLAN aware asks for `bridge_vlan_aware` to be absent (PVE takes any value it is
/// sent, `0` too, as "yes"), and a VLAN's name, raw device and id must agree as PVE needs.
pub(super) fn finish(id: &ObjectId, fields: &mut BTreeMap<String, String>) -> Result<(), String> {
    for key in CLEARED {
        if id.kind == ObjectKind::LinuxBond || !key.starts_with("bond") {
            fields.entry((*key).to_owned()).or_default();
        }
    }
    if fields.get("bridge_vlan_aware").map(String::as_str) == Some("0") {
        fields.insert("bridge_vlan_aware".to_owned(), String::new());
    }
    if id.kind == ObjectKind::LinuxVlan {
        vlan_names(id.name.as_deref().unwrap_or_default(), fields)?;
    }
    Ok(())
}

/// `name.N` says its raw device and id; `vlanN` its id; any other name needs `interface` and
/// `vlan` (PVE: "missing vlan-raw-device option", "missing vlan-id option").
fn vlan_names(name: &str, fields: &BTreeMap<String, String>) -> Result<(), String> {
    let dotted = name.rsplit_once('.').filter(|(dev, id)| {
        !dev.is_empty() && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
    });
    if let Some((dev, tag)) = dotted {
        for (key, arg, said) in [
            ("vlan-raw-device", "interface", dev),
            ("vlan-id", "vlan", tag),
        ] {
            if fields.get(key).is_some_and(|v| v != said) {
                return Err(format!(
                    "{arg} = {:?} disagrees with the name {name:?}, which says {said}; \
                     set neither {arg} nor vlan with a name like eno1.20",
                    fields[key]
                ));
            }
        }
        return Ok(());
    }
    if !fields.contains_key("vlan-raw-device") {
        return Err(format!(
            "interface is required: {name:?} is not of the form <device>.<vlan id>, so \
             Proxmox VE needs the raw device (e.g. interface = \"eno1\")"
        ));
    }
    let numbered = name
        .strip_prefix("vlan")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !numbered && !fields.contains_key("vlan-id") {
        return Err(format!(
            "vlan is required: {name:?} does not say its VLAN id, so Proxmox VE needs it \
             (e.g. vlan = 20)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::types::Scope;

    fn vlan(name: &str) -> ObjectId {
        let node = "pve".parse().expect("a node");
        ObjectId::new(ObjectKind::LinuxVlan, Scope::Node { node }, Some(name)).expect("a name")
    }

    #[test]
    fn a_vlan_needs_its_raw_device_and_id_unless_its_name_says_them() {
        let mut fields = BTreeMap::new();
        assert!(finish(&vlan("eno1.20"), &mut fields).is_ok());
        assert_eq!(fields["cidr"], "", "unset is deleted");
        let err = finish(&vlan("vlan_lab"), &mut BTreeMap::new()).expect_err("no device");
        assert!(err.starts_with("interface is required"), "{err}");
        let mut fields = BTreeMap::from([("vlan-raw-device".to_owned(), "eno1".to_owned())]);
        let err = finish(&vlan("vlan_lab"), &mut fields).expect_err("no id");
        assert!(err.starts_with("vlan is required"), "{err}");
        let mut fields = BTreeMap::from([("vlan-raw-device".to_owned(), "eno1".to_owned())]);
        assert!(finish(&vlan("vlan20"), &mut fields).is_ok());
        let mut fields = BTreeMap::from([("vlan-id".to_owned(), "30".to_owned())]);
        assert!(finish(&vlan("eno1.20"), &mut fields).is_err());
    }
}
