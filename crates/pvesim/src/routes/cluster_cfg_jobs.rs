//! `/cluster/replication` (pve-manager `PVE/API2/ReplicationConfig.pm`) and
//! `/cluster/metrics/server` (`PVE/API2/Cluster/MetricServer.pm`, the plugins in
//! `PVE/Status/*.pm`).

use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::cluster_cfg::{check_digest, configid, digest, section_json, update_section};
use super::{Params, SimState, data};
use crate::cluster_cfg::Section;
use crate::error::{ApiError, ApiResult};
use crate::firewall::spec::{self, DELETE_LIST, DIGEST, Field};

// --- replication ----------------------------------------------------------------------------

const JOB_KEYS: &[&str] = &[
    "comment",
    "disable",
    "rate",
    "schedule",
    "source",
    "remove_job",
];

fn job_id(v: &str) -> bool {
    v.split_once('-').is_some_and(|(g, n)| {
        !g.is_empty()
            && !n.is_empty()
            && g.bytes().all(|c| c.is_ascii_digit())
            && n.bytes().all(|c| c.is_ascii_digit())
    })
}

fn job_fields(create: bool) -> Vec<Field> {
    let mut fields = vec![
        Field::str("comment").max_len(4096),
        Field::boolean("disable"),
        Field::str("rate"),
        Field::str("schedule").max_len(128),
        Field::str("source"),
    ];
    if create {
        fields.extend([
            Field::str("id").required().pattern(job_id),
            Field::str("target").required(),
            Field::one_of("type", &["local"]).required(),
        ]);
    } else {
        fields.extend([DIGEST, DELETE_LIST]);
    }
    fields
}

fn check_rate(values: &spec::Checked) -> ApiResult<()> {
    match values.get("rate").map(|r| r.parse::<f64>()) {
        Some(Ok(r)) if r >= 1.0 => Ok(()),
        Some(Ok(_)) => Err(ApiError::param(
            "rate",
            "value must have a minimum value of 1",
        )),
        Some(Err(_)) => Err(ApiError::param(
            "rate",
            format!(
                "type check ('number') failed - got '{}'",
                values.get("rate").cloned().unwrap_or_default()
            ),
        )),
        None => Ok(()),
    }
}

fn job_json(id: &str, section: &Section) -> Value {
    let mut out = section_json(section, &["guest", "jobnum", "disable"]);
    out.insert("id".to_owned(), json!(id));
    Value::Object(out)
}

pub(super) async fn jobs_list(state: SimState) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let list = cluster
        .cluster_cfg
        .replication
        .iter()
        .map(|(id, s)| job_json(id, s))
        .collect();
    Ok(data(Value::Array(list)))
}

pub(super) async fn job_get(state: SimState, Path(id): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let all = &cluster.cluster_cfg.replication;
    let section = all
        .get(&id)
        .ok_or_else(|| ApiError::die(format!("no such replication job '{id}'")))?;
    let mut out = job_json(&id, section);
    out["digest"] = json!(digest(all));
    Ok(data(out))
}

/// `POST /cluster/replication`: the guest exists, the target is another node, and every
/// volume of the guest can be replicated (ZFS).
pub(super) async fn job_create(state: SimState, params: Params) -> ApiResult<Response> {
    let mut checked = spec::check(&params, &job_fields(true))?;
    check_rate(&checked)?;
    let id = checked.remove("id").unwrap_or_default();
    let target = checked.remove("target").unwrap_or_default();
    let (guest, jobnum) = id.split_once('-').unwrap_or_default();
    let (guest, jobnum) = (guest.to_owned(), jobnum.to_owned());
    let mut cluster = state.0.cluster();
    let vmid: u32 = guest.parse().unwrap_or_default();
    let Some(source) = cluster.guests.get(&vmid).map(|g| g.node.clone()) else {
        return Err(ApiError::die(format!("Guest '{guest}' does not exist.")));
    };
    if !cluster.nodes.contains_key(&target) {
        return Err(ApiError::die(format!("Target '{target}' does not exist.")));
    }
    if let Some(given) = checked.get("source")
        && *given != source
    {
        return Err(ApiError::die(format!(
            "Source '{given}' does not match current node of guest '{guest}' ({source})"
        )));
    }
    if source == target {
        return Err(ApiError::die("Source and target must not be identical"));
    }
    if cluster.replicatable_volumes(vmid)? == 0 {
        return Err(ApiError::die("No replicatable volumes found"));
    }
    if cluster.cluster_cfg.replication.contains_key(&id) {
        return Err(ApiError::die(format!(
            "replication job '{id}' already exists"
        )));
    }
    let mut section = Section::from([
        (
            "type".to_owned(),
            checked.remove("type").unwrap_or_default(),
        ),
        ("target".to_owned(), target),
        ("guest".to_owned(), guest),
        ("jobnum".to_owned(), jobnum),
        ("source".to_owned(), source),
    ]);
    update_section(&mut section, &checked, &[], JOB_KEYS, &[])?;
    cluster.cluster_cfg.replication.insert(id, section);
    Ok(data(Value::Null))
}

pub(super) async fn job_update(
    state: SimState,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let checked = spec::check(&params, &job_fields(false))?;
    check_rate(&checked)?;
    let mut cluster = state.0.cluster();
    let all = &mut cluster.cluster_cfg.replication;
    check_digest(checked.get("digest"), &digest(&*all))?;
    let section = all
        .get_mut(&id)
        .ok_or_else(|| ApiError::die(format!("no such job '{id}'")))?;
    update_section(section, &checked, &params.list("delete"), JOB_KEYS, &[])?;
    Ok(data(Value::Null))
}

/// `DELETE /cluster/replication/{id}`: PVE marks the job for removal and its runner removes
/// it within the minute; the simulator's runner is instant.
pub(super) async fn job_delete(
    state: SimState,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    spec::check(&params, &[Field::boolean("keep"), Field::boolean("force")])?;
    let mut cluster = state.0.cluster();
    if cluster.cluster_cfg.replication.remove(&id).is_none() {
        return Err(ApiError::die(format!("no such job '{id}'")));
    }
    Ok(data(Value::Null))
}

// --- metric servers -------------------------------------------------------------------------

/// The keys each plugin takes (beyond `type`), and those it requires.
fn plugin(kind: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    Some(match kind {
        "graphite" => (
            &[
                "server", "port", "mtu", "proto", "timeout", "path", "disable",
            ],
            &["server"],
        ),
        "influxdb" => (
            &[
                "server",
                "port",
                "mtu",
                "disable",
                "organization",
                "bucket",
                "token",
                "influxdbproto",
                "timeout",
                "max-body-size",
                "api-path-prefix",
                "verify-certificate",
            ],
            &["server", "port"],
        ),
        "opentelemetry" => (
            &[
                "server",
                "port",
                "disable",
                "otel-protocol",
                "otel-path",
                "otel-timeout",
                "otel-headers",
                "otel-verify-ssl",
                "otel-max-body-size",
                "otel-resource-attributes",
                "otel-compression",
            ],
            &["server"],
        ),
        _ => return None,
    })
}

fn metric_fields(create: bool) -> Vec<Field> {
    let mut fields = vec![
        Field::str("server"),
        Field::int("port", Some(1), Some(65536)),
        Field::int("mtu", Some(512), Some(65536)),
        Field::boolean("disable"),
        Field::int("timeout", Some(0), None),
        Field::str("path"),
        Field::one_of("proto", &["udp", "tcp"]),
        Field::str("organization"),
        Field::str("bucket"),
        Field::str("token"),
        Field::one_of("influxdbproto", &["udp", "http", "https"]),
        Field::int("max-body-size", Some(1), None),
        Field::str("api-path-prefix"),
        Field::boolean("verify-certificate"),
        Field::one_of("otel-protocol", &["http", "https"]),
        Field::str("otel-path"),
        Field::int("otel-timeout", Some(1), Some(10)),
        Field::str("otel-headers"),
        Field::boolean("otel-verify-ssl"),
        Field::int("otel-max-body-size", Some(1024), None),
        Field::str("otel-resource-attributes"),
        Field::one_of("otel-compression", &["none", "gzip"]),
    ];
    if create {
        fields.push(Field::one_of("type", &["graphite", "influxdb", "opentelemetry"]).required());
    } else {
        fields.extend([DIGEST, DELETE_LIST]);
    }
    fields
}

/// The plugin's keys only: another plugin's key is refused.
fn check_plugin(kind: &str, values: &spec::Checked, create: bool) -> ApiResult<()> {
    let Some((allowed, required)) = plugin(kind) else {
        return Err(ApiError::die(format!("unknown section type '{kind}'")));
    };
    for key in values.keys() {
        if !allowed.contains(&key.as_str()) && !["type", "digest", "delete"].contains(&key.as_str())
        {
            return Err(ApiError::die(format!("unexpected property '{key}'")));
        }
    }
    if create && let Some(key) = required.iter().find(|k| !values.contains_key(**k)) {
        return Err(ApiError::param(
            key,
            "property is missing and it is not optional",
        ));
    }
    Ok(())
}

pub(super) async fn metrics_list(state: SimState) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let list = cluster
        .cluster_cfg
        .metrics
        .iter()
        .map(|(id, s)| {
            json!({
                "id": id,
                "disable": s.get("disable").map_or(0, |d| i64::from(d == "1")),
                "type": s.get("type"),
                "server": s.get("server"),
                "port": s.get("port").and_then(|p| p.parse::<i64>().ok()),
            })
        })
        .collect();
    Ok(data(Value::Array(list)))
}

/// `GET /cluster/metrics/server/{id}`: the section, without the token (kept apart by PVE).
pub(super) async fn metric_get(state: SimState, Path(id): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let all = &cluster.cluster_cfg.metrics;
    let Some(section) = all.get(&id) else {
        return Err(ApiError::die(format!(
            "status server entry '{id}' does not exist"
        )));
    };
    let mut section = section.clone();
    section.remove("token");
    let numbers = &[
        "port",
        "mtu",
        "timeout",
        "disable",
        "max-body-size",
        "verify-certificate",
        "otel-timeout",
        "otel-verify-ssl",
        "otel-max-body-size",
    ];
    let mut out = section_json(&section, numbers);
    out.insert("digest".to_owned(), json!(digest(all)));
    Ok(data(Value::Object(out)))
}

pub(super) async fn metric_create(
    state: SimState,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let id = spec::check_path(&Field::str("id").pattern(configid), &id)?;
    let mut checked = spec::check(&params, &metric_fields(true))?;
    let kind = checked.remove("type").unwrap_or_default();
    check_plugin(&kind, &checked, true)?;
    let mut cluster = state.0.cluster();
    if cluster.cluster_cfg.metrics.contains_key(&id) {
        return Err(ApiError::die(format!(
            "Metric server '{id}' already exists"
        )));
    }
    let mut section = Section::from([("type".to_owned(), kind)]);
    section.extend(checked);
    cluster.cluster_cfg.metrics.insert(id, section);
    Ok(data(Value::Null))
}

pub(super) async fn metric_update(
    state: SimState,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let checked = spec::check(&params, &metric_fields(false))?;
    let mut cluster = state.0.cluster();
    let all = &mut cluster.cluster_cfg.metrics;
    check_digest(checked.get("digest"), &digest(&*all))?;
    let section = all
        .get_mut(&id)
        .ok_or_else(|| ApiError::die(format!("no such server '{id}'")))?;
    let kind = section.get("type").cloned().unwrap_or_default();
    check_plugin(&kind, &checked, false)?;
    let (allowed, required) = plugin(&kind).unwrap_or_default();
    update_section(section, &checked, &params.list("delete"), allowed, required)?;
    Ok(data(Value::Null))
}

pub(super) async fn metric_delete(state: SimState, Path(id): Path<String>) -> ApiResult<Response> {
    state.0.cluster().cluster_cfg.metrics.remove(&id);
    Ok(data(Value::Null))
}
