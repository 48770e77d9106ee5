//! `proxmox_virtual_environment_container` (bpg/proxmox v0.111, SDKv2): every argument with its
//! default and whether changing it forces replacement (reference/proxmox.md section 1).

use super::builders::*;
use super::{AttrSchema, BodySchema, Replace, ResourceSchema, Sdk};

/// bpg's deprecation of `initialization.dns.server`.
const DNS_SERVER: &str = "The `server` attribute is deprecated and will be removed in a future \
                          release. Please use the `servers` attribute instead.";
/// bpg's deprecation of `timeout_start`.
const TIMEOUT_START: &str = "This field is deprecated and will be removed in a future release. \
                             An overall operation timeout (`timeout_create` / `timeout_clone`) \
                             is used instead.";

pub(super) fn container() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        ds("description", ""),
        opt("environment_variables", ms()),
        ds("hook_script_file_id", ""),
        fnew(req("node_name", s())),
        fnew(ds("pool_id", "")),
        db("protection", false),
        db("started", true),
        db("start_on_boot", true),
        opt("tags", ls()),
        fnew(db("template", false)),
        dn("timeout_create", 1800.0),
        dn("timeout_clone", 1800.0),
        dn("timeout_update", 1800.0),
        dn("timeout_delete", 60.0),
        deprecated(dn("timeout_start", 300.0), Sdk::V2, TIMEOUT_START),
        fnew(db("unprivileged", false)),
        fnew(oc("vm_id", n())),
        ro("ipv4", ms()),
        ro("ipv6", ms()),
    ];
    let ip = |name| {
        block(
            name,
            Some(1),
            vec![ds("address", ""), ds("gateway", "")],
            vec![],
        )
    };
    let blocks = vec![
        block(
            "clone",
            Some(1),
            vec![
                fnew(ds("datastore_id", "")),
                fnew(ds("node_name", "")),
                fnew(db("full", true)),
                fnew(req("vm_id", n())),
            ],
            vec![],
        ),
        defaulted(block(
            "console",
            Some(1),
            vec![db("enabled", true), ds("type", "tty"), dn("tty_count", 2.0)],
            vec![],
        )),
        defaulted(block(
            "cpu",
            Some(1),
            vec![
                ds("architecture", "amd64"),
                dn("cores", 1.0),
                dn("limit", 0.0),
                oc("units", n()),
            ],
            vec![],
        )),
        defaulted(block(
            "disk",
            Some(1),
            vec![
                fnew(ds("datastore_id", "local")),
                AttrSchema {
                    replace: Replace::OnDecrease,
                    ..dn("size", 4.0)
                },
                db("acl", false),
                db("quota", false),
                db("replicate", false),
                empty_list("mount_options"),
                ro("path_in_datastore", s()),
            ],
            vec![],
        )),
        defaulted(block(
            "features",
            Some(1),
            vec![
                db("nesting", false),
                db("keyctl", false),
                db("fuse", false),
                empty_list("mount"),
                db("mknod", false),
            ],
            vec![],
        )),
        block(
            "initialization",
            Some(1),
            vec![ds("hostname", ""), ds("entrypoint", "")],
            vec![
                block(
                    "dns",
                    Some(1),
                    vec![
                        ds("domain", ""),
                        deprecated(ds("server", ""), Sdk::V2, DNS_SERVER),
                        opt("servers", ls()),
                    ],
                    vec![],
                ),
                block("ip_config", Some(10), vec![], vec![ip("ipv4"), ip("ipv6")]),
                replacing(block(
                    "user_account",
                    Some(1),
                    vec![fnew(empty_list("keys")), sens(fnew(ds("password", "")))],
                    vec![],
                )),
            ],
        ),
        defaulted(block(
            "memory",
            Some(1),
            vec![dn("dedicated", 512.0), dn("swap", 0.0)],
            vec![],
        )),
        replacing(block(
            "mount_point",
            Some(256),
            vec![
                fnew(req("volume", s())),
                fnew(ds("size", "")),
                req("path", s()),
                db("acl", false),
                db("backup", false),
                opt("mount_options", ls()),
                db("quota", false),
                db("read_only", false),
                db("replicate", true),
                db("shared", false),
                ro("path_in_datastore", s()),
            ],
            vec![],
        )),
        block(
            "idmap",
            None,
            vec![
                req("type", s()),
                req("container_id", n()),
                req("host_id", n()),
                req("size", n()),
            ],
            vec![],
        ),
        block(
            "device_passthrough",
            Some(128),
            vec![
                req("path", s()),
                db("deny_write", false),
                opt("uid", n()),
                opt("gid", n()),
                ds("mode", "0660"),
            ],
            vec![],
        ),
        block(
            "network_interface",
            Some(10),
            vec![
                req("name", s()),
                ds("bridge", "vmbr0"),
                db("enabled", true),
                db("firewall", false),
                db("host_managed", false),
                oc("mac_address", s()),
                dn("rate_limit", 0.0),
                dn("vlan_id", 0.0),
                dn("mtu", 0.0),
            ],
            vec![],
        ),
        replacing(block(
            "operating_system",
            Some(1),
            vec![fnew(req("template_file_id", s())), ds("type", "unmanaged")],
            vec![],
        )),
        block(
            "startup",
            Some(1),
            vec![
                dn("order", -1.0),
                dn("up_delay", -1.0),
                dn("down_delay", -1.0),
            ],
            vec![],
        ),
        block(
            "wait_for_ip",
            Some(1),
            vec![db("ipv4", false), db("ipv6", false)],
            vec![],
        ),
    ];
    ResourceSchema {
        type_name: "proxmox_virtual_environment_container",
        body: BodySchema { attrs, blocks },
        generated: false,
    }
}
