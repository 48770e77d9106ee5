//! Strings and numbers as Terraform holds and prints them: strings NFC-normalised (cty's
//! `StringVal`), numbers printed without a fraction when integral, and no number that is not
//! finite reaching what it stores.

use super::Value;

/// The string as Terraform holds it: NFC-normalised, as cty normalises every string it makes
/// (`"e\u0301" == "é"`).
pub fn nfc(s: String) -> String {
    use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        s
    } else {
        s.nfc().collect()
    }
}

impl Value {
    /// The value with every string in it (keys too) NFC-normalised, see [`nfc`].
    pub fn normalized(self) -> Value {
        match self {
            Value::String(s) => Value::String(nfc(s)),
            Value::Sensitive(inner) => Value::Sensitive(Box::new(inner.normalized())),
            Value::List(t, items) => {
                Value::List(t, items.into_iter().map(Value::normalized).collect())
            }
            Value::Set(t, items) => {
                Value::new_set(t, items.into_iter().map(Value::normalized).collect())
            }
            Value::Tuple(items) => Value::Tuple(items.into_iter().map(Value::normalized).collect()),
            Value::Map(t, m) => Value::Map(
                t,
                m.into_iter()
                    .map(|(k, v)| (nfc(k), v.normalized()))
                    .collect(),
            ),
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(k, v)| (nfc(k), v.normalized()))
                    .collect(),
            ),
            v => v,
        }
    }
}

impl Value {
    /// True when a number in the value is not finite: Terraform computes with infinities but
    /// cannot store one (an output or an attribute holding one fails to serialise), and
    /// refuses what has no value at all (the sum of opposite infinities).
    pub fn contains_non_finite(&self) -> bool {
        match self.unmark().0 {
            Value::Number(n) => !n.is_finite(),
            Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
                items.iter().any(Value::contains_non_finite)
            }
            Value::Map(_, m) | Value::Object(m) => m.values().any(Value::contains_non_finite),
            _ => false,
        }
    }
}

pub(super) fn number_json(n: f64) -> serde_json::Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "checked integral and in range"
        )]
        let i = n as i64;
        serde_json::Value::from(i)
    } else {
        serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

/// Formats a number the way Terraform prints it (integers without a fraction).
pub fn format_number(n: f64) -> String {
    if n == 0.0 && n.is_sign_negative() {
        return "-0".to_owned();
    }
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "checked integral and in range"
        )]
        let i = n as i64;
        i.to_string()
    } else {
        format!("{n}")
    }
}
