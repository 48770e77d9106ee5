//! Conformance of the simulated firewall API: options, rules (cluster, node, guest, security
//! groups) with pve-firewall's checks, aliases and ipsets, digests and `moveto`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

/// A request's form parameters.
type Form<'a> = &'a [(&'a str, &'a str)];

use serde_json::Value;
use support::{Api, Resp};

const RULES: &str = "/cluster/firewall/rules";

fn refused(r: &Resp, key: &str, msg: &str) {
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert_eq!(r.error(key), msg, "{:?}", r.body);
}

fn died(r: &Resp, msg: &str) {
    assert_eq!(
        (r.status, r.message()),
        (500, msg.to_owned()),
        "{:?}",
        r.body
    );
}

async fn rules(api: &Api, path: &str) -> Vec<Value> {
    api.get(path).await.ok().data().as_array().unwrap().clone()
}

#[tokio::test]
async fn cluster_options_set_read_back_as_numbers_with_a_digest() {
    let api = Api::start().await;
    let r = api.get("/cluster/firewall/options").await.ok();
    assert_eq!(
        r.data()["digest"],
        "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    );
    let form = [("enable", "1"), ("policy_in", "DROP"), ("ebtables", "0")];
    api.put("/cluster/firewall/options", &form).await.ok();
    let o = api
        .get("/cluster/firewall/options")
        .await
        .ok()
        .data()
        .clone();
    assert_eq!(
        (o["enable"].clone(), o["ebtables"].clone()),
        (1.into(), 0.into())
    );
    assert_eq!(o["policy_in"], "DROP");
    let stale = [("delete", "policy_in"), ("digest", "0000")];
    let r = api.put("/cluster/firewall/options", &stale).await;
    died(
        &r,
        "detected modified configuration - file changed by other user? Try again.",
    );
    let digest = o["digest"].as_str().unwrap();
    let ok = [("delete", "policy_in"), ("digest", digest)];
    api.put("/cluster/firewall/options", &ok).await.ok();
    let o = api
        .get("/cluster/firewall/options")
        .await
        .ok()
        .data()
        .clone();
    assert!(o.get("policy_in").is_none(), "{o}");
}

#[tokio::test]
async fn options_refuse_what_the_schema_refuses() {
    let api = Api::start().await;
    let r = api
        .put("/cluster/firewall/options", &[("policy_forward", "REJECT")])
        .await;
    refused(
        &r,
        "policy_forward",
        "value 'REJECT' does not have a value in the enumeration 'ACCEPT, DROP'",
    );
    let r = api
        .put("/cluster/firewall/options", &[("delete", "bogus")])
        .await;
    refused(&r, "delete", "no such option 'bogus'");
    let r = api.put("/cluster/firewall/options", &[("frob", "1")]).await;
    refused(
        &r,
        "frob",
        "property is not defined in schema and the schema does not allow additional properties",
    );
    let r = api
        .put("/nodes/pve/firewall/options", &[("nf_conntrack_max", "10")])
        .await;
    refused(
        &r,
        "nf_conntrack_max",
        "value must have a minimum value of 32768",
    );
    let r = api
        .put(
            "/nodes/pve/qemu/100/firewall/options",
            &[("macfilter", "maybe")],
        )
        .await;
    refused(
        &r,
        "macfilter",
        "type check ('boolean') failed - got 'maybe'",
    );
}

#[tokio::test]
async fn new_rules_go_first_and_are_disabled_unless_enabled() {
    let api = Api::start().await;
    let ssh = [
        ("type", "in"),
        ("action", "ACCEPT"),
        ("macro", "ssh"),
        ("enable", "1"),
    ];
    api.post(RULES, &ssh).await.ok();
    let web = [
        ("type", "in"),
        ("action", "ACCEPT"),
        ("proto", "tcp"),
        ("dport", "80,443"),
    ];
    api.post(RULES, &web).await.ok();
    let list = rules(&api, RULES).await;
    assert_eq!(list.len(), 2);
    assert_eq!(
        (list[0]["pos"].clone(), list[0]["enable"].clone()),
        (0.into(), 0.into())
    );
    assert_eq!(list[0]["dport"], "80,443");
    assert_eq!(
        list[1]["macro"], "SSH",
        "PVE keeps its own spelling of the macro"
    );
    assert_eq!(list[1]["enable"], 1);
    assert_eq!(list[0]["digest"], list[1]["digest"]);
    let one = api.get(&format!("{RULES}/1")).await.ok();
    assert_eq!(one.data()["macro"], "SSH");
    died(
        &api.get(&format!("{RULES}/5")).await,
        "no rule at position 5",
    );
}

#[tokio::test]
async fn rule_checks_answer_with_pve_words() {
    let api = Api::start().await;
    let cases: &[(Form<'_>, &str, &str)] = &[
        (&[("macro", "Foo")], "macro", "unknown macro 'Foo'"),
        (
            &[("dport", "22")],
            "proto",
            "missing property - 'dport' requires this property",
        ),
        (
            &[("proto", "icmp"), ("sport", "22")],
            "sport",
            "protocol 'icmp' does not support ports",
        ),
        (
            &[("proto", "tcp"), ("dport", "90:80")],
            "dport",
            "invalid format - backwards range '90:80' not allowed, did you mean '80:90'?",
        ),
        (
            &[("proto", "bogus")],
            "proto",
            "invalid format - unknown protocol 'bogus'",
        ),
        (
            &[("source", "+nosuchset")],
            "source",
            "no such ipset 'nosuchset'",
        ),
        (
            &[("dest", "nosuchalias")],
            "dest",
            "no such alias 'nosuchalias'",
        ),
        (
            &[("source", "10.0.0.1,fd00::1")],
            "source",
            "invalid format - detected mixed ipv4/ipv6 addresses in address list '10.0.0.1,fd00::1'",
        ),
        (
            &[("macro", "SSH"), ("proto", "tcp"), ("dport", "2222")],
            "dport",
            "parameter 'dport' already define in macro (value = '22')",
        ),
        (
            &[("log", "loud")],
            "log",
            "value 'loud' does not have a value in the enumeration 'emerg, alert, crit, err, warning, notice, info, debug, nolog'",
        ),
    ];
    for (extra, key, msg) in cases {
        let mut form = vec![("type", "in"), ("action", "ACCEPT")];
        form.extend_from_slice(extra);
        refused(&api.post(RULES, &form).await, key, msg);
    }
    let fwd = [("type", "forward"), ("action", "REJECT")];
    refused(
        &api.post(RULES, &fwd).await,
        "action",
        "cannot define REJECT rules on forward chain",
    );
    let bad = [("type", "in"), ("action", "ALLOW")];
    refused(
        &api.post(RULES, &bad).await,
        "action",
        "unknown action 'ALLOW'",
    );
    refused(
        &api.post(RULES, &[("type", "in")]).await,
        "action",
        "property is missing and it is not optional",
    );
    let vm = [("type", "in"), ("action", "ACCEPT"), ("iface", "eth0")];
    let r = api.post("/nodes/pve/qemu/100/firewall/rules", &vm).await;
    refused(
        &r,
        "iface",
        "value does not match the regex pattern 'net\\d+'",
    );
    let fwd_vm = [("type", "forward"), ("action", "ACCEPT")];
    let r = api.post("/nodes/pve/lxc/100/firewall/rules", &fwd_vm).await;
    refused(&r, "type", "invalid rule type 'forward' for rule_env 'ct'");
    assert!(
        rules(&api, RULES).await.is_empty(),
        "nothing refused was stored"
    );
}

#[tokio::test]
async fn references_to_existing_aliases_and_ipsets_are_accepted() {
    let api = Api::start().await;
    api.post(
        "/cluster/firewall/aliases",
        &[("name", "office"), ("cidr", "192.168.0.0/24")],
    )
    .await
    .ok();
    api.post("/cluster/firewall/ipset", &[("name", "admins")])
        .await
        .ok();
    let form = [
        ("type", "in"),
        ("action", "ACCEPT"),
        ("source", "dc/office"),
        ("dest", "+dc/admins"),
    ];
    api.post(RULES, &form).await.ok();
    let rule = &rules(&api, RULES).await[0];
    assert_eq!(
        (rule["source"].clone(), rule["ipversion"].clone()),
        ("dc/office".into(), 4.into())
    );
    let guest = [
        ("type", "out"),
        ("action", "DROP"),
        ("dest", "office"),
        ("iface", "net0"),
    ];
    api.post("/nodes/pve/lxc/100/firewall/rules", &guest)
        .await
        .ok();
}

#[tokio::test]
async fn update_moves_edits_and_deletes_with_digest() {
    let api = Api::start().await;
    for port in ["3", "2", "1"] {
        let f = [
            ("type", "in"),
            ("action", "ACCEPT"),
            ("proto", "tcp"),
            ("dport", port),
        ];
        api.post(RULES, &f).await.ok();
    }
    api.put(&format!("{RULES}/0"), &[("moveto", "2")])
        .await
        .ok();
    let ports: Vec<Value> = rules(&api, RULES)
        .await
        .iter()
        .map(|r| r["dport"].clone())
        .collect();
    assert_eq!(ports, ["2", "1", "3"]);
    let edit = [("comment", "web"), ("delete", "dport"), ("enable", "1")];
    api.put(&format!("{RULES}/1"), &edit).await.ok();
    let rule = rules(&api, RULES).await[1].clone();
    assert_eq!(
        (rule["comment"].clone(), rule.get("dport")),
        ("web".into(), None)
    );
    let r = api
        .put(&format!("{RULES}/1"), &[("delete", "action")])
        .await;
    refused(&r, "delete", "unable to delete required property 'action'");
    let r = api
        .delete(&format!("{RULES}/0"), &[("digest", "abc")])
        .await;
    died(
        &r,
        "detected modified configuration - file changed by other user? Try again.",
    );
    let digest = rule["digest"].as_str().unwrap().to_owned();
    api.delete(&format!("{RULES}/0"), &[("digest", &digest)])
        .await
        .ok();
    assert_eq!(rules(&api, RULES).await.len(), 2);
}

#[tokio::test]
async fn security_groups_hold_rules_and_refuse_deletion_while_not_empty() {
    let api = Api::start().await;
    let groups = "/cluster/firewall/groups";
    api.post(groups, &[("group", "webserver"), ("comment", "web")])
        .await
        .ok();
    let r = api.post(groups, &[("group", "webserver")]).await;
    refused(&r, "group", "Security group 'webserver' already exists");
    let r = api.post(groups, &[("group", "a-name-much-too-long")]).await;
    refused(&r, "group", "value may only be 18 characters long");
    let rule = [
        ("type", "in"),
        ("action", "ACCEPT"),
        ("macro", "HTTP"),
        ("enable", "1"),
    ];
    api.post(&format!("{groups}/webserver"), &rule).await.ok();
    let nested = [("type", "group"), ("action", "webserver")];
    let r = api.post(&format!("{groups}/webserver"), &nested).await;
    refused(&r, "type", "invalid rule type 'group' for rule_env 'group'");
    let insert = [("type", "group"), ("action", "webserver"), ("enable", "1")];
    api.post("/nodes/pve/qemu/100/firewall/rules", &insert)
        .await
        .ok();
    died(
        &api.delete(&format!("{groups}/webserver"), &[]).await,
        "Security group 'webserver' is not empty",
    );
    died(
        &api.get(&format!("{groups}/nosuch")).await,
        "no such security group 'nosuch'",
    );
    let list = api.get(groups).await.ok();
    assert_eq!(list.data()[0]["comment"], "web");
    api.post(groups, &[("group", "web"), ("rename", "webserver")])
        .await
        .ok();
    let vm_rules = rules(&api, "/nodes/pve/qemu/100/firewall/rules").await;
    assert_eq!(
        vm_rules[0]["action"], "web",
        "rules inserting the group follow the rename"
    );
    api.delete(&format!("{groups}/web/0"), &[]).await.ok();
    api.delete(&format!("{groups}/web"), &[]).await.ok();
    assert_eq!(
        api.get(groups).await.ok().data().as_array().map(Vec::len),
        Some(0)
    );
}

#[tokio::test]
async fn aliases_create_read_rename_and_refuse_duplicates() {
    let api = Api::start().await;
    let base = "/nodes/pve/qemu/100/firewall/aliases";
    api.post(
        base,
        &[
            ("name", "gw"),
            ("cidr", "10.0.0.1/32"),
            ("comment", "gateway"),
        ],
    )
    .await
    .ok();
    let r = api
        .post(base, &[("name", "GW"), ("cidr", "10.0.0.2")])
        .await;
    refused(&r, "name", "alias 'GW' already exists");
    let r = api
        .post(base, &[("name", "x1"), ("cidr", "10.0.0.300")])
        .await;
    refused(
        &r,
        "cidr",
        "invalid format - value does not look like a valid IP address or CIDR network",
    );
    let a = api.get(&format!("{base}/gw")).await.ok();
    assert_eq!(
        (a.data()["cidr"].clone(), a.data()["ipversion"].clone()),
        ("10.0.0.1".into(), 4.into())
    );
    api.put(
        &format!("{base}/gw"),
        &[("cidr", "10.0.0.254"), ("rename", "router")],
    )
    .await
    .ok();
    let r = api.get(&format!("{base}/gw")).await;
    refused(&r, "name", "no such alias");
    let list = rules(&api, base).await;
    assert_eq!(
        (list[0]["name"].clone(), list[0].get("comment")),
        ("router".into(), None)
    );
    api.delete(&format!("{base}/router"), &[]).await.ok();
    assert!(rules(&api, base).await.is_empty());
}

#[tokio::test]
async fn ipsets_normalize_entries_and_refuse_what_pve_refuses() {
    let api = Api::start().await;
    let base = "/cluster/firewall/ipset";
    api.post(base, &[("name", "mgmt"), ("comment", "admins")])
        .await
        .ok();
    refused(
        &api.post(base, &[("name", "mgmt")]).await,
        "name",
        "IPSet 'mgmt' already exists",
    );
    api.post(&format!("{base}/mgmt"), &[("cidr", "10.1.0.7/32")])
        .await
        .ok();
    api.post(
        &format!("{base}/mgmt"),
        &[("cidr", "10.0.0.9/8"), ("nomatch", "1")],
    )
    .await
    .ok();
    let r = api
        .post(&format!("{base}/mgmt"), &[("cidr", "10.1.0.7")])
        .await;
    refused(&r, "cidr", "address '10.1.0.7' already exists");
    let r = api
        .post(&format!("{base}/mgmt"), &[("cidr", "0.0.0.0/0")])
        .await;
    refused(&r, "cidr", "a zero prefix is not allowed in ipset entries");
    died(
        &api.post(&format!("{base}/mgmt"), &[("cidr", "nosuch")])
            .await,
        "no such alias 'nosuch'",
    );
    let entries = rules(&api, &format!("{base}/mgmt")).await;
    let cidrs: Vec<Value> = entries.iter().map(|e| e["cidr"].clone()).collect();
    assert_eq!(
        cidrs,
        ["10.0.0.0/8", "10.1.0.7"],
        "host bits cleared, /32 dropped, sorted"
    );
    assert_eq!(entries[0]["nomatch"], 1);
    let one = api.get(&format!("{base}/mgmt/10.0.0.0%2F8")).await.ok();
    assert_eq!(one.data()["nomatch"], 1);
    api.put(&format!("{base}/mgmt/10.0.0.0%2F8"), &[("comment", "lan")])
        .await
        .ok();
    let one = api.get(&format!("{base}/mgmt/10.0.0.0%2F8")).await.ok();
    assert_eq!(
        (one.data().get("nomatch"), one.data()["comment"].clone()),
        (None, "lan".into())
    );
    died(
        &api.delete(&format!("{base}/mgmt"), &[]).await,
        "IPSet 'mgmt' is not empty",
    );
    died(
        &api.get(&format!("{base}/other")).await,
        "no such IPSet 'other'",
    );
    api.delete(&format!("{base}/mgmt"), &[("force", "1")])
        .await
        .ok();
    assert!(rules(&api, base).await.is_empty());
}

#[tokio::test]
async fn node_firewall_needs_an_existing_node() {
    let api = Api::start().await;
    let r = api.get("/nodes/nope/firewall/rules").await;
    assert_eq!(r.status, 500);
    assert!(
        r.message().starts_with("hostname lookup 'nope' failed"),
        "{}",
        r.message()
    );
    let rule = [
        ("type", "in"),
        ("action", "ACCEPT"),
        ("iface", "vmbr0"),
        ("proto", "udp"),
        ("dport", "53"),
    ];
    api.post("/nodes/pve/firewall/rules", &rule).await.ok();
    assert_eq!(
        rules(&api, "/nodes/pve/firewall/rules").await[0]["iface"],
        "vmbr0"
    );
    assert!(
        rules(&api, RULES).await.is_empty(),
        "node rules are the node's own"
    );
}

#[tokio::test]
async fn macros_are_listed() {
    let api = Api::start().await;
    let list = rules(&api, "/cluster/firewall/macros").await;
    assert!(
        list.iter()
            .any(|m| m["macro"] == "SSH" && m["descr"] == "Secure shell traffic")
    );
}
