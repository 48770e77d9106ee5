//! A guest made from another: a clone (`POST .../clone`, then one config update bringing it to
//! the configuration) and the conversion of a new guest into a template, for containers and
//! VMs alike.

use std::collections::{BTreeMap, BTreeSet};

use super::Run;
use super::body::update_body;
use super::guest::StepResult;
use crate::proxmox::client::{ConflictKind, GuestClone, GuestCreate, PveError};
use crate::proxmox::plan::{DesiredGuest, DesiredValue};
use crate::proxmox::types::{GuestKind, NodeName, VmId};

impl Run<'_> {
    /// Converts a new guest into a template (never started: PVE refuses to start one), then
    /// checks that it is one: a container's conversion task may already have ended unseen.
    pub(super) async fn convert_to_template(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> StepResult<()> {
        let api = self.exec.api;
        let noun = kind.noun();
        let convert = |e: PveError| format!("converting {noun} {vmid} to a template: {e}");
        if let Some(upid) = api
            .guest_template(node, kind, vmid)
            .await
            .map_err(convert)?
        {
            api.wait_task(&upid).await.map_err(convert)?;
        }
        let status = api.guest_status(node, kind, vmid).await.map_err(convert)?;
        if status.template {
            return Ok(());
        }
        Err(format!(
            "converting {noun} {vmid} to a template: the task ended but Proxmox VE does not \
             show it as a template; read the task log on node {node}, then plan again"
        ))
    }

    /// Starts the clone once the source holds no lock. pve-container locks the source
    /// (`disk`) for the whole clone, so two clones of one template refuse each other
    /// (`CT is locked (disk)`): each waits for the lock to clear and asks again.
    async fn clone_when_unlocked(
        &self,
        source_node: &NodeName,
        kind: GuestKind,
        source_id: VmId,
        clone: &GuestClone,
    ) -> Result<crate::proxmox::types::Upid, PveError> {
        /// Clones of one template an apply runs at once are bounded by the node's workers.
        const TRIES: usize = 32;
        let api = self.exec.api;
        let mut tries = 0;
        loop {
            api.wait_unlocked(source_node, kind, source_id).await?;
            match api.guest_clone(source_node, kind, source_id, clone).await {
                Err(PveError::Conflict {
                    kind: ConflictKind::Locked,
                    ..
                }) if tries < TRIES => tries += 1,
                other => return other,
            }
        }
    }

    /// A guest cloned from `source` (`vmid=9000,node=pve,storage=local-lvm,full=1`), then
    /// brought to the configuration with one config update (what differs from what it
    /// inherited: its disks grown, its NICs keeping their new MACs) and, for a VM, the
    /// cloud-init drive regenerated.
    pub(super) async fn clone_guest(
        &self,
        guest: &DesiredGuest,
        source: &str,
        node: &NodeName,
        request: &GuestCreate,
    ) -> Result<(), PveError> {
        let api = self.exec.api;
        let kind = guest.kind;
        let (source_node, source_id, clone) = clone_request(guest, source, node, request)?;
        let upid = self
            .clone_when_unlocked(&source_node, kind, source_id, &clone)
            .await?;
        api.wait_task(&upid).await?;
        let live = api.guest_config(node, kind, request.vmid, false).await?;
        let keys: BTreeSet<String> = guest
            .config
            .iter()
            .filter(|(key, value)| match value {
                DesiredValue::Known(want) => {
                    let have = live.get(key);
                    crate::proxmox::plan::differs(kind, key, want, have.as_deref())
                        // the plan does not compare atoll's markers; the clone must carry them
                        || (*key == "tags"
                            && crate::proxmox::owner::lacks_markers(want, have.as_deref()))
                }
                _ => true,
            })
            .map(|(key, _)| key.clone())
            .collect();
        let body = update_body(guest, &keys, &live).map_err(|e| invalid(e.to_string()))?;
        for (disk, size) in &body.grow {
            let upid = api
                .guest_resize(node, kind, request.vmid, disk, size, None)
                .await?;
            api.wait_task(&upid).await?;
        }
        let mut change = body.change;
        change.digest = None;
        if !change.set.is_empty() || !change.delete.is_empty() {
            api.guest_update_config(node, kind, request.vmid, &change)
                .await?;
        }
        if kind == GuestKind::Qemu && keys.iter().any(|k| is_cloud_init_key(k)) {
            api.qemu_cloudinit(node, request.vmid).await?;
        }
        Ok(())
    }
}

fn invalid(why: String) -> PveError {
    PveError::Validation {
        detail: crate::proxmox::client::Detail {
            op: "clone".into(),
            message: why,
        },
        errors: BTreeMap::new(),
    }
}

/// The clone request for `source` (`vmid=9000,node=pve,storage=local-lvm,full=1`): the node
/// and VMID it is sent to, and what it asks for.
fn clone_request(
    guest: &DesiredGuest,
    source: &str,
    node: &NodeName,
    request: &GuestCreate,
) -> Result<(NodeName, VmId, GuestClone), PveError> {
    let fields: BTreeMap<&str, &str> = source
        .split(',')
        .filter_map(|item| item.split_once('='))
        .collect();
    let source_id = fields
        .get("vmid")
        .and_then(|v| v.parse::<u32>().ok())
        .and_then(|v| VmId::new(v).ok())
        .ok_or_else(|| invalid(format!("clone source '{source}' has no valid vm_id")))?;
    let source_node = match fields.get("node") {
        Some(n) => n
            .parse::<NodeName>()
            .map_err(|e| invalid(format!("clone.node_name: {e}")))?,
        None => node.clone(),
    };
    let name_key = match guest.kind {
        GuestKind::Lxc => "hostname",
        GuestKind::Qemu => "name",
    };
    let known = |key: &str| match guest.config.get(key) {
        Some(DesiredValue::Known(text)) if !text.is_empty() => Some(text.clone()),
        _ => None,
    };
    let clone = GuestClone {
        newid: request.vmid,
        full: fields.get("full") != Some(&"0"),
        storage: fields.get("storage").map(|s| (*s).to_owned()),
        name: known(name_key),
        description: known("description").filter(|_| guest.kind == GuestKind::Lxc),
        pool: known("pool"),
        target: (source_node != *node).then(|| node.to_string()),
    };
    Ok((source_node, source_id, clone))
}

/// Cloud-init keys: a change needs the drive regenerated (`PUT .../cloudinit`).
fn is_cloud_init_key(key: &str) -> bool {
    matches!(
        key,
        "ciuser"
            | "cipassword"
            | "citype"
            | "ciupgrade"
            | "cicustom"
            | "sshkeys"
            | "nameserver"
            | "searchdomain"
    ) || key.starts_with("ipconfig")
}
