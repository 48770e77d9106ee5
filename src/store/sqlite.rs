//! The SQLite backend: one file in WAL mode, one writer connection (so writes queue in the
//! process instead of failing with `SQLITE_BUSY`) and a few reader connections.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::Row;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use time::OffsetDateTime;
use tokio::sync::watch;
use uuid::Uuid;

use super::rows::{self, INTERRUPTED_MESSAGE};
use super::{
    ClaimLimits, DeliveryOutcome, Job, JobSignal, JobState, LogLine, MAX_ATTEMPTS, NewDelivery,
    NewJob, Reaped, Store, StoreError, schema, transition_sources,
};

/// How long a writer waits for another process holding the database lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const READERS: u32 = 4;
const MIGRATE_TRIES: u32 = 4;
const JOB_COLUMNS: &str =
    "id, kind, repo, pr, state, payload, attempts, worker, created_at, lease_until, error";

/// A store in one SQLite file (or in memory, for tests).
#[derive(Debug)]
pub struct SqliteStore {
    pub(super) writer: SqlitePool,
    reader: SqlitePool,
    signal: watch::Sender<u64>,
}

impl SqliteStore {
    /// Opens `sqlite://PATH` (created if missing) or `sqlite::memory:` and runs migrations.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(format!("parsing sqlite store url: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(u32::from(in_memory))
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options.clone())
            .await
            .map_err(|e| unavailable("opening the sqlite database", e))?;
        migrate(&writer).await?;
        // An in-memory database lives in its one connection: readers share the writer.
        let reader = if in_memory {
            writer.clone()
        } else {
            SqlitePoolOptions::new()
                .max_connections(READERS)
                .connect_with(options)
                .await
                .map_err(|e| unavailable("opening sqlite reader connections", e))?
        };
        Ok(Self {
            writer,
            reader,
            signal: watch::Sender::new(0),
        })
    }

    /// A private in-memory store, for tests.
    pub async fn in_memory() -> Result<Self, StoreError> {
        Self::open("sqlite::memory:").await
    }

    fn wake(&self) {
        self.signal.send_modify(|n| *n = n.wrapping_add(1));
    }

    async fn insert_job(
        &self,
        conn: &mut sqlx::SqliteConnection,
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
}

/// Brings the schema up to date. sqlx takes no lock for SQLite, so a second process opening a
/// new file at the same moment can lose the race to create the tables; reading the applied
/// migrations again after the winner commits then finds nothing left to do.
async fn migrate(pool: &SqlitePool) -> Result<(), StoreError> {
    let migrator = schema::sqlite().await?;
    let mut tries = 1;
    loop {
        match migrator.run(pool).await {
            Ok(()) => return Ok(()),
            Err(err) if tries < MIGRATE_TRIES => {
                tracing::debug!(error = %err, tries, "store: sqlite migration raced; retrying");
                tokio::time::sleep(Duration::from_millis(50) * tries).await;
                tries += 1;
            }
            Err(err) => return Err(err.into()),
        }
    }
}

fn unavailable(doing: &str, err: sqlx::Error) -> StoreError {
    match StoreError::from(err) {
        StoreError::Internal(msg) | StoreError::Unavailable(msg) => {
            StoreError::Unavailable(format!("{doing}: {msg}"))
        }
        other => other,
    }
}

fn now_micros() -> i64 {
    i64::try_from(OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000).unwrap_or(i64::MAX)
}

fn time_from_micros(micros: i64) -> Result<OffsetDateTime, StoreError> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000)
        .map_err(|e| StoreError::Internal(format!("stored time {micros}: {e}")))
}

fn job_from_row(row: &SqliteRow) -> Result<Job, StoreError> {
    let payload: String = row.try_get("payload")?;
    let lease_until: Option<i64> = row.try_get("lease_until")?;
    Ok(Job {
        id: rows::uuid_from_db(row.try_get("id")?)?,
        kind: row.try_get("kind")?,
        repo: row.try_get("repo")?,
        pr: rows::pr_from_db(row.try_get("pr")?)?,
        state: rows::state_from_db(row.try_get("state")?)?,
        payload: serde_json::from_str(&payload)
            .map_err(|e| StoreError::Internal(format!("stored job payload: {e}")))?,
        attempts: rows::attempts_from_db(row.try_get("attempts")?)?,
        worker: row.try_get("worker")?,
        created_at: time_from_micros(row.try_get("created_at")?)?,
        lease_until: lease_until.map(time_from_micros).transpose()?,
        error: row.try_get("error")?,
    })
}

fn ids(rows: &[SqliteRow]) -> Result<Vec<Uuid>, StoreError> {
    rows.iter()
        .map(|row| rows::uuid_from_db(row.try_get("id")?))
        .collect()
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.reader).await?;
        Ok(())
    }

    async fn accept_delivery(
        &self,
        delivery: NewDelivery,
        job: Option<NewJob>,
    ) -> Result<DeliveryOutcome, StoreError> {
        let now = now_micros();
        let mut tx = self.writer.begin().await?;
        let job_id = match &job {
            Some(job) => match self.insert_job(&mut tx, job, now).await? {
                Some(id) => Some(id),
                None => {
                    tx.rollback().await?;
                    return Ok(DeliveryOutcome::Duplicate);
                }
            },
            None => None,
        };
        let recorded = sqlx::query(
            "INSERT INTO deliveries (forge, delivery_id, event, repo, job_id, received_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
        )
        .bind(delivery.forge.as_str())
        .bind(&delivery.delivery_id)
        .bind(&delivery.event)
        .bind(&delivery.repo)
        .bind(job_id.map(|id| id.to_string()))
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if recorded == 0 {
            tx.rollback().await?;
            return Ok(DeliveryOutcome::Duplicate);
        }
        tx.commit().await?;
        if job_id.is_some() {
            self.wake();
        }
        Ok(DeliveryOutcome::Accepted { job: job_id })
    }

    async fn enqueue(&self, job: NewJob) -> Result<DeliveryOutcome, StoreError> {
        let mut conn = self.writer.acquire().await?;
        match self.insert_job(&mut conn, &job, now_micros()).await? {
            Some(id) => {
                self.wake();
                Ok(DeliveryOutcome::Accepted { job: Some(id) })
            }
            None => Ok(DeliveryOutcome::Duplicate),
        }
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
        let now = now_micros();
        let sql = format!(
            "UPDATE jobs SET state = 'running', worker = ?1, lease_until = ?2,
                 attempts = attempts + 1, updated_at = ?3
             WHERE seq = (
                 SELECT j.seq FROM jobs j
                 WHERE j.state = 'queued' AND j.kind IN (SELECT value FROM json_each(?4))
                   AND (SELECT COUNT(*) FROM jobs a WHERE a.state IN ('running', 'applying')) < ?5
                   AND (SELECT COUNT(*) FROM jobs r
                        WHERE r.state IN ('running', 'applying') AND r.repo = j.repo) < ?6
                 ORDER BY j.seq LIMIT 1)
             RETURNING {JOB_COLUMNS}"
        );
        let row = sqlx::query(&sql)
            .bind(worker)
            .bind(now.saturating_add(rows::micros(lease)))
            .bind(now)
            .bind(rows::json_list(kinds.iter().copied()))
            .bind(i64::from(limits.global))
            .bind(i64::from(limits.per_repo))
            .fetch_optional(&self.writer)
            .await?;
        row.as_ref().map(job_from_row).transpose()
    }

    async fn heartbeat(
        &self,
        job: Uuid,
        worker: &str,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let now = now_micros();
        let updated = sqlx::query(
            "UPDATE jobs SET lease_until = ?1, updated_at = ?2
             WHERE id = ?3 AND worker = ?4 AND state IN ('running', 'applying')",
        )
        .bind(now.saturating_add(rows::micros(lease)))
        .bind(now)
        .bind(job.to_string())
        .bind(worker)
        .execute(&self.writer)
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
        let sources = transition_sources(state);
        if sources.is_empty() {
            return Ok(false);
        }
        let updated = sqlx::query(
            "UPDATE jobs SET state = ?1, error = ?2, updated_at = ?3,
                 worker = CASE WHEN ?4 THEN NULL ELSE worker END,
                 lease_until = CASE WHEN ?5 THEN lease_until ELSE NULL END,
                 finished_at = CASE WHEN ?6 THEN ?3 ELSE finished_at END
             WHERE id = ?7 AND worker = ?8 AND state IN (SELECT value FROM json_each(?9))",
        )
        .bind(state.as_str())
        .bind(error)
        .bind(now_micros())
        .bind(state == JobState::Queued)
        .bind(state == JobState::Applying)
        .bind(state.is_terminal())
        .bind(job.to_string())
        .bind(worker)
        .bind(rows::json_list(sources.iter().map(|s| s.as_str())))
        .execute(&self.writer)
        .await?
        .rows_affected();
        if updated == 1 && state != JobState::Applying {
            self.wake();
        }
        Ok(updated == 1)
    }

    async fn reap(&self) -> Result<Reaped, StoreError> {
        let now = now_micros();
        let mut tx = self.writer.begin().await?;
        let failed = sqlx::query(
            "UPDATE jobs SET state = 'failed', lease_until = NULL, error = ?1, finished_at = ?2,
                 updated_at = ?2
             WHERE state = 'running' AND lease_until <= ?2 AND attempts >= ?3 RETURNING id",
        )
        .bind(rows::gave_up_message())
        .bind(now)
        .bind(i64::from(MAX_ATTEMPTS))
        .fetch_all(&mut *tx)
        .await?;
        let requeued = sqlx::query(
            "UPDATE jobs SET state = 'queued', worker = NULL, lease_until = NULL, updated_at = ?1
             WHERE state = 'running' AND lease_until <= ?1 RETURNING id",
        )
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        let interrupted = sqlx::query(
            "UPDATE jobs SET state = 'interrupted', lease_until = NULL, error = ?1,
                 finished_at = ?2, updated_at = ?2
             WHERE state = 'applying' AND lease_until <= ?2 RETURNING id",
        )
        .bind(INTERRUPTED_MESSAGE)
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let reaped = Reaped {
            requeued: ids(&requeued)?,
            interrupted: ids(&interrupted)?,
            failed: ids(&failed)?,
        };
        if reaped != Reaped::default() {
            self.wake();
        }
        Ok(reaped)
    }

    fn job_signal(&self) -> JobSignal {
        self.signal.subscribe()
    }

    async fn get_job(&self, job: Uuid) -> Result<Option<Job>, StoreError> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1");
        let row = sqlx::query(&sql)
            .bind(job.to_string())
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(job_from_row).transpose()
    }

    async fn list_jobs(&self, limit: u32) -> Result<Vec<Job>, StoreError> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY seq DESC LIMIT ?1");
        let rows = sqlx::query(&sql)
            .bind(i64::from(limit))
            .fetch_all(&self.reader)
            .await?;
        rows.iter().map(job_from_row).collect()
    }

    async fn append_log(&self, job: Uuid, line: &str) -> Result<i64, StoreError> {
        let seq: Option<i64> = sqlx::query_scalar(
            "INSERT INTO job_logs (job_id, seq, line, at)
             SELECT ?1, COALESCE((SELECT MAX(seq) FROM job_logs WHERE job_id = ?1), 0) + 1, ?2, ?3
             WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?1)
             RETURNING seq",
        )
        .bind(job.to_string())
        .bind(line)
        .bind(now_micros())
        .fetch_optional(&self.writer)
        .await?;
        seq.ok_or_else(|| StoreError::NotFound(format!("job {job} (appending a log line)")))
    }

    async fn job_log(&self, job: Uuid, after: i64) -> Result<Vec<LogLine>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, line FROM job_logs WHERE job_id = ?1 AND seq > ?2 ORDER BY seq",
        )
        .bind(job.to_string())
        .bind(after)
        .fetch_all(&self.reader)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(LogLine {
                    seq: row.try_get("seq")?,
                    line: row.try_get("line")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
impl SqliteStore {
    /// Writes a job row with an arbitrary state, to show the schema refuses bad states.
    pub(crate) async fn insert_raw_state(&self, state: &str) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO jobs (id, kind, repo, state, payload, created_at, updated_at)
             VALUES (?1, 'plan', 'r', ?2, '{}', 0, 0)",
        )
        .bind(Uuid::new_v4().to_string())
        .bind(state)
        .execute(&self.writer)
        .await
        .map(|_| ())
    }
}
