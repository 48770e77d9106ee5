//! Group commit for SQLite: the one writer. With `synchronous=FULL` every commit waits for an
//! fsync (2 ms or more on a VM disk), so one transaction per webhook would cap intake near
//! 500/s. Every write (deliveries, enqueues, log lines, claims, heartbeats, transitions, reaper
//! passes) goes through this queue; writes that arrive together share one transaction and one
//! fsync, and each caller is answered only after that commit.
//!
//! If a write in a batch fails, the batch is rolled back and its writes are retried one
//! transaction each, so one bad write fails alone; if the database itself is unavailable
//! (locked past the busy timeout, or gone), every write in the batch gets that error at once.

use sqlx::Connection;
use sqlx::sqlite::SqlitePool;
use tokio::sync::{mpsc, oneshot, watch};
use uuid::Uuid;

use super::rows;
use super::sqlite_accept::accept_many;
use super::sqlite_writes::{Claim, write_one};
use super::{DeliveryOutcome, Job, JobState, NewDelivery, NewJob, Pruned, Reaped, StoreError};

/// Most writes committed together.
const MAX_BATCH: usize = 256;
/// Writes waiting for the writer before callers wait to queue.
const BACKLOG: usize = 4096;

/// One write that may share a transaction with others.
#[derive(Debug)]
pub(super) enum Write {
    Accept {
        delivery: NewDelivery,
        job: Option<NewJob>,
    },
    Enqueue(NewJob),
    Log {
        job: Uuid,
        line: String,
    },
    Claim(Claim),
    /// `lease` in microseconds.
    Heartbeat {
        job: Uuid,
        worker: String,
        lease: i64,
    },
    Transition {
        job: Uuid,
        worker: String,
        state: JobState,
        error: Option<String>,
    },
    Progress {
        job: Uuid,
        worker: String,
        progress: super::JobProgress,
    },
    /// Expired leases; a running job is failed once its worker died `max_attempts` times.
    Reap {
        max_attempts: u32,
    },
    /// Retention; `older_than` in microseconds.
    Prune {
        older_than: i64,
    },
    /// `proxmox::state` rows (`store::state`).
    State(super::state::StateWrite),
}

/// What a write produced.
#[derive(Debug)]
pub(super) enum Written {
    Outcome(DeliveryOutcome),
    Seq(i64),
    Claimed(Option<Job>),
    Moved(bool),
    Reaped(Reaped),
    Pruned(Pruned),
}

/// Whether a committed write may let a claim loop find work: a new job, a freed slot, or a
/// requeued one.
fn wakes(write: &Write, result: &Result<Written, StoreError>) -> bool {
    match (write, result) {
        (_, Ok(Written::Outcome(DeliveryOutcome::Accepted { job }))) => job.is_some(),
        (Write::Transition { state, .. }, Ok(Written::Moved(true))) => *state != JobState::Applying,
        (_, Ok(Written::Reaped(reaped))) => *reaped != Reaped::default(),
        _ => false,
    }
}

#[derive(Debug)]
struct Request {
    write: Write,
    reply: oneshot::Sender<Result<Written, StoreError>>,
}

/// The sending side; the writer task ends when the last `Committer` is dropped.
#[derive(Debug)]
pub(super) struct Committer {
    tx: mpsc::Sender<Request>,
}

impl Committer {
    pub(super) fn start(pool: SqlitePool, signal: watch::Sender<u64>) -> Self {
        let (tx, rx) = mpsc::channel(BACKLOG);
        tokio::spawn(run(pool, rx, signal));
        Self { tx }
    }

    /// Queues `write` and waits until it is committed (or refused).
    pub(super) async fn write(&self, write: Write) -> Result<Written, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Request { write, reply })
            .await
            .map_err(|_| StoreError::Unavailable("the sqlite writer has stopped".to_owned()))?;
        answer.await.map_err(|_| {
            StoreError::Unavailable("the sqlite writer stopped before committing".to_owned())
        })?
    }
}

async fn run(pool: SqlitePool, mut rx: mpsc::Receiver<Request>, signal: watch::Sender<u64>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let results = match commit_together(&pool, &batch).await {
            Ok(results) => results,
            // The database is locked or gone: every write would wait for it again, one by one.
            Err(err @ StoreError::Unavailable(_)) => {
                batch.iter().map(|_| Err(err.clone())).collect()
            }
            Err(err) => {
                tracing::debug!(error = %err, size = batch.len(), "store: batch failed; writing one by one");
                commit_alone(&pool, &batch).await
            }
        };
        if batch
            .iter()
            .zip(&results)
            .any(|(r, result)| wakes(&r.write, result))
        {
            signal.send_modify(|n| *n = n.wrapping_add(1));
        }
        for (request, result) in batch.drain(..).zip(results) {
            // The caller may have gone away (request cancelled); the write stands.
            let _ = request.reply.send(result);
        }
    }
}

async fn commit_together(
    pool: &SqlitePool,
    batch: &[Request],
) -> Result<Vec<Result<Written, StoreError>>, StoreError> {
    let now = rows::now_micros();
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin().await?;
    let mut results: Vec<Option<Result<Written, StoreError>>> =
        batch.iter().map(|_| None).collect();
    // Deliveries first, together (they only insert new rows, so committing them ahead of the
    // batch's other writes is an order the callers could have arrived in).
    let accepts: Vec<(usize, (&NewDelivery, Option<&NewJob>))> = batch
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match &r.write {
            Write::Accept { delivery, job } => Some((i, (delivery, job.as_ref()))),
            _ => None,
        })
        .collect();
    if accepts.len() > 1 {
        let group: Vec<_> = accepts.iter().map(|(_, a)| *a).collect();
        let mut savepoint = tx.begin().await?;
        match accept_many(&mut savepoint, &group, now).await? {
            Some(outcomes) => {
                savepoint.commit().await?;
                for ((i, _), outcome) in accepts.iter().zip(outcomes) {
                    results[*i] = Some(Ok(Written::Outcome(outcome)));
                }
            }
            // A redelivery among them: one by one below, exactly as if they came alone.
            None => savepoint.rollback().await?,
        }
    }
    for (request, result) in batch.iter().zip(results.iter_mut()) {
        if result.is_none() {
            *result = Some(Ok(write_one(&mut tx, &request.write, now).await?));
        }
    }
    tx.commit().await?;
    Ok(results.into_iter().flatten().collect())
}

async fn commit_alone(pool: &SqlitePool, batch: &[Request]) -> Vec<Result<Written, StoreError>> {
    let mut results = Vec::with_capacity(batch.len());
    for request in batch {
        results.push(commit_one(pool, &request.write).await);
    }
    results
}

async fn commit_one(pool: &SqlitePool, write: &Write) -> Result<Written, StoreError> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin().await?;
    let written = write_one(&mut tx, write, rows::now_micros()).await?;
    tx.commit().await?;
    Ok(written)
}
