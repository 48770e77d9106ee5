//! The seam the engine (inventory, apply, guard) talks through: object-safe, so tests and later
//! code can hold an `Arc<dyn ProxmoxApi>`.

use async_trait::async_trait;

use super::files::{StorageConfig, Upload};
use super::model::{
    ClusterGuest, ConfigChange, DeleteOptions, DownloadUrl, GuestConfig, GuestCreate,
    GuestInterface, GuestStatus, NodeInfo, PendingEntry, PowerAction, StorageStatus, StorageVolume,
    TaskOutcome, Version,
};
use super::objects::{ObjectTarget, ObjectWrite};
use super::reads::ClusterRead;
use super::tasks::CreateOutcome;
use super::template::GuestClone;
use super::{ProxmoxClient, PveError};
use crate::proxmox::types::{GuestKind, NodeName, ObjectId, StorageId, Upid, VmId};
use serde_json::Value as Json;

/// The Proxmox VE operations atoll's engine needs.
#[async_trait]
pub trait ProxmoxApi: Send + Sync + std::fmt::Debug {
    async fn version(&self) -> Result<Version, PveError>;
    async fn nodes(&self) -> Result<Vec<NodeInfo>, PveError>;
    async fn cluster_guests(&self) -> Result<Vec<ClusterGuest>, PveError>;
    async fn next_id(&self, want: Option<VmId>) -> Result<VmId, PveError>;
    async fn guest_config(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        current: bool,
    ) -> Result<GuestConfig, PveError>;
    async fn guest_status(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<GuestStatus, PveError>;
    async fn guest_pending(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<Vec<PendingEntry>, PveError>;
    async fn lxc_interfaces(
        &self,
        node: &NodeName,
        vmid: VmId,
    ) -> Result<Option<Vec<GuestInterface>>, PveError>;
    async fn guest_create_and_wait(
        &self,
        node: &NodeName,
        kind: GuestKind,
        req: &GuestCreate,
    ) -> Result<CreateOutcome, PveError>;
    async fn guest_update_config(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        change: &ConfigChange,
    ) -> Result<(), PveError>;
    async fn guest_power(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        action: PowerAction,
    ) -> Result<Upid, PveError>;
    async fn guest_delete(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        options: DeleteOptions,
    ) -> Result<Upid, PveError>;
    async fn guest_resize(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        disk: &str,
        size: &str,
        digest: Option<&str>,
    ) -> Result<Upid, PveError>;
    async fn guest_clone(
        &self,
        node: &NodeName,
        kind: GuestKind,
        source: VmId,
        req: &GuestClone,
    ) -> Result<Upid, PveError>;
    async fn guest_template(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<Option<Upid>, PveError>;
    async fn qemu_cloudinit(&self, node: &NodeName, vmid: VmId) -> Result<(), PveError>;
    async fn storages(&self, node: &NodeName) -> Result<Vec<StorageStatus>, PveError>;
    /// PVE's raw `data` for a data source's read ([`ClusterRead`]).
    async fn cluster_read(&self, read: &ClusterRead) -> Result<serde_json::Value, PveError>;
    async fn storage_content(
        &self,
        node: &NodeName,
        storage: &StorageId,
        content: Option<&str>,
    ) -> Result<Vec<StorageVolume>, PveError>;
    async fn download_url(
        &self,
        node: &NodeName,
        storage: &StorageId,
        req: &DownloadUrl,
    ) -> Result<Upid, PveError>;
    async fn oci_registry_pull(
        &self,
        node: &NodeName,
        storage: &StorageId,
        reference: &str,
        filename: &str,
    ) -> Result<Upid, PveError>;
    async fn upload(
        &self,
        node: &NodeName,
        storage: &StorageId,
        req: &Upload,
    ) -> Result<Upid, PveError>;
    async fn storage_config(&self, storage: &StorageId) -> Result<StorageConfig, PveError>;
    async fn delete_volume(
        &self,
        node: &NodeName,
        storage: &StorageId,
        volid: &str,
    ) -> Result<Option<Upid>, PveError>;
    async fn wait_task(&self, upid: &Upid) -> Result<TaskOutcome, PveError>;
    /// `GET` of a pool's or a firewall object's path ([`ObjectTarget`]).
    async fn object_read(&self, id: &ObjectId, target: &ObjectTarget) -> Result<Json, PveError>;
    /// Creates, changes or deletes (part of) a pool or a firewall object.
    async fn object_write(
        &self,
        id: &ObjectId,
        target: &ObjectTarget,
        write: ObjectWrite,
        params: &[(String, String)],
    ) -> Result<(), PveError>;
    /// Applies a node's pending network configuration (`ifreload`), as a task.
    async fn network_reload(&self, node: &NodeName) -> Result<Upid, PveError>;
    /// A node's network interfaces, and PVE's diff of what is pending (written, not applied).
    async fn network_list(&self, node: &NodeName) -> Result<(Json, Option<String>), PveError>;
    /// A `POST` that creates an object and answers what PVE made of it (an API token's
    /// secret, returned this once): the answer may hold a secret, never log it.
    async fn object_create(
        &self,
        id: &ObjectId,
        target: &ObjectTarget,
        params: &[(String, String)],
    ) -> Result<Json, PveError>;
    /// Who atoll authenticates as: `user@realm!token` for an API token (never its secret),
    /// `user@realm` for a password login; `None` when unknown.
    fn caller(&self) -> Option<String> {
        None
    }
    /// Waits (bounded) until the guest holds no lock; see [`ProxmoxClient::wait_unlocked`].
    async fn wait_unlocked(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<(), PveError>;
    /// `PUT /cluster/sdn`: applies the pending SDN configuration; the reload task.
    async fn sdn_apply(&self) -> Result<Upid, PveError>;
}

#[async_trait]
impl ProxmoxApi for ProxmoxClient {
    async fn version(&self) -> Result<Version, PveError> {
        ProxmoxClient::version(self).await
    }
    async fn nodes(&self) -> Result<Vec<NodeInfo>, PveError> {
        ProxmoxClient::nodes(self).await
    }
    async fn cluster_guests(&self) -> Result<Vec<ClusterGuest>, PveError> {
        ProxmoxClient::cluster_guests(self).await
    }
    async fn next_id(&self, want: Option<VmId>) -> Result<VmId, PveError> {
        ProxmoxClient::next_id(self, want).await
    }
    async fn guest_config(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        current: bool,
    ) -> Result<GuestConfig, PveError> {
        ProxmoxClient::guest_config(self, node, kind, vmid, current).await
    }
    async fn guest_status(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<GuestStatus, PveError> {
        ProxmoxClient::guest_status(self, node, kind, vmid).await
    }
    async fn guest_pending(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<Vec<PendingEntry>, PveError> {
        ProxmoxClient::guest_pending(self, node, kind, vmid).await
    }
    async fn lxc_interfaces(
        &self,
        node: &NodeName,
        vmid: VmId,
    ) -> Result<Option<Vec<GuestInterface>>, PveError> {
        ProxmoxClient::lxc_interfaces(self, node, vmid).await
    }
    async fn guest_create_and_wait(
        &self,
        node: &NodeName,
        kind: GuestKind,
        req: &GuestCreate,
    ) -> Result<CreateOutcome, PveError> {
        ProxmoxClient::guest_create_and_wait(self, node, kind, req).await
    }
    async fn guest_update_config(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        change: &ConfigChange,
    ) -> Result<(), PveError> {
        ProxmoxClient::guest_update_config(self, node, kind, vmid, change).await
    }
    async fn guest_power(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        action: PowerAction,
    ) -> Result<Upid, PveError> {
        ProxmoxClient::guest_power(self, node, kind, vmid, action).await
    }
    async fn guest_delete(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        options: DeleteOptions,
    ) -> Result<Upid, PveError> {
        ProxmoxClient::guest_delete(self, node, kind, vmid, options).await
    }
    async fn guest_resize(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        disk: &str,
        size: &str,
        digest: Option<&str>,
    ) -> Result<Upid, PveError> {
        ProxmoxClient::guest_resize(self, node, kind, vmid, disk, size, digest).await
    }
    async fn guest_clone(
        &self,
        node: &NodeName,
        kind: GuestKind,
        source: VmId,
        req: &GuestClone,
    ) -> Result<Upid, PveError> {
        ProxmoxClient::guest_clone(self, node, kind, source, req).await
    }
    async fn guest_template(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<Option<Upid>, PveError> {
        ProxmoxClient::guest_template(self, node, kind, vmid).await
    }
    async fn qemu_cloudinit(&self, node: &NodeName, vmid: VmId) -> Result<(), PveError> {
        ProxmoxClient::qemu_cloudinit(self, node, vmid).await
    }
    async fn cluster_read(&self, read: &ClusterRead) -> Result<serde_json::Value, PveError> {
        ProxmoxClient::cluster_read(self, read).await
    }
    async fn storages(&self, node: &NodeName) -> Result<Vec<StorageStatus>, PveError> {
        ProxmoxClient::storages(self, node).await
    }
    async fn storage_content(
        &self,
        node: &NodeName,
        storage: &StorageId,
        content: Option<&str>,
    ) -> Result<Vec<StorageVolume>, PveError> {
        ProxmoxClient::storage_content(self, node, storage, content).await
    }
    async fn download_url(
        &self,
        node: &NodeName,
        storage: &StorageId,
        req: &DownloadUrl,
    ) -> Result<Upid, PveError> {
        ProxmoxClient::download_url(self, node, storage, req).await
    }
    async fn oci_registry_pull(
        &self,
        node: &NodeName,
        storage: &StorageId,
        reference: &str,
        filename: &str,
    ) -> Result<Upid, PveError> {
        ProxmoxClient::oci_registry_pull(self, node, storage, reference, filename).await
    }
    async fn upload(
        &self,
        node: &NodeName,
        storage: &StorageId,
        req: &Upload,
    ) -> Result<Upid, PveError> {
        ProxmoxClient::upload(self, node, storage, req).await
    }
    async fn storage_config(&self, storage: &StorageId) -> Result<StorageConfig, PveError> {
        ProxmoxClient::storage_config(self, storage).await
    }
    async fn delete_volume(
        &self,
        node: &NodeName,
        storage: &StorageId,
        volid: &str,
    ) -> Result<Option<Upid>, PveError> {
        ProxmoxClient::delete_volume(self, node, storage, volid).await
    }
    async fn wait_task(&self, upid: &Upid) -> Result<TaskOutcome, PveError> {
        ProxmoxClient::wait_task(self, upid).await
    }
    async fn object_read(&self, id: &ObjectId, target: &ObjectTarget) -> Result<Json, PveError> {
        ProxmoxClient::object_read(self, id, target).await
    }
    async fn object_write(
        &self,
        id: &ObjectId,
        target: &ObjectTarget,
        write: ObjectWrite,
        params: &[(String, String)],
    ) -> Result<(), PveError> {
        ProxmoxClient::object_write(self, id, target, write, params).await
    }
    async fn network_reload(&self, node: &NodeName) -> Result<Upid, PveError> {
        ProxmoxClient::network_reload(self, node).await
    }
    async fn network_list(&self, node: &NodeName) -> Result<(Json, Option<String>), PveError> {
        ProxmoxClient::network_list(self, node).await
    }
    async fn object_create(
        &self,
        id: &ObjectId,
        target: &ObjectTarget,
        params: &[(String, String)],
    ) -> Result<Json, PveError> {
        ProxmoxClient::object_create(self, id, target, params).await
    }
    fn caller(&self) -> Option<String> {
        Some(self.transport.caller())
    }
    async fn wait_unlocked(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<(), PveError> {
        ProxmoxClient::wait_unlocked(self, node, kind, vmid).await
    }
    async fn sdn_apply(&self) -> Result<Upid, PveError> {
        ProxmoxClient::sdn_apply(self).await
    }
}
