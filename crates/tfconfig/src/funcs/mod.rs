//! Terraform's built-in functions: arity checks, unknown and sensitive handling, and dispatch to
//! the string, collection, encoding, network and (sandboxed) file families.

mod args;
mod collections;
mod crypto;
mod datetime;
mod decode;
pub(crate) mod encoding;
pub mod file;
mod format;
mod gzip;
mod lazy;
mod net;
mod numbers;
mod regex;
mod sets;
mod strings;

use std::ops::Range;

pub use file::Sandbox;

pub(crate) use args::{int_arg, num_arg, seq_arg, str_arg, string_arg};
pub(crate) use lazy::call_lazy;

/// Converts decoded JSON to a value (objects to objects, arrays to tuples).
pub fn json_value(j: &serde_json::Value) -> Value {
    encoding::from_json(j)
}

use super::diag::Diagnostic;
use super::eval::Scope;
use super::value::{Type, Value};

/// Why a call failed: a bad argument (by position) or a failure of the call itself.
#[derive(Debug)]
pub(crate) enum FnError {
    Arg(usize, String),
    Call(String),
    /// A diagnostic from inside a template (`templatefile`), passed through as is.
    Diag(Box<Diagnostic>),
    /// The result would not fit in the bytes left to the evaluation budget.
    Budget,
}

/// [`FnError::Budget`] when making `bytes` more would not fit in `room`.
pub(crate) fn fits(bytes: u64, room: u64) -> Result<(), FnError> {
    if bytes > room {
        Err(FnError::Budget)
    } else {
        Ok(())
    }
}

pub(crate) type FnResult = Result<Value, FnError>;

/// Shape of a function: parameter names, whether the last one repeats, how it treats unknown
/// and sensitive arguments, and its result type when unknown.
struct Sig {
    params: &'static [&'static str],
    variadic: bool,
    /// Structural functions only look at the top level of their arguments, so nested unknowns
    /// and marks flow through them.
    structural: bool,
    ret: Type,
}

/// Every function atoll implements (each has a signature in `sig`; a unit test holds the two
/// together), for tests that call each one with edge-case arguments.
pub const NAMES: &[&str] = &[
    "length",
    "concat",
    "merge",
    "setunion",
    "setintersection",
    "setproduct",
    "coalescelist",
    "lookup",
    "element",
    "keys",
    "values",
    "tolist",
    "tomap",
    "reverse",
    "one",
    "flatten",
    "distinct",
    "toset",
    "compact",
    "transpose",
    "zipmap",
    "slice",
    "setsubtract",
    "contains",
    "index",
    "alltrue",
    "anytrue",
    "range",
    "sort",
    "sum",
    "max",
    "min",
    "abs",
    "ceil",
    "floor",
    "signum",
    "pow",
    "log",
    "parseint",
    "coalesce",
    "tostring",
    "tonumber",
    "tobool",
    "format",
    "formatlist",
    "join",
    "split",
    "replace",
    "substr",
    "lower",
    "upper",
    "title",
    "trimspace",
    "chomp",
    "strrev",
    "base64encode",
    "base64decode",
    "md5",
    "sha1",
    "sha256",
    "sha512",
    "base64sha256",
    "base64sha512",
    "urlencode",
    "jsonencode",
    "yamlencode",
    "textencodebase64",
    "dirname",
    "basename",
    "pathexpand",
    "abspath",
    "file",
    "filebase64",
    "filemd5",
    "filesha1",
    "filesha256",
    "filesha512",
    "filebase64sha256",
    "filebase64sha512",
    "cidrnetmask",
    "jsondecode",
    "yamldecode",
    "fileexists",
    "fileset",
    "templatefile",
    "trim",
    "trimprefix",
    "trimsuffix",
    "regex",
    "regexall",
    "startswith",
    "endswith",
    "strcontains",
    "indent",
    "cidrhost",
    "cidrsubnet",
    "cidrsubnets",
    "uuid",
    "timestamp",
    "plantimestamp",
    "sensitive",
    "nonsensitive",
    "issensitive",
    "ephemeralasnull",
    "formatdate",
    "timeadd",
    "timecmp",
    "chunklist",
    "matchkeys",
    "uuidv5",
    "textdecodebase64",
    "csvdecode",
    "rsadecrypt",
    "base64gzip",
    "bcrypt",
];

/// Functions whose arguments are expressions, not values: `try` and `can` evaluate theirs one
/// at a time, `convert` reads a type expression and `templatestring` a reference (see
/// `call_lazy`).
pub const LAZY: &[&str] = &["try", "can", "convert", "templatestring"];

/// Terraform's functions that atoll refuses by name, with the reason given to the user.
pub const REFUSED: &[(&str, &str)] = &[
    (
        "list",
        "the \"list\" function was deprecated in Terraform v0.12 and is no longer available; use tolist([ ... ]) syntax to write a literal list",
    ),
    (
        "map",
        "the \"map\" function was deprecated in Terraform v0.12 and is no longer available; use tomap({ ... }) syntax to write a literal map",
    ),
    (
        "type",
        "the \"type\" function is only available in the terraform console, not in a configuration",
    ),
];

/// A function's fixed parameter count and whether its last parameter repeats, or `None` for a
/// function atoll does not implement.
pub fn arity(name: &str) -> Option<(usize, bool)> {
    sig(name).map(|s| (s.params.len(), s.variadic))
}

fn sig(name: &str) -> Option<Sig> {
    use Type::{Bool as B, Dynamic as D, Number as N, String as S};
    let s = |params: &'static [&'static str], variadic: bool, structural: bool, ret: Type| {
        Some(Sig {
            params,
            variadic,
            structural,
            ret,
        })
    };
    match name {
        "length" => s(&["value"], false, true, N),
        "concat" | "merge" | "setunion" | "setintersection" | "setproduct" | "coalescelist" => {
            s(&["seqs"], true, true, D)
        }
        "lookup" => s(&["inputMap", "key", "default"], false, true, D),
        "element" => s(&["list", "index"], false, true, D),
        "keys" | "values" | "tolist" | "tomap" | "reverse" | "one" | "flatten" | "distinct"
        | "toset" | "compact" | "transpose" => s(&["value"], false, true, D),
        "zipmap" => s(&["keys", "values"], false, true, D),
        "slice" => s(&["list", "start_index", "end_index"], false, true, D),
        "setsubtract" => s(&["a", "b"], false, true, D),
        "contains" => s(&["list", "value"], false, false, B),
        "index" => s(&["list", "value"], false, false, N),
        "alltrue" | "anytrue" => s(&["list"], false, false, B),
        "range" => s(&["params"], true, false, D),
        "sort" => s(&["list"], false, false, D),
        "sum" => s(&["list"], false, false, N),
        "max" | "min" => s(&["numbers"], true, false, N),
        "abs" | "ceil" | "floor" | "signum" => s(&["num"], false, false, N),
        "pow" => s(&["num", "power"], false, false, N),
        "log" => s(&["num", "base"], false, false, N),
        "parseint" => s(&["number", "base"], false, false, N),
        "coalesce" => s(&["vals"], true, false, D),
        "tostring" => s(&["v"], false, false, S),
        "tonumber" => s(&["v"], false, false, N),
        "tobool" => s(&["v"], false, false, B),
        "format" => s(&["format", "args"], true, false, S),
        "formatlist" => s(&["format", "args"], true, false, D),
        "join" => s(&["separator", "lists"], true, false, S),
        "split" => s(&["separator", "str"], false, false, D),
        "replace" => s(&["str", "substr", "replace"], false, false, S),
        "substr" => s(&["str", "offset", "length"], false, false, S),
        "lower" | "upper" | "title" | "trimspace" | "chomp" | "strrev" | "base64encode"
        | "base64decode" | "md5" | "sha1" | "sha256" | "sha512" | "base64sha256"
        | "base64sha512" | "urlencode" | "jsonencode" | "yamlencode" => {
            s(&["str"], false, false, S)
        }
        "textencodebase64" | "textdecodebase64" => s(&["string", "encoding"], false, false, S),
        "csvdecode" => s(&["str"], false, false, D),
        "rsadecrypt" => s(&["ciphertext", "privatekey"], false, false, S),
        "base64gzip" => s(&["str"], false, false, S),
        "bcrypt" => s(&["str", "cost"], true, false, S),
        "dirname" | "basename" | "pathexpand" | "abspath" | "file" | "filebase64" | "filemd5"
        | "filesha1" | "filesha256" | "filesha512" | "filebase64sha256" | "filebase64sha512" => {
            s(&["path"], false, false, S)
        }
        "cidrnetmask" => s(&["prefix"], false, false, S),
        "jsondecode" | "yamldecode" => s(&["str"], false, false, D),
        "fileexists" => s(&["path"], false, false, B),
        "fileset" => s(&["path", "pattern"], false, false, D),
        "templatefile" => s(&["path", "vars"], false, false, S),
        "trim" | "trimprefix" | "trimsuffix" => s(&["str", "cutset"], false, false, S),
        "regex" => s(&["pattern", "string"], false, false, D),
        "regexall" => s(&["pattern", "string"], false, false, D),
        "startswith" | "endswith" | "strcontains" => s(&["str", "substr"], false, false, B),
        "indent" => s(&["spaces", "str"], false, false, S),
        "cidrhost" => s(&["prefix", "hostnum"], false, false, S),
        "cidrsubnet" => s(&["prefix", "newbits", "netnum"], false, false, S),
        "cidrsubnets" => s(&["prefix", "newbits"], true, false, D),
        "uuid" | "timestamp" | "plantimestamp" => s(&[], false, false, S),
        "sensitive" | "nonsensitive" | "ephemeralasnull" => s(&["value"], false, true, D),
        "issensitive" => s(&["value"], false, true, B),
        "formatdate" => s(&["format", "time"], false, false, S),
        "timeadd" => s(&["timestamp", "duration"], false, false, S),
        "timecmp" => s(&["timestamp_a", "timestamp_b"], false, false, N),
        "chunklist" => s(&["list", "size"], false, false, D),
        "matchkeys" => s(&["values", "keys", "searchset"], false, false, D),
        "uuidv5" => s(&["namespace", "name"], false, false, S),
        _ => None,
    }
}

fn arity_error(
    s: &Scope<'_>,
    name: &str,
    sig: &Sig,
    given: usize,
    range: Option<Range<usize>>,
) -> Diagnostic {
    let (summary, detail) = if given < sig.params.len() {
        let missing = sig.params.get(given).copied().unwrap_or("");
        (
            "Not enough function arguments",
            format!(
                "Function \"{name}\" expects {} argument(s). Missing value for \"{missing}\".",
                sig.params.len()
            ),
        )
    } else {
        (
            "Too many function arguments",
            format!(
                "Function \"{name}\" expects only {} argument(s).",
                sig.params.len()
            ),
        )
    };
    s.error(summary, detail, range)
}

/// Calls a function with evaluated arguments.
pub(crate) fn call(
    s: &Scope<'_>,
    name: &str,
    args: Vec<Value>,
    range: Option<Range<usize>>,
) -> Result<Value, Diagnostic> {
    let Some(sig) = sig(name) else {
        if let Some((_, why)) = REFUSED.iter().find(|(n, _)| *n == name) {
            return Err(s.error(
                "Error in function call",
                format!("Call to function \"{name}\" failed: {why}."),
                range,
            ));
        }
        return Err(s.error(
            "Call to unknown function",
            format!("There is no function named \"{name}\"."),
            range,
        ));
    };
    let min = match (sig.variadic, name) {
        // Terraform's concat and coalescelist need one list at least.
        (true, "concat" | "coalescelist") => 1,
        (true, _) => sig.params.len().saturating_sub(1),
        (false, "lookup") => 2,
        (false, _) => sig.params.len(),
    };
    if args.len() < min || (!sig.variadic && args.len() > sig.params.len()) {
        return Err(arity_error(s, name, &sig, args.len(), range));
    }
    if let Some(v) = special(name, &args) {
        return Ok(v);
    }
    let unknown = if sig.structural {
        args.iter().any(Value::is_unknown)
    } else {
        args.iter().any(Value::contains_unknown)
    };
    if unknown || matches!(name, "uuid" | "timestamp") {
        let marked = args.iter().any(Value::contains_sensitive);
        return Ok(Value::Unknown(sig.ret).mark(marked));
    }
    let secrets = sensitive_texts(&args);
    let (args, marked) = unmark_args(args, sig.structural);
    match dispatch(s, name, args) {
        Ok(v) => {
            s.charge_value(&v, range)?;
            Ok(v.normalized().mark(marked))
        }
        Err(e) => Err(call_error(s, name, &sig, e, &secrets, range)),
    }
}

/// The text of every string, number and bool under a sensitive mark in `args`: what an error
/// message must not repeat.
fn sensitive_texts(args: &[Value]) -> Vec<String> {
    fn leaves(v: &Value, under: bool, out: &mut Vec<String>) {
        match v {
            Value::Sensitive(inner) => leaves(inner, true, out),
            Value::String(t) if under => out.push(t.clone()),
            Value::Number(_) | Value::Bool(_) if under => out.push(v.to_string()),
            Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
                items.iter().for_each(|i| leaves(i, under, out));
            }
            Value::Map(_, m) | Value::Object(m) => m.values().for_each(|i| leaves(i, under, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if args.iter().any(Value::contains_sensitive) {
        args.iter().for_each(|a| leaves(a, false, &mut out));
    }
    out
}

/// Functions about marks, and `plantimestamp` (known during plan, unlike `timestamp`).
fn special(name: &str, args: &[Value]) -> Option<Value> {
    let first = || args.first().cloned().unwrap_or_else(Value::null);
    Some(match name {
        "sensitive" => first().mark(true),
        "nonsensitive" => first().deep_unmark(),
        // Only the value's own mark counts, not marks on its elements.
        "issensitive" => Value::Bool(args.first().is_some_and(|v| v.unmark().1)),
        "ephemeralasnull" => first(),
        "plantimestamp" => {
            let now = time::OffsetDateTime::now_utc()
                .replace_nanosecond(0)
                .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
            let fmt = time::format_description::well_known::Rfc3339;
            Value::String(now.format(&fmt).unwrap_or_default())
        }
        _ => return None,
    })
}

/// Removes marks before a call: the top level only for structural functions (nested marks
/// flow through them), deeply otherwise. Returns whether the result must be marked.
fn unmark_args(args: Vec<Value>, structural: bool) -> (Vec<Value>, bool) {
    if structural {
        let mut marked = false;
        let args = args
            .into_iter()
            .map(|a| {
                let (v, m) = a.into_unmarked();
                marked |= m;
                v
            })
            .collect();
        (args, marked)
    } else {
        let marked = args.iter().any(Value::contains_sensitive);
        (args.into_iter().map(Value::deep_unmark).collect(), marked)
    }
}

/// Terraform's diagnostics for a failed call; a sensitive argument's value is never repeated
/// (the reason is given with the value replaced).
fn call_error(
    s: &Scope<'_>,
    name: &str,
    sig: &Sig,
    e: FnError,
    secrets: &[String],
    range: Option<Range<usize>>,
) -> Diagnostic {
    let marked = !secrets.is_empty();
    match e {
        FnError::Arg(i, msg) => {
            let p = sig
                .params
                .get(i)
                .or(sig.params.last())
                .copied()
                .unwrap_or("value");
            let detail = if marked {
                format!(
                    "Invalid value for \"{p}\" parameter: {}.",
                    redact(&msg, secrets)
                )
            } else {
                format!("Invalid value for \"{p}\" parameter: {msg}.")
            };
            s.error("Invalid function argument", detail, range)
        }
        FnError::Diag(d) => *d,
        FnError::Budget => {
            // Spend what is left, so the evaluation stops here rather than failing per call.
            let _ = s.ctx.charge_parts(0, u64::MAX);
            s.spent(crate::eval::Spent::Bytes, range)
        }
        FnError::Call(msg) => {
            let msg = if marked { redact(&msg, secrets) } else { msg };
            s.error(
                "Error in function call",
                format!("Call to function \"{name}\" failed: {msg}."),
                range,
            )
        }
    }
}

/// `msg` with every sensitive value in it, quoted or bare, replaced by `(sensitive value)`; a
/// value too short to replace safely (under four characters) that still shows leaves only the
/// kind of failure.
fn redact(msg: &str, secrets: &[String]) -> String {
    let mut sorted: Vec<&String> = secrets.iter().filter(|t| !t.is_empty()).collect();
    sorted.sort_by_key(|t| std::cmp::Reverse(t.len()));
    let mut out = msg.to_owned();
    for t in &sorted {
        out = out.replace(&crate::value::quote(t), "(sensitive value)");
        if t.chars().count() >= 4 {
            out = out.replace(t.as_str(), "(sensitive value)");
        }
    }
    if sorted.iter().any(|t| out.contains(t.as_str())) {
        return "the argument is sensitive and the reason would show part of it".to_owned();
    }
    out
}

/// Runs a function. `room` (the bytes left to the budget) goes to every function that can
/// make much more than it is given, so it refuses before building what would not fit.
fn dispatch(s: &Scope<'_>, name: &str, args: Vec<Value>) -> FnResult {
    let room = s.ctx.room();
    if let Some(r) = strings::call(name, &args, room) {
        return r;
    }
    if let Some(r) = format::call(name, &args, room) {
        return r;
    }
    if let Some(r) = numbers::call(name, &args, room) {
        return r;
    }
    if let Some(r) = regex::call(name, &args, room) {
        return r;
    }
    if let Some(r) = encoding::call(name, &args, room) {
        return r;
    }
    if let Some(r) = gzip::call(name, &args, room) {
        return r;
    }
    if let Some(r) = crypto::call(name, &args) {
        return r;
    }
    if let Some(r) = net::call(name, &args) {
        return r;
    }
    if let Some(r) = datetime::call(name, &args) {
        return r;
    }
    if let Some(r) = file::call(s, name, &args) {
        return r;
    }
    collections::call(name, args, room)
        .unwrap_or_else(|| Err(FnError::Call(format!("function {name} is not available"))))
}

#[cfg(test)]
mod tests {
    use super::{LAZY, NAMES, REFUSED, sig};

    /// Every name of Terraform 1.15's function table (`internal/lang/functions.go` of v1.15.9:
    /// `baseFunctions`, and the `coreFuncs` entries `Scope.Functions` adds).
    const TERRAFORM_1_15: &[&str] = &[
        "abs",
        "abspath",
        "alltrue",
        "anytrue",
        "base64decode",
        "base64encode",
        "base64gzip",
        "base64sha256",
        "base64sha512",
        "basename",
        "bcrypt",
        "can",
        "ceil",
        "chomp",
        "chunklist",
        "cidrhost",
        "cidrnetmask",
        "cidrsubnet",
        "cidrsubnets",
        "coalesce",
        "coalescelist",
        "compact",
        "concat",
        "contains",
        "convert",
        "csvdecode",
        "dirname",
        "distinct",
        "element",
        "endswith",
        "ephemeralasnull",
        "file",
        "filebase64",
        "filebase64sha256",
        "filebase64sha512",
        "fileexists",
        "filemd5",
        "fileset",
        "filesha1",
        "filesha256",
        "filesha512",
        "flatten",
        "floor",
        "format",
        "formatdate",
        "formatlist",
        "indent",
        "index",
        "issensitive",
        "join",
        "jsondecode",
        "jsonencode",
        "keys",
        "length",
        "list",
        "log",
        "lookup",
        "lower",
        "map",
        "matchkeys",
        "max",
        "md5",
        "merge",
        "min",
        "nonsensitive",
        "one",
        "parseint",
        "pathexpand",
        "plantimestamp",
        "pow",
        "range",
        "regex",
        "regexall",
        "replace",
        "reverse",
        "rsadecrypt",
        "sensitive",
        "setintersection",
        "setproduct",
        "setsubtract",
        "setunion",
        "sha1",
        "sha256",
        "sha512",
        "signum",
        "slice",
        "sort",
        "split",
        "startswith",
        "strcontains",
        "strrev",
        "substr",
        "sum",
        "templatefile",
        "templatestring",
        "textdecodebase64",
        "textencodebase64",
        "timeadd",
        "timecmp",
        "timestamp",
        "title",
        "tobool",
        "tolist",
        "tomap",
        "tonumber",
        "toset",
        "tostring",
        "transpose",
        "trim",
        "trimprefix",
        "trimspace",
        "trimsuffix",
        "try",
        "type",
        "upper",
        "urlencode",
        "uuid",
        "uuidv5",
        "values",
        "yamldecode",
        "yamlencode",
        "zipmap",
    ];

    #[test]
    fn every_terraform_function_evaluates_or_is_refused_by_name_with_a_reason() {
        for name in TERRAFORM_1_15 {
            let refused = REFUSED.iter().find(|(n, _)| n == name);
            let implemented = sig(name).is_some() || LAZY.contains(name);
            assert!(
                implemented != refused.is_some(),
                "{name} must be implemented or refused, not both or neither"
            );
            if let Some((_, why)) = refused {
                let e = crate::evaluate_expression(&format!("{name}(1)"))
                    .expect_err("a refused function is an error");
                // The rendered diagnostic wraps its lines.
                let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(
                    words(&e).contains(&words(why)),
                    "{name} is refused without its reason: {e}"
                );
            }
        }
        for name in NAMES.iter().chain(LAZY) {
            assert!(TERRAFORM_1_15.contains(name), "{name} is not Terraform's");
        }
    }

    #[test]
    fn every_listed_function_has_a_signature() {
        for name in NAMES {
            assert!(sig(name).is_some(), "{name} is listed but has no signature");
        }
        let mut sorted = NAMES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), NAMES.len(), "a function is listed twice");
    }
}
