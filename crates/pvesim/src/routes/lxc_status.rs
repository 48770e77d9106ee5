//! `/nodes/{node}/lxc/{vmid}/status/*`: current status and the power tasks (`vzstart`,
//! `vzstop`, `vzshutdown`, `vzreboot`; `hastart`/`hastop` for HA guests). Every start and stop
//! applies pending changes (`vm_start` and the post-stop hook), so a reboot applies them too.

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, Guest, GuestEvent, GuestKind, now};
use crate::pending::{self, Env};
use crate::{propstr, worker};

/// `status/current` and the `GET /nodes/{node}/lxc` entries.
pub(crate) fn status_json(g: &Guest) -> Value {
    let mem = g.memory_mib() << 20;
    let swap = g
        .conf
        .main
        .get("swap")
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0)
        << 20;
    let mut v = json!({
        "vmid": g.vmid, "status": if g.running { "running" } else { "stopped" }, "name": g.name(),
        "type": g.kind.as_str(),
        "cpus": g.conf.main.get("cores").and_then(|c| c.parse::<u64>().ok()).unwrap_or(1),
        "maxmem": mem, "maxswap": swap, "maxdisk": max_disk(g),
        "mem": if g.running { mem / 4 } else { 0 }, "swap": 0, "disk": 0, "cpu": 0,
        "uptime": g.started_at.map_or(0, |s| now().saturating_sub(s)),
        "netin": 0, "netout": 0, "diskread": 0, "diskwrite": 0,
        "ha": { "managed": u8::from(g.ha_managed) },
    });
    if let Some(pid) = g.pid.filter(|_| g.running) {
        v["pid"] = json!(pid);
    }
    if let Some(lock) = g.lock() {
        v["lock"] = json!(lock);
    }
    if let Some(tags) = g.conf.main.get("tags") {
        v["tags"] = json!(tags);
    }
    if g.is_template() {
        v["template"] = json!(1);
    }
    v
}

/// `vmstatus`: the size `rootfs` records, 4 GiB when it records none (pve-container
/// `src/PVE/LXC.pm`; a running CT's filesystem reports the same size).
fn max_disk(g: &Guest) -> u64 {
    g.conf
        .main
        .get("rootfs")
        .and_then(|r| propstr::parse(r, Some("volume")).ok())
        .and_then(|p| p.get("size").and_then(|s| propstr::parse_size(s)))
        .filter(|s| *s > 0)
        .unwrap_or(4 << 30)
}

/// `GET .../status`: the directory index (API2/LXC/Status.pm `vmcmdidx`, in its order).
pub(crate) async fn index(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    state.0.cluster().guest_at(&node, GuestKind::Lxc, vmid)?;
    let names = ["current", "start", "stop", "shutdown", "reboot", "migrate"];
    Ok(data(Value::Array(
        names.iter().map(|n| json!({ "subdir": n })).collect(),
    )))
}

/// `GET .../status/current`.
pub(crate) async fn current(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    let guest = cluster.guest_at(&node, GuestKind::Lxc, vmid)?;
    Ok(data(status_json(guest)))
}

/// Applies all pending changes of a guest (stopped semantics), recording events.
pub(crate) fn apply_all_pending(cluster: &mut Cluster, vmid: u32) {
    let Some(guest) = cluster.guests.get(&vmid) else {
        return;
    };
    if guest.conf.pending.is_empty() {
        return;
    }
    let node = guest.node.clone();
    let mut conf = guest.conf.clone();
    let bridges = cluster
        .nodes
        .get(&node)
        .map(|n| n.network.bridges())
        .unwrap_or_default();
    let mut env = Env {
        node: &node,
        vmid,
        storages: &mut cluster.storages,
        bridges: &bridges,
        now: now(),
        events: Vec::new(),
        warnings: Vec::new(),
    };
    let _errors = pending::apply(&mut conf, None, &mut env);
    let events = std::mem::take(&mut env.events);
    if let Some(g) = cluster.guests.get_mut(&vmid) {
        g.conf = conf;
        g.events.extend(events);
    }
}

/// Marks a guest running (after pending was applied).
pub(crate) fn power_on(g: &mut Guest) {
    g.running = true;
    g.started_at = Some(now());
    g.pid = Some(10_000 + g.vmid);
    g.booted = Some(std::time::Instant::now());
    g.events.push(GuestEvent::Started);
}

fn power_off(g: &mut Guest) {
    g.running = false;
    g.started_at = None;
    g.pid = None;
    g.booted = None;
    g.events.push(GuestEvent::Stopped);
}

/// `POST .../status/{start|stop|shutdown|reboot}`.
pub(crate) async fn action(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid, action)): Path<(String, String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let sim = state.0;
    let force_stop = params.flag("forceStop")?;
    if params.flag("skiplock")? && !caller.is_root() {
        return Err(ApiError::param(
            "skiplock",
            "Only root may use this option.",
        ));
    }
    let (upid, task_type) = {
        let mut cluster = sim.cluster();
        let guest = cluster.guest_at(&node, GuestKind::Lxc, vmid)?;
        let ha = guest.ha_managed;
        let task_type = match (action.as_str(), guest.running) {
            ("start", true) => return Err(ApiError::die(format!("CT {vmid} already running"))),
            ("stop" | "shutdown", false) => {
                return Err(ApiError::die(format!("CT {vmid} not running")));
            }
            ("reboot", false) => return Err(ApiError::die(format!("VM {vmid} not running"))),
            ("start", false) if ha => "hastart",
            ("start", false) => "vzstart",
            ("stop" | "shutdown", true) if ha => "hastop",
            ("stop", true) => "vzstop",
            ("shutdown", true) => "vzshutdown",
            ("reboot", true) => "vzreboot",
            _ => {
                return Err(ApiError::not_implemented(
                    "POST",
                    &format!("/nodes/{node}/lxc/{vmid}/status/{action}"),
                ));
            }
        };
        let upid = cluster.new_task(&node, task_type, &vmid.to_string(), &caller.upid_user());
        (upid, task_type)
    };
    let action2 = action;
    worker::spawn(
        &sim,
        upid.clone(),
        task_type,
        Some(vmid),
        Box::new(move |cluster, log, fail| {
            run_power(cluster, vmid, &action2, force_stop, log, fail)
        }),
    );
    Ok(data(json!(upid)))
}

fn run_power(
    cluster: &mut Cluster,
    vmid: u32,
    action: &str,
    force_stop: bool,
    log: &mut Vec<String>,
    fail: Option<String>,
) -> Result<u32, String> {
    let guest = cluster
        .guests
        .get_mut(&vmid)
        .ok_or_else(|| format!("CT {vmid} does not exist"))?;
    guest.check_lock().map_err(|e| e.message)?;
    if action == "start" && guest.is_template() {
        return Err("you can't start a CT if it's a template".to_owned());
    }
    if let Some(msg) = fail {
        if action == "shutdown" && !force_stop {
            return Err("container did not stop".to_owned());
        }
        return Err(msg);
    }
    if matches!(action, "stop" | "shutdown" | "reboot") {
        log.push(format!("stopping CT {vmid}"));
        power_off(guest);
    }
    apply_all_pending(cluster, vmid);
    if matches!(action, "start" | "reboot") {
        log.push(format!("starting CT {vmid}"));
        if let Some(g) = cluster.guests.get_mut(&vmid) {
            power_on(g);
        }
    }
    Ok(0)
}
