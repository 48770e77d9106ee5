//! `/version`, `/nodes`, `/cluster/resources` and `/cluster/nextid`.

use axum::response::Response;
use serde_json::{Value, json};

use super::{Params, SimState, data, parse_vmid};
use crate::error::{ApiError, ApiResult};
use crate::model::{Guest, now};
use crate::server::Sim;

/// `GET /version`.
pub(crate) async fn version() -> Response {
    data(
        json!({ "version": "9.2.11", "release": "9.2", "repoid": "14a22df3", "console": "xtermjs" }),
    )
}

/// `GET /nodes`.
pub(crate) async fn nodes(state: SimState) -> Response {
    let sim = state.0;
    let cluster = sim.cluster();
    let list: Vec<Value> = cluster
        .nodes
        .values()
        .map(|n| {
            let online = !sim.faults.is_offline(&n.name);
            json!({
                "node": n.name, "id": format!("node/{}", n.name), "type": "node",
                "status": if online { "online" } else { "offline" },
                "cpu": 0.02, "maxcpu": 16, "mem": 4_u64 << 30, "maxmem": 64_u64 << 30,
                "disk": 10_u64 << 30, "maxdisk": 100_u64 << 30, "uptime": 86_400, "level": "",
                "ssl_fingerprint": "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF",
            })
        })
        .collect();
    data(Value::Array(list))
}

/// The `cluster/resources` entry of one guest (`status: unknown` on an offline node).
pub(crate) fn guest_resource(g: &Guest, node_online: bool) -> Value {
    let maxdisk = 4_u64 << 30;
    let mut v = json!({
        "id": format!("{}/{}", g.kind.as_str(), g.vmid), "type": g.kind.as_str(), "vmid": g.vmid,
        "name": g.name(), "node": g.node,
        "status": if !node_online { "unknown" } else if g.running { "running" } else { "stopped" },
        "template": u8::from(g.is_template()),
        "maxmem": g.memory_mib() << 20, "mem": if g.running { (g.memory_mib() << 20) / 4 } else { 0 },
        "maxdisk": maxdisk, "disk": if g.running { maxdisk / 8 } else { 0 },
        "maxcpu": g.conf.main.get("cores").and_then(|c| c.parse::<u64>().ok()).unwrap_or(1),
        "cpu": 0, "uptime": g.started_at.map_or(0, |s| now().saturating_sub(s)),
        "netin": 0, "netout": 0, "diskread": 0, "diskwrite": 0,
    });
    if let Some(tags) = g.conf.main.get("tags") {
        v["tags"] = json!(tags);
    }
    if let Some(lock) = g.lock() {
        v["lock"] = json!(lock);
    }
    if g.ha_managed {
        v["hastate"] = json!(if g.running { "started" } else { "stopped" });
    }
    v
}

/// `GET /cluster/resources[?type=vm|node|storage]`.
pub(crate) async fn resources(state: SimState, params: Params) -> ApiResult<Response> {
    let sim = state.0;
    let filter = params.get("type")?.map(str::to_owned);
    if let Some(t) = filter.as_deref()
        && !["vm", "node", "storage", "sdn"].contains(&t)
    {
        return Err(ApiError::param(
            "type",
            format!(
                "value '{t}' does not have a value in the enumeration 'vm, storage, node, sdn'"
            ),
        ));
    }
    let key = filter.clone().unwrap_or_default();
    let staleness = sim.faults.resources_staleness();
    let mut cache = sim
        .resources_cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((taken, value)) = cache.get(&key)
        && taken.elapsed() < staleness
    {
        return Ok(data(value.clone()));
    }
    let value = resource_list(&sim, filter.as_deref());
    cache.insert(key, (std::time::Instant::now(), value.clone()));
    Ok(data(value))
}

/// The current `cluster/resources` list for a `type` filter.
fn resource_list(sim: &Sim, filter: Option<&str>) -> Value {
    let cluster = sim.cluster();
    let mut out = Vec::new();
    if filter.is_none_or(|t| t == "vm") {
        out.extend(cluster.guests.values().map(|g| {
            let mut v = guest_resource(g, !sim.faults.is_offline(&g.node));
            if let Some(pool) = crate::pools::pool_of(&cluster, g.vmid) {
                v["pool"] = json!(pool);
            }
            v
        }));
    }
    if filter.is_none_or(|t| t == "node") {
        for n in cluster.nodes.values() {
            let online = !sim.faults.is_offline(&n.name);
            out.push(
                json!({ "id": format!("node/{}", n.name), "type": "node", "node": n.name,
                "status": if online { "online" } else { "offline" } }),
            );
        }
    }
    if filter.is_none_or(|t| t == "storage") {
        for ((node, sid), s) in &cluster.storages {
            out.push(json!({ "id": format!("storage/{node}/{sid}"), "type": "storage", "node": node, "storage": sid,
                "status": "available", "content": s.content.iter().cloned().collect::<Vec<_>>().join(","),
                "plugintype": s.stype, "maxdisk": s.total, "disk": s.used(), "shared": u8::from(s.shared) }));
        }
    }
    Value::Array(out)
}

/// `GET /cluster/nextid[?vmid=N]`: the lowest free id, or asserts `vmid` is free.
pub(crate) async fn nextid(state: SimState, params: Params) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    match params.get("vmid")? {
        Some(text) => {
            let vmid = parse_vmid(text)?;
            if cluster.guests.contains_key(&vmid) {
                return Err(ApiError::param("vmid", format!("VM {vmid} already exists")));
            }
            // PVE returns the parameter itself here, a string
            Ok(data(json!(vmid.to_string())))
        }
        None => Ok(data(json!(cluster.next_id()))),
    }
}
