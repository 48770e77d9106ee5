//! `GET /pools[?poolid=&type=]` (pve-manager `PVE/API2/Pool.pm`, `index`): the pools the
//! scenario declares, or one pool with its members. Read-only: creating and changing pools is
//! the pool routes' own.

use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};

use super::cluster::guest_resource;
use super::{Params, SimState, data};
use crate::error::{ApiError, ApiResult};

/// One pool as the scenario declares it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolSpec {
    pub poolid: String,
    #[serde(default)]
    pub comment: Option<String>,
    /// Member guests by VMID.
    #[serde(default)]
    pub vms: Vec<u32>,
    /// Member storages by id.
    #[serde(default)]
    pub storage: Vec<String>,
}

/// `verify_poolname`: up to three `/`-separated levels of `[A-Za-z0-9.-_]`.
fn check_poolid(poolid: &str) -> ApiResult<()> {
    let levels: Vec<&str> = poolid.split('/').collect();
    if levels.len() > 3 {
        return Err(ApiError::param(
            "poolid",
            format!("pool name '{poolid}' nested too deeply (max levels = 3)"),
        ));
    }
    let valid = |level: &str| {
        !level.is_empty()
            && level
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    };
    if !levels.iter().all(|l| valid(l)) {
        return Err(ApiError::param(
            "poolid",
            format!("pool name '{poolid}' contains invalid characters"),
        ));
    }
    Ok(())
}

/// `GET /pools`: every pool (`poolid`, `comment`), or with `poolid` that pool and its members
/// (guests in VMID order as strings sort, then storages), optionally of one `type`.
pub(crate) async fn index(state: SimState, params: Params) -> ApiResult<Response> {
    let sim = state.0;
    let kind = params.get("type")?.map(str::to_owned);
    if let Some(t) = kind.as_deref()
        && !["qemu", "lxc", "storage"].contains(&t)
    {
        return Err(ApiError::param(
            "type",
            format!("value '{t}' does not have a value in the enumeration 'qemu, lxc, storage'"),
        ));
    }
    let cluster = sim.cluster();
    let Some(poolid) = params.get("poolid")? else {
        if kind.is_some() {
            return Err(ApiError::param(
                "type",
                "parameter 'type' requires parameter 'poolid'",
            ));
        }
        let list: Vec<Value> = cluster.pools.values().map(summary).collect();
        return Ok(data(Value::Array(list)));
    };
    check_poolid(poolid)?;
    let pool = cluster
        .pools
        .get(poolid)
        .ok_or_else(|| ApiError::die(format!("pool '{poolid}' does not exist")))?;
    let mut vmids: Vec<String> = pool.vms.iter().map(u32::to_string).collect();
    vmids.sort();
    let mut members: Vec<Value> = vmids
        .iter()
        .filter_map(|id| cluster.guests.get(&id.parse::<u32>().ok()?))
        .filter(|g| kind.as_deref().is_none_or(|t| t == g.kind.as_str()))
        .map(|g| guest_resource(g, !sim.faults.is_offline(&g.node)))
        .collect();
    if kind.as_deref().is_none_or(|t| t == "storage") {
        let mut ids = pool.storage.clone();
        ids.sort();
        for sid in ids {
            let Some(((node, _), s)) = cluster.storages.iter().find(|((_, id), _)| *id == sid)
            else {
                continue;
            };
            members.push(json!({
                "id": format!("storage/{node}/{sid}"), "storage": sid, "node": node,
                "type": "storage", "status": "available", "plugintype": s.stype,
                "content": s.content.iter().cloned().collect::<Vec<_>>().join(","),
                "maxdisk": s.total, "disk": s.used(), "shared": u8::from(s.shared),
            }));
        }
    }
    let mut entry = summary(pool);
    entry["members"] = Value::Array(members);
    Ok(data(json!([entry])))
}

fn summary(pool: &PoolSpec) -> Value {
    let mut entry = json!({ "poolid": pool.poolid });
    if let Some(comment) = &pool.comment {
        entry["comment"] = json!(comment);
    }
    entry
}
