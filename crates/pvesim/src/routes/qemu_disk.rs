//! `PUT .../qemu/{vmid}/resize` (`resize_vm`: every check runs in the `resize` task),
//! `DELETE .../qemu/{vmid}` (`destroy_vm`, task `qmdestroy`), and the cloud-init endpoints
//! (`PUT .../cloudinit` regenerates, `GET .../cloudinit` lists changes, `GET .../cloudinit/dump`).

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, GuestKind};
use crate::storage::storage_of;
use crate::{propstr, qemu_drive, worker};

/// `PUT .../resize` with `disk` and `size` (`\+?\d+(\.\d+)?[KMGT]?`).
pub(crate) async fn resize(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let disk = params.get("disk")?.unwrap_or_default().to_owned();
    let size = params.get("size")?.unwrap_or_default().to_owned();
    let digest = params.get("digest")?.map(str::to_owned);
    let (relative, amount) = size
        .strip_prefix('+')
        .map_or((false, size.as_str()), |r| (true, r));
    let bytes = propstr::parse_size(amount)
        .ok_or_else(|| ApiError::die(format!("unable to parse size '{size}'")))?;
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        cluster.guest_at(&node, GuestKind::Qemu, vmid)?;
        cluster.new_task(&node, "resize", &vmid.to_string(), &caller.upid_user())
    };
    let body = Box::new(
        move |cluster: &mut Cluster, log: &mut Vec<String>, fail: Option<String>| {
            if let Some(msg) = fail {
                return Err(msg);
            }
            run_resize(
                cluster,
                &node,
                vmid,
                &disk,
                (relative, bytes),
                digest.as_deref(),
                log,
            )
        },
    );
    worker::spawn(&sim, upid.clone(), "resize", Some(vmid), body);
    Ok(data(json!(upid)))
}

/// `resize_vm`'s `$updatefn`.
fn run_resize(
    cluster: &mut Cluster,
    node: &str,
    vmid: u32,
    disk: &str,
    (relative, bytes): (bool, u64),
    digest: Option<&str>,
    log: &mut Vec<String>,
) -> Result<u32, String> {
    let guest = cluster
        .guest_at(node, GuestKind::Qemu, vmid)
        .map_err(|e| e.message)?;
    if digest.is_some_and(|d| d != guest.conf.digest()) {
        return Err("checksum mismatch (file change by other user?)".to_owned());
    }
    guest.check_lock().map_err(|e| e.message)?;
    let value = guest
        .conf
        .main
        .get(disk)
        .cloned()
        .ok_or_else(|| format!("disk '{disk}' does not exist"))?;
    let mut props = qemu_drive::parse(&value)?;
    let volid = props
        .get("file")
        .cloned()
        .ok_or_else(|| format!("disk '{disk}' has no associated volume"))?;
    if qemu_drive::is_cdrom(&props) {
        return Err("you can't resize a cdrom".to_owned());
    }
    let sid = storage_of(&volid)
        .ok_or_else(|| format!("Could not determine current size of volume '{volid}'"))?
        .to_owned();
    let storage = cluster.storage_mut(node, &sid).map_err(|e| e.message)?;
    let size = storage
        .volumes
        .get(&volid)
        .map(|v| v.size)
        .ok_or_else(|| format!("Could not determine current size of volume '{volid}'"))?;
    let new_size = if relative { size + bytes } else { bytes };
    if new_size < size {
        return Err("shrinking disks is not supported".to_owned());
    }
    if new_size == size {
        return Ok(0);
    }
    if new_size - size > storage.avail() {
        return Err(format!(
            "not enough free space ({} < {})",
            storage.avail(),
            new_size - size
        ));
    }
    if let Some(v) = storage.volumes.get_mut(&volid) {
        v.size = new_size;
    }
    props.insert("size".to_owned(), propstr::format_size(new_size));
    log.push(format!(
        "Size of logical volume {volid} changed to {}.",
        propstr::format_size(new_size)
    ));
    if let Some(g) = cluster.guests.get_mut(&vmid) {
        g.conf
            .main
            .insert(disk.to_owned(), qemu_drive::print(&props));
    }
    Ok(0)
}

/// `DELETE /nodes/{node}/qemu/{vmid}[?purge=1&destroy-unreferenced-disks=1&skiplock=1]`.
pub(crate) async fn destroy(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let skiplock = params.flag("skiplock")?;
    if skiplock && !caller.is_root() {
        return Err(ApiError::param(
            "skiplock",
            "Only root may use this option.",
        ));
    }
    let purge = params.flag("purge")?;
    let unreferenced = params.flag("destroy-unreferenced-disks")?;
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        early_checks(&mut cluster, &node, vmid, purge)?;
        cluster.new_task(&node, "qmdestroy", &vmid.to_string(), &caller.upid_user())
    };
    let body = Box::new(
        move |cluster: &mut Cluster, log: &mut Vec<String>, fail: Option<String>| {
            if let Some(msg) = fail {
                return Err(msg);
            }
            early_checks(cluster, &node, vmid, purge).map_err(|e| e.message)?;
            destroy_vm(cluster, &node, vmid, skiplock, unreferenced)?;
            if purge {
                log.push(format!("purging VM {vmid} from related configurations.."));
            }
            Ok(0)
        },
    );
    worker::spawn(&sim, upid.clone(), "qmdestroy", Some(vmid), body);
    Ok(data(json!(upid)))
}

/// `destroy_vm`'s `$early_checks`: exists, protection, HA without purge, running.
fn early_checks(cluster: &mut Cluster, node: &str, vmid: u32, purge: bool) -> ApiResult<()> {
    let guest = cluster.guest_at(node, GuestKind::Qemu, vmid)?;
    guest.check_protection(&format!("can't remove VM {vmid}"))?;
    if guest.ha_managed && !purge {
        return Err(ApiError::die(format!(
            "unable to remove VM {vmid} - used in HA resources and purge parameter not set."
        )));
    }
    if guest.running {
        return Err(ApiError::die(format!(
            "VM {vmid} is running - destroy failed"
        )));
    }
    Ok(())
}

/// `PVE::QemuServer::destroy_vm`: lock check, base volumes still used by linked clones, then
/// the VM's own referenced volumes (current and pending; and every volume with its id when
/// `destroy-unreferenced-disks` is set) are freed and the config removed.
fn destroy_vm(
    cluster: &mut Cluster,
    node: &str,
    vmid: u32,
    skiplock: bool,
    unreferenced: bool,
) -> Result<(), String> {
    let guest = cluster
        .guests
        .get(&vmid)
        .ok_or_else(|| format!("VM {vmid} does not exist"))?;
    if !skiplock {
        guest.check_lock().map_err(|e| e.message)?;
    }
    let mut volids: Vec<String> = qemu_drive::volumes(&guest.conf.main)
        .into_iter()
        .chain(qemu_drive::volumes(&guest.conf.pending))
        .map(|(_, v)| v)
        .collect();
    if guest.is_template() {
        for volid in &volids {
            if cluster.storages.values().any(|s| s.base_in_use(volid)) {
                return Err(format!(
                    "base volume '{volid}' is still in use by linked cloned"
                ));
            }
        }
    }
    if unreferenced {
        let all = cluster
            .storages
            .iter()
            .filter(|((n, _), _)| n == node)
            .flat_map(|(_, s)| s.volumes.values())
            .filter(|v| v.vmid == Some(vmid) && v.content == "images")
            .map(|v| v.volid.clone());
        volids.extend(all.collect::<Vec<_>>());
    }
    for volid in volids {
        // only volumes the VM owns (`vm-<vmid>-...` / `base-<vmid>-...`) are freed
        if let Some(sid) = storage_of(&volid)
            && let Ok(storage) = cluster.storage_mut(node, sid)
            && storage
                .volumes
                .get(&volid)
                .is_some_and(|v| v.vmid == Some(vmid))
        {
            storage.volumes.remove(&volid);
        }
    }
    cluster.guests.remove(&vmid);
    cluster.purge_cluster_config(vmid);
    Ok(())
}

/// `PUT .../cloudinit` (`cloudinit_update`): regenerates the cloud-init drive; returns null.
pub(crate) async fn cloudinit_update(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    let guest = cluster.guest_at(&node, GuestKind::Qemu, vmid)?;
    guest.check_lock()?;
    let generated = cloudinit_view(&guest.conf.main);
    guest.cloudinit_generated = Some(generated);
    Ok(data(Value::Null))
}

/// The cloud-init keys the generated drive holds.
fn cloudinit_view(
    main: &std::collections::BTreeMap<String, String>,
) -> std::collections::BTreeMap<String, String> {
    let keys = [
        "ciuser",
        "cipassword",
        "citype",
        "ciupgrade",
        "cicustom",
        "nameserver",
        "searchdomain",
        "sshkeys",
    ];
    main.iter()
        .filter(|(k, _)| {
            keys.contains(&k.as_str()) || k.starts_with("ipconfig") || k.starts_with("net")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `GET .../cloudinit` (`cloudinit_pending`): each cloud-init key with its value and, when the
/// drive was generated with another value, `pending` set to the new one.
pub(crate) async fn cloudinit_pending(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    let guest = cluster.guest_at(&node, GuestKind::Qemu, vmid)?;
    let now = cloudinit_view(&guest.conf.main);
    let generated = guest
        .cloudinit_generated
        .clone()
        .unwrap_or_else(|| now.clone());
    let mut out = Vec::new();
    for key in now
        .keys()
        .chain(generated.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let mut item = json!({ "key": key });
        match (generated.get(key), now.get(key)) {
            (Some(old), Some(new)) if old == new => item["value"] = json!(new),
            (Some(old), Some(new)) => {
                item["value"] = json!(old);
                item["pending"] = json!(new);
            }
            (Some(old), None) => {
                item["value"] = json!(old);
                item["delete"] = json!(1);
            }
            (None, Some(new)) => item["pending"] = json!(new),
            (None, None) => {}
        }
        out.push(item);
    }
    Ok(data(Value::Array(out)))
}

/// `GET .../cloudinit/dump?type=user|network|meta` (`dump_cloudinit_config`, nocloud format).
pub(crate) async fn cloudinit_dump(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let kind = params.get("type")?.unwrap_or_default().to_owned();
    let mut cluster = state.0.cluster();
    let guest = cluster.guest_at(&node, GuestKind::Qemu, vmid)?;
    let main = &guest.conf.main;
    let text = match kind.as_str() {
        "user" => {
            let mut t = format!(
                "#cloud-config\nhostname: {}\nmanage_etc_hosts: true\n",
                guest.name()
            );
            if let Some(user) = main.get("ciuser") {
                t.push_str(&format!("user: {user}\n"));
            }
            if let Some(keys) = main.get("sshkeys") {
                let raw = percent_encoding::percent_decode_str(keys)
                    .decode_utf8_lossy()
                    .into_owned();
                t.push_str("ssh_authorized_keys:\n");
                for k in raw.lines().filter(|l| !l.trim().is_empty()) {
                    t.push_str(&format!("  - {k}\n"));
                }
            }
            t.push_str("chpasswd:\n  expire: False\n");
            t
        }
        "meta" => format!("instance-id: {}\n", &guest.conf.digest()[..40]),
        "network" => {
            let mut t = "version: 1\nconfig:\n".to_owned();
            for i in 0..32 {
                let Some(net) = main.get(&format!("net{i}")) else {
                    continue;
                };
                let mac = crate::qemu::net_mac(net).unwrap_or_default().to_lowercase();
                t.push_str(&format!(
                    "    - type: physical\n      name: eth{i}\n      mac_address: '{mac}'\n"
                ));
                if let Some(ip) = main.get(&format!("ipconfig{i}")) {
                    t.push_str(&format!("      subnets:\n      - {ip}\n"));
                }
            }
            t
        }
        _ => String::new(),
    };
    Ok(data(json!(text)))
}
