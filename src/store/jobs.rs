//! Job rows read the same way on both backends: the columns, the decoding into a [`Job`], and
//! the queue's reads (one job, the newest jobs, a PR's jobs, jobs in a state, a job's log). The
//! queue's writes differ (SQLite's group commit, PostgreSQL's claim under an advisory lock) and
//! stay in the backend modules, which decode what they return through [`job_from_row`] too.

use uuid::Uuid;

use super::sql::{Db, Row, Sql};
use super::{Job, JobProgress, JobState, LogLine, StoreError, rows};

/// Every column of a job; counts are cast so both backends answer 64-bit integers.
pub(super) const JOB_COLUMNS: &str = "id, kind, repo, pr, state, payload, \
     CAST(attempts AS BIGINT) AS attempts, CAST(lost_leases AS BIGINT) AS lost_leases, worker, \
     created_at, lease_until, error, CAST(progress_done AS BIGINT) AS progress_done, \
     CAST(progress_total AS BIGINT) AS progress_total, applying_at";

pub(super) fn job_from_row(row: &Row) -> Result<Job, StoreError> {
    Ok(Job {
        id: row.id("id")?,
        kind: row.get("kind")?,
        repo: row.get("repo")?,
        pr: rows::pr_from_db(row.get("pr")?)?,
        state: rows::state_from_db(&row.get::<String>("state")?)?,
        payload: row.json("payload")?,
        attempts: rows::attempts_from_db(row.get("attempts")?)?,
        lost_leases: rows::attempts_from_db(row.get("lost_leases")?)?,
        worker: row.get("worker")?,
        created_at: row.time("created_at")?,
        lease_until: row.opt_time("lease_until")?,
        error: row.get("error")?,
        progress: JobProgress::from_db(row.get("progress_done")?, row.get("progress_total")?),
        applying_at: row.opt_time("applying_at")?,
    })
}

fn jobs(rows: &[Row]) -> Result<Vec<Job>, StoreError> {
    rows.iter().map(job_from_row).collect()
}

pub(super) async fn get(db: &Db, job: Uuid) -> Result<Option<Job>, StoreError> {
    let row = Sql::new(format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1"))
        .bind(job)
        .fetch_optional(db.read())
        .await?;
    row.as_ref().map(job_from_row).transpose()
}

pub(super) async fn newest(db: &Db, limit: u32) -> Result<Vec<Job>, StoreError> {
    let rows = Sql::new(format!(
        "SELECT {JOB_COLUMNS} FROM jobs ORDER BY seq DESC LIMIT $1"
    ))
    .bind(i64::from(limit))
    .fetch_all(db.read())
    .await?;
    jobs(&rows)
}

pub(super) async fn of_pr(
    db: &Db,
    repo: &str,
    pr: u64,
    kind: &str,
    limit: u32,
) -> Result<Vec<Job>, StoreError> {
    let rows = Sql::new(format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE repo = $1 AND pr = $2 AND kind = $3
         ORDER BY seq DESC LIMIT $4"
    ))
    .bind(repo)
    .bind(rows::pr_to_db(Some(pr))?)
    .bind(kind)
    .bind(i64::from(limit))
    .fetch_all(db.read())
    .await?;
    jobs(&rows)
}

pub(super) async fn in_state(db: &Db, state: JobState, limit: u32) -> Result<Vec<Job>, StoreError> {
    let rows = Sql::new(format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE state = $1 ORDER BY seq DESC LIMIT $2"
    ))
    .bind(state.as_str())
    .bind(i64::from(limit))
    .fetch_all(db.read())
    .await?;
    jobs(&rows)
}

pub(super) async fn log(db: &Db, job: Uuid, after: i64) -> Result<Vec<LogLine>, StoreError> {
    let rows =
        Sql::new("SELECT seq, line FROM job_logs WHERE job_id = $1 AND seq > $2 ORDER BY seq")
            .bind(job)
            .bind(after)
            .fetch_all(db.read())
            .await?;
    rows.iter()
        .map(|row| {
            Ok(LogLine {
                seq: row.get("seq")?,
                line: row.get("line")?,
            })
        })
        .collect()
}

/// `atlantis cancel`: moves the PR's jobs of `kinds` that are still `queued` and were queued
/// before the job `before` to `cancelled`, with `reason` as their error, and returns them. A job
/// a worker has claimed is not `queued` any more and is left to finish; one claimed while this
/// runs is either cancelled or claimed, never both (the claim and this update both require
/// `queued`).
pub(super) async fn cancel_queued(
    db: &Db,
    cancel: &super::CancelQueued<'_>,
) -> Result<Vec<Job>, StoreError> {
    if cancel.kinds.is_empty() {
        return Ok(Vec::new());
    }
    let kinds: Vec<String> = (0..cancel.kinds.len())
        .map(|i| format!("${}", i + 5))
        .collect();
    let mut sql = Sql::new(format!(
        "UPDATE jobs SET state = 'cancelled', error = $1, updated_at = {{now}},
             finished_at = {{now}}, worker = NULL, lease_until = NULL
         WHERE state = 'queued' AND repo = $2 AND pr = $3
           AND seq < (SELECT b.seq FROM jobs b WHERE b.id = $4)
           AND kind IN ({kinds})
         RETURNING {JOB_COLUMNS}",
        kinds = kinds.join(", ")
    ))
    .bind(cancel.reason)
    .bind(cancel.repo)
    .bind(rows::pr_to_db(Some(cancel.pr))?)
    .bind(cancel.before);
    for kind in cancel.kinds {
        sql = sql.bind(*kind);
    }
    let mut cancelled = jobs(&sql.fetch_all(db.write()).await?)?;
    cancelled.sort_by_key(|j| j.created_at);
    Ok(cancelled)
}
