//! Firewall rules of the cluster, a node, a guest or a security group: list, read, create
//! (inserted at the top, disabled unless `enable` is given), update, `moveto` and delete, with
//! `verify_rule`'s checks and words (first failing key as `400`).

use serde_json::{Value, json};

use super::addr;
use super::macros;
use super::spec::{self, DELETE_LIST, DIGEST, Field};
use super::{Entry, Firewall, FwConf, Scope, list_digest, render_list};
use crate::error::{ApiError, ApiResult};
use crate::routes::Params;

const LOG_LEVELS: &[&str] = &[
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug", "nolog",
];

/// `pos` (path).
pub(crate) const POS: Field = Field::int("pos", Some(0), None);

/// `$rule_properties` of pve-firewall.
const RULE_FIELDS: &[Field] = &[
    POS,
    DIGEST,
    Field::one_of("type", &["in", "out", "forward", "group"]),
    Field::str("action").pattern(addr::is_name).len(2, 20),
    Field::str("macro").max_len(128),
    Field::str("iface").format(addr::verify_iface).len(2, 20),
    Field::str("source").format(address_spec).max_len(512),
    Field::str("dest").format(address_spec).max_len(512),
    Field::str("proto").format(addr::verify_protocol),
    Field::int("enable", Some(0), None),
    Field::one_of("log", LOG_LEVELS),
    Field::str("sport").format(sport_spec),
    Field::str("dport").format(dport_spec),
    Field::str("comment"),
    Field::str("icmp-type").format(addr::verify_icmp_type),
];

/// The fields a rule keeps (`pos` and `digest` are request-only).
const STORED: &[&str] = &[
    "type",
    "action",
    "macro",
    "iface",
    "source",
    "dest",
    "proto",
    "enable",
    "log",
    "sport",
    "dport",
    "comment",
    "icmp-type",
];

fn address_spec(s: &str) -> Result<(), String> {
    addr::parse_address_list(s).map(|_| ())
}

fn sport_spec(s: &str) -> Result<(), String> {
    addr::parse_ports(s, false)
}

fn dport_spec(s: &str) -> Result<(), String> {
    addr::parse_ports(s, true)
}

fn rules_of<'a>(fw: &'a Firewall, scope: &Scope) -> ApiResult<&'a [Entry]> {
    match scope {
        Scope::Group(name) => fw
            .groups
            .get(name)
            .map(Vec::as_slice)
            .ok_or_else(|| ApiError::die(format!("no such security group '{name}'"))),
        _ => Ok(fw.conf(scope).map_or(&[][..], |c| c.rules.as_slice())),
    }
}

fn rules_mut<'a>(fw: &'a mut Firewall, scope: &Scope) -> ApiResult<&'a mut Vec<Entry>> {
    match scope {
        Scope::Group(name) => fw
            .groups
            .get_mut(name)
            .ok_or_else(|| ApiError::die(format!("no such security group '{name}'"))),
        _ => Ok(&mut fw.conf_mut(scope).rules),
    }
}

/// `GET .../rules`: every rule with its `pos` and the list's `digest`.
pub(crate) fn list(fw: &Firewall, scope: &Scope, params: &Params) -> ApiResult<Value> {
    spec::check(params, &[])?;
    let rules = rules_of(fw, scope)?;
    let mut list = render_list(rules);
    if let Value::Array(items) = &mut list {
        for (i, item) in items.iter_mut().enumerate() {
            item["pos"] = json!(i);
        }
    }
    Ok(list)
}

/// `GET .../rules/{pos}`.
pub(crate) fn get(fw: &Firewall, scope: &Scope, pos: usize, params: &Params) -> ApiResult<Value> {
    spec::check(params, &[])?;
    let rules = rules_of(fw, scope)?;
    let list = render_list(rules);
    let mut rule = list
        .get(pos)
        .cloned()
        .ok_or_else(|| ApiError::die(format!("no rule at position {pos}")))?;
    rule["pos"] = json!(pos);
    Ok(rule)
}

/// `copy_rule_data`: set fields, `''` and `-` delete one.
fn copy_rule_data(rule: &mut Entry, params: &spec::Checked) {
    for key in STORED {
        if let Some(v) = params.get(*key) {
            if v.is_empty() || v == "-" {
                rule.remove(*key);
            } else {
                rule.insert((*key).to_owned(), v.clone());
            }
        }
    }
}

/// `POST .../rules`: the new rule goes to position 0.
pub(crate) fn create(fw: &mut Firewall, scope: &Scope, params: &Params) -> ApiResult<()> {
    let mut fields = RULE_FIELDS.to_vec();
    for f in fields
        .iter_mut()
        .filter(|f| ["type", "action"].contains(&f.name))
    {
        *f = f.required();
    }
    let p = spec::check(params, &fields)?;
    rules_of(fw, scope)?;
    let mut rule = Entry::new();
    copy_rule_data(&mut rule, &p);
    verify(&mut rule, fw, scope)?;
    if !p.contains_key("enable") {
        rule.insert("enable".to_owned(), "0".to_owned());
    }
    let stored = as_stored(rule, scope);
    rules_mut(fw, scope)?.insert(0, stored);
    Ok(())
}

/// `PUT .../rules/{pos}`: `moveto` moves (other fields ignored), else fields and `delete`.
pub(crate) fn update(
    fw: &mut Firewall,
    scope: &Scope,
    pos: usize,
    params: &Params,
) -> ApiResult<()> {
    let mut fields = RULE_FIELDS.to_vec();
    fields.push(Field::int("moveto", Some(0), None));
    fields.push(DELETE_LIST);
    let p = spec::check(params, &fields)?;
    let rules = rules_of(fw, scope)?;
    spec::assert_digest(p.get("digest"), &list_digest(rules))?;
    let mut rule = rules
        .get(pos)
        .cloned()
        .ok_or_else(|| ApiError::die(format!("no rule at position {pos}")))?;
    let moveto = p.get("moveto").and_then(|m| m.parse::<usize>().ok());
    if let Some(to) = moveto.filter(|to| *to != pos) {
        let rules = rules_mut(fw, scope)?;
        let moved = rules.remove(pos);
        // PVE inserts before the rule that was at `to` (counted with the moved rule in place)
        let at = if to > pos { to - 1 } else { to };
        rules.insert(at.min(rules.len()), moved);
        return Ok(());
    }
    copy_rule_data(&mut rule, &p);
    if let Some(list) = p.get("delete") {
        delete_properties(&mut rule, list)?;
    }
    rule.remove("ipversion");
    verify(&mut rule, fw, scope)?;
    let stored = as_stored(rule, scope);
    rules_mut(fw, scope)?[pos] = stored;
    Ok(())
}

/// `delete_rule_properties`.
fn delete_properties(rule: &mut Entry, list: &str) -> ApiResult<()> {
    for opt in crate::propstr::split_list(list) {
        if !RULE_FIELDS.iter().any(|f| f.name == opt) {
            return Err(ApiError::param(
                "delete",
                format!("no such property ('{opt}')"),
            ));
        }
        if opt == "type" || opt == "action" {
            return Err(ApiError::param(
                "delete",
                format!("unable to delete required property '{opt}'"),
            ));
        }
        rule.remove(&opt);
    }
    Ok(())
}

/// `DELETE .../rules/{pos}`.
pub(crate) fn delete(
    fw: &mut Firewall,
    scope: &Scope,
    pos: usize,
    params: &Params,
) -> ApiResult<()> {
    let p = spec::check(params, &[DIGEST])?;
    let rules = rules_of(fw, scope)?;
    spec::assert_digest(p.get("digest"), &list_digest(rules))?;
    if pos >= rules.len() {
        return Err(ApiError::die(format!("no rule at position {pos}")));
    }
    rules_mut(fw, scope)?.remove(pos);
    Ok(())
}

/// The rule as PVE reads it back from the file it wrote.
fn as_stored(mut rule: Entry, scope: &Scope) -> Entry {
    let group = rule.get("type").is_some_and(|t| t == "group");
    let enabled = rule.get("enable").is_none_or(|e| e != "0");
    rule.insert(
        "enable".to_owned(),
        if enabled { "1" } else { "0" }.to_owned(),
    );
    if !allows_iface(scope) {
        rule.remove("iface");
    }
    if group {
        for key in [
            "source",
            "dest",
            "proto",
            "dport",
            "sport",
            "log",
            "icmp-type",
            "ipversion",
        ] {
            rule.remove(key);
        }
    }
    if rule.get("comment").is_some_and(|c| c.trim().is_empty()) {
        rule.remove("comment");
    } else if let Some(c) = rule.get_mut("comment") {
        *c = c.trim().to_owned();
    }
    rule
}

fn allows_iface(scope: &Scope) -> bool {
    !matches!(scope, Scope::Group(_))
}

fn valid_types(scope: &Scope) -> &'static [&'static str] {
    match scope {
        Scope::Guest(..) => &["in", "out", "group"],
        Scope::Group(_) => &["in", "out", "forward"],
        Scope::Cluster | Scope::Host(_) => &["in", "out", "forward", "group"],
    }
}

/// The cluster file and the scope's own file, as `verify_rule` gets them.
fn confs<'a>(fw: &'a Firewall, scope: &Scope) -> (Option<&'a FwConf>, Option<&'a FwConf>) {
    match scope {
        Scope::Cluster | Scope::Group(_) => (None, Some(&fw.cluster)),
        _ => (Some(&fw.cluster), fw.conf(scope)),
    }
}

fn fail(key: &str, msg: impl Into<String>) -> ApiError {
    ApiError::param(key, msg)
}

/// `verify_rule` without `noerr`: the first problem is the answer.
fn verify(rule: &mut Entry, fw: &Firewall, scope: &Scope) -> ApiResult<()> {
    let get = |k: &str| rule.get(k).cloned().filter(|v| !v.is_empty());
    let (ty, action) = (get("type"), get("action"));
    let ty = ty.ok_or_else(|| fail("type", "missing property"))?;
    let action = action.ok_or_else(|| fail("action", "missing property"))?;
    let env = scope.env();
    if !valid_types(scope).contains(&ty.as_str()) {
        return Err(fail(
            "type",
            format!("invalid rule type '{ty}' for rule_env '{env}'"),
        ));
    }
    if ty == "group" {
        if !addr::is_name(&action) {
            return Err(fail("action", "invalid characters in security group name"));
        }
    } else {
        if ty == "forward" && action == "REJECT" {
            return Err(fail(
                "action",
                "cannot define REJECT rules on forward chain",
            ));
        }
        if !["ACCEPT", "DROP", "REJECT"].contains(&action.as_str()) {
            return Err(fail("action", format!("unknown action '{action}'")));
        }
    }
    if let Some(iface) = get("iface") {
        if !allows_iface(scope) {
            return Err(fail("type", "parameter -i not allowed for this rule type"));
        }
        addr::verify_iface(&iface).map_err(|e| fail("iface", e))?;
        let net = iface
            .strip_prefix("net")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if matches!(scope, Scope::Guest(..)) && !net {
            return Err(fail(
                "iface",
                "value does not match the regex pattern 'net\\d+'",
            ));
        }
    }
    if let Some(name) = get("macro") {
        let m =
            macros::find(&name).ok_or_else(|| fail("macro", format!("unknown macro '{name}'")))?;
        rule.insert("macro".to_owned(), m.name.to_owned());
    }
    let version = verify_match(rule, fw, scope)?;
    if let Some(v) = version {
        rule.insert("ipversion".to_owned(), v.to_string());
    }
    if let Some(m) = rule.get("macro").and_then(|n| macros::find(n)) {
        check_macro(rule, m, version)?;
    }
    Ok(())
}

/// Protocol, ports, ICMP type and addresses; the rule's IP version.
fn verify_match(rule: &Entry, fw: &Firewall, scope: &Scope) -> ApiResult<Option<u8>> {
    let get = |k: &str| rule.get(k).cloned().filter(|v| !v.is_empty());
    let mut version: Option<u8> = None;
    let proto = get("proto").unwrap_or_default();
    let mut is_icmp = false;
    if !proto.is_empty() {
        addr::verify_protocol(&proto).map_err(|e| fail("proto", e))?;
        match proto.as_str() {
            "icmp" => version = Some(4),
            "icmpv6" | "ipv6-icmp" => version = Some(6),
            _ => {}
        }
        is_icmp = addr::is_icmp_proto(&proto);
    }
    for (key, dport) in [("dport", true), ("icmp-type", false), ("sport", false)] {
        let Some(value) = get(key) else { continue };
        if key == "icmp-type" {
            check_icmp_type(rule, &value, &proto, is_icmp)?;
            continue;
        }
        addr::parse_ports(&value, dport && is_icmp).map_err(|e| fail(key, e))?;
        if proto.is_empty() {
            return Err(fail(
                "proto",
                format!("missing property - '{key}' requires this property"),
            ));
        }
        let icmp_type_as_dport = dport && is_icmp;
        if !(addr::has_ports(&proto) || icmp_type_as_dport) {
            return Err(fail(
                key,
                format!("protocol '{proto}' does not support ports"),
            ));
        }
    }
    for key in ["source", "dest"] {
        let Some(value) = get(key) else { continue };
        let v = addr::parse_address_list(&value).map_err(|e| fail(key, e))?;
        set_version(&mut version, v).map_err(|e| fail(key, e))?;
        let alias_version = check_reference(fw, scope, key, &value)?;
        set_version(&mut version, alias_version).map_err(ApiError::die)?;
    }
    Ok(version)
}

fn set_version(current: &mut Option<u8>, new: Option<u8>) -> Result<(), String> {
    match (*current, new) {
        (Some(a), Some(b)) if a != b => {
            Err("detected mixed ipv4/ipv6 addresses in rule".to_owned())
        }
        (_, Some(b)) => {
            *current = Some(b);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_icmp_type(rule: &Entry, value: &str, proto: &str, is_icmp: bool) -> ApiResult<()> {
    if !is_icmp {
        return Err(fail(
            "proto",
            "missing property - 'icmp-type' requires this property",
        ));
    }
    if rule.get("dport").is_some_and(|d| !d.is_empty()) {
        return Err(fail(
            "icmp-type",
            "'icmp-type' cannot be specified together with 'dport'",
        ));
    }
    let known = if proto == "icmp" {
        addr::is_icmp_type(value)
    } else {
        addr::is_icmpv6_type(value)
    };
    if !known {
        return Err(fail(
            "icmp-type",
            format!("invalid icmp-type '{value}' for proto '{proto}'"),
        ));
    }
    Ok(())
}

/// An ipset (`+name`) or alias reference must name an existing object; an alias gives its
/// IP version.
fn check_reference(fw: &Firewall, scope: &Scope, key: &str, value: &str) -> ApiResult<Option<u8>> {
    let (cluster, local) = confs(fw, scope);
    if let Some(set) = value.strip_prefix('+') {
        let name = ["guest/", "dc/", "sdn/"]
            .iter()
            .find_map(|p| set.strip_prefix(p))
            .unwrap_or(set);
        if !addr::is_name(name) {
            return Err(fail(key, format!("invalid ipset name '{value}'")));
        }
        let exists = [cluster, local]
            .iter()
            .flatten()
            .any(|c| c.ipsets.contains_key(name));
        if !exists {
            return Err(fail(key, format!("no such ipset '{name}'")));
        }
        return Ok(None);
    }
    let Some((prefix, name)) = addr::alias_ref(value) else {
        return Ok(None);
    };
    let lc = name.to_lowercase();
    let found = |c: Option<&FwConf>| c.is_some_and(|c| c.aliases.contains_key(&lc));
    if !found(cluster) && !found(local) {
        return Err(fail(key, format!("no such alias '{value}'")));
    }
    // the version as PVE finds it re-reading the file (the cluster file is then its own
    // cluster configuration)
    let local = match scope {
        Scope::Cluster => Some(&fw.cluster),
        Scope::Group(_) => None,
        _ => fw.conf(scope),
    };
    let in_cluster = fw.cluster.aliases.get(&lc);
    let in_local = local.and_then(|c| c.aliases.get(&lc));
    let scoped = match prefix {
        "dc/" => in_cluster,
        "guest/" => in_local,
        _ => in_local.or(in_cluster),
    };
    Ok(scoped.and_then(|a| a.get("ipversion")?.parse().ok()))
}

/// `$apply_macro` with `verify`: a field the macro sets may not be set to another value.
fn check_macro(rule: &Entry, m: &macros::Macro, version: Option<u8>) -> ApiResult<()> {
    if version.is_some_and(|v| m.ipversion != 0 && m.ipversion != v) {
        return Ok(());
    }
    for (proto, dport, sport) in m.rules {
        for (key, fixed) in [("proto", proto), ("dport", dport), ("sport", sport)] {
            let given = rule.get(key).filter(|v| !v.is_empty());
            if let Some(given) = given
                && !fixed.is_empty()
                && given != fixed
            {
                return Err(fail(
                    key,
                    format!("parameter '{key}' already define in macro (value = '{fixed}')"),
                ));
            }
        }
    }
    Ok(())
}
