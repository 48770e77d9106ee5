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

/// One operand of `&&` or `||`, converted to bool: its value, its mark and the error that
/// evaluating it gave (an operand that failed is unknown). A value that does not convert to
/// bool is an error at once.
fn logical_operand(
    s: &Scope<'_>,
    v: Result<Value, Diagnostic>,
    side: &str,
    range: R,
) -> Result<(Value, bool, Option<Diagnostic>), Diagnostic> {
    let v = match v {
        Ok(v) => v,
        Err(d) => return Ok((Value::Unknown(Type::Bool), false, Some(d))),
    };
    let (v, marked) = v.into_unmarked();
    let v = match v {
        Value::Null(_) => Value::Null(Type::Bool),
        Value::Unknown(_) => Value::Unknown(Type::Bool),
        v => operand(s, v, &Constraint::Bool, side, range)?,
    };
    Ok((v, marked, None))
}

/// `&&` and `||` as HCL evaluates them: both operands are evaluated, and one known operand
/// that decides the result (`false` for `&&`, `true` for `||`) makes it, whatever error the
/// other gave (`v == null || v.x`). A null counts as false there.
pub(super) fn logical(
    s: &Scope<'_>,
    op: BinaryOperator,
    lhs: Result<Value, Diagnostic>,
    rhs: Result<Value, Diagnostic>,
    ranges: (R, R),
) -> Result<Value, Diagnostic> {
    let (l, lm, lerr) = logical_operand(s, lhs, "left", ranges.0.clone())?;
    let (r, rm, rerr) = logical_operand(s, rhs, "right", ranges.1)?;
    let marked = lm || rm;
    let deciding = op == BinaryOperator::Or;
    let decides = |v: &Value| match v {
        Value::Bool(b) => *b == deciding,
        Value::Null(_) => !deciding,
        _ => false,
    };
    let known = |v: &Value| !v.is_unknown();
    let unknown = || Ok(Value::Unknown(Type::Bool).mark(marked));
    if !known(&l) && !known(&r) && lerr.is_none() {
        return unknown();
    }
    if (known(&l) && decides(&l)) || (known(&r) && decides(&r)) {
        return Ok(Value::Bool(deciding).mark(marked));
    }
    // The other side known and not deciding: an unknown one decides, with its own errors.
    if !known(&l) && known(&r) {
        return lerr.map_or_else(unknown, Err);
    }
    if !known(&r) && known(&l) {
        return rerr.map_or_else(unknown, Err);
    }
    if let Some(e) = lerr.or(rerr) {
        return Err(e);
    }
    match (l.as_bool(), r.as_bool()) {
        (Some(a), Some(b)) => Ok(Value::Bool(if deciding { a || b } else { a && b }).mark(marked)),
        _ => Err(s.error(
            "Operation failed",
            "Error during operation: argument must not be null.",
            ranges.0,
        )),
    }
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
            return logical(s, op, Ok(l.mark(lm)), Ok(r.mark(rm)), ranges);
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
        BinaryOperator::Div if y == 0.0 => {
            return Err(s.error(
                "Error in function call",
                "Call to function \"divide\" failed: Can't divide by zero.",
                rrange,
            ));
        }
        // cty: a modulo by zero is the dividend; an infinite operand is an error.
        BinaryOperator::Mod if x.is_infinite() || y.is_infinite() => {
            return Err(s.error(
                "Error in function call",
                "Call to function \"modulo\" failed: can't use modulo with an infinite number.",
                rrange,
            ));
        }
        BinaryOperator::Mod if y == 0.0 => Value::Number(x),
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
