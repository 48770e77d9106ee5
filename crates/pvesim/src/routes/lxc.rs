//! The container routes, and `/nodes/{node}/lxc/{vmid}`: config (GET with `current`, PUT with
//! `digest`/`delete`/`revert`), `pending` and delete. Every route's parameters are checked
//! before its handler runs (`routes/checked.rs`). Create lives in `lxc_create.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::Path;
use axum::middleware;
use axum::response::Response;
use axum::routing::{get, post, put};
use axum::{Extension, Router};
use serde_json::{Value, json};

use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{GuestKind, now};
use crate::pending::{self, Env, Update};
use crate::server::Sim;
use crate::{propstr, schema, worker};

pub(crate) use super::lxc_create::create;

/// The container endpoints, each behind its parameter schema (`api_schema::lxc`).
pub(crate) fn routes() -> Router<Arc<Sim>> {
    use crate::api_schema::lxc as schema;
    use axum::handler::Handler;
    let v = |s: &'static crate::api_schema::Schema| {
        middleware::from_fn_with_state(s, super::checked::checked)
    };
    let ct = "/nodes/{node}/lxc/{vmid}";
    Router::new()
        .route(
            "/nodes/{node}/lxc",
            get(list.layer(v(&schema::LIST))).post(create.layer(v(&schema::CREATE))),
        )
        .route(
            ct,
            get(index.layer(v(&schema::GUEST))).delete(destroy.layer(v(&schema::DESTROY))),
        )
        .route(
            &format!("{ct}/config"),
            get(config.layer(v(&schema::CONFIG_GET)))
                .put(update_config.layer(v(&schema::CONFIG_PUT))),
        )
        .route(
            &format!("{ct}/pending"),
            get(pending.layer(v(&schema::GUEST))),
        )
        .route(
            &format!("{ct}/resize"),
            put(super::lxc_disk::resize.layer(v(&schema::RESIZE))),
        )
        .route(
            &format!("{ct}/clone"),
            post(super::lxc_clone::clone.layer(v(&schema::CLONE))),
        )
        .route(
            &format!("{ct}/template"),
            post(super::lxc_clone::template.layer(v(&schema::GUEST))),
        )
        .route(
            &format!("{ct}/interfaces"),
            get(super::lxc_net::interfaces.layer(v(&schema::GUEST))),
        )
        .route(
            &format!("{ct}/status"),
            get(super::lxc_status::index.layer(v(&schema::GUEST))),
        )
        .route(
            &format!("{ct}/status/current"),
            get(super::lxc_status::current.layer(v(&schema::GUEST))),
        )
        .route(
            &format!("{ct}/status/{{action}}"),
            post(
                super::lxc_status::action.layer(middleware::from_fn(super::checked::checked_power)),
            ),
        )
}

/// `GET /nodes/{node}/lxc`.
pub(crate) async fn list(state: SimState, Path(node): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    cluster.node(&node)?;
    let list: Vec<Value> = cluster
        .guests
        .values()
        .filter(|g| g.node == node && g.kind == GuestKind::Lxc)
        .map(super::lxc_status::status_json)
        .collect();
    Ok(data(Value::Array(list)))
}

/// `GET /nodes/{node}/lxc/{vmid}`: the directory index.
pub(crate) async fn index(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    state.0.cluster().guest_at(&node, GuestKind::Lxc, vmid)?;
    // API2/LXC.pm vmdiridx, in its order
    let names = [
        "config",
        "pending",
        "status",
        "vncproxy",
        "termproxy",
        "vncwebsocket",
        "spiceproxy",
        "migrate",
        "clone",
        "rrd",
        "rrddata",
        "firewall",
        "snapshot",
        "resize",
        "interfaces",
    ];
    Ok(data(Value::Array(
        names.iter().map(|n| json!({ "subdir": n })).collect(),
    )))
}

/// `GET .../config[?current=1]`.
pub(crate) async fn config(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let current = params.flag("current")?;
    if params.get("snapshot")?.is_some() {
        if current {
            let msg = "cannot use 'snapshot' parameter with 'current'";
            return Err(ApiError::params(BTreeMap::from([
                ("snapshot".to_owned(), msg.to_owned()),
                ("current".to_owned(), msg.to_owned()),
            ])));
        }
        return Err(ApiError::die("snapshot does not exist"));
    }
    let mut cluster = state.0.cluster();
    let guest = cluster.guest_at(&node, GuestKind::Lxc, vmid)?;
    Ok(data(guest.conf.to_json(current)))
}

/// `GET .../pending`.
pub(crate) async fn pending(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    let guest = cluster.guest_at(&node, GuestKind::Lxc, vmid)?;
    Ok(data(guest.conf.pending_array()))
}

/// The config keys of a create or update request (already checked against the route's
/// schema, `api_schema::lxc`), normalised as `update_pct_config` stores them.
pub(crate) fn config_params(params: &Params) -> ApiResult<BTreeMap<String, String>> {
    let mut set = BTreeMap::new();
    for key in params.keys() {
        if crate::api_schema::lxc::config_prop(key).is_none() {
            continue;
        }
        let Some(value) = params.get(key)? else {
            continue;
        };
        let value = match key.as_str() {
            "cpuunits" => schema::clamp_cpuunits(value),
            "description" => {
                crate::conf::normalize_description(&value.replace("\r\n", "\n")).unwrap_or_default()
            }
            _ => value.to_owned(),
        };
        set.insert(key.clone(), value);
    }
    Ok(set)
}

/// `check_ct_modify_config_perm`: the root@pam-only settings (a token is never root@pam).
pub(crate) fn check_root_only(
    caller: &Caller,
    current: &BTreeMap<String, String>,
    set: &BTreeMap<String, String>,
    delete: &[String],
) -> ApiResult<()> {
    if caller.is_root() {
        return Ok(());
    }
    let perm = |what: &str| {
        Err(ApiError::forbidden(format!(
            "Permission check failed ({what})"
        )))
    };
    for (key, value) in set {
        if key == "rootfs" || key.starts_with("mp") {
            let volume = propstr::parse(value, Some("volume"))
                .ok()
                .and_then(|p| p.get("volume").cloned())
                .unwrap_or_default();
            if volume.starts_with('/') {
                let kind = if volume.starts_with("/dev/") {
                    "device"
                } else {
                    "bind"
                };
                return perm(&format!(
                    "mount point type {kind} is only allowed for root@pam"
                ));
            }
        } else if key.starts_with("dev") {
            return perm("configuring device passthrough is only allowed for root@pam");
        } else if key == "hookscript" {
            return perm("changing the hookscript is only allowed for root@pam");
        }
    }
    let features_touched = set.contains_key("features") || delete.iter().any(|d| d == "features");
    if features_touched {
        if current.get("unprivileged").is_none_or(|u| u != "1") {
            return perm(
                "changing feature flags for privileged container is only allowed for root@pam",
            );
        }
        let old = propstr::parse(current.get("features").map_or("", String::as_str), None)
            .unwrap_or_default();
        let new = propstr::parse(set.get("features").map_or("", String::as_str), None)
            .unwrap_or_default();
        let flag =
            |p: &propstr::Props, k: &str| p.get(k).cloned().unwrap_or_else(|| "0".to_owned());
        if ["fuse", "keyctl", "mknod", "mount", "force_rw_sys"]
            .iter()
            .any(|k| flag(&old, k) != flag(&new, k))
        {
            return perm("changing feature flags (except nesting) is only allowed for root@pam");
        }
    }
    Ok(())
}

/// `PUT .../config`: synchronous; hot-plugs on a running CT, the rest goes to pending.
pub(crate) async fn update_config(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let digest = params.get("digest")?.map(str::to_owned);
    let any_option = params.keys().any(|k| k != "digest");
    if !any_option {
        return Err(ApiError::die("no options specified"));
    }
    let set = config_params(&params)?;
    let req = Update {
        set,
        delete: params.list("delete"),
        revert: params.list("revert"),
    };
    let sim = state.0;
    let mut guard = sim.cluster();
    let cluster = &mut *guard;
    let node_bridges = cluster.node(&node)?.network.bridges();
    if let Some(script) = req.set.get("hookscript") {
        crate::snippets::check_hookscript(cluster, &node, script).map_err(ApiError::die)?;
    }
    let guest = cluster.guest_at(&node, GuestKind::Lxc, vmid)?;
    guest.check_lock()?;
    if let Some(d) = &digest
        && *d != guest.conf.digest()
    {
        return Err(ApiError::die(
            "detected modified configuration - file changed by other user? Try again.",
        ));
    }
    check_root_only(&caller, &guest.conf.main, &req.set, &req.delete)?;
    check_update_lists(&req)?;
    let mut conf = guest.conf.clone();
    let running = guest.running;
    let mut env = Env {
        node: &node,
        vmid,
        storages: &mut cluster.storages,
        bridges: &node_bridges,
        now: now(),
        events: Vec::new(),
        warnings: Vec::new(),
    };
    pending::update(&mut conf, running, &req, &mut env)?;
    let events = std::mem::take(&mut env.events);
    for w in &env.warnings {
        tracing::debug!(vmid, warning = %w, "pve-sim config update warning");
    }
    if let Some(guest) = cluster.guests.get_mut(&vmid) {
        guest.conf = conf;
        guest.events.extend(events);
    }
    Ok(data(Value::Null))
}

fn check_update_lists(req: &Update) -> ApiResult<()> {
    for (list, name) in [(&req.revert, "revert"), (&req.delete, "delete")] {
        for opt in list {
            if crate::api_schema::lxc::config_prop(opt).is_none() {
                return Err(ApiError::param(name, format!("unknown option '{opt}'")));
            }
            if req.set.contains_key(opt) {
                let msg = if name == "revert" {
                    format!("you can't use '-{opt}' and '-revert {opt}' at the same time")
                } else {
                    format!("you can't use '-{opt}' and -delete {opt}' at the same time")
                };
                return Err(ApiError::param(name, msg));
            }
        }
    }
    if let Some(opt) = req.delete.iter().find(|d| req.revert.contains(d)) {
        return Err(ApiError::param(
            "delete",
            format!("you can't use '-delete {opt}' and '-revert {opt}' at the same time"),
        ));
    }
    Ok(())
}

/// `DELETE /nodes/{node}/lxc/{vmid}[?force=1&purge=1]`.
pub(crate) async fn destroy(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let force = params.flag("force")?;
    let purge = params.flag("purge")?;
    let unreferenced = params.flag("destroy-unreferenced-disks")?;
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        let guest = cluster.guest_at(&node, GuestKind::Lxc, vmid)?;
        // `destroy_vm`'s `$early_checks`: protection, lock, HA; then the running state
        guest.check_protection(&format!("can't remove CT {vmid}"))?;
        guest.check_lock()?;
        if guest.ha_managed && !purge {
            return Err(ApiError::die(format!(
                "unable to remove CT {vmid} - used in HA resources and purge parameter not set."
            )));
        }
        if guest.running && !force {
            return Err(ApiError::die(format!(
                "unable to destroy CT {vmid} - container is running"
            )));
        }
        cluster.new_task(&node, "vzdestroy", &vmid.to_string(), &caller.upid_user())
    };
    let node2 = node;
    worker::spawn(
        &sim,
        upid.clone(),
        "vzdestroy",
        Some(vmid),
        Box::new(move |cluster, log, fail| {
            if let Some(msg) = fail {
                return Err(msg);
            }
            if cluster.guests.get(&vmid).is_some_and(|g| g.running) {
                log.push(format!("forced to stop CT {vmid} before destroying!"));
            }
            if let Some(guest) = cluster.guests.remove(&vmid) {
                crate::volumes::destroy_referenced(cluster, &node2, vmid, &guest.conf);
            }
            cluster.purge_cluster_config(vmid);
            if unreferenced {
                cluster.destroy_volumes_of(&node2, vmid);
            }
            log.push(format!("purging CT {vmid} from related configurations.."));
            Ok(0)
        }),
    );
    Ok(data(json!(upid)))
}
