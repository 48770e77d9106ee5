//! bpg's SDN data sources (`fwprovider/cluster/sdn`): a zone and the zones as
//! `GET ...?pending=1` shows them (a pending value wins over the running one, and `pending`
//! says whether anything is), a vnet and the vnets, and a subnet found by its CIDR among its
//! vnet's subnets.

use serde_json::Value as Json;

use super::json::{
    attrs, bool_or_null, flag, items, list, number, number_or_null, object, strings, text,
};
use super::{Attributes, DataRead, Facts, Query, ReadError};
use crate::value::Value;

/// A zone's fields with its pending values over the running ones; a key pending deletion is
/// gone.
fn merged(zone: &Json) -> Json {
    let mut out = zone.clone();
    if let (Some(map), Some(pending)) = (
        out.as_object_mut(),
        zone.get("pending").and_then(Json::as_object),
    ) {
        for (k, v) in pending {
            if v == "deleted" {
                map.remove(k);
            } else {
                map.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

fn opt_text(v: &Json, key: &str) -> Value {
    text(v, key).map_or_else(Value::null, Value::String)
}

fn opt_list(v: &Json, key: &str) -> Value {
    text(v, key).map_or_else(Value::null, |t| {
        strings(t.split(',').filter(|p| !p.is_empty()))
    })
}

/// Every attribute a zone of any type reads, from PVE's answer.
fn zone_attrs(raw: &Json) -> Attributes {
    let z = merged(raw);
    attrs([
        ("id", opt_text(&z, "zone")),
        ("type", opt_text(&z, "type")),
        ("dns", opt_text(&z, "dns")),
        ("dns_zone", opt_text(&z, "dnszone")),
        ("ipam", opt_text(&z, "ipam")),
        ("mtu", number_or_null(number(&z, "mtu"))),
        ("nodes", opt_list(&z, "nodes")),
        ("reverse_dns", opt_text(&z, "reversedns")),
        (
            "pending",
            Value::Bool(raw.get("state").is_some_and(|s| !s.is_null())),
        ),
        ("state", opt_text(raw, "state")),
        ("dhcp", opt_text(&z, "dhcp")),
        ("bridge", opt_text(&z, "bridge")),
        ("service_vlan", number_or_null(number(&z, "tag"))),
        ("service_vlan_protocol", opt_text(&z, "vlan-protocol")),
        ("peers", opt_list(&z, "peers")),
        (
            "advertise_subnets",
            bool_or_null(flag(&z, "advertise-subnets")),
        ),
        ("controller", opt_text(&z, "controller")),
        (
            "disable_arp_nd_suppression",
            bool_or_null(flag(&z, "disable-arp-nd-suppression")),
        ),
        ("exit_nodes", opt_list(&z, "exitnodes")),
        (
            "exit_nodes_local_routing",
            bool_or_null(flag(&z, "exitnodes-local-routing")),
        ),
        ("primary_exit_node", opt_text(&z, "exitnodes-primary")),
        ("rt_import", opt_text(&z, "rt-import")),
        ("vrf_vxlan", number_or_null(number(&z, "vrf-vxlan"))),
    ])
}

pub(super) fn zone_query(read: &DataRead) -> Vec<Query> {
    vec![Query::SdnZone {
        zone: read.text("id"),
    }]
}

/// One zone: the attributes its type's schema has (the answer keeps only those).
pub(super) fn zone(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let query = Query::SdnZone {
        zone: read.text("id"),
    };
    let found = facts.read(&query, "Unable to Read SDN Zone")?;
    let mut out = zone_attrs(found);
    if let Some(schema) = crate::schema::data_source(&read.data_type) {
        out.retain(|k, _| schema.body.attr(k).is_some());
    }
    Ok(out)
}

pub(super) fn zones_query(read: &DataRead) -> Vec<Query> {
    vec![Query::SdnZones {
        zone_type: read.optional("type"),
    }]
}

pub(super) fn zones(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let query = Query::SdnZones {
        zone_type: read.optional("type"),
    };
    let found = facts.read(&query, "Unable to Read SDN Zones")?;
    let zones = items(found).iter().map(|z| Value::Object(zone_attrs(z)));
    Ok(attrs([("zones", list(zones))]))
}

fn vnet_attrs(v: &Json) -> Value {
    object([
        ("id", opt_text(v, "vnet")),
        ("alias", opt_text(v, "alias")),
        ("isolate_ports", bool_or_null(flag(v, "isolate-ports"))),
        ("tag", number_or_null(number(v, "tag"))),
        ("vlan_aware", bool_or_null(flag(v, "vlanaware"))),
        ("zone", opt_text(v, "zone")),
    ])
}

pub(super) fn vnet_query(read: &DataRead) -> Vec<Query> {
    vec![Query::SdnVnet {
        vnet: read.text("id"),
    }]
}

pub(super) fn vnet(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let query = Query::SdnVnet {
        vnet: read.text("id"),
    };
    let found = facts.read(&query, "Unable to Read SDN VNet")?;
    let Value::Object(fields) = vnet_attrs(found) else {
        return Ok(Attributes::new());
    };
    Ok(fields.into_iter().collect())
}

pub(super) fn vnets_query(_: &DataRead) -> Vec<Query> {
    vec![Query::SdnVnets]
}

pub(super) fn vnets(_: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let found = facts.read(&Query::SdnVnets, "Unable to Read SDN VNets")?;
    Ok(attrs([(
        "vnets",
        list(items(found).iter().map(vnet_attrs)),
    )]))
}

pub(super) fn subnet_query(read: &DataRead) -> Vec<Query> {
    vec![Query::SdnSubnets {
        vnet: read.text("vnet"),
    }]
}

/// The subnet of `vnet` whose CIDR is `cidr`; `id` is `{vnet}/{cidr}`, as bpg sets it.
pub(super) fn subnet(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let (vnet, cidr) = (read.text("vnet"), read.text("cidr"));
    let query = Query::SdnSubnets { vnet: vnet.clone() };
    let listed = facts.read(&query, "Unable to Resolve SDN Subnet ID")?;
    let found = items(listed)
        .iter()
        .find(|s| text(s, "cidr").as_deref() == Some(cidr.as_str()))
        .ok_or_else(|| {
            ReadError::detailed(
                "Unable to Resolve SDN Subnet ID",
                format!("no subnet with CIDR {cidr} in VNet {vnet}"),
            )
        })?;
    let range = found
        .get("dhcp-range")
        .map(items)
        .and_then(|r| r.first())
        .map_or_else(Value::null, |r| {
            object([
                ("start_address", opt_text(r, "start-address")),
                ("end_address", opt_text(r, "end-address")),
            ])
        });
    Ok(attrs([
        ("id", Value::String(format!("{vnet}/{cidr}"))),
        ("cidr", Value::String(cidr)),
        ("vnet", Value::String(vnet)),
        ("dhcp_range", range),
        ("dhcp_dns_server", opt_text(found, "dhcp-dns-server")),
        ("dns_zone_prefix", opt_text(found, "dnszoneprefix")),
        ("gateway", opt_text(found, "gateway")),
        ("snat", bool_or_null(flag(found, "snat"))),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zones_pending_values_win_and_say_it_is_pending() {
        let raw = serde_json::json!({
            "zone": "lan", "type": "vlan", "bridge": "vmbr0", "mtu": 1500,
            "state": "changed", "pending": {"mtu": 1400, "nodes": "pve1,pve2"}
        });
        let attrs = zone_attrs(&raw);
        assert_eq!(attrs["mtu"], Value::Number(1400.0));
        assert_eq!(attrs["pending"], Value::Bool(true));
        assert_eq!(attrs["state"], Value::string("changed"));
        assert_eq!(attrs["bridge"], Value::string("vmbr0"));
        let applied = serde_json::json!({"zone": "lan", "type": "vlan", "bridge": "vmbr0"});
        assert_eq!(zone_attrs(&applied)["pending"], Value::Bool(false));
    }
}
