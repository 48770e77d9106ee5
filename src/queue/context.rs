//! What a job handler gets: its job, a durable log, the `applying` step, apply progress, and a
//! stop signal.

use std::sync::Arc;

use tokio::sync::watch;
use uuid::Uuid;

use crate::store::{Job, JobProgress, JobState, JournalEntry, Store, StoreError};

/// What can go wrong in the queue's own steps of a job.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The job's lease expired and it was reaped or taken over: stop working on it.
    #[error("job {job} is no longer held by this worker (its lease expired); stop working on it")]
    LeaseLost { job: Uuid },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a handler is asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The server is shutting down; finish quickly if possible, within the grace period.
    Shutdown,
    /// This worker no longer holds the job; any further change would race another worker.
    LeaseLost,
}

/// A running job, as its handler sees it.
#[derive(Debug)]
pub struct JobContext {
    job: Job,
    store: Arc<dyn Store>,
    worker: Arc<str>,
    shutdown: watch::Receiver<bool>,
    lease_lost: watch::Receiver<bool>,
}

impl JobContext {
    pub(crate) fn new(
        job: Job,
        store: Arc<dyn Store>,
        worker: Arc<str>,
        shutdown: watch::Receiver<bool>,
        lease_lost: watch::Receiver<bool>,
    ) -> Self {
        Self {
            job,
            store,
            worker,
            shutdown,
            lease_lost,
        }
    }

    /// The job as claimed (`attempts` counts this claim).
    pub fn job(&self) -> &Job {
        &self.job
    }

    /// Stores one log line durably before returning; the dashboard streams it from the store.
    pub async fn log(&self, line: &str) -> Result<i64, QueueError> {
        Ok(self.store.append_log(self.job.id, line).await?)
    }

    /// Stores one apply step in the job's journal durably before returning.
    pub async fn journal(&self, entry: &JournalEntry) -> Result<(), QueueError> {
        Ok(self
            .store
            .journal()
            .journal_append(self.job.id, entry)
            .await?)
    }

    /// Marks the job `applying` before the first change is made: from here on an expired lease
    /// makes it `interrupted`, never retried.
    pub async fn begin_apply(&self) -> Result<(), QueueError> {
        let moved = self
            .store
            .transition(self.job.id, &self.worker, JobState::Applying, None)
            .await?;
        if moved {
            Ok(())
        } else {
            Err(QueueError::LeaseLost { job: self.job.id })
        }
    }

    /// Records apply progress (`done` of `total` guests) for the dashboard; a job that lost its
    /// lease gets [`QueueError::LeaseLost`].
    pub async fn progress(&self, done: u32, total: u32) -> Result<(), QueueError> {
        let progress = JobProgress::new(done, total);
        if self
            .store
            .set_progress(self.job.id, &self.worker, progress)
            .await?
        {
            Ok(())
        } else {
            Err(QueueError::LeaseLost { job: self.job.id })
        }
    }

    /// `Some` once the handler should stop; a lost lease wins over a shutdown.
    pub fn stop_reason(&self) -> Option<StopReason> {
        if *self.lease_lost.borrow() {
            Some(StopReason::LeaseLost)
        } else if *self.shutdown.borrow() {
            Some(StopReason::Shutdown)
        } else {
            None
        }
    }

    /// Resolves when the handler should stop (shutdown or lost lease), with the reason.
    pub async fn stopped(&self) -> StopReason {
        let mut shutdown = self.shutdown.clone();
        let mut lost = self.lease_lost.clone();
        // A dropped shutdown sender means the pool itself is gone: that is a shutdown too. The
        // heartbeat's sender lives as long as the job runs.
        tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => {}
            Ok(_) = lost.wait_for(|lost| *lost) => {}
        }
        self.stop_reason().unwrap_or(StopReason::Shutdown)
    }
}
