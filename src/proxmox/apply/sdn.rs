//! Applying the SDN configuration (bpg's `sdn_applier`): `PUT /cluster/sdn`, then waiting for
//! the reload task. The applier runs in the guests' waves once every SDN zone, vnet and
//! subnet it uses is written (and before the guests on its vnets, which use it); when the run
//! also deleted SDN objects, it applies once more after them. Destroyed, it applies once
//! more unless `on_destroy` is false; created, it applies unless `on_create` is false.

use std::collections::BTreeMap;

use super::{Outcome, Run};
use crate::proxmox::plan::{Action, DesiredObject, ResourceChange, StateEntry, StepOp};

impl Run<'_> {
    /// The applier's steps.
    pub(super) async fn applier(
        &self,
        change: &ResourceChange,
        ops: &[StepOp],
        desired: Option<&DesiredObject>,
    ) -> (String, Outcome) {
        let address = change.address.clone();
        let outcome = match self.applier_steps(change, ops, desired).await {
            Ok(detail) => self.done(&address, detail, Vec::new()),
            Err((error, changed)) => self.failed(&address, error, changed),
        };
        (address, outcome)
    }

    async fn applier_steps(
        &self,
        change: &ResourceChange,
        ops: &[StepOp],
        desired: Option<&DesiredObject>,
    ) -> Result<String, (String, bool)> {
        let state = &self.exec.state;
        if ops == [StepOp::Delete] {
            let stored = state.load().await.map_err(|e| (e.to_string(), false))?;
            let on_destroy = stored.entries.iter().all(|e| match e {
                StateEntry::Object {
                    address, fields, ..
                } if *address == change.address => {
                    fields.get("on_destroy").map(String::as_str) != Some("0")
                }
                _ => true,
            });
            let detail = if on_destroy {
                self.apply_sdn().await.map_err(|e| (e, false))?
            } else {
                "on_destroy is false: the SDN configuration is left as it is".to_owned()
            };
            state
                .forget(&change.address)
                .await
                .map_err(|e| (e.to_string(), on_destroy))?;
            return Ok(detail);
        }
        let Some(object) = desired else {
            let error = "the configuration no longer declares it; make a new plan".to_owned();
            return Err((error, false));
        };
        let creating = change.actions.contains(&Action::Create);
        let skip = creating && object.fields.get("on_create").map(String::as_str) == Some("0");
        let detail = if skip {
            "on_create is false: the SDN configuration is left pending".to_owned()
        } else {
            self.apply_sdn().await.map_err(|e| (e, false))?
        };
        let entry = StateEntry::Object {
            address: object.address.clone(),
            resource_type: object.resource_type.clone(),
            id: object.id.clone(),
            fields: object.fields.clone(),
            entries: None,
        };
        state
            .record(&entry)
            .await
            .map_err(|e| (format!("the SDN configuration is applied, but {e}"), !skip))?;
        Ok(detail)
    }

    /// `PUT /cluster/sdn` and the reload task's end.
    async fn apply_sdn(&self) -> Result<String, String> {
        let api = self.exec.api;
        let upid = api
            .sdn_apply()
            .await
            .map_err(|e| format!("applying the SDN configuration: {e}"))?;
        api.wait_task(&upid)
            .await
            .map_err(|e| format!("reloading the nodes' networks after applying SDN: {e}"))?;
        Ok(
            "applied the SDN configuration (PUT /cluster/sdn); the nodes reloaded their networks"
                .to_owned(),
        )
    }

    /// SDN objects were deleted after the declared appliers ran: apply again, so the deletes
    /// do not stay pending; a failure is the applier's.
    pub(super) async fn applied_after_removals(
        &self,
        appliers: Vec<&str>,
        results: &mut BTreeMap<String, Outcome>,
    ) {
        let Some(address) = appliers.into_iter().find(|a| {
            results
                .get(*a)
                .is_some_and(|o| matches!(o, Outcome::Changed { .. }))
        }) else {
            return;
        };
        let outcome = match self.apply_sdn().await {
            Ok(detail) => self.done(
                address,
                format!("{detail}, again after the SDN deletes"),
                Vec::new(),
            ),
            Err(error) => self.failed(address, error, true),
        };
        results.insert(address.to_owned(), outcome);
    }
}
