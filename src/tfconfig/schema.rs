//! Embedded resource schemas for what atoll's Proxmox engine manages, pinned to bpg/proxmox
//! v0.111: `proxmox_virtual_environment_container`, `proxmox_download_file` (and its deprecated
//! name `proxmox_virtual_environment_download_file`), `random_password`, `random_string` and
//! `tls_private_key`. Each argument carries its bpg default and whether changing it forces
//! replacement, for the plan engine.

use super::types::Constraint;
use super::value::Value;

/// How changing an argument affects the resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replace {
    /// Updated in place.
    Never,
    /// Any change replaces the resource.
    Always,
    /// Only a decrease replaces it (`disk.size`: PVE cannot shrink a volume).
    OnDecrease,
}

/// One attribute of a resource or nested block.
#[derive(Clone, Debug)]
pub struct AttrSchema {
    pub name: &'static str,
    pub ty: Constraint,
    pub required: bool,
    /// Set by the provider when not configured (known after apply on create).
    pub computed: bool,
    /// Computed and not configurable.
    pub read_only: bool,
    pub default: Option<Value>,
    pub replace: Replace,
    pub sensitive: bool,
}

/// A nested block type (SDKv2 `TypeList` of a resource).
#[derive(Clone, Debug)]
pub struct BlockSchema {
    pub name: &'static str,
    pub max_items: Option<usize>,
    /// Adding or removing the block replaces the resource.
    pub replace_on_presence: bool,
    /// When absent from the configuration, the provider plans one block with its defaults.
    pub default_when_absent: bool,
    pub body: BodySchema,
}

/// Attributes and nested blocks of a resource or block.
#[derive(Clone, Debug, Default)]
pub struct BodySchema {
    pub attrs: Vec<AttrSchema>,
    pub blocks: Vec<BlockSchema>,
}

impl BodySchema {
    pub fn attr(&self, name: &str) -> Option<&AttrSchema> {
        self.attrs.iter().find(|a| a.name == name)
    }

    pub fn block(&self, name: &str) -> Option<&BlockSchema> {
        self.blocks.iter().find(|b| b.name == name)
    }
}

/// A resource type's schema.
#[derive(Clone, Debug)]
pub struct ResourceSchema {
    pub type_name: &'static str,
    pub body: BodySchema,
    /// Values are generated at apply time (random_*, tls_private_key).
    pub generated: bool,
}

/// The schema for a resource type, if atoll's engine manages it.
pub fn resource(type_name: &str) -> Option<ResourceSchema> {
    match type_name {
        "proxmox_virtual_environment_container" => Some(container()),
        "proxmox_download_file" => Some(download_file("proxmox_download_file")),
        "proxmox_virtual_environment_download_file" => {
            Some(download_file("proxmox_virtual_environment_download_file"))
        }
        "random_password" => Some(random(true)),
        "random_string" => Some(random(false)),
        "tls_private_key" => Some(tls_private_key()),
        _ => None,
    }
}

/// Every resource type atoll supports.
pub const SUPPORTED: &[&str] = &[
    "proxmox_virtual_environment_container",
    "proxmox_download_file",
    "proxmox_virtual_environment_download_file",
    "random_password",
    "random_string",
    "tls_private_key",
];

// --- builders -------------------------------------------------------------------------------

fn s() -> Constraint {
    Constraint::String
}
fn n() -> Constraint {
    Constraint::Number
}
fn b() -> Constraint {
    Constraint::Bool
}
fn ls() -> Constraint {
    Constraint::List(Box::new(Constraint::String))
}
fn ms() -> Constraint {
    Constraint::Map(Box::new(Constraint::String))
}

fn base(name: &'static str, ty: Constraint) -> AttrSchema {
    AttrSchema {
        name,
        ty,
        required: false,
        computed: false,
        read_only: false,
        default: None,
        replace: Replace::Never,
        sensitive: false,
    }
}
/// Required.
fn req(name: &'static str, ty: Constraint) -> AttrSchema {
    AttrSchema {
        required: true,
        ..base(name, ty)
    }
}
/// Optional, no default.
fn opt(name: &'static str, ty: Constraint) -> AttrSchema {
    base(name, ty)
}
/// Optional with a default.
fn def(name: &'static str, ty: Constraint, v: Value) -> AttrSchema {
    AttrSchema {
        default: Some(v),
        ..base(name, ty)
    }
}
fn ds(name: &'static str, v: &str) -> AttrSchema {
    def(name, s(), Value::string(v))
}
fn dn(name: &'static str, v: f64) -> AttrSchema {
    def(name, n(), Value::Number(v))
}
fn db(name: &'static str, v: bool) -> AttrSchema {
    def(name, b(), Value::Bool(v))
}
fn empty_list(name: &'static str) -> AttrSchema {
    def(
        name,
        ls(),
        Value::List(super::value::Type::String, Vec::new()),
    )
}
/// Optional + computed.
fn oc(name: &'static str, ty: Constraint) -> AttrSchema {
    AttrSchema {
        computed: true,
        ..base(name, ty)
    }
}
/// Read-only computed.
fn ro(name: &'static str, ty: Constraint) -> AttrSchema {
    AttrSchema {
        computed: true,
        read_only: true,
        ..base(name, ty)
    }
}
fn fnew(a: AttrSchema) -> AttrSchema {
    AttrSchema {
        replace: Replace::Always,
        ..a
    }
}
fn sens(a: AttrSchema) -> AttrSchema {
    AttrSchema {
        sensitive: true,
        ..a
    }
}

fn block(
    name: &'static str,
    max: Option<usize>,
    attrs: Vec<AttrSchema>,
    blocks: Vec<BlockSchema>,
) -> BlockSchema {
    BlockSchema {
        name,
        max_items: max,
        replace_on_presence: false,
        default_when_absent: false,
        body: BodySchema { attrs, blocks },
    }
}
fn defaulted(b: BlockSchema) -> BlockSchema {
    BlockSchema {
        default_when_absent: true,
        ..b
    }
}
fn replacing(b: BlockSchema) -> BlockSchema {
    BlockSchema {
        replace_on_presence: true,
        ..b
    }
}

fn container() -> ResourceSchema {
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
        dn("timeout_start", 300.0),
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
                    vec![ds("domain", ""), ds("server", ""), opt("servers", ls())],
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

fn download_file(type_name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        ro("size", n()),
        fnew(req("content_type", s())),
        fnew(req("datastore_id", s())),
        fnew(req("node_name", s())),
        fnew(req("url", s())),
        fnew(opt("checksum", s())),
        fnew(opt("checksum_algorithm", s())),
        fnew(opt("decompression_algorithm", s())),
        fnew(oc("file_name", s())),
        db("overwrite", true),
        db("overwrite_unmanaged", false),
        dn("upload_timeout", 600.0),
        db("verify", true),
    ];
    ResourceSchema {
        type_name,
        body: BodySchema {
            attrs,
            blocks: vec![],
        },
        generated: false,
    }
}

fn random(password: bool) -> ResourceSchema {
    let mut attrs = vec![
        ro("id", s()),
        fnew(req("length", n())),
        fnew(db("special", true)),
        fnew(db("upper", true)),
        fnew(db("lower", true)),
        fnew(db("numeric", true)),
        fnew(dn("min_lower", 0.0)),
        fnew(dn("min_upper", 0.0)),
        fnew(dn("min_numeric", 0.0)),
        fnew(dn("min_special", 0.0)),
        fnew(opt("override_special", s())),
        fnew(opt("keepers", ms())),
    ];
    if password {
        attrs.push(sens(ro("result", s())));
        attrs.push(sens(ro("bcrypt_hash", s())));
    } else {
        attrs.push(ro("result", s()));
    }
    let type_name = if password {
        "random_password"
    } else {
        "random_string"
    };
    ResourceSchema {
        type_name,
        body: BodySchema {
            attrs,
            blocks: vec![],
        },
        generated: true,
    }
}

fn tls_private_key() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        fnew(req("algorithm", s())),
        fnew(dn("rsa_bits", 2048.0)),
        fnew(ds("ecdsa_curve", "P224")),
        sens(ro("private_key_pem", s())),
        sens(ro("private_key_openssh", s())),
        sens(ro("private_key_pem_pkcs8", s())),
        ro("public_key_pem", s()),
        ro("public_key_openssh", s()),
        ro("public_key_fingerprint_md5", s()),
        ro("public_key_fingerprint_sha256", s()),
    ];
    ResourceSchema {
        type_name: "tls_private_key",
        body: BodySchema {
            attrs,
            blocks: vec![],
        },
        generated: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_exposes_defaults_and_replacement() {
        let c = resource("proxmox_virtual_environment_container").expect("container schema");
        let node = c.body.attr("node_name").expect("node_name");
        assert!(node.required && node.replace == Replace::Always);
        let cores = c
            .body
            .block("cpu")
            .and_then(|b| b.body.attr("cores"))
            .expect("cpu.cores");
        assert_eq!(cores.default, Some(Value::Number(1.0)));
        assert_eq!(cores.replace, Replace::Never);
        let size = c
            .body
            .block("disk")
            .and_then(|b| b.body.attr("size"))
            .expect("disk.size");
        assert_eq!(size.replace, Replace::OnDecrease);
        let pw = c
            .body
            .block("initialization")
            .and_then(|b| b.body.block("user_account"))
            .and_then(|b| b.body.attr("password"))
            .expect("password");
        assert!(pw.sensitive && pw.replace == Replace::Always);
    }

    #[test]
    fn download_file_is_known_under_both_names() {
        assert!(resource("proxmox_download_file").is_some());
        assert!(resource("proxmox_virtual_environment_download_file").is_some());
        assert!(resource("proxmox_virtual_environment_vm").is_none());
    }
}
