//! The PostgreSQL backend, for several replicas on one database. Claims serialise on a
//! transaction-scoped advisory lock (so the caps hold across replicas) and pick rows with
//! `FOR UPDATE SKIP LOCKED`; new work is announced with `NOTIFY` and heard with `LISTEN`.
//! Lease times come from the database clock, so replicas agree on when a lease expires.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::PgConnection;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use uuid::Uuid;

use super::jobs::{self, JOB_COLUMNS, job_from_row};
use super::pg_jobs::reap_expired;
use super::pg_signal::PgSignal;
use super::rows;
use super::sql::Db;
use super::{
    ClaimLimits, DeliveryOutcome, Job, JobProgress, JobSignal, JobState, LogLine, NewDelivery,
    NewJob, PRUNE_BATCH, Pruned, QueueStore, Reaped, Store, StoreError, schema, transition_sources,
};

const CONNECTIONS: u32 = 10;
/// Serialises claims per schema: `pg_advisory_xact_lock(CLAIM_LOCK, hashtext(current_schema()))`.
const CLAIM_LOCK: i32 = 0x4154_4F4C; // "ATOL"
/// `clock_timestamp()` plus `$n` microseconds.
macro_rules! lease_from_now {
    ($n:literal) => {
        concat!(
            "clock_timestamp() + interval '1 microsecond' * $",
            $n,
            "::float8"
        )
    };
}

/// A store in a PostgreSQL database (the schema is the connection's `search_path`; set it with
/// `?options[search_path]=NAME` in the URL).
#[derive(Debug)]
pub struct PgStore {
    pub(super) pool: PgPool,
    /// The same pool, for the owners written once for both backends.
    pub(super) db: Db,
    signal: PgSignal,
}

impl PgStore {
    /// Connects to `postgres://...`, runs migrations and starts listening for new work.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(format!("parsing postgres store url: {e}")))?;
        let pool = PgPoolOptions::new()
            .max_connections(CONNECTIONS)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await
            .map_err(|e| StoreError::Unavailable(format!("connecting to postgres: {e}")))?;
        schema::postgres().await?.run(&pool).await?;
        let signal = PgSignal::start(&pool).await?;
        Ok(Self {
            db: Db::Pg(pool.clone()),
            pool,
            signal,
        })
    }
}

async fn insert_job(conn: &mut PgConnection, job: &NewJob) -> Result<Option<Uuid>, StoreError> {
    let id = Uuid::new_v4();
    let inserted = sqlx::query(
        "INSERT INTO jobs (id, kind, repo, pr, state, payload, dedup_key)
         VALUES ($1, $2, $3, $4, 'queued', $5, $6) ON CONFLICT DO NOTHING",
    )
    .bind(id)
    .bind(&job.kind)
    .bind(&job.repo)
    .bind(rows::pr_to_db(job.pr)?)
    .bind(&job.payload)
    .bind(&job.dedup_key)
    .execute(conn)
    .await?
    .rows_affected();
    Ok((inserted == 1).then_some(id))
}

#[expect(
    clippy::cast_precision_loss,
    reason = "leases far below 2^53 microseconds (285 years) are exact as f64"
)]
fn lease_micros(lease: Duration) -> f64 {
    rows::micros(lease) as f64
}

#[async_trait]
impl Store for PgStore {
    fn locks(&self) -> &dyn super::LockStore {
        &self.db
    }

    fn plans(&self) -> &dyn super::PlanStore {
        &self.db
    }

    fn audit(&self) -> &dyn super::AuditStore {
        &self.db
    }

    fn journal(&self) -> &dyn super::JournalStore {
        &self.db
    }

    fn state(&self) -> &dyn super::StateStore {
        self
    }

    fn sessions(&self) -> &dyn super::SessionStore {
        &self.db
    }
}

#[async_trait]
impl QueueStore for PgStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn accept_delivery(
        &self,
        delivery: NewDelivery,
        job: Option<NewJob>,
    ) -> Result<DeliveryOutcome, StoreError> {
        let mut tx = self.pool.begin().await?;
        let job_id = match &job {
            Some(job) => match insert_job(&mut tx, job).await? {
                Some(id) => Some(id),
                None => {
                    tx.rollback().await?;
                    return Ok(DeliveryOutcome::Duplicate);
                }
            },
            None => None,
        };
        let recorded = sqlx::query(
            "INSERT INTO deliveries (forge, delivery_id, event, repo, job_id)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        )
        .bind(delivery.forge.as_str())
        .bind(&delivery.delivery_id)
        .bind(&delivery.event)
        .bind(&delivery.repo)
        .bind(job_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if recorded == 0 {
            tx.rollback().await?;
            return Ok(DeliveryOutcome::Duplicate);
        }
        tx.commit().await?;
        if job_id.is_some() {
            self.signal.announce();
        }
        Ok(DeliveryOutcome::Accepted { job: job_id })
    }

    async fn enqueue(&self, job: NewJob) -> Result<DeliveryOutcome, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let Some(id) = insert_job(&mut conn, &job).await? else {
            return Ok(DeliveryOutcome::Duplicate);
        };
        self.signal.announce();
        Ok(DeliveryOutcome::Accepted { job: Some(id) })
    }

    async fn claim(
        &self,
        worker: &str,
        kinds: &[&str],
        lease: Duration,
        limits: ClaimLimits,
    ) -> Result<Option<Job>, StoreError> {
        if kinds.is_empty() || limits.global == 0 || limits.per_repo == 0 {
            return Ok(None);
        }
        let sql = format!(
            "UPDATE jobs SET state = 'running', worker = $1, lease_until = {lease},
                 attempts = attempts + 1, updated_at = clock_timestamp()
             WHERE id = (
                 SELECT j.id FROM jobs j
                 WHERE j.state = 'queued' AND j.kind = ANY($3)
                   AND (SELECT count(*) FROM jobs a WHERE a.state IN ('running', 'applying')) < $4
                   AND (j.kind = ANY($6)
                        OR (SELECT count(*) FROM jobs r
                            WHERE r.state IN ('running', 'applying') AND r.repo = j.repo) < $5)
                 ORDER BY j.seq LIMIT 1
                 FOR UPDATE SKIP LOCKED)
             RETURNING {JOB_COLUMNS}",
            lease = lease_from_now!(2),
        );
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))")
            .bind(CLAIM_LOCK)
            .execute(&mut *tx)
            .await?;
        let row = sqlx::query(&sql)
            .bind(worker)
            .bind(lease_micros(lease))
            .bind(kinds)
            .bind(i64::from(limits.global))
            .bind(i64::from(limits.per_repo))
            .bind(limits.per_repo_exempt)
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
        row.map(|row| job_from_row(&super::sql::Row::Pg(row)))
            .transpose()
    }

    async fn heartbeat(
        &self,
        job: Uuid,
        worker: &str,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE jobs SET lease_until = {}, updated_at = clock_timestamp()
             WHERE id = $2 AND worker = $3 AND state IN ('running', 'applying')",
            lease_from_now!(1)
        );
        let updated = sqlx::query(&sql)
            .bind(lease_micros(lease))
            .bind(job)
            .bind(worker)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(updated == 1)
    }

    async fn transition(
        &self,
        job: Uuid,
        worker: &str,
        state: JobState,
        error: Option<&str>,
    ) -> Result<bool, StoreError> {
        let sources: Vec<&str> = transition_sources(state)
            .iter()
            .map(|s| s.as_str())
            .collect();
        if sources.is_empty() {
            return Ok(false);
        }
        let frees_a_slot = state != JobState::Applying;
        let updated = sqlx::query(
            "UPDATE jobs SET state = $1, error = $2, updated_at = clock_timestamp(),
                 worker = CASE WHEN $3 THEN NULL ELSE worker END,
                 lease_until = CASE WHEN $4 THEN lease_until ELSE NULL END,
                 applying_at = CASE WHEN $4 THEN COALESCE(applying_at, clock_timestamp())
                                    ELSE applying_at END,
                 finished_at = CASE WHEN $5 THEN clock_timestamp() ELSE finished_at END
             WHERE id = $6 AND worker = $7 AND state = ANY($8)",
        )
        .bind(state.as_str())
        .bind(error)
        .bind(state == JobState::Queued)
        .bind(state == JobState::Applying)
        .bind(state.is_terminal())
        .bind(job)
        .bind(worker)
        .bind(&sources)
        .execute(&self.pool)
        .await?
        .rows_affected();
        if updated == 1 && frees_a_slot {
            self.signal.announce();
        }
        Ok(updated == 1)
    }

    async fn prune(&self, older_than: Duration) -> Result<Pruned, StoreError> {
        let secs = older_than.as_secs_f64();
        let batch = i64::from(PRUNE_BATCH);
        let mut tx = self.pool.begin().await?;
        let old: Vec<Uuid> = sqlx::query_scalar(
            "SELECT id FROM jobs
             WHERE state IN ('succeeded', 'failed', 'interrupted', 'cancelled')
               AND finished_at < clock_timestamp() - make_interval(secs => $1)
             ORDER BY seq LIMIT $2",
        )
        .bind(secs)
        .bind(batch)
        .fetch_all(&mut *tx)
        .await?;
        let mut deliveries = sqlx::query("DELETE FROM deliveries WHERE job_id = ANY($1)")
            .bind(&old)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        // Their log lines go with them (ON DELETE CASCADE).
        let jobs = sqlx::query("DELETE FROM jobs WHERE id = ANY($1)")
            .bind(&old)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        deliveries += sqlx::query(
            "DELETE FROM deliveries WHERE ctid IN (SELECT ctid FROM deliveries
                 WHERE received_at < clock_timestamp() - make_interval(secs => $1) LIMIT $2)",
        )
        .bind(secs)
        .bind(batch)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(Pruned { deliveries, jobs })
    }

    async fn set_progress(
        &self,
        job: Uuid,
        worker: &str,
        progress: JobProgress,
    ) -> Result<bool, StoreError> {
        let updated = sqlx::query(
            "UPDATE jobs SET progress_done = $1, progress_total = $2, updated_at = clock_timestamp()
             WHERE id = $3 AND worker = $4 AND state IN ('running', 'applying')",
        )
        .bind(i32::try_from(progress.done()).unwrap_or(i32::MAX))
        .bind(i32::try_from(progress.total()).unwrap_or(i32::MAX))
        .bind(job)
        .bind(worker)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(updated == 1)
    }

    async fn reap(&self, max_attempts: u32) -> Result<Reaped, StoreError> {
        let mut tx = self.pool.begin().await?;
        let reaped = reap_expired(&mut tx, max_attempts).await?;
        tx.commit().await?;
        if reaped != Reaped::default() {
            self.signal.announce();
        }
        Ok(reaped)
    }

    fn job_signal(&self) -> JobSignal {
        self.signal.subscribe()
    }

    async fn get_job(&self, job: Uuid) -> Result<Option<Job>, StoreError> {
        jobs::get(&self.db, job).await
    }

    async fn list_jobs(&self, limit: u32) -> Result<Vec<Job>, StoreError> {
        jobs::newest(&self.db, limit).await
    }

    async fn list_pr_jobs(
        &self,
        repo: &str,
        pr: u64,
        kind: &str,
        limit: u32,
    ) -> Result<Vec<Job>, StoreError> {
        jobs::of_pr(&self.db, repo, pr, kind, limit).await
    }

    async fn list_jobs_in_state(
        &self,
        state: JobState,
        limit: u32,
    ) -> Result<Vec<Job>, StoreError> {
        jobs::in_state(&self.db, state, limit).await
    }

    async fn append_log(&self, job: Uuid, line: &str) -> Result<i64, StoreError> {
        let seq: Option<i64> = sqlx::query_scalar(
            "WITH next AS (UPDATE jobs SET log_seq = log_seq + 1 WHERE id = $1 RETURNING log_seq)
             INSERT INTO job_logs (job_id, seq, line) SELECT $1, log_seq, $2 FROM next
             RETURNING seq",
        )
        .bind(job)
        .bind(line)
        .fetch_optional(&self.pool)
        .await?;
        seq.ok_or_else(|| StoreError::NotFound(format!("job {job} (appending a log line)")))
    }

    async fn cancel_queued(
        &self,
        cancel: &super::CancelQueued<'_>,
    ) -> Result<Vec<Job>, StoreError> {
        jobs::cancel_queued(&self.db, cancel).await
    }

    async fn job_log(&self, job: Uuid, after: i64) -> Result<Vec<LogLine>, StoreError> {
        jobs::log(&self.db, job, after).await
    }
}
