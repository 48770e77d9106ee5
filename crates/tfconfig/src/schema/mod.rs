//! Embedded resource schemas for what atoll's Proxmox engine manages, pinned to bpg/proxmox
//! v0.111: `proxmox_virtual_environment_container`, `proxmox_download_file` (and its deprecated
//! name `proxmox_virtual_environment_download_file`), and the utility resources whose values
//! atoll generates (`utility`: `random_*`, `tls_private_key`, `time_*`, `null_resource`,
//! `terraform_data`; `certs`: the tls provider's certificates), and the data sources atoll
//! reads itself (`local`: `local_file`, `local_sensitive_file`). Each argument carries its provider's default and whether changing it
//! forces replacement, for the plan engine.

mod access;
mod builders;
mod certs;
mod check;
mod cluster;
mod container;
mod data;
mod data_access;
mod data_cluster;
mod data_ha;
mod data_sdn;
mod file;
mod firewall;
mod local;
mod network;
mod sdn;
mod utility;
mod vm;

use builders::*;
pub use certs::{ALLOWED_USES, MAX_VALIDITY_HOURS};
use certs::{tls_cert_request, tls_locally_signed_cert, tls_self_signed_cert};
use container::container;
pub use file::FILE_TYPES;
use file::file;
use firewall::{
    cluster_firewall, dns, firewall_alias, firewall_ipset, firewall_options, firewall_rules,
    node_firewall, pool, security_group, time,
};
pub use local::local_data_source;
use utility::{
    null_resource, random, random_bytes, random_id, random_integer, random_pet, random_shuffle,
    random_uuid, terraform_data, time_offset, time_rotating, time_sleep, time_static,
    tls_private_key,
};
use vm::vm;

pub use data::{DATA_SOURCES, DataSourceSchema, data_source};

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
    /// The provider has deprecated the argument: setting it is a warning.
    pub deprecated: Option<Deprecation>,
}

/// A provider's deprecation of an argument: a known value set in the configuration draws a
/// warning on that value, with the provider's message as its detail, in `validate` and `plan`
/// alike (a value still unknown is warned about once known, as the SDKs validate again then).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deprecation {
    pub sdk: Sdk,
    pub message: &'static str,
}

/// The plugin SDK a provider's resource is written with, which names the warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sdk {
    /// terraform-plugin-sdk v2 (bpg's container): "Argument is deprecated".
    V2,
    /// terraform-plugin-framework (hashicorp/random): "Attribute Deprecated".
    Framework,
}

impl Deprecation {
    /// The warning's summary, as the provider's SDK writes it.
    pub fn summary(&self) -> &'static str {
        match self.sdk {
            Sdk::V2 => "Argument is deprecated",
            Sdk::Framework => "Attribute Deprecated",
        }
    }

    /// Whether a configured value draws the warning: a value that is not null and is known
    /// (wholly, for SDKv2, which skips validating a value with an unknown part; at the top,
    /// for the framework).
    pub fn applies_to(&self, v: &Value) -> bool {
        let v = v.unmark().0;
        let known = match self.sdk {
            Sdk::V2 => !v.contains_unknown(),
            Sdk::Framework => !v.is_unknown(),
        };
        known && !v.is_null()
    }
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
    /// A whole number no less than this (`int64validator.AtLeast`).
    AtLeast(f64),
    /// A duration as `time_sleep` takes it: a number immediately followed by `ms`, `s`, `m` or
    /// `h` (the provider's `stringvalidator.RegexMatches`), and at most `max_secs` seconds,
    /// atoll's bound: a pull request chooses how long an apply waits.
    Duration { max_secs: f64 },
    /// A string matching `pattern` (SDKv2's `validation.StringMatch`); `expected` says what
    /// it should be, in the diagnostic.
    Matches {
        pattern: &'static str,
        expected: &'static str,
    },
    /// One of these strings, or one matching `pattern` (bpg's CPU type: a known model or
    /// `custom-<name>`).
    OneOfOrMatches {
        allowed: &'static [&'static str],
        pattern: &'static str,
    },
    /// Every element of a list of strings one of these (`listvalidator.ValueStringsAre` with
    /// `stringvalidator.OneOf`).
    EachOneOf(&'static [&'static str]),
    /// Every element of a list of strings at least one character long
    /// (`stringvalidator.LengthAtLeast(1)` on each).
    EachNotEmpty,
}

/// The longest an apply waits for `time_sleep` resources, in all: a pull request chooses it.
pub const MAX_SLEEP_SECS: f64 = 600.0;

/// A `time_sleep` duration in seconds: a number immediately followed by `ms`, `s`, `m` or `h`
/// (`^[0-9]+(\.[0-9]+)?(ms|s|m|h)$`, the provider's validator); `None` when it is not one.
pub fn sleep_secs(text: &str) -> Option<f64> {
    let (number, scale) = [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .into_iter()
        .find_map(|(unit, scale)| Some((text.strip_suffix(unit)?, scale)))?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, "0"));
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    number.parse::<f64>().ok().map(|n| n * scale)
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

/// What atoll cannot do (yet, or on principle) in a resource it supports, refused where it
/// is written, so `validate` refuses exactly what `plan` would: the reason and the next step
/// for one block or argument of `type_name` (`clone`, `kvm_arguments`, `disk.file_id`).
pub fn refusal(type_name: &str, name: &str) -> Option<&'static str> {
    const VM: &str = "proxmox_virtual_environment_vm";
    match (type_name, name) {
        (VM, "kvm_arguments") => Some(
            "raw QEMU arguments (PVE's `args`) can be set only by root@pam, and a pull request \
             must never choose what the hypervisor runs; remove the argument and use the VM's \
             typed arguments instead",
        ),
        (VM, "amd_sev") => Some(
            "AMD SEV can be set only by root@pam, and atoll works with an API token; remove \
             the block, or set it once by hand on the node",
        ),
        (VM, "cpu.architecture") => Some(
            "the CPU architecture can be set only by root@pam, and atoll works with an API \
             token; remove the argument (PVE uses the node's architecture)",
        ),
        (VM, "disk.file_id") => Some(
            "bpg imports this disk over SSH (`qm disk import`), which atoll never does; use \
             `import_from` with the same file id, and Proxmox VE imports the image itself",
        ),
        ("proxmox_virtual_environment_container", "idmap") => Some(
            "idmap blocks are raw `lxc.idmap` entries, which Proxmox VE's API never writes, \
             not even for root@pam (bpg edits /etc/pve/lxc/<vm_id>.conf over SSH, which atoll \
             never does); remove the idmap blocks and add the `lxc.idmap:` lines to that file \
             by hand as root: atoll leaves raw lxc entries alone",
        ),
        ("proxmox_virtual_environment_user" | "proxmox_virtual_environment_group", "acl") => Some(
            "the inline acl block is deprecated by bpg, which no longer reads it back from                  the cluster; write each entry as a proxmox_acl resource (path, role_id and                  user_id or group_id) instead",
        ),
        _ => None,
    }
}

/// What atoll plans and applies but Proxmox VE may refuse for want of privileges: a warning
/// where the block is written, with the reason and the way that needs none.
pub fn caution(type_name: &str, name: &str) -> Option<&'static str> {
    match (type_name, name) {
        ("proxmox_virtual_environment_vm", "hostpci") => Some(
            "passing a host PCI device through by its id (`id`) needs root@pam, so Proxmox VE \
             refuses it from atoll's API token at apply; use a resource mapping (`mapping`), \
             which needs only the Mapping.Use privilege on it",
        ),
        ("proxmox_virtual_environment_vm", "usb") => Some(
            "passing a host USB device through by its id (`host`) needs root@pam, so Proxmox VE \
             refuses it from atoll's API token at apply; use a resource mapping (`mapping`), \
             which needs only the Mapping.Use privilege on it",
        ),
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
        ("local_command", true) => Some(
            "it runs a command on the machine that runs Terraform, and nothing a pull request \
             chooses runs on atoll's server; compute the value in Terraform's language or pass it \
             as a variable",
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
        "proxmox_virtual_environment_vm" => Some(vm()),
        "proxmox_download_file" => Some(download_file("proxmox_download_file")),
        "proxmox_virtual_environment_download_file" => {
            Some(download_file("proxmox_virtual_environment_download_file"))
        }
        "proxmox_oci_image" => Some(oci_image("proxmox_oci_image")),
        "proxmox_virtual_environment_oci_image" => {
            Some(oci_image("proxmox_virtual_environment_oci_image"))
        }
        "proxmox_virtual_environment_pool" => Some(pool()),
        "proxmox_virtual_environment_firewall_alias" => Some(firewall_alias()),
        "proxmox_virtual_environment_firewall_ipset" => Some(firewall_ipset()),
        "proxmox_virtual_environment_firewall_options" => Some(firewall_options()),
        "proxmox_virtual_environment_firewall_rules" => Some(firewall_rules()),
        "proxmox_virtual_environment_cluster_firewall" => Some(cluster_firewall()),
        "proxmox_virtual_environment_cluster_firewall_security_group" => Some(security_group()),
        "proxmox_node_firewall" => Some(node_firewall("proxmox_node_firewall")),
        "proxmox_virtual_environment_dns" => Some(dns()),
        "proxmox_virtual_environment_time" => Some(time()),
        "proxmox_virtual_environment_node_firewall" => {
            Some(node_firewall("proxmox_virtual_environment_node_firewall"))
        }
        "proxmox_virtual_environment_file" => Some(file("proxmox_virtual_environment_file")),
        "proxmox_file" => Some(file("proxmox_file")),
        "random_password" => Some(random(true)),
        "random_string" => Some(random(false)),
        "tls_private_key" => Some(tls_private_key()),
        "tls_self_signed_cert" => Some(tls_self_signed_cert()),
        "tls_cert_request" => Some(tls_cert_request()),
        "tls_locally_signed_cert" => Some(tls_locally_signed_cert()),
        "random_id" => Some(random_id()),
        "random_integer" => Some(random_integer()),
        "random_uuid" => Some(random_uuid()),
        "random_bytes" => Some(random_bytes()),
        "random_shuffle" => Some(random_shuffle()),
        "random_pet" => Some(random_pet()),
        "time_static" => Some(time_static()),
        "time_offset" => Some(time_offset()),
        "time_rotating" => Some(time_rotating()),
        "time_sleep" => Some(time_sleep()),
        "null_resource" => Some(null_resource()),
        "terraform_data" => Some(terraform_data()),
        t if network::NAMES.contains(&t) => network::NAMES
            .iter()
            .find(|n| **n == t)
            .and_then(|n| network::resource(n)),
        t if cluster::TYPES.contains(&t) => cluster::resource(t),
        t if t.contains("_sdn_") => sdn::resource(t),
        "proxmox_virtual_environment_user" => Some(access::user()),
        "proxmox_virtual_environment_group" => Some(access::group()),
        "proxmox_virtual_environment_role" => Some(access::role()),
        "proxmox_acl" | "proxmox_virtual_environment_acl" => {
            access::resource_named(type_name, access::acl)
        }
        "proxmox_user_token" | "proxmox_virtual_environment_user_token" => {
            access::resource_named(type_name, access::user_token)
        }
        "proxmox_pool_membership" | "proxmox_virtual_environment_pool_membership" => {
            access::resource_named(type_name, access::pool_membership)
        }
        _ => None,
    }
}

/// The long names bpg replaced with `proxmox_*` ones and deprecated (the "Deprecated: Use ...
/// instead" banner of its documentation, `fwprovider/migration`), without the
/// `proxmox_virtual_environment_` prefix.
const RENAMED: &[&str] = &[
    "acl",
    "acme_account",
    "acme_certificate",
    "acme_dns_plugin",
    "apt_repository",
    "apt_standard_repository",
    "cloned_vm",
    "cluster_options",
    "download_file",
    "hagroup",
    "hardware_mapping_dir",
    "hardware_mapping_pci",
    "hardware_mapping_usb",
    "haresource",
    "harule",
    "metrics_server",
    "network_linux_bridge",
    "network_linux_vlan",
    "node_firewall",
    "oci_image",
    "pool_membership",
    "realm_ldap",
    "realm_openid",
    "realm_sync",
    "replication",
    "sdn_applier",
    "sdn_fabric_node_openfabric",
    "sdn_fabric_node_ospf",
    "sdn_fabric_openfabric",
    "sdn_fabric_ospf",
    "sdn_subnet",
    "sdn_vnet",
    "sdn_zone_evpn",
    "sdn_zone_qinq",
    "sdn_zone_simple",
    "sdn_zone_vlan",
    "sdn_zone_vxlan",
    "storage_cifs",
    "storage_directory",
    "storage_lvm",
    "storage_lvmthin",
    "storage_nfs",
    "storage_pbs",
    "storage_zfspool",
    "user_token",
];

/// bpg's deprecation of a whole resource type (a long `proxmox_virtual_environment_*` name
/// its `proxmox_*` name replaces): writing one is a warning with bpg's message.
pub fn resource_deprecation(type_name: &str) -> Option<String> {
    let rest = type_name.strip_prefix("proxmox_virtual_environment_")?;
    RENAMED.contains(&rest).then(|| {
        format!(
            "Use \"proxmox_{rest}\" instead. This resource / data source will be removed in v1.0."
        )
    })
}

/// The planned value of what a provider computes from the other arguments at plan time, as
/// its `PlanResourceChange` does, given an instance's evaluated attributes. `terraform_data`:
/// `output` is `input` when that is null, and otherwise unknown with `input`'s type, so what
/// reads it type-checks as in Terraform; the value itself is known once applied (atoll fills it
/// in from state). An `input` holding a sensitive value makes all of `output` sensitive, where
/// Terraform loses the mark (hashicorp/terraform#35609): an unknown cannot carry a mark on one
/// of its parts, and the applied value is marked the same way, so a plan and the plan after
/// apply agree. `random_password.number` and `random_string.number`, when set, give `numeric`
/// their value.
pub fn planned(type_name: &str, attributes: Value) -> Value {
    let Value::Object(mut fields) = attributes else {
        return attributes;
    };
    if type_name == "terraform_data" {
        let input = fields.get("input").cloned().unwrap_or_else(Value::null);
        let output = if input.is_null() {
            input
        } else {
            let sensitive = input.contains_sensitive();
            Value::Unknown(input.ty()).mark(sensitive)
        };
        fields.insert("output".to_owned(), output);
    }
    // `number`, the deprecated name of `numeric`: when set, `numeric` is planned as it is.
    if matches!(type_name, "random_password" | "random_string")
        && let Some(number) = fields
            .get("number")
            .filter(|v| matches!(v.unmark().0, Value::Bool(_)))
            .cloned()
    {
        fields.insert("numeric".to_owned(), number);
    }
    access::planned(type_name, &mut fields);
    Value::Object(fields)
}

/// Every resource type atoll supports.
pub const SUPPORTED: &[&str] = &[
    "proxmox_virtual_environment_container",
    "proxmox_virtual_environment_vm",
    "proxmox_download_file",
    "proxmox_virtual_environment_download_file",
    "proxmox_virtual_environment_file",
    "proxmox_file",
    "proxmox_oci_image",
    "proxmox_virtual_environment_oci_image",
    "proxmox_virtual_environment_pool",
    "proxmox_virtual_environment_firewall_alias",
    "proxmox_virtual_environment_firewall_ipset",
    "proxmox_virtual_environment_firewall_options",
    "proxmox_virtual_environment_firewall_rules",
    "proxmox_virtual_environment_cluster_firewall",
    "proxmox_virtual_environment_cluster_firewall_security_group",
    "proxmox_node_firewall",
    "proxmox_virtual_environment_node_firewall",
    "proxmox_virtual_environment_dns",
    "proxmox_virtual_environment_time",
    "random_password",
    "random_string",
    "random_id",
    "random_integer",
    "random_uuid",
    "random_bytes",
    "random_shuffle",
    "random_pet",
    "tls_private_key",
    "tls_self_signed_cert",
    "tls_cert_request",
    "tls_locally_signed_cert",
    "time_static",
    "time_offset",
    "time_rotating",
    "time_sleep",
    "null_resource",
    "terraform_data",
    "proxmox_network_linux_bridge",
    "proxmox_virtual_environment_network_linux_bridge",
    "proxmox_network_linux_vlan",
    "proxmox_virtual_environment_network_linux_vlan",
    "proxmox_network_linux_bond",
    "proxmox_virtual_environment_hosts",
    "proxmox_cluster_options",
    "proxmox_virtual_environment_cluster_options",
    "proxmox_hagroup",
    "proxmox_virtual_environment_hagroup",
    "proxmox_haresource",
    "proxmox_virtual_environment_haresource",
    "proxmox_harule",
    "proxmox_virtual_environment_harule",
    "proxmox_replication",
    "proxmox_virtual_environment_replication",
    "proxmox_metrics_server",
    "proxmox_virtual_environment_metrics_server",
    "proxmox_sdn_zone_simple",
    "proxmox_sdn_zone_vlan",
    "proxmox_sdn_zone_qinq",
    "proxmox_sdn_zone_vxlan",
    "proxmox_sdn_zone_evpn",
    "proxmox_sdn_vnet",
    "proxmox_sdn_subnet",
    "proxmox_sdn_applier",
    "proxmox_virtual_environment_sdn_zone_simple",
    "proxmox_virtual_environment_sdn_zone_vlan",
    "proxmox_virtual_environment_sdn_zone_qinq",
    "proxmox_virtual_environment_sdn_zone_vxlan",
    "proxmox_virtual_environment_sdn_zone_evpn",
    "proxmox_virtual_environment_sdn_vnet",
    "proxmox_virtual_environment_sdn_subnet",
    "proxmox_virtual_environment_sdn_applier",
    "proxmox_virtual_environment_user",
    "proxmox_virtual_environment_group",
    "proxmox_virtual_environment_role",
    "proxmox_acl",
    "proxmox_virtual_environment_acl",
    "proxmox_user_token",
    "proxmox_virtual_environment_user_token",
    "proxmox_pool_membership",
    "proxmox_virtual_environment_pool_membership",
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

/// bpg's `proxmox_oci_image` (`fwprovider/nodes/resource_oci_image.go`): a registry image
/// pulled into a storage's `vztmpl` content; `reference`, `file_name`, the node and the
/// datastore force a new pull.
fn oci_image(type_name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        ro("size", n()),
        fnew(req("datastore_id", s())),
        fnew(req("node_name", s())),
        fnew(req("reference", s())),
        fnew(oc("file_name", s())),
        db("overwrite", true),
        db("overwrite_unmanaged", false),
        dn("upload_timeout", 600.0),
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
    use std::collections::BTreeMap;

    use super::*;
    use crate::value::Type;

    #[test]
    fn a_deprecation_is_worded_by_its_sdk_and_warns_only_for_a_known_value_set() {
        let v2 = Deprecation {
            sdk: Sdk::V2,
            message: "m",
        };
        let framework = Deprecation {
            sdk: Sdk::Framework,
            message: "m",
        };
        assert_eq!(v2.summary(), "Argument is deprecated");
        assert_eq!(framework.summary(), "Attribute Deprecated");
        for d in [v2, framework] {
            assert!(d.applies_to(&Value::Bool(false)));
            assert!(d.applies_to(&Value::Bool(false).mark(true)));
            assert!(!d.applies_to(&Value::Null(Type::Bool)));
            assert!(!d.applies_to(&Value::Unknown(Type::Bool)));
        }
        // SDKv2 skips a value with an unknown part; the framework looks at the top only.
        let partly = Value::List(Type::String, vec![Value::Unknown(Type::String)]);
        assert!(!v2.applies_to(&partly));
        assert!(framework.applies_to(&partly));
    }

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

    /// Loads `tf` as a project's `main.tf`, with `known` values from state.
    fn load(tf: &str, known: &crate::Known) -> crate::Loaded {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("main.tf"), tf).expect("main.tf");
        crate::load_with_known(
            &crate::Input {
                checkout: dir.path().to_path_buf(),
                project_dir: ".".into(),
                workspace: "default".to_owned(),
                vars: Vec::new(),
                limits: crate::Limits::default(),
                modules: Default::default(),
            },
            known,
        )
    }

    const DATA: &str = r#"
variable "pw" {
  type      = string
  default   = "hunter2"
  sensitive = true
}
resource "terraform_data" "d" {
  input            = { name = "a", ports = [22, 80], secret = var.pw }
  triggers_replace = [1, "two"]
}
output "port" {
  value     = terraform_data.d.output.ports[1]
  sensitive = true
}
"#;

    #[test]
    fn terraform_data_plans_its_output_as_an_unknown_of_the_inputs_type() {
        let loaded = load(DATA, &crate::Known::new());
        assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
        let attrs = &loaded.resources[0].attributes;
        let input = attrs.get_attr("input").expect("input");
        let output = attrs.get_attr("output").expect("output");
        assert!(output.is_unknown() && output.contains_sensitive());
        assert_eq!(output.ty(), input.ty());
        // The trigger keeps the tuple it was written as.
        let triggers = attrs.get_attr("triggers_replace").expect("triggers");
        assert_eq!(
            triggers.ty(),
            crate::Type::Tuple(Box::new(vec![crate::Type::Number, crate::Type::String]))
        );
        let port = loaded.outputs["port"].value.unmark().0;
        assert_eq!(port, &Value::Unknown(crate::Type::Number));
        // A null input is a null output, as Terraform plans it.
        let none = load(
            "resource \"terraform_data\" \"n\" {}\n",
            &crate::Known::new(),
        );
        let attrs = &none.resources[0].attributes;
        assert!(attrs.get_attr("output").is_some_and(Value::is_null));
        assert!(attrs.get_attr("id").is_some_and(Value::is_unknown));
    }

    #[test]
    fn terraform_data_output_is_the_stored_value_once_applied() {
        let first = load(DATA, &crate::Known::new());
        let input = first.resources[0].attributes.get_attr("input").cloned();
        let stored = input.expect("input").to_stored().expect("storable");
        // What the engine stores: a sensitive input makes the whole output sensitive.
        let output = Value::from_stored(&stored).expect("stored").mark(true);
        let known = crate::Known::from([(
            "terraform_data.d".to_owned(),
            BTreeMap::from([
                ("output".to_owned(), output),
                ("id".to_owned(), Value::string("uuid")),
            ]),
        )]);
        let loaded = load(DATA, &known);
        let port = &loaded.outputs["port"].value;
        assert_eq!(port.unmark(), (&Value::Number(80.0), true));
        let attrs = &loaded.resources[0].attributes;
        let secret = attrs
            .get_attr("output")
            .and_then(|o| o.get_attr("secret"))
            .expect("secret");
        assert_eq!(secret.unmark(), (&Value::string("hunter2"), true));
    }

    #[test]
    fn terraform_data_refuses_output_and_id_in_its_configuration() {
        let loaded = load(
            "resource \"terraform_data\" \"d\" {\n  output = 1\n}\n",
            &crate::Known::new(),
        );
        assert!(loaded.has_errors());
        assert!(loaded.render_diagnostics().contains("read-only"));
    }

    #[test]
    fn every_type_named_supported_has_a_schema() {
        for name in SUPPORTED {
            assert!(resource(name).is_some(), "{name}");
        }
    }

    #[test]
    fn download_file_is_known_under_both_names() {
        assert!(resource("proxmox_download_file").is_some());
        assert!(resource("proxmox_virtual_environment_download_file").is_some());
        assert!(resource("proxmox_virtual_environment_file").is_some());
        assert!(resource("proxmox_file").is_some());
    }
}
