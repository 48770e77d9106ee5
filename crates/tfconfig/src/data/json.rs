//! PVE's JSON as bpg decodes it: numbers that may come as strings, booleans as `0`/`1`, and
//! the Terraform values built from them.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::value::Value;

/// A string field, `None` when absent or null.
pub(super) fn text(v: &Json, key: &str) -> Option<String> {
    match v.get(key)? {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A number field (PVE sometimes sends numbers as strings).
pub(super) fn number(v: &Json, key: &str) -> Option<f64> {
    match v.get(key)? {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A boolean field as bpg's `CustomBool`: `1`, `true` or `"1"`.
pub(super) fn flag(v: &Json, key: &str) -> Option<bool> {
    match v.get(key)? {
        Json::Bool(b) => Some(*b),
        Json::Number(n) => Some(n.as_f64() != Some(0.0)),
        Json::String(s) => Some(s == "1" || s == "true"),
        _ => None,
    }
}

/// The elements of an array answer (nothing when PVE sent something else).
pub(super) fn items(v: &Json) -> &[Json] {
    v.as_array().map_or(&[], Vec::as_slice)
}

pub(super) fn number_or_null(v: Option<f64>) -> Value {
    v.map_or_else(Value::null, Value::Number)
}

pub(super) fn bool_or_null(v: Option<bool>) -> Value {
    v.map_or_else(Value::null, Value::Bool)
}

/// A tuple, converted to the list its schema declares by [`super::answer`].
pub(super) fn list(items: impl IntoIterator<Item = Value>) -> Value {
    Value::Tuple(items.into_iter().collect())
}

pub(super) fn strings<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Value {
    list(items.into_iter().map(|s| Value::String(s.into())))
}

pub(super) fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

pub(super) fn attrs<const N: usize>(fields: [(&str, Value); N]) -> BTreeMap<String, Value> {
    fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}
