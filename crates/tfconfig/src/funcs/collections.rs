//! Collection and number functions: `length concat merge lookup keys values flatten distinct
//! range zipmap set* coalesce tolist tomap toset` and friends.

use std::collections::BTreeMap;
use unicode_segmentation::UnicodeSegmentation as _;

use super::{FnError, FnResult, fits, int_arg, seq_arg, sets, string_arg};
use crate::eval::{NODE_BYTES, ops_equals};
use crate::types::{Constraint, convert, unify_values};
use crate::value::{Type, Value, compare};

/// Most elements `range()` and `setproduct()` may produce.
pub(crate) const MAX_ELEMENTS: usize = 1_000_000;

/// `room`: the bytes left to the evaluation budget; `setproduct` and `transpose`, whose results
/// repeat their input, refuse one that would not fit before building it.
pub(super) fn call(name: &str, args: Vec<Value>, room: u64) -> Option<FnResult> {
    let r = match name {
        "length" => length(&args),
        "concat" => sets::concat(&args),
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
        "matchkeys" => sets::matchkeys(&args),
        "reverse" => seq_arg(&args, 0).map(|s| like(&args[0], s.iter().rev().cloned().collect())),
        "one" => one(&args),
        "flatten" => flatten(&args),
        "distinct" => seq_arg(&args, 0).map(|s| {
            let mut seen = sets::Members::default();
            let mut out: Vec<Value> = Vec::new();
            for v in unified(s.to_vec()) {
                if seen.insert(&v) {
                    out.push(v);
                }
            }
            like(&args[0], out)
        }),
        "compact" => sets::compact(&args),
        "tolist" => to(&args, Constraint::List(Box::new(Constraint::Any)), "list"),
        "toset" => to(&args, Constraint::Set(Box::new(Constraint::Any)), "set"),
        "tomap" => to(&args, Constraint::Map(Box::new(Constraint::Any)), "map"),
        "slice" => slice(&args),
        "setunion" | "setintersection" | "setsubtract" => sets::setop(name, &args),
        "setproduct" => sets::setproduct(&args, room),
        "coalescelist" => args
            .iter()
            .find(|a| a.as_seq().is_some_and(|s| !s.is_empty()))
            .cloned()
            .ok_or_else(|| FnError::Call("no non-null arguments".into())),
        "contains" if args[1].is_null() => Err(FnError::Arg(1, "argument must not be null".into())),
        "contains" => {
            seq_arg(&args, 0).map(|s| Value::Bool(s.iter().any(|v| ops_equals(v, &args[1]))))
        }
        "index" => seq_arg(&args, 0).and_then(|s| {
            s.iter()
                .position(|v| ops_equals(v, &args[1]))
                .map(|i| Value::Number(i as f64))
                .ok_or_else(|| FnError::Call("item not found".into()))
        }),
        "alltrue" => bools(&args).map(|b| Value::Bool(b.iter().all(|b| *b == Some(true)))),
        "anytrue" => bools(&args).map(|b| Value::Bool(b.contains(&Some(true)))),
        "sort" => sort(&args),
        "coalesce" => coalesce(&args),
        "transpose" => transpose(&args, room),
        _ => return None,
    };
    Some(r)
}

/// The elements of a list of bools (`None` for a null one), converted as Terraform converts
/// them (`"true"` is true; `0` is refused).
fn bools(args: &[Value]) -> Result<Vec<Option<bool>>, FnError> {
    seq_arg(args, 0)?
        .iter()
        .map(|v| match convert(v.clone(), &Constraint::Bool) {
            Ok(Value::Bool(b)) => Ok(Some(b)),
            Ok(_) => Ok(None),
            Err(e) => Err(FnError::Arg(0, e.message())),
        })
        .collect()
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
            // A null map or object adds nothing; a null of another type is refused.
            Value::Null(Type::Dynamic | Type::Map(_) | Type::Object(_)) => {}
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
    // A map's default converts to the map's element type (`lookup(m, k, -1)` is `"-1"`),
    // whether or not it is used.
    let default = match (&args[0], args.get(2)) {
        (Value::Map(t, _), Some(d)) if *t != Type::Dynamic => {
            Some(convert(d.clone(), &Constraint::from_type(t)).map_err(|_| {
                FnError::Arg(
                    2,
                    "the default value must have the same type as the map elements".into(),
                )
            })?)
        }
        (_, d) => d.cloned(),
    };
    match (m.get(&k), default) {
        (Some(v), _) => Ok(v.clone()),
        (None, Some(d)) => Ok(d),
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
    // A sensitive key marks the whole result, which is a map keyed by it.
    let mut marked = false;
    for (k, v) in ks.iter().zip(vs) {
        let (k, m) = k.unmark();
        marked |= m;
        out.insert(
            string_arg(std::slice::from_ref(k), 0)
                .map_err(|_| FnError::Arg(0, "keys must be strings".into()))?,
            v.clone(),
        );
    }
    Ok(Value::Object(out).mark(marked))
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
    /// `marked`: a sensitive list flattened into the result marks the result.
    fn go(
        v: &[Value],
        out: &mut Vec<Value>,
        depth: usize,
        marked: &mut bool,
    ) -> Result<(), FnError> {
        if depth > 64 {
            return Err(FnError::Call(
                "lists are nested too deeply to flatten".into(),
            ));
        }
        for x in v {
            let (inner, m) = x.unmark();
            match inner.as_seq() {
                Some(inner) => {
                    *marked |= m;
                    go(inner, out, depth + 1, marked)?;
                }
                None => out.push(x.clone()),
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
    let mut marked = false;
    go(seq_arg(args, 0)?, &mut out, 0, &mut marked)?;
    Ok(Value::Tuple(out).mark(marked))
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
    Ok(like(&args[0], s[a as usize..b as usize].to_vec()))
}

/// `items` as a list of `arg`'s element type when `arg` is a list or a set (so an empty one
/// keeps its type), else as a tuple.
fn like(arg: &Value, items: Vec<Value>) -> Value {
    match arg {
        Value::List(t, _) | Value::Set(t, _) => Value::List(t.clone(), items),
        _ => Value::Tuple(items),
    }
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
    // Any sensitive list or element marks the whole result.
    let mut marked = false;
    for (k, v) in m {
        let (v, m) = v.unmark();
        marked |= m;
        for x in v
            .as_seq()
            .ok_or_else(|| FnError::Arg(0, "map of list of string required".into()))?
        {
            let (x, m) = x.unmark();
            marked |= m;
            let key = string_arg(std::slice::from_ref(x), 0)?;
            out.entry(key).or_default().push(Value::string(k.clone()));
        }
    }
    let out = Value::Map(
        Type::List(Box::new(Type::String)),
        out.into_iter()
            .map(|(k, mut v)| {
                v.sort_by(compare);
                (k, Value::List(Type::String, v))
            })
            .collect(),
    );
    Ok(out.mark(marked))
}
