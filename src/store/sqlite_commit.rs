//! Group commit for SQLite. With `synchronous=FULL` every commit waits for an fsync (about 2 ms
//! on a VM disk), so one transaction per webhook would cap intake near 500/s. Deliveries,
//! enqueues and log lines that arrive together are written in one transaction instead: one
//! fsync for the lot, and each caller is answered only after that commit.
//!
//! If a write in a batch fails, the batch is rolled back and its writes are retried one
//! transaction each, so one bad write fails alone; if the database itself is unavailable
//! (locked past the busy timeout, or gone), every write in the batch gets that error at once.

use sqlx::sqlite::SqlitePool;
use sqlx::{Connection, SqliteConnection};
use tokio::sync::{mpsc, oneshot, watch};
use uuid::Uuid;

use super::rows;
use super::{DeliveryOutcome, NewDelivery, NewJob, StoreError};

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
}

/// What a write produced.
#[derive(Debug)]
pub(super) enum Written {
    Outcome(DeliveryOutcome),
    Seq(i64),
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
        if results.iter().any(queued_a_job) {
            signal.send_modify(|n| *n = n.wrapping_add(1));
        }
        for (request, result) in batch.drain(..).zip(results) {
            // The caller may have gone away (request cancelled); the write stands.
            let _ = request.reply.send(result);
        }
    }
}

fn queued_a_job(result: &Result<Written, StoreError>) -> bool {
    matches!(
        result,
        Ok(Written::Outcome(DeliveryOutcome::Accepted { job: Some(_) }))
    )
}

async fn commit_together(
    pool: &SqlitePool,
    batch: &[Request],
) -> Result<Vec<Result<Written, StoreError>>, StoreError> {
    let now = rows::now_micros();
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin().await?;
    let mut results = Vec::with_capacity(batch.len());
    for request in batch {
        results.push(Ok(write_one(&mut tx, &request.write, now).await?));
    }
    tx.commit().await?;
    Ok(results)
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

/// One write inside the open transaction. A duplicate leaves nothing behind.
async fn write_one(
    conn: &mut SqliteConnection,
    write: &Write,
    now: i64,
) -> Result<Written, StoreError> {
    match write {
        Write::Accept { delivery, job } => {
            let job_id = match job {
                Some(job) => match insert_job(conn, job, now).await? {
                    Some(id) => Some(id),
                    None => return Ok(Written::Outcome(DeliveryOutcome::Duplicate)),
                },
                None => None,
            };
            if insert_delivery(conn, delivery, job_id, now).await? {
                Ok(Written::Outcome(DeliveryOutcome::Accepted { job: job_id }))
            } else {
                if let Some(id) = job_id {
                    delete_job(conn, id).await?;
                }
                Ok(Written::Outcome(DeliveryOutcome::Duplicate))
            }
        }
        Write::Enqueue(job) => Ok(Written::Outcome(match insert_job(conn, job, now).await? {
            Some(id) => DeliveryOutcome::Accepted { job: Some(id) },
            None => DeliveryOutcome::Duplicate,
        })),
        Write::Log { job, line } => append_log(conn, *job, line, now).await.map(Written::Seq),
    }
}

async fn insert_job(
    conn: &mut SqliteConnection,
    job: &NewJob,
    now: i64,
) -> Result<Option<Uuid>, StoreError> {
    let id = Uuid::new_v4();
    let inserted = sqlx::query(
        "INSERT INTO jobs (id, kind, repo, pr, state, payload, dedup_key, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, 'queued', ?5, ?6, ?7, ?7) ON CONFLICT DO NOTHING",
    )
    .bind(id.to_string())
    .bind(&job.kind)
    .bind(&job.repo)
    .bind(rows::pr_to_db(job.pr)?)
    .bind(job.payload.to_string())
    .bind(&job.dedup_key)
    .bind(now)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok((inserted == 1).then_some(id))
}

async fn insert_delivery(
    conn: &mut SqliteConnection,
    delivery: &NewDelivery,
    job: Option<Uuid>,
    now: i64,
) -> Result<bool, StoreError> {
    let inserted = sqlx::query(
        "INSERT INTO deliveries (forge, delivery_id, event, repo, job_id, received_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
    )
    .bind(delivery.forge.as_str())
    .bind(&delivery.delivery_id)
    .bind(&delivery.event)
    .bind(&delivery.repo)
    .bind(job.map(|id| id.to_string()))
    .bind(now)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(inserted == 1)
}

async fn delete_job(conn: &mut SqliteConnection, job: Uuid) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM jobs WHERE id = ?1")
        .bind(job.to_string())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn append_log(
    conn: &mut SqliteConnection,
    job: Uuid,
    line: &str,
    now: i64,
) -> Result<i64, StoreError> {
    let seq: Option<i64> = sqlx::query_scalar(
        "INSERT INTO job_logs (job_id, seq, line, at)
         SELECT ?1, COALESCE((SELECT MAX(seq) FROM job_logs WHERE job_id = ?1), 0) + 1, ?2, ?3
         WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?1)
         RETURNING seq",
    )
    .bind(job.to_string())
    .bind(line)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    seq.ok_or_else(|| StoreError::NotFound(format!("job {job} (appending a log line)")))
}
