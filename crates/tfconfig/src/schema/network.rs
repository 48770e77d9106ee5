//! A node's network interfaces (bpg/proxmox, plugin framework): Linux bridges, VLANs and
//! bonds, under bpg's short names (`proxmox_network_linux_*`) and, for bridges and VLANs, the
//! long names bpg deprecated (`proxmox_virtual_environment_network_linux_*`). Defaults and
//! validators are those of bpg's `fwprovider/nodes/network`.

use super::builders::*;
use super::{AttrSchema, BodySchema, Check, ResourceSchema};

/// The resource types of this family, every name bpg registers.
pub(super) const NAMES: &[&str] = &[
    "proxmox_network_linux_bridge",
    "proxmox_virtual_environment_network_linux_bridge",
    "proxmox_network_linux_vlan",
    "proxmox_virtual_environment_network_linux_vlan",
    "proxmox_network_linux_bond",
];

/// The schema of one of [`NAMES`].
pub(super) fn resource(type_name: &'static str) -> Option<ResourceSchema> {
    let attrs = match type_name.rsplit('_').next()? {
        "bridge" => bridge(),
        "vlan" => vlan(),
        "bond" if type_name == "proxmox_network_linux_bond" => bond(),
        _ => return None,
    };
    NAMES.contains(&type_name).then_some(ResourceSchema {
        type_name,
        body: BodySchema {
            attrs,
            blocks: vec![],
        },
        generated: false,
    })
}

/// What every interface takes (`id`, `node_name`, addresses, `autostart`, `mtu`, `comment`,
/// `timeout_reload`), and its `name` with bpg's validator.
fn common(name: AttrSchema) -> Vec<AttrSchema> {
    vec![
        ro("id", s()),
        req("node_name", s()),
        fnew(name),
        opt("address", s()),
        opt("gateway", s()),
        opt("address6", s()),
        opt("gateway6", s()),
        db("autostart", true),
        opt("mtu", n()),
        opt("comment", s()),
        checked(dn("timeout_reload", 100.0), Check::AtLeast(5.0)),
    ]
}

fn bridge() -> Vec<AttrSchema> {
    let name = checked(
        req("name", s()),
        Check::Matches {
            pattern: r"^[A-Za-z][A-Za-z0-9_]{0,9}$",
            expected: "only letters, numbers, and underscores (_), start with a letter, and be \
                       no longer than 10 characters",
        },
    );
    let mut attrs = common(name);
    attrs.extend([
        opt("ports", ls()),
        oc("vlan_aware", b()),
        checked(
            oc("vids", s()),
            Check::Matches {
                pattern: r"^\d+(-\d+)?( \d+(-\d+)?)*$",
                expected: "a space-separated list of VLAN IDs or ranges (e.g. \"1 20 130\" or \
                           \"2-4094\")",
            },
        ),
    ]);
    attrs
}

fn vlan() -> Vec<AttrSchema> {
    let name = checked(
        req("name", s()),
        Check::Matches {
            pattern: r"^.{3,}$",
            expected: "at least 3 characters long",
        },
    );
    let mut attrs = common(name);
    attrs.extend([oc("interface", s()), oc("vlan", n())]);
    attrs
}

fn bond() -> Vec<AttrSchema> {
    let name = checked(
        req("name", s()),
        Check::Matches {
            pattern: r"^[A-Za-z][A-Za-z0-9]{0,9}$",
            expected: "an alphanumeric string that starts with a character and is at most 10 \
                       characters long",
        },
    );
    let mut attrs = common(name);
    attrs.extend([
        req("slaves", ls()),
        checked(
            oc("bond_mode", s()),
            Check::OneOf(&[
                "balance-rr",
                "active-backup",
                "balance-xor",
                "broadcast",
                "802.3ad",
                "balance-tlb",
                "balance-alb",
            ]),
        ),
        opt("bond_primary", s()),
        checked(
            opt("bond_xmit_hash_policy", s()),
            Check::OneOf(&["layer2", "layer2+3", "layer3+4"]),
        ),
    ]);
    attrs
}
