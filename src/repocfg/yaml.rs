//! Reading a YAML tree by key path, so every error names the exact key (`projects[2].dir`).

use serde_yaml_ng::{Mapping, Value};

use super::repo::RepoConfigError;

fn invalid(path: &str, problem: impl Into<String>) -> RepoConfigError {
    RepoConfigError::Invalid {
        path: path.to_owned(),
        problem: problem.into(),
    }
}

/// The value's type, for "expected X, found Y" messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// `path.key`, or `key` at the top.
pub(crate) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

pub(crate) fn mapping<'a>(value: &'a Value, path: &str) -> Result<&'a Mapping, RepoConfigError> {
    value.as_mapping().ok_or_else(|| {
        invalid(
            path,
            format!("must be a mapping of keys, found {}", kind(value)),
        )
    })
}

/// The mapping's entries with string keys, in document order.
pub(crate) fn entries<'a>(
    map: &'a Mapping,
    path: &str,
) -> Result<Vec<(&'a str, &'a Value)>, RepoConfigError> {
    map.iter()
        .map(|(key, value)| match key.as_str() {
            Some(key) => Ok((key, value)),
            None => Err(invalid(
                path,
                format!("has a key that is {}, not a string", kind(key)),
            )),
        })
        .collect()
}

pub(crate) fn boolean(value: &Value, path: &str) -> Result<bool, RepoConfigError> {
    value.as_bool().ok_or_else(|| {
        invalid(
            path,
            format!("must be true or false, found {}", kind(value)),
        )
    })
}

/// A scalar as text: strings as they are, numbers written out (`workspace: 2024`).
pub(crate) fn text(value: &Value, path: &str) -> Result<String, RepoConfigError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(invalid(
            path,
            format!("must be a string, found {}", kind(other)),
        )),
    }
}

pub(crate) fn list<'a>(value: &'a Value, path: &str) -> Result<&'a [Value], RepoConfigError> {
    value
        .as_sequence()
        .map(Vec::as_slice)
        .ok_or_else(|| invalid(path, format!("must be a list, found {}", kind(value))))
}

pub(crate) fn text_list(value: &Value, path: &str) -> Result<Vec<String>, RepoConfigError> {
    list(value, path)?
        .iter()
        .enumerate()
        .map(|(i, item)| text(item, &format!("{path}[{i}]")))
        .collect()
}
