//! Schemas of the data sources that read the cluster beyond its guests, as bpg v0.111 declares
//! them: nodes, version, DNS, hosts, time (`proxmoxtf/datasource/`, `fwprovider/`), datastores
//! and files (`fwprovider/nodes/`), pools.

use std::collections::BTreeMap;

use super::builders::*;
use super::{AttrSchema, BodySchema};
use crate::types::{Constraint, ObjectAttr};

fn body(attrs: Vec<AttrSchema>) -> BodySchema {
    BodySchema {
        attrs,
        blocks: Vec::new(),
    }
}

fn ln() -> Constraint {
    list_of(n())
}

fn set_of_strings() -> Constraint {
    Constraint::Set(Box::new(s()))
}

/// An object type whose fields are all set by the read (`optional` false) or, for a nested
/// argument, all optional.
fn object(fields: Vec<(&str, Constraint)>, optional: bool) -> Constraint {
    let attrs: BTreeMap<String, ObjectAttr> = fields
        .into_iter()
        .map(|(name, ty)| {
            let attr = ObjectAttr {
                ty,
                optional,
                default: None,
            };
            (name.to_owned(), attr)
        })
        .collect();
    Constraint::Object(attrs)
}

pub(super) fn nodes() -> BodySchema {
    body(vec![
        ro("id", s()),
        ro("cpu_count", ln()),
        ro("cpu_utilization", ln()),
        ro("memory_available", ln()),
        ro("memory_used", ln()),
        ro("names", ls()),
        ro("online", list_of(b())),
        ro("ssl_fingerprints", ls()),
        ro("support_levels", ls()),
        ro("uptime", ln()),
    ])
}

pub(super) fn node() -> BodySchema {
    body(vec![
        req("node_name", s()),
        ro("id", s()),
        ro("cpu_cores", n()),
        ro("cpu_count", n()),
        ro("cpu_model", s()),
        ro("cpu_sockets", n()),
        ro("cpu_utilization", n()),
        ro("memory_available", n()),
        ro("memory_total", n()),
        ro("memory_used", n()),
        ro("uptime", n()),
    ])
}

pub(super) fn version() -> BodySchema {
    body(vec![
        ro("id", s()),
        ro("release", s()),
        ro("repository_id", s()),
        ro("version", s()),
    ])
}

pub(super) fn dns() -> BodySchema {
    body(vec![
        req("node_name", s()),
        ro("id", s()),
        ro("domain", s()),
        ro("servers", ls()),
    ])
}

pub(super) fn hosts() -> BodySchema {
    let entry = object(vec![("address", s()), ("hostnames", ls())], false);
    body(vec![
        req("node_name", s()),
        ro("id", s()),
        ro("addresses", ls()),
        ro("digest", s()),
        ro("entries", list_of(entry)),
        ro("hostnames", list_of(ls())),
    ])
}

pub(super) fn time() -> BodySchema {
    body(vec![
        req("node_name", s()),
        ro("id", s()),
        ro("local_time", s()),
        ro("time_zone", s()),
        ro("utc_time", s()),
    ])
}

/// `datastores` is declared optional by bpg (the read sets it) and `filters` is a nested
/// attribute, written `filters = { content_types = ["images"] }`.
pub(super) fn datastores() -> BodySchema {
    let filters = object(
        vec![
            ("content_types", set_of_strings()),
            ("id", s()),
            ("target", s()),
        ],
        true,
    );
    let store = object(
        vec![
            ("active", b()),
            ("content_types", set_of_strings()),
            ("enabled", b()),
            ("id", s()),
            ("node_name", s()),
            ("shared", b()),
            ("space_available", n()),
            ("space_total", n()),
            ("space_used", n()),
            ("space_used_fraction", n()),
            ("type", s()),
        ],
        false,
    );
    body(vec![
        req("node_name", s()),
        opt("filters", filters),
        oc("datastores", list_of(store)),
    ])
}

pub(super) fn file() -> BodySchema {
    body(vec![
        req("content_type", s()),
        req("datastore_id", s()),
        req("file_name", s()),
        req("node_name", s()),
        ro("file_format", s()),
        ro("file_size", n()),
        ro("id", s()),
        ro("vmid", n()),
    ])
}

pub(super) fn files() -> BodySchema {
    let file = object(
        vec![
            ("content_type", s()),
            ("file_format", s()),
            ("file_name", s()),
            ("file_size", n()),
            ("id", s()),
            ("vmid", n()),
        ],
        false,
    );
    body(vec![
        req("datastore_id", s()),
        req("node_name", s()),
        opt("content_type", s()),
        opt("file_name_regex", s()),
        ro("files", list_of(file)),
    ])
}

pub(super) fn pools() -> BodySchema {
    body(vec![ro("id", s()), ro("pool_ids", ls())])
}

pub(super) fn pool() -> BodySchema {
    let member = object(
        vec![
            ("datastore_id", s()),
            ("id", s()),
            ("node_name", s()),
            ("type", s()),
            ("vm_id", n()),
        ],
        false,
    );
    body(vec![
        req("pool_id", s()),
        ro("id", s()),
        ro("comment", s()),
        ro("members", list_of(member)),
    ])
}
