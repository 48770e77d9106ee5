//! The cluster's own configuration (bpg/proxmox, framework resources except `_hosts`): a
//! node's `/etc/hosts`, the datacenter options, HA groups, resources and rules, storage
//! replication jobs and metric servers, under both of bpg's names where it has two (the long
//! `proxmox_virtual_environment_*` one deprecated). Defaults are those of bpg's code.

use std::collections::BTreeMap;

use super::builders::*;
use super::{AttrSchema, BlockSchema, BodySchema, Check, ResourceSchema};
use crate::types::{Constraint, ObjectAttr};

/// The resource types of this family, each under every name bpg registers.
pub(super) const TYPES: &[&str] = &[
    "proxmox_virtual_environment_hosts",
    "proxmox_cluster_options",
    "proxmox_virtual_environment_cluster_options",
    "proxmox_hagroup",
    "proxmox_virtual_environment_hagroup",
    "proxmox_haresource",
    "proxmox_virtual_environment_haresource",
    "proxmox_harule",
    "proxmox_virtual_environment_harule",
    "proxmox_replication",
    "proxmox_virtual_environment_replication",
    "proxmox_metrics_server",
    "proxmox_virtual_environment_metrics_server",
];

/// The states bpg's `ParseHAResourceState` takes (PVE's request states).
pub(super) const HA_STATES: &[&str] = &["started", "stopped", "enabled", "disabled", "ignored"];

fn one_of(a: AttrSchema, allowed: &'static [&'static str]) -> AttrSchema {
    checked(a, Check::OneOf(allowed))
}

fn between(a: AttrSchema, min: f64, max: f64) -> AttrSchema {
    checked(
        a,
        Check::Between {
            min,
            max,
            why: None,
        },
    )
}

fn schema(
    type_name: &'static str,
    attrs: Vec<AttrSchema>,
    blocks: Vec<BlockSchema>,
) -> ResourceSchema {
    ResourceSchema {
        type_name,
        body: BodySchema { attrs, blocks },
        generated: false,
    }
}

/// A nested attribute object whose fields are all optional (`next_id`, `notify`).
fn nested(fields: &[(&str, Constraint)]) -> Constraint {
    let attrs: BTreeMap<String, ObjectAttr> = fields
        .iter()
        .map(|(name, ty)| {
            let attr = ObjectAttr {
                ty: ty.clone(),
                optional: true,
                default: None,
            };
            ((*name).to_owned(), attr)
        })
        .collect();
    Constraint::Object(attrs)
}

/// A map of node names to priorities (`null` for none).
fn node_map() -> Constraint {
    Constraint::Map(Box::new(n()))
}

/// The schema of one of this family's types, under the name it was written with.
pub(super) fn resource(type_name: &str) -> Option<ResourceSchema> {
    let name: &'static str = TYPES.iter().copied().find(|t| *t == type_name)?;
    let short = name
        .strip_prefix("proxmox_virtual_environment_")
        .or_else(|| name.strip_prefix("proxmox_"))?;
    Some(match short {
        "hosts" => hosts(name),
        "cluster_options" => cluster_options(name),
        "hagroup" => hagroup(name),
        "haresource" => haresource(name),
        "harule" => harule(name),
        "replication" => replication(name),
        "metrics_server" => metrics_server(name),
        _ => return None,
    })
}

fn hosts(name: &'static str) -> ResourceSchema {
    let entry_object = nested(&[("address", s()), ("hostnames", ls())]);
    let attrs = vec![
        ro("id", s()),
        fnew(req("node_name", s())),
        ro("addresses", ls()),
        ro("digest", s()),
        ro("entries", list_of(entry_object)),
        ro("hostnames", list_of(ls())),
    ];
    let entry = block(
        "entry",
        None,
        vec![req("address", s()), req("hostnames", ls())],
        vec![],
    );
    schema(name, attrs, vec![entry])
}

fn cluster_options(name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        opt("bandwidth_limit_clone", n()),
        opt("bandwidth_limit_default", n()),
        opt("bandwidth_limit_migration", n()),
        opt("bandwidth_limit_move", n()),
        opt("bandwidth_limit_restore", n()),
        one_of(opt("console", s()), &["applet", "vv", "html5", "xtermjs"]),
        one_of(opt("crs_ha", s()), &["static", "basic", "dynamic"]),
        opt("crs_ha_auto_rebalance", b()),
        opt("crs_ha_auto_rebalance_hold_duration", n()),
        between(opt("crs_ha_auto_rebalance_margin", n()), 0.0, 100.0),
        one_of(
            opt("crs_ha_auto_rebalance_method", s()),
            &["bruteforce", "topsis"],
        ),
        between(opt("crs_ha_auto_rebalance_threshold", n()), 0.0, 100.0),
        opt("crs_ha_rebalance_on_start", b()),
        opt("description", s()),
        opt("email_from", s()),
        one_of(
            opt("ha_shutdown_policy", s()),
            &["freeze", "failover", "migrate", "conditional"],
        ),
        opt("http_proxy", s()),
        one_of(opt("keyboard", s()), KEYBOARDS),
        one_of(opt("language", s()), LANGUAGES),
        opt("mac_prefix", s()),
        checked(opt("max_workers", n()), Check::AtLeast(1.0)),
        opt("migration_cidr", s()),
        one_of(opt("migration_type", s()), &["secure", "insecure"]),
        opt("next_id", nested(&[("lower", n()), ("upper", n())])),
        opt(
            "notify",
            nested(&[
                ("ha_fencing_mode", s()),
                ("ha_fencing_target", s()),
                ("package_updates", s()),
                ("package_updates_target", s()),
                ("replication", s()),
                ("replication_target", s()),
            ]),
        ),
    ];
    schema(name, attrs, vec![])
}

const KEYBOARDS: &[&str] = &[
    "de", "de-ch", "da", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch", "hu", "is",
    "it", "ja", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sv", "sl", "tr",
];

const LANGUAGES: &[&str] = &[
    "ca", "da", "de", "en", "es", "eu", "fa", "fr", "he", "it", "ja", "nb", "nn", "pl", "pt_BR",
    "ru", "sl", "sv", "tr", "zh_CN", "zh_TW",
];

fn hagroup(name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        fnew(req("group", s())),
        req("nodes", node_map()),
        opt("comment", s()),
        db("no_failback", false),
        db("restricted", false),
    ];
    schema(name, attrs, vec![])
}

fn haresource(name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        fnew(req("resource_id", s())),
        opt("comment", s()),
        opt("failback", b()),
        opt("group", s()),
        between(opt("max_relocate", n()), 0.0, 10.0),
        between(opt("max_restart", n()), 0.0, 10.0),
        one_of(ds("state", "started"), HA_STATES),
        one_of(oc("type", s()), &["vm", "ct"]),
    ];
    schema(name, attrs, vec![])
}

fn harule(name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        fnew(req("rule", s())),
        one_of(req("type", s()), &["node-affinity", "resource-affinity"]),
        req("resources", Constraint::Set(Box::new(s()))),
        one_of(opt("affinity", s()), &["positive", "negative"]),
        opt("comment", s()),
        db("disable", false),
        opt("nodes", node_map()),
        db("strict", false),
    ];
    schema(name, attrs, vec![])
}

fn replication(name: &'static str) -> ResourceSchema {
    let attrs = vec![
        fnew(req("id", s())),
        req("target", s()),
        one_of(req("type", s()), &["local"]),
        opt("comment", s()),
        opt("disable", b()),
        opt("rate", n()),
        ds("schedule", "*/15"),
        ro("guest", n()),
        ro("jobnum", n()),
        ro("source", s()),
    ];
    schema(name, attrs, vec![])
}

fn metrics_server(name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        fnew(req("name", s())),
        between(req("port", n()), 1.0, 65536.0),
        req("server", s()),
        one_of(req("type", s()), &["graphite", "influxdb", "opentelemetry"]),
        opt("disable", b()),
        opt("graphite_path", s()),
        one_of(opt("graphite_proto", s()), &["udp", "tcp"]),
        opt("influx_api_path_prefix", s()),
        opt("influx_bucket", s()),
        one_of(opt("influx_db_proto", s()), &["udp", "http", "https"]),
        opt("influx_max_body_size", n()),
        opt("influx_organization", s()),
        sens(opt("influx_token", s())),
        sens(opt("influx_token_wo", s())),
        opt("influx_token_wo_version", n()),
        opt("influx_verify", b()),
        between(opt("mtu", n()), 512.0, 65536.0),
        one_of(opt("opentelemetry_compression", s()), &["none", "gzip"]),
        sens(opt("opentelemetry_headers", s())),
        opt("opentelemetry_max_body_size", n()),
        opt("opentelemetry_path", s()),
        one_of(opt("opentelemetry_proto", s()), &["http", "https"]),
        opt("opentelemetry_resource_attributes", s()),
        opt("opentelemetry_timeout", n()),
        opt("opentelemetry_verify_ssl", b()),
        opt("timeout", n()),
    ];
    schema(name, attrs, vec![])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_of_the_family_has_a_schema_and_the_long_ones_are_deprecated() {
        for name in TYPES {
            let schema = resource(name).expect("a schema");
            assert_eq!(schema.type_name, *name);
            let long = name.starts_with("proxmox_virtual_environment_");
            // bpg has only the long name for `_hosts`, and does not deprecate it
            assert_eq!(
                super::super::resource_deprecation(name).is_some(),
                long && *name != "proxmox_virtual_environment_hosts",
                "{name}"
            );
        }
        let rule = resource("proxmox_harule").expect("harule");
        assert!(rule.body.attr("rule").is_some_and(|a| a.required));
        assert!(resource("proxmox_hosts").is_none());
    }
}
