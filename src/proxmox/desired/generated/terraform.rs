//! `terraform_data`, as Terraform's built-in provider applies it
//! (`internal/builtin/providers/terraform/resource_data.go`): `id` a random UUID made once,
//! `output` the applied `input`. A changed `input` is an update in place that keeps `id`; a
//! changed `triggers_replace` replaces it. Nothing reaches Proxmox VE: the values live in
//! atoll's state, `input` and `output` in their stored form ([`tfconfig::Value::to_stored`]),
//! which keeps their type and their sensitive parts.

use std::collections::BTreeMap;

use tfconfig::Value;

pub(super) const COMPUTED: &[&str] = &["id", "output"];

/// What an update in place computes again: `output` follows `input`; `id` stays.
pub(super) const FOLLOWS_UPDATE: &[&str] = &["output"];

/// `output` is `input` (absent when `input` is null); an `input` holding a sensitive value
/// makes all of `output` sensitive, as the evaluator plans it (`tfconfig::schema::planned`).
pub(super) fn generate(
    arguments: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let mut values = BTreeMap::from([("id".to_owned(), uuid::Uuid::new_v4().to_string())]);
    if let Some(stored) = arguments.get("input") {
        let input = Value::from_stored(stored)?;
        let sensitive = input.contains_sensitive();
        let output = input
            .mark(sensitive)
            .to_stored()
            .ok_or("input holds a value that cannot be stored")?;
        values.insert("output".to_owned(), output);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_the_input_and_a_sensitive_part_makes_it_all_sensitive() {
        let input = Value::Tuple(vec![Value::Number(1.0), Value::string("pw").mark(true)]);
        let arguments = BTreeMap::from([("input".to_owned(), input.to_stored().expect("stored"))]);
        let values = generate(&arguments).expect("generated");
        let output = Value::from_stored(&values["output"]).expect("output");
        assert_eq!(output, input.mark(true));
        assert!(uuid::Uuid::parse_str(&values["id"]).is_ok());
        let plain = Value::List(tfconfig::Type::Number, vec![Value::Number(2.0)]);
        let arguments = BTreeMap::from([("input".to_owned(), plain.to_stored().expect("stored"))]);
        let output = generate(&arguments).expect("generated")["output"].clone();
        assert_eq!(Value::from_stored(&output), Ok(plain));
        assert!(
            !generate(&BTreeMap::new())
                .expect("no input")
                .contains_key("output")
        );
    }
}
