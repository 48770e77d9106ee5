//! Embedded resource schemas for what atoll's Proxmox engine manages, pinned to bpg/proxmox
//! v0.111: `proxmox_virtual_environment_container`, `proxmox_download_file` (and its deprecated
//! name `proxmox_virtual_environment_download_file`), and the utility resources whose values
//! atoll generates (`utility`: `random_*`, `tls_private_key`, `time_static`). Each argument carries its bpg default and whether changing it forces
//! replacement, for the plan engine.

mod builders;
mod container;
mod utility;

use builders::*;
use container::container;
use utility::{
    null_resource, random, random_bytes, random_id, random_integer, random_uuid, time_static,
    tls_private_key,
};

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
    /// The provider's validator on a known configured value; a failure is an error on the
    /// argument's line, in `validate` and `plan` alike.
    pub check: Option<Check>,
}

/// A provider's validator on one argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Check {
    /// One of these strings (`stringvalidator.OneOf`).
    OneOf(&'static [&'static str]),
    /// A whole number from `min` to `max` (`int64validator.Between`); `why` says why, when the
    /// bound is atoll's rather than the provider's.
    Between {
        min: f64,
        max: f64,
        why: Option<&'static str>,
    },
}

/// The longest value atoll generates (characters or bytes): a pull request chooses it.
pub const MAX_GENERATED_LENGTH: f64 = 1024.0;
/// The `rsa_bits` atoll generates: Go's `crypto/rsa` refuses fewer than 1,024, and key
/// generation time grows with the fourth power of the size (16,384 bits take minutes).
pub const RSA_BITS: (f64, f64) = (1024.0, 8192.0);

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

/// What atoll knows it cannot do yet in a resource it supports, refused where it is written,
/// so `validate` refuses exactly what `plan` would: the reason and the next step for one block
/// of `type_name`.
pub fn refusal(type_name: &str, block: &str) -> Option<&'static str> {
    match (type_name, block) {
        ("proxmox_virtual_environment_container", "clone") => {
            Some("cloning is not supported yet; use operating_system.template_file_id")
        }
        ("proxmox_virtual_environment_container", "idmap") => {
            Some("bpg writes idmap over SSH, which atoll never does; remove the idmap blocks")
        }
        _ => None,
    }
}

/// Types atoll refuses on principle, not for want of code: they would write on the server,
/// run a program or reach the network on a pull request's behalf. The reason and what to do
/// instead, for a resource (`data` false) or a data source.
pub fn never(type_name: &str, data: bool) -> Option<&'static str> {
    match (type_name, data) {
        ("local_file" | "local_sensitive_file", false) => Some(
            "it writes a file on the machine that runs Terraform, and atoll never writes a pull \
             request's files on its server; expose the content as an output instead",
        ),
        ("external", true) => Some(
            "it runs a program the configuration names, and nothing a pull request chooses runs \
             on atoll's server; compute the value in Terraform's language or pass it as a \
             variable",
        ),
        ("http", true) => Some(
            "it makes an HTTP request to an address the configuration chooses, and atoll never \
             reaches the network on a pull request's behalf; pass the value as a variable",
        ),
        _ => None,
    }
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
        "random_id" => Some(random_id()),
        "random_integer" => Some(random_integer()),
        "random_uuid" => Some(random_uuid()),
        "random_bytes" => Some(random_bytes()),
        "time_static" => Some(time_static()),
        "null_resource" => Some(null_resource()),
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
    "random_id",
    "random_integer",
    "random_uuid",
    "random_bytes",
    "tls_private_key",
    "time_static",
    "null_resource",
];

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
