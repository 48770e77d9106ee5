//! What both oracle tests read the same way: the divergence lists, values as Terraform shows
//! them, and the recordings' number-aware equality.

use std::collections::BTreeMap;

use atoll_tfconfig::Value;
use serde_json::Value as Json;

/// A divergence list: `name: reason` per line; `#` starts a comment.
pub(crate) fn divergences(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (name, reason) = l.split_once(':').unwrap_or((l, ""));
            (name.trim().to_owned(), reason.trim().to_owned())
        })
        .collect()
}

/// A value as Terraform's `output -json` and state show it: sensitive values unwrapped.
pub(crate) fn plain(v: &Value) -> Json {
    match v {
        Value::Sensitive(inner) => plain(inner),
        Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
            Json::Array(items.iter().map(plain).collect())
        }
        Value::Map(_, m) | Value::Object(m) => {
            Json::Object(m.iter().map(|(k, v)| (k.clone(), plain(v))).collect())
        }
        other => other.to_json("(sensitive)", "(unknown)"),
    }
}

/// JSON equality with numbers compared by value (`1` and `1.0` are one number). `b` is the
/// recording's: a number no f64 holds is `{"$number": "<Terraform's text>"}` there, and agrees
/// only with a number atoll prints as exactly that text.
pub(crate) fn same(a: &Json, b: &Json) -> bool {
    if let Some(text) = exact_number(b) {
        return a.as_f64().is_some_and(|n| format!("{n}") == text);
    }
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The text of a recorded `{"$number": "..."}`.
fn exact_number(v: &Json) -> Option<&str> {
    match v.as_object() {
        Some(o) if o.len() == 1 => o.get("$number")?.as_str(),
        _ => None,
    }
}
