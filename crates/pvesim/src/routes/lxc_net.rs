//! `GET /nodes/{node}/lxc/{vmid}/interfaces`: the CT's interfaces as `ip --json a` shows them
//! inside its network namespace — `null` when stopped, lower-case MACs, static addresses at
//! once, `dhcp` ones after the DHCP delay (link-local first).

use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::{SimState, data, parse_vmid};
use crate::error::ApiResult;
use crate::model::GuestKind;
use crate::propstr;

/// `GET .../interfaces`: `null` when stopped; MACs lower-case; DHCP addresses after a delay.
pub(crate) async fn interfaces(
    state: SimState,
    Path((node, vmid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let sim = state.0;
    let dhcp_delay = sim.opts.dhcp_delay;
    let mut cluster = sim.cluster();
    let guest = cluster.guest_at(&node, GuestKind::Lxc, vmid)?;
    if !guest.running {
        return Ok(data(Value::Null));
    }
    let dhcp_ready = guest.booted.is_some_and(|b| b.elapsed() >= dhcp_delay);
    let mut list = vec![
        json!({ "name": "lo", "hwaddr": "00:00:00:00:00:00", "hardware-address": "00:00:00:00:00:00",
        "inet": "127.0.0.1/8", "inet6": "::1/128", "ip-addresses": [
            { "ip-address": "127.0.0.1", "ip-address-type": "inet", "prefix": 8 },
            { "ip-address": "::1", "ip-address-type": "inet6", "prefix": 128 }] }),
    ];
    for (key, value) in guest.conf.main.iter().filter(|(k, _)| k.starts_with("net")) {
        let props = propstr::parse(value, None).unwrap_or_default();
        list.push(interface_json(vmid, key, &props, dhcp_ready));
    }
    Ok(data(Value::Array(list)))
}

/// One interface as `ip --json a` inside the CT shows it.
pub(crate) fn interface_json(
    vmid: u32,
    key: &str,
    props: &propstr::Props,
    dhcp_ready: bool,
) -> Value {
    let mac = props
        .get("hwaddr")
        .map(|m| m.to_lowercase())
        .unwrap_or_default();
    let name = props.get("name").cloned().unwrap_or_else(|| key.to_owned());
    let idx = key.trim_start_matches("net").parse::<u32>().unwrap_or(0);
    let mut addrs = Vec::new();
    let mut v = json!({ "name": name, "hwaddr": mac, "hardware-address": mac });
    let v4 = match props.get("ip").map(String::as_str) {
        Some("dhcp") if dhcp_ready => Some(format!(
            "10.{}.{}.{}/24",
            (vmid >> 8) & 0xff,
            vmid & 0xff,
            10 + idx
        )),
        Some(ip) if ip.contains('/') => Some(ip.to_owned()),
        _ => None,
    };
    if let Some(cidr) = v4 {
        let (ip, prefix) = cidr.split_once('/').unwrap_or((&cidr, "24"));
        v["inet"] = json!(cidr);
        addrs.push(json!({ "ip-address": ip, "ip-address-type": "inet", "prefix": prefix.parse::<u32>().unwrap_or(24) }));
    }
    let bytes: Vec<u8> = mac
        .split(':')
        .filter_map(|b| u8::from_str_radix(b, 16).ok())
        .collect();
    if bytes.len() == 6 {
        let ll = format!(
            "fe80::{:02x}{:02x}:{:02x}ff:fe{:02x}:{:02x}{:02x}",
            bytes[0] ^ 2,
            bytes[1],
            bytes[2],
            bytes[3],
            bytes[4],
            bytes[5]
        );
        v["inet6"] = json!(format!("{ll}/64"));
        addrs.push(json!({ "ip-address": ll, "ip-address-type": "inet6", "prefix": 64 }));
    }
    v["ip-addresses"] = Value::Array(addrs);
    v
}
