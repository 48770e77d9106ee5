//! `trait Store` with its SQLite (default, embedded) and PostgreSQL backends, and migrations.
//!
//! Every table has one owning module; this trait is the seam those owners call through. Both
//! backends pass one shared conformance suite (`tests/store_conformance.rs`).
//!
//! This file fixes the surface other modules code against. The backends live in `sqlite.rs` and
//! `postgres.rs`.

use std::fmt::Debug;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// What went wrong talking to the store, by what the caller can do about it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached or answered with an I/O error; retrying later may work.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// A uniqueness rule refused the write.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The row asked for does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// Anything else: a bug or a corrupt row.
    #[error("store error: {0}")]
    Internal(String),
}

/// Which forge a delivery came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    Github,
    Gitea,
}

impl ForgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Github => "github",
            Self::Gitea => "gitea",
        }
    }
}

/// A verified webhook delivery, recorded once per `(forge, delivery_id)`.
#[derive(Debug, Clone)]
pub struct NewDelivery {
    pub forge: ForgeKind,
    /// `X-GitHub-Delivery` / `X-Gitea-Delivery`.
    pub delivery_id: String,
    /// The event name as the forge sent it (`issue_comment`, `pull_request_sync`, ...).
    pub event: String,
    /// `host/owner/repo`.
    pub repo: String,
}

/// A job to enqueue in the same transaction as its delivery.
#[derive(Debug, Clone)]
pub struct NewJob {
    /// Job kind; the queue does not interpret it (`plan`, `apply`, `unlock`, ...).
    pub kind: String,
    /// `host/owner/repo`.
    pub repo: String,
    pub pr: Option<u64>,
    /// Deduplication by meaning: a second job with the same key is a duplicate
    /// (`comment:<forge>:<repo>:<comment id>`, `autoplan:<forge>:<repo>:<pr>:<sha>`).
    pub dedup_key: Option<String>,
    /// Whatever the job kind needs, as JSON.
    pub payload: serde_json::Value,
}

/// The result of recording a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// Stored and committed; `job` is the id of the job queued with it, if any.
    Accepted { job: Option<Uuid> },
    /// The delivery id, or the job's dedup key, was seen before; nothing was written.
    Duplicate,
}

/// A job's life: `queued -> running -> (applying) -> succeeded | failed`; an expired lease turns
/// `running` back into `queued` and `applying` into `interrupted` (never retried automatically).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Applying,
    Succeeded,
    Failed,
    Interrupted,
    Cancelled,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Applying => "applying",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Succeeded | Self::Failed | Self::Interrupted | Self::Cancelled
        )
    }
}

/// A job as stored.
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub id: Uuid,
    pub kind: String,
    pub repo: String,
    pub pr: Option<u64>,
    pub state: JobState,
    pub payload: serde_json::Value,
    pub attempts: u32,
    pub worker: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub lease_until: Option<OffsetDateTime>,
    pub error: Option<String>,
}

/// Limits applied when claiming.
#[derive(Debug, Clone, Copy)]
pub struct ClaimLimits {
    /// At most this many jobs `running`/`applying` in total.
    pub global: u32,
    /// At most this many per repository.
    pub per_repo: u32,
}

/// One stored log line of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    /// 1-based, dense per job; used as the SSE event id.
    pub seq: i64,
    pub line: String,
}

/// What one reaper pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reaped {
    pub requeued: Vec<Uuid>,
    pub interrupted: Vec<Uuid>,
}

/// The persistence seam. Implemented by `SqliteStore` and `PgStore`.
#[async_trait::async_trait]
pub trait Store: Send + Sync + Debug {
    /// Cheap round trip, for `/readyz`.
    async fn ping(&self) -> Result<(), StoreError>;

    /// Records a verified delivery and, in the same transaction, its job. Idempotent on
    /// `(forge, delivery_id)` and on the job's `dedup_key`.
    async fn accept_delivery(
        &self,
        delivery: NewDelivery,
        job: Option<NewJob>,
    ) -> Result<DeliveryOutcome, StoreError>;

    /// Enqueues a job with no delivery (API-triggered, follow-ups).
    async fn enqueue(&self, job: NewJob) -> Result<DeliveryOutcome, StoreError>;

    /// Claims the oldest queued job of one of `kinds` within `limits`, leasing it to `worker`.
    async fn claim(
        &self,
        worker: &str,
        kinds: &[&str],
        lease: Duration,
        limits: ClaimLimits,
    ) -> Result<Option<Job>, StoreError>;

    /// Extends the lease; `false` when the job is no longer this worker's.
    async fn heartbeat(&self, job: Uuid, worker: &str, lease: Duration)
    -> Result<bool, StoreError>;

    /// Moves a job this worker holds to `state` (e.g. `applying`, `succeeded`, `failed`).
    async fn transition(
        &self,
        job: Uuid,
        worker: &str,
        state: JobState,
        error: Option<&str>,
    ) -> Result<bool, StoreError>;

    /// Expired leases: `running` back to `queued`, `applying` to `interrupted`.
    async fn reap(&self) -> Result<Reaped, StoreError>;

    async fn get_job(&self, job: Uuid) -> Result<Option<Job>, StoreError>;

    async fn list_jobs(&self, limit: u32) -> Result<Vec<Job>, StoreError>;

    /// Appends a durable log line and returns its sequence number.
    async fn append_log(&self, job: Uuid, line: &str) -> Result<i64, StoreError>;

    /// Log lines with `seq > after`, in order.
    async fn job_log(&self, job: Uuid, after: i64) -> Result<Vec<LogLine>, StoreError>;
}
