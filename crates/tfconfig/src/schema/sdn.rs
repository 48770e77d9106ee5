//! SDN (bpg/proxmox, terraform-plugin-framework, `fwprovider/cluster/sdn`): zones of each
//! type, vnets, subnets and the applier, under bpg's short names (`proxmox_sdn_*`) and the
//! long ones it deprecated (`proxmox_virtual_environment_sdn_*`); the data sources that read
//! them. Defaults and validators are those of bpg's code.

use std::collections::BTreeMap;

use super::builders::*;
use super::{AttrSchema, BodySchema, Check, ResourceSchema};
use crate::types::{Constraint, ObjectAttr};

const LONG: &str = "proxmox_virtual_environment_";

/// bpg's `validators.SDNID()`: `^[A-Za-z][A-Za-z0-9]*[A-Za-z0-9]$`, at most 8 characters.
const SDN_ID: Check = Check::Matches {
    pattern: "^[A-Za-z][A-Za-z0-9]{0,6}[A-Za-z0-9]$",
    expected: "a valid SDN identifier (a letter, then letters or digits, 2 to 8 in all)",
};

fn set_of_strings() -> Constraint {
    Constraint::Set(Box::new(s()))
}

/// The short type name for a long or short SDN resource or data source type, when it is one.
fn short(type_name: &str) -> Option<&str> {
    let rest = type_name
        .strip_prefix(LONG)
        .or_else(|| type_name.strip_prefix("proxmox_"))?;
    rest.starts_with("sdn_").then_some(rest)
}

/// What every zone type takes (`resource_generic.go`).
fn zone_common() -> Vec<AttrSchema> {
    vec![
        fnew(checked(req("id", s()), SDN_ID)),
        opt("dns", s()),
        opt("dns_zone", s()),
        opt("ipam", s()),
        opt("mtu", n()),
        opt("nodes", set_of_strings()),
        opt("reverse_dns", s()),
        ro("pending", b()),
        ro("state", s()),
    ]
}

fn zone_attrs(kind: &str) -> Option<Vec<AttrSchema>> {
    let mut attrs = zone_common();
    match kind {
        "simple" => attrs.push(checked(opt("dhcp", s()), Check::OneOf(&["dnsmasq"]))),
        "vlan" => attrs.push(req("bridge", s())),
        "qinq" => attrs.extend([
            req("bridge", s()),
            checked(
                req("service_vlan", n()),
                Check::Between {
                    min: 1.0,
                    max: 4094.0,
                    why: None,
                },
            ),
            checked(
                opt("service_vlan_protocol", s()),
                Check::OneOf(&["802.1ad", "802.1q"]),
            ),
        ]),
        "vxlan" => attrs.push(req("peers", set_of_strings())),
        "evpn" => attrs.extend([
            req("controller", s()),
            req("vrf_vxlan", n()),
            opt("advertise_subnets", b()),
            opt("disable_arp_nd_suppression", b()),
            opt("exit_nodes", set_of_strings()),
            opt("exit_nodes_local_routing", b()),
            opt("primary_exit_node", s()),
            opt("rt_import", s()),
        ]),
        _ => return None,
    }
    Some(attrs)
}

fn object_type(fields: &[(&str, bool)]) -> Constraint {
    let attrs: BTreeMap<String, ObjectAttr> = fields
        .iter()
        .map(|(name, optional)| {
            let attr = ObjectAttr {
                ty: s(),
                optional: *optional,
                default: None,
            };
            ((*name).to_owned(), attr)
        })
        .collect();
    Constraint::Object(attrs)
}

fn vnet_attrs() -> Vec<AttrSchema> {
    vec![
        fnew(checked(req("id", s()), SDN_ID)),
        req("zone", s()),
        opt("alias", s()),
        opt("isolate_ports", b()),
        opt("tag", n()),
        opt("vlan_aware", b()),
    ]
}

fn subnet_attrs() -> Vec<AttrSchema> {
    let range = object_type(&[("start_address", false), ("end_address", false)]);
    vec![
        ro("id", s()),
        fnew(req("cidr", s())),
        fnew(checked(req("vnet", s()), SDN_ID)),
        opt("dhcp_dns_server", s()),
        opt("dhcp_range", range),
        opt("dns_zone_prefix", s()),
        opt("gateway", s()),
        opt("snat", b()),
    ]
}

fn applier_attrs() -> Vec<AttrSchema> {
    vec![ro("id", s()), db("on_create", true), db("on_destroy", true)]
}

/// The schema of an SDN resource type under either of its names.
pub(super) fn resource(type_name: &str) -> Option<ResourceSchema> {
    let short = short(type_name)?;
    let attrs = match short {
        "sdn_vnet" => vnet_attrs(),
        "sdn_subnet" => subnet_attrs(),
        "sdn_applier" => applier_attrs(),
        other => zone_attrs(other.strip_prefix("sdn_zone_")?)?,
    };
    let type_name: &'static str = SUPPORTED.iter().copied().find(|t| *t == type_name)?;
    Some(ResourceSchema {
        type_name,
        body: BodySchema {
            attrs,
            blocks: Vec::new(),
        },
        generated: false,
    })
}

/// Every SDN resource type, short names first.
pub(super) const SUPPORTED: &[&str] = &[
    "proxmox_sdn_zone_simple",
    "proxmox_sdn_zone_vlan",
    "proxmox_sdn_zone_qinq",
    "proxmox_sdn_zone_vxlan",
    "proxmox_sdn_zone_evpn",
    "proxmox_sdn_vnet",
    "proxmox_sdn_subnet",
    "proxmox_sdn_applier",
    "proxmox_virtual_environment_sdn_zone_simple",
    "proxmox_virtual_environment_sdn_zone_vlan",
    "proxmox_virtual_environment_sdn_zone_qinq",
    "proxmox_virtual_environment_sdn_zone_vxlan",
    "proxmox_virtual_environment_sdn_zone_evpn",
    "proxmox_virtual_environment_sdn_vnet",
    "proxmox_virtual_environment_sdn_subnet",
    "proxmox_virtual_environment_sdn_applier",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_names_have_a_schema_and_only_the_long_one_is_deprecated() {
        for name in SUPPORTED {
            let schema = resource(name).expect("a schema");
            assert_eq!(schema.type_name, *name);
        }
        assert!(super::super::resource_deprecation("proxmox_sdn_vnet").is_none());
        let message = super::super::resource_deprecation("proxmox_virtual_environment_sdn_vnet")
            .expect("deprecated");
        assert!(message.starts_with("Use \"proxmox_sdn_vnet\" instead."));
        assert!(resource("proxmox_sdn_zone_faucet").is_none());
        assert!(super::super::resource_deprecation("proxmox_virtual_environment_vm").is_none());
        let vlan = resource("proxmox_sdn_zone_vlan").expect("vlan");
        assert!(
            vlan.body
                .attrs
                .iter()
                .any(|a| a.name == "bridge" && a.required)
        );
    }
}
