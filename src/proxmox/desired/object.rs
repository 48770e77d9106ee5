//! Pools and the firewall: bpg's resources to PVE objects ([`DesiredObject`]), one table
//! per resource type naming the object, where it lives, and each argument's PVE parameter.

use std::collections::BTreeMap;

use super::values::{Marks, Object, bit, blocks, num, object};
use super::{DesiredError, lifecycle, must_know};
use crate::proxmox::plan::{DesiredObject, ObjectEntry};
use crate::proxmox::types::{GuestKind, ObjectId, ObjectKind, Scope, VmId};
use tfconfig::ResourceInstance;

/// How an argument becomes a PVE parameter.
#[derive(Clone, Copy)]
pub(super) enum Conv {
    Text,
    /// `true`/`false` as `1`/`0`.
    Flag,
    Number,
    /// A list of names as PVE keeps them: trimmed, sorted, space-separated (bridge ports, bond
    /// slaves); an absent list is an empty value.
    Words,
    /// An RFC 3339 date as epoch seconds (`expire`).
    Epoch,
    /// A set of strings as a sorted, comma-separated list (`privs`, `groups`), even empty.
    Set,
}

/// Where the resource's object lives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Cluster,
    /// `node_name`, required.
    Node,
    /// `node_name` with `vm_id` or `container_id`, required.
    Guest,
    /// A guest's when `vm_id` or `container_id` is set; else the node's (`node_name`) when
    /// `node_level`, else the cluster's.
    Any {
        node_level: bool,
    },
}

struct Spec {
    kind: ObjectKind,
    place: Place,
    /// The argument naming the object.
    name: Option<&'static str>,
    /// `(bpg argument, PVE parameter, conversion)`.
    params: &'static [(&'static str, &'static str, Conv)],
    /// The block type holding the entries.
    entries: Option<&'static str>,
}

const RULE_BLOCK: Option<&str> = Some("rule");

/// The most entries (rules, IP set addresses) one object may list: each costs one or two
/// Proxmox VE requests at apply, and a pull request chooses how many there are.
const MAX_ENTRIES: usize = 1_000;

fn spec(resource_type: &str) -> Option<Spec> {
    use Conv::{Flag, Number, Text};
    let short = resource_type
        .strip_prefix("proxmox_virtual_environment_")
        .or_else(|| resource_type.strip_prefix("proxmox_"))?;
    Some(match short {
        "pool" => Spec {
            kind: ObjectKind::Pool,
            place: Place::Cluster,
            name: Some("pool_id"),
            params: &[("comment", "comment", Text)],
            entries: None,
        },
        "firewall_alias" => Spec {
            kind: ObjectKind::Alias,
            place: Place::Any { node_level: false },
            name: Some("name"),
            params: &[("cidr", "cidr", Text), ("comment", "comment", Text)],
            entries: None,
        },
        "firewall_ipset" => Spec {
            kind: ObjectKind::IpSet,
            place: Place::Any { node_level: false },
            name: Some("name"),
            params: &[("comment", "comment", Text)],
            entries: Some("cidr"),
        },
        "firewall_options" => Spec {
            kind: ObjectKind::FirewallOptions,
            place: Place::Guest,
            name: None,
            params: &[
                ("dhcp", "dhcp", Flag),
                ("enabled", "enable", Flag),
                ("ipfilter", "ipfilter", Flag),
                ("log_level_in", "log_level_in", Text),
                ("log_level_out", "log_level_out", Text),
                ("macfilter", "macfilter", Flag),
                ("ndp", "ndp", Flag),
                ("input_policy", "policy_in", Text),
                ("output_policy", "policy_out", Text),
                ("radv", "radv", Flag),
            ],
            entries: None,
        },
        "firewall_rules" => Spec {
            kind: ObjectKind::FirewallRules,
            place: Place::Any { node_level: true },
            name: None,
            params: &[],
            entries: RULE_BLOCK,
        },
        "cluster_firewall" => Spec {
            kind: ObjectKind::FirewallOptions,
            place: Place::Cluster,
            name: None,
            params: &[
                ("enabled", "enable", Flag),
                ("ebtables", "ebtables", Flag),
                ("input_policy", "policy_in", Text),
                ("output_policy", "policy_out", Text),
                ("forward_policy", "policy_forward", Text),
            ],
            entries: None,
        },
        "cluster_firewall_security_group" => Spec {
            kind: ObjectKind::SecurityGroup,
            place: Place::Cluster,
            name: Some("name"),
            params: &[("comment", "comment", Text)],
            entries: RULE_BLOCK,
        },
        "node_firewall" => Spec {
            kind: ObjectKind::FirewallOptions,
            place: Place::Node,
            name: None,
            params: &[
                ("enabled", "enable", Flag),
                ("log_level_forward", "log_level_forward", Text),
                ("log_level_in", "log_level_in", Text),
                ("log_level_out", "log_level_out", Text),
                ("ndp", "ndp", Flag),
                ("nf_conntrack_max", "nf_conntrack_max", Number),
                (
                    "nf_conntrack_tcp_timeout_established",
                    "nf_conntrack_tcp_timeout_established",
                    Number,
                ),
                ("nftables", "nftables", Flag),
                ("nosmurfs", "nosmurfs", Flag),
                ("smurf_log_level", "smurf_log_level", Text),
                ("tcp_flags_log_level", "tcp_flags_log_level", Text),
            ],
            entries: None,
        },
        "dns" => Spec {
            kind: ObjectKind::NodeDns,
            place: Place::Node,
            name: None,
            params: &[("domain", "search", Text)],
            entries: None,
        },
        "time" => Spec {
            kind: ObjectKind::NodeTime,
            place: Place::Node,
            name: None,
            params: &[("time_zone", "timezone", Text)],
            entries: None,
        },
        "network_linux_bridge" => Spec {
            kind: ObjectKind::LinuxBridge,
            place: Place::Node,
            name: Some("name"),
            params: super::network::BRIDGE,
            entries: None,
        },
        "network_linux_vlan" => Spec {
            kind: ObjectKind::LinuxVlan,
            place: Place::Node,
            name: Some("name"),
            params: super::network::VLAN,
            entries: None,
        },
        "network_linux_bond" => Spec {
            kind: ObjectKind::LinuxBond,
            place: Place::Node,
            name: Some("name"),
            params: super::network::BOND,
            entries: None,
        },
        "user" => Spec {
            kind: ObjectKind::User,
            place: Place::Cluster,
            name: Some("user_id"),
            params: &[
                ("comment", "comment", Text),
                ("email", "email", Text),
                ("enabled", "enable", Flag),
                ("expiration_date", "expire", Conv::Epoch),
                ("first_name", "firstname", Text),
                ("groups", "groups", Conv::Set),
                ("keys", "keys", Text),
                ("last_name", "lastname", Text),
            ],
            entries: None,
        },
        "group" => Spec {
            kind: ObjectKind::Group,
            place: Place::Cluster,
            name: Some("group_id"),
            params: &[("comment", "comment", Text)],
            entries: None,
        },
        "role" => Spec {
            kind: ObjectKind::Role,
            place: Place::Cluster,
            name: Some("role_id"),
            params: &[("privileges", "privs", Conv::Set)],
            entries: None,
        },
        "acl" => Spec {
            kind: ObjectKind::Acl,
            place: Place::Cluster,
            name: None,
            params: &[("propagate", "propagate", Flag)],
            entries: None,
        },
        "user_token" => Spec {
            kind: ObjectKind::UserToken,
            place: Place::Cluster,
            name: None,
            params: &[
                ("comment", "comment", Text),
                ("expiration_date", "expire", Conv::Epoch),
                ("privileges_separation", "privsep", Flag),
            ],
            entries: None,
        },
        "pool_membership" => Spec {
            kind: ObjectKind::PoolMember,
            place: Place::Cluster,
            name: None,
            params: &[],
            entries: None,
        },
        _ => return None,
    })
}

/// Whether atoll manages `resource_type` as a pool or firewall object.
pub(super) fn is_object(resource_type: &str) -> bool {
    spec(resource_type).is_some() || super::cluster::is_cluster(resource_type)
}

/// A known value or why it must be known: what an object is named by, and what it sets,
/// must be known when planning (the paths and the comparison depend on them).
struct Reader<'a> {
    address: &'a str,
    attrs: &'a Object,
}

impl Reader<'_> {
    fn text(&self, attrs: &Object, name: &str, at: &str) -> Result<Option<String>, DesiredError> {
        let mut marks = Marks::default();
        let value = marks.text(attrs.get(name));
        if marks.unknown {
            return Err(must_know(self.address, &format!("{at}{name}")));
        }
        Ok(value.filter(|v| !v.is_empty()))
    }

    fn param(
        &self,
        attrs: &Object,
        name: &str,
        conv: Conv,
        at: &str,
    ) -> Result<Option<String>, DesiredError> {
        let mut marks = Marks::default();
        let value = match conv {
            Conv::Text => marks.text(attrs.get(name)).filter(|v| !v.is_empty()),
            Conv::Flag => marks.flag(attrs.get(name)).map(|f| bit(f).to_owned()),
            Conv::Number => marks.number(attrs.get(name)).map(num),
            Conv::Words => {
                let mut words: Vec<String> = marks
                    .texts(attrs.get(name))
                    .iter()
                    .map(|w| w.trim().to_owned())
                    .filter(|w| !w.is_empty())
                    .collect();
                words.sort();
                words.dedup();
                Some(words.join(" "))
            }
            Conv::Epoch => match marks.text(attrs.get(name)).filter(|v| !v.is_empty()) {
                Some(date) => Some(super::access::epoch(name, &date).map_err(|e| self.invalid(e))?),
                None => None,
            },
            Conv::Set => {
                let items = marks.texts(attrs.get(name));
                Some(super::access::joined(name, items).map_err(|e| self.invalid(e))?)
            }
        };
        if marks.unknown {
            return Err(must_know(self.address, &format!("{at}{name}")));
        }
        Ok(value)
    }

    fn invalid(&self, why: impl Into<String>) -> DesiredError {
        DesiredError::Invalid {
            address: self.address.to_owned(),
            why: why.into(),
        }
    }

    fn scope(&self, place: Place) -> Result<Scope, DesiredError> {
        let named = self.text(self.attrs, "node_name", "")?;
        let has_node = named.is_some();
        let node = || {
            let node = named
                .clone()
                .ok_or_else(|| self.invalid("node_name is required"))?;
            node.parse()
                .map_err(|e| self.invalid(format!("node_name: {e}")))
        };
        let guest = self.guest()?;
        match (place, guest) {
            (Place::Cluster, _) | (Place::Any { node_level: false }, None) => Ok(Scope::Cluster),
            (Place::Node, _) => Ok(Scope::Node { node: node()? }),
            (Place::Any { node_level: true }, None) if has_node => {
                Ok(Scope::Node { node: node()? })
            }
            (Place::Any { .. }, None) => Ok(Scope::Cluster),
            (Place::Guest, None) => {
                Err(self.invalid("exactly one of vm_id or container_id must be set"))
            }
            (Place::Guest | Place::Any { .. }, Some((kind, vm_id))) => Ok(Scope::Guest {
                node: node()?,
                kind,
                vm_id,
            }),
        }
    }

    fn guest(&self) -> Result<Option<(GuestKind, VmId)>, DesiredError> {
        let vm = self.param(self.attrs, "vm_id", Conv::Number, "")?;
        let ct = self.param(self.attrs, "container_id", Conv::Number, "")?;
        let (kind, id) = match (vm, ct) {
            (Some(_), Some(_)) => {
                return Err(self.invalid("set vm_id or container_id, not both"));
            }
            (Some(id), None) => (GuestKind::Qemu, id),
            (None, Some(id)) => (GuestKind::Lxc, id),
            (None, None) => return Ok(None),
        };
        let id = id
            .parse::<VmId>()
            .map_err(|e| self.invalid(e.to_string()))?;
        Ok(Some((kind, id)))
    }
}

/// The desired object of one resource instance.
pub(super) fn build(resource: &ResourceInstance) -> Result<DesiredObject, DesiredError> {
    if super::cluster::is_cluster(&resource.resource_type) {
        return super::cluster::build(resource);
    }
    let address = &resource.address;
    let spec = spec(&resource.resource_type).ok_or_else(|| DesiredError::Invalid {
        address: address.clone(),
        why: "not a pool or firewall resource".to_owned(),
    })?;
    let attrs = object(&resource.attributes).ok_or_else(|| must_know(address, "the resource"))?;
    let reader = Reader { address, attrs };
    let scope = reader.scope(spec.place)?;
    let name = match spec.name {
        Some(arg) => Some(
            reader
                .text(attrs, arg, "")?
                .ok_or_else(|| reader.invalid(format!("{arg} is required")))?,
        ),
        None => {
            let text = |arg: &str| reader.text(attrs, arg, "");
            super::access::composite_name(spec.kind, &text).map_err(|e| match e {
                super::access::Refused::Desired(e) => e,
                super::access::Refused::Invalid(why) => reader.invalid(why),
            })?
        }
    };
    let id = ObjectId::new(spec.kind, scope, name.as_deref())
        .map_err(|e| reader.invalid(e.to_string()))?;
    let mut fields = BTreeMap::new();
    let mut labels = BTreeMap::new();
    for (arg, key, conv) in spec.params {
        let value = match reader.param(attrs, arg, *conv, "") {
            // an optional argument the provider computes is unknown until set: not asked for
            Err(_)
                if super::network::COMPUTED.contains(arg) && spec.kind.network_type().is_some() =>
            {
                None
            }
            other => other?,
        };
        if let Some(value) = value {
            fields.insert((*key).to_owned(), value);
        }
        labels.insert((*key).to_owned(), (*arg).to_owned());
    }
    if resource.resource_type.ends_with("cluster_firewall")
        && let Some(limit) = log_ratelimit(&reader)?
    {
        fields.insert("log_ratelimit".to_owned(), limit);
    }
    if spec.kind == ObjectKind::NodeDns {
        dns_servers(&reader, &mut fields, &mut labels)?;
    }
    if spec.kind.network_type().is_some() {
        super::network::finish(&id, &mut fields).map_err(|why| reader.invalid(why))?;
    }
    super::access::check(spec.kind, &fields).map_err(|why| reader.invalid(why))?;
    let secrets = super::access::write_only(spec.kind, reader.text(attrs, "password", "")?)
        .map_err(|why| reader.invalid(why))?;
    let entries = match spec.entries {
        Some(block) => {
            labels.insert("entries".to_owned(), block.to_owned());
            let list = blocks(attrs, block);
            if list.len() > MAX_ENTRIES {
                return Err(reader.invalid(format!(
                    "{} {block} blocks are more than atoll applies to one object \
                     ({MAX_ENTRIES}); split them, e.g. into security groups or IP sets",
                    list.len()
                )));
            }
            let entries = list
                .iter()
                .enumerate()
                .map(|(i, b)| match spec.kind {
                    ObjectKind::IpSet => ipset_entry(&reader, b, i),
                    _ => rule_entry(&reader, b, &format!("{block}[{i}].")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Some(entries)
        }
        None => None,
    };
    Ok(DesiredObject {
        address: address.clone(),
        resource_type: resource.resource_type.clone(),
        id,
        fields,
        entries,
        labels,
        lifecycle: lifecycle(&resource.lifecycle, None),
        uses: Vec::new(),
        bridges: Vec::new(),
        secrets,
    })
}

/// A node's DNS `servers` as PVE's `dns1`..`dns3`; bpg allows at most three.
fn dns_servers(
    reader: &Reader<'_>,
    fields: &mut BTreeMap<String, String>,
    labels: &mut BTreeMap<String, String>,
) -> Result<(), DesiredError> {
    let mut marks = Marks::default();
    let servers = marks.texts(reader.attrs.get("servers"));
    if marks.unknown {
        return Err(must_know(reader.address, "servers"));
    }
    if servers.len() > 3 {
        return Err(reader.invalid("servers: Proxmox VE keeps at most 3 DNS servers"));
    }
    for (i, server) in servers.into_iter().enumerate() {
        let key = format!("dns{}", i + 1);
        labels.insert(key.clone(), format!("servers[{i}]"));
        fields.insert(key, server);
    }
    Ok(())
}

/// The cluster firewall's `log_ratelimit` block as PVE's property string.
fn log_ratelimit(reader: &Reader<'_>) -> Result<Option<String>, DesiredError> {
    let Some(limit) = blocks(reader.attrs, "log_ratelimit").into_iter().next() else {
        return Ok(None);
    };
    let mut parts = Vec::new();
    let at = "log_ratelimit.";
    if let Some(burst) = reader.param(limit, "burst", Conv::Number, at)? {
        parts.push(format!("burst={burst}"));
    }
    if let Some(enable) = reader.param(limit, "enabled", Conv::Flag, at)? {
        parts.push(format!("enable={enable}"));
    }
    if let Some(rate) = reader.param(limit, "rate", Conv::Text, at)? {
        parts.push(format!("rate={rate}"));
    }
    Ok((!parts.is_empty()).then(|| parts.join(",")))
}

/// One `rule` block as PVE's rule parameters: a rule, or a security group's insertion
/// (`type=group`, `action=<group>`). `enable` is always sent: PVE disables a rule created
/// without it.
fn rule_entry(reader: &Reader<'_>, rule: &Object, at: &str) -> Result<ObjectEntry, DesiredError> {
    let mut entry = BTreeMap::new();
    let enabled = reader.param(rule, "enabled", Conv::Flag, at)?;
    entry.insert(
        "enable".to_owned(),
        enabled.unwrap_or_else(|| "1".to_owned()),
    );
    let copy = |names: &[&str], entry: &mut ObjectEntry| -> Result<(), DesiredError> {
        for name in names {
            if let Some(value) = reader.text(rule, name, at)? {
                entry.insert((*name).to_owned(), value);
            }
        }
        Ok(())
    };
    if let Some(group) = reader.text(rule, "security_group", at)? {
        entry.insert("type".to_owned(), "group".to_owned());
        entry.insert("action".to_owned(), group);
        copy(&["comment", "iface"], &mut entry)?;
        return Ok(entry);
    }
    copy(
        &[
            "type", "action", "comment", "dest", "dport", "iface", "log", "macro", "proto",
            "source", "sport",
        ],
        &mut entry,
    )?;
    for required in ["type", "action"] {
        if !entry.contains_key(required) {
            return Err(reader.invalid(format!(
                "{at}{required} is required in a rule that does not insert a security group"
            )));
        }
    }
    Ok(entry)
}

/// One `cidr` block of an IP set.
fn ipset_entry(reader: &Reader<'_>, block: &Object, i: usize) -> Result<ObjectEntry, DesiredError> {
    let at = format!("cidr[{i}].");
    let cidr = reader
        .text(block, "name", &at)?
        .ok_or_else(|| reader.invalid(format!("{at}name is required")))?;
    let mut entry = BTreeMap::from([("cidr".to_owned(), cidr)]);
    if let Some(comment) = reader.text(block, "comment", &at)? {
        entry.insert("comment".to_owned(), comment);
    }
    if reader.param(block, "nomatch", Conv::Flag, &at)?.as_deref() == Some("1") {
        entry.insert("nomatch".to_owned(), "1".to_owned());
    }
    Ok(entry)
}
