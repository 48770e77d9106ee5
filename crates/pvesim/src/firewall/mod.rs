//! The firewall configuration of the simulated cluster, as pve-firewall keeps it in
//! `cluster.fw`, `nodes/<node>/host.fw` and `firewall/<vmid>.fw`: options, rules, aliases,
//! ipsets and (cluster only) security groups. State is kept as PVE reads it back from those
//! files (names of groups and ipsets lower-cased, ipset entries sorted, `/32` dropped), and
//! every list carries the SHA-1 `digest` PVE computes over it.
//!
//! `rules`, `options` and `objects` hold the operations, each checking what PVE checks.

mod addr;
pub(crate) mod ipsets;
mod macros;
pub(crate) mod objects;
pub(crate) mod options;
pub(crate) mod rules;
pub(crate) mod spec;
mod tables;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use crate::model::GuestKind;

/// One rule, alias or ipset entry: its fields as strings, like the Perl hash it is in PVE.
pub(crate) type Entry = BTreeMap<String, String>;

/// One `.fw` file.
#[derive(Debug, Default, Clone)]
pub(crate) struct FwConf {
    pub(crate) options: BTreeMap<String, String>,
    pub(crate) rules: Vec<Entry>,
    /// By lower-cased name.
    pub(crate) aliases: BTreeMap<String, Entry>,
    /// By name (lower-cased), entries sorted by `cidr`.
    pub(crate) ipsets: BTreeMap<String, Vec<Entry>>,
    pub(crate) ipset_comments: BTreeMap<String, String>,
}

/// The firewall of the whole cluster.
#[derive(Debug, Default, Clone)]
pub(crate) struct Firewall {
    pub(crate) cluster: FwConf,
    /// Security groups (lower-cased names) and their rules.
    pub(crate) groups: BTreeMap<String, Vec<Entry>>,
    pub(crate) group_comments: BTreeMap<String, String>,
    pub(crate) hosts: BTreeMap<String, FwConf>,
    pub(crate) guests: BTreeMap<u32, FwConf>,
}

/// Which configuration a request addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    Cluster,
    Host(String),
    Guest(u32, GuestKind),
    /// The rules of one security group.
    Group(String),
}

impl Scope {
    /// pve-firewall's `rule_env`.
    pub(crate) fn env(&self) -> &'static str {
        match self {
            Self::Cluster => "cluster",
            Self::Host(_) => "host",
            Self::Guest(_, GuestKind::Qemu) => "vm",
            Self::Guest(_, GuestKind::Lxc) => "ct",
            Self::Group(_) => "group",
        }
    }
}

impl Firewall {
    /// The file a scope reads and writes (a group lives in the cluster file).
    pub(crate) fn conf(&self, scope: &Scope) -> Option<&FwConf> {
        match scope {
            Scope::Cluster | Scope::Group(_) => Some(&self.cluster),
            Scope::Host(node) => self.hosts.get(node),
            Scope::Guest(vmid, _) => self.guests.get(vmid),
        }
    }

    pub(crate) fn conf_mut(&mut self, scope: &Scope) -> &mut FwConf {
        match scope {
            Scope::Cluster | Scope::Group(_) => &mut self.cluster,
            Scope::Host(node) => self.hosts.entry(node.clone()).or_default(),
            Scope::Guest(vmid, _) => self.guests.entry(*vmid).or_default(),
        }
    }
}

/// `copy_list_with_digest`: SHA-1 over each entry's sorted `key:value` lines.
pub(crate) fn list_digest<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> String {
    let mut sha = Sha1::new();
    for entry in entries {
        for (k, v) in entry {
            sha.update(format!("{k}:{v}\n").as_bytes());
        }
    }
    hex::encode(sha.finalize())
}

/// `copy_opject_with_digest` over an options hash.
pub(crate) fn object_digest(object: &BTreeMap<String, String>) -> String {
    list_digest([object])
}

/// Keys PVE stores as numbers, rendered as JSON numbers.
fn numeric(key: &str) -> bool {
    matches!(
        key,
        "enable" | "ipversion" | "pos" | "nomatch" | "ebtables" | "dhcp" | "ndp" | "radv"
    ) || matches!(
        key,
        "macfilter"
            | "ipfilter"
            | "nosmurfs"
            | "tcpflags"
            | "log_nf_conntrack"
            | "nf_conntrack_allow_invalid"
            | "protection_synflood"
            | "nftables"
    ) || key.starts_with("nf_conntrack_max")
        || key.starts_with("nf_conntrack_tcp_timeout")
        || key.starts_with("protection_synflood_")
}

/// An entry as JSON, numbers where PVE has numbers.
pub(crate) fn render(entry: &Entry) -> Value {
    let map = entry
        .iter()
        .map(|(k, v)| {
            let value = match v.parse::<i64>() {
                Ok(n) if numeric(k) => json!(n),
                _ => json!(v),
            };
            (k.clone(), value)
        })
        .collect();
    Value::Object(map)
}

/// The list with the shared `digest` added to every entry.
pub(crate) fn render_list(entries: &[Entry]) -> Value {
    let digest = list_digest(entries);
    let list = entries
        .iter()
        .map(|e| {
            let mut v = render(e);
            v["digest"] = json!(digest);
            v
        })
        .collect();
    Value::Array(list)
}
