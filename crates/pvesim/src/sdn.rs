//! SDN as pve-network keeps it: zones, vnets and subnets written to `sdn/*.cfg` (the
//! configuration every read shows by default), a running configuration that only
//! `PUT /cluster/sdn` replaces with it, and the `pending=1` view comparing the two
//! (`PVE::Network::SDN::pending_config`). Every check and message follows pve-network's API
//! and plugins: the section schema, each zone type's options, the vnet hooks of each zone
//! type, a subnet's gateway and DHCP ranges inside its CIDR. Applying makes each vnet a
//! bridge on the nodes of its zone and re-plugs the links of running guests on a vnet whose
//! configuration changed.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult};
use crate::firewall::spec::{self, Checked, Field};
use crate::model::{Cluster, GuestEvent};
use crate::routes::Params;
use crate::tasks::Exit;

pub(crate) type Section = BTreeMap<String, String>;
pub(crate) type Sections = BTreeMap<String, Section>;

/// The three section configurations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Config {
    pub(crate) zones: Sections,
    pub(crate) vnets: Sections,
    pub(crate) subnets: Sections,
}

/// `/etc/pve/sdn`: what is written, and what was last applied.
#[derive(Debug, Default)]
pub(crate) struct Sdn {
    pub(crate) config: Config,
    pub(crate) running: Config,
    /// `(node, vnet)` bridges the last apply made.
    bridges: BTreeSet<(String, String)>,
    /// Bumped on every write: the `digest` readers see.
    version: u64,
}

/// Which configuration a read shows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    Config,
    Running,
    Pending,
}

impl View {
    pub(crate) fn of(p: &Checked) -> Self {
        if p.get("pending").map(String::as_str) == Some("1") {
            Self::Pending
        } else if p.get("running").map(String::as_str) == Some("1") {
            Self::Running
        } else {
            Self::Config
        }
    }
}

/// Which section file.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Zone,
    Vnet,
    Subnet,
}

impl Kind {
    fn of(self, config: &Config) -> &Sections {
        match self {
            Self::Zone => &config.zones,
            Self::Vnet => &config.vnets,
            Self::Subnet => &config.subnets,
        }
    }

    /// The key naming an object in what the API returns.
    fn id_key(self) -> &'static str {
        match self {
            Self::Zone => "zone",
            Self::Vnet => "vnet",
            Self::Subnet => "subnet",
        }
    }

    /// `sdn_zones_config` and friends, when the id is missing.
    pub(crate) fn missing(self, id: &str) -> ApiError {
        ApiError::die(match self {
            Self::Zone => format!("sdn '{id}' does not exist"),
            Self::Vnet => format!("sdn vnet '{id}' does not exist"),
            Self::Subnet => format!("sdn subnet '{id}' does not exist"),
        })
    }
}

/// Integer and boolean options: numbers in what the API returns.
const NUMERIC: &[&str] = &[
    "mtu",
    "tag",
    "vrf-vxlan",
    "vxlan-port",
    "snat",
    "vlanaware",
    "isolate-ports",
    "advertise-subnets",
    "disable-arp-nd-suppression",
    "exitnodes-local-routing",
    "bridge-disable-mac-learning",
];

/// A section as the API returns it.
fn render(section: &Section) -> Map<String, Value> {
    section
        .iter()
        .map(|(k, v)| {
            let value = match v.parse::<i64>() {
                Ok(n) if NUMERIC.contains(&k.as_str()) => json!(n),
                _ => json!(v),
            };
            (k.clone(), value)
        })
        .collect()
}

/// `pending_config`: the running values at the top, what differs in `pending`, and `state`
/// (`new`, `changed`, `deleted`).
fn pending_view(running: &Sections, config: &Sections) -> BTreeMap<String, Map<String, Value>> {
    let mut out: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let ids: BTreeSet<&String> = running.keys().chain(config.keys()).collect();
    for id in ids {
        let (run, cfg) = (running.get(id), config.get(id));
        let mut object = run.map(render).unwrap_or_default();
        let mut pending = Map::new();
        let mut state = None;
        match (run, cfg) {
            (Some(_), None) => state = Some("deleted"),
            (None, Some(cfg)) => {
                state = Some("new");
                for (k, v) in render(cfg) {
                    if k == "type" || k == "vnet" {
                        object.insert(k, v);
                    } else {
                        pending.insert(k, v);
                    }
                }
            }
            (Some(run), Some(cfg)) => {
                for k in run.keys().filter(|k| !cfg.contains_key(*k)) {
                    pending.insert(k.clone(), json!("deleted"));
                    state = Some("changed");
                }
                let cfg_json = render(cfg);
                for (k, v) in cfg {
                    if k == "type" || k == "vnet" {
                        continue;
                    }
                    if run.get(k) != Some(v) {
                        pending.insert(k.clone(), cfg_json[k].clone());
                        state = Some("changed");
                    }
                }
            }
            (None, None) => {}
        }
        if let Some(state) = state {
            object.insert("state".to_owned(), json!(state));
            object.insert("pending".to_owned(), Value::Object(pending));
        }
        out.insert(id.clone(), object);
    }
    out
}

impl Sdn {
    pub(crate) fn digest(&self) -> String {
        format!("{:040x}", self.version)
    }

    pub(crate) fn wrote(&mut self) {
        self.version += 1;
    }

    /// The objects of `kind` as `view` shows them, each with its id and the digest.
    pub(crate) fn list(&self, kind: Kind, view: View) -> Vec<Map<String, Value>> {
        let objects: BTreeMap<String, Map<String, Value>> = match view {
            View::Config => kind
                .of(&self.config)
                .iter()
                .map(|(id, s)| (id.clone(), render(s)))
                .collect(),
            View::Running => kind
                .of(&self.running)
                .iter()
                .map(|(id, s)| (id.clone(), render(s)))
                .collect(),
            View::Pending => pending_view(kind.of(&self.running), kind.of(&self.config)),
        };
        objects
            .into_iter()
            .map(|(id, mut object)| {
                object.insert(kind.id_key().to_owned(), json!(id));
                object.insert("digest".to_owned(), json!(self.digest()));
                if kind == Kind::Subnet {
                    subnet_fields(&id, &mut object);
                }
                object
            })
            .collect()
    }

    /// One object as `view` shows it.
    pub(crate) fn read(&self, kind: Kind, view: View, id: &str) -> ApiResult<Value> {
        self.list(kind, view)
            .into_iter()
            .find(|o| o.get(kind.id_key()).and_then(Value::as_str) == Some(id))
            .map(Value::Object)
            .ok_or_else(|| kind.missing(id))
    }
}

/// What `sdn_subnets_config` and the API add to a subnet: `cidr`, `zone`, `network`,
/// `mask`, `id`, and `dhcp-range` as a list of ranges.
fn subnet_fields(id: &str, object: &mut Map<String, Value>) {
    let mut parts = id.splitn(3, '-');
    let (zone, network, mask) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    object.insert("id".to_owned(), json!(id));
    object.insert("cidr".to_owned(), json!(format!("{network}/{mask}")));
    object.insert("zone".to_owned(), json!(zone));
    object.insert("network".to_owned(), json!(network));
    object.insert("mask".to_owned(), json!(mask));
    if let Some(Value::String(range)) = object.get("dhcp-range").cloned() {
        let fields: Map<String, Value> = range
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), json!(v)))
            .collect();
        object.insert("dhcp-range".to_owned(), json!([fields]));
    }
}

/// `GET /cluster/sdn`: the index.
pub(crate) fn index() -> Value {
    json!([
        {"id": "vnets"}, {"id": "zones"}, {"id": "controllers"}, {"id": "ipams"},
        {"id": "dns"}, {"id": "fabrics"}
    ])
}

/// `PUT /cluster/sdn`: the configuration becomes the running one; each node rebuilds its
/// vnet bridges; running guests on a vnet whose configuration changed have their links
/// re-plugged. The answer is the `reloadnetworkall` task.
pub(crate) fn apply(cluster: &mut Cluster, user: &str) -> String {
    let before = std::mem::replace(&mut cluster.sdn.running, cluster.sdn.config.clone());
    let after = cluster.sdn.running.clone();
    let changed = changed_vnets(&before, &after);
    for (node, vnet) in std::mem::take(&mut cluster.sdn.bridges) {
        if let Some(n) = cluster.nodes.get_mut(&node) {
            n.network.remove_vnet(&vnet);
        }
    }
    let mut made = BTreeSet::new();
    for (vnet, section) in &after.vnets {
        let Some(zone) = section.get("zone").and_then(|z| after.zones.get(z)) else {
            continue;
        };
        let nodes: Option<BTreeSet<&str>> = zone.get("nodes").map(|n| n.split(',').collect());
        let mtu = zone.get("mtu").and_then(|m| m.parse().ok()).unwrap_or(
            match zone.get("type").map(String::as_str) {
                Some("vxlan" | "evpn") => 1450,
                _ => 1500,
            },
        );
        for (name, node) in cluster.nodes.iter_mut() {
            if nodes.as_ref().is_none_or(|n| n.contains(name.as_str())) {
                node.network.add_vnet(vnet.clone(), mtu);
                made.insert((name.clone(), vnet.clone()));
            }
        }
    }
    cluster.sdn.bridges = made;
    for guest in cluster.guests.values_mut().filter(|g| g.running) {
        let replugged: Vec<String> = guest
            .conf
            .main
            .iter()
            .filter(|(k, _)| k.starts_with("net"))
            .filter(|(_, v)| {
                v.split(',')
                    .find_map(|p| p.strip_prefix("bridge="))
                    .is_some_and(|b| changed.contains(b))
            })
            .map(|(k, _)| k.clone())
            .collect();
        guest
            .events
            .extend(replugged.into_iter().map(GuestEvent::LinkReplugged));
    }
    let node = cluster.nodes.keys().next().cloned().unwrap_or_default();
    let upid = cluster.new_task(&node, "reloadnetworkall", "", user);
    if let Some(task) = cluster.tasks.get_mut(&upid) {
        task.log.push("reload network on every node".to_owned());
        task.finish(Exit::Ok);
    }
    upid
}

/// The vnets whose own, zone's or subnets' running configuration differs.
fn changed_vnets(before: &Config, after: &Config) -> BTreeSet<String> {
    let vnets: BTreeSet<&String> = before.vnets.keys().chain(after.vnets.keys()).collect();
    vnets
        .into_iter()
        .filter(|vnet| {
            let zone = |c: &Config| {
                let z = c.vnets.get(*vnet).and_then(|s| s.get("zone"))?;
                c.zones.get(z).cloned()
            };
            let subnets = |c: &Config| -> Sections {
                c.subnets
                    .iter()
                    .filter(|(_, s)| s.get("vnet") == Some(*vnet))
                    .map(|(id, s)| (id.clone(), s.clone()))
                    .collect()
            };
            before.vnets.get(*vnet) != after.vnets.get(*vnet)
                || zone(before) != zone(after)
                || subnets(before) != subnets(after)
        })
        .cloned()
        .collect()
}

/// `pve-sdn-zone-id` / `pve-sdn-vnet-id`: `[a-zA-Z][a-zA-Z0-9]*[a-zA-Z0-9]`.
fn sdn_id(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty() && b[0].is_ascii_alphabetic() && b.iter().all(u8::is_ascii_alphanumeric)
}

pub(crate) const ZONE_ID: Field = Field::str("zone").pattern(sdn_id).len(2, 8);
pub(crate) const VNET_ID: Field = Field::str("vnet").pattern(sdn_id).len(2, 8);

/// Parameters of a read (`running`, `pending`) and any others the path takes.
pub(crate) fn read_params(params: &Params, extra: &[Field]) -> ApiResult<Checked> {
    let mut fields = vec![Field::boolean("running"), Field::boolean("pending")];
    fields.extend_from_slice(extra);
    spec::check(params, &fields)
}

/// An update's `digest` check (`assert_if_modified`) and its `delete` list.
pub(crate) fn digest_and_delete(sdn: &Sdn, p: &Checked) -> ApiResult<Vec<String>> {
    spec::assert_digest(p.get("digest"), &sdn.digest())?;
    Ok(p.get("delete")
        .map(|d| crate::propstr::split_list(d))
        .unwrap_or_default())
}
