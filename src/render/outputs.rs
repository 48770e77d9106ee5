//! Root module outputs as Terraform prints them: the `Outputs:` block after an apply and
//! `atoll output` (`name = value`, collections over several lines, a sensitive output as
//! `<sensitive>`), and `atoll output --json` (`{"name": {"sensitive": false, "value": ...}}`).
//! A sensitive value is never printed, not even by name or as JSON: that is atoll's rule where
//! Terraform's `output NAME` and `-json` would show it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use tfconfig::value::quote;
use tfconfig::{OutputValue, Value};

/// What an unknown value reads as: a computed attribute atoll does not learn from Proxmox.
const UNKNOWN: &str = "(known after apply)";

/// `name = value` per output, in name order.
pub fn outputs_text(outputs: &BTreeMap<String, OutputValue>) -> String {
    let mut out = String::new();
    for (name, output) in outputs {
        let _ = writeln!(out, "{name} = {}", output_value_text(output));
    }
    out
}

/// [`outputs_text`] for a pull request comment: at most `max_chars` characters, cut at a line,
/// with a last line saying how much was left out (an output's size is the configuration's
/// choice; the comment's is the forge's).
pub fn outputs_text_capped(outputs: &BTreeMap<String, OutputValue>, max_chars: usize) -> String {
    let text = outputs_text(outputs);
    if text.chars().count() <= max_chars {
        return text;
    }
    let mut kept = String::new();
    for line in text.split_inclusive('\n') {
        if kept.chars().count() + line.chars().count() > max_chars {
            break;
        }
        kept.push_str(line);
    }
    let left = text.chars().count() - kept.chars().count();
    let _ = writeln!(
        kept,
        "... ({left} more characters of outputs not shown here; `atoll output` prints them all)"
    );
    kept
}

/// One output's value as `atoll output NAME` prints it.
pub fn output_value_text(output: &OutputValue) -> String {
    if output.sensitive {
        return "<sensitive>".to_owned();
    }
    let mut out = String::new();
    write_value(&output.value, 0, &mut out);
    out
}

/// `{"name": {"sensitive": bool, "value": ...}}`; a sensitive output has no `value`.
pub fn outputs_json(outputs: &BTreeMap<String, OutputValue>) -> serde_json::Value {
    let entries = outputs.iter().map(|(name, o)| {
        let mut entry = serde_json::json!({ "sensitive": o.sensitive });
        if !o.sensitive {
            entry["value"] = o.value.to_json("(sensitive value)", UNKNOWN);
        }
        (name.clone(), entry)
    });
    serde_json::Value::Object(entries.collect())
}

fn write_value(v: &Value, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth + 1);
    let close = "  ".repeat(depth);
    match v {
        Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) if !items.is_empty() => {
            out.push_str("[\n");
            for item in items {
                out.push_str(&pad);
                write_value(item, depth + 1, out);
                out.push_str(",\n");
            }
            let _ = write!(out, "{close}]");
        }
        Value::Map(_, m) | Value::Object(m) if !m.is_empty() => {
            out.push_str("{\n");
            for (k, item) in m {
                let _ = write!(out, "{pad}{} = ", quote(k));
                write_value(item, depth + 1, out);
                out.push('\n');
            }
            let _ = write!(out, "{close}}}");
        }
        Value::List(..) | Value::Set(..) | Value::Tuple(_) => out.push_str("[]"),
        Value::Map(..) | Value::Object(_) => out.push_str("{}"),
        Value::Unknown(_) => out.push_str(UNKNOWN),
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// What `atoll apply` says of `check` blocks once it has applied: the failed assertions
/// evaluated again with the new state, as Terraform prints them after its apply, and how many
/// still read a value only Proxmox VE knows (atoll does not read them back), so were not
/// checked.
pub fn checks_after_apply(warnings: &[String]) -> String {
    let mut out = String::new();
    let mut unchecked = 0;
    for warning in warnings {
        if warning.contains("Warning: Check block assertion known after apply") {
            unchecked += 1;
        } else if warning.contains("Warning: Check block assertion failed") {
            out.push('\n');
            out.push_str(warning);
            if !warning.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    if unchecked > 0 {
        let _ = writeln!(
            out,
            "\nNote: {unchecked} check assertion(s) read values that atoll does not know even \
             after this apply (Proxmox VE computes them and atoll does not read them back), so \
             they were not checked."
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(value: Value, sensitive: bool) -> OutputValue {
        OutputValue { value, sensitive }
    }

    #[test]
    fn collections_print_over_several_lines_and_secrets_never() {
        let list = Value::Tuple(vec![Value::String("a".into()), Value::Number(2.0)]);
        let mut object = BTreeMap::new();
        object.insert("ip".to_owned(), Value::String("10.0.0.5".into()));
        object.insert("tags".to_owned(), Value::Tuple(vec![]));
        let outputs = BTreeMap::from([
            ("ids".to_owned(), output(list, false)),
            ("guest".to_owned(), output(Value::Object(object), false)),
            (
                "password".to_owned(),
                output(Value::String("hunter2".into()), true),
            ),
        ]);
        let text = outputs_text(&outputs);
        assert_eq!(
            text,
            "guest = {\n  \"ip\" = \"10.0.0.5\"\n  \"tags\" = []\n}\nids = [\n  \"a\",\n  2,\n]\npassword = <sensitive>\n"
        );
        let json = outputs_json(&outputs).to_string();
        assert!(!json.contains("hunter2") && !text.contains("hunter2"));
        assert_eq!(outputs_json(&outputs)["ids"]["value"][1], 2.0);
        let capped = outputs_text_capped(&outputs, 40);
        assert!(capped.starts_with("guest = {\n"), "{capped}");
        assert!(
            capped.contains("more characters of outputs not shown"),
            "{capped}"
        );
        assert_eq!(outputs_text_capped(&outputs, 10_000), text);
    }
}
