//! Collection and number functions: `length concat merge lookup keys values flatten distinct
//! range zipmap set* coalesce tolist tomap toset` and friends.

use std::collections::BTreeMap;
use unicode_segmentation::UnicodeSegmentation as _;

use super::{FnError, FnResult, fits, int_arg, seq_arg, string_arg};
use crate::eval::{NODE_BYTES, measure, ops_equals};
use crate::types::{Constraint, convert, unify_values};
use crate::value::{Type, Value, compare};

/// Most elements `range()` and `setproduct()` may produce.
pub(crate) const MAX_ELEMENTS: usize = 1_000_000;

/// `room`: the bytes left to the evaluation budget; `setproduct` and `transpose`, whose results
/// repeat their input, refuse one that would not fit before building it.
pub(super) fn call(name: &str, args: Vec<Value>, room: u64) -> Option<FnResult> {
    let r = match name {
        "length" => length(&args),
        "concat" => concat(&args),
        "merge" => merge(args),
        "lookup" => lookup(&args),
        "element" => element(&args),
        "keys" => map_of(&args, 0).map(|m| {
            Value::List(
                Type::String,
                m.keys().map(|k| Value::string(k.clone())).collect(),
            )
        }),
        "values" => map_of(&args, 0).map(|m| Value::Tuple(m.values().cloned().collect())),
        "zipmap" => zipmap(&args),
        "chunklist" => chunklist(&args),
        "matchkeys" => matchkeys(&args),
        "reverse" => seq_arg(&args, 0).map(|s| Value::Tuple(s.iter().rev().cloned().collect())),
        "one" => one(&args),
        "flatten" => flatten(&args),
        "distinct" => seq_arg(&args, 0).map(|s| {
            let mut seen = Members::default();
            let mut out: Vec<Value> = Vec::new();
            for v in unified(s.to_vec()) {
                if seen.insert(&v) {
                    out.push(v);
                }
            }
            Value::Tuple(out)
        }),
        "compact" => seq_arg(&args, 0).map(|s| {
            Value::List(
                Type::String,
                s.iter()
                    .filter(|v| !v.is_null() && v.as_str() != Some(""))
                    .cloned()
                    .collect(),
            )
        }),
        "tolist" => to(&args, Constraint::List(Box::new(Constraint::Any)), "list"),
        "toset" => to(&args, Constraint::Set(Box::new(Constraint::Any)), "set"),
        "tomap" => to(&args, Constraint::Map(Box::new(Constraint::Any)), "map"),
        "slice" => slice(&args),
        "setunion" | "setintersection" | "setsubtract" => setop(name, &args),
        "setproduct" => setproduct(&args, room),
        "coalescelist" => args
            .iter()
            .find(|a| a.as_seq().is_some_and(|s| !s.is_empty()))
            .cloned()
            .ok_or_else(|| FnError::Call("no non-null arguments".into())),
        "contains" => {
            seq_arg(&args, 0).map(|s| Value::Bool(s.iter().any(|v| ops_equals(v, &args[1]))))
        }
        "index" => seq_arg(&args, 0).and_then(|s| {
            s.iter()
                .position(|v| ops_equals(v, &args[1]))
                .map(|i| Value::Number(i as f64))
                .ok_or_else(|| FnError::Call("item not found".into()))
        }),
        "alltrue" => {
            seq_arg(&args, 0).map(|s| Value::Bool(s.iter().all(|v| truthy(v) == Some(true))))
        }
        "anytrue" => {
            seq_arg(&args, 0).map(|s| Value::Bool(s.iter().any(|v| truthy(v) == Some(true))))
        }
        "sort" => sort(&args),
        "coalesce" => coalesce(&args),
        "transpose" => transpose(&args, room),
        _ => return None,
    };
    Some(r)
}

fn truthy(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" => Some(true),
        _ => Some(false),
    }
}

fn length(args: &[Value]) -> FnResult {
    match &args[0] {
        // Terraform counts grapheme clusters: `length("e\u{301}")` is 1.
        Value::String(s) => Ok(Value::Number(s.graphemes(true).count() as f64)),
        Value::List(_, v) | Value::Set(_, v) | Value::Tuple(v) => Ok(Value::Number(v.len() as f64)),
        Value::Map(_, m) | Value::Object(m) => Ok(Value::Number(m.len() as f64)),
        Value::Null(_) => Err(FnError::Arg(0, "argument must not be null".into())),
        _ => Err(FnError::Arg(
            0,
            "collection or structural type is required".into(),
        )),
    }
}

fn concat(args: &[Value]) -> FnResult {
    let mut out = Vec::new();
    for i in 0..args.len() {
        out.extend(
            seq_arg(args, i)
                .map_err(|_| FnError::Arg(i, "all arguments must be lists or tuples".into()))?
                .iter()
                .cloned(),
        );
    }
    Ok(Value::Tuple(out))
}

fn map_of(args: &[Value], i: usize) -> Result<&BTreeMap<String, Value>, FnError> {
    args.get(i)
        .and_then(Value::as_map)
        .ok_or_else(|| FnError::Arg(i, "map or object required".into()))
}

fn merge(args: Vec<Value>) -> FnResult {
    let mut out = BTreeMap::new();
    let mut all_maps = true;
    for (i, a) in args.into_iter().enumerate() {
        match a {
            Value::Null(_) => {}
            Value::Map(_, m) => out.extend(m),
            Value::Object(m) => {
                all_maps = false;
                out.extend(m);
            }
            _ => return Err(FnError::Arg(i, "arguments must be maps or objects".into())),
        }
    }
    if all_maps {
        return Ok(convert(
            Value::Object(out.clone()),
            &Constraint::Map(Box::new(Constraint::Any)),
        )
        .unwrap_or(Value::Object(out)));
    }
    Ok(Value::Object(out))
}

fn lookup(args: &[Value]) -> FnResult {
    let m = map_of(args, 0)?;
    let k = string_arg(args, 1)?;
    match (m.get(&k), args.get(2)) {
        (Some(v), _) => Ok(v.clone()),
        (None, Some(d)) => Ok(d.clone()),
        (None, None) => Err(FnError::Call(format!(
            "lookup failed to find key {}",
            crate::value::quote(&k)
        ))),
    }
}

fn element(args: &[Value]) -> FnResult {
    let s = seq_arg(args, 0)?;
    if s.is_empty() {
        return Err(FnError::Arg(
            0,
            "cannot use element function with an empty list".into(),
        ));
    }
    let i = int_arg(args, 1)?;
    // Negative indexes count from the end, wrapping like positive ones (Terraform 1.15).
    let len = i64::try_from(s.len()).unwrap_or(i64::MAX);
    let at = usize::try_from(i.rem_euclid(len)).unwrap_or(0);
    Ok(s[at].clone())
}

/// `chunklist(list, size)`: consecutive chunks of `size` elements (the last may be shorter);
/// size 0 is one chunk of everything.
fn chunklist(args: &[Value]) -> FnResult {
    let items = seq_arg(args, 0)?;
    let size = int_arg(args, 1)?;
    let size = usize::try_from(size)
        .map_err(|_| FnError::Arg(1, "the size argument must be positive".into()))?;
    if items.is_empty() {
        return Ok(Value::Tuple(Vec::new()));
    }
    let size = if size == 0 { items.len() } else { size };
    Ok(Value::Tuple(
        items
            .chunks(size)
            .map(|chunk| Value::Tuple(chunk.to_vec()))
            .collect(),
    ))
}

/// `matchkeys(values, keys, searchset)`: the values whose key (same index) is in `searchset`.
fn matchkeys(args: &[Value]) -> FnResult {
    let values = seq_arg(args, 0)?;
    let keys = seq_arg(args, 1)?;
    let search = seq_arg(args, 2)?;
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

fn zipmap(args: &[Value]) -> FnResult {
    let ks = seq_arg(args, 0)?;
    let vs = seq_arg(args, 1)?;
    if ks.len() != vs.len() {
        return Err(FnError::Call(format!(
            "number of keys ({}) does not match number of values ({})",
            ks.len(),
            vs.len()
        )));
    }
    let mut out = BTreeMap::new();
    for (k, v) in ks.iter().zip(vs) {
        out.insert(
            string_arg(std::slice::from_ref(k), 0)
                .map_err(|_| FnError::Arg(0, "keys must be strings".into()))?,
            v.clone(),
        );
    }
    Ok(Value::Object(out))
}

fn one(args: &[Value]) -> FnResult {
    let s = seq_arg(args, 0)?;
    match s {
        [] => Ok(Value::null()),
        [x] => Ok(x.clone()),
        _ => Err(FnError::Arg(
            0,
            "must be a list, set, or tuple value with either zero or one elements".into(),
        )),
    }
}

fn flatten(args: &[Value]) -> FnResult {
    fn go(v: &[Value], out: &mut Vec<Value>, depth: usize) -> Result<(), FnError> {
        if depth > 64 {
            return Err(FnError::Call(
                "lists are nested too deeply to flatten".into(),
            ));
        }
        for x in v {
            match x.as_seq() {
                Some(inner) if !matches!(x, Value::Sensitive(_)) => go(inner, out, depth + 1)?,
                _ => out.push(x.clone()),
            }
            if out.len() > MAX_ELEMENTS {
                return Err(FnError::Call(
                    "the result would have too many elements".into(),
                ));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    go(seq_arg(args, 0)?, &mut out, 0)?;
    Ok(Value::Tuple(out))
}

fn to(args: &[Value], c: Constraint, what: &str) -> FnResult {
    // `tolist([1, "a"])`: elements of different types convert to their common type first.
    let elements: Option<Vec<Value>> = match &args[0] {
        Value::Tuple(items) => Some(items.clone()),
        Value::Object(attrs) if what == "map" => Some(attrs.values().cloned().collect()),
        _ => None,
    };
    let c = match (elements.as_deref().and_then(unify_values), &c) {
        (Some(ty), Constraint::List(_)) => Constraint::List(Box::new(Constraint::from_type(&ty))),
        (Some(ty), Constraint::Set(_)) => Constraint::Set(Box::new(Constraint::from_type(&ty))),
        (Some(ty), Constraint::Map(_)) => Constraint::Map(Box::new(Constraint::from_type(&ty))),
        _ => c,
    };
    convert(args[0].clone(), &c).map_err(|e| {
        FnError::Arg(
            0,
            format!(
                "cannot convert {} to {what}: {}",
                args[0].ty().friendly(),
                e.message()
            ),
        )
    })
}

fn slice(args: &[Value]) -> FnResult {
    let s = seq_arg(args, 0)?;
    let a = int_arg(args, 1)?;
    let b = int_arg(args, 2)?;
    if a < 0 || b < a || b as usize > s.len() {
        return Err(FnError::Call(format!(
            "invalid slice indices {a}..{b} for a list of length {}",
            s.len()
        )));
    }
    Ok(Value::Tuple(s[a as usize..b as usize].to_vec()))
}

/// `values` converted to their common type (as they are when there is none).
fn unified(values: Vec<Value>) -> Vec<Value> {
    let Some(ty) = unify_values(&values) else {
        return values;
    };
    let c = Constraint::from_type(&ty);
    values
        .into_iter()
        .map(|v| convert(v.clone(), &c).unwrap_or(v))
        .collect()
}

/// `values` converted to the common type of every element of every sequence in `args`.
fn unified_with(values: Vec<Value>, args: &[Value]) -> Result<Vec<Value>, FnError> {
    let mut every = Vec::new();
    for i in 0..args.len() {
        every.extend(seq_arg(args, i)?.iter().cloned());
    }
    let Some(ty) = unify_values(&every) else {
        return Ok(values);
    };
    let c = Constraint::from_type(&ty);
    Ok(values
        .into_iter()
        .map(|v| convert(v.clone(), &c).unwrap_or(v))
        .collect())
}

/// `coalesce(...)`: the first argument that is not null or `""`, converted to the arguments'
/// common type (`coalesce(1, "a")` is `"1"`).
fn coalesce(args: &[Value]) -> FnResult {
    let first = args
        .iter()
        .find(|a| !a.is_null() && a.as_str() != Some(""))
        .cloned()
        .ok_or_else(|| FnError::Call("no non-null, non-empty-string arguments".into()))?;
    let ty = unify_values(args).ok_or_else(|| {
        FnError::Call("all arguments must have the same type (or convert to one)".into())
    })?;
    Ok(convert(first.clone(), &Constraint::from_type(&ty)).unwrap_or(first))
}

fn setop(name: &str, args: &[Value]) -> FnResult {
    // Every element of every argument converts to one type first (`["1"]` and `[1]` meet).
    let mut all = Vec::new();
    for i in 0..args.len() {
        all.push(unified_with(seq_arg(args, i)?.to_vec(), args)?);
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
    let elem = acc.first().map_or(Type::Dynamic, Value::ty);
    Ok(Value::new_set(elem, acc))
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

fn setproduct(args: &[Value], room: u64) -> FnResult {
    fits(setproduct_bytes(args, room)?, room)?;
    let mut acc: Vec<Vec<Value>> = vec![Vec::new()];
    for i in 0..args.len() {
        let s = seq_arg(args, i)?;
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
    Ok(Value::List(
        Type::Dynamic,
        acc.into_iter().map(Value::Tuple).collect(),
    ))
}

fn sort(args: &[Value]) -> FnResult {
    let s = seq_arg(args, 0)?;
    let mut strs: Vec<String> = s
        .iter()
        .map(|v| string_arg(std::slice::from_ref(v), 0))
        .collect::<Result<_, _>>()
        .map_err(|_| FnError::Arg(0, "list of string required".into()))?;
    strs.sort();
    Ok(Value::List(
        Type::String,
        strs.into_iter().map(Value::String).collect(),
    ))
}

fn transpose(args: &[Value], room: u64) -> FnResult {
    let m = map_of(args, 0)?;
    let repeated: u64 = m
        .iter()
        .map(|(k, v)| {
            let n = v.as_seq().map_or(0, <[Value]>::len) as u64;
            n.saturating_mul(k.len() as u64 + NODE_BYTES)
        })
        .fold(0, u64::saturating_add);
    fits(repeated, room)?;
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (k, v) in m {
        for x in v
            .as_seq()
            .ok_or_else(|| FnError::Arg(0, "map of list of string required".into()))?
        {
            let key = string_arg(std::slice::from_ref(x), 0)?;
            out.entry(key).or_default().push(Value::string(k.clone()));
        }
    }
    Ok(Value::Map(
        Type::List(Box::new(Type::String)),
        out.into_iter()
            .map(|(k, mut v)| {
                v.sort_by(compare);
                (k, Value::List(Type::String, v))
            })
            .collect(),
    ))
}

/// Values seen so far, for membership tests in time linear in the list, not quadratic:
/// null, booleans, numbers and strings are hashed; other values (collections, unknowns,
/// sensitive values, NaN) are compared one by one with Terraform's equality, as before.
#[derive(Default)]
struct Members {
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
    fn contains(&self, v: &Value) -> bool {
        match Simple::of(v) {
            Some(key) => self.simple.contains(&key),
            None => self.other.iter().any(|o| ops_equals(o, v)),
        }
    }

    /// Adds `v`; `false` when an equal value was already there.
    fn insert(&mut self, v: &Value) -> bool {
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
