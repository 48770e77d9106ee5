//! `/nodes/{node}/qemu[/{vmid}/...]`: list, config (GET; PUT sync / POST async), pending,
//! status and power tasks (`qmstart`, `qmstop`, `qmshutdown`, `qmreboot`), and the guest agent's
//! interface list ("agent not running" unless `agent: 1` and running).

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{GuestKind, now};
use crate::{propstr, qemu, worker};

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
    Ok(data(
        cluster
            .guest_at(&node, GuestKind::Qemu, vmid)?
            .conf
            .to_json(current),
    ))
}

/// `GET .../pending`.
pub(crate) async fn pending(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    Ok(data(
        cluster
            .guest_at(&node, GuestKind::Qemu, vmid)?
            .conf
            .pending_array(),
    ))
}

fn apply_update(state: &SimState, node: &str, vmid: u32, params: &Params) -> ApiResult<()> {
    let digest = params.get("digest")?.map(str::to_owned);
    let mut set = Vec::new();
    for key in params.keys().filter(|k| {
        !matches!(
            k.as_str(),
            "delete" | "revert" | "digest" | "skiplock" | "background_delay"
        )
    }) {
        if let Some(v) = params.get(key)? {
            let v = if key == "cpuunits" {
                crate::schema::clamp_cpuunits(v)
            } else {
                v.to_owned()
            };
            let v = if key == "tags" {
                propstr::unique_tags(&v)
            } else {
                v
            };
            set.push((key.clone(), v));
        }
    }
    let delete = params.list("delete");
    if set.is_empty() && delete.is_empty() {
        return Err(ApiError::die("no options specified"));
    }
    let mut cluster = state.0.cluster();
    let guest = cluster.guest_at(node, GuestKind::Qemu, vmid)?;
    guest.check_lock()?;
    if let Some(d) = digest
        && d != guest.conf.digest()
    {
        return Err(ApiError::die(
            "detected modified configuration - file changed by other user? Try again.",
        ));
    }
    let events = qemu::update(&mut guest.conf, guest.running, &set, &delete);
    guest.events.extend(events);
    Ok(())
}

/// `PUT .../config`: synchronous.
pub(crate) async fn update_config(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    apply_update(&state, &node, vmid, &params)?;
    Ok(data(Value::Null))
}

/// `POST .../config`: asynchronous in PVE; finished within `background_delay`, so `null`.
pub(crate) async fn update_config_async(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    update_config(state, Path((node, vmid)), params).await
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
    v["agent"] =
        json!(u8::from(guest.conf.main.get("agent").is_some_and(
            |a| a.starts_with('1') || a.contains("enabled=1")
        )));
    Ok(data(v))
}

/// `POST .../status/{start|stop|shutdown|reboot}`; any full stop+start applies pending.
pub(crate) async fn action(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid, action)): Path<(String, String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let sim = state.0;
    let (upid, task_type) = {
        let mut cluster = sim.cluster();
        let guest = cluster.guest_at(&node, GuestKind::Qemu, vmid)?;
        let task_type = match (action.as_str(), guest.running) {
            ("start", true) => return Err(ApiError::die(format!("VM {vmid} already running"))),
            ("stop" | "shutdown" | "reboot", false) => {
                return Err(ApiError::die(format!("VM {vmid} not running")));
            }
            ("start", false) => "qmstart",
            ("stop", true) => "qmstop",
            ("shutdown", true) => "qmshutdown",
            ("reboot", true) => "qmreboot",
            _ => {
                return Err(ApiError::not_implemented(
                    "POST",
                    &format!("/nodes/{node}/qemu/{vmid}/status/{action}"),
                ));
            }
        };
        (
            cluster.new_task(&node, task_type, &vmid.to_string(), &caller.upid_user()),
            task_type,
        )
    };
    worker::spawn(
        &sim,
        upid.clone(),
        task_type,
        Some(vmid),
        Box::new(move |cluster, _log, fail| {
            let guest = cluster
                .guests
                .get_mut(&vmid)
                .ok_or_else(|| format!("VM {vmid} does not exist"))?;
            guest.check_lock().map_err(|e| e.message)?;
            if let Some(msg) = fail {
                return Err(msg);
            }
            if action == "start" || action == "reboot" {
                let events = qemu::update(&mut guest.conf, false, &[], &[]);
                guest.events.extend(events);
            }
            guest.running = action != "stop" && action != "shutdown";
            guest.started_at = guest.running.then(now);
            guest.pid = guest.running.then_some(20_000 + vmid);
            guest.booted = guest.running.then(std::time::Instant::now);
            Ok(0)
        }),
    );
    Ok(data(json!(upid)))
}

/// `GET .../agent/network-get-interfaces`.
pub(crate) async fn agent_interfaces(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    let guest = cluster.guest_at(&node, GuestKind::Qemu, vmid)?;
    if !guest.running {
        return Err(ApiError::die(format!("VM {vmid} is not running")));
    }
    if !guest
        .conf
        .main
        .get("agent")
        .is_some_and(|a| a.starts_with('1') || a.contains("enabled=1"))
    {
        return Err(ApiError::die("No QEMU guest agent configured"));
    }
    let mut result = Vec::new();
    for (i, (_, value)) in guest
        .conf
        .main
        .iter()
        .filter(|(k, _)| k.starts_with("net"))
        .enumerate()
    {
        let mac = qemu::net_mac(value).unwrap_or_default().to_lowercase();
        result.push(json!({ "name": format!("eth{i}"), "hardware-address": mac,
            "ip-addresses": [{ "ip-address": format!("10.{}.{}.{}", (vmid >> 8) & 0xff, vmid & 0xff, 10 + i), "ip-address-type": "ipv4", "prefix": 24 }] }));
    }
    Ok(data(json!({ "result": result })))
}
