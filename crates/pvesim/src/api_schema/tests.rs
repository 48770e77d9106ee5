//! The checker against PVE's messages (pve-common `src/PVE/JSONSchema.pm`).

use super::*;
use crate::routes::Params;

fn params(pairs: &[(&str, &str)]) -> Params {
    let mut p = Params::default();
    for (k, v) in pairs {
        p.0.entry((*k).to_owned())
            .or_default()
            .push((*v).to_owned());
    }
    p
}

fn errors(schema: &Schema, pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    schema
        .validate(&params(pairs))
        .err()
        .and_then(|e| e.errors)
        .unwrap_or_default()
}

#[test]
fn booleans_are_only_one_or_zero_at_the_top_level() {
    let e = errors(
        &lxc::CONFIG_PUT,
        &[("node", "pve"), ("vmid", "100"), ("onboot", "true")],
    );
    assert_eq!(e["onboot"], "type check ('boolean') failed - got 'true'");
}

#[test]
fn property_string_booleans_accept_parse_boolean_spellings() {
    assert!(parse_props(lxc::FEATURES, "features", "nesting=true,keyctl=on").is_ok());
    assert_eq!(
        parse_props(lxc::FEATURES, "features", "nesting=abc"),
        Err("format error\nfeatures.nesting: type check ('boolean') failed - got 'abc'".to_owned())
    );
}

#[test]
fn vmid_format_is_checked_before_its_minimum() {
    let e = errors(&lxc::GUEST, &[("node", "pve"), ("vmid", "99")]);
    assert_eq!(
        e["vmid"],
        "invalid format - value does not look like a valid VM ID"
    );
    let e = errors(&lxc::GUEST, &[("node", "pve"), ("vmid", "abc")]);
    assert_eq!(e["vmid"], "type check ('integer') failed - got 'abc'");
}

#[test]
fn net_sub_key_errors_are_listed_under_the_key_path() {
    let e = parse_props(lxc::NET, "net0", "name=eth0,ip=300.1.1.1/24,rate=fast");
    assert_eq!(
        e,
        Err("format error\nnet0.ip: invalid format - value does not look like a valid ipv4 network configuration\nnet0.rate: type check ('number') failed - got 'fast'".to_owned())
    );
    assert_eq!(
        parse_props(lxc::NET, "net0", "bridge=vmbr0"),
        Err("format error\nnet0.name: property is missing and it is not optional".to_owned())
    );
    assert_eq!(
        parse_props(lxc::NET, "net0", "name=eth0,colour=red"),
        Err("invalid key in comma-separated list property: colour".to_owned())
    );
}

#[test]
fn unknown_and_required_parameters_are_reported() {
    let e = errors(
        &lxc::RESIZE,
        &[("node", "pve"), ("vmid", "100"), ("bogus", "1")],
    );
    assert_eq!(
        e["bogus"],
        "property is not defined in schema and the schema does not allow additional properties"
    );
    assert_eq!(e["disk"], "property is missing and it is not optional");
    assert_eq!(e["size"], "property is missing and it is not optional");
}

#[test]
fn numbers_follow_is_number() {
    assert!(formats::is_number("1.5e3") && formats::is_number(".5") && formats::is_number("-2"));
    assert!(!formats::is_number("fast") && !formats::is_number("1e") && !formats::is_number("."));
}
