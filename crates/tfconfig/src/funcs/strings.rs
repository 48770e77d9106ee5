//! String functions: case, trimming, splitting, joining, substrings, conversions.

use unicode_segmentation::UnicodeSegmentation as _;

use super::{FnError, FnResult, fits, int_arg, seq_arg, str_arg, string_arg};
use crate::eval::NODE_BYTES;
use crate::types::{Constraint, convert};
use crate::value::{Type, Value};

/// Most characters a string function may produce.
const MAX_STRING: usize = 16 * 1024 * 1024;

/// `room`: the bytes left to the evaluation budget; `split`, `indent`, `join` and `replace`
/// refuse a result that would not fit before building it.
pub(super) fn call(name: &str, args: &[Value], room: u64) -> Option<FnResult> {
    let r = match name {
        "lower" => string_arg(args, 0).map(|s| Value::String(simple_case(&s, false))),
        "upper" => string_arg(args, 0).map(|s| Value::String(simple_case(&s, true))),
        "title" => string_arg(args, 0).map(|s| Value::String(title(&s))),
        "trimspace" => string_arg(args, 0).map(|s| Value::string(s.trim())),
        "chomp" => string_arg(args, 0).map(|s| Value::string(s.trim_end_matches(['\n', '\r']))),
        // Reversed by grapheme cluster, so a combining accent stays on its letter.
        "strrev" => string_arg(args, 0).map(|s| Value::String(s.graphemes(true).rev().collect())),
        "trim" => two(args).map(|(s, cut)| Value::string(s.trim_matches(|c| cut.contains(c)))),
        "trimprefix" => {
            two(args).map(|(s, p)| Value::string(s.strip_prefix(p.as_str()).unwrap_or(&s)))
        }
        "trimsuffix" => {
            two(args).map(|(s, p)| Value::string(s.strip_suffix(p.as_str()).unwrap_or(&s)))
        }
        "startswith" => two(args).map(|(s, p)| Value::Bool(s.starts_with(&p))),
        "endswith" => two(args).map(|(s, p)| Value::Bool(s.ends_with(&p))),
        "strcontains" => two(args).map(|(s, p)| Value::Bool(s.contains(&p))),
        "indent" => indent(args, room),
        "split" => two(args).and_then(|(sep, s)| split(&sep, &s, room)),
        "join" => join(args, room),
        "replace" => replace(args, room),
        "substr" => substr(args),
        "tostring" => conv(args, &Constraint::String, "string"),
        "tonumber" => conv(args, &Constraint::Number, "number"),
        "tobool" => conv(args, &Constraint::Bool, "bool"),
        _ => return None,
    };
    Some(r)
}

/// Case mapping one character to one, as Go's `strings.ToUpper`/`ToLower` (and so Terraform)
/// do: a character whose full mapping is several (`ß` to `SS`) keeps itself going up, and
/// takes the first going down (`İ` to `i`).
fn simple_case(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            let mut mapped = if upper {
                c.to_uppercase().collect::<Vec<_>>()
            } else {
                c.to_lowercase().collect::<Vec<_>>()
            };
            match mapped.len() {
                1 => mapped.remove(0),
                _ if upper => c,
                _ => mapped.first().copied().unwrap_or(c),
            }
        })
        .collect()
}

fn two(args: &[Value]) -> Result<(String, String), FnError> {
    Ok((string_arg(args, 0)?, string_arg(args, 1)?))
}

fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut start = true;
    for c in s.chars() {
        if start && c.is_alphabetic() {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        start = !c.is_alphanumeric();
    }
    out
}

fn split(sep: &str, s: &str, room: u64) -> FnResult {
    if s.is_empty() {
        return Ok(Value::List(Type::String, Vec::new()));
    }
    let pieces = if sep.is_empty() {
        s.chars().count() + 2
    } else {
        s.matches(sep).count() + 1
    };
    fits(
        (pieces as u64).saturating_mul(NODE_BYTES) + s.len() as u64,
        room,
    )?;
    if sep.is_empty() {
        // Go's strings.Split with an empty separator: one piece per character.
        return Ok(Value::List(
            Type::String,
            s.chars().map(|c| Value::String(c.to_string())).collect(),
        ));
    }
    Ok(Value::List(
        Type::String,
        s.split(sep).map(Value::string).collect(),
    ))
}

fn indent(args: &[Value], room: u64) -> FnResult {
    let n = int_arg(args, 0)?;
    if !(0..=1024).contains(&n) {
        return Err(FnError::Arg(
            0,
            "indentation must be between 0 and 1024 spaces".into(),
        ));
    }
    let s = string_arg(args, 1)?;
    let lines = s.matches('\n').count();
    let total = s.len().saturating_add(lines.saturating_mul(n as usize));
    if total > MAX_STRING {
        return Err(too_long());
    }
    fits(total as u64, room)?;
    let pad = " ".repeat(n as usize);
    let out = s
        .split('\n')
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                l.to_owned()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    limit(out)
}

fn limit(s: String) -> FnResult {
    if s.len() > MAX_STRING {
        return Err(too_long());
    }
    Ok(Value::String(s))
}

fn too_long() -> FnError {
    FnError::Call(format!(
        "the result would be longer than {MAX_STRING} bytes"
    ))
}

fn join(args: &[Value], room: u64) -> FnResult {
    let sep = string_arg(args, 0)?;
    if args.len() < 2 {
        return Err(FnError::Call("at least one list is required".into()));
    }
    let mut parts = Vec::new();
    for i in 1..args.len() {
        for (j, v) in seq_arg(args, i)?.iter().enumerate() {
            match v {
                Value::Null(_) => {
                    return Err(FnError::Arg(
                        i,
                        format!("element {j} is null; cannot concatenate null values"),
                    ));
                }
                _ => parts.push(
                    string_arg(std::slice::from_ref(v), 0)
                        .map_err(|_| FnError::Arg(i, "list of string required".into()))?,
                ),
            }
        }
    }
    if parts.len() > 1 {
        let total: usize = parts.iter().map(String::len).sum::<usize>() + sep.len() * parts.len();
        if total > MAX_STRING {
            return Err(too_long());
        }
        fits(total as u64, room)?;
    }
    Ok(Value::String(parts.join(&sep)))
}

fn replace(args: &[Value], room: u64) -> FnResult {
    let s = string_arg(args, 0)?;
    let sub = string_arg(args, 1)?;
    let rep = string_arg(args, 2)?;
    let limit = usize::try_from(room).unwrap_or(usize::MAX).min(MAX_STRING);
    if sub.len() > 1 && sub.starts_with('/') && sub.ends_with('/') {
        return super::regex::replace_all(&s, &sub[1..sub.len() - 1], &rep, limit);
    }
    // An empty substring matches before every character and at the end, as in Go.
    let count = s.matches(sub.as_str()).count();
    let total = (s.len() - count * sub.len()).saturating_add(count.saturating_mul(rep.len()));
    if total > MAX_STRING {
        return Err(too_long());
    }
    fits(total as u64, room)?;
    Ok(Value::String(s.replace(&sub, &rep)))
}

fn substr(args: &[Value]) -> FnResult {
    let s = string_arg(args, 0)?;
    // Offsets and lengths count grapheme clusters, as cty's substr does.
    let chars: Vec<&str> = s.graphemes(true).collect();
    let len = chars.len() as i64;
    let mut off = int_arg(args, 1)?;
    let mut n = int_arg(args, 2)?;
    if off < 0 {
        // From the end, and no further back than the start (Terraform 1.15).
        off = (off + len).max(0);
    }
    if off > len {
        // Past the end there is nothing to take (Terraform answers "").
        return Ok(Value::String(String::new()));
    }
    if off < 0 {
        return Err(FnError::Arg(1, "offset out of range".into()));
    }
    if n < 0 || off + n > len {
        n = len - off;
    }
    Ok(Value::String(
        chars[off as usize..(off + n) as usize].concat(),
    ))
}

fn conv(args: &[Value], c: &Constraint, what: &str) -> FnResult {
    let v = args.first().cloned().unwrap_or_else(Value::null);
    if v.is_null() {
        return Ok(Value::Null(c.to_type()));
    }
    if !v.ty().is_primitive() {
        return Err(FnError::Arg(
            0,
            format!("cannot convert {} to {what}", v.ty().friendly()),
        ));
    }
    convert(v, c).map_err(|e| FnError::Arg(0, e.message()))
}

/// A string argument that must be a string (no conversion): used by the encoding family.
pub(super) fn strict(args: &[Value], i: usize) -> Result<&str, FnError> {
    str_arg(args, i)
}
