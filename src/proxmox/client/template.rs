//! Clones and templates, for both guest kinds: `POST .../{lxc|qemu}/{vmid}/clone`
//! (pve-container and qemu-server `clone_vm`) and `POST .../template`.

use reqwest::Method;

use super::guests::guest_path;
use super::transport::Call;
use super::{ProxmoxClient, PveError};
use crate::proxmox::types::{GuestKind, NodeName, Upid, VmId};

/// What a clone request sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestClone {
    pub newid: VmId,
    /// A full copy of the disks; `false` makes a linked clone (templates only).
    pub full: bool,
    /// Where the new disks go (full clones only); the source's storage when `None`.
    pub storage: Option<String>,
    /// The new guest's name: a VM's `name`, a container's `hostname`.
    pub name: Option<String>,
    /// A container's description (a VM's comes with its config update).
    pub description: Option<String>,
    /// The pool the new guest joins.
    pub pool: Option<String>,
    /// The node the clone lands on, when not the source's (shared storage only).
    pub target: Option<String>,
}

impl ProxmoxClient {
    /// Starts the clone of `source` on `node`; the new guest holds a lock until the task ends.
    pub async fn guest_clone(
        &self,
        node: &NodeName,
        kind: GuestKind,
        source: VmId,
        req: &GuestClone,
    ) -> Result<Upid, PveError> {
        let name_param = match kind {
            GuestKind::Lxc => "hostname",
            GuestKind::Qemu => "name",
        };
        let call = Call::new(
            Method::POST,
            format!("{}/clone", guest_path(node, kind, source)),
            Some(node.as_str()),
        )
        .idempotent(false)
        .param("newid", req.newid)
        .param("full", u8::from(req.full))
        .param_opt("storage", req.storage.as_ref())
        .param_opt(name_param, req.name.as_ref())
        .param_opt("description", req.description.as_ref())
        .param_opt("pool", req.pool.as_ref())
        .param_opt("target", req.target.as_ref());
        self.transport.execute(&call).await
    }

    /// Converts a stopped guest into a template. qemu-server answers with the task's UPID;
    /// pve-container starts the task (`vztemplate`) and answers `null`: then the running
    /// task is looked up among the guest's tasks (`None` if it already ended).
    pub async fn guest_template(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<Option<Upid>, PveError> {
        let call = Call::new(
            Method::POST,
            format!("{}/template", guest_path(node, kind, vmid)),
            Some(node.as_str()),
        )
        .idempotent(false);
        let upid: Option<Upid> = self.transport.execute(&call).await?;
        if upid.is_some() {
            return Ok(upid);
        }
        let tasks = self.guest_tasks(node, vmid).await?;
        Ok(tasks
            .into_iter()
            .find(|t| t.kind == "vztemplate" && t.is_running())
            .and_then(|t| t.upid.parse().ok()))
    }
}
