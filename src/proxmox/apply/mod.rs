//! `proxmox::apply` executes a saved plan: it checks the plan is still fresh (the state
//! fingerprint it was made from) and re-runs the guard before the first change, then runs each
//! resource's steps — downloads first, then guests with bounded parallelism per node, each
//! guest independent of the others' failures — writing state after every completed step and
//! reporting progress events. It must not decide what a change does (the plan says) nor
//! format user-facing text.

mod body;
mod guest;
mod preflight;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures::future::join_all;
use tokio::sync::{Mutex, Semaphore};

pub use body::StillUnknown;
pub use guest::entry_for;
pub use preflight::{PreflightError, adopt, check_fresh};

use crate::proxmox::client::{DownloadUrl, ProxmoxApi};
use crate::proxmox::desired::DesiredState;
use crate::proxmox::inventory::parse;
use crate::proxmox::plan::{
    Action, Desired, DesiredDownload, Plan, ResourceChange, StateEntry, StepOp, steps,
};
use crate::proxmox::state::StateHandle;

/// What apply does when a change needs a restart (`restart: auto | never`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RestartPolicy {
    /// Restart the guest so the change takes effect.
    #[default]
    Auto,
    /// Leave the change pending; the result says so.
    Never,
}

/// How apply runs.
#[derive(Debug, Clone, Copy)]
pub struct ApplySettings {
    pub restart: RestartPolicy,
    /// Guests changed at once on one node.
    pub per_node: usize,
    /// Seconds a clean shutdown may take before a delete stops the guest hard.
    pub shutdown_timeout: u32,
}

impl Default for ApplySettings {
    fn default() -> Self {
        Self {
            restart: RestartPolicy::Auto,
            per_node: 4,
            shutdown_timeout: 60,
        }
    }
}

/// A progress event, for the comment and the dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyEvent {
    Started { address: String, step: &'static str },
    Done { address: String, detail: String },
    Failed { address: String, error: String },
}

/// How one resource ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every step ran. `left_pending` lists keys left pending by `restart: never`.
    Changed {
        detail: String,
        left_pending: Vec<String>,
    },
    /// A step failed. `changed` says whether an earlier step had already changed the cluster.
    Failed { error: String, changed: bool },
    /// Not attempted (a resource it uses failed).
    Skipped { reason: String },
}

/// One resource's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceResult {
    pub address: String,
    pub outcome: Outcome,
}

/// What an apply did, resource by resource, in plan order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyReport {
    pub results: Vec<ResourceResult>,
}

impl ApplyReport {
    pub fn failed(&self) -> bool {
        self.results
            .iter()
            .any(|r| !matches!(r.outcome, Outcome::Changed { .. }))
    }
}

/// Why apply did not start.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Preflight(#[from] PreflightError),
}

/// Everything one apply run uses.
pub struct Executor<'a> {
    pub api: &'a dyn ProxmoxApi,
    pub state: &'a StateHandle,
    pub settings: ApplySettings,
    pub events: &'a (dyn Fn(&ApplyEvent) + Send + Sync),
}

impl std::fmt::Debug for Executor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Shared between the guests of one run.
pub(crate) struct Run<'a> {
    pub(crate) exec: &'a Executor<'a>,
    nodes: BTreeMap<String, Arc<Semaphore>>,
    /// VMIDs handed out in this run (`cluster/nextid` is not a reservation).
    pub(crate) reserved: Mutex<BTreeSet<u32>>,
}

impl Executor<'_> {
    /// Runs the plan's steps. The caller has checked freshness and the guard
    /// ([`check_fresh`], `guard::recheck`); `desired` must be the configuration the plan was
    /// made from, with generated values filled in.
    pub async fn execute(&self, plan: &Plan, desired: &DesiredState) -> ApplyReport {
        let by_address: BTreeMap<&str, &Desired> =
            desired.resources.iter().map(|d| (d.address(), d)).collect();
        let changes: BTreeMap<&str, &ResourceChange> = plan
            .resource_changes
            .iter()
            .map(|c| (c.address.as_str(), c))
            .collect();
        let mut per_resource: BTreeMap<&str, Vec<StepOp>> = BTreeMap::new();
        for step in steps(plan) {
            let address = plan
                .resource_changes
                .iter()
                .find(|c| c.address == step.address)
                .map(|c| c.address.as_str());
            if let Some(address) = address {
                per_resource.entry(address).or_default().push(step.op);
            }
        }
        let run = Run {
            exec: self,
            nodes: plan
                .resource_changes
                .iter()
                .map(|c| {
                    (
                        c.node.clone(),
                        Arc::new(Semaphore::new(self.settings.per_node.max(1))),
                    )
                })
                .collect(),
            reserved: Mutex::new(BTreeSet::new()),
        };
        let mut results: BTreeMap<String, Outcome> = BTreeMap::new();
        // 0. generated values were made and stored before this run (they are in `desired`)
        for address in per_resource.keys() {
            if changes[address].resource_type.starts_with("random_") {
                let detail = "generated and stored in state (never shown)".to_owned();
                results.insert((*address).to_owned(), run.done(address, detail, Vec::new()));
            }
        }
        // 1. downloads that are created or replaced
        let downloads = per_resource.iter().filter(|(a, ops)| {
            changes[*a].kind.is_none()
                && ops.contains(&StepOp::Create)
                && !results.contains_key(**a)
        });
        let done =
            join_all(downloads.map(|(address, _)| {
                run.download(changes[address], by_address.get(address).copied())
            }))
            .await;
        results.extend(done);
        // 2. guests, each on its own, within the per-node limit
        let guests = per_resource
            .iter()
            .filter(|(a, _)| changes[*a].kind.is_some());
        let done = join_all(guests.map(|(address, ops)| {
            let change = changes[address];
            let failed_use = change.uses.iter().find(|used| {
                results
                    .get(used.as_str())
                    .is_some_and(|o| !matches!(o, Outcome::Changed { .. }))
            });
            let guest = match by_address.get(address) {
                Some(Desired::Guest(guest)) => Some(guest),
                _ => None,
            };
            run.guest(change, ops, guest, failed_use.cloned())
        }))
        .await;
        results.extend(done);
        // 3. downloads no longer declared
        for (address, ops) in &per_resource {
            if changes[address].kind.is_none()
                && !ops.contains(&StepOp::Create)
                && !results.contains_key(*address)
            {
                results.insert((*address).to_owned(), run.forget_download(address).await);
            }
        }
        // 4. what the guard blocked did not run: say so, resource by resource
        for change in &plan.resource_changes {
            if let Some(blocked) = &change.blocked {
                let reason = format!("blocked by the guard: {}", blocked.reason);
                run.emit(ApplyEvent::Failed {
                    address: change.address.clone(),
                    error: reason.clone(),
                });
                results.insert(change.address.clone(), Outcome::Skipped { reason });
            }
        }
        let results = plan
            .resource_changes
            .iter()
            .filter_map(|c| {
                let outcome = results.remove(&c.address)?;
                Some(ResourceResult {
                    address: c.address.clone(),
                    outcome,
                })
            })
            .collect();
        ApplyReport { results }
    }
}

impl Run<'_> {
    pub(crate) fn emit(&self, event: ApplyEvent) {
        (self.exec.events)(&event);
    }

    pub(crate) fn node_limit(&self, node: &str) -> Arc<Semaphore> {
        self.nodes
            .get(node)
            .cloned()
            .unwrap_or_else(|| Arc::new(Semaphore::new(self.exec.settings.per_node.max(1))))
    }

    pub(crate) fn failed(&self, address: &str, error: String, changed: bool) -> Outcome {
        self.emit(ApplyEvent::Failed {
            address: address.to_owned(),
            error: error.clone(),
        });
        Outcome::Failed { error, changed }
    }

    pub(crate) fn done(&self, address: &str, detail: String, left_pending: Vec<String>) -> Outcome {
        self.emit(ApplyEvent::Done {
            address: address.to_owned(),
            detail: detail.clone(),
        });
        Outcome::Changed {
            detail,
            left_pending,
        }
    }

    async fn download(
        &self,
        change: &ResourceChange,
        desired: Option<&Desired>,
    ) -> (String, Outcome) {
        let address = change.address.clone();
        let Some(Desired::Download(file)) = desired else {
            let error = "the configuration no longer declares it; make a new plan".to_owned();
            return (address.clone(), self.failed(&address, error, false));
        };
        self.emit(ApplyEvent::Started {
            address: address.clone(),
            step: "download",
        });
        let outcome = match self.fetch(file).await {
            Ok(()) => self.done(&address, format!("downloaded {}", file.volid()), Vec::new()),
            Err(error) => self.failed(&address, error, false),
        };
        (address, outcome)
    }

    async fn fetch(&self, file: &DesiredDownload) -> Result<(), String> {
        let node = parse("node name", &file.node).map_err(|e| e.to_string())?;
        let storage = parse("storage", &file.datastore).map_err(|e| e.to_string())?;
        let checksum = match (
            file.arguments.get("checksum_algorithm"),
            file.arguments.get("checksum"),
        ) {
            (Some(algorithm), Some(sum)) => Some((algorithm.clone(), sum.clone())),
            _ => None,
        };
        let request = DownloadUrl {
            url: file.arguments.get("url").cloned().unwrap_or_default(),
            content: file.content_type.clone(),
            filename: file.file_name.clone(),
            checksum,
            verify_certificates: None,
        };
        let api = self.exec.api;
        let upid = api
            .download_url(&node, &storage, &request)
            .await
            .map_err(|e| format!("downloading {}: {e}", file.volid()))?;
        api.wait_task(&upid)
            .await
            .map_err(|e| format!("downloading {}: {e}", file.volid()))?;
        let entry = StateEntry::Download {
            address: file.address.clone(),
            resource_type: file.resource_type.clone(),
            node: file.node.clone(),
            volid: file.volid(),
            arguments: file.arguments.clone(),
        };
        self.exec
            .state
            .record(&entry)
            .await
            .map_err(|e| format!("downloaded {}, but {e}", file.volid()))
    }

    async fn forget_download(&self, address: &str) -> Outcome {
        match self.exec.state.forget(address).await {
            Ok(_) => self.done(
                address,
                "removed from state; the file stays on the storage (atoll does not delete storage content)"
                    .to_owned(),
                Vec::new(),
            ),
            Err(e) => self.failed(address, e.to_string(), false),
        }
    }
}

/// Whether a plan has anything to do.
pub fn has_steps(plan: &Plan) -> bool {
    plan.resource_changes
        .iter()
        .any(|c| c.blocked.is_none() && c.actions != [Action::NoOp])
}
