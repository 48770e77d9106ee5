//! The providers' validators on one known configured value, in the plugin framework's words
//! (`stringvalidator`, `int64validator`, `listvalidator.ValueStringsAre`); an unknown or null
//! value passes, as it is checked once known.

use super::{Check, sleep_secs};
use crate::value::Value;

impl Check {
    /// The diagnostic's summary, as the framework's validator words it.
    pub(crate) fn summary(&self) -> &'static str {
        match self {
            Check::OneOf(_)
            | Check::Duration { .. }
            | Check::EachOneOf(_)
            | Check::Matches { .. }
            | Check::OneOfOrMatches { .. } => "Invalid Attribute Value Match",
            Check::Between { .. } | Check::AtLeast(_) => "Invalid Attribute Value",
            Check::EachNotEmpty => "Invalid Attribute Value Length",
        }
    }

    /// Why `v`, the value of the argument `name`, is refused, if it is.
    pub(crate) fn check(&self, name: &str, v: &Value) -> Result<(), String> {
        match (self, v.unmark().0) {
            (Check::OneOf(allowed), Value::String(got)) => one_of(name, allowed, got),
            (Check::Between { min, max, why }, Value::Number(got)) => {
                if got.fract() == 0.0 && (*min..=*max).contains(got) {
                    return Ok(());
                }
                let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
                Err(format!(
                    "Attribute {name} value must be a whole number between {min} and {max}, got: {got}{why}."
                ))
            }
            (Check::AtLeast(min), Value::Number(got)) => {
                if got.fract() == 0.0 && got >= min {
                    return Ok(());
                }
                Err(format!(
                    "Attribute {name} value must be at least {min}, got: {got}"
                ))
            }
            (Check::Duration { max_secs }, Value::String(got)) => duration(name, *max_secs, got),
            (Check::Matches { pattern, expected }, Value::String(got)) => {
                if pattern_matches(pattern, got) {
                    return Ok(());
                }
                Err(format!(
                    "Attribute {name} must be {expected}, got: {got:?}."
                ))
            }
            (Check::OneOfOrMatches { allowed, pattern }, Value::String(got)) => {
                if allowed.contains(&got.as_str()) || pattern_matches(pattern, got) {
                    return Ok(());
                }
                Err(format!(
                    "Attribute {name} value must be a known CPU model (like \"host\", \"x86-64-v2-AES\" or \"qemu64\") or a custom model named \"custom-<name>\"; got: {got:?}."
                ))
            }
            (Check::EachOneOf(allowed), Value::List(_, items)) => each_string(items, |i, got| {
                one_of(&format!("{name}[{i}]"), allowed, got)
            }),
            (Check::EachNotEmpty, Value::List(_, items)) => each_string(items, |i, got| {
                if got.is_empty() {
                    Err(format!(
                        "Attribute {name}[{i}] string length must be at least 1, got: 0"
                    ))
                } else {
                    Ok(())
                }
            }),
            _ => Ok(()),
        }
    }
}

/// Whether `text` matches a validator's pattern (anchored by the pattern itself).
fn pattern_matches(pattern: &str, text: &str) -> bool {
    regex_automata::meta::Regex::new(pattern).is_ok_and(|re| re.is_match(text))
}

fn one_of(name: &str, allowed: &[&str], got: &str) -> Result<(), String> {
    if allowed.contains(&got) {
        return Ok(());
    }
    let list: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
    Err(format!(
        "Attribute {name} value must be one of: {}; got: {got:?}.",
        list.join(", ")
    ))
}

/// Each known string element of a list, with its index.
fn each_string(
    items: &[Value],
    check: impl Fn(usize, &str) -> Result<(), String>,
) -> Result<(), String> {
    for (i, item) in items.iter().enumerate() {
        if let Value::String(got) = item.unmark().0 {
            check(i, got)?;
        }
    }
    Ok(())
}

fn duration(name: &str, max_secs: f64, got: &str) -> Result<(), String> {
    match sleep_secs(got) {
        None => Err(format!(
            "Attribute {name} must be a number immediately followed by ms (milliseconds), s \
             (seconds), m (minutes), or h (hours). For example, \"30s\" for 30 seconds., got: \
             {got}"
        )),
        Some(secs) if secs > max_secs => Err(format!(
            "Attribute {name} value must be at most {}m, got: {got} (atoll's bound: a pull \
             request chooses how long an apply waits)",
            max_secs / 60.0
        )),
        Some(_) => Ok(()),
    }
}
