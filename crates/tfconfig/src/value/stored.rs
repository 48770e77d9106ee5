//! A value as text that keeps everything about it: its type (down to the element type of an
//! empty list and the type of a null), and which parts are sensitive. What atoll keeps in state
//! for an argument or attribute of any type (`terraform_data`'s `input` and `output`), so the
//! configuration reads back exactly the value it stored.

use super::Value;

impl Value {
    /// The stored text of a known value; `None` for a value holding an unknown (known only
    /// after apply) or a non-finite number (which Terraform refuses to store too).
    pub fn to_stored(&self) -> Option<String> {
        if self.contains_unknown() || self.contains_non_finite() {
            return None;
        }
        serde_json::to_string(self).ok()
    }

    /// The value [`Value::to_stored`] wrote.
    pub fn from_stored(text: &str) -> Result<Value, String> {
        serde_json::from_str(text).map_err(|e| format!("a stored value is corrupt: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::Type;
    use super::*;

    #[test]
    fn a_stored_value_comes_back_with_its_types_and_marks() {
        let value = Value::Object(BTreeMap::from([
            ("empty".to_owned(), Value::List(Type::Number, vec![])),
            ("none".to_owned(), Value::Null(Type::String)),
            (
                "pw".to_owned(),
                Value::Tuple(vec![
                    Value::string("hunter2").mark(true),
                    // Exact to the last bit (serde_json's `float_roundtrip`).
                    Value::Number(0.1 + 0.2),
                    Value::Number(2.225_073_858_507_201_4e-308),
                ]),
            ),
        ]));
        let text = value.to_stored().expect("storable");
        assert_eq!(Value::from_stored(&text), Ok(value));
    }

    #[test]
    fn unknown_and_infinite_values_are_not_stored() {
        assert_eq!(
            Value::List(Type::Dynamic, vec![Value::unknown()]).to_stored(),
            None
        );
        assert_eq!(Value::Number(f64::INFINITY).to_stored(), None);
    }
}
