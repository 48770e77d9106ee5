//! Per-guest endpoints: LXC lifecycle (create, config, pending, status, power, delete, resize,
//! interfaces) and the read-only QEMU calls self-discovery and the guard need.

use reqwest::Method;

use super::model::{
    ConfigChange, DeleteOptions, GuestConfig, GuestCreate, GuestInterface, GuestStatus,
    PendingEntry, PowerAction,
};
use super::transport::{Call, Param};
use super::{Detail, ProxmoxClient, PveError, seg};
use crate::proxmox::types::{GuestKind, NodeName, Upid, VmId};

pub(super) fn guest_path(node: &NodeName, kind: GuestKind, vmid: VmId) -> String {
    format!("/nodes/{}/{}/{vmid}", seg(node.as_str()), kind.path())
}

impl ProxmoxClient {
    /// `current = true` returns live values only; `false` merges pending values in.
    pub async fn guest_config(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        current: bool,
    ) -> Result<GuestConfig, PveError> {
        let path = format!("{}/config", guest_path(node, kind, vmid));
        let call = Call::new(Method::GET, path, Some(node.as_str()))
            .param_opt("current", current.then_some(1));
        self.transport.execute(&call).await
    }

    pub async fn guest_status(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<GuestStatus, PveError> {
        let path = format!("{}/status/current", guest_path(node, kind, vmid));
        self.transport
            .execute(&Call::new(Method::GET, path, Some(node.as_str())))
            .await
    }

    pub async fn guest_pending(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<Vec<PendingEntry>, PveError> {
        let path = format!("{}/pending", guest_path(node, kind, vmid));
        self.transport
            .execute(&Call::new(Method::GET, path, Some(node.as_str())))
            .await
    }

    /// `None` when the container is not running.
    pub async fn lxc_interfaces(
        &self,
        node: &NodeName,
        vmid: VmId,
    ) -> Result<Option<Vec<GuestInterface>>, PveError> {
        let path = format!("{}/interfaces", guest_path(node, GuestKind::Lxc, vmid));
        self.transport
            .execute(&Call::new(Method::GET, path, Some(node.as_str())))
            .await
    }

    /// Synchronous `PUT .../config`. With a digest, PVE refuses if the config changed since.
    pub async fn guest_update_config(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        change: &ConfigChange,
    ) -> Result<(), PveError> {
        let path = format!("{}/config", guest_path(node, kind, vmid));
        let mut call = Call::new(Method::PUT, path, Some(node.as_str()))
            // Repeating a change without a digest sets the same values again; with one, a repeat
            // after an unknown outcome would be refused as a digest mismatch.
            .idempotent(change.digest.is_none());
        if change.set.is_empty() && change.delete.is_empty() {
            let detail = Detail {
                op: call.op(),
                message: "no options specified".into(),
            };
            return Err(PveError::Validation {
                detail,
                errors: Default::default(),
            });
        }
        if let Some(key) = change
            .set
            .keys()
            .find(|k| ["delete", "digest", "revert"].contains(&k.as_str()))
        {
            let detail = Detail {
                op: call.op(),
                message: format!("'{key}' is not a config key"),
            };
            return Err(PveError::Validation {
                detail,
                errors: Default::default(),
            });
        }
        for (key, value) in &change.set {
            call = call.param(key, value);
        }
        if !change.delete.is_empty() {
            call = call.param("delete", change.delete.join(","));
        }
        call = call.param_opt("digest", change.digest.as_ref());
        let _: serde_json::Value = self.transport.execute(&call).await?;
        Ok(())
    }

    /// Sends `POST /nodes/{node}/{lxc|qemu}` once. Prefer [`Self::guest_create_and_wait`], which
    /// recovers from a lost response without creating twice.
    pub async fn guest_create(
        &self,
        node: &NodeName,
        kind: GuestKind,
        req: &GuestCreate,
    ) -> Result<Upid, PveError> {
        let path = format!("/nodes/{}/{}", seg(node.as_str()), kind.path());
        let mut call = Call::new(Method::POST, path, Some(node.as_str())).param("vmid", req.vmid);
        for (key, value) in &req.options {
            call = call.param(key, value);
        }
        if let Some(password) = &req.password {
            // a container's root password; a VM's cloud-init password
            let key = match kind {
                GuestKind::Lxc => "password",
                GuestKind::Qemu => "cipassword",
            };
            call.params
                .push((key.into(), Param::Secret(password.clone())));
        }
        self.transport.execute(&call).await
    }

    pub async fn guest_power(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        action: PowerAction,
    ) -> Result<Upid, PveError> {
        let base = guest_path(node, kind, vmid);
        let (verb, timeout, force) = match action {
            PowerAction::Start => ("start", None, None),
            PowerAction::Stop => ("stop", None, None),
            PowerAction::Shutdown {
                timeout,
                force_stop,
            } => ("shutdown", timeout, Some(u8::from(force_stop))),
            PowerAction::Reboot { timeout } => ("reboot", timeout, None),
        };
        let call = Call::new(
            Method::POST,
            format!("{base}/status/{verb}"),
            Some(node.as_str()),
        )
        .param_opt("timeout", timeout)
        .param_opt("forceStop", force);
        self.transport.execute(&call).await
    }

    pub async fn guest_delete(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        options: DeleteOptions,
    ) -> Result<Upid, PveError> {
        let flag = |on: bool| on.then_some(1);
        let call = Call::new(
            Method::DELETE,
            guest_path(node, kind, vmid),
            Some(node.as_str()),
        )
        .param_opt("purge", flag(options.purge))
        .param_opt(
            "destroy-unreferenced-disks",
            flag(options.destroy_unreferenced_disks),
        )
        .param_opt("force", flag(options.force));
        self.transport.execute(&call).await
    }

    /// Grows `disk` (`rootfs` or `mpN`) to `size` (`10G`) or by it (`+2G`).
    pub async fn guest_resize(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        disk: &str,
        size: &str,
        digest: Option<&str>,
    ) -> Result<Upid, PveError> {
        let path = format!("{}/resize", guest_path(node, kind, vmid));
        let call = Call::new(Method::PUT, path, Some(node.as_str()))
            .idempotent(false)
            .param("disk", disk)
            .param("size", size)
            .param_opt("digest", digest);
        self.transport.execute(&call).await
    }
}
