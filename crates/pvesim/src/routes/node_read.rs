//! A node's settings (pve-manager `PVE/API2/Nodes.pm`): `status`, `dns`, `hosts` and `time`
//! to read, `dns` and `time` to write, each refusing an unknown node as pveproxy does.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::{Params, SimState, data};
use crate::error::{ApiError, ApiResult};
use crate::model::now;

/// `GET /nodes/{node}/status`: CPU, memory, uptime and versions (a fixed plausible machine).
pub(crate) async fn status(state: SimState, Path(node): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    cluster.node(&node)?;
    let total: u64 = 64 << 30;
    let used: u64 = 4 << 30;
    Ok(data(json!({
        "cpu": 0.0234,
        "cpuinfo": { "cores": 8, "cpus": 16, "sockets": 1, "model": "AMD EPYC 7302P 16-Core Processor",
                     "mhz": "3000.000", "hvm": "1", "user_hz": 100, "flags": "fpu vme de pse" },
        "memory": { "total": total, "used": used, "free": total - used, "available": total - used },
        "swap": { "total": 8_u64 << 30, "used": 0, "free": 8_u64 << 30 },
        "rootfs": { "total": 100_u64 << 30, "used": 10_u64 << 30, "free": 90_u64 << 30, "avail": 85_u64 << 30 },
        "loadavg": ["0.12", "0.08", "0.05"],
        "uptime": 86_400,
        "idle": 0, "wait": 0.0012,
        "kversion": "Linux 6.8.12-4-pve #1 SMP PREEMPT_DYNAMIC PMX 6.8.12-4",
        "pveversion": "pve-manager/9.2.11/14a22df3",
        "boot-info": { "mode": "efi", "secureboot": 0 },
        "current-kernel": { "sysname": "Linux", "release": "6.8.12-4-pve", "machine": "x86_64",
                            "version": "#1 SMP PREEMPT_DYNAMIC PMX 6.8.12-4" },
    })))
}

/// `GET /nodes/{node}/dns`: `search` and `dns1`..`dns3`, each only when set.
pub(crate) async fn dns(state: SimState, Path(node): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let settings = &cluster.node(&node)?.settings;
    let mut out = Map::new();
    if let Some(search) = &settings.search {
        out.insert("search".to_owned(), json!(search));
    }
    for (i, server) in settings.dns.iter().enumerate() {
        out.insert(format!("dns{}", i + 1), json!(server));
    }
    Ok(data(Value::Object(out)))
}

/// `GET /nodes/{node}/hosts`: the file and its digest.
pub(crate) async fn hosts(state: SimState, Path(node): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let settings = &cluster.node(&node)?.settings;
    Ok(data(
        json!({ "data": settings.hosts, "digest": settings.hosts_digest() }),
    ))
}

/// `GET /nodes/{node}/time`: the zone, the time, and the time shifted by the zone's offset
/// (`timegm(localtime(time))`).
pub(crate) async fn time(state: SimState, Path(node): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let settings = &cluster.node(&node)?.settings;
    let utc = i64::try_from(now()).unwrap_or(i64::MAX);
    Ok(data(json!({
        "timezone": settings.timezone,
        "time": utc,
        "localtime": utc.saturating_add(settings.utc_offset),
    })))
}

/// `PUT /nodes/{node}/dns` (`update_dns`): `search` is required; `dns1`..`dns3` are IP
/// addresses, and those not given are removed (PVE rewrites `resolv.conf` from the request).
pub(crate) async fn update_dns(
    state: SimState,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let mut errors = std::collections::BTreeMap::new();
    let search = params.get("search")?.map(str::to_owned);
    if search.is_none() {
        errors.insert(
            "search".to_owned(),
            "property is missing and it is not optional".to_owned(),
        );
    }
    let mut servers = Vec::new();
    for key in ["dns1", "dns2", "dns3"] {
        if let Some(server) = params.get(key)? {
            if server.parse::<std::net::IpAddr>().is_err() {
                errors.insert(
                    key.to_owned(),
                    format!("value '{server}' does not look like a valid IP address"),
                );
            }
            servers.push(server.to_owned());
        }
    }
    if !errors.is_empty() {
        return Err(ApiError::params(errors));
    }
    let mut cluster = state.0.cluster();
    cluster.node(&node)?;
    if let Some(node) = cluster.nodes.get_mut(&node) {
        node.settings.search = search;
        node.settings.dns = servers;
    }
    Ok(data(Value::Null))
}

/// `PUT /nodes/{node}/time` (`set_timezone`): a zone from the node's zoneinfo list. The
/// simulator has no zone data: a name shaped like one (`UTC`, `Europe/Berlin`) is taken, and
/// its offset stays what the scenario gave.
pub(crate) async fn update_time(
    state: SimState,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let Some(zone) = params.get("timezone")?.map(str::to_owned) else {
        return Err(ApiError::param(
            "timezone",
            "property is missing and it is not optional",
        ));
    };
    let part = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_+-".contains(c))
    };
    let shaped =
        zone.split('/').all(part) && zone.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    if !shaped {
        return Err(ApiError::param("timezone", "No such timezone"));
    }
    let mut cluster = state.0.cluster();
    cluster.node(&node)?;
    if let Some(node) = cluster.nodes.get_mut(&node) {
        node.settings.timezone = zone;
    }
    Ok(data(Value::Null))
}
