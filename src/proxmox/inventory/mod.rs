//! `proxmox::inventory` refreshes what the plan needs from the cluster: `cluster/resources`
//! once, then `pending` (current and pending values in one list) for each guest atoll manages (or may adopt) or
//! protects, once any lock on it has cleared, the storage content lists of the downloads'
//! storages, and the pools and firewall objects declared or in state. Requests run
//! concurrently; the client's per-node limit keeps each node within PVE's worker count. It must not decide
//! anything about the plan.

mod access;
mod cluster;
mod network;
mod objects;
mod sdn;

pub(crate) use access::live as access_live;
pub use access::{own_access, with_own_access};
pub(crate) use cluster::{fields as cluster_fields, listed as cluster_listed};
pub(crate) use objects::entries as object_entries;

use std::collections::{BTreeMap, BTreeSet};

use futures::{FutureExt, StreamExt, TryStreamExt, stream};

use crate::proxmox::client::{ClusterGuest, ProxmoxApi, PveError, RunState};
use crate::proxmox::plan::{
    Desired, Inventory, LiveGuest, PendingEntry, Power, StateEntry, config_from_json,
};
use crate::proxmox::types::{self, NodeName, StorageId};

/// How many guest reads are in flight at once across the cluster (each node is further
/// limited by the client).
const IN_FLIGHT: usize = 64;

/// Why the cluster could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    #[error("refreshing from Proxmox VE: {0}")]
    Api(#[from] PveError),
    #[error("refreshing from Proxmox VE: {what} '{value}' is not valid: {detail}")]
    Invalid {
        what: &'static str,
        value: String,
        detail: String,
    },
}

/// The guests whose config the plan reads: those in state, and desired guests with a fixed
/// VMID (a create whose VMID is taken must be seen, to adopt or refuse it).
fn wanted_vmids(state: &[StateEntry], desired: &[Desired]) -> BTreeSet<u32> {
    let in_state = state.iter().filter_map(|entry| match entry {
        StateEntry::Guest { vm_id, .. } => Some(*vm_id),
        StateEntry::Download { .. } | StateEntry::Object { .. } => None,
    });
    let declared = desired.iter().filter_map(|d| match d {
        Desired::Guest(guest) => guest.vm_id,
        Desired::Download(_) | Desired::Object(_) => None,
    });
    in_state.chain(declared).collect()
}

/// `(node, storage)` pairs whose content lists the plan needs.
fn wanted_storages(state: &[StateEntry], desired: &[Desired]) -> BTreeSet<(String, String)> {
    let from_state = state.iter().filter_map(|entry| match entry {
        StateEntry::Download { node, volid, .. } => {
            let storage = volid.split_once(':')?.0;
            Some((node.clone(), storage.to_owned()))
        }
        StateEntry::Guest { .. } | StateEntry::Object { .. } => None,
    });
    let declared = desired.iter().filter_map(|d| match d {
        Desired::Download(file) => Some((file.node.clone(), file.datastore.clone())),
        Desired::Guest(_) | Desired::Object(_) => None,
    });
    from_state.chain(declared).collect()
}

/// The pools and firewall objects the plan compares: those in state and those declared.
fn wanted_objects(state: &[StateEntry], desired: &[Desired]) -> Vec<types::ObjectId> {
    let from_state = state.iter().filter_map(|entry| match entry {
        StateEntry::Object { id, .. } => Some(id.clone()),
        _ => None,
    });
    let declared = desired.iter().filter_map(|d| match d {
        Desired::Object(object) => Some(object.id.clone()),
        _ => None,
    });
    let mut ids: Vec<types::ObjectId> = Vec::new();
    for id in from_state.chain(declared) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// Reads the cluster for one plan.
pub async fn refresh(
    api: &dyn ProxmoxApi,
    state: &[StateEntry],
    desired: &[Desired],
) -> Result<Inventory, InventoryError> {
    let mut partial = refresh_state(api, state).await?;
    partial.complete(api, state, desired).await?;
    Ok(partial.inventory)
}

/// A refresh made before the configuration is known: `cluster/resources` and the guests in
/// state. [`Partial::complete`] adds what the configuration needs.
#[derive(Debug)]
pub struct Partial {
    inventory: Inventory,
    detailed: BTreeSet<u32>,
    /// `cluster/resources` as listed, for what reads it whole (the data sources).
    cluster: Vec<ClusterGuest>,
}

/// Reads `cluster/resources` and the guests atoll's state names, so it can run while the
/// configuration is still being evaluated.
pub async fn refresh_state(
    api: &dyn ProxmoxApi,
    state: &[StateEntry],
) -> Result<Partial, InventoryError> {
    let cluster = api.cluster_guests().await?;
    let mut partial = Partial {
        inventory: Inventory::default(),
        detailed: BTreeSet::new(),
        cluster: Vec::new(),
    };
    for guest in &cluster {
        partial
            .inventory
            .guests
            .insert(guest.vmid.get(), summary(guest));
    }
    let wanted = wanted_vmids(state, &[]);
    partial.read(api, &cluster, &wanted).await?;
    partial.cluster = cluster;
    Ok(partial)
}

impl Partial {
    async fn read(
        &mut self,
        api: &dyn ProxmoxApi,
        cluster: &[ClusterGuest],
        wanted: &BTreeSet<u32>,
    ) -> Result<(), InventoryError> {
        // Collected first, and the reads boxed: a stream built from borrowing closures makes
        // the whole refresh future `!Send` for some lifetimes (rustc issue 102211).
        let todo = across_nodes(
            cluster
                .iter()
                .filter(|g| {
                    wanted.contains(&g.vmid.get()) && !self.detailed.contains(&g.vmid.get())
                })
                .cloned(),
        );
        let reads: Vec<_> = todo
            .into_iter()
            .map(|guest| read_guest(api, guest).boxed())
            .collect();
        let detailed: Vec<Option<LiveGuest>> = stream::iter(reads)
            .buffer_unordered(IN_FLIGHT)
            .try_collect()
            .await?;
        for guest in detailed.into_iter().flatten() {
            self.detailed.insert(guest.vm_id);
            self.inventory.guests.insert(guest.vm_id, guest);
        }
        Ok(())
    }

    /// Reads what the configuration adds: guests declared with a VMID that state does not
    /// name, and the storages of downloads.
    pub async fn complete(
        &mut self,
        api: &dyn ProxmoxApi,
        state: &[StateEntry],
        desired: &[Desired],
    ) -> Result<(), InventoryError> {
        let wanted = wanted_vmids(state, desired);
        let missing: Vec<ClusterGuest> = self
            .inventory
            .guests
            .values()
            .filter(|g| wanted.contains(&g.vm_id) && !self.detailed.contains(&g.vm_id))
            .filter_map(cluster_entry)
            .collect();
        self.read(api, &missing, &wanted).await?;
        self.inventory.volumes = read_volumes(api, wanted_storages(state, desired)).await?;
        let objects = wanted_objects(state, desired);
        let net_nodes = network::nodes_of(&objects);
        self.inventory.objects = objects::read_objects(api, objects).await?;
        if !net_nodes.is_empty() {
            // which guests use a bridge: the NICs of every guest on those nodes
            let on_nodes: Vec<u32> = self
                .inventory
                .guests
                .values()
                .filter(|g| net_nodes.contains(&g.node))
                .map(|g| g.vm_id)
                .collect();
            self.read_more(api, on_nodes).await?;
        }
        Ok(())
    }

    /// Reads the config of more guests (the protected ones, whose network identity the guard
    /// checks); VMIDs not on the cluster or already read are skipped.
    pub async fn read_more(
        &mut self,
        api: &dyn ProxmoxApi,
        vm_ids: impl IntoIterator<Item = u32>,
    ) -> Result<(), InventoryError> {
        let wanted: BTreeSet<u32> = vm_ids.into_iter().collect();
        let missing: Vec<ClusterGuest> = self
            .inventory
            .guests
            .values()
            .filter(|g| wanted.contains(&g.vm_id) && !self.detailed.contains(&g.vm_id))
            .filter_map(cluster_entry)
            .collect();
        self.read(api, &missing, &wanted).await
    }

    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// Every guest as `cluster/resources` listed it.
    pub fn cluster(&self) -> &[ClusterGuest] {
        &self.cluster
    }

    pub fn into_inventory(self) -> Inventory {
        self.inventory
    }
}

/// The `cluster/resources` entry a summary was made from.
/// The guests in turn from each node (node A's first, node B's first, node A's second, ...):
/// each node serves only a few requests at a time (PVE's three workers), so the reads in
/// flight are spread over the nodes instead of queueing on one while the others sit idle.
fn across_nodes(guests: impl Iterator<Item = ClusterGuest>) -> Vec<ClusterGuest> {
    let mut by_node: BTreeMap<String, std::collections::VecDeque<ClusterGuest>> = BTreeMap::new();
    for guest in guests {
        by_node
            .entry(guest.node.to_string())
            .or_default()
            .push_back(guest);
    }
    let mut out = Vec::new();
    while !by_node.is_empty() {
        by_node.retain(|_, queue| {
            out.extend(queue.pop_front());
            !queue.is_empty()
        });
    }
    out
}

fn cluster_entry(guest: &LiveGuest) -> Option<ClusterGuest> {
    Some(ClusterGuest {
        kind: guest.kind,
        vmid: types::VmId::new(guest.vm_id).ok()?,
        node: guest.node.parse().ok()?,
        name: guest.name.clone(),
        status: match guest.power {
            Power::Running => RunState::Running,
            Power::Stopped => RunState::Stopped,
        },
        template: false,
        tags: guest.config.get("tags").cloned(),
        lock: guest.config.get("lock").cloned(),
    })
}

fn power_of(status: RunState) -> Power {
    if status == RunState::Running {
        Power::Running
    } else {
        Power::Stopped
    }
}

/// A guest atoll does not read in detail: what `cluster/resources` says, without its config.
fn summary(guest: &ClusterGuest) -> LiveGuest {
    LiveGuest {
        vm_id: guest.vmid.get(),
        node: guest.node.to_string(),
        kind: guest.kind,
        name: guest.name.clone(),
        power: power_of(guest.status),
        config: summary_config(guest),
        pending: Vec::new(),
    }
}

/// What `cluster/resources` tells of a guest's config: its tags and its lock.
fn summary_config(guest: &ClusterGuest) -> BTreeMap<String, String> {
    let tags = guest.tags.as_ref().map(|t| ("tags".to_owned(), t.clone()));
    let lock = guest.lock.as_ref().map(|l| ("lock".to_owned(), l.clone()));
    tags.into_iter().chain(lock).collect()
}

/// One guest as its `pending` list tells it; `None` when it vanished meanwhile.
///
/// `GET .../pending` is pve-guest-common's `config_with_pending_array` over the same
/// `load_config` that `GET config?current=1` returns (pve-container `API2/LXC.pm` `vm_pending`
/// and `API2/LXC/Config.pm` `vm_config`; qemu-server `API2/Qemu.pm` likewise): every key of
/// the config file with its current `value` (the `digest` and `lock` among them, read-restricted
/// keys removed the same way, a cloud-init password masked the same way), its `pending` value and
/// its queued `delete`. Only array-valued keys are skipped (a container's raw `lxc.*` lines), and
/// the plan never reads those ([`config_from_json`] drops them). So one request per guest tells
/// what `config?current=1` and `pending` told together.
///
/// A locked guest (a task still runs on it, e.g. a create whose apply was killed) is read once
/// its lock clears, so the plan sees what the task left, not the guest half-made.
async fn read_guest(
    api: &dyn ProxmoxApi,
    guest: ClusterGuest,
) -> Result<Option<LiveGuest>, PveError> {
    // `cluster/resources` may be seconds old: the config's own `lock` is checked as well.
    let mut locked = guest.lock.is_some();
    let entries = loop {
        if locked && !unlocked(api, &guest).await? {
            return Ok(None);
        }
        let entries = match api.guest_pending(&guest.node, guest.kind, guest.vmid).await {
            Ok(entries) => entries,
            Err(PveError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let has_lock = entries.iter().any(|e| e.key == "lock" && e.value.is_some());
        if !has_lock || locked {
            break entries;
        }
        locked = true;
    };
    let current: serde_json::Map<String, serde_json::Value> = entries
        .iter()
        .filter_map(|e| Some((e.key.clone(), e.value.clone()?)))
        .collect();
    Ok(Some(LiveGuest {
        vm_id: guest.vmid.get(),
        node: guest.node.to_string(),
        kind: guest.kind,
        name: guest.name.clone(),
        power: power_of(guest.status),
        config: config_from_json(&current),
        pending: entries.into_iter().map(pending_entry).collect(),
    }))
}

/// Waits for the guest's lock to clear; `false` if the guest is gone.
async fn unlocked(api: &dyn ProxmoxApi, guest: &ClusterGuest) -> Result<bool, PveError> {
    match api.wait_unlocked(&guest.node, guest.kind, guest.vmid).await {
        Ok(()) => Ok(true),
        Err(PveError::NotFound(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

fn text(value: Option<serde_json::Value>) -> Option<String> {
    match value? {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Null => None,
        serde_json::Value::Bool(flag) => Some(u8::from(flag).to_string()),
        other => Some(other.to_string()),
    }
}

fn pending_entry(entry: crate::proxmox::client::PendingEntry) -> PendingEntry {
    PendingEntry {
        key: entry.key,
        value: text(entry.value),
        pending: text(entry.pending),
        delete: entry.delete.is_some_and(|d| d > 0),
    }
}

async fn read_volumes(
    api: &dyn ProxmoxApi,
    storages: BTreeSet<(String, String)>,
) -> Result<BTreeMap<String, Vec<String>>, InventoryError> {
    let mut lists = Vec::new();
    for (node, storage) in storages {
        let node_name: NodeName = parse("node name", &node)?;
        let storage_id: StorageId = parse("storage", &storage)?;
        lists.push(async move {
            match api.storage_content(&node_name, &storage_id, None).await {
                Ok(list) => Ok((node, list.into_iter().map(|v| v.volid).collect())),
                // A storage that does not exist holds nothing; the download will say why.
                Err(PveError::NotFound(_)) => Ok((node, Vec::new())),
                Err(e) => Err(InventoryError::Api(e)),
            }
        });
    }
    let found: Vec<(String, Vec<String>)> = futures::future::try_join_all(lists).await?;
    let mut volumes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (node, list) in found {
        volumes.entry(node).or_default().extend(list);
    }
    Ok(volumes)
}

pub(crate) fn parse<T: std::str::FromStr<Err = types::PropertyError>>(
    what: &'static str,
    value: &str,
) -> Result<T, InventoryError> {
    value
        .parse()
        .map_err(|e: types::PropertyError| InventoryError::Invalid {
            what,
            value: value.to_owned(),
            detail: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guest(node: &str, vmid: u32) -> ClusterGuest {
        ClusterGuest {
            kind: types::GuestKind::Qemu,
            vmid: types::VmId::new(vmid).expect("vmid"),
            node: node.parse().expect("node"),
            name: None,
            status: RunState::Running,
            template: false,
            tags: None,
            lock: None,
        }
    }

    #[test]
    fn reads_take_the_nodes_in_turn() {
        let cluster = [
            guest("pve1", 100),
            guest("pve1", 101),
            guest("pve1", 102),
            guest("pve2", 200),
            guest("pve2", 201),
        ];
        let order: Vec<u32> = across_nodes(cluster.into_iter())
            .iter()
            .map(|g| g.vmid.get())
            .collect();
        assert_eq!(order, [100, 200, 101, 201, 102]);
    }
}
