//! Encoding and hashing: `jsonencode jsondecode yamlencode yamldecode base64* md5 sha*
//! urlencode`.

use std::collections::BTreeMap;

use base64::Engine as _;
use sha2::Digest as _;

use super::{FnError, FnResult, fits, string_arg, strings::strict};
use crate::eval::measure;
use crate::value::{Type, Value, format_number};

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
            "textencodebase64" => strict(args, 0).and_then(|text| {
                let bytes = text_encode(text, &super::string_arg(args, 1)?)?;
                Ok(Value::String(b64.encode(bytes)))
            }),
            "textdecodebase64" => strict(args, 0).and_then(|encoded| {
                let bytes = b64
                    .decode(encoded)
                    .map_err(|_| FnError::Arg(0, "failed to decode base64 data".into()))?;
                text_decode(&bytes, &super::string_arg(args, 1)?).map(Value::String)
            }),
            "csvdecode" => string_arg(args, 0).and_then(|text| csv(&text, room)),
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

/// The base64 of a digest, for `filebase64sha256` and `filebase64sha512`.
pub(crate) fn base64_digest(name: &str, bytes: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD;
    match name {
        "filebase64sha512" => b64.encode(sha2::Sha512::digest(bytes)),
        _ => b64.encode(sha2::Sha256::digest(bytes)),
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
    // go-yaml ends a document whose root is a plain (unquoted) scalar with `...`.
    if matches!(v, Value::Null(_) | Value::Bool(_) | Value::Number(_)) {
        out.push_str("...\n");
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

/// The character encodings `textencodebase64`/`textdecodebase64` take (IANA names, any case).
const ENCODINGS: &str = "UTF-8, UTF-16LE, UTF-16BE, ISO-8859-1";

fn text_encode(text: &str, encoding: &str) -> Result<Vec<u8>, FnError> {
    Ok(match encoding.to_ascii_uppercase().as_str() {
        "UTF-8" | "UTF8" => text.as_bytes().to_vec(),
        "UTF-16LE" => text.encode_utf16().flat_map(u16::to_le_bytes).collect(),
        "UTF-16BE" => text.encode_utf16().flat_map(u16::to_be_bytes).collect(),
        "ISO-8859-1" | "LATIN1" => text
            .chars()
            .map(|c| u8::try_from(u32::from(c)))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                FnError::Arg(
                    0,
                    "the string has characters ISO-8859-1 cannot encode".into(),
                )
            })?,
        other => return Err(unsupported_encoding(other)),
    })
}

fn text_decode(bytes: &[u8], encoding: &str) -> Result<String, FnError> {
    let utf16 = |le: bool| {
        if !bytes.len().is_multiple_of(2) {
            return Err(FnError::Arg(0, "odd number of bytes for UTF-16".into()));
        }
        let units: Vec<u16> = bytes
            .chunks(2)
            .map(|p| {
                if le {
                    u16::from_le_bytes([p[0], p[1]])
                } else {
                    u16::from_be_bytes([p[0], p[1]])
                }
            })
            .collect();
        String::from_utf16(&units).map_err(|_| FnError::Arg(0, "invalid UTF-16 text".into()))
    };
    match encoding.to_ascii_uppercase().as_str() {
        "UTF-8" | "UTF8" => String::from_utf8(bytes.to_vec())
            .map_err(|_| FnError::Arg(0, "the bytes are not valid UTF-8".into())),
        "UTF-16LE" => utf16(true),
        "UTF-16BE" => utf16(false),
        "ISO-8859-1" | "LATIN1" => Ok(bytes.iter().map(|b| char::from(*b)).collect()),
        other => Err(unsupported_encoding(other)),
    }
}

fn unsupported_encoding(name: &str) -> FnError {
    FnError::Arg(
        1,
        format!("atoll does not support the encoding {name:?}; it supports {ENCODINGS}"),
    )
}

/// `csvdecode`: RFC 4180 text (Go's `encoding/csv` rules) to a list of objects keyed by the
/// header row; every row must have the header's number of fields.
fn csv(text: &str, room: u64) -> FnResult {
    fits((text.len() as u64).saturating_mul(4), room)?;
    let rows = csv_records(text)?;
    let Some((header, body)) = rows.split_first() else {
        return Err(FnError::Call("missing header line".into()));
    };
    let mut out = Vec::with_capacity(body.len());
    for (i, row) in body.iter().enumerate() {
        if row.len() != header.len() {
            return Err(FnError::Call(format!(
                "record on line {}: wrong number of fields",
                i + 2
            )));
        }
        let object: BTreeMap<String, Value> = header
            .iter()
            .cloned()
            .zip(row.iter().map(|f| Value::String(f.clone())))
            .collect();
        out.push(Value::Object(object));
    }
    let elem = out.first().map_or(Type::Dynamic, Value::ty);
    Ok(Value::List(elem, out))
}

fn csv_records(text: &str) -> Result<Vec<Vec<String>>, FnError> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut at_field_start = true;
    let mut line = 1;
    while let Some(c) = chars.next() {
        match c {
            '"' if at_field_start => {
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(other) => {
                            if other == '\n' {
                                line += 1;
                            }
                            field.push(other);
                        }
                        None => {
                            return Err(FnError::Call(format!(
                                "parse error on line {line}: extraneous or missing \" in quoted-field"
                            )));
                        }
                    }
                }
                if !matches!(chars.peek(), None | Some(',' | '\n' | '\r')) {
                    return Err(FnError::Call(format!(
                        "parse error on line {line}: extraneous or missing \" in quoted-field"
                    )));
                }
                at_field_start = false;
            }
            '"' => {
                return Err(FnError::Call(format!(
                    "parse error on line {line}: bare \" in non-quoted-field"
                )));
            }
            ',' => {
                record.push(std::mem::take(&mut field));
                at_field_start = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                at_field_start = true;
                line += 1;
            }
            other => {
                field.push(other);
                at_field_start = false;
            }
        }
    }
    if !at_field_start || !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    Ok(records)
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
