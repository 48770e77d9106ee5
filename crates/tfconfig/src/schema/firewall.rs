//! Pools, the firewall and a node's settings (bpg/proxmox, SDKv2 except the node firewall):
//! pools, the cluster's, a node's and a guest's firewall options, rule lists, aliases, IP sets
//! and security groups, a node's DNS settings and time zone.
//! Defaults are those of bpg's code.

use super::builders::*;
use super::{AttrSchema, BlockSchema, BodySchema, Check, ResourceSchema};

const POLICIES: &[&str] = &["ACCEPT", "DROP", "REJECT"];
const LOG_LEVELS: &[&str] = &[
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug", "nolog",
];

fn one_of(a: AttrSchema, allowed: &'static [&'static str]) -> AttrSchema {
    checked(a, Check::OneOf(allowed))
}

fn schema(
    type_name: &'static str,
    attrs: Vec<AttrSchema>,
    blocks: Vec<BlockSchema>,
) -> ResourceSchema {
    ResourceSchema {
        type_name,
        body: BodySchema { attrs, blocks },
        generated: false,
    }
}

/// `node_name`, `vm_id`, `container_id`: where a firewall object lives (bpg's selector).
fn selector(node_required: bool) -> Vec<AttrSchema> {
    let node = if node_required {
        req("node_name", s())
    } else {
        opt("node_name", s())
    };
    vec![
        fnew(node),
        fnew(opt("vm_id", n())),
        fnew(opt("container_id", n())),
    ]
}

/// A firewall rule, or a security group's insertion (`security_group`).
fn rule_block(insertions: bool) -> BlockSchema {
    let mut attrs = vec![
        ro("pos", n()),
        one_of(opt("action", s()), POLICIES),
        one_of(opt("type", s()), &["in", "out", "forward"]),
        ds("comment", ""),
        ds("dest", ""),
        ds("dport", ""),
        db("enabled", true),
        ds("iface", ""),
        opt("log", s()),
        ds("macro", ""),
        ds("proto", ""),
        ds("source", ""),
        ds("sport", ""),
    ];
    if insertions {
        attrs.push(ds("security_group", ""));
    }
    block("rule", None, attrs, vec![])
}

pub(super) fn pool() -> ResourceSchema {
    // the members PVE lists (guests and storages), read at apply
    let members = ro("members", dy());
    let attrs = vec![
        ro("id", s()),
        ds("comment", ""),
        fnew(req("pool_id", s())),
        members,
    ];
    schema("proxmox_virtual_environment_pool", attrs, vec![])
}

pub(super) fn firewall_alias() -> ResourceSchema {
    let mut attrs = selector(false);
    attrs.extend([
        ro("id", s()),
        fnew(req("name", s())),
        req("cidr", s()),
        ds("comment", ""),
    ]);
    schema("proxmox_virtual_environment_firewall_alias", attrs, vec![])
}

pub(super) fn firewall_ipset() -> ResourceSchema {
    let mut attrs = selector(false);
    attrs.extend([ro("id", s()), fnew(req("name", s())), ds("comment", "")]);
    let cidr = block(
        "cidr",
        None,
        vec![req("name", s()), ds("comment", ""), db("nomatch", false)],
        vec![],
    );
    schema(
        "proxmox_virtual_environment_firewall_ipset",
        attrs,
        vec![cidr],
    )
}

pub(super) fn firewall_options() -> ResourceSchema {
    let mut attrs = selector(true);
    attrs.extend([
        ro("id", s()),
        db("dhcp", false),
        db("enabled", false),
        db("ipfilter", false),
        one_of(ds("log_level_in", "nolog"), LOG_LEVELS),
        one_of(ds("log_level_out", "nolog"), LOG_LEVELS),
        db("macfilter", true),
        db("ndp", false),
        one_of(ds("input_policy", "DROP"), POLICIES),
        one_of(ds("output_policy", "ACCEPT"), POLICIES),
        db("radv", true),
    ]);
    schema(
        "proxmox_virtual_environment_firewall_options",
        attrs,
        vec![],
    )
}

pub(super) fn firewall_rules() -> ResourceSchema {
    let mut attrs = selector(false);
    attrs.push(ro("id", s()));
    schema(
        "proxmox_virtual_environment_firewall_rules",
        attrs,
        vec![rule_block(true)],
    )
}

pub(super) fn cluster_firewall() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        opt("enabled", b()),
        opt("ebtables", b()),
        one_of(ds("input_policy", "DROP"), POLICIES),
        one_of(ds("output_policy", "ACCEPT"), POLICIES),
        one_of(ds("forward_policy", "ACCEPT"), &["ACCEPT", "DROP"]),
    ];
    let limit = block(
        "log_ratelimit",
        Some(1),
        vec![
            opt("enabled", b()),
            dn("burst", 5.0),
            ds("rate", "1/second"),
        ],
        vec![],
    );
    schema(
        "proxmox_virtual_environment_cluster_firewall",
        attrs,
        vec![limit],
    )
}

pub(super) fn security_group() -> ResourceSchema {
    let attrs = vec![ro("id", s()), fnew(req("name", s())), ds("comment", "")];
    schema(
        "proxmox_virtual_environment_cluster_firewall_security_group",
        attrs,
        vec![rule_block(false)],
    )
}

/// `proxmox_node_firewall` and its deprecated name (terraform-plugin-framework).
pub(super) fn node_firewall(type_name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        fnew(req("node_name", s())),
        db("enabled", true),
        one_of(ds("log_level_forward", "nolog"), LOG_LEVELS),
        one_of(ds("log_level_in", "nolog"), LOG_LEVELS),
        one_of(ds("log_level_out", "nolog"), LOG_LEVELS),
        db("ndp", true),
        checked(dn("nf_conntrack_max", 262_144.0), Check::AtLeast(32_768.0)),
        checked(
            dn("nf_conntrack_tcp_timeout_established", 432_000.0),
            Check::AtLeast(7_875.0),
        ),
        db("nftables", false),
        db("nosmurfs", true),
        one_of(ds("smurf_log_level", "nolog"), LOG_LEVELS),
        one_of(ds("tcp_flags_log_level", "nolog"), LOG_LEVELS),
    ];
    schema(type_name, attrs, vec![])
}

/// A node's DNS settings (`proxmox_virtual_environment_dns`).
pub(super) fn dns() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        req("domain", s()),
        fnew(req("node_name", s())),
        opt("servers", ls()),
    ];
    schema("proxmox_virtual_environment_dns", attrs, vec![])
}

/// A node's time zone (`proxmox_virtual_environment_time`).
pub(super) fn time() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        fnew(req("node_name", s())),
        req("time_zone", s()),
        ro("local_time", s()),
        ro("utc_time", s()),
    ];
    schema("proxmox_virtual_environment_time", attrs, vec![])
}
