//! Regular-expression functions: `regex`, `regexall`, and `replace` with a `/pattern/` (RE2
//! syntax, which the Rust engine shares for everything Terraform users write).

use std::collections::BTreeMap;

use regex_automata::meta::Regex;
use regex_automata::util::captures::Captures;

use super::{FnError, FnResult, fits, string_arg};
use crate::eval::{NODE_BYTES, measure};
use crate::value::{Type, Value};

/// Largest compiled pattern accepted, in bytes of the engine's internal representation.
const MAX_PATTERN: usize = 1 << 20;

/// `room`: the bytes left to the evaluation budget (`regexall` stops once its matches pass it).
pub(super) fn call(name: &str, args: &[Value], room: u64) -> Option<FnResult> {
    let r = match name {
        "regex" => regex_one(args),
        "regexall" => regex_all(args, room),
        _ => return None,
    };
    Some(r)
}

fn compile(pattern: &str, arg: usize) -> Result<Regex, FnError> {
    Regex::builder()
        .configure(
            Regex::config()
                .nfa_size_limit(Some(MAX_PATTERN))
                .hybrid_cache_capacity(MAX_PATTERN),
        )
        // RE2 reads `\101` as an octal escape, as Go's regexp (and so Terraform) does.
        .syntax(regex_automata::util::syntax::Config::new().octal(true))
        .build(&quote_literals(pattern))
        .map_err(|e| FnError::Arg(arg, format!("invalid regexp pattern: {e}")))
}

/// RE2's `\Q...\E` (everything between is literal; a missing `\E` runs to the end), which the
/// Rust engine does not read, as escaped text it does.
fn quote_literals(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains("\\Q") {
        return pattern.into();
    }
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escaped = &rest[at..];
        let Some(next) = escaped[1..].chars().next() else {
            out.push('\\');
            rest = "";
            break;
        };
        if next == 'Q' {
            let body = &escaped[2..];
            let (literal, after) = body.split_once("\\E").unwrap_or((body, ""));
            for c in literal.chars() {
                if "\\.+*?()|[]{}^$#&-~".contains(c) {
                    out.push('\\');
                }
                out.push(c);
            }
            rest = after;
        } else {
            let len = 1 + next.len_utf8();
            out.push_str(&escaped[..len]);
            rest = &escaped[len..];
        }
    }
    out.push_str(rest);
    out.into()
}

/// The value one match produces: the matched text, a tuple of groups, or an object of
/// named groups.
fn match_value(re: &Regex, caps: &Captures, hay: &str) -> Result<Value, FnError> {
    let group = |i: usize| {
        caps.get_group(i).map_or_else(
            || Value::Null(Type::String),
            |s| Value::string(&hay[s.range()]),
        )
    };
    let names: Vec<Option<&str>> = re
        .group_info()
        .pattern_names(regex_automata::PatternID::ZERO)
        .collect();
    let groups = names.len().saturating_sub(1);
    if groups == 0 {
        return Ok(group(0));
    }
    let named = names.iter().skip(1).filter(|n| n.is_some()).count();
    if named == 0 {
        return Ok(Value::List(Type::String, (1..=groups).map(group).collect()));
    }
    if named != groups {
        return Err(FnError::Arg(
            0,
            "invalid regexp pattern: cannot mix both named and unnamed capture groups".into(),
        ));
    }
    let obj: BTreeMap<String, Value> = names
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, n)| n.map(|n| (n.to_owned(), group(i))))
        .collect();
    Ok(Value::Object(obj))
}

fn regex_one(args: &[Value]) -> FnResult {
    let pattern = string_arg(args, 0)?;
    let hay = string_arg(args, 1)?;
    let re = compile(&pattern, 0)?;
    let mut caps = re.create_captures();
    re.captures(hay.as_str(), &mut caps);
    if !caps.is_match() {
        return Err(FnError::Call(
            "pattern did not match any part of the given string".into(),
        ));
    }
    match_value(&re, &caps, &hay)
}

fn regex_all(args: &[Value], room: u64) -> FnResult {
    let pattern = string_arg(args, 0)?;
    let hay = string_arg(args, 1)?;
    let re = compile(&pattern, 0)?;
    let mut out = Vec::new();
    let mut used = NODE_BYTES;
    for caps in re.captures_iter(hay.as_str()) {
        let v = match_value(&re, &caps, &hay)?;
        used = used.saturating_add(measure(&v, u64::MAX, room).bytes);
        fits(used, room)?;
        out.push(v);
        if out.len() > super::collections::MAX_ELEMENTS {
            return Err(FnError::Call("the pattern matched too many times".into()));
        }
    }
    Ok(Value::Tuple(out))
}

/// `replace(str, "/re/", repl)`: every match replaced, `$1`, `${1}` and `${name}` expanded.
pub(super) fn replace_all(hay: &str, pattern: &str, repl: &str, limit: usize) -> FnResult {
    let re = compile(pattern, 1)?;
    let mut out = String::with_capacity(hay.len());
    let mut last = 0;
    for caps in re.captures_iter(hay) {
        let Some(m) = caps.get_match() else { continue };
        out.push_str(&hay[last..m.start()]);
        expand(&re, &caps, hay, repl, &mut out);
        last = m.end();
        if out.len() > limit {
            return Err(FnError::Call(format!(
                "the result would be longer than {limit} bytes"
            )));
        }
    }
    out.push_str(&hay[last..]);
    Ok(Value::String(out))
}

fn expand(re: &Regex, caps: &Captures, hay: &str, repl: &str, out: &mut String) {
    let mut rest = repl;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        rest = &rest[pos + 1..];
        let (name, after) = if let Some(inner) = rest.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], &inner[end + 1..]),
                None => ("", rest),
            }
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        if name.is_empty() {
            out.push('$');
            if let Some(r) = rest.strip_prefix('$') {
                rest = r;
            }
            continue;
        }
        let span = match name.parse::<usize>() {
            Ok(i) => caps.get_group(i),
            Err(_) => re
                .group_info()
                .to_index(regex_automata::PatternID::ZERO, name)
                .and_then(|i| caps.get_group(i)),
        };
        if let Some(s) = span {
            out.push_str(&hay[s.range()]);
        }
        rest = after;
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::string(v)
    }

    #[test]
    fn regex_returns_match_groups_or_named_object() {
        assert_eq!(
            regex_one(&[s("[a-z]+"), s("53453453.345345aaabbbccc23454")]).ok(),
            Some(s("aaabbbccc"))
        );
        let v = regex_one(&[s("(\\d\\d\\d\\d)-(\\d\\d)"), s("2019-02-01")])
            .ok()
            .map(|v| v.to_string());
        assert_eq!(v.as_deref(), Some(r#"["2019", "02"]"#));
        let v = regex_one(&[s("^(?P<user>[^@]+)@(?P<domain>.+)$"), s("me@example.com")])
            .ok()
            .map(|v| v.to_string());
        assert_eq!(
            v.as_deref(),
            Some(r#"{domain = "example.com", user = "me"}"#)
        );
        assert!(regex_one(&[s("x"), s("abc")]).is_err());
    }

    #[test]
    fn regexall_and_replace_cover_every_match() {
        let v = regex_all(&[s("[a-z]+"), s("1234abcd5678efgh9")], u64::MAX)
            .ok()
            .map(|v| v.to_string());
        assert_eq!(v.as_deref(), Some(r#"["abcd", "efgh"]"#));
        assert_eq!(
            replace_all("hello world", "w(or)ld", "${1}x-$1", 1 << 20).ok(),
            Some(s("hello orx-or"))
        );
    }
}
