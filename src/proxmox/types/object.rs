//! Proxmox VE objects that are neither guests nor volumes: pools and the firewall's options,
//! rule lists, aliases, IP sets and security groups. An [`ObjectId`] names one, checked as PVE
//! checks its name, and knows the API paths that read, create, change and delete it.

use serde::{Deserialize, Serialize};

use super::{GuestKind, NodeName, PropertyError, VmId};

/// What sort of object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ObjectKind {
    /// `/pools/{poolid}`.
    Pool,
    /// The firewall options of the cluster, a node or a guest: always there, only changed.
    FirewallOptions,
    /// The ordered rule list of the cluster, a node or a guest: always there.
    FirewallRules,
    /// A named address (`/firewall/aliases/{name}`).
    Alias,
    /// A named set of addresses, whose entries are kept by address.
    IpSet,
    /// A cluster security group, whose rules are kept in order.
    SecurityGroup,
    /// A node's DNS settings (`/nodes/{node}/dns`): always there, only changed.
    NodeDns,
    /// A node's time zone (`/nodes/{node}/time`): always there, only changed.
    NodeTime,
    /// A user (`/access/users/{userid}`), named `name@realm`.
    User,
    /// A group of users (`/access/groups/{groupid}`).
    Group,
    /// A role, a named set of privileges (`/access/roles/{roleid}`).
    Role,
    /// One ACL entry, a role granted on a path to a user, a group or a token, named as bpg
    /// imports it (`{path}?{subject}?{role}`); set and removed with `PUT /access/acl`.
    Acl,
    /// An API token (`/access/users/{userid}/token/{tokenid}`), named `user@realm!tokenid`.
    UserToken,
    /// A guest or a storage in a pool, named as bpg imports it (`{pool}/{vm|storage}/{id}`);
    /// added and removed with `PUT /pools/{poolid}`.
    PoolMember,
}

/// Where a firewall object lives.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "at", rename_all = "lowercase")]
pub enum Scope {
    Cluster,
    Node {
        node: NodeName,
    },
    Guest {
        node: NodeName,
        kind: GuestKind,
        vm_id: VmId,
    },
}

impl Scope {
    /// The API path the scope's `/firewall/...` paths hang from.
    fn base(&self) -> String {
        match self {
            Self::Cluster => "/cluster".to_owned(),
            Self::Node { node } => format!("/nodes/{node}"),
            Self::Guest { node, kind, vm_id } => {
                format!("/nodes/{node}/{}/{vm_id}", kind.path())
            }
        }
    }

    /// The node a change is made on; `None` for the cluster.
    pub fn node(&self) -> Option<&NodeName> {
        match self {
            Self::Cluster => None,
            Self::Node { node } | Self::Guest { node, .. } => Some(node),
        }
    }
}

/// How an object's entries are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entries {
    /// In order, addressed by position (`.../rules/{pos}`).
    Ordered,
    /// As a set, addressed by this field (`.../ipset/{name}/{cidr}`).
    Keyed(&'static str),
}

/// One object: its kind, where it lives and its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawObjectId")]
pub struct ObjectId {
    pub kind: ObjectKind,
    pub scope: Scope,
    /// Checked as PVE checks it; `None` for options and rule lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// An [`ObjectId`] as stored, checked again when read back.
#[derive(Deserialize)]
struct RawObjectId {
    kind: ObjectKind,
    scope: Scope,
    #[serde(default)]
    name: Option<String>,
}

impl TryFrom<RawObjectId> for ObjectId {
    type Error = PropertyError;
    fn try_from(raw: RawObjectId) -> Result<Self, Self::Error> {
        Self::new(raw.kind, raw.scope, raw.name.as_deref())
    }
}

impl ObjectId {
    /// An object named `name` (which PVE's pattern for the kind must accept); options and rule
    /// lists take none.
    pub fn new(kind: ObjectKind, scope: Scope, name: Option<&str>) -> Result<Self, PropertyError> {
        let name = match (kind.name_rule(), name) {
            (None, _) => None,
            (Some(_), None) => return Err(PropertyError::new(kind.noun(), "a name is required")),
            (Some((what, max, check)), Some(name)) => {
                if name.len() > max || !check(name.as_bytes()) {
                    return Err(PropertyError::new(
                        what,
                        format!("'{name}' does not match PVE's format (at most {max} characters)"),
                    ));
                }
                // pve-firewall keeps IP set and group names in lower case
                if matches!(kind, ObjectKind::IpSet | ObjectKind::SecurityGroup) {
                    Some(name.to_ascii_lowercase())
                } else {
                    Some(name.to_owned())
                }
            }
        };
        Ok(Self { kind, scope, name })
    }

    /// The path that reads (and changes, and deletes) the object itself.
    pub fn path(&self) -> String {
        let name = self.name.as_deref().unwrap_or_default();
        let base = self.scope.base();
        match self.kind {
            ObjectKind::Pool => format!("/pools/{name}"),
            ObjectKind::FirewallOptions => format!("{base}/firewall/options"),
            ObjectKind::FirewallRules => format!("{base}/firewall/rules"),
            ObjectKind::Alias => format!("{base}/firewall/aliases/{name}"),
            ObjectKind::IpSet => format!("{base}/firewall/ipset/{name}"),
            ObjectKind::SecurityGroup => format!("/cluster/firewall/groups/{name}"),
            ObjectKind::NodeDns => format!("{base}/dns"),
            ObjectKind::NodeTime => format!("{base}/time"),
            ObjectKind::User => format!("/access/users/{}", super::access::segment(name)),
            ObjectKind::Group => format!("/access/groups/{name}"),
            ObjectKind::Role => format!("/access/roles/{name}"),
            ObjectKind::Acl => "/access/acl".to_owned(),
            ObjectKind::UserToken => {
                let (user, token) = name.rsplit_once('!').unwrap_or_default();
                let (user, token) = (super::access::segment(user), super::access::segment(token));
                format!("/access/users/{user}/token/{token}")
            }
            ObjectKind::PoolMember => {
                let pool = name.rsplitn(3, '/').nth(2).unwrap_or_default();
                format!("/pools/{pool}")
            }
        }
    }

    /// What tells this object from every other: its path, and for the kinds that share one
    /// (ACL entries, pool members) the path and the name.
    pub fn key(&self) -> String {
        match self.kind {
            ObjectKind::Acl | ObjectKind::PoolMember => {
                format!(
                    "{}#{}",
                    self.path(),
                    self.name.as_deref().unwrap_or_default()
                )
            }
            _ => self.path(),
        }
    }

    /// Where the object is created (`POST`) and listed, with the parameter naming it; `None`
    /// for what always exists (options, rule lists).
    pub fn collection(&self) -> Option<(String, &'static str)> {
        let base = self.scope.base();
        match self.kind {
            ObjectKind::Pool => Some(("/pools".to_owned(), "poolid")),
            ObjectKind::Alias => Some((format!("{base}/firewall/aliases"), "name")),
            ObjectKind::IpSet => Some((format!("{base}/firewall/ipset"), "name")),
            ObjectKind::SecurityGroup => Some(("/cluster/firewall/groups".to_owned(), "group")),
            ObjectKind::FirewallOptions
            | ObjectKind::FirewallRules
            | ObjectKind::NodeDns
            | ObjectKind::NodeTime => None,
            ObjectKind::User => Some(("/access/users".to_owned(), "userid")),
            ObjectKind::Group => Some(("/access/groups".to_owned(), "groupid")),
            ObjectKind::Role => Some(("/access/roles".to_owned(), "roleid")),
            // created by their own path (tokens) or by a `PUT` (ACL entries, pool members)
            ObjectKind::Acl | ObjectKind::UserToken | ObjectKind::PoolMember => None,
        }
    }

    /// Whether the object is access control or pool membership ([`crate::proxmox::types::
    /// access`]), whose reads and writes are not the firewall's.
    pub fn is_access(&self) -> bool {
        matches!(
            self.kind,
            ObjectKind::User
                | ObjectKind::Group
                | ObjectKind::Role
                | ObjectKind::Acl
                | ObjectKind::UserToken
                | ObjectKind::PoolMember
        )
    }

    /// Settings that always exist and are never deleted: atoll stops managing them and leaves
    /// them as they are (firewall options, a node's DNS and time zone).
    pub fn is_setting(&self) -> bool {
        matches!(
            self.kind,
            ObjectKind::FirewallOptions | ObjectKind::NodeDns | ObjectKind::NodeTime
        )
    }

    /// How the object's entries are kept, and where (`path()` lists them); `None` when it
    /// has no entries.
    pub fn entries(&self) -> Option<Entries> {
        match self.kind {
            ObjectKind::FirewallRules | ObjectKind::SecurityGroup => Some(Entries::Ordered),
            ObjectKind::IpSet => Some(Entries::Keyed("cidr")),
            _ => None,
        }
    }

    /// The object's own fields are read from its collection's listing (an alias, an IP set's
    /// or a security group's comment): `path()` lists the entries of a set or a group, and
    /// PVE answers a missing alias with a parameter error rather than "not found".
    pub fn fields_from_listing(&self) -> bool {
        matches!(
            self.kind,
            ObjectKind::Alias | ObjectKind::IpSet | ObjectKind::SecurityGroup
        )
    }

    /// bpg's import id for the object (`terraform import ADDRESS ID`): what an `import`
    /// block's `id` must say to take this object over. `None` where bpg accepts any id (the
    /// cluster firewall's options, of which there is one).
    pub fn import_id(&self) -> Option<String> {
        let scope = match &self.scope {
            Scope::Cluster => "cluster".to_owned(),
            Scope::Node { node } => format!("node/{node}"),
            Scope::Guest { node, kind, vm_id } => {
                let kind = match kind {
                    GuestKind::Qemu => "vm",
                    GuestKind::Lxc => "container",
                };
                format!("{kind}/{node}/{vm_id}")
            }
        };
        let name = self.name.clone().unwrap_or_default();
        let node = self.scope.node().map(ToString::to_string);
        match self.kind {
            ObjectKind::Pool | ObjectKind::SecurityGroup => Some(name),
            ObjectKind::FirewallOptions if self.scope == Scope::Cluster => None,
            // bpg: `node_name` alone for a node's settings and firewall
            ObjectKind::FirewallOptions if node.is_some() && self.guest().is_none() => node,
            ObjectKind::NodeDns | ObjectKind::NodeTime => node,
            ObjectKind::FirewallOptions | ObjectKind::FirewallRules => Some(scope),
            // bpg documents IP sets so; aliases take the same form
            ObjectKind::Alias | ObjectKind::IpSet => Some(format!("{scope}/{name}")),
            // bpg: the id itself (`user@realm`, `group`, `role`, `user@realm!token`,
            // `{path}?{subject}?{role}`, `{pool}/{type}/{member}`)
            ObjectKind::User
            | ObjectKind::Group
            | ObjectKind::Role
            | ObjectKind::Acl
            | ObjectKind::UserToken
            | ObjectKind::PoolMember => Some(name),
        }
    }

    /// The guest the object belongs to, if any.
    pub fn guest(&self) -> Option<VmId> {
        match &self.scope {
            Scope::Guest { vm_id, .. } => Some(*vm_id),
            _ => None,
        }
    }

    /// For people: `firewall rules of VM 100`, `pool web`, `alias lan of the cluster`.
    pub fn describe(&self) -> String {
        let at = match &self.scope {
            Scope::Cluster => "the cluster".to_owned(),
            Scope::Node { node } => format!("node {node}"),
            Scope::Guest { kind, vm_id, .. } => format!("{} {vm_id}", kind.noun()),
        };
        match (&self.kind, &self.name) {
            (ObjectKind::Pool, Some(name)) => format!("pool {name}"),
            (ObjectKind::SecurityGroup, Some(name)) => format!("security group {name}"),
            (ObjectKind::Acl, Some(name)) => super::access::describe_acl(name),
            (ObjectKind::PoolMember, Some(name)) => super::access::describe_member(name),
            (
                ObjectKind::User | ObjectKind::Group | ObjectKind::Role | ObjectKind::UserToken,
                Some(name),
            ) => format!("{} {name}", self.kind.noun()),
            (kind, Some(name)) => format!("{} {name} of {at}", kind.noun()),
            (kind, None) => format!("{} of {at}", kind.noun()),
        }
    }
}

type NameCheck = fn(&[u8]) -> bool;

impl ObjectKind {
    pub fn noun(self) -> &'static str {
        match self {
            Self::Pool => "pool",
            Self::FirewallOptions => "firewall options",
            Self::FirewallRules => "firewall rules",
            Self::Alias => "firewall alias",
            Self::IpSet => "IP set",
            Self::SecurityGroup => "security group",
            Self::NodeDns => "DNS settings",
            Self::NodeTime => "time zone",
            Self::User => "user",
            Self::Group => "group",
            Self::Role => "role",
            Self::Acl => "ACL entry",
            Self::UserToken => "API token",
            Self::PoolMember => "pool member",
        }
    }

    /// PVE's format for the name: what it is called, its longest length, and its pattern.
    fn name_rule(self) -> Option<(&'static str, usize, NameCheck)> {
        // pve-firewall: `[A-Za-z][A-Za-z0-9\-\_]+` for aliases, IP sets and groups
        fn firewall_name(b: &[u8]) -> bool {
            b.len() >= 2
                && b[0].is_ascii_alphabetic()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || b"-_".contains(c))
        }
        // pve-access-control's pool id: `[A-Za-z0-9\.\-_]+`, not `.` or `..`
        fn pool_name(b: &[u8]) -> bool {
            !b.is_empty()
                && b != b"."
                && b != b".."
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
        }
        match self {
            Self::Pool => Some(("pool id", 64, pool_name)),
            Self::Alias => Some(("alias name", 64, firewall_name)),
            Self::IpSet => Some(("IP set name", 64, firewall_name)),
            Self::SecurityGroup => Some(("security group name", 18, firewall_name)),
            Self::FirewallOptions | Self::FirewallRules | Self::NodeDns | Self::NodeTime => None,
            Self::User => Some(("user id", 64, super::access::userid)),
            Self::Group => Some(("group id", 64, super::access::group_or_role)),
            Self::Role => Some(("role id", 64, super::access::group_or_role)),
            Self::Acl => Some(("ACL entry", 512, super::access::acl)),
            Self::UserToken => Some(("token id", 128, super::access::tokenid)),
            Self::PoolMember => Some(("pool membership", 160, super::access::member)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> NodeName {
        "pve".parse().expect("a node name")
    }

    #[test]
    fn objects_know_their_paths_and_refuse_names_pve_refuses() {
        let guest = Scope::Guest {
            node: node(),
            kind: GuestKind::Qemu,
            vm_id: VmId::new(100).expect("a vmid"),
        };
        let rules = ObjectId::new(ObjectKind::FirewallRules, guest, None).expect("ok");
        assert_eq!(rules.path(), "/nodes/pve/qemu/100/firewall/rules");
        assert_eq!(rules.describe(), "firewall rules of VM 100");
        let set = ObjectId::new(ObjectKind::IpSet, Scope::Cluster, Some("lan")).expect("ok");
        assert_eq!(set.path(), "/cluster/firewall/ipset/lan");
        assert_eq!(
            set.collection(),
            Some(("/cluster/firewall/ipset".to_owned(), "name"))
        );
        let pool = ObjectId::new(ObjectKind::Pool, Scope::Cluster, Some("web.prod")).expect("ok");
        assert_eq!(pool.path(), "/pools/web.prod");
        for bad in ["1lan", "a", "lan/../x", "a b"] {
            assert!(ObjectId::new(ObjectKind::Alias, Scope::Cluster, Some(bad)).is_err());
        }
        assert!(ObjectId::new(ObjectKind::Pool, Scope::Cluster, Some("..")).is_err());
        assert_eq!(set.import_id().as_deref(), Some("cluster/lan"));
        assert_eq!(rules.import_id().as_deref(), Some("vm/pve/100"));
        assert_eq!(pool.import_id().as_deref(), Some("web.prod"));
        let node_fw = ObjectId::new(
            ObjectKind::FirewallOptions,
            Scope::Node { node: node() },
            None,
        )
        .expect("ok");
        assert_eq!(node_fw.import_id().as_deref(), Some("pve"));
        let cluster_fw =
            ObjectId::new(ObjectKind::FirewallOptions, Scope::Cluster, None).expect("ok");
        assert_eq!(cluster_fw.import_id(), None);
        let long = "g".repeat(19);
        assert!(ObjectId::new(ObjectKind::SecurityGroup, Scope::Cluster, Some(&long)).is_err());
    }
}
