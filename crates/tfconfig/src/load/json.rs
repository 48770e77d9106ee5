//! `.tf.json` files (Terraform's JSON configuration syntax), converted to native syntax text
//! and then loaded like any `.tf` file. Strings are templates (`"${var.x}"`); the arguments
//! Terraform reads as bare expressions in JSON (`type`, `depends_on`, `provider`,
//! `ignore_changes`, `replace_triggered_by`) become expressions; nested blocks are told apart
//! from attributes by the embedded resource schemas. Diagnostics quote the converted text.
//! Not supported: `dynamic` blocks and comments (`"//"` keys are skipped).

use std::fmt::Write as _;

use serde_json::Value as J;

use crate::schema::{self, BodySchema};

/// Deepest JSON nesting converted.
const MAX_DEPTH: usize = 64;

/// Converts a `.tf.json` document to native syntax, or says why it cannot.
pub(super) fn to_native(text: &str) -> Result<String, String> {
    let doc: J = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let J::Object(top) = doc else {
        return Err("the root of a .tf.json file must be a JSON object".into());
    };
    let mut out = String::new();
    for (kind, v) in &top {
        if kind == "//" {
            continue;
        }
        let labels = match kind.as_str() {
            "resource" | "data" => 2,
            "variable" | "output" | "module" | "provider" => 1,
            _ => 0,
        };
        emit_labeled(&mut out, kind, v, labels, &mut Vec::new())?;
    }
    Ok(out)
}

fn emit_labeled(
    out: &mut String,
    kind: &str,
    v: &J,
    labels: usize,
    got: &mut Vec<String>,
) -> Result<(), String> {
    if got.len() == labels {
        for body in as_bodies(v) {
            let schema = body_schema(kind, got);
            let header = std::iter::once(kind.to_owned())
                .chain(got.iter().map(|l| quote(l)))
                .collect::<Vec<_>>()
                .join(" ");
            let _ = writeln!(out, "{header} {{");
            emit_body(out, kind, body, schema.as_ref(), 1)?;
            out.push_str("}\n");
        }
        return Ok(());
    }
    let J::Object(m) = v else {
        return Err(format!(
            "a \"{kind}\" block needs {labels} label(s) given as nested JSON object keys"
        ));
    };
    for (label, inner) in m {
        got.push(label.clone());
        emit_labeled(out, kind, inner, labels, got)?;
        got.pop();
    }
    Ok(())
}

/// A block body may be an object or an array of objects (several blocks).
fn as_bodies(v: &J) -> Vec<&serde_json::Map<String, J>> {
    match v {
        J::Object(m) => vec![m],
        J::Array(items) => items.iter().filter_map(J::as_object).collect(),
        _ => Vec::new(),
    }
}

fn body_schema(kind: &str, labels: &[String]) -> Option<BodySchema> {
    match kind {
        "resource" => labels
            .first()
            .and_then(|t| schema::resource(t))
            .map(|s| s.body),
        _ => None,
    }
}

/// Nested block types of a body that are not in a resource schema.
fn meta_block(kind: &str, key: &str) -> Option<usize> {
    match (kind, key) {
        ("resource" | "data" | "module", "lifecycle") => Some(0),
        ("variable", "validation") => Some(0),
        ("terraform", "required_providers") => Some(0),
        ("terraform", "backend") => Some(1),
        // `cloud` has no label (Terraform's configschema for the terraform block).
        ("terraform", "cloud") | ("cloud", "workspaces") => Some(0),
        ("provider", "ssh") => Some(0),
        _ => None,
    }
}

fn expression_key(kind: &str, key: &str) -> bool {
    matches!(
        (kind, key),
        ("variable", "type")
            | (
                _,
                "depends_on" | "provider" | "ignore_changes" | "replace_triggered_by" | "providers"
            )
    )
}

fn emit_body(
    out: &mut String,
    kind: &str,
    body: &serde_json::Map<String, J>,
    schema: Option<&BodySchema>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err("the JSON document is nested too deeply".into());
    }
    let pad = "  ".repeat(depth);
    for (key, v) in body {
        if key == "//" {
            continue;
        }
        let block_schema = schema.and_then(|s| s.block(key));
        if let Some(bs) = block_schema {
            for inner in as_bodies(v) {
                let _ = writeln!(out, "{pad}{key} {{");
                emit_body(out, kind, inner, Some(&bs.body), depth + 1)?;
                let _ = writeln!(out, "{pad}}}");
            }
        } else if let Some(labels) = meta_block(kind, key) {
            let mut blocks = Vec::new();
            collect_labeled(v, labels, &mut Vec::new(), &mut blocks);
            for (ls, inner) in blocks {
                let header = std::iter::once(key.clone())
                    .chain(ls.iter().map(|l| quote(l)))
                    .collect::<Vec<_>>()
                    .join(" ");
                let _ = writeln!(out, "{pad}{header} {{");
                // a `cloud` block's own nested block (`workspaces`) is a block too
                let inner_kind = if key == "cloud" {
                    "cloud"
                } else {
                    "lifecycle-or-meta"
                };
                emit_body(out, inner_kind, inner, None, depth + 1)?;
                let _ = writeln!(out, "{pad}}}");
            }
        } else {
            let value = if expression_key(kind, key)
                || (kind == "lifecycle-or-meta" && key == "ignore_changes")
            {
                expression(v)
            } else {
                value(v, depth)?
            };
            let _ = writeln!(out, "{pad}{key} = {value}");
        }
    }
    Ok(())
}

fn collect_labeled<'a>(
    v: &'a J,
    labels: usize,
    got: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, &'a serde_json::Map<String, J>)>,
) {
    if got.len() == labels {
        for b in as_bodies(v) {
            out.push((got.clone(), b));
        }
        return;
    }
    if let J::Object(m) = v {
        for (label, inner) in m {
            got.push(label.clone());
            collect_labeled(inner, labels, got, out);
            got.pop();
        }
    }
}

/// A JSON string read as an expression (`"map(string)"`, `["aws_x.y"]`).
fn expression(v: &J) -> String {
    match v {
        J::String(s) => s.clone(),
        J::Array(items) => format!(
            "[{}]",
            items.iter().map(expression).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

/// A JSON value as a native expression; strings stay templates.
fn value(v: &J, depth: usize) -> Result<String, String> {
    if depth > MAX_DEPTH {
        return Err("the JSON document is nested too deeply".into());
    }
    Ok(match v {
        J::Null => "null".into(),
        J::Bool(b) => b.to_string(),
        J::Number(n) => n.to_string(),
        J::String(s) => template(s),
        J::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| value(i, depth + 1))
                .collect::<Result<Vec<_>, _>>()?
                .join(", ")
        ),
        J::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, i)| Ok(format!("{} = {}", quote(k), value(i, depth + 1)?)))
                .collect::<Result<_, String>>()?;
            format!("{{ {} }}", parts.join(", "))
        }
    })
}

/// A quoted native string that keeps `${...}` and `%{...}` sequences as template syntax.
fn template(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A literal string (labels and keys): template sequences escaped.
fn quote(s: &str) -> String {
    template(&s.replace("${", "$${").replace("%{", "%%{"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_blocks_become_native_syntax_with_schema_blocks() {
        let native = to_native(
            r#"{"variable": {"node": {"type": "string", "default": "pve"}},
                "resource": {"proxmox_virtual_environment_container": {"web": {
                    "node_name": "${var.node}", "cpu": {"cores": 2},
                    "depends_on": ["random_string.x"], "lifecycle": {"ignore_changes": ["tags"]}}}}}"#,
        )
        .expect("converts");
        assert!(
            native.contains("variable \"node\" {\n  default = \"pve\"\n  type = string\n}"),
            "{native}"
        );
        assert!(native.contains("  node_name = \"${var.node}\""), "{native}");
        assert!(native.contains("  cpu {\n    cores = 2\n  }"), "{native}");
        assert!(
            native.contains("  depends_on = [random_string.x]"),
            "{native}"
        );
        assert!(
            native.contains("  lifecycle {\n    ignore_changes = [tags]\n  }"),
            "{native}"
        );
        assert!(hcl_edit::parser::parse_body(&native).is_ok(), "{native}");
    }
}
