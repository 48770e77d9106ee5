//! `proxmox::apply` executes a saved plan: it checks the plan is still fresh (the state
//! fingerprint it was made from: atoll's state and the guests it changes) and re-runs the
//! guard before the first change, then waits for any lock on a guest to clear and runs each
//! resource's steps — downloads first, then guests with bounded parallelism per node, each
//! guest independent of the others' failures — writing state after every completed step and
//! reporting progress events. It must not decide what a change does (the plan says) nor
//! format user-facing text.

mod access;
mod body;
mod clone;
mod cluster;
mod files;
mod guest;
mod network;
mod object;
mod phases;
mod preflight;
mod sdn;
mod update;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use tokio::sync::{Mutex, Semaphore};

pub use body::StillUnknown;
pub use guest::entry_for;
pub use preflight::{ClusterChanges, Now, PreflightError, adopt, check_fresh};

use crate::proxmox::client::{DownloadUrl, ProxmoxApi};
use crate::proxmox::desired::DesiredState;
use crate::proxmox::inventory::parse;
use crate::proxmox::plan::{
    Action, Desired, DesiredDownload, Plan, ResourceChange, StateEntry, VolumeSource,
};
use crate::proxmox::sftp::SftpSettings;
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
    /// SSH access to the nodes, for snippets (`proxmox.ssh`).
    pub sftp: Option<&'a SftpSettings>,
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
        let work = phases::Work::new(plan, desired);
        let run = Run {
            exec: self,
            nodes: plan
                .resource_changes
                .iter()
                .map(|c| {
                    let limit = Semaphore::new(self.settings.per_node.max(1));
                    (c.node.clone(), Arc::new(limit))
                })
                .collect(),
            reserved: Mutex::new(BTreeSet::new()),
        };
        let mut results: BTreeMap<String, Outcome> = BTreeMap::new();
        run.generated(&work, &mut results).await;
        run.downloads(&work, &mut results).await;
        run.networks(&work, &mut results).await;
        run.guests(&work, &mut results).await;
        run.removed_objects(&work, &mut results).await;
        run.removed_downloads(&work, &mut results).await;
        run.blocked(plan, &mut results);
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
        let replacing = change.actions.contains(&Action::Delete);
        let (outcome, verb) = match &file.source {
            VolumeSource::Url => (self.fetch(file).await, "downloaded"),
            VolumeSource::Registry => (self.pull(file).await, "pulled"),
            VolumeSource::Bytes(bytes) => {
                let put = self.put_file(file, bytes, replacing).await;
                (put, "uploaded")
            }
        };
        let outcome = match outcome {
            Ok(()) => self.record_volume(file).await,
            Err(error) => Err(error),
        };
        let outcome = match outcome {
            Ok(()) => self.done(&address, format!("{verb} {}", file.volid()), Vec::new()),
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
        Ok(())
    }

    /// Pulls an OCI image onto its storage (`oci-registry-pull`, which adds `.tar` itself).
    async fn pull(&self, file: &DesiredDownload) -> Result<(), String> {
        let node = parse("node name", &file.node).map_err(|e| e.to_string())?;
        let storage = parse("storage", &file.datastore).map_err(|e| e.to_string())?;
        let reference = file.arguments.get("reference").cloned().unwrap_or_default();
        let name = file.file_name.trim_end_matches(".tar");
        let api = self.exec.api;
        let failed =
            |e: crate::proxmox::PveError| format!("pulling {reference} to {}: {e}", file.volid());
        let upid = api
            .oci_registry_pull(&node, &storage, &reference, name)
            .await
            .map_err(failed)?;
        api.wait_task(&upid).await.map_err(failed)?;
        Ok(())
    }

    /// Records a volume put in its storage.
    async fn record_volume(&self, file: &DesiredDownload) -> Result<(), String> {
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
            .map_err(|e| format!("{} is in its storage, but {e}", file.volid()))
    }

    async fn forget_download(&self, change: &ResourceChange) -> Outcome {
        let address = change.address.as_str();
        if tfconfig::schema::FILE_TYPES.contains(&change.resource_type.as_str()) {
            let volid = change.attributes.iter().find(|a| a.path == "id");
            let volid = volid.and_then(|a| a.before.as_str());
            if let Some(volid) = volid {
                if let Err(error) = self.delete_file(&change.node, volid).await {
                    return self.failed(address, error, false);
                }
                return match self.exec.state.forget(address).await {
                    Ok(_) => self.done(address, format!("deleted {volid}"), Vec::new()),
                    Err(e) => self.failed(address, format!("deleted {volid}, but {e}"), true),
                };
            }
        }
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

/// Whether a plan has anything to do: a change, or a move or forget in state.
pub fn has_steps(plan: &Plan) -> bool {
    plan.resource_changes.iter().any(|c| {
        let moves = c.previous_address.is_some() || c.forget;
        c.blocked.is_none() && (c.actions != [Action::NoOp] || moves)
    })
}
