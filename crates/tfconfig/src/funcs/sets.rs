//! Sequence and set functions with Terraform's parameter types: `concat setunion
//! setintersection setsubtract setproduct matchkeys compact`. Each argument converts to the
//! list or set its parameter takes, so elements meet at their common type (`concat(tolist([1]),
//! tolist(["a"]))` is `["1", "a"]`), and a set is refused where only lists are taken.

use super::collections::MAX_ELEMENTS;
use super::{FnError, FnResult, fits, seq_arg};
use crate::eval::{NODE_BYTES, measure, ops_equals};
use crate::types::{Constraint, convert, unify, unify_values};
use crate::value::{Type, Value};

/// The element type `v` has as a collection: a list's or set's own, a tuple's elements'
/// common one; `None` for anything else or a tuple whose elements have none.
fn elem_type(v: &Value) -> Option<Type> {
    match v {
        Value::List(t, _) | Value::Set(t, _) => Some(t.clone()),
        Value::Tuple(items) => unify_values(items),
        _ => None,
    }
}

/// `items` converted to `ty`.
fn converted(items: &[Value], ty: &Type, arg: usize) -> Result<Vec<Value>, FnError> {
    let c = Constraint::from_type(ty);
    items
        .iter()
        .map(|v| convert(v.clone(), &c).map_err(|e| FnError::Arg(arg, e.message())))
        .collect()
}

/// The common element type of the arguments `args[i]` for `i` in `which`.
fn common_elem(args: &[Value], which: &[usize], what: &str) -> Result<Type, FnError> {
    let mut types = Vec::new();
    for &i in which {
        let arg = args
            .get(i)
            .ok_or_else(|| FnError::Arg(i, "argument is missing".into()))?;
        types.push(elem_type(arg).ok_or_else(|| FnError::Arg(i, what.to_owned()))?);
    }
    unify(&types).ok_or_else(|| {
        FnError::Call(
            "all arguments must have elements of one type (or that convert to one)".into(),
        )
    })
}

/// `concat(lists...)`: a list when every argument is a list, else a tuple.
pub(super) fn concat(args: &[Value]) -> FnResult {
    let what = "all arguments must be lists or tuples";
    if let Some(i) = args
        .iter()
        .position(|a| !matches!(a, Value::List(..) | Value::Tuple(_)))
    {
        return Err(FnError::Arg(i, what.into()));
    }
    // Lists whose element types meet make a list of that type; anything else a tuple.
    let all: Vec<usize> = (0..args.len()).collect();
    if args.iter().all(|a| matches!(a, Value::List(..)))
        && let Ok(ty) = common_elem(args, &all, what)
    {
        let mut out = Vec::new();
        for i in 0..args.len() {
            out.extend(converted(seq_arg(args, i)?, &ty, i)?);
        }
        return Ok(Value::List(ty, out));
    }
    let mut out = Vec::new();
    for i in 0..args.len() {
        out.extend(seq_arg(args, i)?.iter().cloned());
    }
    Ok(Value::Tuple(out))
}

/// `compact(list)`: the strings that are neither null nor empty.
pub(super) fn compact(args: &[Value]) -> FnResult {
    let items = converted(seq_arg(args, 0)?, &Type::String, 0)?;
    Ok(Value::List(
        Type::String,
        items
            .into_iter()
            .filter(|v| !v.is_null() && v.as_str() != Some(""))
            .collect(),
    ))
}

/// `matchkeys(values, keys, searchset)`: the values whose key (same index) is in `searchset`.
pub(super) fn matchkeys(args: &[Value]) -> FnResult {
    let values = seq_arg(args, 0)?;
    // The keys and the search set meet at their common type (`[1, 2]` and `["2"]` match).
    let ty = common_elem(args, &[1, 2], "list of any single type required")?;
    let keys = &converted(seq_arg(args, 1)?, &ty, 1)?;
    let search = &converted(seq_arg(args, 2)?, &ty, 2)?;
    if values.len() != keys.len() {
        return Err(FnError::Call(
            "length of keys and values should be equal".into(),
        ));
    }
    // One pass over each list (a pull request chooses their lengths), as the set functions do.
    let mut wanted = Members::default();
    for s in search {
        wanted.insert(s);
    }
    Ok(Value::Tuple(
        values
            .iter()
            .zip(keys)
            .filter(|(_, k)| wanted.contains(k))
            .map(|(v, _)| v.clone())
            .collect(),
    ))
}

/// `setunion`, `setintersection`, `setsubtract`: every argument converts to a set of the
/// arguments' common element type.
pub(super) fn setop(name: &str, args: &[Value]) -> FnResult {
    let all_args: Vec<usize> = (0..args.len()).collect();
    let ty = common_elem(args, &all_args, "a set is required")?;
    let mut all = Vec::new();
    for i in 0..args.len() {
        all.push(converted(seq_arg(args, i)?, &ty, i)?);
    }
    let mut acc: Vec<Value> = all[0].clone();
    for other in &all[1..] {
        if name == "setunion" {
            acc.extend(other.iter().cloned());
            continue;
        }
        let mut members = Members::default();
        for o in other {
            members.insert(o);
        }
        let keep = name == "setintersection";
        acc.retain(|v| members.contains(v) == keep);
    }
    Ok(Value::new_set(ty, acc))
}

/// The bytes `setproduct` would build: every element of argument `i` appears in
/// `product / len(i)` tuples, and there are `product` tuples.
fn setproduct_bytes(args: &[Value], room: u64) -> Result<u64, FnError> {
    let mut product: u64 = 1;
    for i in 0..args.len() {
        product = product.saturating_mul(seq_arg(args, i)?.len() as u64);
    }
    let mut total = product.saturating_mul(NODE_BYTES);
    for i in 0..args.len() {
        let s = seq_arg(args, i)?;
        if s.is_empty() {
            return Ok(0);
        }
        let bytes: u64 = s.iter().map(|v| measure(v, u64::MAX, room).bytes).sum();
        total = total.saturating_add((product / s.len() as u64).saturating_mul(bytes));
    }
    Ok(total)
}

/// `setproduct(sets...)`: every combination, each argument converted to a collection of its
/// own elements' common type; a set of tuples when every argument is a set, else a list.
pub(super) fn setproduct(args: &[Value], room: u64) -> FnResult {
    if args.len() < 2 {
        return Err(FnError::Call("at least two arguments are required".into()));
    }
    fits(setproduct_bytes(args, room)?, room)?;
    let mut acc: Vec<Vec<Value>> = vec![Vec::new()];
    for (i, arg) in args.iter().enumerate() {
        let ty =
            elem_type(arg).ok_or_else(|| FnError::Arg(i, "a set or a list is required".into()))?;
        let s = converted(seq_arg(args, i)?, &ty, i)?;
        if acc.len().saturating_mul(s.len()) > MAX_ELEMENTS {
            return Err(FnError::Call(
                "the result would have too many elements".into(),
            ));
        }
        acc = acc
            .into_iter()
            .flat_map(|prefix| {
                s.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push(v.clone());
                    p
                })
            })
            .collect();
    }
    let items: Vec<Value> = acc.into_iter().map(Value::Tuple).collect();
    if args.iter().all(|a| matches!(a, Value::Set(..))) {
        return Ok(Value::new_set(Type::Dynamic, items));
    }
    Ok(Value::List(Type::Dynamic, items))
}

/// Values seen so far, for membership tests in time linear in the list, not quadratic:
/// null, booleans, numbers and strings are hashed; other values (collections, unknowns,
/// sensitive values, NaN) are compared one by one with Terraform's equality, as before.
#[derive(Default)]
pub(super) struct Members {
    simple: std::collections::HashSet<Simple>,
    other: Vec<Value>,
}

/// A value whose equality is its hash key's.
#[derive(PartialEq, Eq, Hash)]
enum Simple {
    Null,
    Bool(bool),
    /// The bits of the number, with -0 as 0 (they are equal); never NaN.
    Number(u64),
    String(String),
}

impl Simple {
    fn of(v: &Value) -> Option<Self> {
        match v {
            Value::Null(_) => Some(Self::Null),
            Value::Bool(b) => Some(Self::Bool(*b)),
            Value::Number(n) if n.is_nan() => None,
            Value::Number(n) => Some(Self::Number(if *n == 0.0 { 0 } else { n.to_bits() })),
            Value::String(s) => Some(Self::String(s.clone())),
            _ => None,
        }
    }
}

impl Members {
    pub(super) fn contains(&self, v: &Value) -> bool {
        match Simple::of(v) {
            Some(key) => self.simple.contains(&key),
            None => self.other.iter().any(|o| ops_equals(o, v)),
        }
    }

    /// Adds `v`; `false` when an equal value was already there.
    pub(super) fn insert(&mut self, v: &Value) -> bool {
        match Simple::of(v) {
            Some(key) => self.simple.insert(key),
            None if self.other.iter().any(|o| ops_equals(o, v)) => false,
            None => {
                self.other.push(v.clone());
                true
            }
        }
    }
}
