//! What only QEMU guests have: clone (`POST .../clone`), conversion to a template
//! (`POST .../template`) and regenerating the cloud-init drive (`PUT .../cloudinit`).

use reqwest::Method;

use super::transport::Call;
use super::{ProxmoxClient, PveError, seg};
use crate::proxmox::types::{NodeName, Upid, VmId};

/// `POST /nodes/{node}/qemu/{vmid}/clone` (qemu-server `API2::Qemu::clone_vm`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QemuClone {
    pub newid: VmId,
    /// A full copy of the disks; `false` makes a linked clone (templates only).
    pub full: bool,
    /// Where the new disks go (full clones only); the source's storage when `None`.
    pub storage: Option<String>,
    pub name: Option<String>,
    /// The pool the new VM joins.
    pub pool: Option<String>,
    /// The node the clone lands on, when not the source's (shared storage only).
    pub target: Option<String>,
}

fn vm_path(node: &NodeName, vmid: VmId) -> String {
    format!("/nodes/{}/qemu/{vmid}", seg(node.as_str()))
}

impl ProxmoxClient {
    /// Starts the clone of `source` on `node`; the new VM holds a `create` lock until the
    /// task ends.
    pub async fn qemu_clone(
        &self,
        node: &NodeName,
        source: VmId,
        req: &QemuClone,
    ) -> Result<Upid, PveError> {
        let call = Call::new(
            Method::POST,
            format!("{}/clone", vm_path(node, source)),
            Some(node.as_str()),
        )
        .idempotent(false)
        .param("newid", req.newid)
        .param("full", u8::from(req.full))
        .param_opt("storage", req.storage.as_ref())
        .param_opt("name", req.name.as_ref())
        .param_opt("pool", req.pool.as_ref())
        .param_opt("target", req.target.as_ref());
        self.transport.execute(&call).await
    }

    /// Converts a stopped VM into a template.
    pub async fn qemu_template(
        &self,
        node: &NodeName,
        vmid: VmId,
    ) -> Result<Option<Upid>, PveError> {
        let call = Call::new(
            Method::POST,
            format!("{}/template", vm_path(node, vmid)),
            Some(node.as_str()),
        )
        .idempotent(false);
        self.transport.execute(&call).await
    }

    /// Regenerates the cloud-init drive from the config (`PUT .../cloudinit`).
    pub async fn qemu_cloudinit(&self, node: &NodeName, vmid: VmId) -> Result<(), PveError> {
        let call = Call::new(
            Method::PUT,
            format!("{}/cloudinit", vm_path(node, vmid)),
            Some(node.as_str()),
        );
        let _: serde_json::Value = self.transport.execute(&call).await?;
        Ok(())
    }
}
