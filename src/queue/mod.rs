//! Durable jobs: a worker pool that claims jobs from the [`Store`] with a lease, keeps the lease
//! alive with a heartbeat per running job, reaps expired leases, caps concurrency globally and per
//! repository, and shuts down gracefully. It knows nothing of what a job does: callers register
//! a [`JobHandler`] per job kind.
//!
//! It must not hold a database transaction across a job's work, retry an `applying` job, start
//! a job again after its worker died under it `max_attempts` times, or run a job whose lease it
//! no longer holds without telling the handler.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use atoll::queue::{JobContext, JobHandler, Queue, QueueSettings};
//!
//! struct Plan;
//!
//! #[async_trait::async_trait]
//! impl JobHandler for Plan {
//!     async fn run(&self, ctx: JobContext) -> anyhow::Result<()> {
//!         ctx.log("refreshing inventory").await?;
//!         Ok(())
//!     }
//! }
//!
//! let store = atoll::store::connect("sqlite:///var/lib/atoll/atoll.db").await?;
//! let queue = Queue::new(store, QueueSettings::default()).handle("plan", Plan).start();
//! tokio::signal::ctrl_c().await?; // or SIGTERM
//! let report = queue.shutdown().await; // stop claiming; wait up to the grace period
//! # let _ = report;
//! # Ok(())
//! # }
//! ```

mod context;
mod metrics;
mod pool;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::store::{ClaimLimits, Reaped, Store};

pub use context::{JobContext, QueueError, StopReason};
pub use metrics::JobMetrics;
pub use pool::QueueHandle;

/// How often the retention pass runs when [`QueueSettings::retention`] is set.
pub const PRUNE_INTERVAL: Duration = Duration::from_secs(3600);

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
    /// A running job whose worker died under it this many times is failed, not requeued.
    pub max_attempts: u32,
    /// Concurrency caps; `global` is also the most jobs this pool runs at once.
    pub limits: ClaimLimits,
    /// On shutdown, how long running jobs may take to finish before they are given back.
    pub shutdown_grace: Duration,
    /// Finished jobs and delivery records older than this are deleted, once at start and then
    /// every [`PRUNE_INTERVAL`]; `None` keeps them.
    pub retention: Option<Duration>,
    /// Where job durations are recorded (shared with `/metrics`).
    pub metrics: Arc<JobMetrics>,
}

impl Default for QueueSettings {
    fn default() -> Self {
        Self {
            worker: format!("worker-{}", Uuid::new_v4().simple()),
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            poll_interval: Duration::from_secs(2),
            reap_interval: Duration::from_secs(5),
            max_attempts: crate::store::DEFAULT_MAX_ATTEMPTS,
            limits: ClaimLimits {
                global: 4,
                per_repo: 1,
                per_repo_exempt: &[],
            },
            shutdown_grace: Duration::from_secs(60),
            retention: None,
            metrics: Arc::default(),
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
    reaped: Option<mpsc::UnboundedSender<Reaped>>,
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
            reaped: None,
        }
    }

    /// Runs jobs of `kind` with `handler`; jobs of kinds with no handler are left queued.
    #[must_use]
    pub fn handle(mut self, kind: &str, handler: impl JobHandler) -> Self {
        self.handlers.insert(kind.to_owned(), Arc::new(handler));
        self
    }

    /// Sends every non-empty pass of this pool's reaper to `reports`, so the caller can tell a
    /// pull request that its apply was interrupted. Another replica's reaper reports to its own.
    #[must_use]
    pub fn report_reaped(mut self, reports: mpsc::UnboundedSender<Reaped>) -> Self {
        self.reaped = Some(reports);
        self
    }

    /// Starts the claim loop and the reaper on the current tokio runtime.
    pub fn start(self) -> QueueHandle {
        if self.settings.heartbeat >= self.settings.lease {
            tracing::warn!(
                heartbeat = ?self.settings.heartbeat,
                lease = ?self.settings.lease,
                "queue: the heartbeat is not shorter than the lease; running jobs will lose it"
            );
        }
        pool::start(self.store, self.settings, self.handlers, self.reaped)
    }
}
