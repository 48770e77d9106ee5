//! `jsondecode` and `yamldecode` into values directly, counting what they build against the
//! bytes left to the evaluation budget. YAML aliases repeat what they name, so a few bytes of
//! text can describe an enormous value: decoding stops as soon as it passes the budget, before
//! the value exists.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::FnError;
use crate::eval::{ENTRY_BYTES, NODE_BYTES};
use crate::value::Value;

/// Decodes JSON text, or says why not (`FnError::Budget` when it would not fit in `room`).
pub(super) fn json(text: &str, room: u64) -> Result<Value, FnError> {
    let left = Cell::new(room);
    let mut de = serde_json::Deserializer::from_str(text);
    let out = Bounded { left: &left }
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v));
    out.map_err(|e| failure(&left, "JSON", &e))
}

/// Decodes YAML text, or says why not (`FnError::Budget` when it would not fit in `room`).
pub(super) fn yaml(text: &str, room: u64) -> Result<Value, FnError> {
    let left = Cell::new(room);
    let out = Bounded { left: &left }.deserialize(serde_yaml_ng::Deserializer::from_str(text));
    out.map_err(|e| failure(&left, "YAML", &e))
}

/// The budget marks itself spent by going to `u64::MAX`: any other error is the text's.
fn failure(left: &Cell<u64>, what: &str, e: &dyn fmt::Display) -> FnError {
    if left.get() == SPENT {
        FnError::Budget
    } else {
        FnError::Arg(0, format!("invalid {what}: {e}"))
    }
}

const SPENT: u64 = u64::MAX;

/// Builds one value, spending from `left`.
#[derive(Clone, Copy)]
struct Bounded<'a> {
    left: &'a Cell<u64>,
}

impl Bounded<'_> {
    fn spend<E: de::Error>(&self, bytes: u64) -> Result<(), E> {
        let left = self.left.get();
        if left == SPENT || bytes > left {
            self.left.set(SPENT);
            return Err(E::custom("the decoded value is too large"));
        }
        self.left.set(left - bytes);
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        self.spend(NODE_BYTES)?;
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        self.spend(NODE_BYTES)?;
        Ok(Value::Number(n as f64))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        self.spend(NODE_BYTES)?;
        Ok(Value::Number(n as f64))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        self.spend(NODE_BYTES)?;
        Ok(Value::Number(n))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.spend(NODE_BYTES + s.len() as u64)?;
        Ok(Value::string(s))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.spend(NODE_BYTES + s.len() as u64)?;
        Ok(Value::String(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.spend(NODE_BYTES)?;
        Ok(Value::null())
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.spend(NODE_BYTES)?;
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            items.push(v);
        }
        Ok(Value::Tuple(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.spend(NODE_BYTES)?;
        let mut out = BTreeMap::new();
        while let Some(k) = map.next_key::<String>()? {
            self.spend(k.len() as u64 + ENTRY_BYTES)?;
            let v = map.next_value_seed(self)?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_matches_the_json_shape() {
        let v = json(r#"{"a": [1, "x", null, true]}"#, u64::MAX - 1).ok();
        assert_eq!(
            v.map(|v| v.to_string()).as_deref(),
            Some(r#"{a = [1, "x", null, true]}"#)
        );
    }

    #[test]
    fn yaml_aliases_that_multiply_stop_at_the_budget() {
        let mut doc = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..4 {
            let p = i - 1;
            doc.push_str(&format!(
                "l{i}: &l{i} [*{}, *{0}, *{0}, *{0}, *{0}, *{0}, *{0}, *{0}, *{0}, *{0}]\n",
                if p == 0 {
                    "a".to_owned()
                } else {
                    format!("l{p}")
                }
            ));
        }
        assert!(matches!(yaml(&doc, 1 << 16), Err(FnError::Budget)));
        assert!(yaml(&doc, 1 << 24).is_ok());
        assert!(matches!(json("[1, 2", 1 << 20), Err(FnError::Arg(..))));
    }
}
