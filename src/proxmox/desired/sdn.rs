//! bpg's SDN resources to PVE objects: a zone of each type, a vnet, a subnet (named by PVE's
//! id, `{zone}-{network}-{mask}`, whose zone is its vnet's in this configuration) and the
//! applier. Each argument becomes the parameter pve-network takes (`dns_zone` -> `dnszone`,
//! `service_vlan` -> `tag`, sets as PVE's sorted comma lists). Then the order apply needs:
//! a vnet uses its zone, a subnet its vnet, the applier every SDN object, and a guest whose
//! interface is on a vnet of this configuration the applier (or the vnet, without one).

use std::collections::{BTreeMap, BTreeSet};

use super::values::{Marks, Object, bit, num, object};
use super::{DesiredError, lifecycle, must_know};
use crate::proxmox::plan::{Desired, DesiredObject, DesiredValue};
use crate::proxmox::types::{ObjectId, ObjectKind, Scope, sdn_subnet_id};
use tfconfig::ResourceInstance;

#[derive(Clone, Copy)]
enum Conv {
    Text,
    Flag,
    Number,
    /// A set of texts as PVE's comma list, sorted (`PVE::Network::SDN::encode_value`).
    List,
}

type Params = &'static [(&'static str, &'static str, Conv)];

const ZONE: Params = &[
    ("dns", "dns", Conv::Text),
    ("dns_zone", "dnszone", Conv::Text),
    ("ipam", "ipam", Conv::Text),
    ("mtu", "mtu", Conv::Number),
    ("nodes", "nodes", Conv::List),
    ("reverse_dns", "reversedns", Conv::Text),
];

fn zone_params(kind: &str) -> Option<Params> {
    use Conv::{Flag, List, Number, Text};
    Some(match kind {
        "simple" => &[("dhcp", "dhcp", Text)],
        "vlan" => &[("bridge", "bridge", Text)],
        "qinq" => &[
            ("bridge", "bridge", Text),
            ("service_vlan", "tag", Number),
            ("service_vlan_protocol", "vlan-protocol", Text),
        ],
        "vxlan" => &[("peers", "peers", List)],
        "evpn" => &[
            ("controller", "controller", Text),
            ("vrf_vxlan", "vrf-vxlan", Number),
            ("advertise_subnets", "advertise-subnets", Flag),
            (
                "disable_arp_nd_suppression",
                "disable-arp-nd-suppression",
                Flag,
            ),
            ("exit_nodes", "exitnodes", List),
            ("exit_nodes_local_routing", "exitnodes-local-routing", Flag),
            ("primary_exit_node", "exitnodes-primary", Text),
            ("rt_import", "rt-import", Text),
        ],
        _ => return None,
    })
}

const VNET: Params = &[
    ("zone", "zone", Conv::Text),
    ("alias", "alias", Conv::Text),
    ("isolate_ports", "isolate-ports", Conv::Flag),
    ("tag", "tag", Conv::Number),
    ("vlan_aware", "vlanaware", Conv::Flag),
];

const SUBNET: Params = &[
    ("dhcp_dns_server", "dhcp-dns-server", Conv::Text),
    ("dns_zone_prefix", "dnszoneprefix", Conv::Text),
    ("gateway", "gateway", Conv::Text),
    ("snat", "snat", Conv::Flag),
];

/// What an SDN resource type is: `sdn_vnet`, `sdn_zone_vlan`, ...
fn short(resource_type: &str) -> Option<&str> {
    let rest = resource_type
        .strip_prefix("proxmox_virtual_environment_")
        .or_else(|| resource_type.strip_prefix("proxmox_"))?;
    match rest {
        "sdn_vnet" | "sdn_subnet" | "sdn_applier" => Some(rest),
        _ => zone_params(rest.strip_prefix("sdn_zone_")?).map(|_| rest),
    }
}

/// Whether atoll manages `resource_type` as an SDN object.
pub(super) fn is_sdn(resource_type: &str) -> bool {
    short(resource_type).is_some()
}

struct Reader<'a> {
    address: &'a str,
    attrs: &'a Object,
}

impl Reader<'_> {
    fn invalid(&self, why: impl Into<String>) -> DesiredError {
        DesiredError::Invalid {
            address: self.address.to_owned(),
            why: why.into(),
        }
    }

    fn value(&self, attrs: &Object, arg: &str, conv: Conv) -> Result<Option<String>, DesiredError> {
        let mut marks = Marks::default();
        let value = match conv {
            Conv::Text => marks.text(attrs.get(arg)).filter(|v| !v.is_empty()),
            Conv::Flag => marks.flag(attrs.get(arg)).map(|f| bit(f).to_owned()),
            Conv::Number => marks.number(attrs.get(arg)).map(num),
            Conv::List => {
                let set: BTreeSet<String> = marks.texts(attrs.get(arg)).into_iter().collect();
                (!set.is_empty()).then(|| set.into_iter().collect::<Vec<_>>().join(","))
            }
        };
        if marks.unknown {
            return Err(must_know(self.address, arg));
        }
        Ok(value)
    }

    fn required(&self, arg: &str) -> Result<String, DesiredError> {
        self.value(self.attrs, arg, Conv::Text)?
            .ok_or_else(|| self.invalid(format!("{arg} is required")))
    }

    fn params(
        &self,
        params: Params,
        fields: &mut BTreeMap<String, String>,
        labels: &mut BTreeMap<String, String>,
    ) -> Result<(), DesiredError> {
        for (arg, key, conv) in params {
            if let Some(value) = self.value(self.attrs, arg, *conv)? {
                fields.insert((*key).to_owned(), value);
            }
            labels.insert((*key).to_owned(), (*arg).to_owned());
        }
        Ok(())
    }
}

/// The desired SDN object of one resource instance; a subnet looks its vnet's zone up among
/// `resources`.
pub(super) fn build(
    resource: &ResourceInstance,
    resources: &[ResourceInstance],
) -> Result<Desired, DesiredError> {
    let address = resource.address.as_str();
    let kind = short(&resource.resource_type).ok_or_else(|| DesiredError::Invalid {
        address: address.to_owned(),
        why: "not an SDN resource".to_owned(),
    })?;
    let attrs = object(&resource.attributes).ok_or_else(|| must_know(address, "the resource"))?;
    let reader = Reader { address, attrs };
    let mut fields = BTreeMap::new();
    let mut labels = BTreeMap::new();
    let (object_kind, name) = match kind {
        "sdn_vnet" => {
            reader.params(VNET, &mut fields, &mut labels)?;
            (ObjectKind::SdnVnet, Some(reader.required("id")?))
        }
        "sdn_subnet" => {
            reader.params(SUBNET, &mut fields, &mut labels)?;
            if let Some(range) = dhcp_range(&reader)? {
                fields.insert("dhcp-range".to_owned(), range);
            }
            labels.insert("dhcp-range".to_owned(), "dhcp_range".to_owned());
            fields.insert("type".to_owned(), "subnet".to_owned());
            (
                ObjectKind::SdnSubnet,
                Some(subnet_name(&reader, resources)?),
            )
        }
        "sdn_applier" => {
            for arg in ["on_create", "on_destroy"] {
                let on = reader.value(attrs, arg, Conv::Flag)?;
                fields.insert(arg.to_owned(), on.unwrap_or_else(|| "1".to_owned()));
            }
            (ObjectKind::SdnApplier, None)
        }
        zone => {
            let zone_type = zone.strip_prefix("sdn_zone_").unwrap_or_default();
            reader.params(ZONE, &mut fields, &mut labels)?;
            reader.params(
                zone_params(zone_type).unwrap_or_default(),
                &mut fields,
                &mut labels,
            )?;
            fields.insert("type".to_owned(), zone_type.to_owned());
            (ObjectKind::SdnZone, Some(reader.required("id")?))
        }
    };
    let id = ObjectId::new(object_kind, Scope::Cluster, name.as_deref())
        .map_err(|e| reader.invalid(e.to_string()))?;
    Ok(Desired::Object(DesiredObject {
        address: address.to_owned(),
        resource_type: resource.resource_type.clone(),
        id,
        fields,
        entries: None,
        labels,
        lifecycle: lifecycle(&resource.lifecycle, None),
        uses: Vec::new(),
        bridges: Vec::new(),
        secrets: Default::default(),
    }))
}

/// bpg's `dhcp_range` as PVE's `dhcp-range` (`start-address=..,end-address=..`).
fn dhcp_range(reader: &Reader<'_>) -> Result<Option<String>, DesiredError> {
    let Some(range) = reader.attrs.get("dhcp_range").and_then(object) else {
        return Ok(None);
    };
    let start = reader.value(range, "start_address", Conv::Text)?;
    let end = reader.value(range, "end_address", Conv::Text)?;
    match (start, end) {
        (Some(start), Some(end)) => Ok(Some(format!("start-address={start},end-address={end}"))),
        _ => Err(reader.invalid("dhcp_range needs start_address and end_address")),
    }
}

/// `{vnet}/{zone}-{network}-{mask}`: PVE names a subnet by its vnet's zone, which must be
/// known at plan; it is read from the vnet this configuration declares.
fn subnet_name(
    reader: &Reader<'_>,
    resources: &[ResourceInstance],
) -> Result<String, DesiredError> {
    let vnet = reader.required("vnet")?;
    let cidr = reader.required("cidr")?;
    let zone = resources
        .iter()
        .filter(|r| short(&r.resource_type) == Some("sdn_vnet"))
        .filter_map(|r| object(&r.attributes))
        .find(|attrs| Marks::default().text(attrs.get("id")).as_deref() == Some(vnet.as_str()))
        .map(|attrs| {
            let mut marks = Marks::default();
            (marks.text(attrs.get("zone")), marks.unknown)
        });
    let zone = match zone {
        Some((Some(zone), false)) => zone,
        Some(_) => return Err(must_know(reader.address, "the zone of its vnet")),
        None => {
            return Err(reader.invalid(format!(
                "vnet {vnet} is not declared in this configuration: Proxmox VE names a subnet \
                 by its vnet's zone ({{zone}}-{{network}}-{{mask}}), which atoll reads from the \
                 vnet's resource; declare the vnet in the same project"
            )));
        }
    };
    Ok(format!("{vnet}/{}", sdn_subnet_id(&zone, &cidr)))
}

/// The order apply needs and the bridges each change re-plugs: a vnet uses its zone, a
/// subnet its vnet, the applier every SDN object; a guest on a vnet of the configuration
/// uses the applier (so its bridge exists when it starts), or the vnet without one.
pub(super) fn link(resources: &mut [Desired]) {
    let sdn: Vec<(ObjectKind, String, String, BTreeMap<String, String>)> = resources
        .iter()
        .filter_map(|r| match r {
            Desired::Object(o) if o.id.is_sdn() => Some((
                o.id.kind,
                o.id.name.clone().unwrap_or_default(),
                o.address.clone(),
                o.fields.clone(),
            )),
            _ => None,
        })
        .collect();
    let find = |kind: ObjectKind, name: &str| {
        sdn.iter()
            .find(|(k, n, _, _)| *k == kind && n == name)
            .map(|(_, _, address, _)| address.clone())
    };
    let applier = find(ObjectKind::SdnApplier, "");
    let vnets_of_zone = |zone: &str| -> Vec<String> {
        sdn.iter()
            .filter(|(k, _, _, f)| {
                *k == ObjectKind::SdnVnet && f.get("zone").map(String::as_str) == Some(zone)
            })
            .map(|(_, n, _, _)| n.clone())
            .collect()
    };
    for resource in resources.iter_mut() {
        let (uses, bridges): (Vec<String>, Vec<String>) = match resource {
            Desired::Object(o) => match o.id.kind {
                ObjectKind::SdnZone => {
                    let name = o.id.name.clone().unwrap_or_default();
                    (Vec::new(), vnets_of_zone(&name))
                }
                ObjectKind::SdnVnet => {
                    let zone = o.fields.get("zone").cloned().unwrap_or_default();
                    let name = o.id.name.clone().unwrap_or_default();
                    (
                        find(ObjectKind::SdnZone, &zone).into_iter().collect(),
                        vec![name],
                    )
                }
                ObjectKind::SdnSubnet => {
                    let name = o.id.name.clone().unwrap_or_default();
                    let vnet = name
                        .split_once('/')
                        .map(|(v, _)| v.to_owned())
                        .unwrap_or_default();
                    (
                        find(ObjectKind::SdnVnet, &vnet).into_iter().collect(),
                        vec![vnet],
                    )
                }
                ObjectKind::SdnApplier => {
                    let all = sdn
                        .iter()
                        .filter(|(k, _, _, _)| *k != ObjectKind::SdnApplier);
                    (all.map(|(_, _, a, _)| a.clone()).collect(), Vec::new())
                }
                _ => continue,
            },
            Desired::Guest(g) => {
                let used = g
                    .config
                    .iter()
                    .filter(|(k, _)| k.starts_with("net"))
                    .filter_map(|(_, v)| match v {
                        DesiredValue::Known(net) => net_bridge(net),
                        _ => None,
                    });
                let uses = used
                    .filter_map(|bridge| {
                        find(ObjectKind::SdnVnet, &bridge)
                            .map(|vnet| applier.clone().unwrap_or(vnet))
                    })
                    .collect();
                (uses, Vec::new())
            }
            Desired::Download(_) => continue,
        };
        let (own, list, carried) = match resource {
            Desired::Object(o) => (o.address.clone(), &mut o.uses, Some(&mut o.bridges)),
            Desired::Guest(g) => (g.address.clone(), &mut g.uses, None),
            Desired::Download(_) => continue,
        };
        for used in uses {
            if used != own && !list.contains(&used) {
                list.push(used);
            }
        }
        if let Some(carried) = carried {
            *carried = bridges;
        }
    }
}

/// The bridge of a `netN` value (`virtio=..,bridge=vnet1,tag=5`).
pub(crate) fn net_bridge(net: &str) -> Option<String> {
    net.split(',')
        .find_map(|part| part.strip_prefix("bridge="))
        .map(str::to_owned)
}
