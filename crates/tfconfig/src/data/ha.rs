//! The cluster configuration's data sources, read as bpg reads them
//! (`fwprovider/cluster/ha`, `replication`, `metrics`): HA groups and resources, replication
//! jobs, a metric server.

use serde_json::Value as Json;

use super::json::{attrs, bool_or_null, flag, items, list, number, number_or_null, strings, text};
use super::{Attributes, DataRead, Facts, Query, ReadError};
use crate::value::Value;

fn string_or_null(v: Option<String>) -> Value {
    v.map_or_else(Value::null, Value::String)
}

/// bpg's framework errors: a summary and PVE's message as the detail.
fn read<'f>(facts: &'f Facts, query: &Query, summary: String) -> Result<&'f Json, ReadError> {
    match facts.readings.get(query) {
        Some(Ok(data)) => Ok(data),
        Some(Err(message)) => Err(ReadError::detailed(summary, message.clone())),
        None => Err(ReadError::detailed(summary, "the cluster was not read")),
    }
}

pub(super) fn hagroups_query(_: &DataRead) -> Vec<Query> {
    vec![Query::HaGroups]
}

pub(super) fn hagroups(_: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let listed = read(
        facts,
        &Query::HaGroups,
        "Unable to read High Availability groups".to_owned(),
    )?;
    let ids = items(listed).iter().filter_map(|g| text(g, "group"));
    Ok(attrs([
        ("id", Value::string("hagroups")),
        ("group_ids", strings(ids)),
    ]))
}

fn hagroup_request(r: &DataRead) -> Query {
    Query::HaGroup {
        group: r.text("group"),
    }
}

pub(super) fn hagroup_query(r: &DataRead) -> Vec<Query> {
    vec![hagroup_request(r)]
}

/// PVE's `node[:priority]` list as bpg's map of node names to priorities (`null` for none).
fn node_map(list: &str) -> Value {
    Value::Object(
        list.split(',')
            .filter(|n| !n.is_empty())
            .map(|entry| match entry.split_once(':') {
                Some((node, prio)) => (
                    node.to_owned(),
                    prio.parse().map_or_else(|_| Value::null(), Value::Number),
                ),
                None => (entry.to_owned(), Value::null()),
            })
            .collect(),
    )
}

pub(super) fn hagroup(r: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let group = r.text("group");
    let found = read(
        facts,
        &hagroup_request(r),
        format!("Unable to read High Availability group '{group}'"),
    )?;
    Ok(attrs([
        ("id", Value::String(group)),
        ("comment", string_or_null(text(found, "comment"))),
        (
            "no_failback",
            Value::Bool(flag(found, "nofailback").unwrap_or(false)),
        ),
        (
            "restricted",
            Value::Bool(flag(found, "restricted").unwrap_or(false)),
        ),
        ("nodes", node_map(&text(found, "nodes").unwrap_or_default())),
    ]))
}

fn haresources_request(r: &DataRead) -> Query {
    Query::HaResources {
        kind: r.optional("type"),
    }
}

pub(super) fn haresources_query(r: &DataRead) -> Vec<Query> {
    vec![haresources_request(r)]
}

pub(super) fn haresources(r: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let kind = r.optional("type");
    if let Some(k) = kind.as_deref()
        && k != "vm"
        && k != "ct"
    {
        return Err(ReadError::detailed(
            "Unexpected HA resource type",
            format!("Could not parse HA resource type '{k}'"),
        ));
    }
    let listed = read(
        facts,
        &haresources_request(r),
        "Unable to read High Availability resources".to_owned(),
    )?;
    let ids = items(listed).iter().filter_map(|g| text(g, "sid"));
    let id = kind.map_or_else(|| "haresources".to_owned(), |k| format!("haresources:{k}"));
    Ok(attrs([
        ("id", Value::String(id)),
        ("resource_ids", strings(ids)),
    ]))
}

fn haresource_request(r: &DataRead) -> Query {
    Query::HaResource {
        sid: r.text("resource_id"),
    }
}

pub(super) fn haresource_query(r: &DataRead) -> Vec<Query> {
    vec![haresource_request(r)]
}

pub(super) fn haresource(r: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let sid = r.text("resource_id");
    let found = read(
        facts,
        &haresource_request(r),
        format!("Unable to read High Availability resource {sid}"),
    )?;
    let kind = text(found, "type").or_else(|| sid.split_once(':').map(|(k, _)| k.to_owned()));
    Ok(attrs([
        ("id", Value::String(sid)),
        ("comment", string_or_null(text(found, "comment"))),
        ("failback", bool_or_null(flag(found, "failback"))),
        ("group", string_or_null(text(found, "group"))),
        (
            "max_relocate",
            number_or_null(number(found, "max_relocate")),
        ),
        ("max_restart", number_or_null(number(found, "max_restart"))),
        ("state", string_or_null(text(found, "state"))),
        ("type", string_or_null(kind)),
    ]))
}

/// One replication job as bpg's model holds it.
fn job(found: &Json) -> Vec<(&'static str, Value)> {
    vec![
        ("id", string_or_null(text(found, "id"))),
        ("comment", string_or_null(text(found, "comment"))),
        ("disable", bool_or_null(flag(found, "disable"))),
        ("guest", number_or_null(number(found, "guest"))),
        ("jobnum", number_or_null(number(found, "jobnum"))),
        ("rate", number_or_null(number(found, "rate"))),
        ("schedule", string_or_null(text(found, "schedule"))),
        ("source", string_or_null(text(found, "source"))),
        ("target", string_or_null(text(found, "target"))),
        ("type", string_or_null(text(found, "type"))),
    ]
}

pub(super) fn replications_query(_: &DataRead) -> Vec<Query> {
    vec![Query::Replications]
}

pub(super) fn replications(_: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let listed = read(
        facts,
        &Query::Replications,
        "Unable to Read Replications".to_owned(),
    )?;
    let jobs = items(listed).iter().map(|j| {
        let mut fields = job(j);
        fields.push(("remove_job", string_or_null(text(j, "remove_job"))));
        Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    });
    Ok(attrs([("replications", list(jobs))]))
}

fn replication_request(r: &DataRead) -> Query {
    Query::Replication { id: r.text("id") }
}

pub(super) fn replication_query(r: &DataRead) -> Vec<Query> {
    vec![replication_request(r)]
}

pub(super) fn replication(r: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let id = r.text("id");
    let found = match facts.readings.get(&replication_request(r)) {
        Some(Err(message)) if message.contains("no such replication job") => {
            return Err(ReadError::detailed(
                "Replication Not Found",
                format!("Replication with ID '{id}' was not found"),
            ));
        }
        _ => read(
            facts,
            &replication_request(r),
            "Unable to Read Replication".to_owned(),
        )?,
    };
    let mut fields: Attributes = job(found)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    fields.insert("id".to_owned(), Value::String(id));
    Ok(fields)
}

fn metrics_request(r: &DataRead) -> Query {
    Query::MetricServer { id: r.text("name") }
}

pub(super) fn metrics_server_query(r: &DataRead) -> Vec<Query> {
    vec![metrics_request(r)]
}

pub(super) fn metrics_server(r: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let name = r.text("name");
    let found = match facts.readings.get(&metrics_request(r)) {
        Some(Err(message)) if message.contains("does not exist") => {
            return Err(ReadError::detailed(
                "Metrics Server Not Found",
                format!("Metrics server with ID {name:?} was not found"),
            ));
        }
        _ => read(
            facts,
            &metrics_request(r),
            "Unable to Read Metrics Server".to_owned(),
        )?,
    };
    let headers = text(found, "otel-headers").map(|h| Value::String(h).mark(true));
    Ok(attrs([
        ("id", Value::String(name.clone())),
        ("name", Value::String(name)),
        (
            "disable",
            Value::Bool(flag(found, "disable").unwrap_or(false)),
        ),
        ("port", number_or_null(number(found, "port"))),
        ("server", string_or_null(text(found, "server"))),
        ("type", string_or_null(text(found, "type"))),
        (
            "opentelemetry_compression",
            string_or_null(text(found, "otel-compression")),
        ),
        ("opentelemetry_headers", headers.unwrap_or_else(Value::null)),
        (
            "opentelemetry_max_body_size",
            number_or_null(number(found, "otel-max-body-size")),
        ),
        (
            "opentelemetry_path",
            string_or_null(text(found, "otel-path")),
        ),
        (
            "opentelemetry_proto",
            string_or_null(text(found, "otel-protocol")),
        ),
        (
            "opentelemetry_resource_attributes",
            string_or_null(text(found, "otel-resource-attributes")),
        ),
        (
            "opentelemetry_timeout",
            number_or_null(number(found, "otel-timeout")),
        ),
        (
            "opentelemetry_verify_ssl",
            bool_or_null(flag(found, "otel-verify-ssl")),
        ),
    ]))
}

#[cfg(test)]
mod tests {
    use super::super::json::object;
    use super::*;
    use std::collections::BTreeMap;

    fn facts(query: Query, data: Json) -> Facts {
        Facts {
            guests: Vec::new(),
            readings: BTreeMap::from([(query, Ok(data))]),
        }
    }

    fn read_of(data_type: &str, args: Value) -> DataRead {
        DataRead {
            data_type: data_type.to_owned(),
            address: format!("data.{data_type}.x"),
            arguments: args,
            subject: crate::diag::Span {
                file: 0,
                range: 0..1,
            },
            declared_at: "main.tf:1".to_owned(),
        }
    }

    #[test]
    fn an_ha_resource_reads_as_bpg_gives_it() {
        let r = read_of(
            "proxmox_haresource",
            object([("resource_id", Value::string("vm:100"))]),
        );
        let f = facts(
            Query::HaResource {
                sid: "vm:100".to_owned(),
            },
            serde_json::json!({"sid": "vm:100", "type": "vm", "state": "started", "max_restart": 2}),
        );
        let got = haresource(&r, &f).expect("read");
        assert_eq!(got["state"], Value::string("started"));
        assert_eq!(got["max_restart"], Value::Number(2.0));
        assert!(got["group"].is_null());
    }

    #[test]
    fn a_missing_replication_job_is_bpgs_not_found() {
        let r = read_of(
            "proxmox_replication",
            object([("id", Value::string("100-0"))]),
        );
        let f = Facts {
            guests: Vec::new(),
            readings: BTreeMap::from([(
                Query::Replication {
                    id: "100-0".to_owned(),
                },
                Err("no such replication job '100-0'".to_owned()),
            )]),
        };
        let e = replication(&r, &f).expect_err("not found");
        assert_eq!(e.summary, "Replication Not Found");
    }

    #[test]
    fn group_nodes_read_as_a_map_with_null_priorities() {
        let nodes = node_map("pve:2,pve2");
        let Value::Object(map) = nodes else {
            panic!("an object")
        };
        assert_eq!(map["pve"], Value::Number(2.0));
        assert!(map["pve2"].is_null());
    }
}
