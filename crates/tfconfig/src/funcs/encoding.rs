//! Encoding and hashing: `jsonencode jsondecode yamlencode yamldecode base64* md5 sha*
//! urlencode`.

use std::collections::BTreeMap;

use base64::Engine as _;
use sha2::Digest as _;

use super::{FnError, FnResult, fits, strings::strict};
use crate::eval::measure;
use crate::value::{Value, format_number};

/// What encoding a value may make per byte the value occupies: escapes (`\u0000` for one
/// byte), indentation by depth in YAML, and the intermediate JSON tree.
const ENCODE_FACTOR: u64 = 12;

/// Refuses to encode a value whose text could not fit in `room`.
fn encodable(v: &Value, room: u64) -> Result<(), FnError> {
    let bytes = measure(v, u64::MAX, room).bytes;
    fits(bytes.saturating_mul(ENCODE_FACTOR), room)
}

/// `room`: the bytes left to the evaluation budget; encoding refuses what could not fit before
/// it starts, decoding stops as soon as it passes it.
pub(super) fn call(name: &str, args: &[Value], room: u64) -> Option<FnResult> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let r =
        match name {
            "jsonencode" => {
                encodable(&args[0], room).map(|()| Value::String(json_string(&args[0])))
            }
            "jsondecode" => strict(args, 0).and_then(|s| super::decode::json(s, room)),
            "yamlencode" => encodable(&args[0], room).map(|()| Value::String(yaml(&args[0]))),
            "yamldecode" => strict(args, 0).and_then(|s| super::decode::yaml(s, room)),
            "base64encode" => strict(args, 0).map(|s| Value::String(b64.encode(s))),
            "base64decode" => strict(args, 0).and_then(|s| {
                let bytes = b64
                    .decode(s)
                    .map_err(|_| FnError::Arg(0, "failed to decode base64 data".into()))?;
                String::from_utf8(bytes).map(Value::String).map_err(|_| {
                    FnError::Arg(
                        0,
                        "the result of decoding the provided string is not valid UTF-8".into(),
                    )
                })
            }),
            "md5" => {
                strict(args, 0).map(|s| Value::String(hex::encode(md5::Md5::digest(s.as_bytes()))))
            }
            "uuidv5" => uuidv5(args),
            "sha1" => strict(args, 0)
                .map(|s| Value::String(hex::encode(sha1::Sha1::digest(s.as_bytes())))),
            "sha256" => strict(args, 0)
                .map(|s| Value::String(hex::encode(sha2::Sha256::digest(s.as_bytes())))),
            "sha512" => strict(args, 0)
                .map(|s| Value::String(hex::encode(sha2::Sha512::digest(s.as_bytes())))),
            "base64sha256" => strict(args, 0)
                .map(|s| Value::String(b64.encode(sha2::Sha256::digest(s.as_bytes())))),
            "base64sha512" => strict(args, 0)
                .map(|s| Value::String(b64.encode(sha2::Sha512::digest(s.as_bytes())))),
            "urlencode" => strict(args, 0).map(|s| {
                Value::String(
                    percent_encoding::utf8_percent_encode(s, URL_SET)
                        .to_string()
                        .replace("%20", "+"),
                )
            }),
            "textencodebase64" => Err(FnError::Call(
                "textencodebase64 is not supported by atoll".into(),
            )),
            _ => return None,
        };
    Some(r)
}

const URL_SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Hashes bytes for the `file*` hash functions.
pub(crate) fn digest(name: &str, bytes: &[u8]) -> String {
    match name {
        "filemd5" => hex::encode(md5::Md5::digest(bytes)),
        "filesha1" => hex::encode(sha1::Sha1::digest(bytes)),
        "filesha512" => hex::encode(sha2::Sha512::digest(bytes)),
        _ => hex::encode(sha2::Sha256::digest(bytes)),
    }
}

fn to_json(v: &Value) -> serde_json::Value {
    v.to_json("(sensitive value)", "(known after apply)")
}

/// Terraform's `jsonencode`: compact, keys sorted, numbers written out in full as Terraform
/// writes them (`1e20` is `100000000000000000000`, `2e-7` is `0.0000002`), `<`, `>`, `&`,
/// U+2028 and U+2029 escaped.
pub(crate) fn json_string(v: &Value) -> String {
    let mut s = String::new();
    write_json(&to_json(v), &mut s);
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

fn write_json(j: &serde_json::Value, out: &mut String) {
    use serde_json::Value as J;
    match j {
        J::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => out.push_str(&format_number(f)),
            _ => out.push_str(&n.to_string()),
        },
        J::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        J::Object(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&J::String(k.clone()).to_string());
                out.push(':');
                write_json(v, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Converts decoded JSON to a value: arrays become tuples and objects objects.
pub(crate) fn from_json(j: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match j {
        J::Null => Value::null(),
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => Value::Number(n.as_f64().unwrap_or(0.0)),
        J::String(s) => Value::String(s.clone()),
        J::Array(items) => Value::Tuple(items.iter().map(from_json).collect()),
        J::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), from_json(v)))
                .collect::<BTreeMap<_, _>>(),
        ),
    }
}

/// Terraform's `yamlencode` style: double-quoted strings and keys, block style, trailing newline.
pub(crate) fn yaml(v: &Value) -> String {
    let mut out = String::new();
    yaml_node(v, 0, &mut out, false);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn yaml_scalar(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null(_) => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format_number(*n),
        Value::String(s) => serde_json::Value::String(s.clone()).to_string(),
        Value::Unknown(_) => "\"(known after apply)\"".into(),
        Value::Sensitive(_) => "\"(sensitive value)\"".into(),
        Value::List(_, i) | Value::Set(_, i) | Value::Tuple(i) if i.is_empty() => "[]".into(),
        Value::Map(_, m) | Value::Object(m) if m.is_empty() => "{}".into(),
        _ => return None,
    })
}

fn yaml_node(v: &Value, indent: usize, out: &mut String, inline_first: bool) {
    if let Some(s) = yaml_scalar(v) {
        out.push_str(&s);
        out.push('\n');
        return;
    }
    let pad = " ".repeat(indent);
    match v {
        Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 || !inline_first {
                    out.push_str(&pad);
                }
                out.push_str("- ");
                yaml_node(item, indent + 2, out, true);
            }
        }
        Value::Map(_, m) | Value::Object(m) => {
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 || !inline_first {
                    out.push_str(&pad);
                }
                out.push_str(&serde_json::Value::String(k.clone()).to_string());
                out.push(':');
                if yaml_scalar(item).is_some() {
                    out.push(' ');
                    yaml_node(item, indent + 2, out, false);
                } else {
                    out.push('\n');
                    let child =
                        if matches!(item, Value::List(..) | Value::Set(..) | Value::Tuple(_)) {
                            indent
                        } else {
                            indent + 2
                        };
                    yaml_node(item, child, out, false);
                }
            }
        }
        _ => {}
    }
}

/// `uuidv5(namespace, name)`: the name-based UUID (RFC 4122, SHA-1) of `name` in `namespace`
/// (`dns`, `url`, `oid`, `x500`, or a UUID).
fn uuidv5(args: &[Value]) -> FnResult {
    let namespace = super::string_arg(args, 0)?;
    let ns = match namespace.as_str() {
        "dns" => "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        "url" => "6ba7b811-9dad-11d1-80b4-00c04fd430c8",
        "oid" => "6ba7b812-9dad-11d1-80b4-00c04fd430c8",
        "x500" => "6ba7b814-9dad-11d1-80b4-00c04fd430c8",
        other => other,
    };
    let hex_digits: String = ns.chars().filter(|c| *c != '-').collect();
    let ns_bytes = hex::decode(&hex_digits)
        .ok()
        .filter(|b| b.len() == 16 && ns.len() == 36)
        .ok_or_else(|| {
            FnError::Arg(
                0,
                "must be dns, url, oid, x500 or a UUID like 6ba7b810-9dad-11d1-80b4-00c04fd430c8"
                    .into(),
            )
        })?;
    let name = super::string_arg(args, 1)?;
    let mut hash = sha1::Sha1::new();
    hash.update(&ns_bytes);
    hash.update(name.as_bytes());
    let mut b: Vec<u8> = hash.finalize()[..16].to_vec();
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    Ok(Value::String(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonencode_sorts_keys_and_escapes_html() {
        let v = Value::Object(BTreeMap::from([
            ("b".to_owned(), Value::string("<x>&")),
            ("a".to_owned(), Value::Number(1.0)),
        ]));
        assert_eq!(json_string(&v), r#"{"a":1,"b":"\u003cx\u003e\u0026"}"#);
    }

    #[test]
    fn yamlencode_quotes_strings_and_nests_blocks() {
        let v = Value::Object(BTreeMap::from([
            ("name".to_owned(), Value::string("web")),
            (
                "tags".to_owned(),
                Value::Tuple(vec![Value::string("a"), Value::string("b")]),
            ),
        ]));
        assert_eq!(yaml(&v), "\"name\": \"web\"\n\"tags\":\n- \"a\"\n- \"b\"\n");
    }
}
