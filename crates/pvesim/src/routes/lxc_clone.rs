//! `POST /nodes/{node}/lxc/{vmid}/template` (`template`, task `vztemplate`: every volume becomes
//! a base volume) and `POST .../clone` (`clone_vm`, task `vzclone`), after pve-container's
//! `PVE/API2/LXC.pm` and `PVE::LXC::template_create`.

use std::collections::BTreeMap;

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::json;

use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::conf::Conf;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, Guest, GuestKind, now};
use crate::storage::storage_of;
use crate::{propstr, worker};

/// `POST .../template`.
pub(crate) async fn template(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        check_template(&mut cluster, &node, vmid)?;
        cluster.new_task(&node, "vztemplate", &vmid.to_string(), &caller.upid_user())
    };
    let body = Box::new(
        move |cluster: &mut Cluster, _log: &mut Vec<String>, fail: Option<String>| {
            if let Some(msg) = fail {
                return Err(msg);
            }
            template_create(cluster, &node, vmid)?;
            Ok(0)
        },
    );
    worker::spawn(&sim, upid, "vztemplate", Some(vmid), body);
    // pve-container forks the worker inside the config lock and answers `null`
    Ok(data(serde_json::Value::Null))
}

/// `template`'s checks under the config lock.
fn check_template(cluster: &mut Cluster, node: &str, vmid: u32) -> ApiResult<()> {
    let guest = cluster.guest_at(node, GuestKind::Lxc, vmid)?;
    guest.check_lock()?;
    if guest.is_template() {
        return Err(ApiError::die("you can't convert a template to a template"));
    }
    if guest.running {
        return Err(ApiError::die(
            "you can't convert a CT to template if the CT is running",
        ));
    }
    Ok(())
}

/// Whether `key` is `prefix` and a number (`mp0`, `net3`).
fn numbered(key: &str, prefix: &str) -> bool {
    key.strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The storage-backed mount points of a container config: (key, parsed value).
fn volumes(conf: &BTreeMap<String, String>) -> Vec<(String, propstr::Props)> {
    conf.iter()
        .filter(|(k, _)| *k == "rootfs" || numbered(k, "mp"))
        .filter_map(|(k, v)| Some((k.clone(), propstr::parse(v, Some("volume")).ok()?)))
        .collect()
}

/// `PVE::LXC::template_create`: every volume must support templates (not thick LVM), then each
/// becomes a base volume and the config says `template: 1`.
fn template_create(cluster: &mut Cluster, node: &str, vmid: u32) -> Result<(), String> {
    let conf = cluster
        .guest_at(node, GuestKind::Lxc, vmid)
        .map_err(|e| e.message)?
        .conf
        .main
        .clone();
    let volumes: Vec<(String, propstr::Props)> = volumes(&conf)
        .into_iter()
        .filter(|(_, p)| p.get("volume").and_then(|v| storage_of(v)).is_some())
        .collect();
    for (_, props) in &volumes {
        let volid = props.get("volume").map_or("", String::as_str);
        let sid = storage_of(volid).unwrap_or_default();
        let thick = cluster
            .storages
            .get(&(node.to_owned(), sid.to_owned()))
            .is_none_or(|s| s.stype == "lvm");
        if thick {
            return Err(format!("Template feature is not available for '{volid}'"));
        }
    }
    let mut written = BTreeMap::new();
    for (key, mut props) in volumes {
        let volid = props.get("volume").cloned().unwrap_or_default();
        let sid = storage_of(&volid).unwrap_or_default().to_owned();
        let storage = cluster.storage_mut(node, &sid).map_err(|e| e.message)?;
        if let Some(base) = storage.create_base(&volid) {
            props.insert("volume".to_owned(), base);
        }
        let required: &[&str] = if key == "rootfs" { &[] } else { &["mp"] };
        written.insert(key, propstr::print(&props, Some("volume"), required));
    }
    if let Some(g) = cluster.guests.get_mut(&vmid) {
        g.conf.main.extend(written);
        g.conf.main.insert("template".to_owned(), "1".to_owned());
    }
    Ok(())
}

/// A checked clone request.
struct CloneJob {
    node: String,
    vmid: u32,
    newid: u32,
    full: bool,
    storage: Option<String>,
    target: Option<String>,
    pool: Option<String>,
    /// The new config (without volumes), the `create` lock on it.
    newconf: BTreeMap<String, String>,
    /// Volumes to copy or link: key -> parsed mount point.
    mounts: Vec<(String, propstr::Props)>,
}

/// `POST .../clone`.
pub(crate) async fn clone(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let missing = || ApiError::param("newid", "property is missing and it is not optional");
    let newid = parse_vmid(params.get("newid")?.ok_or_else(missing)?)?;
    let sim = state.0;
    let (upid, job) = {
        let mut cluster = sim.cluster();
        let job = check_clone(&mut cluster, &node, vmid, newid, &params)?;
        let mut conf = Conf::default();
        conf.main.insert("lock".to_owned(), "create".to_owned());
        cluster
            .guests
            .insert(newid, new_container(newid, &node, conf));
        if let Some(source) = cluster.guests.get_mut(&vmid) {
            source
                .conf
                .main
                .insert("lock".to_owned(), "disk".to_owned());
        }
        (
            cluster.new_task(&node, "vzclone", &vmid.to_string(), &caller.upid_user()),
            job,
        )
    };
    let body = Box::new(
        move |cluster: &mut Cluster, log: &mut Vec<String>, fail: Option<String>| {
            let result = fail.map_or_else(|| run_clone(cluster, &job, log), Err);
            if let Some(source) = cluster.guests.get_mut(&job.vmid) {
                source.conf.main.remove("lock");
            }
            if let Err(e) = result {
                cluster.destroy_volumes_of(&job.node, job.newid);
                cluster.guests.remove(&job.newid);
                return Err(format!("clone failed: {e}"));
            }
            result
        },
    );
    worker::spawn(&sim, upid.clone(), "vzclone", Some(vmid), body);
    Ok(data(json!(upid)))
}

fn new_container(vmid: u32, node: &str, conf: Conf) -> Guest {
    Guest {
        vmid,
        node: node.to_owned(),
        kind: GuestKind::Lxc,
        conf,
        running: false,
        started_at: None,
        pid: None,
        booted: None,
        ha_managed: false,
        events: Vec::new(),
        ignores_acpi: false,
        cloudinit_generated: None,
    }
}

/// `clone_vm`'s synchronous part: target and storage, the source's lock, the new id, then the
/// full/linked rules for each mount point and the new config (new MACs, no template flag).
fn check_clone(
    cluster: &mut Cluster,
    node: &str,
    vmid: u32,
    newid: u32,
    params: &Params,
) -> ApiResult<CloneJob> {
    let storage = params.get("storage")?.map(str::to_owned);
    let target = params
        .get("target")?
        .filter(|t| *t != node && *t != "localhost")
        .map(str::to_owned);
    if let Some(target) = &target {
        cluster
            .node(target)
            .map_err(|_| ApiError::die(format!("no such cluster node '{target}'")))?;
    }
    if let Some(sid) = &storage {
        let shared = cluster
            .storages
            .get(&(node.to_owned(), sid.clone()))
            .ok_or_else(|| ApiError::die(format!("storage '{sid}' does not exist")))?
            .shared;
        if target.is_some() && !shared {
            return Err(ApiError::die(format!(
                "can't clone to non-shared storage '{sid}'"
            )));
        }
    }
    let source = cluster.guest_at(node, GuestKind::Lxc, vmid)?.clone();
    source.check_lock()?;
    cluster.check_vmid_unused(newid)?;
    let full = match params.get("full")? {
        Some(_) => params.flag("full")?,
        None => !source.is_template(),
    };
    if storage.is_some() && !full {
        return Err(ApiError::die(
            "parameter 'storage' not allowed for linked clones",
        ));
    }
    let (newconf, mounts, shared) = clone_config(cluster, node, &source, full, storage.as_ref())?;
    if let Some(target) = target.as_ref().filter(|_| !shared) {
        return Err(ApiError::die(format!(
            "can't clone CT to node '{target}' (CT uses local storage)"
        )));
    }
    let mut newconf = newconf;
    for key in ["hostname", "description"] {
        if let Some(value) = params.get(key)?.filter(|v| !v.is_empty()) {
            newconf.insert(key.to_owned(), value.to_owned());
        }
    }
    Ok(CloneJob {
        node: node.to_owned(),
        vmid,
        newid,
        full,
        storage,
        target,
        pool: params.get("pool")?.map(str::to_owned),
        newconf,
        mounts,
    })
}

type CloneConfig = (
    BTreeMap<String, String>,
    Vec<(String, propstr::Props)>,
    bool,
);

/// The loop over the source config: mount points checked and set aside, NICs given new MACs,
/// the rest copied; whether every volume is on shared storage.
fn clone_config(
    cluster: &Cluster,
    node: &str,
    source: &Guest,
    full: bool,
    storage: Option<&String>,
) -> ApiResult<CloneConfig> {
    let mut newconf = BTreeMap::new();
    let mut mounts = Vec::new();
    let mut shared = true;
    for (key, value) in &source.conf.main {
        if key.starts_with("unused") || matches!(key.as_str(), "template" | "lock") {
            continue;
        }
        if key == "rootfs" || numbered(key, "mp") {
            let props = propstr::parse(value, Some("volume")).map_err(ApiError::die)?;
            let volid = props.get("volume").cloned().unwrap_or_default();
            let Some(src_sid) = storage_of(&volid).filter(|_| !volid.starts_with('/')) else {
                let kind = if volid.starts_with("/dev/") {
                    "device"
                } else {
                    "bind"
                };
                return Err(ApiError::die(format!(
                    "unable to clone mountpoint '{key}' (type {kind})"
                )));
            };
            let sid = storage.map_or(src_sid, String::as_str);
            let store = cluster.storages.get(&(node.to_owned(), sid.to_owned()));
            shared &= store.is_some_and(|s| s.shared);
            if full && source.running {
                return Err(ApiError::die(
                    "Full clone of a running container is only possible from a snapshot",
                ));
            }
            if !full && !linkable(cluster, node, &volid) {
                return Err(ApiError::die(format!(
                    "Linked clone feature for '{volid}' is not available"
                )));
            }
            mounts.push((key.clone(), props));
        } else if numbered(key, "net") {
            let mut net = propstr::parse(value, None).map_err(ApiError::die)?;
            net.insert("hwaddr".to_owned(), propstr::random_mac());
            newconf.insert(key.clone(), propstr::print(&net, None, &["name"]));
        } else {
            newconf.insert(key.clone(), value.clone());
        }
    }
    Ok((newconf, mounts, shared))
}

/// `volume_has_feature('clone')`: a base volume (of a template) on a thin storage.
fn linkable(cluster: &Cluster, node: &str, volid: &str) -> bool {
    let is_base = volid
        .rsplit([':', '/'])
        .next()
        .is_some_and(|n| n.starts_with("base-"));
    let thin = storage_of(volid)
        .and_then(|sid| cluster.storages.get(&(node.to_owned(), sid.to_owned())))
        .is_some_and(|s| s.stype != "lvm");
    is_base && thin
}

/// The `vzclone` task: each volume copied (full) or linked, the new config written, the
/// `create` lock removed, and the config moved to the target node.
fn run_clone(cluster: &mut Cluster, job: &CloneJob, log: &mut Vec<String>) -> Result<u32, String> {
    log.push(format!(
        "creating a clone of container {} with ID {}",
        job.vmid, job.newid
    ));
    let mut conf = job.newconf.clone();
    for (key, props) in &job.mounts {
        let mut props = props.clone();
        let volid = props.get("volume").cloned().unwrap_or_default();
        let src_sid = storage_of(&volid).unwrap_or_default().to_owned();
        let new_volid = if job.full {
            log.push(format!("create full clone of mountpoint {key} ({volid})"));
            let size = cluster
                .storage_mut(&job.node, &src_sid)
                .ok()
                .and_then(|s| s.volumes.get(&volid).map(|v| v.size))
                .unwrap_or_default();
            let target = job.storage.clone().unwrap_or(src_sid);
            cluster
                .storage_mut(&job.node, &target)
                .map_err(|e| e.message)?
                .alloc_disk(job.newid, size, now())?
        } else {
            log.push(format!(
                "create linked clone of mount point {key} ({volid})"
            ));
            cluster
                .storage_mut(&job.node, &src_sid)
                .map_err(|e| e.message)?
                .clone_image(&volid, job.newid, now())?
        };
        props.insert("volume".to_owned(), new_volid);
        let required: &[&str] = if key == "rootfs" { &[] } else { &["mp"] };
        conf.insert(
            key.clone(),
            propstr::print(&props, Some("volume"), required),
        );
    }
    let node = job.target.clone().unwrap_or_else(|| job.node.clone());
    let mut guest = new_container(job.newid, &node, Conf::default());
    guest.conf.main = conf;
    if let Some(pool) = &job.pool {
        cluster
            .created_from
            .entry(job.newid)
            .or_default()
            .insert("pool".to_owned(), pool.clone());
    }
    cluster.guests.insert(job.newid, guest);
    Ok(0)
}
