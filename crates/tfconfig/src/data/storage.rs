//! The storage data sources, read as bpg reads them: `proxmox_datastores`
//! (`fwprovider/nodes/datastores`), `proxmox_file` and `proxmox_files`
//! (`fwprovider/nodes/file`).

use regex_automata::meta::Regex;
use serde_json::Value as Json;

use super::json::{
    attrs, bool_or_null, flag, items, list, number, number_or_null, object, strings, text,
};
use super::{Attributes, DataRead, Facts, Query, ReadError};
use crate::value::Value;

/// The `filters` object's fields, as `GET /nodes/{node}/storage` takes them.
fn datastores_request(read: &DataRead) -> Query {
    let filters = read.argument("filters");
    let field = |name| filters.and_then(|f| f.get_attr(name)).map(|v| v.unmark().0);
    let content = field("content_types")
        .and_then(Value::as_seq)
        .map(|types| {
            let names: Vec<&str> = types.iter().filter_map(|t| t.unmark().0.as_str()).collect();
            names.join(",")
        })
        .filter(|c| !c.is_empty());
    let text_field = |name| field(name).and_then(Value::as_str).map(str::to_owned);
    Query::Storages {
        node: read.text("node_name"),
        content,
        storage: text_field("id"),
        target: text_field("target"),
    }
}

pub(super) fn datastores_query(read: &DataRead) -> Vec<Query> {
    vec![datastores_request(read)]
}

/// The node's datastores PVE lists for the filters, in PVE's order.
pub(super) fn datastores(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let listed = facts
        .read(&datastores_request(read), "error retrieving datastores")
        .map_err(|e| ReadError::detailed("Unable to read datastores", e.summary))?;
    let node = read.text("node_name");
    let stores = items(listed).iter().map(|ds| datastore(ds, &node));
    Ok(attrs([("datastores", list(stores))]))
}

fn datastore(ds: &Json, node: &str) -> Value {
    let content = text(ds, "content").map(|c| {
        let kinds: Vec<&str> = c.split(',').filter(|k| !k.is_empty()).collect();
        strings(kinds)
    });
    object([
        ("active", bool_or_null(flag(ds, "active"))),
        ("content_types", content.unwrap_or_else(Value::null)),
        ("enabled", bool_or_null(flag(ds, "enabled"))),
        ("id", Value::String(text(ds, "storage").unwrap_or_default())),
        ("node_name", Value::string(node)),
        ("shared", bool_or_null(flag(ds, "shared"))),
        ("space_available", number_or_null(number(ds, "avail"))),
        ("space_total", number_or_null(number(ds, "total"))),
        ("space_used", number_or_null(number(ds, "used"))),
        (
            "space_used_fraction",
            number_or_null(number(ds, "used_fraction")),
        ),
        ("type", Value::String(text(ds, "type").unwrap_or_default())),
    ])
}

fn content_request(read: &DataRead) -> Query {
    Query::Content {
        node: read.text("node_name"),
        storage: read.text("datastore_id"),
        content: read.optional("content_type"),
    }
}

pub(super) fn file_query(read: &DataRead) -> Vec<Query> {
    vec![content_request(read)]
}

pub(super) fn files_query(read: &DataRead) -> Vec<Query> {
    vec![content_request(read)]
}

/// The file name in a volume id: what follows `storage:content/`.
fn file_name(volid: &str) -> Option<&str> {
    let (_, after) = volid.split_once(':')?;
    after.split_once('/').map(|(_, name)| name)
}

/// One file by content type and name, with bpg's errors when the storage cannot be listed or
/// holds no such file.
pub(super) fn file(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let (node, store) = (read.text("node_name"), read.text("datastore_id"));
    let (name, content) = (read.text("file_name"), read.text("content_type"));
    let listed = facts
        .read(&content_request(read), "error retrieving files")
        .map_err(|e| {
            ReadError::detailed(
                "Unable to Read Files",
                format!(
                    "Unable to list files from datastore {store} on node {node}: {}",
                    e.summary
                ),
            )
        })?;
    let found = items(listed)
        .iter()
        .find(|f| text(f, "volid").as_deref().and_then(file_name) == Some(name.as_str()))
        .ok_or_else(|| {
            ReadError::detailed(
                "File Not Found",
                format!(
                    "File '{name}' with content type '{content}' not found in datastore '{store}' on node '{node}'"
                ),
            )
        })?;
    Ok(attrs([
        (
            "id",
            Value::String(text(found, "volid").unwrap_or_default()),
        ),
        (
            "file_size",
            Value::Number(number(found, "size").unwrap_or(0.0)),
        ),
        (
            "file_format",
            Value::String(text(found, "format").unwrap_or_default()),
        ),
        ("vmid", number_or_null(number(found, "vmid"))),
    ]))
}

/// The files of a datastore, of one content type if asked, whose names match
/// `file_name_regex` (unanchored, as Go's `MatchString`).
pub(super) fn files(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let (node, store) = (read.text("node_name"), read.text("datastore_id"));
    let listed = facts
        .read(&content_request(read), "error retrieving files")
        .map_err(|e| {
            ReadError::detailed(
                "Unable to Read Files",
                format!(
                    "Unable to list files from datastore '{store}' on node '{node}': {}",
                    e.summary
                ),
            )
        })?;
    let pattern = read
        .optional("file_name_regex")
        .map(|p| {
            Regex::new(&p).map_err(|e| {
                ReadError::detailed(
                    "Unable to Read Files",
                    format!("Invalid file_name_regex: {e}"),
                )
            })
        })
        .transpose()?;
    let entries = items(listed).iter().filter_map(|f| {
        let volid = text(f, "volid").unwrap_or_default();
        let name = file_name(&volid).unwrap_or_default().to_owned();
        if pattern.as_ref().is_some_and(|p| !p.is_match(&name)) {
            return None;
        }
        Some(object([
            ("id", Value::String(volid)),
            (
                "content_type",
                Value::String(text(f, "content").unwrap_or_default()),
            ),
            ("file_name", Value::String(name)),
            (
                "file_format",
                Value::String(text(f, "format").unwrap_or_default()),
            ),
            ("file_size", Value::Number(number(f, "size").unwrap_or(0.0))),
            ("vmid", number_or_null(number(f, "vmid"))),
        ]))
    });
    Ok(attrs([("files", list(entries))]))
}
