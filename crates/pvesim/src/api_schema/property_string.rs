//! `PVE::JSONSchema::parse_property_string`: `k=v,k=v` with an optional default key, checked
//! sub-key by sub-key (`check_object` with the parameter's name as the path).

use std::collections::BTreeMap;

use super::{Name, Prop, Ty, add_error, check_value};

/// `parse_property_string` with the key's path (`net0`): syntax errors die at once; sub-key
/// errors are collected and raised as `format error` followed by one `path.key: msg` line each.
/// Booleans in property strings also accept `on`/`yes`/`true` (`parse_boolean`).
pub(crate) fn parse_props(
    props: &'static [Prop],
    path: &str,
    text: &str,
) -> Result<BTreeMap<String, String>, String> {
    let mut res = BTreeMap::new();
    let mut default_seen = false;
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        match part.split_once('=') {
            Some((k, v)) if !k.is_empty() && !v.is_empty() => {
                if res.contains_key(k) {
                    return Err(format!(
                        "duplicate key in comma-separated list property: {k}"
                    ));
                }
                let k = resolve_alias(props, k, &mut res)?;
                let Some(prop) = props.iter().find(|p| p.name.matches(k)) else {
                    return Err(format!("invalid key in comma-separated list property: {k}"));
                };
                let v = if prop.ty == Ty::Bool {
                    parse_boolean(v)
                } else {
                    v
                };
                res.insert(k.to_owned(), v.to_owned());
            }
            Some(_) => return Err("missing key in comma-separated list property".to_owned()),
            None => {
                let Some(Name::Exact(dk)) = props.iter().find(|p| p.default_key).map(|p| p.name)
                else {
                    return Err(
                        "value without key, but schema does not define a default key".to_owned(),
                    );
                };
                if default_seen || res.contains_key(dk) {
                    return Err(format!(
                        "duplicate key in comma-separated list property: {dk}"
                    ));
                }
                default_seen = true;
                res.insert(dk.to_owned(), part.to_owned());
            }
        }
    }
    let mut errors = BTreeMap::new();
    for prop in props {
        let Name::Exact(name) = prop.name else {
            continue;
        };
        let sub = format!("{path}.{name}");
        match res.get(name) {
            None if !prop.optional => {
                add_error(
                    &mut errors,
                    &sub,
                    "property is missing and it is not optional",
                );
            }
            None => {}
            Some(v) => check_value(prop, &sub, v, &mut errors),
        }
    }
    for (key, prop) in res.keys().filter_map(|k| Some((k, find(props, k)?))) {
        if let Some(req) = prop.requires.filter(|r| !res.contains_key(*r)) {
            let msg = format!("missing property required by '{path}.{key}'");
            add_error(&mut errors, &format!("{path}.{req}"), &msg);
        }
    }
    if errors.is_empty() {
        return Ok(res);
    }
    let lines: Vec<String> = errors.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    Err(format!("format error\n{}", lines.join("\n")))
}

fn find(props: &'static [Prop], key: &str) -> Option<&'static Prop> {
    props.iter().find(|p| p.name.matches(key))
}

/// `alias`/`keyAlias`: the key the value is stored under; a key alias records the key's name.
fn resolve_alias<'a>(
    props: &'static [Prop],
    k: &'a str,
    res: &mut BTreeMap<String, String>,
) -> Result<&'a str, String> {
    let Some((target, key_alias)) = props
        .iter()
        .find(|p| p.name.matches(k))
        .and_then(|p| p.alias)
    else {
        return Ok(k);
    };
    if let Some(ka) = key_alias {
        if res.contains_key(ka) {
            return Err(format!("key alias '{ka}' is already defined"));
        }
        res.insert(ka.to_owned(), k.to_owned());
    }
    if res.contains_key(target) {
        return Err(format!("key '{target}' is already defined (via alias)"));
    }
    Ok(target)
}

/// `PVE::JSONSchema::parse_boolean`, leaving anything else as it is.
fn parse_boolean(v: &str) -> &str {
    match v.to_ascii_lowercase().as_str() {
        "1" | "on" | "yes" | "true" => "1",
        "0" | "off" | "no" | "false" => "0",
        _ => v,
    }
}
