//! Apply progress for the dashboard: guests finished (changed or failed) of the guests that the
//! job's plans change, stored on the job each time the count moves.

use std::collections::HashSet;
use std::sync::Mutex;

use super::Job;
use crate::proxmox::apply::ApplyEvent;
use crate::proxmox::plan::Plan;

/// Counts one job's finished guests across its projects (an address is only unique within its
/// project, so guests are keyed by project index too).
#[derive(Debug, Default)]
pub(super) struct GuestProgress {
    guests: HashSet<(usize, String)>,
    finished: Mutex<HashSet<(usize, String)>>,
    reported: Mutex<Option<usize>>,
}

impl GuestProgress {
    /// The guests the plans (one per project, in apply order; `None` for a plan that does not
    /// parse, which apply refuses) change.
    pub(super) fn new(plans: impl IntoIterator<Item = Option<Plan>>) -> Self {
        let guests = plans
            .into_iter()
            .enumerate()
            .flat_map(|(i, plan)| {
                plan.into_iter().flat_map(move |plan| {
                    plan.resource_changes
                        .into_iter()
                        .filter(|c| c.kind.is_some() && !c.is_no_op())
                        .map(move |c| (i, c.address))
                })
            })
            .collect();
        Self {
            guests,
            ..Self::default()
        }
    }

    /// Called from the executor's event callback of project `project` (synchronous, cheap;
    /// projects may apply in parallel).
    pub(super) fn record(&self, project: usize, event: &ApplyEvent) {
        let address = match event {
            ApplyEvent::Done { address, .. } | ApplyEvent::Failed { address, .. } => address,
            ApplyEvent::Started { .. } => return,
        };
        let key = (project, address.clone());
        if self.guests.contains(&key)
            && let Ok(mut finished) = self.finished.lock()
        {
            finished.insert(key);
        }
    }

    /// `(done, total)`.
    fn counts(&self) -> (usize, usize) {
        let done = self.finished.lock().map_or(0, |f| f.len());
        (done, self.guests.len())
    }

    /// Stores the progress on the job (and logs it) when it moved since the last report; a
    /// failure is logged, never fatal.
    pub(super) async fn report(&self, job: &Job) {
        let (done, total) = self.counts();
        {
            let Ok(mut last) = self.reported.lock() else {
                return;
            };
            if *last == Some(done) {
                return;
            }
            *last = Some(done);
        }
        let as_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        if let Err(e) = job.ctx.progress(as_u32(done), as_u32(total)).await {
            job.step(&format!("recording progress failed: {e}")).await;
            return;
        }
        job.step(&format!("progress: {done} of {total} guest(s) finished"))
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(addresses: &[(&str, bool)]) -> Plan {
        let changes: Vec<serde_json::Value> = addresses
            .iter()
            .map(|(a, changed)| {
                serde_json::json!({
                    "address": a, "type": "proxmox_virtual_environment_container", "node": "pve",
                    "vm_id": null, "actions": [if *changed { "update" } else { "no-op" }],
                    "disruption": null, "blocked": null, "attributes": [], "kind": "lxc"
                })
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "format_version": "1",
            "source": {"sha": "a", "config_hash": "b", "state_fingerprint": "c"},
            "resource_changes": changes,
            "summary": {"add": 0, "change": 0, "destroy": 0, "replace": 0, "restart": 0, "blocked": 0}
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn done(address: &str) -> ApplyEvent {
        ApplyEvent::Done {
            address: address.to_owned(),
            detail: String::new(),
        }
    }

    #[test]
    fn counts_finished_changed_guests_per_project() {
        let plans = [plan(&[("a", true), ("idle", false)]), plan(&[("a", true)])];
        let p = GuestProgress::new(plans.into_iter().map(Some));
        assert_eq!(p.counts(), (0, 2));
        p.record(0, &done("idle"));
        p.record(
            0,
            &ApplyEvent::Started {
                address: "a".to_owned(),
                step: "update",
            },
        );
        assert_eq!(
            p.counts(),
            (0, 2),
            "no-op and started guests are not finished"
        );
        p.record(0, &done("a"));
        p.record(0, &done("a"));
        assert_eq!(p.counts(), (1, 2));
        p.record(
            1,
            &ApplyEvent::Failed {
                address: "a".to_owned(),
                error: "boom".to_owned(),
            },
        );
        assert_eq!(p.counts(), (2, 2), "a failed guest is finished too");
    }
}
