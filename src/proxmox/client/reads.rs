//! The read-only endpoints data sources read: version, nodes, a node's status, DNS, hosts
//! and time, its storages and their content, and pools. Answered as PVE's raw `data`, which
//! the data sources decode as bpg does.

use reqwest::Method;

use super::transport::Call;
use super::{ProxmoxClient, PveError, seg};

/// One read, with the names as the configuration wrote them (escaped into the path here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClusterRead {
    Version,
    Nodes,
    NodeStatus {
        node: String,
    },
    Dns {
        node: String,
    },
    Hosts {
        node: String,
    },
    Time {
        node: String,
    },
    /// `content` is comma-separated, as PVE's `pve-storage-content-list`.
    Storages {
        node: String,
        content: Option<String>,
        storage: Option<String>,
        target: Option<String>,
    },
    Content {
        node: String,
        storage: String,
        content: Option<String>,
    },
    Pools,
    Pool {
        pool: String,
    },
    /// `/cluster/ha/groups`, or one group.
    HaGroups {
        group: Option<String>,
    },
    /// `/cluster/ha/resources[?type=]`.
    HaResources {
        kind: Option<String>,
    },
    HaResource {
        sid: String,
    },
    /// `/cluster/replication`, or one job.
    Replications {
        id: Option<String>,
    },
    MetricServer {
        id: String,
    },
    SdnZone {
        zone: String,
    },
    SdnZones {
        zone_type: Option<String>,
    },
    SdnVnet {
        vnet: String,
    },
    SdnVnets,
    SdnSubnets {
        vnet: String,
    },
    Users,
    User {
        user: String,
    },
    Groups,
    Group {
        group: String,
    },
    Roles,
    Role {
        role: String,
    },
    Acl,
}

impl ClusterRead {
    fn call(&self) -> Call {
        let at = |node: &str, rest: &str| {
            Call::new(
                Method::GET,
                format!("/nodes/{}/{rest}", seg(node)),
                Some(node),
            )
        };
        match self {
            Self::Version => Call::new(Method::GET, "/version".into(), None),
            Self::Nodes => Call::new(Method::GET, "/nodes".into(), None),
            Self::NodeStatus { node } => at(node, "status"),
            Self::Dns { node } => at(node, "dns"),
            Self::Hosts { node } => at(node, "hosts"),
            Self::Time { node } => at(node, "time"),
            Self::Storages {
                node,
                content,
                storage,
                target,
            } => at(node, "storage")
                .param_opt("content", content.as_deref())
                .param_opt("storage", storage.as_deref())
                .param_opt("target", target.as_deref()),
            Self::Content {
                node,
                storage,
                content,
            } => at(node, &format!("storage/{}/content", seg(storage)))
                .param_opt("content", content.as_deref()),
            Self::Pools => Call::new(Method::GET, "/pools".into(), None),
            Self::Pool { pool } => {
                Call::new(Method::GET, "/pools".into(), None).param("poolid", pool)
            }
            Self::HaGroups { group } => cluster("ha/groups", group.as_deref()),
            Self::HaResources { kind } => {
                cluster("ha/resources", None).param_opt("type", kind.as_deref())
            }
            Self::HaResource { sid } => cluster("ha/resources", Some(sid)),
            Self::Replications { id } => cluster("replication", id.as_deref()),
            Self::MetricServer { id } => cluster("metrics/server", Some(id)),
            Self::SdnZone { zone } => {
                let path = format!("/cluster/sdn/zones/{}", seg(zone));
                Call::new(Method::GET, path, None).param("pending", "1")
            }
            Self::SdnZones { zone_type } => {
                Call::new(Method::GET, "/cluster/sdn/zones".into(), None)
                    .param("pending", "1")
                    .param_opt("type", zone_type.as_deref())
            }
            Self::SdnVnet { vnet } => Call::new(
                Method::GET,
                format!("/cluster/sdn/vnets/{}", seg(vnet)),
                None,
            ),
            Self::SdnVnets => Call::new(Method::GET, "/cluster/sdn/vnets".into(), None),
            Self::SdnSubnets { vnet } => {
                let path = format!("/cluster/sdn/vnets/{}/subnets", seg(vnet));
                Call::new(Method::GET, path, None)
            }
            Self::Users => Call::new(Method::GET, "/access/users".into(), None),
            Self::User { user } => {
                Call::new(Method::GET, format!("/access/users/{}", seg(user)), None)
            }
            Self::Groups => Call::new(Method::GET, "/access/groups".into(), None),
            Self::Group { group } => {
                Call::new(Method::GET, format!("/access/groups/{}", seg(group)), None)
            }
            Self::Roles => Call::new(Method::GET, "/access/roles".into(), None),
            Self::Role { role } => {
                Call::new(Method::GET, format!("/access/roles/{}", seg(role)), None)
            }
            Self::Acl => Call::new(Method::GET, "/access/acl".into(), None),
        }
    }
}

/// `GET /cluster/{collection}[/{name}]`, the name escaped.
fn cluster(collection: &str, name: Option<&str>) -> Call {
    let path = match name {
        Some(name) => format!("/cluster/{collection}/{}", seg(name)),
        None => format!("/cluster/{collection}"),
    };
    Call::new(Method::GET, path, None)
}

impl ProxmoxClient {
    /// PVE's `data` for one read.
    pub async fn cluster_read(&self, read: &ClusterRead) -> Result<serde_json::Value, PveError> {
        self.transport.execute(&read.call()).await
    }
}
