//! Durable jobs: a worker pool that claims jobs from the [`Store`] with a lease, keeps the lease
//! alive with a heartbeat per running job, reaps expired leases, caps concurrency globally and per
//! repository, and shuts down gracefully. It knows nothing of what a job does: callers register
//! a [`JobHandler`] per job kind.
//!
//! It must not hold a database transaction across a job's work, retry an `applying` job, or
//! run a job whose lease it no longer holds without telling the handler.

mod context;
mod pool;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use uuid::Uuid;

use crate::store::{ClaimLimits, Store};

pub use context::{JobContext, QueueError, StopReason};
pub use pool::QueueHandle;

/// Runs jobs of one kind. Returning `Ok` marks the job `succeeded`; an error marks it `failed`
/// with the error's message (so it must not contain secrets); a panic marks it `failed` too.
#[async_trait]
pub trait JobHandler: Send + Sync + 'static {
    async fn run(&self, ctx: JobContext) -> anyhow::Result<()>;
}

/// The queue's own settings.
#[derive(Debug, Clone)]
pub struct QueueSettings {
    /// This pool's identity in the store (`jobs.worker`); unique per process.
    pub worker: String,
    /// How long a claim lasts without a heartbeat.
    pub lease: Duration,
    /// How often a running job's lease is renewed; well under `lease`.
    pub heartbeat: Duration,
    /// Claim again at least this often even without a wake-up signal.
    pub poll_interval: Duration,
    /// How often expired leases are reaped.
    pub reap_interval: Duration,
    /// Concurrency caps; `global` is also the most jobs this pool runs at once.
    pub limits: ClaimLimits,
    /// On shutdown, how long running jobs may take to finish before they are given back.
    pub shutdown_grace: Duration,
}

impl Default for QueueSettings {
    fn default() -> Self {
        Self {
            worker: format!("worker-{}", Uuid::new_v4().simple()),
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            poll_interval: Duration::from_secs(2),
            reap_interval: Duration::from_secs(5),
            limits: ClaimLimits {
                global: 4,
                per_repo: 1,
            },
            shutdown_grace: Duration::from_secs(60),
        }
    }
}

/// What a graceful shutdown did with the jobs it was running.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Jobs that finished within the grace period.
    pub finished: usize,
    /// `running` jobs given back to the queue when the grace period ended.
    pub released: Vec<Uuid>,
    /// `applying` jobs cut short when the grace period ended: never retried automatically.
    pub interrupted: Vec<Uuid>,
}

/// A worker pool being assembled: register handlers, then [`Queue::start`].
pub struct Queue {
    store: Arc<dyn Store>,
    settings: QueueSettings,
    handlers: BTreeMap<String, Arc<dyn JobHandler>>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("settings", &self.settings)
            .field("kinds", &self.handlers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Queue {
    pub fn new(store: Arc<dyn Store>, settings: QueueSettings) -> Self {
        Self {
            store,
            settings,
            handlers: BTreeMap::new(),
        }
    }

    /// Runs jobs of `kind` with `handler`; jobs of kinds with no handler are left queued.
    #[must_use]
    pub fn handle(mut self, kind: &str, handler: impl JobHandler) -> Self {
        self.handlers.insert(kind.to_owned(), Arc::new(handler));
        self
    }

    /// Starts the claim loop and the reaper on the current tokio runtime.
    pub fn start(self) -> QueueHandle {
        pool::start(self.store, self.settings, self.handlers)
    }
}
