//! What can stop the engine, by what the caller can do about it.

use crate::proxmox::apply::PreflightError;
use crate::proxmox::client::PveError;
use crate::proxmox::guard::GuardRefusal;
use crate::proxmox::inventory::InventoryError;
use crate::proxmox::plan::PlanErrors;
use crate::proxmox::state::StateError;

/// Why the engine stopped. Each variant names who can fix it: the configuration's author, the
/// operator (settings, store, cluster), or nobody but a new plan.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The project does not load or evaluate; the text is Terraform-style diagnostics, one
    /// per problem. The configuration must change.
    #[error("{0}")]
    Config(String),
    /// The configuration evaluates, but the plan refuses it (`prevent_destroy`, two resources
    /// with one VMID). The configuration must change.
    #[error(transparent)]
    Plan(#[from] PlanErrors),
    /// atoll's state could not be read or written. Try again once the store answers.
    #[error(transparent)]
    State(#[from] StateError),
    /// The cluster could not be read. Try again, or check the endpoint and the token.
    #[error(transparent)]
    Cluster(#[from] InventoryError),
    /// atoll could not tell which guest it runs on, or the `protect` settings are wrong. The
    /// operator must fix the settings.
    #[error("{0}")]
    Protect(String),
    /// A saved plan no longer matches the state, the cluster or the configuration. Plan again.
    #[error(transparent)]
    Stale(#[from] PreflightError),
    /// The guard refuses the plan. Plan again (the plan shows why).
    #[error(transparent)]
    Guard(#[from] GuardRefusal),
    /// A value atoll generates (a `tls_private_key`, a `random_password`) could not be made.
    #[error("generating {address} failed: {why}")]
    Generate { address: String, why: String },
    /// The configuration reads a data source, and it is being evaluated without the cluster
    /// (the outputs after an apply): only a plan reads data sources. Plan instead.
    #[error(
        "the configuration reads {address} ({declared_at}) from the cluster, and only a plan \
         reads data sources: run a plan to see values that depend on it"
    )]
    DataSource {
        address: String,
        declared_at: String,
    },
    /// The evaluation stopped before it answered (a panic in the evaluator, or shutdown).
    #[error("evaluating the configuration stopped unexpectedly: {0}")]
    Interrupted(String),
}

impl EngineError {
    /// Whether the same request may succeed later without anyone changing anything.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::State(_) | Self::Interrupted(_) => true,
            Self::Cluster(InventoryError::Api(e)) => e.is_transient(),
            _ => false,
        }
    }
}

impl From<PveError> for EngineError {
    fn from(e: PveError) -> Self {
        Self::Cluster(InventoryError::Api(e))
    }
}
