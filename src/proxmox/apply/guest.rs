//! One guest's steps: create (task) then start; update (`PUT config` with the digest, root
//! disk growth, a restart only when the plan says so and the policy allows, then a check that
//! nothing applied is still pending); delete (shutdown with a timeout, then stop, then destroy
//! with purge). State is written after each completed step; a create is recorded just before
//! its request, so a crash can never lead to the same guest being created twice.

use std::collections::{BTreeMap, BTreeSet};

use super::body::{create_options, update_body};
use super::{ApplyEvent, Outcome, RestartPolicy, Run};
use crate::proxmox::client::{
    ConflictKind, DeleteOptions, LxcCreate, PowerAction, PveError, RunState,
};
use crate::proxmox::plan::{
    DesiredGuest, DesiredValue, Effect, ResourceChange, StateEntry, StateValue, StepOp,
};
use crate::proxmox::types::{GuestKind, NodeName, VmId};

type StepResult<T> = Result<T, String>;

fn node_name(node: &str) -> StepResult<NodeName> {
    node.parse()
        .map_err(|e| format!("node name '{node}' is not valid: {e}"))
}

fn vm_id(id: u32) -> StepResult<VmId> {
    VmId::new(id).map_err(|e| e.to_string())
}

/// The state entry for a guest applied as `guest` with VMID `id`.
pub fn entry_for(guest: &DesiredGuest, id: u32) -> StateEntry {
    let attributes = guest
        .config
        .iter()
        .filter_map(|(key, value)| {
            let stored = match value {
                DesiredValue::Known(text) => StateValue::Plain(text.clone()),
                DesiredValue::Sensitive(secret) => StateValue::Fingerprint(secret.fingerprint()),
                DesiredValue::Unknown => return None,
            };
            Some((key.clone(), stored))
        })
        .collect();
    StateEntry::Guest {
        address: guest.address.clone(),
        resource_type: guest.resource_type.clone(),
        kind: guest.kind,
        node: guest.node.clone(),
        vm_id: id,
        attributes,
    }
}

impl Run<'_> {
    /// Runs one guest's steps; returns its address and outcome.
    pub(super) async fn guest(
        &self,
        change: &ResourceChange,
        ops: &[StepOp],
        desired: Option<&DesiredGuest>,
        failed_use: Option<String>,
    ) -> (String, Outcome) {
        let address = change.address.clone();
        if let Some(used) = failed_use {
            let reason = format!("not attempted: {used}, which it uses, failed");
            self.emit(ApplyEvent::Failed {
                address: address.clone(),
                error: reason.clone(),
            });
            return (address, Outcome::Skipped { reason });
        }
        let limit = self.node_limit(&change.node);
        let Ok(_permit) = limit.acquire().await else {
            return (
                address.clone(),
                self.failed(&address, "apply was cancelled".into(), false),
            );
        };
        let mut changed = false;
        let mut notes = Vec::new();
        let mut left_pending = Vec::new();
        for op in ops {
            let step = match op {
                StepOp::Delete => self.delete(change).await,
                StepOp::Create => match desired {
                    Some(guest) => self.create(guest, change.vm_id).await,
                    None => Err("the configuration no longer declares it; make a new plan".into()),
                },
                StepOp::Update => match desired {
                    Some(guest) => self.update(guest, change).await.map(|(note, pending)| {
                        left_pending = pending;
                        note
                    }),
                    None => Err("the configuration no longer declares it; make a new plan".into()),
                },
            };
            match step {
                Ok(note) => {
                    changed = true;
                    notes.push(note);
                }
                Err(error) => return (address.clone(), self.failed(&address, error, changed)),
            }
        }
        let outcome = self.done(&address, notes.join("; "), left_pending);
        (address, outcome)
    }

    /// A VMID for a create: the configured one, else the next free one not handed out yet.
    async fn reserve(&self, wanted: Option<u32>) -> StepResult<u32> {
        let mut reserved = self.reserved.lock().await;
        if let Some(id) = wanted {
            reserved.insert(id);
            return Ok(id);
        }
        let api = self.exec.api;
        let mut candidate = api
            .next_id(None)
            .await
            .map_err(|e| format!("choosing a VMID: {e}"))?
            .get();
        for _ in 0..1000 {
            if !reserved.contains(&candidate) {
                match api.next_id(Some(vm_id(candidate)?)).await {
                    Ok(id) => {
                        reserved.insert(id.get());
                        return Ok(id.get());
                    }
                    Err(PveError::Validation { .. } | PveError::Conflict { .. }) => {}
                    Err(e) => return Err(format!("choosing a VMID: {e}")),
                }
            }
            candidate += 1;
        }
        Err("no free VMID found after 1000 tries; set vm_id".to_owned())
    }

    async fn create(&self, guest: &DesiredGuest, replaced: Option<u32>) -> StepResult<String> {
        /// Fresh VMIDs tried when another writer (a concurrent apply, another replica, a
        /// person) takes the chosen one between `cluster/nextid` and the create.
        const RACES: usize = 5;
        let (options, password) = create_options(guest).map_err(|e| e.to_string())?;
        let node = node_name(&guest.node)?;
        let wanted = guest.vm_id.or(replaced);
        let mut races = 0;
        let id = loop {
            let id = self.reserve(wanted).await?;
            if races == 0 {
                self.emit(ApplyEvent::Started {
                    address: guest.address.clone(),
                    step: "create",
                });
            }
            // Recorded before the request: after a crash, refresh finds the guest by this VMID.
            let entry = entry_for(guest, id);
            self.exec
                .state
                .record(&entry)
                .await
                .map_err(|e| e.to_string())?;
            let request = LxcCreate {
                vmid: vm_id(id)?,
                options: options.clone(),
                password: password.clone(),
            };
            let api = self.exec.api;
            let Err(error) = api.lxc_create_and_wait(&node, &request).await else {
                break id;
            };
            let taken = matches!(
                error,
                PveError::Conflict {
                    kind: ConflictKind::AlreadyExists,
                    ..
                }
            );
            if taken && wanted.is_none() && races < RACES {
                races += 1;
                continue;
            }
            let gone = matches!(
                api.guest_status(&node, GuestKind::Lxc, request.vmid).await,
                Err(PveError::NotFound(_))
            );
            if gone && !error.is_transient() {
                // It certainly does not exist: state must not claim it.
                let _ = self.exec.state.forget(&guest.address).await;
            }
            return Err(format!("creating CT {id} on {node}: {error}"));
        };
        if guest.started {
            self.power(&node, id, PowerAction::Start).await?;
        }
        Ok(format!("created CT {id} on {node}"))
    }

    async fn power(&self, node: &NodeName, id: u32, action: PowerAction) -> StepResult<()> {
        let api = self.exec.api;
        let what = match action {
            PowerAction::Start => "starting",
            PowerAction::Stop => "stopping",
            PowerAction::Shutdown { .. } => "shutting down",
            PowerAction::Reboot { .. } => "restarting",
        };
        let upid = api
            .lxc_power(node, vm_id(id)?, action)
            .await
            .map_err(|e| format!("{what} CT {id}: {e}"))?;
        api.wait_task(&upid)
            .await
            .map(|_| ())
            .map_err(|e| format!("{what} CT {id}: {e}"))
    }

    async fn update(
        &self,
        guest: &DesiredGuest,
        change: &ResourceChange,
    ) -> StepResult<(String, Vec<String>)> {
        let id = change.vm_id.ok_or("the plan has no VMID for this guest")?;
        let node = node_name(&change.node)?;
        let vmid = vm_id(id)?;
        self.emit(ApplyEvent::Started {
            address: guest.address.clone(),
            step: "update",
        });
        let api = self.exec.api;
        let keys: BTreeSet<String> = change
            .attributes
            .iter()
            .map(|a| a.pve_key.clone())
            .collect();
        let live = api
            .guest_config(&node, GuestKind::Lxc, vmid, false)
            .await
            .map_err(|e| format!("reading CT {id}: {e}"))?;
        let body = update_body(guest, &keys, &live).map_err(|e| e.to_string())?;
        let applied = self.write_config(&node, vmid, body).await?;
        let entry = entry_for(guest, id);
        self.exec
            .state
            .record(&entry)
            .await
            .map_err(|e| e.to_string())?;
        let restarted = self.settle_power(guest, change, &node, id).await?;
        let still = self.still_pending(&node, vmid, &applied).await?;
        let mut note = format!("updated CT {id}");
        if restarted {
            note.push_str(" and restarted it");
        }
        if still.is_empty() {
            return Ok((note, Vec::new()));
        }
        if restarted || !guest.started {
            return Err(format!(
                "CT {id}: {} still pending after the update; check the guest",
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
        vmid: VmId,
        body: super::body::UpdateBody,
    ) -> StepResult<Vec<String>> {
        let api = self.exec.api;
        let mut change = body.change;
        if let Some(size) = &body.grow_rootfs {
            let grow = |e: PveError| format!("growing the root disk of CT {vmid}: {e}");
            let upid = api
                .lxc_resize(node, vmid, "rootfs", size, change.digest.as_deref())
                .await
                .map_err(grow)?;
            api.wait_task(&upid).await.map_err(grow)?;
            let now = api
                .guest_config(node, GuestKind::Lxc, vmid, false)
                .await
                .map_err(|e| format!("reading CT {vmid}: {e}"))?;
            change.digest = now.digest;
        }
        if !change.set.is_empty() || !change.delete.is_empty() {
            api.lxc_update_config(node, vmid, &change)
                .await
                .map_err(|e| format!("updating CT {vmid}: {e}"))?;
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
        let status = self
            .exec
            .api
            .guest_status(node, GuestKind::Lxc, vm_id(id)?)
            .await
            .map_err(|e| format!("reading the status of CT {id}: {e}"))?;
        let running = status.status == RunState::Running;
        match (guest.started, running) {
            (true, false) => self
                .power(node, id, PowerAction::Start)
                .await
                .map(|()| false),
            (false, true) => {
                let timeout = Some(self.exec.settings.shutdown_timeout);
                let shutdown = PowerAction::Shutdown {
                    timeout,
                    force_stop: true,
                };
                self.power(node, id, shutdown).await.map(|()| false)
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
                    self.power(node, id, reboot).await.map(|()| true)
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
        vmid: VmId,
        keys: &[String],
    ) -> StepResult<Vec<String>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let pending = self
            .exec
            .api
            .lxc_pending(node, vmid)
            .await
            .map_err(|e| format!("reading pending changes of CT {vmid}: {e}"))?;
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

    async fn delete(&self, change: &ResourceChange) -> StepResult<String> {
        let id = change.vm_id.ok_or("the plan has no VMID for this guest")?;
        let node = node_name(&change.node)?;
        let vmid = vm_id(id)?;
        self.emit(ApplyEvent::Started {
            address: change.address.clone(),
            step: "delete",
        });
        let api = self.exec.api;
        let status = match api.guest_status(&node, GuestKind::Lxc, vmid).await {
            Ok(status) => status,
            Err(PveError::NotFound(_)) => {
                self.exec
                    .state
                    .forget(&change.address)
                    .await
                    .map_err(|e| e.to_string())?;
                return Ok(format!("CT {id} was already gone; removed from state"));
            }
            Err(e) => return Err(format!("reading the status of CT {id}: {e}")),
        };
        if status.status == RunState::Running {
            let shutdown = PowerAction::Shutdown {
                timeout: Some(self.exec.settings.shutdown_timeout),
                force_stop: false,
            };
            if self.power(&node, id, shutdown).await.is_err() {
                self.power(&node, id, PowerAction::Stop).await?;
            }
        }
        let options = DeleteOptions {
            purge: true,
            destroy_unreferenced_disks: true,
            force: false,
        };
        let upid = api
            .lxc_delete(&node, vmid, options)
            .await
            .map_err(|e| format!("destroying CT {id}: {e}"))?;
        api.wait_task(&upid)
            .await
            .map_err(|e| format!("destroying CT {id}: {e}"))?;
        self.exec
            .state
            .forget(&change.address)
            .await
            .map_err(|e| e.to_string())?;
        Ok(format!("destroyed CT {id} on {node}"))
    }
}
