//! An update step: `PUT config` with the digest of the config it was computed from, root disk
//! growth, a restart only when the plan says so and the policy allows, then a check that
//! nothing applied is still pending.

use std::collections::{BTreeMap, BTreeSet};

use super::Run;
use super::body::update_body;
use super::guest::{StepResult, entry_for, node_name, vm_id};
use super::{ApplyEvent, RestartPolicy};
use crate::proxmox::client::{PowerAction, PveError, RunState};
use crate::proxmox::plan::{DesiredGuest, DesiredValue, Effect, ResourceChange};
use crate::proxmox::types::{GuestKind, NodeName, VmId};

impl Run<'_> {
    pub(super) async fn update(
        &self,
        guest: &DesiredGuest,
        change: &ResourceChange,
    ) -> StepResult<(String, Vec<String>)> {
        let id = change.vm_id.ok_or("the plan has no VMID for this guest")?;
        let node = node_name(&change.node)?;
        let vmid = vm_id(id)?;
        let kind = guest.kind;
        let noun = kind.noun();
        self.emit(ApplyEvent::Started {
            address: guest.address.clone(),
            step: "update",
        });
        let api = self.exec.api;
        let mut keys: BTreeSet<String> = change
            .attributes
            .iter()
            .map(|a| a.pve_key.clone())
            .collect();
        let live = api
            .guest_config(&node, kind, vmid, false)
            .await
            .map_err(|e| format!("reading {noun} {id}: {e}"))?;
        // atoll's markers are no change of their own, but a guest updated for another reason
        // (imported without them) gets them with it
        if let Some(DesiredValue::Known(tags)) = guest.config.get("tags")
            && crate::proxmox::owner::lacks_markers(tags, live.get("tags").as_deref())
        {
            keys.insert("tags".to_owned());
        }
        let body = update_body(guest, &keys, &live).map_err(|e| e.to_string())?;
        let applied = self.write_config(&node, kind, vmid, body).await?;
        let entry = entry_for(guest, id);
        self.exec
            .state
            .record(&entry)
            .await
            .map_err(|e| e.to_string())?;
        let restarted = self.settle_power(guest, change, &node, id).await?;
        let still = self.still_pending(&node, kind, vmid, &applied).await?;
        let mut note = format!("updated {noun} {id}");
        if restarted {
            note.push_str(" and restarted it");
        }
        if still.is_empty() {
            return Ok((note, Vec::new()));
        }
        if restarted || !guest.started {
            return Err(format!(
                "{noun} {id}: {} still pending after the update; check the guest",
                still.join(", ")
            ));
        }
        note.push_str(&format!(
            "; left pending until the next restart (restart: never): {}",
            still.join(", ")
        ));
        Ok((note, still))
    }

    /// Grows the root disk if asked, then `PUT config` with the digest of the config the change
    /// was computed from (read again after a resize, which rewrites the file). Returns the keys
    /// written or deleted.
    async fn write_config(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        body: super::body::UpdateBody,
    ) -> StepResult<Vec<String>> {
        let api = self.exec.api;
        let noun = kind.noun();
        let mut change = body.change;
        for (disk, size) in &body.grow {
            let grow = |e: PveError| format!("growing {disk} of {noun} {vmid}: {e}");
            let upid = api
                .guest_resize(node, kind, vmid, disk, size, change.digest.as_deref())
                .await
                .map_err(grow)?;
            api.wait_task(&upid).await.map_err(grow)?;
            let now = api
                .guest_config(node, kind, vmid, false)
                .await
                .map_err(|e| format!("reading {noun} {vmid}: {e}"))?;
            change.digest = now.digest;
        }
        if !change.set.is_empty() || !change.delete.is_empty() {
            api.guest_update_config(node, kind, vmid, &change)
                .await
                .map_err(|e| format!("updating {noun} {vmid}: {e}"))?;
        }
        Ok(change
            .set
            .keys()
            .chain(change.delete.iter())
            .cloned()
            .collect())
    }

    /// Starts, stops or restarts the guest as the plan and the policy say. `true` if restarted.
    async fn settle_power(
        &self,
        guest: &DesiredGuest,
        change: &ResourceChange,
        node: &NodeName,
        id: u32,
    ) -> StepResult<bool> {
        let kind = guest.kind;
        let status = self
            .exec
            .api
            .guest_status(node, kind, vm_id(id)?)
            .await
            .map_err(|e| format!("reading the status of {} {id}: {e}", kind.noun()))?;
        let running = status.status == RunState::Running;
        match (guest.started, running) {
            (true, false) => self
                .power(node, kind, id, PowerAction::Start)
                .await
                .map(|()| false),
            (false, true) => {
                let timeout = Some(self.exec.settings.shutdown_timeout);
                let shutdown = PowerAction::Shutdown {
                    timeout,
                    force_stop: true,
                };
                self.power(node, kind, id, shutdown).await.map(|()| false)
            }
            (true, true) => {
                let needs = change.disruption == Some(Effect::Restart)
                    && change
                        .attributes
                        .iter()
                        .any(|a| a.effect == Some(Effect::Restart) && a.pve_key != "started");
                if needs && self.exec.settings.restart == RestartPolicy::Auto {
                    let reboot = PowerAction::Reboot {
                        timeout: Some(self.exec.settings.shutdown_timeout),
                    };
                    // A clean restart only: PVE shuts the guest down (guest agent or ACPI)
                    // and starts it; a guest that does not go down is never stopped hard.
                    self.power(node, kind, id, reboot)
                        .await
                        .map(|()| true)
                        .map_err(|e| not_restarted(kind, id, &e))
                } else {
                    Ok(false)
                }
            }
            (false, false) => Ok(false),
        }
    }

    /// Which of `keys` PVE still holds as pending.
    async fn still_pending(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
        keys: &[String],
    ) -> StepResult<Vec<String>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let pending = self
            .exec
            .api
            .guest_pending(node, kind, vmid)
            .await
            .map_err(|e| format!("reading pending changes of {} {vmid}: {e}", kind.noun()))?;
        let queued: BTreeMap<String, bool> = pending
            .into_iter()
            .map(|p| {
                let queued = p.pending.is_some() || p.delete.is_some_and(|d| d > 0);
                (p.key, queued)
            })
            .collect();
        Ok(keys
            .iter()
            .filter(|k| queued.get(*k).copied().unwrap_or(false))
            .cloned()
            .collect())
    }
}

/// Why a restart the plan announced did not happen, and what now: the change is written and
/// waits in the guest's pending config; atoll never stops a guest hard to apply it.
fn not_restarted(kind: GuestKind, id: u32, error: &str) -> String {
    let hint = match kind {
        GuestKind::Qemu => {
            "the VM did not shut down cleanly (a guest without the QEMU guest agent must \
             handle ACPI shutdown requests; enable agent.enabled with qemu-guest-agent \
             installed), and atoll never stops a guest hard to apply a change"
        }
        GuestKind::Lxc => "atoll never stops a container hard to apply a change",
    };
    format!(
        "{error}; {hint}. The change is written and waits in Proxmox VE's pending config until \
         {} {id} restarts: restart it yourself, then plan again",
        kind.noun()
    )
}
