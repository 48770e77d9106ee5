//! Typed request and response values of the endpoints atoll uses. Responses are lenient where PVE
//! is (numbers that may arrive as strings, `0|1` booleans) and strict where atoll relies on a
//! value (ids, node names, task ids).

use std::collections::BTreeMap;

use secrecy::SecretString;
use serde::{Deserialize, Deserializer, Serialize};

use crate::proxmox::types::{GuestKind, LxcNet, NodeName, PropertyError, StorageId, Upid, VmId};

/// `0|1`, `true|false` or `"0"|"1"` as PVE sends them; absent is false.
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(match Option::<serde_json::Value>::deserialize(d)? {
        Some(serde_json::Value::Bool(b)) => b,
        Some(serde_json::Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(serde_json::Value::String(s)) => !matches!(s.as_str(), "" | "0"),
        _ => false,
    })
}

/// A number that may come as a JSON string.
fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(match Option::<serde_json::Value>::deserialize(d)? {
        Some(serde_json::Value::Number(n)) => n.as_u64().or_else(|| n.as_f64().map(|f| f as u64)),
        Some(serde_json::Value::String(s)) => s.parse().ok(),
        _ => None,
    })
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Version {
    pub version: String,
    #[serde(default)]
    pub release: Option<String>,
    #[serde(default)]
    pub repoid: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct NodeInfo {
    pub node: NodeName,
    /// `online`, `offline` or `unknown`.
    #[serde(default)]
    pub status: Option<String>,
}

/// A guest's power state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    Running,
    Stopped,
    Paused,
    #[serde(other)]
    Unknown,
}

/// One guest from `GET /cluster/resources?type=vm`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterGuest {
    pub kind: GuestKind,
    pub vmid: VmId,
    pub node: NodeName,
    pub name: Option<String>,
    pub status: RunState,
    pub template: bool,
    pub tags: Option<String>,
    pub lock: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct RawResource {
    #[serde(rename = "type")]
    kind: String,
    vmid: Option<VmId>,
    node: Option<NodeName>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    status: Option<RunState>,
    #[serde(default, deserialize_with = "flag")]
    template: bool,
    #[serde(default)]
    tags: Option<String>,
    #[serde(default)]
    lock: Option<String>,
}

impl RawResource {
    /// `None` for entries that are not guests (storage, nodes, sdn) or lack ids.
    pub(crate) fn into_guest(self) -> Option<ClusterGuest> {
        let kind = match self.kind.as_str() {
            "lxc" => GuestKind::Lxc,
            "qemu" => GuestKind::Qemu,
            _ => return None,
        };
        Some(ClusterGuest {
            kind,
            vmid: self.vmid?,
            node: self.node?,
            name: self.name,
            status: self.status.unwrap_or(RunState::Unknown),
            template: self.template,
            tags: self.tags,
            lock: self.lock,
        })
    }
}

/// A guest configuration (`GET .../config`): every key as PVE returned it, plus the digest.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
pub struct GuestConfig {
    #[serde(default)]
    pub digest: Option<String>,
    #[serde(flatten)]
    pub values: BTreeMap<String, serde_json::Value>,
}

impl GuestConfig {
    /// A key's value as text (numbers are printed, `null` is absent).
    pub fn get(&self, key: &str) -> Option<String> {
        match self.values.get(key)? {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Null => None,
            other => Some(other.to_string()),
        }
    }

    /// The `net<N>` values in index order.
    pub fn net_values(&self) -> impl Iterator<Item = (u32, &str)> {
        let mut nets: Vec<(u32, &str)> = self
            .values
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("net")?.parse().ok()?, v.as_str()?)))
            .collect();
        nets.sort_by_key(|(i, _)| *i);
        nets.into_iter()
    }

    /// Parsed LXC interfaces.
    pub fn lxc_nets(&self) -> Result<Vec<(u32, LxcNet)>, PropertyError> {
        self.net_values()
            .map(|(i, v)| Ok((i, v.parse()?)))
            .collect()
    }
}

/// One row of `GET .../pending`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PendingEntry {
    pub key: String,
    #[serde(default)]
    pub value: Option<serde_json::Value>,
    #[serde(default)]
    pub pending: Option<serde_json::Value>,
    /// 1 = delete queued, 2 = forced delete queued.
    #[serde(default, deserialize_with = "lenient_u64")]
    pub delete: Option<u64>,
}

/// `GET .../status/current`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct GuestStatus {
    pub status: RunState,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub lock: Option<String>,
    #[serde(default, deserialize_with = "lenient_u64")]
    pub uptime: Option<u64>,
    #[serde(default, deserialize_with = "flag")]
    pub template: bool,
}

/// One interface from `GET /lxc/{id}/interfaces`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct GuestInterface {
    pub name: String,
    #[serde(default)]
    pub hwaddr: Option<String>,
    #[serde(default)]
    pub inet: Option<String>,
    #[serde(default)]
    pub inet6: Option<String>,
}

/// One storage from `GET /nodes/{node}/storage`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct StorageStatus {
    pub storage: StorageId,
    #[serde(rename = "type")]
    pub kind: String,
    /// Comma-separated content types (`rootdir,images`).
    #[serde(default)]
    pub content: String,
    #[serde(default, deserialize_with = "flag")]
    pub active: bool,
    #[serde(default, deserialize_with = "flag")]
    pub enabled: bool,
    #[serde(default, deserialize_with = "flag")]
    pub shared: bool,
    #[serde(default, deserialize_with = "lenient_u64")]
    pub total: Option<u64>,
    #[serde(default, deserialize_with = "lenient_u64")]
    pub used: Option<u64>,
    #[serde(default, deserialize_with = "lenient_u64")]
    pub avail: Option<u64>,
}

impl StorageStatus {
    pub fn allows(&self, content: &str) -> bool {
        self.content.split(',').any(|c| c.trim() == content)
    }
}

/// One volume from `GET /nodes/{node}/storage/{storage}/content`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct StorageVolume {
    pub volid: String,
    pub content: String,
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default, deserialize_with = "lenient_u64")]
    pub size: Option<u64>,
    #[serde(default)]
    pub vmid: Option<VmId>,
}

/// `GET /nodes/{node}/tasks/{upid}/status`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct TaskStatus {
    /// `running` or `stopped`.
    pub status: String,
    #[serde(default)]
    pub exitstatus: Option<String>,
}

/// One row of `GET /nodes/{node}/tasks`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct TaskSummary {
    pub upid: String,
    /// `vzcreate`, `vzdump`, `vzmigrate`, ...
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The exit status once the task ended; `RUNNING` while it runs (absent in old answers).
    #[serde(default)]
    pub status: Option<String>,
}

impl TaskSummary {
    /// Whether the task still runs: PVE lists a running task with `status` `RUNNING`
    /// (pve-manager `PVE/API2/Tasks.pm` `node_tasks`, from the active-workers file).
    pub fn is_running(&self) -> bool {
        self.status.as_deref().is_none_or(|s| s == "RUNNING")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct TaskLogLine {
    pub n: u64,
    pub t: String,
}

/// How a finished task ended when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskOutcome {
    pub upid: Upid,
    /// `OK` or `WARNINGS: n`.
    pub exitstatus: String,
}

/// `POST /nodes/{node}/lxc`. `options` holds config keys and create-only keys (`ostemplate`,
/// `storage`, `unprivileged`, `start`, `ssh-public-keys`, `pool`, ...); the root password is kept
/// apart so it never appears in `Debug`.
#[derive(Debug, Clone)]
pub struct GuestCreate {
    pub vmid: VmId,
    pub options: BTreeMap<String, String>,
    pub password: Option<SecretString>,
}

/// `PUT .../config`: keys to set, keys to delete, and the digest the change was planned against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigChange {
    pub set: BTreeMap<String, String>,
    pub delete: Vec<String>,
    pub digest: Option<String>,
}

/// A power operation on a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerAction {
    Start,
    /// Immediate stop (like pulling the plug).
    Stop,
    /// Clean shutdown; `force_stop` kills it after `timeout` seconds.
    Shutdown {
        timeout: Option<u32>,
        force_stop: bool,
    },
    /// Stop and start again; applies pending changes.
    Reboot {
        timeout: Option<u32>,
    },
}

/// `DELETE /nodes/{node}/lxc/{vmid}` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeleteOptions {
    /// Also remove it from backup, replication and HA jobs.
    pub purge: bool,
    pub destroy_unreferenced_disks: bool,
    /// Stop it first if running.
    pub force: bool,
}

/// `POST /nodes/{node}/storage/{storage}/download-url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadUrl {
    pub url: String,
    /// `vztmpl`, `iso` or `import`.
    pub content: String,
    pub filename: String,
    /// `(algorithm, hex digest)`, e.g. `("sha256", "...")`.
    pub checksum: Option<(String, String)>,
    pub verify_certificates: Option<bool>,
}
