//! `POST .../qemu/{vmid}/clone` (`clone_vm`, task `qmclone`) and `POST .../template`
//! (`template`, task `qmtemplate`; `template_create` turns disks into base volumes).

use std::collections::BTreeMap;

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::json;

use super::qemu_create::{new_guest, random_uuid};
use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::conf::Conf;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, GuestKind, now};
use crate::storage::storage_of;
use crate::{qemu, qemu_drive, worker};

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
        cluster.new_task(&node, "qmtemplate", &vmid.to_string(), &caller.upid_user())
    };
    let body = Box::new(
        move |cluster: &mut Cluster, _log: &mut Vec<String>, fail: Option<String>| {
            if let Some(msg) = fail {
                return Err(msg);
            }
            check_template(cluster, &node, vmid).map_err(|e| e.message)?;
            template_create(cluster, &node, vmid);
            Ok(0)
        },
    );
    worker::spawn(&sim, upid.clone(), "qmtemplate", Some(vmid), body);
    Ok(data(json!(upid)))
}

/// `template`'s `$load_and_check`.
fn check_template(cluster: &mut Cluster, node: &str, vmid: u32) -> ApiResult<()> {
    let guest = cluster.guest_at(node, GuestKind::Qemu, vmid)?;
    guest.check_lock()?;
    if guest.is_template() {
        return Err(ApiError::die("you can't convert a template to a template"));
    }
    if guest.running {
        return Err(ApiError::die(
            "you can't convert a VM to template if VM is running",
        ));
    }
    Ok(())
}

/// `template_create`: `template: 1`, each non-CD-ROM disk renamed by `vdisk_create_base`.
fn template_create(cluster: &mut Cluster, node: &str, vmid: u32) {
    let Some(guest) = cluster.guests.get_mut(&vmid) else {
        return;
    };
    guest
        .conf
        .main
        .insert("template".to_owned(), "1".to_owned());
    let drives: Vec<(String, String)> = guest
        .conf
        .main
        .iter()
        .filter(|(k, _)| qemu_drive::is_drive_key(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (key, value) in drives {
        let Ok(mut props) = qemu_drive::parse(&value) else {
            continue;
        };
        if qemu_drive::is_cdrom(&props) {
            continue;
        }
        let file = props.get("file").cloned().unwrap_or_default();
        let Some(sid) = storage_of(&file) else {
            continue;
        };
        let Ok(storage) = cluster.storage_mut(node, sid) else {
            continue;
        };
        if let Some(base) = storage.create_base(&file) {
            props.insert("file".to_owned(), base);
            if let Some(g) = cluster.guests.get_mut(&vmid) {
                g.conf.main.insert(key, qemu_drive::print(&props));
            }
        }
    }
}

/// A checked clone request.
struct CloneJob {
    node: String,
    vmid: u32,
    newid: u32,
    full: bool,
    storage: Option<String>,
    name: Option<String>,
    description: Option<String>,
}

/// `POST .../clone`.
pub(crate) async fn clone(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let newid = parse_vmid(params.get("newid")?.unwrap_or_default())?;
    let full = match params.get("full")? {
        Some(_) => Some(params.flag("full")?),
        None => None,
    };
    let sim = state.0;
    let (upid, job) = {
        let mut cluster = sim.cluster();
        let job = load_and_check(&mut cluster, &node, vmid, newid, full, &params)?;
        // the worker writes `lock: clone` into the new config first thing
        cluster.guests.entry(newid).or_insert_with(|| {
            let mut lock = Conf::default();
            lock.main.insert("lock".to_owned(), "clone".to_owned());
            new_guest(newid, &node, lock)
        });
        (
            cluster.new_task(&node, "qmclone", &vmid.to_string(), &caller.upid_user()),
            job,
        )
    };
    let body = Box::new(
        move |cluster: &mut Cluster, log: &mut Vec<String>, fail: Option<String>| {
            let result = fail.map_or_else(|| run_clone(cluster, &job, log), Err);
            if let Err(e) = result {
                if cluster
                    .guests
                    .get(&job.newid)
                    .is_some_and(|g| g.lock() == Some("clone"))
                {
                    cluster.guests.remove(&job.newid);
                }
                let owned: Vec<String> = cluster
                    .storages
                    .values()
                    .flat_map(|s| s.volumes.values())
                    .filter(|v| v.vmid == Some(job.newid))
                    .map(|v| v.volid.clone())
                    .collect();
                for volid in owned {
                    if let Some(sid) = storage_of(&volid)
                        && let Ok(s) = cluster.storage_mut(&job.node, sid)
                    {
                        s.volumes.remove(&volid);
                    }
                }
                return Err(format!("clone failed: {e}"));
            }
            result
        },
    );
    worker::spawn(&sim, upid.clone(), "qmclone", Some(vmid), body);
    Ok(data(json!(upid)))
}

/// `clone_vm`'s `$load_and_check`: storage, lock, full/linked rules, the new id.
fn load_and_check(
    cluster: &mut Cluster,
    node: &str,
    vmid: u32,
    newid: u32,
    full: Option<bool>,
    params: &Params,
) -> ApiResult<CloneJob> {
    let storage = params.get("storage")?.map(str::to_owned);
    if let Some(sid) = &storage {
        let s = cluster
            .storages
            .get(&(node.to_owned(), sid.clone()))
            .ok_or_else(|| ApiError::die(format!("storage '{sid}' does not exist")))?;
        if !s.content.contains("images") {
            return Err(ApiError::param(
                "storage",
                format!("storage '{sid}' does not support vm images"),
            ));
        }
    }
    let guest = cluster.guest_at(node, GuestKind::Qemu, vmid)?.clone();
    guest.check_lock()?;
    let full = full.unwrap_or(!guest.is_template());
    if storage.is_some() && !full {
        return Err(ApiError::die(
            "parameter 'storage' not allowed for linked clones",
        ));
    }
    if params.get("format")?.is_some() && !full {
        return Err(ApiError::die(
            "parameter 'format' not allowed for linked clones",
        ));
    }
    for (key, value) in guest
        .conf
        .main
        .iter()
        .filter(|(k, _)| qemu_drive::is_drive_key(k))
    {
        let props = qemu_drive::parse(value).unwrap_or_default();
        if qemu_drive::is_cdrom(&props) && !qemu_drive::is_cloudinit(&props) {
            continue;
        }
        let volid = props.get("file").cloned().unwrap_or_default();
        if full && guest.running && key == "tpmstate0" {
            return Err(ApiError::die("cannot clone TPM state while VM is running"));
        }
        let linked = !full && !qemu_drive::is_cloudinit(&props) && key != "tpmstate0";
        // `volume_has_feature('clone')`: only base volumes (of templates) on thin storages
        let is_base = volid
            .rsplit([':', '/'])
            .next()
            .is_some_and(|n| n.starts_with("base-"));
        let thin = storage_of(&volid)
            .and_then(|sid| cluster.storages.get(&(node.to_owned(), sid.to_owned())))
            .is_some_and(|s| s.stype != "lvm");
        if linked && !(is_base && thin) {
            return Err(ApiError::die(format!(
                "Linked clone feature is not supported for '{volid}' ({key})"
            )));
        }
    }
    if cluster.guests.get(&newid).is_some_and(|g| g.node == node) {
        return Err(ApiError::die(format!(
            "unable to create VM {newid}: config file already exists"
        )));
    }
    Ok(CloneJob {
        node: node.to_owned(),
        vmid,
        newid,
        full,
        storage,
        name: params.get("name")?.map(str::to_owned),
        description: params.get("description")?.map(str::to_owned),
    })
}

/// The `qmclone` task: new config (new MACs, smbios uuid, vmgenid, name), disks copied or
/// linked, the `clone` lock on the new VM until it is done; pending changes are dropped.
fn run_clone(cluster: &mut Cluster, job: &CloneJob, log: &mut Vec<String>) -> Result<u32, String> {
    let source = cluster
        .guests
        .get(&job.vmid)
        .ok_or_else(|| format!("VM {} does not exist", job.vmid))?
        .clone();
    if let Some(other) = cluster
        .guests
        .get(&job.newid)
        .filter(|g| g.node != job.node || g.lock() != Some("clone"))
    {
        return Err(format!(
            "unable to create VM {}: VM {} already exists on node '{}'",
            job.newid, job.newid, other.node
        ));
    }
    log.push(format!(
        "create {} clone of drive(s)",
        if job.full { "full" } else { "linked" }
    ));
    let mut newconf: BTreeMap<String, String> = BTreeMap::new();
    let mut drives = Vec::new();
    for (key, value) in &source.conf.main {
        if matches!(
            key.as_str(),
            "parent"
                | "snaptime"
                | "vmstate"
                | "runningcpu"
                | "runningmachine"
                | "running-nets-host-mtu"
                | "template"
                | "lock"
        ) || key.starts_with("unused")
        {
            continue;
        }
        if key.starts_with("net") && !key.starts_with("net_") {
            newconf.insert(key.clone(), qemu::print_net(value, true));
        } else if qemu_drive::is_drive_key(key) {
            let props = qemu_drive::parse(value).unwrap_or_default();
            if qemu_drive::is_cdrom(&props) && !qemu_drive::is_cloudinit(&props) {
                newconf.insert(key.clone(), value.clone());
            } else {
                drives.push((key.clone(), props));
            }
        } else {
            newconf.insert(key.clone(), value.clone());
        }
    }
    let mut smbios = crate::propstr::parse(newconf.get("smbios1").map_or("", String::as_str), None)
        .unwrap_or_default();
    smbios.insert("uuid".to_owned(), random_uuid());
    newconf.insert(
        "smbios1".to_owned(),
        crate::propstr::print(&smbios, None, &[]),
    );
    if newconf.contains_key("vmgenid") {
        newconf.insert("vmgenid".to_owned(), random_uuid());
    }
    let name = job.name.clone().unwrap_or_else(|| {
        format!(
            "Copy-of-VM-{}",
            source
                .conf
                .main
                .get("name")
                .cloned()
                .unwrap_or_else(|| job.vmid.to_string())
        )
    });
    newconf.insert("name".to_owned(), name);
    if let Some(d) = job.description.as_deref().filter(|d| !d.is_empty()) {
        newconf.insert(
            "description".to_owned(),
            crate::conf::normalize_description(d).unwrap_or_default(),
        );
    }
    let mut guest = new_guest(job.newid, &job.node, Conf::default());
    for (key, mut props) in drives {
        let file = props.get("file").cloned().unwrap_or_default();
        let src_sid = storage_of(&file).unwrap_or_default().to_owned();
        let cloudinit = qemu_drive::is_cloudinit(&props);
        let target = job.storage.clone().unwrap_or_else(|| src_sid.clone());
        let new_volid = if cloudinit {
            cluster
                .storage_mut(&job.node, &target)
                .map_err(|e| e.message)?
                .alloc_image(
                    job.newid,
                    4 << 20,
                    Some(&format!("vm-{}-cloudinit", job.newid)),
                    now(),
                )?
        } else if job.full || key == "tpmstate0" {
            let size = cluster
                .storage_mut(&job.node, &src_sid)
                .ok()
                .and_then(|s| s.volumes.get(&file).map(|v| v.size))
                .unwrap_or_default();
            cluster
                .storage_mut(&job.node, &target)
                .map_err(|e| e.message)?
                .alloc_image(job.newid, size, None, now())?
        } else {
            cluster
                .storage_mut(&job.node, &src_sid)
                .map_err(|e| e.message)?
                .clone_image(&file, job.newid, now())?
        };
        log.push(format!("{key}: cloned '{file}' to '{new_volid}'"));
        props.insert("file".to_owned(), new_volid);
        newconf.insert(key, qemu_drive::print(&props));
    }
    let mut warnings = 0;
    let pending: Vec<&String> = source.conf.pending.keys().collect();
    if !pending.is_empty() {
        log.push(format!(
            "found pending changes for '{}', discarding for clone",
            pending
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(",")
        ));
        warnings += 1;
    }
    guest.conf = Conf {
        main: newconf,
        pending: BTreeMap::new(),
    };
    cluster.guests.insert(job.newid, guest);
    Ok(warnings)
}
