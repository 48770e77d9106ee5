//! References and traversals: root names resolved by reference before copying, attribute and
//! index steps, splats, with Terraform's errors.

use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::{Decorated, Span as _};

use super::Scope;
use crate::diag::Diagnostic;
use crate::value::{Type, Value, quote};

pub(super) fn traverse(
    s: &Scope<'_>,
    root: &Decorated<hcl_edit::Ident>,
    ops: &[Decorated<TraversalOperator>],
    e: &Expression,
) -> Result<Value, Diagnostic> {
    if let Some(bound) = s.binding(root.as_str()) {
        return copy_then_apply(s, bound, ops, e);
    }
    let (base, used) = s.names.resolve(root, ops, s)?;
    let rest = ops.get(used..).unwrap_or(&[]);
    copy_then_apply(s, &base, rest, e)
}

/// Walks known attribute/index steps by reference, then copies only what is left and applies
/// the remaining steps.
fn copy_then_apply(
    s: &Scope<'_>,
    base: &Value,
    rest: &[Decorated<TraversalOperator>],
    e: &Expression,
) -> Result<Value, Diagnostic> {
    let (value, marked, consumed) = walk_borrowed(s, base, rest)?;
    s.charge_value(value, e.span())?;
    let owned = value.clone();
    let rest = rest.get(consumed..).unwrap_or(&[]);
    apply_ops(s, owned.mark(marked), rest)
}

/// Follows `GetAttr`/`Index` steps through known values without copying. Stops at the first
/// step that needs the owned path (splats, unknowns, errors).
pub(super) fn walk_borrowed<'v>(
    s: &Scope<'_>,
    mut v: &'v Value,
    ops: &[Decorated<TraversalOperator>],
) -> Result<(&'v Value, bool, usize), Diagnostic> {
    let mut marked = false;
    for (i, op) in ops.iter().enumerate() {
        if let Value::Sensitive(inner) = v {
            marked = true;
            v = inner;
        }
        let next = match (op.value(), v) {
            (TraversalOperator::GetAttr(name), Value::Object(m) | Value::Map(_, m)) => {
                m.get(name.as_str())
            }
            (TraversalOperator::Index(ie), Value::Object(m) | Value::Map(_, m)) => {
                match s.eval(ie)?.unmark().0 {
                    Value::String(k) => m.get(k),
                    _ => None,
                }
            }
            (TraversalOperator::Index(ie), Value::List(_, items) | Value::Tuple(items)) => {
                match s.eval(ie)?.unmark().0.as_number() {
                    Some(n) if n >= 0.0 && n.fract() == 0.0 => items.get(n as usize),
                    _ => None,
                }
            }
            _ => None,
        };
        match next {
            Some(n) => v = n,
            None => return Ok((v, marked, i)),
        }
    }
    Ok((v, marked, ops.len()))
}

/// Applies traversal operators to an owned value, with Terraform's errors.
pub(super) fn apply_ops(
    s: &Scope<'_>,
    mut v: Value,
    ops: &[Decorated<TraversalOperator>],
) -> Result<Value, Diagnostic> {
    let mut i = 0;
    while i < ops.len() {
        let op = &ops[i];
        match op.value() {
            TraversalOperator::FullSplat(_) | TraversalOperator::AttrSplat(_) => {
                let full = matches!(op.value(), TraversalOperator::FullSplat(_));
                let end = if full {
                    ops.len()
                } else {
                    ops[i + 1..]
                        .iter()
                        .position(|o| {
                            !matches!(
                                o.value(),
                                TraversalOperator::GetAttr(_) | TraversalOperator::LegacyIndex(_)
                            )
                        })
                        .map_or(ops.len(), |p| i + 1 + p)
                };
                if !full
                    && let Some(next) = ops.get(end)
                    && matches!(next.value(), TraversalOperator::AttrSplat(_))
                {
                    return Err(s.error(
                        "Nested splat expression not allowed",
                        "A splat expression (*) cannot be used inside another attribute-only splat expression.",
                        next.span(),
                    ));
                }
                v = splat(s, v, &ops[i + 1..end], op.span())?;
                i = end;
                continue;
            }
            TraversalOperator::GetAttr(name) => v = get_attr(s, v, name.as_str(), op.span())?,
            TraversalOperator::LegacyIndex(_)
                if ops
                    .get(i + 1)
                    .is_some_and(|o| matches!(o.value(), TraversalOperator::LegacyIndex(_))) =>
            {
                return Err(s.error(
                    "Invalid legacy index syntax",
                    "When using the legacy index syntax, chaining two indexes together is not permitted. Use the proper index syntax instead, like [1][0].",
                    op.span(),
                ));
            }
            TraversalOperator::LegacyIndex(n) => {
                v = index(s, v, Value::Number(*n.value() as f64), op.span())?;
            }
            TraversalOperator::Index(ie) => {
                let key = s.eval(ie)?;
                v = index(s, v, key, ie.span())?;
            }
        }
        i += 1;
    }
    Ok(v)
}

/// HCL's splat: over a list or a set it makes a list (whose elements must then be of one
/// type), over a tuple a tuple, and any other value is taken as a one-element tuple (a null
/// one as an empty tuple, but a null sequence is an error).
fn splat(
    s: &Scope<'_>,
    v: Value,
    ops: &[Decorated<TraversalOperator>],
    range: Option<std::ops::Range<usize>>,
) -> Result<Value, Diagnostic> {
    let (v, marked) = v.into_unmarked();
    let out = match v {
        Value::Null(Type::List(_) | Type::Set(_) | Type::Tuple(_)) => {
            return Err(s.error(
                "Splat of null value",
                "Splat expressions (with the * symbol) cannot be applied to null sequences.",
                range,
            ));
        }
        Value::Null(_) => Value::Tuple(Vec::new()),
        Value::Unknown(_) => Value::Unknown(Type::Dynamic),
        Value::List(_, items) | Value::Set(_, items) => {
            let out = items
                .into_iter()
                .map(|item| apply_ops(s, item, ops))
                .collect::<Result<Vec<_>, _>>()?;
            let elem = out.first().map_or(Type::Dynamic, Value::ty);
            if out.iter().any(|v| v.ty() != elem) {
                return Err(s.error(
                    "Invalid nested splat expressions",
                    "The second level of splat expression produced elements of different types, so it isn't possible to construct a valid list to represent the top-level result.",
                    range,
                ));
            }
            Value::List(elem, out)
        }
        Value::Tuple(items) => Value::Tuple(
            items
                .into_iter()
                .map(|item| apply_ops(s, item, ops))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        other => Value::Tuple(vec![apply_ops(s, other, ops)?]),
    };
    Ok(out.mark(marked))
}

fn get_attr(
    s: &Scope<'_>,
    v: Value,
    name: &str,
    range: Option<std::ops::Range<usize>>,
) -> Result<Value, Diagnostic> {
    let (v, marked) = v.into_unmarked();
    let out = match v {
        Value::Object(mut m) => match m.remove(name) {
            Some(x) => x,
            None => {
                return Err(s.error(
                    "Unsupported attribute",
                    format!(
                        "This object does not have an attribute named {}.",
                        quote(name)
                    ),
                    range,
                ));
            }
        },
        Value::Map(_, mut m) => match m.remove(name) {
            Some(x) => x,
            None => {
                return Err(s.error(
                    "Missing map element",
                    format!(
                        "This map does not have an element with the key {}.",
                        quote(name)
                    ),
                    range,
                ));
            }
        },
        Value::Unknown(Type::Object(attrs)) => match attrs.get(name) {
            Some(t) => Value::Unknown(t.clone()),
            None => {
                return Err(s.error(
                    "Unsupported attribute",
                    format!(
                        "This object does not have an attribute named {}.",
                        quote(name)
                    ),
                    range,
                ));
            }
        },
        Value::Unknown(Type::Map(t)) => Value::Unknown(*t),
        Value::Unknown(_) => Value::Unknown(Type::Dynamic),
        Value::Null(_) => {
            return Err(s.error(
                "Attempt to get attribute from null value",
                "This value is null, so it does not have any attributes.",
                range,
            ));
        }
        Value::List(..) | Value::Set(..) | Value::Tuple(_) => {
            return Err(s.error(
                "Unsupported attribute",
                format!("Can't access attributes on a list of objects. Did you mean to access attribute {} for a specific element of the list, or across all elements of the list?", quote(name)),
                range,
            ));
        }
        other => {
            return Err(s.error(
                "Unsupported attribute",
                format!(
                    "Can't access attributes on a primitive-typed value ({}).",
                    other.ty().friendly()
                ),
                range,
            ));
        }
    };
    Ok(out.mark(marked))
}

/// Indexes a collection by a key value (`x["k"]`, `x[0]`).
pub(super) fn index(
    s: &Scope<'_>,
    v: Value,
    key: Value,
    range: Option<std::ops::Range<usize>>,
) -> Result<Value, Diagnostic> {
    let (v, vm) = v.into_unmarked();
    let (key, km) = key.into_unmarked();
    let marked = vm || km;
    if let Value::Unknown(_) = key {
        return Ok(Value::Unknown(Type::Dynamic).mark(marked));
    }
    let invalid = |detail: &str| s.error("Invalid index", detail, range.clone());
    let out = match v {
        Value::Null(_) => {
            return Err(s.error(
                "Attempt to index null value",
                "This value is null, so it does not have any indices.",
                range,
            ));
        }
        Value::Unknown(Type::List(t) | Type::Map(t)) => Value::Unknown(*t),
        // An unknown tuple or object still has the type of each element (HCL's `Index`).
        Value::Unknown(Type::Tuple(types)) => {
            let at = key.as_number().filter(|n| n.fract() == 0.0 && *n >= 0.0);
            let t = at.and_then(|n| types.get(n as usize).cloned());
            Value::Unknown(t.unwrap_or(Type::Dynamic))
        }
        Value::Unknown(Type::Object(attrs)) => {
            let t = key.as_str().and_then(|k| attrs.get(k).cloned());
            Value::Unknown(t.unwrap_or(Type::Dynamic))
        }
        Value::Unknown(_) => Value::Unknown(Type::Dynamic),
        Value::Map(_, mut m) | Value::Object(mut m) => {
            // A number or bool key converts to a string (`{"true" = 1}[true]`).
            let k = match key {
                Value::String(k) => k,
                Value::Number(n) => crate::value::format_number(n),
                Value::Bool(b) => b.to_string(),
                _ => {
                    return Err(invalid(
                        "The given key does not identify an element in this collection value: string required.",
                    ));
                }
            };
            match m.remove(&k) {
                Some(x) => x,
                None => {
                    return Err(invalid(
                        "The given key does not identify an element in this collection value.",
                    ));
                }
            }
        }
        Value::List(_, mut items) | Value::Tuple(mut items) => {
            let n = match &key {
                Value::Number(n) => Some(*n),
                Value::String(st) => st.parse::<f64>().ok(),
                _ => None,
            };
            let Some(n) = n.filter(|n| n.fract() == 0.0) else {
                return Err(invalid(
                    "The given key does not identify an element in this collection value: a number is required.",
                ));
            };
            if n < 0.0 {
                return Err(invalid(
                    "The given key does not identify an element in this collection value: a negative number is not a valid index for a sequence.",
                ));
            }
            let idx = n as usize;
            if idx >= items.len() {
                return Err(invalid(
                    "The given key does not identify an element in this collection value: the given index is greater than or equal to the length of the collection.",
                ));
            }
            items.swap_remove(idx)
        }
        Value::Set(..) => {
            return Err(invalid(
                "Elements of a set are identified only by their value and don't have any separate index or key to select with, so it's only possible to perform operations across all elements of the set.",
            ));
        }
        other => {
            return Err(invalid(&format!(
                "This value does not have any indices (it is a {}).",
                other.ty().friendly()
            )));
        }
    };
    Ok(out.mark(marked))
}

/// The value a plain reference (`aws_x.y`, `var.m`, `local.l.k`) names, borrowed from the
/// names resolver without copying; `None` when it cannot be borrowed (bound names, computed
/// values, steps that need a copy).
pub(crate) fn borrow_reference<'a>(
    s: &Scope<'a>,
    e: &Expression,
) -> Result<Option<(&'a Value, bool)>, Diagnostic> {
    let (root, ops): (&Decorated<hcl_edit::Ident>, &[Decorated<TraversalOperator>]) = match e {
        Expression::Variable(v) => (v, &[]),
        Expression::Traversal(t) => match &t.expr {
            Expression::Variable(v) => (v, &t.operators),
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    if s.binding(root.as_str()).is_some() {
        return Ok(None);
    }
    let names: &'a dyn super::Names = s.names;
    let (base, used) = names.resolve(root, ops, s)?;
    let std::borrow::Cow::Borrowed(base) = base else {
        return Ok(None);
    };
    let rest = ops.get(used..).unwrap_or(&[]);
    let (value, marked, consumed) = walk_borrowed(s, base, rest)?;
    Ok((consumed == rest.len()).then_some((value, marked)))
}
