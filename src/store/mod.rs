//! `trait Store` with its SQLite (default, embedded) and PostgreSQL backends, and migrations.
//!
//! Every table has one owning module; this trait is the seam those owners call through. Both
//! backends pass one shared conformance suite (`tests/store_conformance.rs`).
//!
//! This file fixes the surface other modules code against. The backends live in `sqlite.rs` and
//! `postgres.rs`; [`connect`] picks one from the URL scheme and runs its migrations. This module
//! must not know what a job does, and nothing outside it writes SQL against its tables.
//!
//! - `sqlite://PATH` (created if missing) or `sqlite::memory:`: one server. WAL, `synchronous=FULL`
//!   (a 202 means the job is on disk; `?synchronous=normal` keeps it across a crash of the process
//!   but not of the machine, for commits without an fsync), one writer connection with group
//!   commit, busy timeout for other processes. Wake-ups are in-process only; other processes see new jobs by polling.
//! - `postgres://USER@HOST/DB`: several replicas. Add `?options[search_path]=SCHEMA` to use a
//!   schema other than `public`. Leases use the database clock; claims serialise on an advisory
//!   lock per schema so the caps hold across replicas; `LISTEN/NOTIFY` wakes the other replicas.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

mod audit;
mod jobs;
mod journal;
mod locks;
mod pg_jobs;
mod pg_signal;
mod plans;
mod postgres;
mod rows;
mod schema;
mod sessions;
mod sql;
mod sqlite;
mod sqlite_accept;
mod sqlite_commit;
mod sqlite_writes;
mod state;
mod state_versions;

pub use audit::AuditStore;
pub use journal::{JournalEntry, JournalEvent, JournalStore};
pub use locks::LockStore;
pub use plans::PlanStore;
pub use postgres::PgStore;
pub use sessions::{SessionStore, StoredSession};
pub use sqlite::SqliteStore;
pub use state::{HeldGuest, ManagedResource, Secrets, StateScope, StateStore};
pub use state_versions::{StateVersion, VersionMeta, VersionReason};

/// What went wrong talking to the store, by what the caller can do about it.
#[derive(Debug, Clone, thiserror::Error)]
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
    /// The store URL or its options are wrong; fix `store.url` in the configuration.
    #[error("store configuration: {0}")]
    Config(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        use sqlx::Error as E;
        match err {
            E::Io(_) | E::Tls(_) | E::PoolTimedOut | E::PoolClosed | E::WorkerCrashed => {
                Self::Unavailable(err.to_string())
            }
            E::Protocol(_) => Self::Unavailable(err.to_string()),
            E::Configuration(_) => Self::Config(err.to_string()),
            E::RowNotFound => Self::NotFound(err.to_string()),
            E::Database(ref db) if db.is_unique_violation() => Self::Conflict(db.to_string()),
            E::Database(ref db) if is_unavailable_code(db.code().as_deref()) => {
                Self::Unavailable(err.to_string())
            }
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(err: sqlx::migrate::MigrateError) -> Self {
        Self::Internal(format!("running migrations: {err}"))
    }
}

/// SQLite `SQLITE_BUSY`/`SQLITE_LOCKED` and PostgreSQL connection/shutdown classes: try again.
fn is_unavailable_code(code: Option<&str>) -> bool {
    match code {
        Some("5" | "6" | "517" | "261") => true,
        Some(pg) => pg.starts_with("08") || pg.starts_with("57P"),
        None => false,
    }
}

use model::ForgeKind;

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

    /// The state named by its stored form, as written by [`JobState::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Queued,
            Self::Running,
            Self::Applying,
            Self::Succeeded,
            Self::Failed,
            Self::Interrupted,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|state| state.as_str() == s)
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
    /// How many times its worker died under it (the lease expired while `running`).
    pub lost_leases: u32,
    pub worker: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub lease_until: Option<OffsetDateTime>,
    pub error: Option<String>,
    /// Apply progress, once the job has reported it.
    pub progress: Option<JobProgress>,
    /// When the job first moved to `applying` (made its first change); `None`: never.
    #[serde(with = "time::serde::rfc3339::option")]
    pub applying_at: Option<OffsetDateTime>,
}

impl Job {
    /// Whether the reaper failed it because its worker kept dying (see [`Store::reap`]).
    pub fn worker_kept_dying(&self) -> bool {
        self.state == JobState::Failed
            && self
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with(rows::GAVE_UP_PREFIX))
    }
}

/// How far an apply is: `done` of `total` guests finished (changed or failed); `done <= total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JobProgress {
    done: u32,
    total: u32,
}

impl JobProgress {
    /// `done` is capped at `total`.
    pub fn new(done: u32, total: u32) -> Self {
        Self {
            done: done.min(total),
            total,
        }
    }

    pub fn done(self) -> u32 {
        self.done
    }

    pub fn total(self) -> u32 {
        self.total
    }

    /// Whole percent, 100 for an empty total.
    pub fn percent(self) -> u32 {
        if self.total == 0 {
            return 100;
        }
        let pct = u64::from(self.done) * 100 / u64::from(self.total);
        u32::try_from(pct).unwrap_or(100)
    }

    /// From the stored columns; `None` when no progress was reported or the row is inconsistent.
    pub(crate) fn from_db(done: Option<i64>, total: Option<i64>) -> Option<Self> {
        let done = u32::try_from(done?).ok()?;
        let total = u32::try_from(total?).ok()?;
        (done <= total).then_some(Self { done, total })
    }
}

/// What `atlantis cancel` cancels: the jobs of one PR of `kinds` still queued before the job
/// `before` (the cancel command's own job).
#[derive(Debug, Clone, Copy)]
pub struct CancelQueued<'a> {
    pub repo: &'a str,
    pub pr: u64,
    pub before: Uuid,
    pub kinds: &'a [&'a str],
    /// Stored as each cancelled job's error, e.g. "cancelled by @alice's `atlantis cancel`".
    pub reason: &'a str,
}

/// Limits applied when claiming.
#[derive(Debug, Clone, Copy)]
pub struct ClaimLimits {
    /// At most this many jobs `running`/`applying` in total.
    pub global: u32,
    /// At most this many per repository.
    pub per_repo: u32,
    /// Job kinds the per-repository cap does not hold back (`jobs::JobKind::UNLIMITED_PER_REPO`):
    /// short jobs that act on the others, such as `atlantis cancel`. The global cap still holds.
    pub per_repo_exempt: &'static [&'static str],
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
    /// Expired `running` jobs whose worker had died under them `max_attempts` times: a job
    /// that keeps killing its worker is failed rather than retried forever.
    pub failed: Vec<Uuid>,
}

/// What one retention pass deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub deliveries: u64,
    pub jobs: u64,
}

impl Pruned {
    /// Whether a table hit [`PRUNE_BATCH`], so another pass may find more.
    pub fn full(&self) -> bool {
        self.deliveries >= u64::from(PRUNE_BATCH) || self.jobs >= u64::from(PRUNE_BATCH)
    }
}

/// The most rows of each table one retention pass deletes, so it never holds the writer long.
pub const PRUNE_BATCH: u32 = 2_000;

/// How many times a job's worker may die under it before the reaper fails it instead of
/// requeueing it (`queue.max_attempts`).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// Wakes claim loops when a job may have become claimable (enqueued, requeued, or a slot freed).
/// Cheap to clone; a change made while nobody waits is remembered until the next `changed()`.
pub type JobSignal = tokio::sync::watch::Receiver<u64>;

/// Opens the store named by `url` (`sqlite://PATH`, `sqlite::memory:`, `postgres://...`),
/// creating a SQLite file if missing, and brings its schema up to date.
pub async fn connect(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    let scheme = url.split_once(':').map_or("", |(scheme, _)| scheme);
    match scheme {
        "sqlite" => Ok(Arc::new(SqliteStore::open(url).await?)),
        "postgres" | "postgresql" => Ok(Arc::new(PgStore::connect(url).await?)),
        _ => Err(StoreError::Config(format!(
            "unsupported store url scheme `{scheme}`: use `sqlite://PATH` or `postgres://USER@HOST/DB`"
        ))),
    }
}

/// The states a worker may move a job it holds from, to reach `target`. Claiming (to `running`)
/// and the reaper's moves are not transitions.
pub(crate) fn transition_sources(target: JobState) -> &'static [JobState] {
    match target {
        JobState::Queued => &[JobState::Running],
        JobState::Applying => &[JobState::Running],
        JobState::Interrupted => &[JobState::Applying],
        JobState::Succeeded | JobState::Failed | JobState::Cancelled => {
            &[JobState::Running, JobState::Applying]
        }
        JobState::Running => &[],
    }
}

/// The persistence seam, split by owner: the queue's own methods (this trait's supertrait
/// [`QueueStore`]) and one part per other owner, so a module depends on the part it uses. Implemented by
/// `SqliteStore` and `PgStore`.
pub trait Store: QueueStore + Debug {
    /// Locks (`locks`).
    fn locks(&self) -> &dyn LockStore;

    /// Saved plans and their PR comments (`locks`, `runner`).
    fn plans(&self) -> &dyn PlanStore;

    /// The audit log and the apply switch (`locks`, `web`).
    fn audit(&self) -> &dyn AuditStore;

    /// The apply journal (`runner`).
    fn journal(&self) -> &dyn JournalStore;

    /// Managed-resource state (`proxmox::state`). Stores that keep none (test fakes) answer
    /// every state call with `Unavailable`.
    fn state(&self) -> &dyn StateStore {
        &state::NoState
    }

    /// Dashboard sessions (`web`). Stores that keep none (test fakes) answer every session
    /// call with `Unavailable`.
    fn sessions(&self) -> &dyn SessionStore {
        &sessions::NoSessions
    }
}

/// The durable job queue (`queue`, `webhook`, `runner`): deliveries, jobs, their leases and logs.
#[async_trait::async_trait]
pub trait QueueStore: Send + Sync {
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

    /// Moves a job this worker holds to `state`: `applying` from `running`; `succeeded`,
    /// `failed` or `cancelled` from either; `interrupted` from `applying`; `queued` from `running`
    /// (gives it back). `false` when the job is not this worker's or not in a source state.
    async fn transition(
        &self,
        job: Uuid,
        worker: &str,
        state: JobState,
        error: Option<&str>,
    ) -> Result<bool, StoreError>;

    /// Records apply progress on a job this worker holds while it is `running` or `applying`;
    /// `false` when it is not (any more). The last write wins.
    async fn set_progress(
        &self,
        job: Uuid,
        worker: &str,
        progress: JobProgress,
    ) -> Result<bool, StoreError>;

    /// Expired leases: `running` back to `queued`, counting a lost lease, or to `failed` once
    /// it has lost `max_attempts` (its worker died that many times); `applying` to
    /// `interrupted`.
    async fn reap(&self, max_attempts: u32) -> Result<Reaped, StoreError>;

    /// A signal that changes when a job may have become claimable; claim loops wait on it or on
    /// a poll interval, whichever comes first. PostgreSQL feeds it from `LISTEN`, so jobs queued
    /// by another replica wake this one.
    fn job_signal(&self) -> JobSignal;

    async fn get_job(&self, job: Uuid) -> Result<Option<Job>, StoreError>;

    async fn list_jobs(&self, limit: u32) -> Result<Vec<Job>, StoreError>;

    /// At most `limit` jobs of `kind` about pull request `pr` of `repo`, newest first.
    async fn list_pr_jobs(
        &self,
        repo: &str,
        pr: u64,
        kind: &str,
        limit: u32,
    ) -> Result<Vec<Job>, StoreError>;

    /// At most `limit` jobs in `state`, newest first (e.g. `interrupted` ones to report).
    async fn list_jobs_in_state(&self, state: JobState, limit: u32)
    -> Result<Vec<Job>, StoreError>;

    /// Appends a durable log line and returns its sequence number.
    async fn append_log(&self, job: Uuid, line: &str) -> Result<i64, StoreError>;

    /// Retention: deletes up to [`PRUNE_BATCH`] finished jobs (`succeeded`, `failed`,
    /// `interrupted`, `cancelled`) that ended more than `older_than` ago, with their log lines
    /// and delivery records, and up to [`PRUNE_BATCH`] delivery records received before then.
    /// Queued and leased jobs are never deleted. Call again while [`Pruned::full`].
    async fn prune(&self, older_than: Duration) -> Result<Pruned, StoreError>;

    /// `atlantis cancel`: moves the matching queued jobs to `cancelled` and returns them, oldest
    /// first; jobs already claimed are left to finish.
    async fn cancel_queued(&self, cancel: &CancelQueued<'_>) -> Result<Vec<Job>, StoreError>;

    /// Log lines with `seq > after`, in order.
    async fn job_log(&self, job: Uuid, after: i64) -> Result<Vec<LogLine>, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn connect_refuses_an_unknown_scheme_without_echoing_the_url() {
        let err = connect("mysql://root:hunter2@db/atoll").await.err();
        let msg = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("unsupported store url scheme `mysql`"),
            "{msg}"
        );
        assert!(!msg.contains("hunter2"), "the password leaked: {msg}");
    }

    #[tokio::test]
    async fn connect_opens_an_in_memory_sqlite_store() {
        let store = connect("sqlite::memory:").await;
        assert!(store.is_ok_and(|_| true));
    }

    #[tokio::test]
    async fn job_state_check_constraint_refuses_unknown_states() {
        let store = SqliteStore::in_memory().await.map_err(|e| e.to_string());
        let store = store.unwrap_or_else(|e| panic!("{e}"));
        let err = store.insert_raw_state("exploded").await;
        assert!(err.is_err_and(|e| e.to_string().contains("CHECK")));
    }

    #[test]
    fn job_state_round_trips_through_its_stored_name() {
        for state in [
            JobState::Queued,
            JobState::Running,
            JobState::Applying,
            JobState::Succeeded,
            JobState::Failed,
            JobState::Interrupted,
            JobState::Cancelled,
        ] {
            assert_eq!(JobState::parse(state.as_str()), Some(state));
        }
        assert_eq!(JobState::parse("Queued"), None);
    }
}
