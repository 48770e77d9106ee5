//! The simulated cluster: nodes, guests (LXC and QEMU) with their configs and power state,
//! storages per node and worker tasks. Pure state and lookups with PVE's error messages.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use super::conf::Conf;
use super::error::{ApiError, ApiResult};
use super::storage::Storage;
use super::tasks::{Task, Upid};

/// Container or virtual machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestKind {
    Lxc,
    Qemu,
}

impl GuestKind {
    /// The path segment and `type` field: `lxc` or `qemu`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lxc => "lxc",
            Self::Qemu => "qemu",
        }
    }

    /// `CT` or `VM`, as in PVE's messages.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Lxc => "CT",
            Self::Qemu => "VM",
        }
    }
}

/// Something the simulator did to a guest, recorded so tests can see what a change caused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestEvent {
    /// A key written to the config at once (fast-plug): no live effect now.
    Written(String),
    /// A key applied to the running guest (cgroup limit, tc rate, address change, mount).
    HotApplied(String),
    /// A network link deleted and created again (`hwaddr` or `name` changed).
    LinkRecreated(String),
    /// A network link unplugged and plugged again (`bridge`, `tag`, `firewall`, `link_down`).
    LinkReplugged(String),
    /// A new network link created.
    LinkCreated(String),
    /// A network link removed.
    LinkDeleted(String),
    /// A pending change applied by a start, stop or reboot.
    PendingApplied(String),
    Started,
    Stopped,
    /// The bridge a link is on was reconfigured by a network reload in a way that cuts its
    /// traffic for a moment (ports, VLAN awareness, addresses, a lower MTU, autostart off, a
    /// port's VLAN or bond changed, the bridge deleted).
    BridgeReset(String),
}

/// One guest.
#[derive(Debug, Clone)]
pub(crate) struct Guest {
    pub(crate) vmid: u32,
    pub(crate) node: String,
    pub(crate) kind: GuestKind,
    pub(crate) conf: Conf,
    pub(crate) running: bool,
    pub(crate) started_at: Option<u64>,
    pub(crate) pid: Option<u32>,
    /// When the guest last started (drives the DHCP delay of `/interfaces`).
    pub(crate) booted: Option<std::time::Instant>,
    pub(crate) ha_managed: bool,
    pub(crate) events: Vec<GuestEvent>,
    /// The guest OS ignores ACPI power-button events (a VM shutdown without agent times out).
    pub(crate) ignores_acpi: bool,
    /// The cloud-init keys the drive was last generated from (`PUT .../cloudinit`).
    pub(crate) cloudinit_generated: Option<BTreeMap<String, String>>,
}

impl Guest {
    /// `name`: hostname (LXC) or name (QEMU), else `CT<vmid>` / `VM <vmid>`.
    pub(crate) fn name(&self) -> String {
        let key = if self.kind == GuestKind::Lxc {
            "hostname"
        } else {
            "name"
        };
        match self.conf.main.get(key) {
            Some(n) => n.trim().to_owned(),
            None if self.kind == GuestKind::Lxc => format!("CT{}", self.vmid),
            None => format!("VM {}", self.vmid),
        }
    }

    pub(crate) fn lock(&self) -> Option<&str> {
        self.conf.main.get("lock").map(String::as_str)
    }

    /// `check_lock`: `CT is locked (create)`.
    pub(crate) fn check_lock(&self) -> ApiResult<()> {
        match self.lock() {
            Some(lock) => Err(ApiError::die(format!(
                "{} is locked ({lock})",
                self.kind.label()
            ))),
            None => Ok(()),
        }
    }

    /// `check_protection`: `<msg> - protection mode enabled`.
    pub(crate) fn check_protection(&self, msg: &str) -> ApiResult<()> {
        if self.conf.main.get("protection").is_some_and(|p| p == "1") {
            return Err(ApiError::die(format!("{msg} - protection mode enabled")));
        }
        Ok(())
    }

    pub(crate) fn is_template(&self) -> bool {
        self.conf.main.get("template").is_some_and(|t| t == "1")
    }

    pub(crate) fn memory_mib(&self) -> u64 {
        self.conf
            .main
            .get("memory")
            .and_then(|m| m.parse().ok())
            .unwrap_or(512)
    }
}

pub(crate) fn conf_path(node: &str, kind: GuestKind, vmid: u32) -> String {
    let dir = if kind == GuestKind::Lxc {
        "lxc"
    } else {
        "qemu-server"
    };
    format!("nodes/{node}/{dir}/{vmid}.conf")
}

/// One node.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) online: bool,
    /// Its network interfaces: the running set and what is pending (`crate::network`).
    pub(crate) network: super::network::NodeNetwork,
    pub(crate) pstart: u64,
    /// DNS, hosts and time zone (`/nodes/{node}/dns`, `hosts`, `time`).
    pub(crate) settings: super::node_settings::NodeSettings,
}

/// The whole simulated cluster.
#[derive(Debug, Default)]
pub(crate) struct Cluster {
    pub(crate) nodes: BTreeMap<String, Node>,
    pub(crate) guests: BTreeMap<u32, Guest>,
    /// Storages keyed by (node, storage id).
    pub(crate) storages: BTreeMap<(String, String), Storage>,
    pub(crate) tasks: BTreeMap<String, Task>,
    pub(crate) next_pid: u32,
    /// What each container was created from (`ostemplate`, `ssh-public-keys`, ...; never the
    /// password): PVE writes these into the guest, out of the API's sight. For tests.
    pub(crate) created_from: BTreeMap<u32, BTreeMap<String, String>>,
    /// Resource pools by id.
    pub(crate) pools: BTreeMap<String, super::pools::Pool>,
    /// The firewall configuration (cluster, nodes, guests).
    pub(crate) firewall: super::firewall::Firewall,
    /// `datacenter.cfg`, HA, replication and metric servers.
    pub(crate) cluster_cfg: super::cluster_cfg::ClusterConfig,
    /// SDN zones, vnets and subnets, written and running.
    pub(crate) sdn: super::sdn::Sdn,
    /// Users, groups, roles, ACL entries and what the API shows of tokens.
    pub(crate) access: super::access_control::AccessControl,
    /// The registry OCI images are pulled from, and the archives pulled.
    pub(crate) oci: super::oci::Oci,
}

/// Seconds since the epoch.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

impl Cluster {
    /// The node, or the error pveproxy gives when it cannot resolve an unknown node name.
    pub(crate) fn node(&self, node: &str) -> ApiResult<&Node> {
        self.nodes.get(node).ok_or_else(|| {
            ApiError::die(format!(
                "hostname lookup '{node}' failed - failed to get address info for: {node}: Name or service not known"
            ))
        })
    }

    /// A guest addressed as `/nodes/{node}/{kind}/{vmid}`: must exist on that node.
    pub(crate) fn guest_at(
        &mut self,
        node: &str,
        kind: GuestKind,
        vmid: u32,
    ) -> ApiResult<&mut Guest> {
        self.node(node)?;
        match self.guests.get_mut(&vmid) {
            Some(g) if g.node == node && g.kind == kind => Ok(g),
            _ => Err(ApiError::die(format!(
                "Configuration file '{}' does not exist",
                conf_path(node, kind, vmid)
            ))),
        }
    }

    /// `check_vmid_unused`: `CT 100 already exists on node 'pve'`.
    pub(crate) fn check_vmid_unused(&self, vmid: u32) -> ApiResult<()> {
        match self.guests.get(&vmid) {
            Some(g) => Err(ApiError::die(format!(
                "{} {vmid} already exists on node '{}'",
                g.kind.label(),
                g.node
            ))),
            None => Ok(()),
        }
    }

    /// The lowest free VMID from 100.
    pub(crate) fn next_id(&self) -> u32 {
        (100..)
            .find(|id| !self.guests.contains_key(id))
            .unwrap_or(100)
    }

    pub(crate) fn storage_mut(&mut self, node: &str, sid: &str) -> ApiResult<&mut Storage> {
        self.storages
            .get_mut(&(node.to_owned(), sid.to_owned()))
            .ok_or_else(|| ApiError::die(format!("storage '{sid}' does not exist")))
    }

    /// A new task UPID for `kind` on `node` started by `user` (`user@realm[!token]`).
    pub(crate) fn new_task(&mut self, node: &str, kind: &str, id: &str, user: &str) -> String {
        self.next_pid = self.next_pid.wrapping_add(1).max(0x1000);
        let pstart = self.nodes.get(node).map_or(0x12C3D4, |n| n.pstart) + u64::from(self.next_pid);
        let upid = Upid {
            node: node.to_owned(),
            pid: self.next_pid,
            pstart,
            starttime: now(),
            kind: kind.to_owned(),
            id: id.to_owned(),
            user: user.to_owned(),
        };
        let text = upid.render();
        self.tasks.insert(text.clone(), Task::new(upid));
        text
    }

    /// Removes a guest's disks from every storage (destroy, failed create).
    pub(crate) fn destroy_volumes_of(&mut self, node: &str, vmid: u32) {
        for ((n, _), storage) in &mut self.storages {
            if n == node {
                storage
                    .volumes
                    .retain(|_, v| v.vmid != Some(vmid) || v.content == "backup");
            }
        }
    }
}
