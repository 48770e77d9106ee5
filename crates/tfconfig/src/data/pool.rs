//! `proxmox_virtual_environment_pools` and `_pool`, read as bpg reads them
//! (`proxmoxtf/datasource/pools.go`, `pool.go`).

use super::json::{attrs, items, list, number, object, strings, text};
use super::{Attributes, DataRead, Facts, Query, ReadError};
use crate::value::Value;

pub(super) fn pools_query(_: &DataRead) -> Vec<Query> {
    vec![Query::Pools]
}

/// The pool ids, in PVE's order.
pub(super) fn pools(_: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let listed = facts.read(&Query::Pools, "error listing pools")?;
    let ids = items(listed)
        .iter()
        .map(|p| text(p, "poolid").unwrap_or_default());
    Ok(attrs([
        ("id", Value::string("pools")),
        ("pool_ids", strings(ids)),
    ]))
}

fn pool_request(read: &DataRead) -> Query {
    Query::Pool {
        pool: read.text("pool_id"),
    }
}

pub(super) fn pool_query(read: &DataRead) -> Vec<Query> {
    vec![pool_request(read)]
}

/// One pool's comment and members (sorted by member id, as bpg sorts them).
pub(super) fn pool(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let id = read.text("pool_id");
    let listed = items(facts.read(&pool_request(read), "error getting pool")?);
    let found = match listed {
        [one] => one,
        [] => {
            return Err(ReadError::new(
                "the requested resource does not exist".to_owned(),
            ));
        }
        many => {
            return Err(ReadError::new(format!(
                "error getting pool: expected 1 pool, but got {}",
                many.len()
            )));
        }
    };
    let mut members: Vec<&serde_json::Value> = found
        .get("members")
        .map(items)
        .unwrap_or_default()
        .iter()
        .collect();
    members.sort_by_key(|m| text(m, "id").unwrap_or_default());
    let members = members.into_iter().map(|m| {
        object([
            (
                "datastore_id",
                Value::String(text(m, "storage").unwrap_or_default()),
            ),
            ("id", Value::String(text(m, "id").unwrap_or_default())),
            (
                "node_name",
                Value::String(text(m, "node").unwrap_or_default()),
            ),
            ("type", Value::String(text(m, "type").unwrap_or_default())),
            ("vm_id", Value::Number(number(m, "vmid").unwrap_or(0.0))),
        ])
    });
    Ok(attrs([
        ("id", Value::String(id)),
        (
            "comment",
            Value::String(text(found, "comment").unwrap_or_default()),
        ),
        ("members", list(members)),
    ]))
}
