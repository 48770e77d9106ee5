//! The cluster configuration's data source schemas (bpg's framework data sources): HA groups
//! and resources, replication jobs, a metric server, under both of bpg's names (the long one
//! deprecated).

use std::collections::BTreeMap;

use super::BodySchema;
use super::builders::*;
use crate::types::{Constraint, ObjectAttr};

/// Every name, long and short.
pub(super) const NAMES: &[&str] = &[
    "proxmox_hagroups",
    "proxmox_virtual_environment_hagroups",
    "proxmox_hagroup",
    "proxmox_virtual_environment_hagroup",
    "proxmox_haresources",
    "proxmox_virtual_environment_haresources",
    "proxmox_haresource",
    "proxmox_virtual_environment_haresource",
    "proxmox_replications",
    "proxmox_virtual_environment_replications",
    "proxmox_replication",
    "proxmox_virtual_environment_replication",
    "proxmox_metrics_server",
    "proxmox_virtual_environment_metrics_server",
];

fn body(attrs: Vec<super::AttrSchema>) -> BodySchema {
    BodySchema {
        attrs,
        blocks: Vec::new(),
    }
}

fn set_of_strings() -> Constraint {
    Constraint::Set(Box::new(s()))
}

fn job_fields() -> Vec<(&'static str, Constraint)> {
    vec![
        ("comment", s()),
        ("disable", b()),
        ("guest", n()),
        ("id", s()),
        ("jobnum", n()),
        ("rate", n()),
        ("schedule", s()),
        ("source", s()),
        ("target", s()),
        ("type", s()),
    ]
}

/// The schema, the type name as `'static`, and bpg's deprecation message for a long name.
pub(super) fn schema(type_name: &str) -> Option<(&'static str, BodySchema, Option<&'static str>)> {
    let name = *NAMES.iter().find(|n| **n == type_name)?;
    let short = name
        .strip_prefix("proxmox_virtual_environment_")
        .or_else(|| name.strip_prefix("proxmox_"))?;
    let body = match short {
        "hagroups" => body(vec![ro("id", s()), ro("group_ids", set_of_strings())]),
        "hagroup" => body(vec![
            req("group", s()),
            ro("id", s()),
            ro("comment", s()),
            ro("no_failback", b()),
            ro("restricted", b()),
            ro("nodes", Constraint::Map(Box::new(n()))),
        ]),
        "haresources" => body(vec![
            opt("type", s()),
            ro("id", s()),
            ro("resource_ids", set_of_strings()),
        ]),
        "haresource" => body(vec![
            req("resource_id", s()),
            ro("id", s()),
            ro("comment", s()),
            ro("failback", b()),
            ro("group", s()),
            ro("max_relocate", n()),
            ro("max_restart", n()),
            ro("state", s()),
            ro("type", s()),
        ]),
        "replications" => {
            let mut fields = job_fields();
            fields.push(("remove_job", s()));
            let attrs: BTreeMap<String, ObjectAttr> = fields
                .into_iter()
                .map(|(k, ty)| {
                    let attr = ObjectAttr {
                        ty,
                        optional: false,
                        default: None,
                    };
                    (k.to_owned(), attr)
                })
                .collect();
            body(vec![ro("replications", list_of(Constraint::Object(attrs)))])
        }
        "replication" => {
            let mut attrs = vec![req("id", s())];
            attrs.extend(
                job_fields()
                    .into_iter()
                    .filter(|(k, _)| *k != "id")
                    .map(|(k, ty)| ro(k, ty)),
            );
            body(attrs)
        }
        "metrics_server" => body(vec![
            req("name", s()),
            ro("id", s()),
            ro("disable", b()),
            ro("port", n()),
            ro("server", s()),
            ro("type", s()),
            ro("opentelemetry_compression", s()),
            sens(ro("opentelemetry_headers", s())),
            ro("opentelemetry_max_body_size", n()),
            ro("opentelemetry_path", s()),
            ro("opentelemetry_proto", s()),
            ro("opentelemetry_resource_attributes", s()),
            ro("opentelemetry_timeout", n()),
            ro("opentelemetry_verify_ssl", b()),
        ]),
        _ => return None,
    };
    let deprecated = name
        .starts_with("proxmox_virtual_environment_")
        .then(|| moved(short));
    Some((name, body, deprecated.flatten()))
}

/// bpg's message on a long name its `proxmox_*` name replaces.
fn moved(short: &str) -> Option<&'static str> {
    Some(match short {
        "hagroups" => {
            "Use \"proxmox_hagroups\" instead. This resource / data source will be removed in v1.0."
        }
        "hagroup" => {
            "Use \"proxmox_hagroup\" instead. This resource / data source will be removed in v1.0."
        }
        "haresources" => {
            "Use \"proxmox_haresources\" instead. This resource / data source will be removed in v1.0."
        }
        "haresource" => {
            "Use \"proxmox_haresource\" instead. This resource / data source will be removed in v1.0."
        }
        "replications" => {
            "Use \"proxmox_replications\" instead. This resource / data source will be removed in v1.0."
        }
        "replication" => {
            "Use \"proxmox_replication\" instead. This resource / data source will be removed in v1.0."
        }
        "metrics_server" => {
            "Use \"proxmox_metrics_server\" instead. This resource / data source will be removed in v1.0."
        }
        _ => return None,
    })
}
