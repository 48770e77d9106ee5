//! `/nodes/{node}/qemu[/{vmid}/...]`: list, config (GET; PUT sync / POST async, `update_vm`),
//! pending and status. Create, clone, disks and power live in the sibling `qemu_*` files.

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{GuestKind, now};
use crate::qemu_alloc::{self, DiskEnv};
use crate::{propstr, qemu};

/// `GET /nodes/{node}/qemu`.
pub(crate) async fn list(state: SimState, Path(node): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    cluster.node(&node)?;
    let list: Vec<Value> = cluster
        .guests
        .values()
        .filter(|g| g.node == node && g.kind == GuestKind::Qemu)
        .map(super::lxc_status::status_json)
        .collect();
    Ok(data(Value::Array(list)))
}

/// `GET .../config[?current=1]`.
pub(crate) async fn config(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let current = params.flag("current")?;
    let mut cluster = state.0.cluster();
    let mut config = cluster
        .guest_at(&node, GuestKind::Qemu, vmid)?
        .conf
        .to_json(current);
    // `vm_config`: `$conf->{cipassword} = '**********' if $conf->{cipassword}`.
    if let Some(password) = config.get_mut("cipassword") {
        *password = Value::from(MASKED);
    }
    Ok(data(config))
}

/// How qemu-server shows a cloud-init password (`API2/Qemu.pm` `vm_config`, `vm_pending`).
const MASKED: &str = "**********";

/// `GET .../pending`.
pub(crate) async fn pending(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    let mut entries = cluster
        .guest_at(&node, GuestKind::Qemu, vmid)?
        .conf
        .pending_array();
    // `vm_pending` masks a current password as `**********` and a pending one with a
    // trailing space, so a pending change still shows as one.
    let masked = entries.as_array_mut().into_iter().flatten();
    for entry in masked.filter(|e| e["key"] == "cipassword") {
        if let Some(value) = entry.get_mut("value") {
            *value = Value::from(MASKED);
        }
        if let Some(pending) = entry.get_mut("pending") {
            *pending = Value::from(format!("{MASKED} "));
        }
    }
    Ok(data(entries))
}

/// `update_vm_api`: schema check, root-only keys, `delete` rules, digest and lock, then the
/// new disks are allocated at once (`create_disks`) and the change queued and hot-plugged.
fn apply_update(
    state: &SimState,
    caller: &Caller,
    node: &str,
    vmid: u32,
    params: &Params,
) -> ApiResult<()> {
    let mut set = super::qemu_create::config_params(params)?;
    if let Some(units) = set.get_mut("cpuunits") {
        *units = crate::schema::clamp_cpuunits(units);
    }
    let delete = params.list("delete");
    if set.is_empty() && delete.is_empty() && params.list("revert").is_empty() {
        return Err(ApiError::die("no options specified"));
    }
    for key in &delete {
        if set.contains_key(key) {
            return Err(ApiError::param(
                "delete",
                format!("you can't use '-{key}' and -delete {key}' at the same time"),
            ));
        }
        if !crate::qemu_schema::exists(key) {
            return Err(ApiError::param("delete", format!("unknown option '{key}'")));
        }
    }
    if let Some(keys) = set.get("sshkeys") {
        crate::qemu_schema::check_ssh_keys(keys).map_err(ApiError::die)?;
    }
    super::qemu_create::check_root_only(caller, &set)?;
    super::qemu_create::check_drive_param(&mut set)?;
    let digest = params.get("digest")?.map(str::to_owned);
    let mut cluster = state.0.cluster();
    super::qemu_create::check_storage_access(&cluster, node, &set, None)?;
    if let Some(script) = set.get("hookscript") {
        crate::snippets::check_hookscript(&cluster, node, script).map_err(ApiError::die)?;
    }
    let guest = cluster.guest_at(node, GuestKind::Qemu, vmid)?;
    if let Some(d) = digest
        && d != guest.conf.digest()
    {
        return Err(ApiError::die(
            "checksum mismatch (file change by other user?)",
        ));
    }
    guest.check_lock()?;
    check_boot_order(&guest.conf, &set, &delete)?;
    let (conf, running) = (guest.conf.clone(), guest.running);
    let mut all = conf.main.clone();
    all.extend(conf.pending);
    let mut env = DiskEnv {
        node,
        vmid,
        storages: &mut cluster.storages,
        default_storage: None,
        now: now(),
        cloudinit_at: qemu_alloc::cloudinit_key(&all),
    };
    let drives: std::collections::BTreeMap<String, String> = set
        .iter()
        .filter(|(k, _)| crate::qemu_drive::is_drive_key(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let created =
        qemu_alloc::create_disks(&mut env, &drives, &mut Vec::new()).map_err(ApiError::die)?;
    set.extend(created);
    let set: Vec<(String, String)> = set.into_iter().collect();
    if let Some(guest) = cluster.guests.get_mut(&vmid) {
        let events = qemu::update(&mut guest.conf, running, &set, &delete);
        guest.events.extend(events);
    }
    Ok(())
}

/// `update_vm_api` on `boot`: every device in `order=` must exist (current, pending or set now)
/// and not be deleted in the same call.
fn check_boot_order(
    conf: &crate::conf::Conf,
    set: &std::collections::BTreeMap<String, String>,
    delete: &[String],
) -> ApiResult<()> {
    let Some(boot) = set.get("boot") else {
        return Ok(());
    };
    let order = propstr::parse(boot, Some("legacy"))
        .ok()
        .and_then(|p| p.get("order").cloned())
        .unwrap_or_default();
    for dev in propstr::split_list(&order) {
        let exists = conf.main.contains_key(&dev)
            || conf.pending.contains_key(&dev)
            || set.contains_key(&dev);
        if !exists || delete.contains(&dev) {
            return Err(ApiError::die(format!(
                "invalid bootorder: device '{dev}' does not exist'"
            )));
        }
    }
    Ok(())
}

/// `PUT .../config`: synchronous.
pub(crate) async fn update_config(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    apply_update(&state, &caller, &node, vmid, &params)?;
    Ok(data(Value::Null))
}

/// `POST .../config`: asynchronous in PVE; finished within `background_delay`, so `null`.
pub(crate) async fn update_config_async(
    state: SimState,
    caller: Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    update_config(state, caller, Path((node, vmid)), params).await
}

/// `GET .../status/current`.
pub(crate) async fn current(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    let guest = cluster.guest_at(&node, GuestKind::Qemu, vmid)?;
    let mut v = super::lxc_status::status_json(guest);
    v["qmpstatus"] = json!(if guest.running { "running" } else { "stopped" });
    v["agent"] = json!(u8::from(super::qemu_power::agent_enabled(guest)));
    Ok(data(v))
}
