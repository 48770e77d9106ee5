//! Expression dispatch: literals, collections, references and traversals, conditionals, `for`
//! expressions and function calls.

use std::collections::BTreeMap;

use hcl_edit::Span as _;
use hcl_edit::expr::{BinaryOperator, Expression, ForExpr, FuncCall, ObjectKey, TraversalOperator};

use super::super::funcs;
use super::super::value::{Type, Value, quote};
use super::traverse::{apply_ops, borrow_reference, traverse};
use super::{Scope, ops, template};
use crate::diag::Diagnostic;

pub(super) fn eval(s: &Scope<'_>, e: &Expression) -> Result<Value, Diagnostic> {
    match e {
        Expression::Null(_) => Ok(Value::null()),
        Expression::Bool(b) => Ok(Value::Bool(*b.value())),
        Expression::Number(n) => Ok(Value::Number(n.value().as_f64().unwrap_or(f64::NAN))),
        Expression::String(st) => {
            s.charge_bytes(st.value().len() as u64 + super::NODE_BYTES, e.span())?;
            Ok(Value::String(crate::value::nfc(st.value().clone())))
        }
        Expression::Array(items) => {
            s.charge(items.len() as u64, e.span())?;
            let vals = items
                .iter()
                .map(|i| s.eval(i))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::Tuple(vals))
        }
        Expression::Object(obj) => eval_object(s, obj, e),
        Expression::StringTemplate(t) => template::eval_string_template(s, t, e.span()),
        Expression::HeredocTemplate(h) => template::eval_template(s, &h.template, e.span(), true),
        Expression::Parenthesis(p) => s.eval(p.inner()),
        Expression::Variable(v) => traverse(s, v, &[], e),
        Expression::Traversal(t) => match &t.expr {
            Expression::Variable(v) => traverse(s, v, &t.operators, e),
            inner => {
                let base = s.eval(inner)?;
                apply_ops(s, base, &t.operators)
            }
        },
        Expression::Conditional(c) => eval_conditional(s, c),
        Expression::FuncCall(call) => eval_call(s, call, e),
        Expression::UnaryOp(u) => {
            let v = s.eval(&u.expr)?;
            ops::unary(s, *u.operator.value(), v, e.span())
        }
        Expression::BinaryOp(b) => {
            let op = *b.operator.value();
            let ranges = (b.lhs_expr.span(), b.rhs_expr.span());
            if matches!(op, BinaryOperator::And | BinaryOperator::Or) {
                let (lhs, rhs) = (s.eval(&b.lhs_expr), s.eval(&b.rhs_expr));
                return ops::logical(s, op, lhs, rhs, ranges);
            }
            let lhs = s.eval(&b.lhs_expr)?;
            let rhs = s.eval(&b.rhs_expr)?;
            ops::binary(s, op, lhs, rhs, ranges)
        }
        Expression::ForExpr(f) => eval_for(s, f),
    }
}

fn eval_object(
    s: &Scope<'_>,
    obj: &hcl_edit::expr::Object,
    e: &Expression,
) -> Result<Value, Diagnostic> {
    s.charge(obj.len() as u64, e.span())?;
    let mut out = BTreeMap::new();
    let mut marked = false;
    for (k, v) in obj.iter() {
        let key = match k {
            ObjectKey::Ident(id) => id.as_str().to_owned(),
            // A bare `null` key is its name, like any other bare word.
            ObjectKey::Expression(Expression::Null(_)) => "null".to_owned(),
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

/// Only the chosen branch is evaluated; an unknown condition gives an unknown of the true
/// branch's type.
fn eval_conditional(s: &Scope<'_>, c: &hcl_edit::expr::Conditional) -> Result<Value, Diagnostic> {
    let (cv, marked) = s.eval(&c.cond_expr)?.into_unmarked();
    let cv = match cv {
        Value::String(ref st) if st == "true" => Value::Bool(true),
        Value::String(ref st) if st == "false" => Value::Bool(false),
        other => other,
    };
    match cv {
        Value::Bool(b) => {
            let (chosen, other) = if b {
                (&c.true_expr, &c.false_expr)
            } else {
                (&c.false_expr, &c.true_expr)
            };
            let v = s.eval(chosen)?;
            // Terraform gives both results one type: the other one is evaluated for its type
            // (and its mark, which the result carries too) only, and its errors do not count
            // (`true ? 1 : "a"` is "1").
            let (other_ty, other_marked) = s
                .eval(other)
                .map_or((Type::Dynamic, false), |o| (o.ty(), o.unmark().1));
            Ok(conditional_type(s, c, v, &other_ty, b)?.mark(marked || other_marked))
        }
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

/// The chosen result converted to the type both results unify to; results that do not unify
/// (a number and a bool, a number and a list) are Terraform's "Inconsistent conditional result
/// types".
fn conditional_type(
    s: &Scope<'_>,
    c: &hcl_edit::expr::Conditional,
    v: Value,
    other: &Type,
    chose_true: bool,
) -> Result<Value, Diagnostic> {
    let mine = v.ty();
    match crate::types::unify_unsafe(&[mine.clone(), other.clone()]) {
        Some(t) if t != mine => {
            let c = crate::types::Constraint::from_type(&t);
            Ok(crate::types::convert(v.clone(), &c).unwrap_or(v))
        }
        Some(_) => Ok(v),
        None => {
            let (t, f) = if chose_true {
                (&mine, other)
            } else {
                (other, &mine)
            };
            Err(s.error(
                "Inconsistent conditional result types",
                format!(
                    "The true and false result expressions must have consistent types. The \
                     'true' value is {}, but the 'false' value is {}.",
                    t.friendly(),
                    f.friendly()
                ),
                c.true_expr.span(),
            ))
        }
    }
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
    let ns: Vec<&str> = call.name.namespace.iter().map(|n| n.as_str()).collect();
    // `core::` names Terraform's own functions; any other namespace is a provider's.
    if call.name.is_namespaced() && ns != ["core"] {
        return Err(s.error(
            "Call to unknown function",
            format!("There is no function named \"{}::{name}\": provider-defined functions are not supported by atoll.", ns.join("::")),
            e.span(),
        ));
    }
    let args: Vec<&Expression> = call.args.iter().collect();
    if funcs::LAZY.contains(&name) {
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
        // A marked collection marks each of its elements when expanded.
        let (last, marked) = last.into_unmarked();
        match last.as_seq() {
            Some(items) => vals.extend(items.iter().map(|v| v.clone().mark(marked))),
            None => return Err(s.error(
                "Invalid expanding argument value",
                "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                e.span(),
            )),
        }
    }
    funcs::call(s, name, vals, e.span())
}

/// The (key, value) pairs a `for` iterates: index/element for sequences, element/element for
/// sets, key/value for maps and objects (lexical order). `Ok(None)` for an unknown collection.
pub(crate) fn iteration_pairs(
    s: &Scope<'_>,
    coll: Value,
    what: &str,
    range: Option<std::ops::Range<usize>>,
) -> Result<Option<Vec<(Value, Value)>>, Diagnostic> {
    let pairs: Vec<(Value, Value)> = match coll {
        Value::Unknown(_) => return Ok(None),
        Value::Null(_) => {
            return Err(s.error(
                "Iteration over null value",
                format!("A null value cannot be used as the collection in {what}."),
                range,
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
        other => {
            return Err(s.error(
                "Iteration over non-iterable value",
                format!(
                    "A value of type {} cannot be used as the collection in {what}.",
                    other.ty().friendly()
                ),
                range,
            ));
        }
    };
    s.charge(pairs.len() as u64, range)?;
    Ok(Some(pairs))
}

/// What a `for` expression builds: a tuple, an object, or an object of groups (`...`).
#[derive(Default)]
struct ForOut {
    list: Vec<Value>,
    obj: BTreeMap<String, Value>,
    groups: BTreeMap<String, Vec<Value>>,
    /// A sensitive condition or key marks the whole result.
    marked: bool,
}

fn eval_for(s: &Scope<'_>, f: &ForExpr) -> Result<Value, Diagnostic> {
    if let Some((coll, marked)) = borrow_reference(s, &f.intro.collection_expr)?
        && let Some(out) = eval_for_borrowed(s, f, coll)?
    {
        return Ok(out.mark(marked));
    }
    let (coll, marked) = s.eval(&f.intro.collection_expr)?.into_unmarked();
    let range = f.intro.collection_expr.span();
    let Some(pairs) = iteration_pairs(s, coll, "a 'for' expression", range)? else {
        return Ok(Value::Unknown(Type::Dynamic).mark(marked));
    };
    let key_name = f.intro.key_var.as_ref().map(|k| k.as_str().to_owned());
    let val_name = f.intro.value_var.as_str().to_owned();
    let mut out = ForOut::default();
    for (k, v) in pairs {
        let mut b = vec![(val_name.clone(), v)];
        if let Some(kn) = &key_name {
            b.push((kn.clone(), k));
        }
        let child = s.child(b);
        match for_item(&child, f, &mut out)? {
            Step::Next => {}
            Step::Unknown => return Ok(Value::Unknown(Type::Dynamic).mark(marked)),
        }
    }
    let result = match &f.key_expr {
        None => Value::Tuple(out.list),
        Some(_) if f.grouping => Value::Object(
            out.groups
                .into_iter()
                .map(|(k, v)| (k, Value::Tuple(v)))
                .collect(),
        ),
        Some(_) => Value::Object(out.obj),
    };
    Ok(result.mark(marked || out.marked))
}

/// `for` over a collection borrowed from the names: each element is bound by reference, so
/// `[for k, c in aws_x.y : c.id]` copies only the ids. `None` when the value is not a known
/// collection (the owned path then reports the error).
fn eval_for_borrowed<'a>(
    s: &Scope<'a>,
    f: &ForExpr,
    coll: &'a Value,
) -> Result<Option<Value>, Diagnostic> {
    let (coll, marked) = coll.unmark();
    let pairs: Vec<(Value, &'a Value)> = match coll {
        Value::List(_, items) | Value::Tuple(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (Value::Number(i as f64), v))
            .collect(),
        Value::Set(_, items) => items.iter().map(|v| (v.clone(), v)).collect(),
        Value::Map(_, m) | Value::Object(m) => m
            .iter()
            .map(|(k, v)| (Value::String(k.clone()), v))
            .collect(),
        _ => return Ok(None),
    };
    s.charge(pairs.len() as u64, f.intro.collection_expr.span())?;
    let key_name = f.intro.key_var.as_ref().map(|k| k.as_str().to_owned());
    let val_name = f.intro.value_var.as_str().to_owned();
    let mut out = ForOut::default();
    for (k, v) in pairs {
        let mut b = vec![(val_name.clone(), std::borrow::Cow::Borrowed(v))];
        if let Some(kn) = &key_name {
            b.push((kn.clone(), std::borrow::Cow::Owned(k)));
        }
        let child = s.child_cow(b);
        if let Step::Unknown = for_item(&child, f, &mut out)? {
            return Ok(Some(Value::Unknown(Type::Dynamic).mark(marked)));
        }
    }
    let result = match &f.key_expr {
        None => Value::Tuple(out.list),
        Some(_) if f.grouping => Value::Object(
            out.groups
                .into_iter()
                .map(|(k, v)| (k, Value::Tuple(v)))
                .collect(),
        ),
        Some(_) => Value::Object(out.obj),
    };
    Ok(Some(result.mark(marked || out.marked)))
}

enum Step {
    Next,
    Unknown,
}

/// One iteration of a `for` expression: condition, value and key.
fn for_item(child: &Scope<'_>, f: &ForExpr, out: &mut ForOut) -> Result<Step, Diagnostic> {
    if let Some(cond) = &f.cond {
        let (cv, marked) = child.eval(&cond.expr)?.into_unmarked();
        out.marked |= marked;
        let cv = match cv {
            Value::String(_) => crate::types::convert(cv, &crate::types::Constraint::Bool)
                .unwrap_or(Value::Null(Type::Bool)),
            other => other,
        };
        match cv {
            Value::Bool(true) => {}
            Value::Bool(false) => return Ok(Step::Next),
            Value::Unknown(_) => return Ok(Step::Unknown),
            _ => {
                return Err(child.error(
                    "Invalid 'for' condition",
                    "The 'if' clause value must be a bool.",
                    cond.expr.span(),
                ));
            }
        }
    }
    let value = child.eval(&f.value_expr)?;
    let Some(ke) = &f.key_expr else {
        out.list.push(value);
        return Ok(Step::Next);
    };
    let (kv, marked) = child.eval(ke)?.into_unmarked();
    out.marked |= marked;
    let key = match kv {
        Value::String(k) => k,
        Value::Number(n) => super::super::value::format_number(n),
        Value::Bool(b) => b.to_string(),
        Value::Unknown(_) => return Ok(Step::Unknown),
        _ => {
            return Err(child.error(
                "Invalid object key",
                "Key expression in 'for' expression must be a string.",
                ke.span(),
            ));
        }
    };
    if f.grouping {
        out.groups.entry(key).or_default().push(value);
        return Ok(Step::Next);
    }
    match out.obj.entry(key) {
        std::collections::btree_map::Entry::Occupied(o) => Err(child.error(
            "Duplicate object key",
            format!("Two different items produced the key {} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.", quote(o.key())),
            ke.span(),
        )),
        std::collections::btree_map::Entry::Vacant(v) => {
            v.insert(value);
            Ok(Step::Next)
        }
    }
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
