//! The phases of one run, in order: generated values (with a destroyed `time_sleep`'s wait),
//! downloads, guests with the pools and firewall objects made or changed, removed objects,
//! removed downloads, and what the guard blocked.

use std::collections::BTreeMap;

use futures::future::{Either, join_all};

use super::{ApplyEvent, Outcome, Run};
use crate::proxmox::desired::{DesiredState, is_generated};
use crate::proxmox::plan::{Desired, DesiredObject, Plan, ResourceChange, StepOp, steps};

/// The plan indexed for one run: each resource's change, desired state and steps.
pub(super) struct Work<'p> {
    changes: BTreeMap<&'p str, &'p ResourceChange>,
    desired: BTreeMap<&'p str, &'p Desired>,
    steps: BTreeMap<&'p str, Vec<StepOp>>,
}

impl<'p> Work<'p> {
    pub(super) fn new(plan: &'p Plan, desired: &'p DesiredState) -> Self {
        let changes: BTreeMap<&str, &ResourceChange> = plan
            .resource_changes
            .iter()
            .map(|c| (c.address.as_str(), c))
            .collect();
        let mut per_resource: BTreeMap<&str, Vec<StepOp>> = BTreeMap::new();
        for step in steps(plan) {
            if let Some((address, _)) = changes.get_key_value(step.address.as_str()) {
                per_resource.entry(*address).or_default().push(step.op);
            }
        }
        Self {
            changes,
            desired: desired.resources.iter().map(|d| (d.address(), d)).collect(),
            steps: per_resource,
        }
    }

    /// The network interfaces with steps: each change, its steps and its desired state.
    pub(super) fn network(
        &self,
    ) -> Vec<(&'p ResourceChange, Vec<StepOp>, Option<&'p DesiredObject>)> {
        self.steps
            .iter()
            .filter(|(a, _)| is_network(self.changes[*a]))
            .map(|(a, ops)| {
                let desired = match self.desired.get(a) {
                    Some(Desired::Object(object)) => Some(object),
                    _ => None,
                };
                (self.changes[a], ops.clone(), desired)
            })
            .collect()
    }

    /// The SDN appliers the configuration declares that this run applied (created or updated).
    pub(super) fn appliers(&self) -> Vec<&'p str> {
        self.changes
            .iter()
            .filter(|(a, c)| {
                c.object
                    .as_ref()
                    .is_some_and(|o| o.kind == crate::proxmox::types::ObjectKind::SdnApplier)
                    && self.desired.contains_key(*a)
                    && self.steps.contains_key(*a)
            })
            .map(|(a, _)| *a)
            .collect()
    }

    /// Non-guest resources (downloads, generated values) with steps, by whether they create.
    fn files(&self, creating: bool) -> impl Iterator<Item = &'p str> + '_ {
        self.steps
            .iter()
            .filter(move |(a, ops)| {
                let change = self.changes[*a];
                change.kind.is_none()
                    && change.object.is_none()
                    && ops.contains(&StepOp::Create) == creating
            })
            .map(|(a, _)| *a)
    }
}

/// Whether the change is to a node's network interface (applied in its own phase).
pub(super) fn is_network(change: &ResourceChange) -> bool {
    change
        .object
        .as_ref()
        .is_some_and(|o| o.kind.network_type().is_some())
}

/// A `time_sleep` destroyed: the apply waits its stored `destroy_duration` (the plan shows it as
/// the argument's value before), on the runtime's timer.
async fn wait_before_destroy(change: &ResourceChange) {
    let arguments: BTreeMap<String, String> = change
        .attributes
        .iter()
        .filter_map(|a| Some((a.path.clone(), a.before.as_str()?.to_owned())))
        .collect();
    let wait = crate::proxmox::desired::wait(&change.resource_type, &arguments, true);
    if !wait.is_zero() {
        tracing::info!(address = %change.address, wait_secs = wait.as_secs_f64(), "time_sleep: waiting before destroying it");
        tokio::time::sleep(wait).await;
    }
}

impl Run<'_> {
    /// Generated values were made and stored before the run (they are in `desired`); those no
    /// longer declared are removed from state.
    pub(super) async fn generated(&self, work: &Work<'_>, results: &mut BTreeMap<String, Outcome>) {
        for (address, ops) in &work.steps {
            if !is_generated(&work.changes[address].resource_type) {
                continue;
            }
            let outcome = if ops.contains(&StepOp::Create) {
                let detail = "generated and stored in state (never shown)".to_owned();
                self.done(address, detail, Vec::new())
            } else if ops.contains(&StepOp::Update) {
                let detail = "updated in state (never shown)".to_owned();
                self.done(address, detail, Vec::new())
            } else {
                wait_before_destroy(work.changes[address]).await;
                match self.exec.state.forget(address).await {
                    Ok(_) => self.done(address, "removed from state".to_owned(), Vec::new()),
                    Err(e) => self.failed(address, e.to_string(), false),
                }
            };
            results.insert((*address).to_owned(), outcome);
        }
    }

    /// Downloads created or replaced, before the guests that use them.
    pub(super) async fn downloads(&self, work: &Work<'_>, results: &mut BTreeMap<String, Outcome>) {
        let todo: Vec<&str> = work
            .files(true)
            .filter(|a| !results.contains_key(*a))
            .collect();
        let done = join_all(
            todo.iter()
                .map(|a| self.download(work.changes[a], work.desired.get(a).copied())),
        )
        .await;
        results.extend(done);
    }

    /// Guests and the pools and firewall objects made or changed, each on its own within the
    /// per-node limit; one failing stops only itself and what uses what it failed to make.
    /// What uses another resource of this run (a VM cloned from a template made in the same
    /// apply, a guest's firewall rules, a guest in a new pool) waits for it: they go in
    /// waves, each of those whose used resources are done.
    pub(super) async fn guests(&self, work: &Work<'_>, results: &mut BTreeMap<String, Outcome>) {
        let mut todo: Vec<(&str, &Vec<StepOp>)> = work
            .steps
            .iter()
            .filter(|(a, ops)| {
                let change = work.changes[*a];
                change.kind.is_some()
                    || (change.object.is_some() && ops.contains(&StepOp::Create))
                    || (change.object.is_some() && ops.contains(&StepOp::Update))
            })
            .filter(|(a, _)| !is_network(work.changes[*a]))
            .map(|(a, ops)| (*a, ops))
            .collect();
        while !todo.is_empty() {
            let waiting = |address: &str, results: &BTreeMap<String, Outcome>| {
                work.changes[address].uses.iter().any(|used| {
                    used != address
                        && work.steps.contains_key(used.as_str())
                        && !results.contains_key(used.as_str())
                })
            };
            let (ready, rest): (Vec<_>, Vec<_>) =
                todo.into_iter().partition(|(a, _)| !waiting(a, results));
            // a cycle cannot come from a configuration, but never loop on one
            let (ready, rest) = if ready.is_empty() {
                (rest, Vec::new())
            } else {
                (ready, rest)
            };
            let done = join_all(ready.into_iter().map(|(address, ops)| {
                let change = work.changes[address];
                let failed_use = change.uses.iter().find(|used| {
                    results
                        .get(used.as_str())
                        .is_some_and(|o| !matches!(o, Outcome::Changed { .. }))
                });
                match (work.desired.get(address), &change.object) {
                    (desired, Some(_)) => {
                        let object = match desired {
                            Some(Desired::Object(object)) => Some(object),
                            _ => None,
                        };
                        Either::Left(self.object_after(change, ops, object, failed_use.cloned()))
                    }
                    (desired, None) => {
                        let guest = match desired {
                            Some(Desired::Guest(guest)) => Some(guest),
                            _ => None,
                        };
                        Either::Right(self.guest(change, ops, guest, failed_use.cloned()))
                    }
                }
            }))
            .await;
            results.extend(done);
            todo = rest;
        }
    }

    /// An object, unless something it uses failed.
    async fn object_after(
        &self,
        change: &ResourceChange,
        ops: &[StepOp],
        object: Option<&crate::proxmox::plan::DesiredObject>,
        failed_use: Option<String>,
    ) -> (String, Outcome) {
        if let Some(used) = failed_use {
            let reason = format!("not attempted: {used} failed");
            return (change.address.clone(), Outcome::Skipped { reason });
        }
        self.object(change, ops, object).await
    }

    /// Pools and firewall objects no longer declared, after the guests (a pool must be
    /// empty), rule lists before the groups and sets they name, pools last.
    pub(super) async fn removed_objects(
        &self,
        work: &Work<'_>,
        results: &mut BTreeMap<String, Outcome>,
    ) {
        let mut todo: Vec<&ResourceChange> = work
            .steps
            .iter()
            .filter(|(a, ops)| {
                !results.contains_key(**a)
                    && work.changes[*a].object.is_some()
                    && ops.as_slice() == [StepOp::Delete]
            })
            .filter(|(a, _)| !is_network(work.changes[*a]))
            .map(|(a, _)| work.changes[a])
            .collect();
        let rank = |c: &ResourceChange| {
            use crate::proxmox::types::ObjectKind as K;
            match c.object.as_ref().map(|o| o.kind) {
                Some(K::FirewallRules | K::FirewallOptions | K::NodeDns | K::NodeTime) => 0,
                Some(K::SecurityGroup) => 1,
                Some(K::Alias | K::IpSet) => 2,
                Some(K::Pool) | None => 3,
                Some(K::LinuxBridge | K::LinuxVlan | K::LinuxBond) => 4,
                // rules name HA resources, HA resources name groups
                Some(K::HaRule | K::ClusterOptions | K::NodeHosts | K::MetricServer) => 0,
                Some(K::HaResource | K::Replication) => 1,
                Some(K::HaGroup) => 2,
                // a subnet before its vnet, a vnet before its zone, then the SDN applied
                Some(K::SdnSubnet) => 4,
                Some(K::SdnVnet) => 5,
                Some(K::SdnZone) => 6,
                Some(K::SdnApplier) => 7,
                // grants and memberships before what they name, users before their groups
                Some(K::Acl | K::PoolMember | K::UserToken) => 0,
                Some(K::User) => 1,
                Some(K::Group | K::Role) => 2,
            }
        };
        todo.sort_by_key(|c| rank(c));
        let mut sdn_deleted = false;
        for change in todo {
            let (address, outcome) = self.object(change, &[StepOp::Delete], None).await;
            sdn_deleted |= matches!(outcome, Outcome::Changed { .. })
                && change.object.as_ref().is_some_and(|o| {
                    o.is_sdn() && o.kind != crate::proxmox::types::ObjectKind::SdnApplier
                });
            results.insert(address, outcome);
        }
        if sdn_deleted {
            self.applied_after_removals(work.appliers(), results).await;
        }
    }

    /// Downloads no longer declared, once nothing uses them.
    pub(super) async fn removed_downloads(
        &self,
        work: &Work<'_>,
        results: &mut BTreeMap<String, Outcome>,
    ) {
        let todo: Vec<&str> = work
            .files(false)
            .filter(|a| !results.contains_key(*a))
            .collect();
        for address in todo {
            let outcome = self.forget_download(work.changes[address]).await;
            results.insert(address.to_owned(), outcome);
        }
    }

    /// What the guard blocked did not run: say so, resource by resource.
    pub(super) fn blocked(&self, plan: &Plan, results: &mut BTreeMap<String, Outcome>) {
        for change in &plan.resource_changes {
            if let Some(blocked) = &change.blocked {
                let reason = format!("blocked by the guard: {}", blocked.reason);
                self.emit(ApplyEvent::Failed {
                    address: change.address.clone(),
                    error: reason.clone(),
                });
                results.insert(change.address.clone(), Outcome::Skipped { reason });
            }
        }
    }
}
