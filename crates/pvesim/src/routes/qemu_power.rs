//! `/nodes/{node}/qemu/{vmid}/status/{start|stop|shutdown|reboot}` and the guest agent
//! (`agent/ping`, `agent/network-get-interfaces`). Power follows `vm_start`, `_do_vm_stop` and
//! `vm_reboot`: a start applies pending changes, a shutdown goes through the guest agent when
//! it runs and ACPI otherwise, and every stop and start is recorded as a `GuestEvent`.

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, Guest, GuestEvent, GuestKind, now};
use crate::{propstr, qemu, worker};

/// Marks a VM running, after `vmconfig_apply_pending` (as `vm_start` does).
pub(crate) fn power_on(g: &mut Guest) {
    let events = qemu::update(&mut g.conf, false, &[], &[]);
    g.events.extend(events);
    g.running = true;
    g.started_at = Some(now());
    g.pid = Some(20_000 + g.vmid);
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

/// `get_qga_key($conf, 'enabled')`: `agent: 1` or `agent: enabled=1,...`.
pub(crate) fn agent_enabled(g: &Guest) -> bool {
    g.conf.main.get("agent").is_some_and(|a| {
        propstr::parse(a, Some("enabled"))
            .ok()
            .and_then(|p| p.get("enabled").cloned())
            .is_some_and(|e| e == "1" || e.eq_ignore_ascii_case("true"))
    })
}

/// `POST .../status/{action}`: `qmstart`, `qmstop`, `qmshutdown`, `qmreboot` tasks.
pub(crate) async fn action(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid, action)): Path<(String, String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let force_stop = params.flag("forceStop")?;
    let skiplock = params.flag("skiplock")?;
    if skiplock && !caller.is_root() {
        return Err(ApiError::param(
            "skiplock",
            "Only root may use this option.",
        ));
    }
    let sim = state.0;
    let (upid, task_type) = {
        let mut cluster = sim.cluster();
        let guest = cluster.guest_at(&node, GuestKind::Qemu, vmid)?;
        let task_type = match action.as_str() {
            "start" => "qmstart",
            "stop" => "qmstop",
            "shutdown" => "qmshutdown",
            // `vm_reboot` API: checked before the worker forks
            "reboot" if !guest.running => {
                return Err(ApiError::die(format!("VM {vmid} not running")));
            }
            "reboot" => "qmreboot",
            _ => {
                let path = format!("/nodes/{node}/qemu/{vmid}/status/{action}");
                return Err(ApiError::not_implemented("POST", &path));
            }
        };
        (
            cluster.new_task(&node, task_type, &vmid.to_string(), &caller.upid_user()),
            task_type,
        )
    };
    let body = Box::new(
        move |cluster: &mut Cluster, log: &mut Vec<String>, fail: Option<String>| {
            let guest = cluster
                .guests
                .get_mut(&vmid)
                .ok_or_else(|| format!("VM {vmid} does not exist"))?;
            if let Some(msg) = fail {
                return Err(msg);
            }
            run_power(guest, &action, force_stop, skiplock, log)
        },
    );
    worker::spawn(&sim, upid.clone(), task_type, Some(vmid), body);
    Ok(data(json!(upid)))
}

fn run_power(
    g: &mut Guest,
    action: &str,
    force: bool,
    skiplock: bool,
    log: &mut Vec<String>,
) -> Result<u32, String> {
    let vmid = g.vmid;
    if !skiplock {
        g.check_lock().map_err(|e| e.message)?;
    }
    match action {
        "start" => {
            // `vm_start`
            if g.is_template() {
                return Err("you can't start a vm if it's a template".to_owned());
            }
            if g.running {
                return Err(format!("VM {vmid} already running"));
            }
            power_on(g);
            Ok(0)
        }
        // `_do_vm_stop` with `quit`: returns at once when the VM is not running
        "stop" => {
            if g.running {
                power_off(g);
            }
            Ok(0)
        }
        "shutdown" => shutdown(g, force, log),
        _ => {
            // `vm_reboot`: a shutdown without force, then a fresh start (pending applied)
            shutdown(g, false, log)?;
            power_on(g);
            Ok(0)
        }
    }
}

/// `_do_vm_stop` with `$shutdown`: `guest-shutdown` through a running agent, else ACPI
/// `system_powerdown`; a guest that ignores ACPI times out (forced: SIGTERM, one warning).
fn shutdown(g: &mut Guest, force: bool, log: &mut Vec<String>) -> Result<u32, String> {
    if !g.running {
        return Ok(0);
    }
    let by_agent = agent_enabled(g);
    if !by_agent && g.ignores_acpi {
        if !force {
            return Err("VM quit/powerdown failed - got timeout".to_owned());
        }
        log.push("VM still running - terminating now with SIGTERM".to_owned());
        power_off(g);
        return Ok(1);
    }
    power_off(g);
    Ok(0)
}

/// `assert_agent_available`: configured, VM running, agent answering `guest-ping`.
fn agent_guest<'a>(cluster: &'a mut Cluster, node: &str, vmid: u32) -> ApiResult<&'a Guest> {
    let guest = cluster.guest_at(node, GuestKind::Qemu, vmid)?;
    if !guest.conf.main.contains_key("agent") {
        return Err(ApiError::die("No QEMU guest agent configured"));
    }
    if !guest.running {
        return Err(ApiError::die(format!("VM {vmid} is not running")));
    }
    if !agent_enabled(guest) {
        return Err(ApiError::die("QEMU guest agent is not running"));
    }
    Ok(guest)
}

/// `POST .../agent/ping`.
pub(crate) async fn agent_ping(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    agent_guest(&mut cluster, &node, vmid)?;
    Ok(data(json!({ "result": {} })))
}

/// `GET .../agent/network-get-interfaces`: `lo`, then one interface per `netN` with its MAC
/// in lower case (as qemu-ga reports it) and the cloud-init `ipconfigN` address, or a
/// DHCP-like one.
pub(crate) async fn agent_interfaces(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let mut cluster = state.0.cluster();
    let guest = agent_guest(&mut cluster, &node, vmid)?;
    let addr = |ip: &str, kind: &str, prefix: u8| json!({ "ip-address": ip, "ip-address-type": kind, "prefix": prefix });
    let mut result = vec![json!({
        "name": "lo", "hardware-address": "00:00:00:00:00:00",
        "ip-addresses": [addr("127.0.0.1", "ipv4", 8), addr("::1", "ipv6", 128)],
    })];
    let nets = (0..32u32).filter_map(|i| guest.conf.main.get(&format!("net{i}")).map(|v| (i, v)));
    for (i, value) in nets {
        let mac = qemu::net_mac(value).unwrap_or_default().to_lowercase();
        let ipconfig = guest.conf.main.get(&format!("ipconfig{i}"));
        let static_ip = ipconfig
            .and_then(|c| propstr::parse(c, None).ok())
            .and_then(|p| p.get("ip").cloned())
            .filter(|ip| ip != "dhcp");
        let (ip, prefix) = match static_ip.as_deref().and_then(|c| c.split_once('/')) {
            Some((ip, len)) => (ip.to_owned(), len.parse().unwrap_or(24)),
            None => (
                format!("10.{}.{}.{}", (vmid >> 8) & 0xff, vmid & 0xff, 10 + i),
                24,
            ),
        };
        let ips: Vec<Value> = vec![
            addr(&ip, "ipv4", prefix),
            addr(&link_local(&mac), "ipv6", 64),
        ];
        result.push(json!({ "name": format!("ens{}", 18 + i), "hardware-address": mac, "ip-addresses": ips }));
    }
    Ok(data(json!({ "result": result })))
}

/// The EUI-64 IPv6 link-local address of a MAC.
fn link_local(mac: &str) -> String {
    let b: Vec<u8> = mac
        .split(':')
        .filter_map(|p| u8::from_str_radix(p, 16).ok())
        .collect();
    if b.len() != 6 {
        return "fe80::1".to_owned();
    }
    format!(
        "fe80::{:02x}{:02x}:{:02x}ff:fe{:02x}:{:02x}{:02x}",
        b[0] ^ 2,
        b[1],
        b[2],
        b[3],
        b[4],
        b[5]
    )
}
