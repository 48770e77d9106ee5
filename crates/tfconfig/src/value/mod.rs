//! Terraform-like values: primitives, collections and structurals, with `(known after apply)`
//! unknowns that keep their type and a `sensitive` mark that can sit on any node.
//!
//! Maps, objects and sets keep their keys/elements in lexical order (`BTreeMap`, sorted `Vec`),
//! so iteration order matches Terraform. Numbers are `f64`: integers are exact up to 2^53, which
//! covers every VMID, size and port; arbitrary precision is not reproduced.

mod stored;
mod text;

use std::collections::BTreeMap;
use std::fmt;

use text::number_json;
pub use text::{format_number, nfc};

/// The type of a value (cty's type system, without capsules).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Type {
    /// Any type (`any`, or the type of `null` and unknowns before they are known).
    Dynamic,
    Bool,
    Number,
    String,
    List(Box<Type>),
    Set(Box<Type>),
    Map(Box<Type>),
    /// Boxed so `Type` (and with it every `Value`) stays small.
    Tuple(Box<Vec<Type>>),
    Object(Box<BTreeMap<String, Type>>),
}

impl Type {
    /// The name Terraform uses in messages (`string`, `list of number`, `object`, ...).
    pub fn friendly(&self) -> String {
        match self {
            Type::Dynamic => "dynamic".into(),
            Type::Bool => "bool".into(),
            Type::Number => "number".into(),
            Type::String => "string".into(),
            Type::List(e) => format!("list of {}", e.friendly()),
            Type::Set(e) => format!("set of {}", e.friendly()),
            Type::Map(e) => format!("map of {}", e.friendly()),
            Type::Tuple(_) => "tuple".into(),
            Type::Object(_) => "object".into(),
        }
    }

    /// True for `bool`, `number` and `string`.
    pub fn is_primitive(&self) -> bool {
        matches!(self, Type::Bool | Type::Number | Type::String)
    }
}

/// A value. `Sensitive` wraps a value that must never be shown; it is never nested directly.
/// Its serde form is the stored one ([`Value::to_stored`]): every type and mark kept.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    Null(Type),
    /// Known only after apply, with the type it will have.
    Unknown(Type),
    Bool(bool),
    Number(f64),
    String(String),
    /// Element type and elements.
    List(Type, Vec<Value>),
    /// Element type and elements, sorted and deduplicated.
    Set(Type, Vec<Value>),
    Tuple(Vec<Value>),
    Map(Type, BTreeMap<String, Value>),
    Object(BTreeMap<String, Value>),
    Sensitive(Box<Value>),
}

impl Value {
    pub fn null() -> Value {
        Value::Null(Type::Dynamic)
    }

    pub fn unknown() -> Value {
        Value::Unknown(Type::Dynamic)
    }

    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    /// Marks a value sensitive (idempotent).
    pub fn mark(self, sensitive: bool) -> Value {
        match self {
            Value::Sensitive(_) => self,
            v if sensitive => Value::Sensitive(Box::new(v)),
            v => v,
        }
    }

    /// The value without its top-level mark, and whether it had one.
    pub fn unmark(&self) -> (&Value, bool) {
        match self {
            Value::Sensitive(inner) => (inner, true),
            v => (v, false),
        }
    }

    /// Owned variant of [`Value::unmark`].
    pub fn into_unmarked(self) -> (Value, bool) {
        match self {
            Value::Sensitive(inner) => (*inner, true),
            v => (v, false),
        }
    }

    /// True when this value or anything inside it is sensitive.
    pub fn contains_sensitive(&self) -> bool {
        match self {
            Value::Sensitive(_) => true,
            Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
                items.iter().any(Value::contains_sensitive)
            }
            Value::Map(_, m) | Value::Object(m) => m.values().any(Value::contains_sensitive),
            _ => false,
        }
    }

    /// Removes every mark, deeply.
    pub fn deep_unmark(self) -> Value {
        match self {
            Value::Sensitive(inner) => inner.deep_unmark(),
            Value::List(t, items) => {
                Value::List(t, items.into_iter().map(Value::deep_unmark).collect())
            }
            Value::Set(t, items) => {
                Value::Set(t, items.into_iter().map(Value::deep_unmark).collect())
            }
            Value::Tuple(items) => {
                Value::Tuple(items.into_iter().map(Value::deep_unmark).collect())
            }
            Value::Map(t, m) => Value::Map(
                t,
                m.into_iter().map(|(k, v)| (k, v.deep_unmark())).collect(),
            ),
            Value::Object(m) => {
                Value::Object(m.into_iter().map(|(k, v)| (k, v.deep_unmark())).collect())
            }
            v => v,
        }
    }

    /// True when this value is unknown or contains an unknown anywhere.
    pub fn contains_unknown(&self) -> bool {
        match self {
            Value::Unknown(_) => true,
            Value::Sensitive(v) => v.contains_unknown(),
            Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
                items.iter().any(Value::contains_unknown)
            }
            Value::Map(_, m) | Value::Object(m) => m.values().any(Value::contains_unknown),
            _ => false,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.unmark().0, Value::Null(_))
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self.unmark().0, Value::Unknown(_))
    }

    /// The value's type.
    pub fn ty(&self) -> Type {
        match self {
            Value::Null(t) | Value::Unknown(t) => t.clone(),
            Value::Bool(_) => Type::Bool,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::List(t, _) => Type::List(Box::new(t.clone())),
            Value::Set(t, _) => Type::Set(Box::new(t.clone())),
            Value::Map(t, _) => Type::Map(Box::new(t.clone())),
            Value::Tuple(items) => Type::Tuple(Box::new(items.iter().map(Value::ty).collect())),
            Value::Object(m) => Type::Object(Box::new(
                m.iter().map(|(k, v)| (k.clone(), v.ty())).collect(),
            )),
            Value::Sensitive(v) => v.ty(),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self.unmark().0 {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.unmark().0 {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<f64> {
        match self.unmark().0 {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// Elements of a list, set or tuple.
    pub fn as_seq(&self) -> Option<&[Value]> {
        match self.unmark().0 {
            Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => Some(items),
            _ => None,
        }
    }

    /// Entries of a map or object.
    pub fn as_map(&self) -> Option<&BTreeMap<String, Value>> {
        match self.unmark().0 {
            Value::Map(_, m) | Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Looks up an attribute of an object or a key of a map.
    pub fn get_attr(&self, name: &str) -> Option<&Value> {
        self.as_map().and_then(|m| m.get(name))
    }

    /// Builds a set: sorts and deduplicates the elements.
    /// A set cannot hold marked elements (cty's rule): their marks go to the set itself.
    pub fn new_set(elem: Type, items: Vec<Value>) -> Value {
        let marked = items.iter().any(Value::contains_sensitive);
        let mut items: Vec<Value> = if marked {
            items.into_iter().map(Value::deep_unmark).collect()
        } else {
            items
        };
        items.sort_by(compare);
        items.dedup();
        Value::Set(elem, items).mark(marked)
    }

    /// Renders the value as JSON, with sensitive values replaced by `redaction` and unknowns
    /// by `unknown`.
    pub fn to_json(&self, redaction: &str, unknown: &str) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Null(_) => J::Null,
            Value::Unknown(_) => J::String(unknown.to_owned()),
            Value::Sensitive(_) => J::String(redaction.to_owned()),
            Value::Bool(b) => J::Bool(*b),
            Value::Number(n) => number_json(*n),
            Value::String(s) => J::String(s.clone()),
            Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => J::Array(
                items
                    .iter()
                    .map(|v| v.to_json(redaction, unknown))
                    .collect(),
            ),
            Value::Map(_, m) | Value::Object(m) => J::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), v.to_json(redaction, unknown)))
                    .collect(),
            ),
        }
    }
}

/// Total order used for sets: strings lexically, numbers numerically, then by kind.
pub fn compare(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Bool(_) => 0,
            Value::Number(_) => 1,
            Value::String(_) => 2,
            Value::Sensitive(inner) => rank(inner),
            Value::Unknown(_) => 8,
            Value::Null(_) => 9,
            _ => 5,
        }
    }
    match (a.unmark().0, b.unmark().0) {
        (Value::Number(x), Value::Number(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (x, y) => rank(x)
            .cmp(&rank(y))
            .then_with(|| format!("{x:?}").cmp(&format!("{y:?}"))),
    }
}

/// Display renders the value in HCL-like syntax, sensitive parts redacted.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null(_) => f.write_str("null"),
            Value::Unknown(_) => f.write_str("(known after apply)"),
            Value::Sensitive(_) => f.write_str("(sensitive value)"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => f.write_str(&format_number(*n)),
            Value::String(s) => write!(f, "{}", quote(s)),
            Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Map(_, m) | Value::Object(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{} = {v}", quote_key(k))?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Quotes a string with HCL escapes (`"a\"b"`), as used in instance addresses.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn quote_key(k: &str) -> String {
    let ident = !k.is_empty()
        && k.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if ident { k.to_owned() } else { quote(k) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_sorted_and_deduplicated() {
        let s = Value::new_set(
            Type::String,
            vec![Value::string("b"), Value::string("a"), Value::string("b")],
        );
        assert_eq!(s.as_seq().map(<[Value]>::len), Some(2));
        assert_eq!(s.to_string(), r#"["a", "b"]"#);
    }

    #[test]
    fn sensitive_values_are_redacted_in_display_and_json() {
        let v = Value::Object(BTreeMap::from([(
            "pw".to_owned(),
            Value::string("hunter2").mark(true),
        )]));
        assert!(!v.to_string().contains("hunter2"));
        assert!(
            !v.to_json("(sensitive value)", "(known after apply)")
                .to_string()
                .contains("hunter2")
        );
        assert!(v.contains_sensitive());
    }

    #[test]
    fn integral_numbers_print_without_fraction() {
        assert_eq!(format_number(4096.0), "4096");
        assert_eq!(format_number(0.5), "0.5");
    }
}
