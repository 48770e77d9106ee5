//! Unary and binary operators with HCL's conversions (`"5" + 1 == 6`), unknown propagation and
//! sensitive marks.

use std::ops::Range;

use hcl_edit::expr::{BinaryOperator, UnaryOperator};

use super::Scope;
use crate::diag::Diagnostic;
use crate::types::{Constraint, convert};
use crate::value::{Type, Value};

type R = Option<Range<usize>>;

fn operand(
    s: &Scope<'_>,
    v: Value,
    c: &Constraint,
    side: &str,
    range: R,
) -> Result<Value, Diagnostic> {
    if v.is_null() {
        return Err(s.error(
            "Invalid operand",
            format!(
                "Unsuitable value for {side} operand: a {} is required.",
                c.friendly()
            ),
            range,
        ));
    }
    convert(v, c).map_err(|_| {
        s.error(
            "Invalid operand",
            format!(
                "Unsuitable value for {side} operand: a {} is required.",
                c.friendly()
            ),
            range,
        )
    })
}

pub(super) fn unary(
    s: &Scope<'_>,
    op: UnaryOperator,
    v: Value,
    range: R,
) -> Result<Value, Diagnostic> {
    let (v, marked) = v.into_unmarked();
    let out = match op {
        UnaryOperator::Neg => match operand(s, v, &Constraint::Number, "unary", range)? {
            Value::Number(n) => Value::Number(-n),
            _ => Value::Unknown(Type::Number),
        },
        UnaryOperator::Not => match operand(s, v, &Constraint::Bool, "unary", range)? {
            Value::Bool(b) => Value::Bool(!b),
            _ => Value::Unknown(Type::Bool),
        },
    };
    Ok(out.mark(marked))
}

/// The result of `lhs && ...` or `lhs || ...` when `lhs` alone decides it: `false` for `&&`,
/// `true` for `||` (a string `"false"` converts as Terraform converts it), keeping its marks.
pub(super) fn short_circuit(op: BinaryOperator, lhs: &Value) -> Option<Value> {
    let deciding = match op {
        BinaryOperator::And => false,
        BinaryOperator::Or => true,
        _ => return None,
    };
    let (value, marked) = match lhs {
        Value::Sensitive(inner) => (inner.as_ref(), true),
        v => (v, false),
    };
    // Only a bool, or a string that converts to one, can decide; nothing else is copied.
    let b = match value {
        Value::Bool(b) => *b,
        Value::String(_) => convert(value.clone(), &Constraint::Bool).ok()?.as_bool()?,
        _ => return None,
    };
    (b == deciding).then(|| Value::Bool(b).mark(marked))
}

pub(super) fn binary(
    s: &Scope<'_>,
    op: BinaryOperator,
    lhs: Value,
    rhs: Value,
    ranges: (R, R),
) -> Result<Value, Diagnostic> {
    let (l, lm) = lhs.into_unmarked();
    let (r, rm) = rhs.into_unmarked();
    let marked = lm || rm || l.contains_sensitive() || r.contains_sensitive();
    let out = match op {
        BinaryOperator::Eq | BinaryOperator::NotEq => {
            if l.contains_unknown() || r.contains_unknown() {
                Value::Unknown(Type::Bool)
            } else {
                let eq = operator_equals(&l.deep_unmark(), &r.deep_unmark());
                Value::Bool(if op == BinaryOperator::Eq { eq } else { !eq })
            }
        }
        BinaryOperator::And | BinaryOperator::Or => {
            let a = operand(s, l, &Constraint::Bool, "left", ranges.0.clone())?;
            let b = operand(s, r, &Constraint::Bool, "right", ranges.1)?;
            match (a.as_bool(), b.as_bool(), op) {
                (Some(false), _, BinaryOperator::And) | (_, Some(false), BinaryOperator::And) => {
                    Value::Bool(false)
                }
                (Some(true), _, BinaryOperator::Or) | (_, Some(true), BinaryOperator::Or) => {
                    Value::Bool(true)
                }
                (Some(x), Some(y), BinaryOperator::And) => Value::Bool(x && y),
                (Some(x), Some(y), _) => Value::Bool(x || y),
                _ => Value::Unknown(Type::Bool),
            }
        }
        _ => {
            let a = operand(s, l, &Constraint::Number, "left", ranges.0)?;
            let b = operand(s, r, &Constraint::Number, "right", ranges.1.clone())?;
            let (Some(x), Some(y)) = (a.as_number(), b.as_number()) else {
                let t = if is_comparison(op) {
                    Type::Bool
                } else {
                    Type::Number
                };
                return Ok(Value::Unknown(t).mark(marked));
            };
            arith(s, op, x, y, ranges.1)?
        }
    };
    Ok(out.mark(marked))
}

fn is_comparison(op: BinaryOperator) -> bool {
    matches!(
        op,
        BinaryOperator::Less
            | BinaryOperator::LessEq
            | BinaryOperator::Greater
            | BinaryOperator::GreaterEq
    )
}

fn arith(
    s: &Scope<'_>,
    op: BinaryOperator,
    x: f64,
    y: f64,
    rrange: R,
) -> Result<Value, Diagnostic> {
    Ok(match op {
        BinaryOperator::Plus => Value::Number(x + y),
        BinaryOperator::Minus => Value::Number(x - y),
        BinaryOperator::Mul => Value::Number(x * y),
        BinaryOperator::Div | BinaryOperator::Mod if y == 0.0 => {
            let what = if op == BinaryOperator::Div {
                "Can't divide by zero."
            } else {
                "Can't use modulo by zero."
            };
            return Err(s.error(
                "Error in function call",
                format!(
                    "Call to function \"{}\" failed: {what}",
                    if op == BinaryOperator::Div {
                        "divide"
                    } else {
                        "modulo"
                    }
                ),
                rrange,
            ));
        }
        BinaryOperator::Div => Value::Number(x / y),
        BinaryOperator::Mod => Value::Number(x % y),
        BinaryOperator::Less => Value::Bool(x < y),
        BinaryOperator::LessEq => Value::Bool(x <= y),
        BinaryOperator::Greater => Value::Bool(x > y),
        BinaryOperator::GreaterEq => Value::Bool(x >= y),
        _ => Value::Unknown(Type::Dynamic),
    })
}

/// Terraform equality: same type family and same contents. Lists and tuples compare by
/// elements; maps and objects by entries; null equals only null.
/// `==` as Terraform decides it: a null equals only a null, and values of different types are
/// never equal (`tolist([1]) == [1]` is false, as is `1 == "1"`).
fn operator_equals(a: &Value, b: &Value) -> bool {
    if a.is_null() || b.is_null() {
        return a.is_null() && b.is_null();
    }
    a.ty() == b.ty() && equals(a, b)
}

pub fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null(_), Value::Null(_)) => true,
        (Value::Null(_), _) | (_, Value::Null(_)) => false,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (
            Value::List(_, x) | Value::Tuple(x) | Value::Set(_, x),
            Value::List(_, y) | Value::Tuple(y) | Value::Set(_, y),
        ) => {
            let same_kind = matches!((a, b), (Value::Set(..), Value::Set(..)))
                || (!matches!(a, Value::Set(..)) && !matches!(b, Value::Set(..)));
            same_kind && x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equals(p, q))
        }
        (Value::Map(_, x) | Value::Object(x), Value::Map(_, y) | Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && equals(v1, v2))
        }
        _ => false,
    }
}
