//! Resource pools (`user.cfg` pools, `PVE::API2::Pool`): create, list and read with members,
//! update (add or with `delete` remove guests and storages, `allow-move`, `comment`) and delete,
//! nested names `a/b/c`; every refusal with PVE's words, wrapped the way
//! `lock_user_config` wraps them (`create pool failed: ...`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::firewall::spec::{self, Field};
use crate::model::Cluster;
use crate::routes::Params;

/// One pool.
#[derive(Debug, Default, Clone)]
pub(crate) struct Pool {
    pub(crate) comment: Option<String>,
    pub(crate) vms: BTreeSet<u32>,
    pub(crate) storage: BTreeSet<String>,
}

/// `pve-poolid` (`verify_poolname`).
fn verify_poolname(name: &str) -> Result<(), String> {
    let mut parts: Vec<&str> = name.split('/').collect();
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    if parts.len() > 3 {
        return Err(format!(
            "pool name '{name}' nested too deeply (max levels = 3)"
        ));
    }
    let part_ok = |p: &&str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_')
    };
    let all: Vec<&str> = name.split('/').collect();
    if all.len() > 3 || !all.iter().all(part_ok) {
        return Err(format!("pool name '{name}' contains invalid characters"));
    }
    Ok(())
}

/// `pve-vmid-list`.
fn verify_vmid_list(list: &str) -> Result<(), String> {
    for id in crate::propstr::split_list(list) {
        if !id.chars().all(|c| c.is_ascii_digit()) || id.parse::<u32>().is_err() {
            return Err(format!("value does not look like a valid VM ID: {id}"));
        }
    }
    Ok(())
}

/// `pve-storage-id-list`.
fn verify_storage_list(list: &str) -> Result<(), String> {
    for id in crate::propstr::split_list(list) {
        let ok = id.len() >= 2
            && id.starts_with(|c: char| c.is_ascii_alphabetic())
            && id.ends_with(|c: char| c.is_ascii_alphanumeric())
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !ok {
            return Err(format!("storage ID '{id}' contains illegal characters"));
        }
    }
    Ok(())
}

pub(crate) const POOLID: Field = Field::str("poolid").format(verify_poolname);
const COMMENT: Field = Field::str("comment");
const UPDATE: &[Field] = &[
    POOLID.required(),
    COMMENT,
    Field::str("vms").format(verify_vmid_list),
    Field::str("storage").format(verify_storage_list),
    Field::boolean("allow-move"),
    Field::boolean("delete"),
];
const TYPES: &[&str] = &["qemu", "lxc", "storage"];

/// The pool a guest belongs to.
pub(crate) fn pool_of(cluster: &Cluster, vmid: u32) -> Option<&str> {
    cluster
        .pools
        .iter()
        .find(|(_, p)| p.vms.contains(&vmid))
        .map(|(name, _)| name.as_str())
}

/// `check_pool_exist` (guest create with `pool`).
pub(crate) fn check_exists(cluster: &Cluster, pool: Option<&str>) -> ApiResult<()> {
    match pool {
        Some(p) if !cluster.pools.contains_key(p) => {
            Err(ApiError::die(format!("pool '{p}' does not exist")))
        }
        _ => Ok(()),
    }
}

/// `add_vm_to_pool` after a guest is created with `pool`.
pub(crate) fn add_vm(cluster: &mut Cluster, vmid: u32, pool: Option<&str>) {
    if let Some(p) = pool.and_then(|p| cluster.pools.get_mut(p)) {
        p.vms.insert(vmid);
    }
}

/// `GET /pools[?poolid=..[&type=..]]`.
pub(crate) fn index(cluster: &Cluster, params: &Params) -> ApiResult<Value> {
    let p = spec::check(params, &[POOLID, Field::one_of("type", TYPES)])?;
    if p.contains_key("type") && !p.contains_key("poolid") {
        return Err(ApiError::param(
            "poolid",
            "missing property - 'type' requires this property",
        ));
    }
    let Some(poolid) = p.get("poolid") else {
        let list = cluster
            .pools
            .iter()
            .map(|(name, pool)| summary(name, pool))
            .collect();
        return Ok(Value::Array(list));
    };
    let info = read(cluster, poolid, p.get("type").map(String::as_str))?;
    Ok(json!([info]))
}

fn summary(name: &str, pool: &Pool) -> Value {
    let mut v = json!({ "poolid": name });
    if let Some(c) = &pool.comment {
        v["comment"] = json!(c);
    }
    v
}

/// `GET /pools/{poolid}`: comment and members (guests as in `cluster/resources`).
pub(crate) fn read(cluster: &Cluster, poolid: &str, ty: Option<&str>) -> ApiResult<Value> {
    let pool = cluster
        .pools
        .get(poolid)
        .ok_or_else(|| ApiError::die(format!("pool '{poolid}' does not exist")))?;
    let mut members = Vec::new();
    for vmid in &pool.vms {
        let Some(g) = cluster.guests.get(vmid) else {
            continue;
        };
        if ty.is_some_and(|t| t != g.kind.as_str()) {
            continue;
        }
        let online = cluster.nodes.get(&g.node).is_some_and(|n| n.online);
        members.push(crate::routes::guest_resource(g, online));
    }
    if ty.is_none_or(|t| t == "storage") {
        for sid in &pool.storage {
            let found = cluster.storages.iter().find(|((_, s), _)| s == sid);
            if let Some(((node, _), s)) = found {
                members.push(json!({
                    "id": format!("storage/{node}/{sid}"), "type": "storage", "node": node,
                    "storage": sid, "status": "available", "plugintype": s.stype,
                    "maxdisk": s.total, "disk": s.used(),
                    "content": s.content.iter().cloned().collect::<Vec<_>>().join(","),
                }));
            }
        }
    }
    let mut v = summary(poolid, pool);
    v["members"] = Value::Array(members);
    Ok(v)
}

/// `POST /pools`.
pub(crate) fn create(cluster: &mut Cluster, params: &Params) -> ApiResult<()> {
    let p = spec::check(params, &[POOLID.required(), COMMENT])?;
    let poolid = p.get("poolid").cloned().unwrap_or_default();
    let failed = |msg: String| ApiError::die(format!("create pool failed: {msg}"));
    if cluster.pools.contains_key(&poolid) {
        return Err(failed(format!("pool '{poolid}' already exists")));
    }
    let leaf = match poolid.rsplit_once('/') {
        Some((parent, leaf)) => {
            if !cluster.pools.contains_key(parent) {
                return Err(failed(format!(
                    "parent '{parent}' of pool '{poolid}' does not exist"
                )));
            }
            leaf
        }
        None => poolid.as_str(),
    };
    if !leaf.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(failed("pool name must start with a letter".to_owned()));
    }
    let pool = Pool {
        comment: p.get("comment").filter(|c| !c.is_empty()).cloned(),
        ..Pool::default()
    };
    cluster.pools.insert(poolid, pool);
    Ok(())
}

/// `PUT /pools` and `PUT /pools/{poolid}`: `poolid` comes in `params` or the path.
pub(crate) fn update(
    cluster: &mut Cluster,
    params: &Params,
    path_id: Option<&str>,
) -> ApiResult<()> {
    let mut fields = UPDATE.to_vec();
    if path_id.is_some() {
        fields.retain(|f| f.name != "poolid");
    }
    let mut p = spec::check(params, &fields)?;
    if let Some(id) = path_id {
        p.insert("poolid".to_owned(), spec::check_path(&POOLID, id)?);
    }
    let failed = |msg: String| ApiError::die(format!("update pools failed: {msg}"));
    let poolid = p.get("poolid").cloned().unwrap_or_default();
    let mut pools = cluster.pools.clone();
    let Some(pool) = pools.get_mut(&poolid) else {
        return Err(failed(format!("pool '{poolid}' does not exist")));
    };
    if let Some(c) = p.get("comment") {
        pool.comment = Some(c.clone()).filter(|c| !c.is_empty());
    }
    let delete = p.get("delete").is_some_and(|d| d == "1");
    let allow_move = p.get("allow-move").is_some_and(|d| d == "1");
    for id in crate::propstr::split_list(p.get("vms").map_or("", String::as_str)) {
        let vmid: u32 = id.parse().unwrap_or_default();
        update_vm(&mut pools, &poolid, vmid, delete, allow_move).map_err(failed)?;
    }
    let pool = pools.entry(poolid).or_default();
    for sid in crate::propstr::split_list(p.get("storage").map_or("", String::as_str)) {
        match (delete, pool.storage.contains(&sid)) {
            (true, false) => return Err(failed(format!("Storage '{sid}' is not a pool member"))),
            (false, true) => {
                return Err(failed(format!("Storage '{sid}' is already a pool member")));
            }
            (true, true) => {
                pool.storage.remove(&sid);
            }
            (false, false) => {
                pool.storage.insert(sid);
            }
        }
    }
    cluster.pools = pools;
    Ok(())
}

fn update_vm(
    pools: &mut BTreeMap<String, Pool>,
    poolid: &str,
    vmid: u32,
    delete: bool,
    allow_move: bool,
) -> Result<(), String> {
    let member = pools.get(poolid).is_some_and(|p| p.vms.contains(&vmid));
    if delete {
        if !member {
            return Err(format!("VM {vmid} is not a pool member"));
        }
        pools
            .entry(poolid.to_owned())
            .or_default()
            .vms
            .remove(&vmid);
        return Ok(());
    }
    if member {
        return Err(format!("VM {vmid} is already a pool member"));
    }
    let existing = pools
        .iter()
        .find(|(_, p)| p.vms.contains(&vmid))
        .map(|(n, _)| n.clone());
    if let Some(other) = existing {
        if !allow_move {
            return Err(format!(
                "VM {vmid} belongs already to pool '{other}' and 'allow-move' is not set"
            ));
        }
        pools.entry(other).or_default().vms.remove(&vmid);
    }
    pools.entry(poolid.to_owned()).or_default().vms.insert(vmid);
    Ok(())
}

/// `DELETE /pools?poolid=` and `DELETE /pools/{poolid}`: only an empty pool (members that no
/// longer exist do not count).
pub(crate) fn delete(
    cluster: &mut Cluster,
    params: &Params,
    path_id: Option<&str>,
) -> ApiResult<()> {
    let poolid = match path_id {
        Some(id) => {
            spec::check(params, &[])?;
            spec::check_path(&POOLID, id)?
        }
        None => {
            let p = spec::check(params, &[POOLID.required()])?;
            p.get("poolid").cloned().unwrap_or_default()
        }
    };
    let failed = |msg: String| ApiError::die(format!("delete pool failed: {msg}"));
    let pool = cluster
        .pools
        .get(&poolid)
        .ok_or_else(|| failed(format!("pool '{poolid}' does not exist")))?;
    let prefix = format!("{poolid}/");
    if let Some(sub) = cluster.pools.keys().find(|k| k.starts_with(&prefix)) {
        return Err(failed(format!(
            "pool '{poolid}' is not empty (contains pool '{sub}')"
        )));
    }
    if let Some(vmid) = pool.vms.iter().find(|v| cluster.guests.contains_key(v)) {
        return Err(failed(format!(
            "pool '{poolid}' is not empty (contains VM {vmid})"
        )));
    }
    let defined = |sid: &String| cluster.storages.keys().any(|(_, s)| s == sid);
    if let Some(sid) = pool.storage.iter().find(|s| defined(s)) {
        return Err(failed(format!(
            "pool '{poolid}' is not empty (contains storage '{sid}')"
        )));
    }
    cluster.pools.remove(&poolid);
    Ok(())
}
