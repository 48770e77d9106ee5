//! Every SQLite write, as one step inside the group-commit transaction. A step that finds a
//! duplicate leaves nothing behind.

use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};
use uuid::Uuid;

use super::jobs::{JOB_COLUMNS, job_from_row};
use super::rows::{self, INTERRUPTED_MESSAGE};
use super::sqlite_commit::{Write, Written};
use super::{
    DeliveryOutcome, Job, JobProgress, JobState, NewDelivery, NewJob, PRUNE_BATCH, Pruned, Reaped,
    StoreError,
};

/// One write inside the open transaction; `now` is the batch's time in microseconds.
pub(super) async fn write_one(
    conn: &mut SqliteConnection,
    write: &Write,
    now: i64,
) -> Result<Written, StoreError> {
    match write {
        Write::Accept { delivery, job } => accept(conn, delivery, job.as_ref(), now)
            .await
            .map(Written::Outcome),
        Write::Enqueue(job) => Ok(Written::Outcome(match insert_job(conn, job, now).await? {
            Some(id) => DeliveryOutcome::Accepted { job: Some(id) },
            None => DeliveryOutcome::Duplicate,
        })),
        Write::Log { job, line } => append_log(conn, *job, line, now).await.map(Written::Seq),
        Write::Claim(claim) => claim_one(conn, claim, now).await.map(Written::Claimed),
        Write::Heartbeat { job, worker, lease } => {
            heartbeat(conn, *job, worker, now.saturating_add(*lease), now)
                .await
                .map(Written::Moved)
        }
        Write::Transition {
            job,
            worker,
            state,
            error,
        } => transition(conn, *job, worker, *state, error.as_deref(), now)
            .await
            .map(Written::Moved),
        Write::Progress {
            job,
            worker,
            progress,
        } => set_progress(conn, *job, worker, *progress, now)
            .await
            .map(Written::Moved),
        Write::Reap { max_attempts } => reap(conn, *max_attempts, now).await.map(Written::Reaped),
        Write::Prune { older_than } => prune(conn, now.saturating_sub(*older_than))
            .await
            .map(Written::Pruned),
        Write::State(write) => write
            .run(super::sql::On::SqliteConn(conn, now))
            .await
            .map(Written::Moved),
    }
}

async fn accept(
    conn: &mut SqliteConnection,
    delivery: &NewDelivery,
    job: Option<&NewJob>,
    now: i64,
) -> Result<DeliveryOutcome, StoreError> {
    let job_id = match job {
        Some(job) => match insert_job(conn, job, now).await? {
            Some(id) => Some(id),
            None => return Ok(DeliveryOutcome::Duplicate),
        },
        None => None,
    };
    if insert_delivery(conn, delivery, job_id, now).await? {
        return Ok(DeliveryOutcome::Accepted { job: job_id });
    }
    if let Some(id) = job_id {
        sqlx::query("DELETE FROM jobs WHERE id = ?1")
            .bind(id.to_string())
            .execute(&mut *conn)
            .await?;
    }
    Ok(DeliveryOutcome::Duplicate)
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

/// A claim request: kinds as a JSON array, lease in microseconds.
#[derive(Debug)]
pub(super) struct Claim {
    pub(super) worker: String,
    pub(super) kinds: String,
    pub(super) lease: i64,
    pub(super) global: i64,
    pub(super) per_repo: i64,
    /// Kinds the per-repository cap does not hold back, as a JSON array.
    pub(super) per_repo_exempt: String,
}

async fn claim_one(
    conn: &mut SqliteConnection,
    claim: &Claim,
    now: i64,
) -> Result<Option<Job>, StoreError> {
    let sql = format!(
        "UPDATE jobs SET state = 'running', worker = ?1, lease_until = ?2,
             attempts = attempts + 1, updated_at = ?3
         WHERE seq = (
             SELECT j.seq FROM jobs j
             WHERE j.state = 'queued' AND j.kind IN (SELECT value FROM json_each(?4))
               AND (SELECT COUNT(*) FROM jobs a WHERE a.state IN ('running', 'applying')) < ?5
               AND (j.kind IN (SELECT value FROM json_each(?7))
                    OR (SELECT COUNT(*) FROM jobs r
                        WHERE r.state IN ('running', 'applying') AND r.repo = j.repo) < ?6)
             ORDER BY j.seq LIMIT 1)
         RETURNING {JOB_COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(&claim.worker)
        .bind(now.saturating_add(claim.lease))
        .bind(now)
        .bind(&claim.kinds)
        .bind(claim.global)
        .bind(claim.per_repo)
        .bind(&claim.per_repo_exempt)
        .fetch_optional(&mut *conn)
        .await?;
    row.map(|row| job_from_row(&super::sql::Row::Sqlite(row)))
        .transpose()
}

async fn heartbeat(
    conn: &mut SqliteConnection,
    job: Uuid,
    worker: &str,
    lease_until: i64,
    now: i64,
) -> Result<bool, StoreError> {
    let updated = sqlx::query(
        "UPDATE jobs SET lease_until = ?1, updated_at = ?2
         WHERE id = ?3 AND worker = ?4 AND state IN ('running', 'applying')",
    )
    .bind(lease_until)
    .bind(now)
    .bind(job.to_string())
    .bind(worker)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(updated == 1)
}

async fn transition(
    conn: &mut SqliteConnection,
    job: Uuid,
    worker: &str,
    state: JobState,
    error: Option<&str>,
    now: i64,
) -> Result<bool, StoreError> {
    let sources = super::transition_sources(state);
    if sources.is_empty() {
        return Ok(false);
    }
    let updated = sqlx::query(
        "UPDATE jobs SET state = ?1, error = ?2, updated_at = ?3,
             worker = CASE WHEN ?4 THEN NULL ELSE worker END,
             lease_until = CASE WHEN ?5 THEN lease_until ELSE NULL END,
             applying_at = CASE WHEN ?5 THEN COALESCE(applying_at, ?3) ELSE applying_at END,
             finished_at = CASE WHEN ?6 THEN ?3 ELSE finished_at END
         WHERE id = ?7 AND worker = ?8 AND state IN (SELECT value FROM json_each(?9))",
    )
    .bind(state.as_str())
    .bind(error)
    .bind(now)
    .bind(state == JobState::Queued)
    .bind(state == JobState::Applying)
    .bind(state.is_terminal())
    .bind(job.to_string())
    .bind(worker)
    .bind(rows::json_list(sources.iter().map(|s| s.as_str())))
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(updated == 1)
}

async fn set_progress(
    conn: &mut SqliteConnection,
    job: Uuid,
    worker: &str,
    progress: JobProgress,
    now: i64,
) -> Result<bool, StoreError> {
    let updated = sqlx::query(
        "UPDATE jobs SET progress_done = ?1, progress_total = ?2, updated_at = ?3
         WHERE id = ?4 AND worker = ?5 AND state IN ('running', 'applying')",
    )
    .bind(i64::from(progress.done()))
    .bind(i64::from(progress.total()))
    .bind(now)
    .bind(job.to_string())
    .bind(worker)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(updated == 1)
}

async fn reap(
    conn: &mut SqliteConnection,
    max_attempts: u32,
    now: i64,
) -> Result<Reaped, StoreError> {
    let failed = sqlx::query(
        "UPDATE jobs SET state = 'failed', lease_until = NULL, lost_leases = lost_leases + 1,
             error = ?1, finished_at = ?2, updated_at = ?2
         WHERE state = 'running' AND lease_until <= ?2 AND lost_leases + 1 >= ?3 RETURNING id",
    )
    .bind(rows::GAVE_UP_MESSAGE)
    .bind(now)
    .bind(i64::from(max_attempts))
    .fetch_all(&mut *conn)
    .await?;
    let requeued = sqlx::query(
        "UPDATE jobs SET state = 'queued', worker = NULL, lease_until = NULL,
             lost_leases = lost_leases + 1, updated_at = ?1
         WHERE state = 'running' AND lease_until <= ?1 AND lost_leases + 1 < ?2 RETURNING id",
    )
    .bind(now)
    .bind(i64::from(max_attempts))
    .fetch_all(&mut *conn)
    .await?;
    let interrupted = sqlx::query(
        "UPDATE jobs SET state = 'interrupted', lease_until = NULL, error = ?1,
             finished_at = ?2, updated_at = ?2
         WHERE state = 'applying' AND lease_until <= ?2 RETURNING id",
    )
    .bind(INTERRUPTED_MESSAGE)
    .bind(now)
    .fetch_all(&mut *conn)
    .await?;
    Ok(Reaped {
        requeued: ids(&requeued)?,
        interrupted: ids(&interrupted)?,
        failed: ids(&failed)?,
    })
}

/// One retention pass (see `Store::prune`); `cutoff` in microseconds.
async fn prune(conn: &mut SqliteConnection, cutoff: i64) -> Result<Pruned, StoreError> {
    let old: Vec<String> = sqlx::query_scalar(
        "SELECT id FROM jobs
         WHERE state IN ('succeeded', 'failed', 'interrupted', 'cancelled') AND finished_at < ?1
         ORDER BY seq LIMIT ?2",
    )
    .bind(cutoff)
    .bind(i64::from(PRUNE_BATCH))
    .fetch_all(&mut *conn)
    .await?;
    let mut deliveries = 0;
    let mut jobs = 0;
    if !old.is_empty() {
        let list = rows::json_list(old.iter().map(String::as_str));
        deliveries +=
            sqlx::query("DELETE FROM deliveries WHERE job_id IN (SELECT value FROM json_each(?1))")
                .bind(&list)
                .execute(&mut *conn)
                .await?
                .rows_affected();
        // Their log lines go with them (ON DELETE CASCADE).
        jobs = sqlx::query("DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?1))")
            .bind(&list)
            .execute(&mut *conn)
            .await?
            .rows_affected();
    }
    deliveries += sqlx::query(
        "DELETE FROM deliveries WHERE rowid IN
             (SELECT rowid FROM deliveries WHERE received_at < ?1 LIMIT ?2)",
    )
    .bind(cutoff)
    .bind(i64::from(PRUNE_BATCH))
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(Pruned { deliveries, jobs })
}

fn ids(rows: &[SqliteRow]) -> Result<Vec<Uuid>, StoreError> {
    rows.iter()
        .map(|row| rows::uuid_from_db(row.try_get("id")?))
        .collect()
}
