//! Schemas of bpg's SDN data sources (`fwprovider/cluster/sdn`): one zone of each type, the
//! zones, one vnet, the vnets and one subnet, under the short names and the long ones bpg
//! deprecated. What each reads is [`crate::data`]'s.

use std::collections::BTreeMap;

use super::builders::*;
use super::{AttrSchema, BodySchema};
use crate::types::{Constraint, ObjectAttr};

/// Every SDN data source, short names first.
pub(super) const NAMES: &[&str] = &[
    "proxmox_sdn_zone_simple",
    "proxmox_sdn_zone_vlan",
    "proxmox_sdn_zone_qinq",
    "proxmox_sdn_zone_vxlan",
    "proxmox_sdn_zone_evpn",
    "proxmox_sdn_zones",
    "proxmox_sdn_vnet",
    "proxmox_sdn_vnets",
    "proxmox_sdn_subnet",
    "proxmox_virtual_environment_sdn_zone_simple",
    "proxmox_virtual_environment_sdn_zone_vlan",
    "proxmox_virtual_environment_sdn_zone_qinq",
    "proxmox_virtual_environment_sdn_zone_vxlan",
    "proxmox_virtual_environment_sdn_zone_evpn",
    "proxmox_virtual_environment_sdn_zones",
    "proxmox_virtual_environment_sdn_vnet",
    "proxmox_virtual_environment_sdn_vnets",
    "proxmox_virtual_environment_sdn_subnet",
];

/// bpg's message on each long name (`migration.DeprecationMessage`).
const DEPRECATED: &[(&str, &str)] = &[
    (
        "zone_simple",
        "Use \"proxmox_sdn_zone_simple\" instead. This resource / data source will be removed in v1.0.",
    ),
    (
        "zone_vlan",
        "Use \"proxmox_sdn_zone_vlan\" instead. This resource / data source will be removed in v1.0.",
    ),
    (
        "zone_qinq",
        "Use \"proxmox_sdn_zone_qinq\" instead. This resource / data source will be removed in v1.0.",
    ),
    (
        "zone_vxlan",
        "Use \"proxmox_sdn_zone_vxlan\" instead. This resource / data source will be removed in v1.0.",
    ),
    (
        "zone_evpn",
        "Use \"proxmox_sdn_zone_evpn\" instead. This resource / data source will be removed in v1.0.",
    ),
    (
        "zones",
        "Use \"proxmox_sdn_zones\" instead. This resource / data source will be removed in v1.0.",
    ),
    (
        "vnet",
        "Use \"proxmox_sdn_vnet\" instead. This resource / data source will be removed in v1.0.",
    ),
    (
        "vnets",
        "Use \"proxmox_sdn_vnets\" instead. This resource / data source will be removed in v1.0.",
    ),
    (
        "subnet",
        "Use \"proxmox_sdn_subnet\" instead. This resource / data source will be removed in v1.0.",
    ),
];

fn set_of_strings() -> Constraint {
    Constraint::Set(Box::new(s()))
}

fn object_of(attrs: &[AttrSchema]) -> Constraint {
    let fields: BTreeMap<String, ObjectAttr> = attrs
        .iter()
        .map(|a| {
            let attr = ObjectAttr {
                ty: a.ty.clone(),
                optional: false,
                default: None,
            };
            (a.name.to_owned(), attr)
        })
        .collect();
    Constraint::Object(fields)
}

/// What a zone of `kind` reads, besides its `id`.
fn zone_read(kind: &str) -> Vec<AttrSchema> {
    let mut attrs = vec![
        ro("dns", s()),
        ro("dns_zone", s()),
        ro("ipam", s()),
        ro("mtu", n()),
        ro("nodes", set_of_strings()),
        ro("pending", b()),
        ro("reverse_dns", s()),
        ro("state", s()),
    ];
    match kind {
        "simple" => attrs.push(ro("dhcp", s())),
        "vlan" => attrs.push(ro("bridge", s())),
        "qinq" => attrs.extend([
            ro("bridge", s()),
            ro("service_vlan", n()),
            ro("service_vlan_protocol", s()),
        ]),
        "vxlan" => attrs.push(ro("peers", set_of_strings())),
        "evpn" => attrs.extend([
            ro("advertise_subnets", b()),
            ro("controller", s()),
            ro("disable_arp_nd_suppression", b()),
            ro("exit_nodes", set_of_strings()),
            ro("exit_nodes_local_routing", b()),
            ro("primary_exit_node", s()),
            ro("rt_import", s()),
            ro("vrf_vxlan", n()),
        ]),
        _ => {}
    }
    attrs
}

/// Every attribute any zone reads, for `zones`.
fn any_zone() -> Vec<AttrSchema> {
    let mut attrs = vec![ro("id", s()), ro("type", s())];
    for kind in ["simple", "vlan", "qinq", "vxlan", "evpn"] {
        for a in zone_read(kind) {
            if !attrs.iter().any(|have| have.name == a.name) {
                attrs.push(a);
            }
        }
    }
    attrs
}

fn vnet_read() -> Vec<AttrSchema> {
    vec![
        ro("alias", s()),
        ro("isolate_ports", b()),
        ro("tag", n()),
        ro("vlan_aware", b()),
        ro("zone", s()),
    ]
}

/// The schema and bpg's deprecation of an SDN data source.
pub(super) fn schema(type_name: &str) -> Option<(&'static str, BodySchema, Option<&'static str>)> {
    let name: &'static str = NAMES.iter().copied().find(|n| *n == type_name)?;
    let short = name
        .strip_prefix("proxmox_virtual_environment_sdn_")
        .or_else(|| name.strip_prefix("proxmox_sdn_"))?;
    let deprecated = name
        .starts_with("proxmox_virtual_environment_")
        .then(|| {
            DEPRECATED
                .iter()
                .find(|(s, _)| *s == short)
                .map(|(_, m)| *m)
        })
        .flatten();
    let attrs = match short {
        "zones" => vec![
            opt("type", s()),
            ro("zones", list_of(object_of(&any_zone()))),
        ],
        "vnet" => {
            let mut attrs = vec![req("id", s())];
            attrs.extend(vnet_read());
            attrs
        }
        "vnets" => {
            let mut fields = vnet_read();
            fields.push(ro("id", s()));
            vec![ro("vnets", list_of(object_of(&fields)))]
        }
        "subnet" => {
            let range = object_of(&[ro("start_address", s()), ro("end_address", s())]);
            vec![
                req("cidr", s()),
                req("vnet", s()),
                oc("dhcp_range", range),
                ro("dhcp_dns_server", s()),
                ro("dns_zone_prefix", s()),
                ro("gateway", s()),
                ro("id", s()),
                ro("snat", b()),
            ]
        }
        zone => {
            let mut attrs = vec![req("id", s())];
            attrs.extend(zone_read(zone.strip_prefix("zone_")?));
            attrs
        }
    };
    let body = BodySchema {
        attrs,
        blocks: Vec::new(),
    };
    Some((name, body, deprecated))
}
