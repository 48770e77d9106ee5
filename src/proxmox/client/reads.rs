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

impl ProxmoxClient {
    /// PVE's `data` for one read.
    pub async fn cluster_read(&self, read: &ClusterRead) -> Result<serde_json::Value, PveError> {
        self.transport.execute(&read.call()).await
    }
}
