//! Data sources: what a configuration asks the cluster ([`DataRead`], listed in
//! [`crate::Loaded::data_reads`]), what the caller must read from Proxmox VE to answer it
//! ([`queries`]) and bpg's answer computed from what the caller read ([`answer`]). The caller
//! reads the cluster and loads again with the answers as known values
//! ([`crate::load_with_known`], keyed by the read's address), until nothing is left to read.
//!
//! Must not: read the cluster or anything else itself. An answer is a pure function of the
//! read's arguments and PVE's responses ([`Facts`]), so it is tested without Proxmox VE.

mod access;
mod ha;
mod json;
mod node;
mod pool;
mod sdn;
mod storage;
mod vm;

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Span};
use crate::value::Value;

/// One data source instance whose arguments are known and which has no answer yet.
#[derive(Clone, Debug, PartialEq)]
pub struct DataRead {
    /// `proxmox_virtual_environment_vms`, as written (bpg's `proxmox_*` alias included).
    pub data_type: String,
    /// Full address (`module.x.data.proxmox_virtual_environment_vms.templates["a"]`), the key
    /// of its answer.
    pub address: String,
    /// The evaluated arguments as an object, unset optional ones null.
    pub arguments: Value,
    /// The block, the subject of a failed read's diagnostic.
    pub subject: Span,
    /// `file:line` of the block, relative to the project directory.
    pub declared_at: String,
}

impl DataRead {
    /// The diagnostic of a read that failed, on the data block (the provider's error is the
    /// summary, as Terraform shows an SDKv2 `diag.Errorf`; a framework provider's has both).
    pub fn failed(&self, error: &ReadError) -> Diagnostic {
        Diagnostic::error(
            error.summary.clone(),
            error.detail.clone(),
            Some(self.subject.clone()),
        )
    }

    fn argument(&self, name: &str) -> Option<&Value> {
        self.arguments
            .get_attr(name)
            .map(|v| v.unmark().0)
            .filter(|v| !v.is_null())
    }

    /// A string argument, `""` when unset (as bpg's `d.Get(...).(string)`).
    fn text(&self, name: &str) -> String {
        self.argument(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    /// A string argument, `None` when unset.
    fn optional(&self, name: &str) -> Option<String> {
        self.argument(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
}

/// Why bpg's read fails, in its words (`VM 100 not found on node "pve"`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{summary}")]
pub struct ReadError {
    pub summary: String,
    /// A framework provider's detail; empty for an SDKv2 `diag.Errorf`.
    pub detail: String,
}

impl ReadError {
    pub fn new(summary: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            detail: String::new(),
        }
    }

    fn detailed(summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            detail: detail.into(),
        }
    }
}

/// A guest as `GET /cluster/resources?type=vm` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterGuest {
    pub vm_id: u32,
    pub node: String,
    /// A QEMU VM (`qemu`); `false` for a container.
    pub qemu: bool,
    pub name: Option<String>,
    /// As PVE lists them: `;`-separated.
    pub tags: Option<String>,
    pub template: bool,
    /// `running`, `stopped`, ...
    pub status: String,
}

/// One request a read needs answered by Proxmox VE, read once per plan however many data
/// sources need it. Node and storage names are as the configuration wrote them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Query {
    /// `GET /version`.
    Version,
    /// `GET /nodes`.
    Nodes,
    /// `GET /nodes/{node}/status`.
    NodeStatus { node: String },
    /// `GET /nodes/{node}/dns`.
    Dns { node: String },
    /// `GET /nodes/{node}/hosts`.
    Hosts { node: String },
    /// `GET /nodes/{node}/time`.
    Time { node: String },
    /// `GET /nodes/{node}/storage` with bpg's filters: `content` (comma-separated),
    /// `storage` and `target`.
    Storages {
        node: String,
        content: Option<String>,
        storage: Option<String>,
        target: Option<String>,
    },
    /// `GET /nodes/{node}/storage/{storage}/content[?content=]`.
    Content {
        node: String,
        storage: String,
        content: Option<String>,
    },
    /// `GET /pools`.
    Pools,
    /// `GET /pools?poolid={pool}`.
    Pool { pool: String },
    /// `GET /cluster/ha/groups`.
    HaGroups,
    /// `GET /cluster/ha/groups/{group}`.
    HaGroup { group: String },
    /// `GET /cluster/ha/resources[?type=]`.
    HaResources { kind: Option<String> },
    /// `GET /cluster/ha/resources/{sid}`.
    HaResource { sid: String },
    /// `GET /cluster/replication`.
    Replications,
    /// `GET /cluster/replication/{id}`.
    Replication { id: String },
    /// `GET /cluster/metrics/server/{id}`.
    MetricServer { id: String },
    /// `GET /cluster/sdn/zones/{zone}?pending=1`.
    SdnZone { zone: String },
    /// `GET /cluster/sdn/zones?pending=1[&type=]`.
    SdnZones { zone_type: Option<String> },
    /// `GET /cluster/sdn/vnets/{vnet}`.
    SdnVnet { vnet: String },
    /// `GET /cluster/sdn/vnets`.
    SdnVnets,
    /// `GET /cluster/sdn/vnets/{vnet}/subnets`.
    SdnSubnets { vnet: String },
    /// `GET /access/users`.
    Users,
    /// `GET /access/users/{user}`.
    User { user: String },
    /// `GET /access/groups`.
    Groups,
    /// `GET /access/groups/{group}`.
    Group { group: String },
    /// `GET /access/roles`.
    Roles,
    /// `GET /access/roles/{role}`.
    Role { role: String },
    /// `GET /access/acl`.
    Acl,
}

/// What the caller read: the cluster's guests (the refresh's listing) and PVE's `data` for each
/// query, or PVE's error message.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub guests: Vec<ClusterGuest>,
    pub readings: BTreeMap<Query, Result<serde_json::Value, String>>,
}

impl Facts {
    /// PVE's answer to `query`, or bpg's error: `context` (`error retrieving DNS
    /// configuration`) and PVE's message.
    fn read(&self, query: &Query, context: &str) -> Result<&serde_json::Value, ReadError> {
        match self.readings.get(query) {
            Some(Ok(data)) => Ok(data),
            Some(Err(message)) => Err(ReadError::new(format!("{context}: {message}"))),
            None => Err(ReadError::new(format!(
                "{context}: the cluster was not read"
            ))),
        }
    }
}

type Attributes = BTreeMap<String, Value>;

/// One data source: its names (bpg's `proxmox_virtual_environment_*` and `proxmox_*`), what
/// it reads and how it answers.
struct Source {
    names: &'static [&'static str],
    queries: fn(&DataRead) -> Vec<Query>,
    answer: fn(&DataRead, &Facts) -> Result<Attributes, ReadError>,
}

fn none(_: &DataRead) -> Vec<Query> {
    Vec::new()
}

const SOURCES: &[Source] = &[
    Source {
        names: &["proxmox_virtual_environment_vm"],
        queries: none,
        answer: vm::one_vm,
    },
    Source {
        names: &["proxmox_virtual_environment_vms"],
        queries: none,
        answer: vm::many_vms,
    },
    Source {
        names: &["proxmox_virtual_environment_container"],
        queries: none,
        answer: vm::one_container,
    },
    Source {
        names: &["proxmox_virtual_environment_containers"],
        queries: none,
        answer: vm::many_containers,
    },
    Source {
        names: &["proxmox_virtual_environment_nodes"],
        queries: node::nodes_query,
        answer: node::nodes,
    },
    Source {
        names: &["proxmox_virtual_environment_node"],
        queries: node::node_query,
        answer: node::node,
    },
    Source {
        names: &["proxmox_version", "proxmox_virtual_environment_version"],
        queries: node::version_query,
        answer: node::version,
    },
    Source {
        names: &["proxmox_virtual_environment_dns"],
        queries: node::dns_query,
        answer: node::dns,
    },
    Source {
        names: &["proxmox_virtual_environment_hosts"],
        queries: node::hosts_query,
        answer: node::hosts,
    },
    Source {
        names: &["proxmox_virtual_environment_time"],
        queries: node::time_query,
        answer: node::time,
    },
    Source {
        names: &[
            "proxmox_datastores",
            "proxmox_virtual_environment_datastores",
        ],
        queries: storage::datastores_query,
        answer: storage::datastores,
    },
    Source {
        names: &["proxmox_file", "proxmox_virtual_environment_file"],
        queries: storage::file_query,
        answer: storage::file,
    },
    Source {
        names: &["proxmox_files"],
        queries: storage::files_query,
        answer: storage::files,
    },
    Source {
        names: &["proxmox_virtual_environment_pools"],
        queries: pool::pools_query,
        answer: pool::pools,
    },
    Source {
        names: &["proxmox_virtual_environment_pool"],
        queries: pool::pool_query,
        answer: pool::pool,
    },
    Source {
        names: &["proxmox_hagroups", "proxmox_virtual_environment_hagroups"],
        queries: ha::hagroups_query,
        answer: ha::hagroups,
    },
    Source {
        names: &["proxmox_hagroup", "proxmox_virtual_environment_hagroup"],
        queries: ha::hagroup_query,
        answer: ha::hagroup,
    },
    Source {
        names: &[
            "proxmox_haresources",
            "proxmox_virtual_environment_haresources",
        ],
        queries: ha::haresources_query,
        answer: ha::haresources,
    },
    Source {
        names: &[
            "proxmox_haresource",
            "proxmox_virtual_environment_haresource",
        ],
        queries: ha::haresource_query,
        answer: ha::haresource,
    },
    Source {
        names: &[
            "proxmox_replications",
            "proxmox_virtual_environment_replications",
        ],
        queries: ha::replications_query,
        answer: ha::replications,
    },
    Source {
        names: &[
            "proxmox_replication",
            "proxmox_virtual_environment_replication",
        ],
        queries: ha::replication_query,
        answer: ha::replication,
    },
    Source {
        names: &[
            "proxmox_metrics_server",
            "proxmox_virtual_environment_metrics_server",
        ],
        queries: ha::metrics_server_query,
        answer: ha::metrics_server,
    },
    Source {
        names: &[
            "proxmox_sdn_zone_simple",
            "proxmox_sdn_zone_vlan",
            "proxmox_sdn_zone_qinq",
            "proxmox_sdn_zone_vxlan",
            "proxmox_sdn_zone_evpn",
            "proxmox_virtual_environment_sdn_zone_simple",
            "proxmox_virtual_environment_sdn_zone_vlan",
            "proxmox_virtual_environment_sdn_zone_qinq",
            "proxmox_virtual_environment_sdn_zone_vxlan",
            "proxmox_virtual_environment_sdn_zone_evpn",
        ],
        queries: sdn::zone_query,
        answer: sdn::zone,
    },
    Source {
        names: &["proxmox_sdn_zones", "proxmox_virtual_environment_sdn_zones"],
        queries: sdn::zones_query,
        answer: sdn::zones,
    },
    Source {
        names: &["proxmox_sdn_vnet", "proxmox_virtual_environment_sdn_vnet"],
        queries: sdn::vnet_query,
        answer: sdn::vnet,
    },
    Source {
        names: &["proxmox_sdn_vnets", "proxmox_virtual_environment_sdn_vnets"],
        queries: sdn::vnets_query,
        answer: sdn::vnets,
    },
    Source {
        names: &[
            "proxmox_sdn_subnet",
            "proxmox_virtual_environment_sdn_subnet",
        ],
        queries: sdn::subnet_query,
        answer: sdn::subnet,
    },
    Source {
        names: &["proxmox_virtual_environment_users"],
        queries: access::users_query,
        answer: access::users,
    },
    Source {
        names: &["proxmox_virtual_environment_user"],
        queries: access::user_query,
        answer: access::user,
    },
    Source {
        names: &["proxmox_virtual_environment_groups"],
        queries: access::groups_query,
        answer: access::groups,
    },
    Source {
        names: &["proxmox_virtual_environment_group"],
        queries: access::group_query,
        answer: access::group,
    },
    Source {
        names: &["proxmox_virtual_environment_roles"],
        queries: access::roles_query,
        answer: access::roles,
    },
    Source {
        names: &["proxmox_virtual_environment_role"],
        queries: access::role_query,
        answer: access::role,
    },
];

fn source(data_type: &str) -> Option<&'static Source> {
    SOURCES.iter().find(|s| s.names.contains(&data_type))
}

/// Every data source type atoll reads from the cluster, both names of those bpg renamed.
pub fn cluster_types() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().flat_map(|s| s.names.iter().copied())
}

/// What the caller must read from Proxmox VE before it can [`answer`] `read` (nothing for the
/// guest data sources: they are answered from the refresh's `cluster/resources` listing).
pub fn queries(read: &DataRead) -> Vec<Query> {
    source(&read.data_type).map_or_else(Vec::new, |s| (s.queries)(read))
}

/// The attributes the read sets, by name, given what the caller read, each converted to the
/// type its schema declares.
pub fn answer(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let Some(found) = source(&read.data_type) else {
        return Err(ReadError::new(format!(
            "atoll cannot read data source {:?} yet",
            read.data_type
        )));
    };
    let mut attrs = (found.answer)(read, facts)?;
    if let Some(schema) = crate::schema::data_source(&read.data_type) {
        for (name, value) in &mut attrs {
            let Some(attr) = schema.body.attr(name) else {
                continue;
            };
            let taken = std::mem::replace(value, Value::null());
            *value = crate::types::convert(taken.clone(), &attr.ty).unwrap_or(taken);
        }
    }
    Ok(attrs)
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod cluster_tests;
