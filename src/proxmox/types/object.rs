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
    /// A node's Linux bridge (`/nodes/{node}/network/{iface}`, `type=bridge`).
    LinuxBridge,
    /// A node's Linux VLAN interface (`type=vlan`).
    LinuxVlan,
    /// A node's Linux bond (`type=bond`).
    LinuxBond,
    /// The datacenter options (`/cluster/options`, `datacenter.cfg`): always there, only
    /// changed; keys no longer set are deleted.
    ClusterOptions,
    /// A node's `/etc/hosts` (`/nodes/{node}/hosts`): always there, written whole.
    NodeHosts,
    /// An HA resource (`/cluster/ha/resources/{sid}`, `vm:100`).
    HaResource,
    /// An HA group (`/cluster/ha/groups/{group}`), PVE 8's; PVE 9 migrates them to rules.
    HaGroup,
    /// An HA rule (`/cluster/ha/rules/{rule}`), PVE 9's node and resource affinity.
    HaRule,
    /// A storage replication job (`/cluster/replication/{id}`, `100-0`).
    Replication,
    /// An external metric server (`/cluster/metrics/server/{id}`).
    MetricServer,
    /// An SDN zone (`/cluster/sdn/zones/{zone}`), kept pending until SDN is applied.
    SdnZone,
    /// An SDN vnet (`/cluster/sdn/vnets/{vnet}`): once applied, a bridge on every node.
    SdnVnet,
    /// An SDN subnet (`/cluster/sdn/vnets/{vnet}/subnets/{zone-net-mask}`), named
    /// `{vnet}/{zone}-{network}-{mask}`.
    SdnSubnet,
    /// The SDN configuration as a whole (`/cluster/sdn`): `PUT` applies what is pending.
    SdnApplier,
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
            ObjectKind::LinuxBridge | ObjectKind::LinuxVlan | ObjectKind::LinuxBond => {
                format!("{base}/network/{name}")
            }
            ObjectKind::ClusterOptions => "/cluster/options".to_owned(),
            ObjectKind::NodeHosts => format!("{base}/hosts"),
            ObjectKind::HaResource => format!("/cluster/ha/resources/{name}"),
            ObjectKind::HaGroup => format!("/cluster/ha/groups/{name}"),
            ObjectKind::HaRule => format!("/cluster/ha/rules/{name}"),
            ObjectKind::Replication => format!("/cluster/replication/{name}"),
            ObjectKind::MetricServer => format!("/cluster/metrics/server/{name}"),
            ObjectKind::SdnZone => format!("/cluster/sdn/zones/{name}"),
            ObjectKind::SdnVnet => format!("/cluster/sdn/vnets/{name}"),
            ObjectKind::SdnSubnet => {
                let (vnet, subnet) = name.split_once('/').unwrap_or_default();
                format!("/cluster/sdn/vnets/{vnet}/subnets/{subnet}")
            }
            ObjectKind::SdnApplier => "/cluster/sdn".to_owned(),
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
            ObjectKind::LinuxBridge | ObjectKind::LinuxVlan | ObjectKind::LinuxBond => {
                Some((format!("{base}/network"), "iface"))
            }
            ObjectKind::FirewallOptions
            | ObjectKind::FirewallRules
            | ObjectKind::NodeDns
            | ObjectKind::NodeTime => None,
            ObjectKind::ClusterOptions | ObjectKind::NodeHosts => None,
            ObjectKind::HaResource => Some(("/cluster/ha/resources".to_owned(), "sid")),
            ObjectKind::HaGroup => Some(("/cluster/ha/groups".to_owned(), "group")),
            ObjectKind::HaRule => Some(("/cluster/ha/rules".to_owned(), "rule")),
            ObjectKind::Replication => Some(("/cluster/replication".to_owned(), "id")),
            ObjectKind::MetricServer => Some(("/cluster/metrics/server".to_owned(), "id")),
            ObjectKind::SdnZone => Some(("/cluster/sdn/zones".to_owned(), "zone")),
            ObjectKind::SdnVnet => Some(("/cluster/sdn/vnets".to_owned(), "vnet")),
            ObjectKind::SdnSubnet => {
                let name = self.name.as_deref().unwrap_or_default();
                let vnet = name.split_once('/').map_or(name, |(vnet, _)| vnet);
                Some((format!("/cluster/sdn/vnets/{vnet}/subnets"), "subnet"))
            }
            ObjectKind::SdnApplier => None,
            ObjectKind::User => Some(("/access/users".to_owned(), "userid")),
            ObjectKind::Group => Some(("/access/groups".to_owned(), "groupid")),
            ObjectKind::Role => Some(("/access/roles".to_owned(), "roleid")),
            // created by their own path (tokens) or by a `PUT` (ACL entries, pool members)
            ObjectKind::Acl | ObjectKind::UserToken | ObjectKind::PoolMember => None,
        }
    }

    /// What names the object in the `POST` that creates it: its name, but a subnet's CIDR
    /// (`10.0.0.0/24`; PVE makes the id `{zone}-10.0.0.0-24` from it).
    pub fn create_name(&self) -> String {
        let name = self.name.clone().unwrap_or_default();
        match self.kind {
            ObjectKind::SdnSubnet => sdn_subnet_cidr(&name).unwrap_or(name),
            _ => name,
        }
    }

    /// Parameters sent only when the object is created, never in a `PUT` (an SDN zone's or
    /// subnet's `type`, which PVE's update schema does not take).
    pub fn create_only(&self) -> &'static [&'static str] {
        match self.kind {
            ObjectKind::SdnZone | ObjectKind::SdnSubnet => &["type"],
            _ => &[],
        }
    }

    /// Whether the object belongs to the SDN configuration that `PUT /cluster/sdn` applies.
    pub fn is_sdn(&self) -> bool {
        matches!(
            self.kind,
            ObjectKind::SdnZone
                | ObjectKind::SdnVnet
                | ObjectKind::SdnSubnet
                | ObjectKind::SdnApplier
        )
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
        ) || self.kind.is_cluster_setting()
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
        ) || self.kind.network_type().is_some()
    }

    /// Parameters every write of the object carries besides its fields: a network
    /// interface's `type`, which PVE requires on create and on update alike.
    pub fn fixed_params(&self) -> Vec<(String, String)> {
        self.kind
            .network_type()
            .map(|t| vec![("type".to_owned(), t.to_owned())])
            .unwrap_or_default()
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
            // bpg: `node_name:iface`
            ObjectKind::LinuxBridge | ObjectKind::LinuxVlan | ObjectKind::LinuxBond => {
                Some(format!("{}:{name}", node.unwrap_or_default()))
            }
            // bpg: `cluster` for the options, the node for its hosts, the name otherwise
            ObjectKind::ClusterOptions => Some("cluster".to_owned()),
            ObjectKind::NodeHosts => node,
            ObjectKind::HaResource
            | ObjectKind::HaGroup
            | ObjectKind::HaRule
            | ObjectKind::Replication
            | ObjectKind::MetricServer => Some(name),
            // bpg: the zone or vnet id; a subnet's `{vnet}/{zone}-{net}-{mask}`, its name here
            ObjectKind::SdnZone | ObjectKind::SdnVnet | ObjectKind::SdnSubnet => Some(name),
            ObjectKind::SdnApplier => None,
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
            (kind, Some(name)) if kind.is_cluster_object() => format!("{} {name}", kind.noun()),
            (ObjectKind::ClusterOptions, None) => "the datacenter options".to_owned(),
            (ObjectKind::SdnZone | ObjectKind::SdnVnet, Some(name)) => {
                format!("{} {name}", self.kind.noun())
            }
            (ObjectKind::SdnSubnet, Some(name)) => {
                let (vnet, _) = name.split_once('/').unwrap_or_default();
                let cidr = sdn_subnet_cidr(name).unwrap_or_default();
                format!("SDN subnet {cidr} of vnet {vnet}")
            }
            (ObjectKind::SdnApplier, _) => "the SDN configuration".to_owned(),
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
            Self::LinuxBridge => "Linux bridge",
            Self::LinuxVlan => "Linux VLAN",
            Self::LinuxBond => "Linux bond",
            Self::ClusterOptions => "datacenter options",
            Self::NodeHosts => "hosts file",
            Self::HaResource => "HA resource",
            Self::HaGroup => "HA group",
            Self::HaRule => "HA rule",
            Self::Replication => "replication job",
            Self::MetricServer => "metric server",
            Self::SdnZone => "SDN zone",
            Self::SdnVnet => "SDN vnet",
            Self::SdnSubnet => "SDN subnet",
            Self::SdnApplier => "SDN configuration",
            Self::User => "user",
            Self::Group => "group",
            Self::Role => "role",
            Self::Acl => "ACL entry",
            Self::UserToken => "API token",
            Self::PoolMember => "pool member",
        }
    }

    /// PVE's `type` for a network interface kind; `None` for every other kind.
    pub fn network_type(self) -> Option<&'static str> {
        match self {
            Self::LinuxBridge => Some("bridge"),
            Self::LinuxVlan => Some("vlan"),
            Self::LinuxBond => Some("bond"),
            _ => None,
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
        // pve-common's `pve-iface`: `[a-z][a-z0-9_]{1,20}([:.]\d+)?`, case-insensitive
        fn iface_name(b: &[u8]) -> bool {
            let (base, suffix) = match b.iter().rposition(|c| *c == b'.' || *c == b':') {
                Some(at) => (&b[..at], Some(&b[at + 1..])),
                None => (b, None),
            };
            (2..=21).contains(&base.len())
                && base[0].is_ascii_alphabetic()
                && base.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
                && suffix.is_none_or(|s| !s.is_empty() && s.iter().all(u8::is_ascii_digit))
        }
        match self {
            Self::Pool => Some(("pool id", 64, pool_name)),
            Self::Alias => Some(("alias name", 64, firewall_name)),
            Self::IpSet => Some(("IP set name", 64, firewall_name)),
            Self::SecurityGroup => Some(("security group name", 18, firewall_name)),
            Self::FirewallOptions | Self::FirewallRules | Self::NodeDns | Self::NodeTime => None,
            Self::LinuxBridge | Self::LinuxVlan | Self::LinuxBond => {
                Some(("interface name", 20, iface_name))
            }
            Self::ClusterOptions | Self::NodeHosts => None,
            Self::HaResource => Some(("HA resource id", 32, super::cluster_names::ha_sid)),
            Self::HaGroup => Some(("HA group id", 128, super::cluster_names::config_id)),
            Self::HaRule => Some(("HA rule id", 128, super::cluster_names::config_id)),
            Self::Replication => Some(("replication job id", 32, super::cluster_names::job_id)),
            Self::MetricServer => Some(("metric server id", 128, super::cluster_names::config_id)),
            // pve-network's `pve-sdn-zone-id` and `pve-sdn-vnet-id`
            Self::SdnZone => Some(("SDN zone id", 8, sdn_id)),
            Self::SdnVnet => Some(("SDN vnet id", 8, sdn_id)),
            Self::SdnSubnet => Some(("SDN subnet", 72, sdn_subnet_name)),
            Self::SdnApplier => None,
            Self::User => Some(("user id", 64, super::access::userid)),
            Self::Group => Some(("group id", 64, super::access::group_or_role)),
            Self::Role => Some(("role id", 64, super::access::group_or_role)),
            Self::Acl => Some(("ACL entry", 512, super::access::acl)),
            Self::UserToken => Some(("token id", 128, super::access::tokenid)),
            Self::PoolMember => Some(("pool membership", 160, super::access::member)),
        }
    }
}

/// pve-network's zone and vnet ids: `[a-zA-Z][a-zA-Z0-9]*[a-zA-Z0-9]`, 2 to 8 characters.
fn sdn_id(b: &[u8]) -> bool {
    (2..=8).contains(&b.len())
        && b[0].is_ascii_alphabetic()
        && b.iter().all(u8::is_ascii_alphanumeric)
}

/// `{vnet}/{zone}-{network}-{mask}`: a vnet id, then PVE's subnet id for a valid CIDR.
fn sdn_subnet_name(b: &[u8]) -> bool {
    let Ok(name) = std::str::from_utf8(b) else {
        return false;
    };
    let Some((vnet, id)) = name.split_once('/') else {
        return false;
    };
    let zone = id.split('-').next().unwrap_or_default();
    sdn_id(vnet.as_bytes()) && sdn_id(zone.as_bytes()) && sdn_subnet_cidr(name).is_some()
}

/// The CIDR of a subnet named `{vnet}/{zone}-{network}-{mask}` (`10.0.0.0/24`), when it is one.
pub fn sdn_subnet_cidr(name: &str) -> Option<String> {
    let (_, id) = name.split_once('/')?;
    let mut parts = id.splitn(3, '-');
    let (_zone, net, mask) = (parts.next()?, parts.next()?, parts.next()?);
    let addr: std::net::IpAddr = net.parse().ok()?;
    let mask: u8 = mask.parse().ok().filter(|_| !mask.starts_with('+'))?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (mask <= max).then(|| format!("{net}/{mask}"))
}

/// PVE's subnet id for a subnet of `zone`: `{zone}-{network}-{mask}`.
pub fn sdn_subnet_id(zone: &str, cidr: &str) -> String {
    format!("{zone}-{}", cidr.replace('/', "-"))
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
        let node_scope = Scope::Node { node: node() };
        let bridge =
            ObjectId::new(ObjectKind::LinuxBridge, node_scope.clone(), Some("vmbr1")).expect("ok");
        assert_eq!(bridge.path(), "/nodes/pve/network/vmbr1");
        assert_eq!(bridge.import_id().as_deref(), Some("pve:vmbr1"));
        assert_eq!(
            bridge.fixed_params(),
            [("type".to_owned(), "bridge".to_owned())]
        );
        for good in ["eno1.20", "vlan_lab", "bond0"] {
            assert!(ObjectId::new(ObjectKind::LinuxVlan, node_scope.clone(), Some(good)).is_ok());
        }
        for bad in ["v", "1br", "br-0", "eno1.", "a/b", "x.1.y"] {
            assert!(
                ObjectId::new(ObjectKind::LinuxVlan, node_scope.clone(), Some(bad)).is_err(),
                "{bad}"
            );
        }
        let long = "g".repeat(19);
        assert!(ObjectId::new(ObjectKind::SecurityGroup, Scope::Cluster, Some(&long)).is_err());
    }

    #[test]
    fn sdn_objects_are_named_as_pve_names_them() {
        let zone = ObjectId::new(ObjectKind::SdnZone, Scope::Cluster, Some("zone1")).expect("ok");
        assert_eq!(zone.path(), "/cluster/sdn/zones/zone1");
        assert_eq!(zone.import_id().as_deref(), Some("zone1"));
        for bad in ["toolongid", "1zone", "z", "zo-ne"] {
            assert!(ObjectId::new(ObjectKind::SdnZone, Scope::Cluster, Some(bad)).is_err());
        }
        let name = format!("vnet1/{}", sdn_subnet_id("zone1", "10.0.0.0/24"));
        let subnet = ObjectId::new(ObjectKind::SdnSubnet, Scope::Cluster, Some(&name)).expect("ok");
        assert_eq!(
            subnet.path(),
            "/cluster/sdn/vnets/vnet1/subnets/zone1-10.0.0.0-24"
        );
        assert_eq!(
            subnet.collection(),
            Some(("/cluster/sdn/vnets/vnet1/subnets".to_owned(), "subnet"))
        );
        assert_eq!(subnet.create_name(), "10.0.0.0/24");
        assert_eq!(subnet.describe(), "SDN subnet 10.0.0.0/24 of vnet vnet1");
        assert_eq!(
            subnet.import_id().as_deref(),
            Some("vnet1/zone1-10.0.0.0-24")
        );
        let v6 = format!("vnet1/{}", sdn_subnet_id("zone1", "fd00::/64"));
        assert!(ObjectId::new(ObjectKind::SdnSubnet, Scope::Cluster, Some(&v6)).is_ok());
        for bad in [
            "vnet1/zone1-10.0.0.0-33",
            "vnet1/zone1-10.0.0-24",
            "zone1-10.0.0.0-24",
        ] {
            assert!(ObjectId::new(ObjectKind::SdnSubnet, Scope::Cluster, Some(bad)).is_err());
        }
    }
}
