//! Expression dispatch: literals, collections, references and traversals, conditionals, `for`
//! expressions and function calls.

use std::collections::BTreeMap;

use hcl_edit::expr::{Expression, ForExpr, FuncCall, ObjectKey, TraversalOperator};
use hcl_edit::{Decorated, Span as _};

use super::super::funcs;
use super::super::value::{Type, Value, quote};
use super::{Scope, ops, template, weight};
use crate::tfconfig::diag::Diagnostic;

pub(super) fn eval(s: &Scope<'_>, e: &Expression) -> Result<Value, Diagnostic> {
    match e {
        Expression::Null(_) => Ok(Value::null()),
        Expression::Bool(b) => Ok(Value::Bool(*b.value())),
        Expression::Number(n) => Ok(Value::Number(n.value().as_f64().unwrap_or(f64::NAN))),
        Expression::String(st) => Ok(Value::String(st.value().clone())),
        Expression::Array(items) => {
            s.charge(items.len() as u64, e.span())?;
            let vals = items
                .iter()
                .map(|i| s.eval(i))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::Tuple(vals))
        }
        Expression::Object(obj) => {
            s.charge(obj.len() as u64, e.span())?;
            let mut out = BTreeMap::new();
            let mut marked = false;
            for (k, v) in obj.iter() {
                let key = match k {
                    ObjectKey::Ident(id) => id.as_str().to_owned(),
                    ObjectKey::Expression(ke) => {
                        let (kv, m) = s.eval(ke)?.into_unmarked();
                        marked |= m;
                        match kv {
                            Value::Unknown(_) => return Ok(Value::Unknown(Type::Dynamic)),
                            Value::String(k) => k,
                            Value::Number(n) => super::super::value::format_number(n),
                            Value::Bool(b) => b.to_string(),
                            _ => {
                                return Err(s.error(
                                    "Incorrect key type",
                                    "Can't use this value as a key: string required.",
                                    ke.span(),
                                ));
                            }
                        }
                    }
                };
                out.insert(key, s.eval(v.expr())?);
            }
            Ok(Value::Object(out).mark(marked))
        }
        Expression::StringTemplate(t) => template::eval_string_template(s, t, e.span()),
        Expression::HeredocTemplate(h) => template::eval_template(s, &h.template, e.span()),
        Expression::Parenthesis(p) => s.eval(p.inner()),
        Expression::Variable(v) => traverse(s, v, &[], e),
        Expression::Traversal(t) => match &t.expr {
            Expression::Variable(v) => traverse(s, v, &t.operators, e),
            inner => {
                let base = s.eval(inner)?;
                apply_ops(s, base, &t.operators)
            }
        },
        Expression::Conditional(c) => {
            let cond = s.eval(&c.cond_expr)?;
            let (cv, marked) = cond.into_unmarked();
            let cv = match cv {
                Value::String(ref st) if st == "true" => Value::Bool(true),
                Value::String(ref st) if st == "false" => Value::Bool(false),
                other => other,
            };
            match cv {
                Value::Bool(true) => Ok(s.eval(&c.true_expr)?.mark(marked)),
                Value::Bool(false) => Ok(s.eval(&c.false_expr)?.mark(marked)),
                Value::Unknown(_) => {
                    let t = s
                        .eval(&c.true_expr)
                        .map(|v| v.ty())
                        .unwrap_or(Type::Dynamic);
                    Ok(Value::Unknown(t).mark(marked))
                }
                Value::Null(_) => Err(s.error(
                    "Null condition",
                    "The condition value is null. Conditions must either be true or false.",
                    c.cond_expr.span(),
                )),
                _ => Err(s.error(
                    "Incorrect condition type",
                    "The condition expression must be of type bool.",
                    c.cond_expr.span(),
                )),
            }
        }
        Expression::FuncCall(call) => eval_call(s, call, e),
        Expression::UnaryOp(u) => {
            let v = s.eval(&u.expr)?;
            ops::unary(s, *u.operator.value(), v, e.span())
        }
        Expression::BinaryOp(b) => {
            let op = *b.operator.value();
            let lhs = s.eval(&b.lhs_expr)?;
            // && and || short-circuit like Terraform's (they do not: both sides are evaluated)
            let rhs = s.eval(&b.rhs_expr)?;
            ops::binary(s, op, lhs, rhs, (b.lhs_expr.span(), b.rhs_expr.span()))
        }
        Expression::ForExpr(f) => eval_for(s, f, e),
    }
}

fn traverse(
    s: &Scope<'_>,
    root: &Decorated<hcl_edit::Ident>,
    ops: &[Decorated<TraversalOperator>],
    e: &Expression,
) -> Result<Value, Diagnostic> {
    if let Some(bound) = s.binding(root.as_str()) {
        let base = bound.clone();
        s.charge(weight(&base, 1_000_000), e.span())?;
        return apply_ops(s, base, ops);
    }
    let (base, used) = s.names.resolve(root, ops, s)?;
    let rest = ops.get(used..).unwrap_or(&[]);
    // Walk known attribute/index steps by reference before copying anything.
    let (value, marked, consumed) = walk_borrowed(s, &base, rest)?;
    let owned = value.clone();
    s.charge(weight(&owned, 1_000_000), e.span())?;
    let rest = rest.get(consumed..).unwrap_or(&[]);
    apply_ops(s, owned.mark(marked), rest)
}

/// Follows `GetAttr`/`Index` steps through known values without copying. Stops at the first
/// step that needs the owned path (splats, unknowns, errors).
fn walk_borrowed<'v>(
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
                v = splat(s, v, &ops[i + 1..end])?;
                i = end;
                continue;
            }
            TraversalOperator::GetAttr(name) => v = get_attr(s, v, name.as_str(), op.span())?,
            TraversalOperator::LegacyIndex(n) => {
                v = index(s, v, Value::Number(*n.value() as f64), op.span())?
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

fn splat(
    s: &Scope<'_>,
    v: Value,
    ops: &[Decorated<TraversalOperator>],
) -> Result<Value, Diagnostic> {
    let (v, marked) = v.into_unmarked();
    let out = match v {
        Value::Null(_) => Value::Tuple(Vec::new()),
        Value::Unknown(_) => Value::Unknown(Type::Dynamic),
        Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(apply_ops(s, item, ops)?);
            }
            Value::Tuple(out)
        }
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
        Value::Unknown(_) => Value::Unknown(Type::Dynamic),
        Value::Map(_, mut m) | Value::Object(mut m) => {
            let k = match key {
                Value::String(k) => k,
                Value::Number(n) => super::super::value::format_number(n),
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

fn eval_call(s: &Scope<'_>, call: &FuncCall, e: &Expression) -> Result<Value, Diagnostic> {
    let name = call.name.name.as_str();
    if !s.functions_allowed {
        return Err(s.error(
            "Function calls not allowed",
            "Functions may not be called here.",
            e.span(),
        ));
    }
    if call.name.is_namespaced() {
        let ns: Vec<&str> = call.name.namespace.iter().map(|n| n.as_str()).collect();
        return Err(s.error(
            "Call to unknown function",
            format!("There is no function named \"{}::{name}\": provider-defined functions are not supported by atoll.", ns.join("::")),
            e.span(),
        ));
    }
    let args: Vec<&Expression> = call.args.iter().collect();
    if name == "try" || name == "can" {
        return funcs::call_lazy(s, name, &args, call.args.expand_final(), e.span());
    }
    let mut vals = Vec::with_capacity(args.len());
    for a in &args {
        vals.push(s.eval(a)?);
    }
    if call.args.expand_final() {
        let Some(last) = vals.pop() else {
            return Err(s.error(
                "Invalid expanding argument value",
                "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                e.span(),
            ));
        };
        match last.unmark().0.as_seq() {
            Some(items) => vals.extend(items.iter().cloned()),
            None => return Err(s.error(
                "Invalid expanding argument value",
                "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                e.span(),
            )),
        }
    }
    funcs::call(s, name, vals, e.span())
}

fn eval_for(s: &Scope<'_>, f: &ForExpr, e: &Expression) -> Result<Value, Diagnostic> {
    let coll = s.eval(&f.intro.collection_expr)?;
    let (coll, marked) = coll.into_unmarked();
    let pairs: Vec<(Value, Value)> =
        match coll {
            Value::Unknown(_) => return Ok(Value::Unknown(Type::Dynamic).mark(marked)),
            Value::Null(_) => {
                return Err(s.error(
                    "Iteration over null value",
                    "A null value cannot be used as the collection in a 'for' expression.",
                    f.intro.collection_expr.span(),
                ));
            }
            Value::List(_, items) | Value::Tuple(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (Value::Number(i as f64), v))
                .collect(),
            Value::Set(_, items) => items.into_iter().map(|v| (v.clone(), v)).collect(),
            Value::Map(_, m) | Value::Object(m) => {
                m.into_iter().map(|(k, v)| (Value::String(k), v)).collect()
            }
            other => return Err(s.error(
                "Iteration over non-iterable value",
                format!(
                    "A value of type {} cannot be used as the collection in a 'for' expression.",
                    other.ty().friendly()
                ),
                f.intro.collection_expr.span(),
            )),
        };
    s.charge(pairs.len() as u64, e.span())?;
    let key_name = f.intro.key_var.as_ref().map(|k| k.as_str().to_owned());
    let val_name = f.intro.value_var.as_str().to_owned();
    let mut list = Vec::new();
    let mut obj: BTreeMap<String, Value> = BTreeMap::new();
    let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (k, v) in pairs {
        let mut b = vec![(val_name.clone(), v)];
        if let Some(kn) = &key_name {
            b.push((kn.clone(), k));
        }
        let child = s.child(b);
        if let Some(cond) = &f.cond {
            let (c, _) = child.eval(&cond.expr)?.into_unmarked();
            match c {
                Value::Bool(true) => {}
                Value::Bool(false) => continue,
                Value::Unknown(_) => return Ok(Value::Unknown(Type::Dynamic).mark(marked)),
                _ => {
                    return Err(s.error(
                        "Invalid 'for' condition",
                        "The 'if' clause value must be a bool.",
                        cond.expr.span(),
                    ));
                }
            }
        }
        let value = child.eval(&f.value_expr)?;
        match &f.key_expr {
            None => list.push(value),
            Some(ke) => {
                let (kv, _) = child.eval(ke)?.into_unmarked();
                let key = match kv {
                    Value::String(k) => k,
                    Value::Number(n) => super::super::value::format_number(n),
                    Value::Bool(b) => b.to_string(),
                    Value::Unknown(_) => return Ok(Value::Unknown(Type::Dynamic).mark(marked)),
                    _ => {
                        return Err(s.error(
                            "Invalid object key",
                            "Key expression in 'for' expression must be a string.",
                            ke.span(),
                        ));
                    }
                };
                if f.grouping {
                    groups.entry(key).or_default().push(value);
                } else {
                    match obj.entry(key) {
                        std::collections::btree_map::Entry::Occupied(o) => {
                            return Err(s.error(
                                "Duplicate object key",
                                format!("Two different items produced the key {} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.", quote(o.key())),
                                ke.span(),
                            ));
                        }
                        std::collections::btree_map::Entry::Vacant(v) => {
                            v.insert(value);
                        }
                    }
                }
            }
        }
    }
    let out = match &f.key_expr {
        None => Value::Tuple(list),
        Some(_) if f.grouping => Value::Object(
            groups
                .into_iter()
                .map(|(k, v)| (k, Value::Tuple(v)))
                .collect(),
        ),
        Some(_) => Value::Object(obj),
    };
    Ok(out.mark(marked))
}

/// Collects references, see [`super::references`].
pub(super) fn references(e: &Expression, out: &mut Vec<(String, Option<String>, Option<String>)>) {
    use hcl_edit::visit::{Visit, visit_expr};
    struct Refs<'a>(&'a mut Vec<(String, Option<String>, Option<String>)>);
    impl Visit for Refs<'_> {
        fn visit_expr(&mut self, e: &Expression) {
            match e {
                Expression::Variable(v) => self.0.push((v.as_str().to_owned(), None, None)),
                Expression::Traversal(t) => {
                    if let Expression::Variable(root) = &t.expr {
                        let attr = |i: usize| match t.operators.get(i).map(|o| o.value()) {
                            Some(TraversalOperator::GetAttr(a)) => Some(a.as_str().to_owned()),
                            _ => None,
                        };
                        self.0.push((root.as_str().to_owned(), attr(0), attr(1)));
                        for op in &t.operators {
                            if let TraversalOperator::Index(ie) = op.value() {
                                self.visit_expr(ie);
                            }
                        }
                    } else {
                        visit_expr(self, e);
                    }
                }
                _ => visit_expr(self, e),
            }
        }
    }
    Refs(out).visit_expr(e);
}
