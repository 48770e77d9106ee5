//! `proxmox_virtual_environment_vm`, `_vms`, `_container` and `_containers`, read as bpg reads
//! them (`proxmoxtf/datasource/vm.go`, `vms.go`, `container.go`, `containers.go`), from the
//! cluster's guest list.

use std::collections::BTreeMap;

use regex_automata::meta::Regex;

use super::{Attributes, ClusterGuest, DataRead, Facts, ReadError};
use crate::value::{Type, Value};

pub(super) fn one_vm(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    one(read, &facts.guests, true)
}

pub(super) fn many_vms(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    many(read, &facts.guests, true)
}

pub(super) fn one_container(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    one(read, &facts.guests, false)
}

pub(super) fn many_containers(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    many(read, &facts.guests, false)
}

/// One VM (`qemu`) or container by node and VMID: its `name` (or `""`), `tags` (split on `;`,
/// trimmed, sorted), `template` and `status`.
fn one(read: &DataRead, guests: &[ClusterGuest], qemu: bool) -> Result<Attributes, ReadError> {
    let node = read
        .argument("node_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let vm_id = read
        .argument("vm_id")
        .and_then(Value::as_number)
        .unwrap_or(-1.0);
    let found = guests
        .iter()
        .find(|g| g.qemu == qemu && f64::from(g.vm_id) == vm_id && g.node == node)
        .ok_or_else(|| not_found(node, vm_id, qemu))?;
    let mut tags: Vec<String> = split_tags(found.tags.as_deref())
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    tags.sort();
    Ok(BTreeMap::from([
        (
            "name".to_owned(),
            Value::string(found.name.clone().unwrap_or_default()),
        ),
        ("tags".to_owned(), strings(tags)),
        ("template".to_owned(), Value::Bool(found.template)),
        ("status".to_owned(), Value::string(found.status.clone())),
    ]))
}

/// bpg's error for a guest that is not there: its own for a VM; for a container, PVE's
/// (`status/current` fails on the missing config file) after bpg's context.
fn not_found(node: &str, vm_id: f64, qemu: bool) -> ReadError {
    if qemu {
        return ReadError::new(format!("VM {vm_id} not found on node {node:?}"));
    }
    ReadError::new(format!(
        "error retrieving container status: Configuration file 'nodes/{node}/lxc/{vm_id}.conf' does not exist"
    ))
}

/// The VMs (`qemu`) or containers on `node_name` (or every node) that carry all of `tags` and
/// pass every `filter` block, ordered by node, then VMID, under `vms` or `containers`.
fn many(read: &DataRead, guests: &[ClusterGuest], qemu: bool) -> Result<Attributes, ReadError> {
    let node = read.argument("node_name").and_then(Value::as_str);
    let mut wanted: Vec<&str> = read
        .argument("tags")
        .and_then(Value::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t.unmark().0.as_str())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    wanted.sort_unstable();
    let filters = filters(read)?;
    let mut listed: Vec<&ClusterGuest> = guests
        .iter()
        .filter(|g| g.qemu == qemu && node.is_none_or(|n| g.node == n))
        .collect();
    listed.sort_by(|a, b| (&a.node, a.vm_id).cmp(&(&b.node, b.vm_id)));
    let mut vms = Vec::new();
    for guest in listed {
        let mut tags: Vec<&str> = split_tags(guest.tags.as_deref()).collect();
        tags.sort_unstable();
        if !wanted.iter().all(|w| tags.contains(w)) {
            continue;
        }
        if filters.iter().all(|f| f.passes(guest)) {
            vms.push(vm_object(guest, tags));
        }
    }
    let key = if qemu { "vms" } else { "containers" };
    Ok(BTreeMap::from([(
        key.to_owned(),
        Value::List(vm_type(), vms),
    )]))
}

/// PVE's `;`-separated tags, as bpg splits them (an empty string is no tag).
fn split_tags(tags: Option<&str>) -> impl Iterator<Item = &str> {
    tags.filter(|t| !t.is_empty())
        .into_iter()
        .flat_map(|t| t.split(';'))
}

fn strings(items: Vec<String>) -> Value {
    Value::List(Type::String, items.into_iter().map(Value::String).collect())
}

/// One element of `vms`.
fn vm_object(guest: &ClusterGuest, tags: Vec<&str>) -> Value {
    Value::Object(BTreeMap::from([
        (
            "name".to_owned(),
            Value::string(guest.name.clone().unwrap_or_default()),
        ),
        ("node_name".to_owned(), Value::string(guest.node.clone())),
        ("status".to_owned(), Value::string(guest.status.clone())),
        (
            "tags".to_owned(),
            strings(tags.into_iter().map(str::to_owned).collect()),
        ),
        ("template".to_owned(), Value::Bool(guest.template)),
        ("vm_id".to_owned(), Value::Number(f64::from(guest.vm_id))),
    ]))
}

fn vm_type() -> Type {
    let fields = [
        ("name", Type::String),
        ("node_name", Type::String),
        ("status", Type::String),
        ("tags", Type::List(Box::new(Type::String))),
        ("template", Type::Bool),
        ("vm_id", Type::Number),
    ];
    Type::Object(Box::new(
        fields.into_iter().map(|(k, t)| (k.to_owned(), t)).collect(),
    ))
}

/// What a guest's value is compared on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Name,
    Template,
    Status,
    NodeName,
}

/// One `filter` block: the field, and the values (or patterns) one of which must match.
#[derive(Debug)]
struct Filter {
    field: Field,
    values: Vec<Match>,
}

#[derive(Debug)]
enum Match {
    Exact(String),
    /// Go's `regexp.MatchString`: unanchored.
    Pattern(Regex),
}

impl Filter {
    fn passes(&self, guest: &ClusterGuest) -> bool {
        let text = match self.field {
            Field::Name => guest.name.clone().unwrap_or_default(),
            Field::Template => guest.template.to_string(),
            Field::Status => guest.status.clone(),
            Field::NodeName => guest.node.clone(),
        };
        self.values.iter().any(|m| match m {
            Match::Exact(want) => *want == text,
            Match::Pattern(re) => re.is_match(&text),
        })
    }
}

/// The `filter` blocks, with bpg's errors for an unknown field or a pattern that does not
/// compile.
fn filters(read: &DataRead) -> Result<Vec<Filter>, ReadError> {
    let blocks = read
        .argument("filter")
        .and_then(Value::as_seq)
        .unwrap_or_default();
    blocks.iter().map(|b| filter(b.unmark().0)).collect()
}

fn filter(block: &Value) -> Result<Filter, ReadError> {
    let text = |name| block.get_attr(name).and_then(|v| v.unmark().0.as_str());
    let name = text("name").unwrap_or_default();
    let field = match name {
        "name" => Field::Name,
        "template" => Field::Template,
        "status" => Field::Status,
        "node_name" => Field::NodeName,
        other => {
            return Err(ReadError::new(format!(
                "unknown filter name '{other}', should be one of [name, template, status, node_name]"
            )));
        }
    };
    let regex = block
        .get_attr("regex")
        .and_then(|v| v.unmark().0.as_bool())
        .unwrap_or(false);
    let values = block
        .get_attr("values")
        .and_then(|v| v.unmark().0.as_seq())
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.unmark().0.as_str())
        .map(|value| {
            if !regex {
                return Ok(Match::Exact(value.to_owned()));
            }
            Regex::new(value).map(Match::Pattern).map_err(|e| {
                ReadError::new(format!(
                    "error interpreting filter '{name}' value '{value}' as regex: {e}"
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Filter { field, values })
}

#[cfg(test)]
#[path = "vm_tests.rs"]
mod tests;
