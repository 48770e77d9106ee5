//! The node data sources, read as bpg reads them (`proxmoxtf/datasource/nodes.go`, `node.go`,
//! `dns.go`, `hosts.go`, `time.go`, `fwprovider/datasource_version.go`).

use serde_json::Value as Json;
use time::{OffsetDateTime, UtcOffset, format_description::well_known::Rfc3339};

use super::json::{attrs, items, list, number, object, strings, text};
use super::{Attributes, DataRead, Facts, Query, ReadError};
use crate::value::Value;

pub(super) fn nodes_query(_: &DataRead) -> Vec<Query> {
    vec![Query::Nodes]
}

/// Every node, in the order PVE lists them, as parallel lists.
pub(super) fn nodes(_: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let listed = items(facts.read(&Query::Nodes, "error retrieving nodes")?);
    let column = |f: &dyn Fn(&Json) -> Value| list(listed.iter().map(f));
    let or = |key: &'static str, fallback: f64| {
        column(&move |n| Value::Number(number(n, key).unwrap_or(fallback)))
    };
    Ok(attrs([
        ("id", Value::string("nodes")),
        ("cpu_count", or("maxcpu", 1.0)),
        (
            "cpu_utilization",
            column(&|n| Value::Number(round2(number(n, "cpu").unwrap_or(0.0)))),
        ),
        ("memory_available", or("maxmem", 0.0)),
        ("memory_used", or("mem", 0.0)),
        (
            "names",
            column(&|n| Value::String(text(n, "node").unwrap_or_default())),
        ),
        (
            "online",
            column(&|n| Value::Bool(text(n, "status").as_deref() == Some("online"))),
        ),
        (
            "ssl_fingerprints",
            // bpg writes the number 0 for a node without one: "0" in a list of strings.
            column(&|n| Value::String(text(n, "ssl_fingerprint").unwrap_or_else(|| "0".into()))),
        ),
        (
            "support_levels",
            column(&|n| Value::String(text(n, "level").unwrap_or_default())),
        ),
        ("uptime", or("uptime", 0.0)),
    ]))
}

/// bpg rounds utilisation to two decimals.
fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

pub(super) fn node_query(read: &DataRead) -> Vec<Query> {
    vec![Query::NodeStatus {
        node: read.text("node_name"),
    }]
}

/// One node's `status`: CPU, memory and uptime.
pub(super) fn node(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let node = read.text("node_name");
    let query = Query::NodeStatus { node: node.clone() };
    let status = facts.read(&query, "error retrieving node information")?;
    let cpu = status.get("cpuinfo").cloned().unwrap_or(Json::Null);
    let memory = status.get("memory").cloned().unwrap_or(Json::Null);
    let has_total = number(&memory, "total").is_some();
    let mem = |key| {
        Value::Number(if has_total {
            number(&memory, key).unwrap_or(0.0)
        } else {
            0.0
        })
    };
    Ok(attrs([
        ("id", Value::String(node)),
        (
            "cpu_cores",
            Value::Number(number(&cpu, "cores").unwrap_or(1.0)),
        ),
        (
            "cpu_count",
            Value::Number(number(&cpu, "cpus").unwrap_or(1.0)),
        ),
        (
            "cpu_sockets",
            Value::Number(number(&cpu, "sockets").unwrap_or(1.0)),
        ),
        (
            "cpu_model",
            Value::String(text(&cpu, "model").unwrap_or_default()),
        ),
        (
            "cpu_utilization",
            Value::Number(round2(number(status, "cpu").unwrap_or(0.0))),
        ),
        ("memory_available", mem("free")),
        ("memory_used", mem("used")),
        ("memory_total", mem("total")),
        (
            "uptime",
            Value::Number(number(status, "uptime").unwrap_or(0.0)),
        ),
    ]))
}

pub(super) fn version_query(_: &DataRead) -> Vec<Query> {
    vec![Query::Version]
}

/// `GET /version`: the release, the repository id and the full version.
pub(super) fn version(_: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let v = facts.read(&Query::Version, "error retrieving version")?;
    let field = |key| Value::String(text(v, key).unwrap_or_default());
    Ok(attrs([
        ("id", Value::string("version")),
        ("release", field("release")),
        ("repository_id", field("repoid")),
        ("version", field("version")),
    ]))
}

pub(super) fn dns_query(read: &DataRead) -> Vec<Query> {
    vec![Query::Dns {
        node: read.text("node_name"),
    }]
}

/// The node's search domain and its (up to three) DNS servers, in order.
pub(super) fn dns(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let node = read.text("node_name");
    let query = Query::Dns { node: node.clone() };
    let dns = facts.read(&query, "error retrieving DNS configuration")?;
    let servers = ["dns1", "dns2", "dns3"]
        .into_iter()
        .filter_map(|key| text(dns, key));
    Ok(attrs([
        ("id", Value::String(format!("{node}_dns"))),
        (
            "domain",
            Value::String(text(dns, "search").unwrap_or_default()),
        ),
        ("servers", strings(servers)),
    ]))
}

pub(super) fn hosts_query(read: &DataRead) -> Vec<Query> {
    vec![Query::Hosts {
        node: read.text("node_name"),
    }]
}

/// The node's `/etc/hosts`, parsed line by line as bpg does: comments and lines that start
/// with a blank are skipped, tabs count as spaces, the first word is the address.
pub(super) fn hosts(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let node = read.text("node_name");
    let query = Query::Hosts { node: node.clone() };
    let hosts = facts.read(&query, "error retrieving hosts configuration")?;
    let content = text(hosts, "data").unwrap_or_default();
    let mut addresses = Vec::new();
    let mut entries = Vec::new();
    let mut hostnames = Vec::new();
    for line in content.split('\n') {
        if line.starts_with('#') {
            continue;
        }
        let line = line.replace('\t', " ");
        let mut words = line.split(' ');
        let address = words.next().unwrap_or_default();
        if address.is_empty() {
            continue;
        }
        let names: Vec<&str> = words.filter(|w| !w.is_empty()).collect();
        addresses.push(address.to_owned());
        entries.push(object([
            ("address", Value::string(address)),
            ("hostnames", strings(names.clone())),
        ]));
        hostnames.push(strings(names));
    }
    Ok(attrs([
        ("id", Value::String(format!("{node}_hosts"))),
        ("addresses", strings(addresses)),
        (
            "digest",
            Value::String(text(hosts, "digest").unwrap_or_default()),
        ),
        ("entries", list(entries)),
        ("hostnames", list(hostnames)),
    ]))
}

pub(super) fn time_query(read: &DataRead) -> Vec<Query> {
    vec![Query::Time {
        node: read.text("node_name"),
    }]
}

/// The node's time zone, its time in UTC, and the same instant at the node's offset (PVE's
/// `localtime` is `time` shifted by the zone's offset), both as RFC 3339.
pub(super) fn time(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let node = read.text("node_name");
    let query = Query::Time { node: node.clone() };
    let now = facts.read(&query, "error retrieving time")?;
    let utc = number(now, "time").unwrap_or(0.0) as i64;
    let local = number(now, "localtime").map_or(utc, |l| l as i64);
    let offset = i32::try_from(local - utc)
        .ok()
        .and_then(|s| UtcOffset::from_whole_seconds(s).ok())
        .unwrap_or(UtcOffset::UTC);
    let instant = OffsetDateTime::from_unix_timestamp(utc)
        .map_err(|e| ReadError::new(format!("error retrieving time: {e}")))?;
    let rfc3339 = |t: OffsetDateTime| t.format(&Rfc3339).unwrap_or_default();
    Ok(attrs([
        ("id", Value::String(format!("{node}_time"))),
        (
            "local_time",
            Value::String(rfc3339(instant.to_offset(offset))),
        ),
        (
            "time_zone",
            Value::String(text(now, "timezone").unwrap_or_default()),
        ),
        ("utc_time", Value::String(rfc3339(instant))),
    ]))
}
