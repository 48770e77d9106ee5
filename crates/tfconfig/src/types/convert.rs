//! `optional()` defaults and conversion of values to a constraint, with cty's messages.

use std::collections::BTreeMap;

use super::{Constraint, ObjectAttr};
use crate::value::{Type, Value, format_number, quote};

/// Applies `optional(T, default)` defaults recursively. Null and unknown values are left alone.
pub fn apply_defaults(value: Value, c: &Constraint) -> Value {
    let (v, marked) = value.into_unmarked();
    let out = match (v, c) {
        (v @ (Value::Null(_) | Value::Unknown(_)), _) => v,
        (Value::Object(mut m) | Value::Map(_, mut m), Constraint::Object(attrs)) => {
            for (name, attr) in attrs {
                let absent = m.get(name).is_none_or(Value::is_null);
                if absent {
                    if let Some(d) = &attr.default {
                        m.insert(name.clone(), d.clone());
                    }
                } else if let Some(cur) = m.remove(name) {
                    m.insert(name.clone(), apply_defaults(cur, &attr.ty));
                }
            }
            Value::Object(m)
        }
        (Value::Map(t, m), Constraint::Map(e)) => Value::Map(
            t,
            m.into_iter()
                .map(|(k, v)| (k, apply_defaults(v, e)))
                .collect(),
        ),
        (Value::Object(m), Constraint::Map(e)) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (k, apply_defaults(v, e)))
                .collect(),
        ),
        (Value::List(t, items), Constraint::List(e) | Constraint::Set(e)) => {
            Value::List(t, items.into_iter().map(|v| apply_defaults(v, e)).collect())
        }
        (Value::Set(t, items), Constraint::List(e) | Constraint::Set(e)) => {
            Value::Set(t, items.into_iter().map(|v| apply_defaults(v, e)).collect())
        }
        (Value::Tuple(items), Constraint::List(e) | Constraint::Set(e)) => {
            Value::Tuple(items.into_iter().map(|v| apply_defaults(v, e)).collect())
        }
        (Value::Tuple(items), Constraint::Tuple(es)) => Value::Tuple(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match es.get(i) {
                    Some(e) => apply_defaults(v, e),
                    None => v,
                })
                .collect(),
        ),
        (v, _) => v,
    };
    out.mark(marked)
}

/// A conversion failure: the path to the failing element and what was wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvError {
    pub path: Vec<String>,
    pub detail: String,
}

impl ConvError {
    fn new(detail: impl Into<String>) -> Self {
        ConvError {
            path: Vec::new(),
            detail: detail.into(),
        }
    }

    fn at(mut self, step: String) -> Self {
        self.path.insert(0, step);
        self
    }

    /// `element "dev-gitea": attribute "hostname" is required`.
    pub fn message(&self) -> String {
        let mut out = String::new();
        for p in &self.path {
            out.push_str(p);
            out.push_str(": ");
        }
        out.push_str(&self.detail);
        out
    }
}

/// Converts a value to a constraint, as cty's `convert.Convert` does.
pub fn convert(value: Value, c: &Constraint) -> Result<Value, ConvError> {
    let (v, marked) = value.into_unmarked();
    let out = convert_unmarked(v, c)?;
    Ok(out.mark(marked))
}

fn convert_unmarked(v: Value, c: &Constraint) -> Result<Value, ConvError> {
    match v {
        Value::Null(_) => return Ok(Value::Null(c.to_type())),
        Value::Unknown(_) => return Ok(Value::Unknown(c.to_type())),
        _ => {}
    }
    match c {
        Constraint::Any => Ok(v),
        Constraint::String => match v {
            Value::String(_) => Ok(v),
            Value::Number(n) => Ok(Value::String(format_number(n))),
            Value::Bool(b) => Ok(Value::String(b.to_string())),
            _ => Err(ConvError::new("string required")),
        },
        Constraint::Number => match v {
            Value::Number(_) => Ok(v),
            // No surrounding spaces, as cty parses it (`" 1"` is not a number).
            Value::String(s) => s
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && !s.is_empty())
                .map(Value::Number)
                .ok_or_else(|| ConvError::new("a number is required")),
            _ => Err(ConvError::new("number required")),
        },
        Constraint::Bool => match v {
            Value::Bool(_) => Ok(v),
            Value::String(s) if s == "true" || s == "1" => Ok(Value::Bool(true)),
            Value::String(s) if s == "false" || s == "0" => Ok(Value::Bool(false)),
            Value::String(_) => Err(ConvError::new("a bool is required")),
            _ => Err(ConvError::new("bool required")),
        },
        Constraint::List(e) | Constraint::Set(e) => convert_seq(v, c, e),
        Constraint::Map(e) => convert_map(v, c, e),
        Constraint::Tuple(es) => convert_tuple(v, es),
        Constraint::Object(attrs) => convert_object(v, attrs),
    }
}

fn convert_seq(v: Value, c: &Constraint, e: &Constraint) -> Result<Value, ConvError> {
    let (source, items) = match v {
        Value::List(t, items) | Value::Set(t, items) => (Some(t), items),
        Value::Tuple(items) => (None, items),
        _ => return Err(ConvError::new(format!("{} required", c.friendly()))),
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        out.push(convert(item, e).map_err(|err| err.at(format!("element {i}")))?);
    }
    let elem = match (source, e) {
        // A list or set converted to a collection of any type keeps its element type, even
        // when it is empty.
        (Some(t), Constraint::Any) if out.is_empty() => t,
        // A tuple's elements meet at their common type, as cty unifies them: `[1, "a"]`
        // becomes a list of strings.
        (None, Constraint::Any) => unify_tuple(&mut out)?,
        _ => unify_elements(&mut out, e)?,
    };
    Ok(match c {
        Constraint::Set(_) => Value::new_set(elem, out),
        _ => Value::List(elem, out),
    })
}

fn convert_map(v: Value, c: &Constraint, e: &Constraint) -> Result<Value, ConvError> {
    let (Value::Map(_, entries) | Value::Object(entries)) = v else {
        return Err(ConvError::new(format!("{} required", c.friendly())));
    };
    let mut keys = Vec::with_capacity(entries.len());
    let mut vals = Vec::with_capacity(entries.len());
    for (k, item) in entries {
        let conv = convert(item, e).map_err(|err| err.at(format!("element {}", quote(&k))))?;
        keys.push(k);
        vals.push(conv);
    }
    let elem = unify_elements(&mut vals, e)
        .map_err(|_| ConvError::new("all map elements must have the same type"))?;
    let out: BTreeMap<String, Value> = keys.into_iter().zip(vals).collect();
    Ok(Value::Map(elem, out))
}

/// For `list(any)`/`map(any)`: all elements must end up with one type.
fn unify_elements(items: &mut [Value], e: &Constraint) -> Result<Type, ConvError> {
    if *e != Constraint::Any {
        return Ok(e.to_type());
    }
    let Some(first) = items.iter().map(Value::ty).find(|t| *t != Type::Dynamic) else {
        return Ok(Type::Dynamic);
    };
    let target = Constraint::from_type(&first);
    for item in items.iter_mut() {
        if item.ty() != first {
            let taken = std::mem::replace(item, Value::null());
            *item = convert(taken, &target)
                .map_err(|_| ConvError::new("all list elements must have the same type"))?;
        }
    }
    Ok(first)
}

/// The elements of a tuple converted to their common type.
fn unify_tuple(items: &mut [Value]) -> Result<Type, ConvError> {
    let types: Vec<Type> = items.iter().map(Value::ty).collect();
    let Some(common) = super::unify(&types).filter(|t| *t != Type::Dynamic) else {
        return unify_elements(items, &Constraint::Any);
    };
    let target = Constraint::from_type(&common);
    for item in items.iter_mut() {
        let taken = std::mem::replace(item, Value::null());
        *item = convert(taken, &target)
            .map_err(|_| ConvError::new("all list elements must have the same type"))?;
    }
    Ok(common)
}

fn convert_tuple(v: Value, es: &[Constraint]) -> Result<Value, ConvError> {
    let (Value::List(_, items) | Value::Tuple(items) | Value::Set(_, items)) = v else {
        return Err(ConvError::new("tuple required"));
    };
    if items.len() != es.len() {
        return Err(ConvError::new(format!(
            "tuple required with exactly {} elements",
            es.len()
        )));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, (item, e)) in items.into_iter().zip(es).enumerate() {
        out.push(convert(item, e).map_err(|err| err.at(format!("element {i}")))?);
    }
    Ok(Value::Tuple(out))
}

fn convert_object(v: Value, attrs: &BTreeMap<String, ObjectAttr>) -> Result<Value, ConvError> {
    let (Value::Map(_, mut given) | Value::Object(mut given)) = v else {
        return Err(ConvError::new("object required"));
    };
    let missing: Vec<&str> = attrs
        .iter()
        .filter(|(k, a)| !a.optional && !given.contains_key(*k))
        .map(|(k, _)| k.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(ConvError::new(missing_message(&missing)));
    }
    let mut out = BTreeMap::new();
    for (name, attr) in attrs {
        let conv = match given.remove(name) {
            Some(item) => convert(item, &attr.ty)
                .map_err(|err| err.at(format!("attribute {}", quote(name))))?,
            None => Value::Null(attr.ty.to_type()),
        };
        out.insert(name.clone(), conv);
    }
    Ok(Value::Object(out))
}

fn missing_message(missing: &[&str]) -> String {
    let quoted: Vec<String> = missing.iter().map(|m| format!("\"{m}\"")).collect();
    match quoted.as_slice() {
        [one] => format!("attribute {one} is required"),
        [a, b] => format!("attributes {a} and {b} are required"),
        [init @ .., last] => format!("attributes {}, and {last} are required", init.join(", ")),
        [] => String::new(),
    }
}

/// Attributes of `v` that an object type in `c` does not declare (conversion drops them
/// silently, so a typo such as `memroy` would go unnoticed): (path, name, suggestion).
pub fn undeclared_attributes(v: &Value, c: &Constraint) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    walk_undeclared(v, c, String::new(), &mut out);
    out
}

fn walk_undeclared(
    v: &Value,
    c: &Constraint,
    path: String,
    out: &mut Vec<(String, String, Option<String>)>,
) {
    if out.len() >= 20 {
        return;
    }
    let v = v.unmark().0;
    match (v, c) {
        (Value::Object(m) | Value::Map(_, m), Constraint::Object(attrs)) => {
            for (k, item) in m {
                match attrs.get(k) {
                    Some(a) => walk_undeclared(item, &a.ty, format!("{path}.{k}"), out),
                    None => {
                        let hint = crate::diag::suggest(k, attrs.keys().map(String::as_str));
                        out.push((path.clone(), k.clone(), hint.map(str::to_owned)));
                    }
                }
            }
        }
        (Value::Object(m) | Value::Map(_, m), Constraint::Map(e)) => {
            for (k, item) in m {
                walk_undeclared(item, e, format!("{path}[{}]", quote(k)), out);
            }
        }
        (
            Value::List(_, items) | Value::Tuple(items) | Value::Set(_, items),
            Constraint::List(e) | Constraint::Set(e),
        ) => {
            for (i, item) in items.iter().enumerate() {
                walk_undeclared(item, e, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}
