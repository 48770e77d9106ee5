//! What Proxmox VE computes for a managed container, for the configuration to read: bpg's
//! `ipv4` and `ipv6` maps (interface name -> its first address of that family, `lo` left out),
//! filled from `GET .../lxc/{vmid}/interfaces` of a running container, empty for a stopped one.
//! Read only when the first evaluation left something unknown that they might answer.

use std::collections::BTreeMap;

use tfconfig::{Known, Value};

use super::EngineError;
use crate::proxmox::client::{GuestInterface, ProxmoxApi};
use crate::proxmox::desired::{CONTAINER, DesiredState};
use crate::proxmox::plan::{Desired, DesiredValue, Inventory, Power, StateEntry};
use crate::proxmox::types::{NodeName, VmId};

/// Whether anything the configuration asks for is still unknown (a guest's value, a generated
/// value, an output): only then are the containers' addresses worth reading.
pub(super) fn has_unknowns(desired: &DesiredState) -> bool {
    let guest_unknown = desired.resources.iter().any(|r| match r {
        Desired::Guest(g) => g.config.values().any(|v| *v == DesiredValue::Unknown),
        Desired::Download(_) | Desired::Object(_) => false,
    });
    guest_unknown
        || desired.generated.iter().any(|g| !g.pending.is_empty())
        || desired.outputs.values().any(|o| o.value.contains_unknown())
}

/// The `ipv4`/`ipv6` of every container in state that the cluster still has.
pub(super) async fn container_addresses(
    api: &dyn ProxmoxApi,
    entries: &[StateEntry],
    inventory: &Inventory,
) -> Result<Known, EngineError> {
    let mut known = Known::new();
    for entry in entries {
        let StateEntry::Guest {
            address,
            resource_type,
            vm_id,
            ..
        } = entry
        else {
            continue;
        };
        let Some(live) = inventory
            .guests
            .get(vm_id)
            .filter(|_| resource_type == CONTAINER)
        else {
            continue;
        };
        let node = live.node.parse::<NodeName>().ok();
        let vmid = VmId::new(*vm_id).ok();
        let interfaces = match (live.power, node, vmid) {
            (Power::Running, Some(node), Some(vmid)) => {
                api.lxc_interfaces(&node, vmid).await?.unwrap_or_default()
            }
            _ => Vec::new(),
        };
        known.insert(address.clone(), addresses(&interfaces));
    }
    Ok(known)
}

/// bpg's maps: the first address of each family per interface, without its prefix length.
fn addresses(interfaces: &[GuestInterface]) -> BTreeMap<String, Value> {
    let mut ipv4 = BTreeMap::new();
    let mut ipv6 = BTreeMap::new();
    for iface in interfaces.iter().filter(|i| i.name != "lo") {
        let first = |cidr: &Option<String>| {
            cidr.as_deref()
                .and_then(|c| c.split_whitespace().next())
                .map(|c| c.split('/').next().unwrap_or(c).to_owned())
        };
        if let Some(ip) = first(&iface.inet) {
            ipv4.entry(iface.name.clone()).or_insert(Value::string(ip));
        }
        if let Some(ip) = first(&iface.inet6) {
            ipv6.entry(iface.name.clone()).or_insert(Value::string(ip));
        }
    }
    let map = |m| Value::Map(tfconfig::Type::String, m);
    BTreeMap::from([
        ("ipv4".to_owned(), map(ipv4)),
        ("ipv6".to_owned(), map(ipv6)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_the_first_of_each_family_without_prefix_and_without_lo() {
        let iface = |name: &str, inet: Option<&str>, inet6: Option<&str>| GuestInterface {
            name: name.to_owned(),
            hwaddr: None,
            inet: inet.map(str::to_owned),
            inet6: inet6.map(str::to_owned),
        };
        let found = addresses(&[
            iface("lo", Some("127.0.0.1/8"), Some("::1/128")),
            iface("eth0", Some("10.0.0.5/24"), Some("fe80::1/64")),
            iface("eth1", None, None),
        ]);
        let ipv4 = found["ipv4"].as_map().expect("map");
        assert_eq!(ipv4.len(), 1);
        assert_eq!(ipv4["eth0"].as_str(), Some("10.0.0.5"));
        assert_eq!(
            found["ipv6"].as_map().expect("map")["eth0"].as_str(),
            Some("fe80::1")
        );
    }
}
