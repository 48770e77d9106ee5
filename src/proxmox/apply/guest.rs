//! One guest's steps, once no task holds a lock on it: create (task) then start; update (see
//! `update`); delete (shutdown with a timeout, then stop, then destroy with purge). State is
//! written after each completed step; a create is recorded just before its request, so a
//! crash can never lead to the same guest being created twice.

use super::body::create_options;
use super::{ApplyEvent, Outcome, Run};
use crate::proxmox::client::{
    ConflictKind, DeleteOptions, GuestCreate, PowerAction, PveError, RunState,
};
use crate::proxmox::plan::{
    DesiredGuest, DesiredValue, ResourceChange, StateEntry, StateValue, StepOp,
};
use crate::proxmox::types::{GuestKind, NodeName, VmId};

pub(super) type StepResult<T> = Result<T, String>;

pub(super) fn node_name(node: &str) -> StepResult<NodeName> {
    node.parse()
        .map_err(|e| format!("node name '{node}' is not valid: {e}"))
}

pub(super) fn vm_id(id: u32) -> StepResult<VmId> {
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
        if let Err(error) = self.wait_unlocked(change, ops).await {
            return (address.clone(), self.failed(&address, error, false));
        }
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

    /// Before changing an existing guest: waits (bounded, logged by the client) until no task
    /// holds a lock on it, e.g. the create of an apply that was killed. A guest that is gone is
    /// left to the step itself, which knows what that means.
    async fn wait_unlocked(&self, change: &ResourceChange, ops: &[StepOp]) -> StepResult<()> {
        let existing = matches!(ops.first(), Some(StepOp::Update | StepOp::Delete));
        let Some(id) = change.vm_id.filter(|_| existing) else {
            return Ok(());
        };
        let node = node_name(&change.node)?;
        let kind = change.kind.unwrap_or(GuestKind::Lxc);
        match self.exec.api.wait_unlocked(&node, kind, vm_id(id)?).await {
            Ok(()) | Err(PveError::NotFound(_)) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
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
        let body = create_options(guest).map_err(|e| e.to_string())?;
        let node = node_name(&guest.node)?;
        let kind = guest.kind;
        let noun = kind.noun();
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
            let request = GuestCreate {
                vmid: vm_id(id)?,
                options: body.options.clone(),
                password: body.password.clone(),
            };
            let api = self.exec.api;
            let created = match guest.config.get("clone") {
                Some(DesiredValue::Known(source)) => {
                    self.clone_guest(guest, source, &node, &request).await
                }
                _ => api
                    .guest_create_and_wait(&node, kind, &request)
                    .await
                    .map(|_| ()),
            };
            let Err(error) = created else {
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
                api.guest_status(&node, kind, request.vmid).await,
                Err(PveError::NotFound(_))
            );
            if gone && !error.is_transient() {
                // It certainly does not exist: state must not claim it.
                let _ = self.exec.state.forget(&guest.address).await;
            }
            return Err(format!("creating {noun} {id} on {node}: {error}"));
        };
        let vmid = vm_id(id)?;
        let api = self.exec.api;
        for (disk, size) in &body.grow {
            let grow = |e: PveError| format!("growing {disk} of {noun} {id}: {e}");
            let upid = api
                .guest_resize(&node, kind, vmid, disk, size, None)
                .await
                .map_err(grow)?;
            api.wait_task(&upid).await.map_err(grow)?;
        }
        if matches!(guest.config.get("template"), Some(DesiredValue::Known(t)) if t == "1") {
            self.convert_to_template(&node, kind, vmid).await?;
        }
        if guest.started {
            self.power(&node, kind, id, PowerAction::Start).await?;
        }
        let how = if guest.config.contains_key("clone") {
            "cloned"
        } else {
            "created"
        };
        Ok(format!("{how} {noun} {id} on {node}"))
    }

    pub(super) async fn power(
        &self,
        node: &NodeName,
        kind: GuestKind,
        id: u32,
        action: PowerAction,
    ) -> StepResult<()> {
        let noun = kind.noun();
        let api = self.exec.api;
        let what = match action {
            PowerAction::Start => "starting",
            PowerAction::Stop => "stopping",
            PowerAction::Shutdown { .. } => "shutting down",
            PowerAction::Reboot { .. } => "restarting",
        };
        let upid = api
            .guest_power(node, kind, vm_id(id)?, action)
            .await
            .map_err(|e| format!("{what} {noun} {id}: {e}"))?;
        api.wait_task(&upid)
            .await
            .map(|_| ())
            .map_err(|e| format!("{what} {noun} {id}: {e}"))
    }

    async fn delete(&self, change: &ResourceChange) -> StepResult<String> {
        let id = change.vm_id.ok_or("the plan has no VMID for this guest")?;
        let node = node_name(&change.node)?;
        let vmid = vm_id(id)?;
        let kind = change.kind.unwrap_or(GuestKind::Lxc);
        let noun = kind.noun();
        self.emit(ApplyEvent::Started {
            address: change.address.clone(),
            step: "delete",
        });
        let api = self.exec.api;
        let status = match api.guest_status(&node, kind, vmid).await {
            Ok(status) => status,
            Err(PveError::NotFound(_)) => {
                self.exec
                    .state
                    .forget(&change.address)
                    .await
                    .map_err(|e| e.to_string())?;
                return Ok(format!("{noun} {id} was already gone; removed from state"));
            }
            Err(e) => return Err(format!("reading the status of {noun} {id}: {e}")),
        };
        if status.status == RunState::Running {
            let shutdown = PowerAction::Shutdown {
                timeout: Some(self.exec.settings.shutdown_timeout),
                force_stop: false,
            };
            if self.power(&node, kind, id, shutdown).await.is_err() {
                self.power(&node, kind, id, PowerAction::Stop).await?;
            }
        }
        let options = DeleteOptions {
            purge: true,
            destroy_unreferenced_disks: true,
            force: false,
        };
        let upid = api
            .guest_delete(&node, kind, vmid, options)
            .await
            .map_err(|e| format!("destroying {noun} {id}: {e}"))?;
        api.wait_task(&upid)
            .await
            .map_err(|e| format!("destroying {noun} {id}: {e}"))?;
        self.exec
            .state
            .forget(&change.address)
            .await
            .map_err(|e| e.to_string())?;
        Ok(format!("destroyed {noun} {id} on {node}"))
    }
}
