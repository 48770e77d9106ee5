//! The values a walk builds from instances: the reference value of a repeated object, an
//! instance moved out of its module's map, known computed values filled in.

use std::collections::BTreeMap;

use super::super::config::Resource;
use super::super::diag::Diagnostic;
use super::super::expand::InstanceKey;
use super::super::schema;
use super::super::value::Value;

/// The refusals of [`schema::refusal`] that apply to `r`: its top-level arguments and blocks,
/// and the arguments of its top-level blocks (`disk.file_id`), each on the line where it is
/// written.
pub(super) fn refused(r: &Resource) -> Vec<Diagnostic> {
    let at = |span: Option<std::ops::Range<usize>>| {
        span.map(|range| crate::diag::Span {
            file: r.file,
            range,
        })
    };
    let refuse = |name: &str, what: &str, span| {
        let why = schema::refusal(&r.rtype, name)?;
        Some(Diagnostic::error(
            "Not supported by atoll yet",
            format!("The \"{name}\" {what} of {}: {why}.", r.rtype),
            at(span),
        ))
    };
    let mut out: Vec<Diagnostic> = r
        .body
        .attributes()
        .filter_map(|a| refuse(a.key.as_str(), "argument", hcl_edit::Span::span(&a.key)))
        .collect();
    for block in r.body.blocks() {
        let name = block.ident.as_str();
        out.extend(refuse(name, "block", hcl_edit::Span::span(&block.ident)));
        if let Some(why) = schema::caution(&r.rtype, name) {
            let mut d = Diagnostic::error(
                "Needs root on Proxmox VE",
                format!("The \"{name}\" block of {}: {why}.", r.rtype),
                at(hcl_edit::Span::span(&block.ident)),
            );
            d.severity = crate::diag::Severity::Warning;
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out.extend(block.body.attributes().filter_map(|a| {
            let path = format!("{name}.{}", a.key.as_str());
            refuse(&path, "argument", hcl_edit::Span::span(&a.key))
        }));
    }
    out
}

/// The reference value of a repeated object: the single instance, an object keyed by
/// `for_each` key, or a tuple for `count`.
pub(super) fn collect(for_each: bool, count: bool, values: Vec<(InstanceKey, Value)>) -> Value {
    if for_each {
        Value::Object(
            values
                .into_iter()
                .filter_map(|(k, v)| match k {
                    InstanceKey::Str(s) => Some((s, v)),
                    _ => None,
                })
                .collect(),
        )
    } else if count {
        Value::Tuple(values.into_iter().map(|(_, v)| v).collect())
    } else {
        values
            .into_iter()
            .next()
            .map_or_else(Value::unknown, |(_, v)| v)
    }
}

/// Moves one instance's value out of its module's resource map (leaving null behind).
pub(super) fn take_instance(
    resources: &mut BTreeMap<String, Value>,
    key: &str,
    ik: &InstanceKey,
) -> Value {
    let Some(v) = resources.get_mut(key) else {
        return Value::unknown();
    };
    let slot = match (ik, v) {
        (InstanceKey::None, v) => Some(v),
        (InstanceKey::Str(k), Value::Object(m)) => m.get_mut(k),
        (InstanceKey::Int(i), Value::Tuple(items)) => items.get_mut(*i),
        _ => None,
    };
    slot.map_or_else(Value::unknown, |s| std::mem::replace(s, Value::null()))
}

/// Fills attributes that evaluated to unknown with the values atoll already knows for this
/// instance (a generated password from state, a download's volume id).
pub(super) fn with_known(attrs: Value, known: Option<&BTreeMap<String, Value>>) -> Value {
    let (Some(known), Value::Object(mut fields)) = (known, attrs.clone()) else {
        return attrs;
    };
    for (name, value) in known {
        let unknown = fields
            .get(name)
            .is_some_and(|v| matches!(v.unmark().0, Value::Unknown(_)));
        if unknown {
            fields.insert(name.clone(), value.clone());
        }
    }
    Value::Object(fields)
}
