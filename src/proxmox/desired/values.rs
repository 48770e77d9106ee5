//! Reading the loader's values: a nested block, a text, a number, a flag, while tracking
//! whether anything read was unknown or sensitive, so each PVE key gets the right
//! [`DesiredValue`].

use std::collections::BTreeMap;

use crate::proxmox::plan::{DesiredValue, Secret};
use tfconfig::Value;
use tfconfig::value::format_number;

pub(super) type Object = BTreeMap<String, Value>;

/// A guest's PVE config keys, as they would be sent.
pub(super) type Config = BTreeMap<String, DesiredValue>;

/// Sets `key` to the text `build` returns; `None` leaves the key out (or unknown, when what
/// it was built from is).
pub(super) fn put(
    config: &mut Config,
    key: &str,
    build: impl FnOnce(&mut Marks) -> Option<String>,
) {
    let mut marks = Marks::default();
    if let Some(text) = build(&mut marks) {
        config.insert(key.to_owned(), marks.finish(text));
    } else if marks.unknown {
        config.insert(key.to_owned(), DesiredValue::Unknown);
    }
}

/// What one PVE key's value was built from.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Marks {
    pub(super) unknown: bool,
    pub(super) sensitive: bool,
}

impl Marks {
    /// The PVE value, given the text built while these marks were collected.
    pub(super) fn finish(self, text: String) -> DesiredValue {
        if self.unknown {
            DesiredValue::Unknown
        } else if self.sensitive {
            DesiredValue::Sensitive(Secret::new(text))
        } else {
            DesiredValue::Known(text)
        }
    }

    /// The value without its sensitive mark; `None` for null and unknown (which is noted).
    pub(super) fn plain<'v>(&mut self, value: &'v Value) -> Option<&'v Value> {
        let (inner, sensitive) = value.unmark();
        self.sensitive |= sensitive;
        match inner {
            Value::Null(_) => None,
            Value::Unknown(_) => {
                self.unknown = true;
                None
            }
            other => Some(other),
        }
    }

    pub(super) fn text(&mut self, value: Option<&Value>) -> Option<String> {
        match self.plain(value?)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(format_number(*n)),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    pub(super) fn number(&mut self, value: Option<&Value>) -> Option<f64> {
        match self.plain(value?)? {
            Value::Number(n) => Some(*n),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    pub(super) fn flag(&mut self, value: Option<&Value>) -> Option<bool> {
        match self.plain(value?)? {
            Value::Bool(b) => Some(*b),
            Value::String(s) => Some(s == "true"),
            _ => None,
        }
    }

    /// A list or set of texts; unknown elements are noted and skipped.
    pub(super) fn texts(&mut self, value: Option<&Value>) -> Vec<String> {
        let Some(items) = value.and_then(|v| self.plain(v)) else {
            return Vec::new();
        };
        let items = match items {
            Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => items.clone(),
            _ => return Vec::new(),
        };
        items.iter().filter_map(|i| self.text(Some(i))).collect()
    }

    /// A map of texts, ordered by key.
    pub(super) fn text_map(&mut self, value: Option<&Value>) -> BTreeMap<String, String> {
        let Some(map) = value.and_then(|v| self.plain(v)) else {
            return BTreeMap::new();
        };
        let entries = match map {
            Value::Map(_, m) | Value::Object(m) => m.clone(),
            _ => return BTreeMap::new(),
        };
        entries
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), self.text(Some(v))?)))
            .collect()
    }
}

/// A guest's `tags` as PVE stores them: trimmed, sorted, without duplicates, with atoll's
/// marker tag (which lets a guest missing from state be adopted).
pub(super) fn tags(m: &mut Marks, attrs: &Object) -> String {
    let mut tags: Vec<String> = std::iter::once(super::MARKER_TAG.to_owned())
        .chain(
            m.texts(attrs.get("tags"))
                .iter()
                .map(|t| t.trim().to_owned()),
        )
        .filter(|t| !t.is_empty())
        .collect();
    tags.sort();
    tags.dedup();
    tags.join(";")
}

/// The attributes of a resource or block.
pub(super) fn object(value: &Value) -> Option<&Object> {
    match value.unmark().0 {
        Value::Object(fields) | Value::Map(_, fields) => Some(fields),
        _ => None,
    }
}

/// The blocks of a nested block type, in order.
pub(super) fn blocks<'v>(parent: &'v Object, name: &str) -> Vec<&'v Object> {
    match parent.get(name).map(|v| v.unmark().0) {
        Some(Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items)) => {
            items.iter().filter_map(object).collect()
        }
        Some(other) => object(other).into_iter().collect(),
        None => Vec::new(),
    }
}

/// The single block of a `max_items = 1` block type.
pub(super) fn block<'v>(parent: &'v Object, name: &str) -> Option<&'v Object> {
    blocks(parent, name).into_iter().next()
}

/// A whole number as PVE prints it (`2`, `1.5`).
pub(super) fn num(n: f64) -> String {
    format_number(n)
}

/// A flag as PVE stores it.
pub(super) fn bit(flag: bool) -> &'static str {
    if flag { "1" } else { "0" }
}
