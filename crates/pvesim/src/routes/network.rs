//! `/nodes/{node}/network` as pve-manager's `PVE/API2/Network.pm` answers it: list (with the
//! `type` filter and the pending `changes`), create, read, change and delete an interface in
//! the pending file, reload it (a `srvreload` task) and revert it. The file itself and its
//! checks live in `crate::network`.

use std::collections::BTreeMap;

use axum::Extension;
use axum::Router;
use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::{Params, SimState, data};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::firewall::spec::{self, Field, Ty};
use crate::model::Cluster;
use crate::network::{Iface, no_such_iface};
use crate::server::Sim;

/// The routes, merged into the API router.
pub(crate) fn routes() -> Router<std::sync::Arc<Sim>> {
    Router::new()
        .route(
            "/nodes/{node}/network",
            get(index).post(create).put(reload).delete(revert),
        )
        .route(
            "/nodes/{node}/network/{iface}",
            get(read).put(update).delete(remove),
        )
}

const TYPES: &[&str] = &[
    "bridge",
    "bond",
    "eth",
    "alias",
    "vlan",
    "fabric",
    "OVSBridge",
    "OVSBond",
    "OVSPort",
    "OVSIntPort",
    "vnet",
    "unknown",
];

/// The `type` filter of the listing: the types, and the bridge groups.
const TYPE_FILTERS: &[&str] = &[
    "bridge",
    "bond",
    "eth",
    "alias",
    "vlan",
    "fabric",
    "OVSBridge",
    "OVSBond",
    "OVSPort",
    "OVSIntPort",
    "vnet",
    "any_bridge",
    "any_local_bridge",
    "include_sdn",
];

const BOND_MODES: &[&str] = &[
    "balance-rr",
    "active-backup",
    "balance-xor",
    "broadcast",
    "802.3ad",
    "balance-tlb",
    "balance-alb",
    "balance-slb",
    "lacp-balance-slb",
    "lacp-balance-tcp",
];

/// `pve-iface`: `^[a-z][a-z0-9_]{1,20}([:\.]\d+)?$`, 2 to 20 characters.
fn verify_iface(name: &str) -> Result<(), String> {
    let (base, suffix) = match name.rfind([':', '.']) {
        Some(at) => (&name[..at], Some(&name[at + 1..])),
        None => (name, None),
    };
    let base_ok = base.len() >= 2
        && base.len() <= 21
        && base.as_bytes()[0].is_ascii_alphabetic()
        && base.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let suffix_ok = suffix.is_none_or(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    if base_ok && suffix_ok {
        Ok(())
    } else {
        Err(format!("invalid network interface name '{name}'"))
    }
}

fn verify_iface_list(list: &str) -> Result<(), String> {
    crate::propstr::split_list(list)
        .iter()
        .map(String::as_str)
        .try_for_each(verify_iface)
}

fn verify_ipv4(s: &str) -> Result<(), String> {
    s.parse::<std::net::Ipv4Addr>()
        .map(|_| ())
        .map_err(|_| format!("value does not look like a valid IPv4 address '{s}'"))
}

fn verify_ipv6(s: &str) -> Result<(), String> {
    s.parse::<std::net::Ipv6Addr>()
        .map(|_| ())
        .map_err(|_| format!("value does not look like a valid IPv6 address '{s}'"))
}

fn verify_cidr(s: &str, v6: bool) -> Result<(), String> {
    let what = if v6 { "IPv6" } else { "IPv4" };
    let bad = || format!("value does not look like a valid {what} CIDR network");
    let (ip, mask) = s.split_once('/').ok_or_else(bad)?;
    let mask: u8 = mask.parse().map_err(|_| bad())?;
    let ok = if v6 {
        ip.parse::<std::net::Ipv6Addr>().is_ok() && mask <= 128
    } else {
        ip.parse::<std::net::Ipv4Addr>().is_ok() && mask <= 32
    };
    if ok { Ok(()) } else { Err(bad()) }
}

fn verify_cidr4(s: &str) -> Result<(), String> {
    verify_cidr(s, false)
}

fn verify_cidr6(s: &str) -> Result<(), String> {
    verify_cidr(s, true)
}

fn verify_vids(list: &str) -> Result<(), String> {
    for item in crate::propstr::split_list(list) {
        let (lo, hi) = item.split_once('-').unwrap_or((&item, &item));
        for tag in [lo, hi] {
            let n: u32 = tag
                .parse()
                .map_err(|_| format!("invalid VLAN tag '{tag}'"))?;
            if !(2..=4094).contains(&n) {
                return Err(format!("invalid VLAN tag '{n}'"));
            }
        }
    }
    Ok(())
}

const IFACE: Field = Field::str("iface").len(2, 20).format(verify_iface);

/// `json_config_properties`: what create and update take besides `iface`.
const CONFIG: &[Field] = &[
    Field::new("type", Ty::Enum(TYPES)).required(),
    Field::str("comments"),
    Field::str("comments6"),
    Field::boolean("autostart"),
    Field::boolean("bridge_vlan_aware"),
    Field::str("bridge_vids").format(verify_vids),
    Field::str("bridge_ports").format(verify_iface_list),
    Field::str("slaves").format(verify_iface_list),
    Field::one_of("bond_mode", BOND_MODES),
    Field::str("bond-primary").format(verify_iface),
    Field::one_of("bond_xmit_hash_policy", &["layer2", "layer2+3", "layer3+4"]),
    Field::str("vlan-raw-device").format(verify_iface),
    Field::int("vlan-id", Some(1), Some(4094)),
    Field::str("gateway").format(verify_ipv4),
    Field::str("netmask"),
    Field::str("address").format(verify_ipv4),
    Field::str("cidr").format(verify_cidr4),
    Field::int("mtu", Some(1280), Some(65520)),
    Field::str("gateway6").format(verify_ipv6),
    Field::int("netmask6", Some(0), Some(128)),
    Field::str("address6").format(verify_ipv6),
    Field::str("cidr6").format(verify_cidr6),
    Field::str("ovs_ports"),
    Field::str("ovs_bonds"),
    Field::str("ovs_bridge"),
    Field::str("ovs_options").max_len(1024),
    Field::int("ovs_tag", Some(1), Some(4094)),
];

fn fields(extra: &[Field]) -> Vec<Field> {
    CONFIG.iter().chain(extra).copied().collect()
}

/// `GET /nodes/{node}/network[?type=]`, with `changes` beside `data` when a file is pending.
async fn index(state: SimState, Path(node): Path<String>, params: Params) -> ApiResult<Response> {
    let p = spec::check(&params, &[Field::one_of("type", TYPE_FILTERS)])?;
    let cluster = state.0.cluster();
    let net = &cluster.node(&node)?.network;
    let list = net.listing(p.get("type").map(String::as_str));
    let mut body = json!({ "data": list });
    if let Some(changes) = net.changes() {
        body["changes"] = json!(changes);
    }
    Ok(axum::Json(body).into_response())
}

/// `GET /nodes/{node}/network/{iface}`.
async fn read(state: SimState, Path((node, iface)): Path<(String, String)>) -> ApiResult<Response> {
    let iface = spec::check_path(&IFACE, &iface)?;
    let cluster = state.0.cluster();
    cluster.node(&node)?.network.read(&iface).map(data)
}

/// `$map_cidr_to_address_netmask`.
fn split_cidr(p: &mut BTreeMap<String, String>) -> ApiResult<()> {
    for (cidr, address, netmask) in [
        ("cidr", "address", "netmask"),
        ("cidr6", "address6", "netmask6"),
    ] {
        let Some(value) = p.remove(cidr) else {
            continue;
        };
        if p.contains_key(address) {
            return Err(ApiError::param(
                address,
                format!("{address} conflicts with {cidr}"),
            ));
        }
        if p.contains_key(netmask) {
            return Err(ApiError::param(
                netmask,
                format!("{netmask} conflicts with {cidr}"),
            ));
        }
        let (ip, mask) = value.split_once('/').unwrap_or((&value, ""));
        p.insert(address.to_owned(), ip.to_owned());
        p.insert(netmask.to_owned(), mask.to_owned());
    }
    Ok(())
}

/// `$check_duplicate` for the gateways and `$check_duplicate_ports`.
fn check_duplicates(
    ifaces: &BTreeMap<String, Iface>,
    iface: &str,
    p: &BTreeMap<String, String>,
) -> ApiResult<()> {
    for (key, what) in [
        ("gateway", "Default gateway"),
        ("gateway6", "Default ipv6 gateway"),
    ] {
        if !p.contains_key(key) {
            continue;
        }
        if let Some((other, _)) = ifaces
            .iter()
            .find(|(n, d)| n.as_str() != iface && d.get(key).is_some_and(|g| !g.is_empty()))
        {
            return Err(ApiError::param(
                key,
                format!("{what} already exists on interface '{other}'."),
            ));
        }
    }
    let port_keys = ["bridge_ports", "ovs_ports", "slaves", "ovs_bonds"];
    let ports = |d: &BTreeMap<String, String>| -> Vec<String> {
        port_keys
            .iter()
            .filter_map(|k| d.get(*k))
            .flat_map(|v| crate::propstr::split_list(v))
            .collect()
    };
    let new = ports(p);
    let Some(param) = port_keys.iter().find(|k| p.contains_key(**k)) else {
        return Ok(());
    };
    for (other, d) in ifaces.iter().filter(|(n, _)| n.as_str() != iface) {
        if let Some(used) = ports(d).into_iter().find(|x| new.contains(x)) {
            return Err(ApiError::param(
                param,
                format!("{used} is already used on interface '{other}'."),
            ));
        }
    }
    Ok(())
}

/// The parameters an interface keeps: lists space-separated, as PVE writes them.
fn store(p: BTreeMap<String, String>) -> ApiResult<Iface> {
    let mut d = Iface::new();
    for (k, v) in p {
        if k.starts_with("ovs_") {
            return Err(ApiError::die(
                "Open VSwitch is not installed (need package 'openvswitch-switch')\n",
            ));
        }
        let v = match k.as_str() {
            "bridge_vids" => {
                let items = crate::propstr::split_list(&v);
                if items.is_empty() {
                    return Err(ApiError::param("bridge_vids", "VLAN list items are empty"));
                }
                items.join(" ")
            }
            "bridge_ports" | "slaves" => {
                let mut items = crate::propstr::split_list(&v);
                items.sort();
                items.dedup();
                items.join(" ")
            }
            _ => v,
        };
        d.insert(k, v);
    }
    Ok(d)
}

/// `POST /nodes/{node}/network`.
async fn create(state: SimState, Path(node): Path<String>, params: Params) -> ApiResult<Response> {
    let mut p = spec::check(&params, &fields(&[IFACE.required()]))?;
    let iface = p.remove("iface").unwrap_or_default();
    if p.get("type").is_some_and(|t| t.starts_with("OVS")) {
        return Err(ApiError::die(
            "Open VSwitch is not installed (need package 'openvswitch-switch')\n",
        ));
    }
    let mut cluster = state.0.cluster();
    cluster.node(&node)?;
    let Some(n) = cluster.nodes.get_mut(&node) else {
        return Err(ApiError::die("node vanished"));
    };
    let mut file = n.network.config().clone();
    if file.contains_key(&iface) {
        return Err(ApiError::param("iface", "interface already exists"));
    }
    check_duplicates(&file, &iface, &p)?;
    split_cidr(&mut p)?;
    let mut d = store(p)?;
    let priority = file
        .values()
        .filter_map(|d| d.get("priority")?.parse::<u64>().ok())
        .max()
        .unwrap_or(1)
        + 1;
    d.insert("priority".to_owned(), priority.to_string());
    file.insert(iface, d);
    n.network.write(file)?;
    Ok(data(Value::Null))
}

/// `PUT /nodes/{node}/network/{iface}`.
async fn update(
    state: SimState,
    Path((node, iface)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let iface = spec::check_path(&IFACE, &iface)?;
    let mut p = spec::check(&params, &fields(&[spec::DELETE_LIST]))?;
    let delete = p.remove("delete");
    let mut cluster = state.0.cluster();
    cluster.node(&node)?;
    let Some(n) = cluster.nodes.get_mut(&node) else {
        return Err(ApiError::die("node vanished"));
    };
    let mut file = n.network.config().clone();
    let Some(current) = file.get_mut(&iface) else {
        return Err(no_such_iface());
    };
    for key in crate::propstr::split_list(delete.as_deref().unwrap_or_default()) {
        current.remove(&key);
        match key.as_str() {
            "cidr" => {
                current.remove("address");
                current.remove("netmask");
            }
            "cidr6" => {
                current.remove("address6");
                current.remove("netmask6");
            }
            _ => {}
        }
    }
    split_cidr(&mut p)?;
    check_duplicates(&file, &iface, &p)?;
    let d = store(p)?;
    if let Some(current) = file.get_mut(&iface) {
        current.extend(d);
    }
    n.network.write(file)?;
    Ok(data(Value::Null))
}

/// `DELETE /nodes/{node}/network/{iface}`.
async fn remove(
    state: SimState,
    Path((node, iface)): Path<(String, String)>,
) -> ApiResult<Response> {
    let iface = spec::check_path(&IFACE, &iface)?;
    let mut cluster = state.0.cluster();
    cluster.node(&node)?;
    let Some(n) = cluster.nodes.get_mut(&node) else {
        return Err(ApiError::die("node vanished"));
    };
    let mut file = n.network.config().clone();
    if file.remove(&iface).is_none() {
        return Err(no_such_iface());
    }
    n.network.write(file)?;
    Ok(data(Value::Null))
}

/// `DELETE /nodes/{node}/network`: unlinks `interfaces.new`.
async fn revert(state: SimState, Path(node): Path<String>) -> ApiResult<Response> {
    let mut cluster = state.0.cluster();
    cluster.node(&node)?;
    if let Some(n) = cluster.nodes.get_mut(&node) {
        n.network.revert();
    }
    Ok(data(Value::Null))
}

/// `PUT /nodes/{node}/network`: a `srvreload` task that renames `interfaces.new` over
/// `interfaces` and runs `ifreload -a`. An injected failure ends it as `ifreload` failing
/// does: the file was already renamed.
async fn reload(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    spec::check(&params, &[Field::boolean("regenerate-frr")])?;
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        cluster.node(&node)?;
        cluster.new_task(&node, "srvreload", "networking", &caller.upid_user())
    };
    let body = Box::new(
        move |cluster: &mut Cluster, log: &mut Vec<String>, fail: Option<String>| {
            let cut = cluster
                .nodes
                .get_mut(&node)
                .map(|n| n.network.reload())
                .unwrap_or_default();
            reset_links(cluster, &node, &cut);
            match fail {
                Some(error) => {
                    log.push(format!("error: {error}"));
                    Err(format!("command 'ifreload -a' failed: {error}"))
                }
                None => Ok(0),
            }
        },
    );
    crate::worker::spawn(&sim, upid.clone(), "srvreload", None, body);
    Ok(data(json!(upid)))
}

/// Records on each running guest of `node` the links on a bridge the reload cut.
fn reset_links(cluster: &mut Cluster, node: &str, cut: &std::collections::BTreeSet<String>) {
    if cut.is_empty() {
        return;
    }
    for guest in cluster.guests.values_mut() {
        if guest.node != node || !guest.running {
            continue;
        }
        let on_cut: Vec<String> = guest
            .conf
            .main
            .iter()
            .filter(|(k, _)| k.starts_with("net"))
            .filter(|(_, v)| {
                v.split(',')
                    .filter_map(|p| p.strip_prefix("bridge="))
                    .any(|b| cut.contains(b))
            })
            .map(|(k, _)| k.clone())
            .collect();
        guest.events.extend(
            on_cut
                .into_iter()
                .map(crate::model::GuestEvent::BridgeReset),
        );
    }
}
