//! The SQLite backend: one file in WAL mode, one writer connection fed by the group-commit
//! queue (`sqlite_commit.rs`, so writes queue in the process instead of failing with
//! `SQLITE_BUSY`), and a few reader connections.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use tokio::sync::watch;
use uuid::Uuid;

use super::jobs;
use super::rows;
use super::sql::Db;
use super::sqlite_commit::{Committer, Write, Written};
use super::sqlite_writes::Claim;
use super::{
    ClaimLimits, DeliveryOutcome, Job, JobProgress, JobSignal, JobState, LogLine, NewDelivery,
    NewJob, Pruned, QueueStore, Reaped, Store, StoreError, schema,
};

/// How long a writer waits for another process holding the database lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const READERS: u32 = 4;
const MIGRATE_TRIES: u32 = 4;

/// A store in one SQLite file (or in memory, for tests).
#[derive(Debug)]
pub struct SqliteStore {
    pub(super) reader: SqlitePool,
    /// The reader pool and the writer connection the committer feeds, for the owners written
    /// once for both backends: lock, plan and audit transactions read before they decide what
    /// to write, so they take the one writer connection in turn with the committer's batches
    /// instead of joining them.
    pub(super) db: Db,
    signal: watch::Sender<u64>,
    pub(super) committer: Committer,
}

impl SqliteStore {
    /// Opens `sqlite://PATH` (created if missing) or `sqlite::memory:` and runs migrations.
    /// `?synchronous=normal` trades durability across power loss (not across a crash of the
    /// process) for commits without an fsync; the default is `full`.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let (url, synchronous) = split_synchronous(url)?;
        let url = url.as_str();
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(format!("parsing sqlite store url: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(synchronous)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        let writer = open_writer(&options, in_memory).await?;
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
        let signal = watch::Sender::new(0);
        Ok(Self {
            committer: Committer::start(writer.clone(), signal.clone()),
            db: Db::Sqlite {
                reader: reader.clone(),
                writer,
            },
            reader,
            signal,
        })
    }

    /// A private in-memory store, for tests.
    pub async fn in_memory() -> Result<Self, StoreError> {
        Self::open("sqlite::memory:").await
    }
}

/// Takes our own `synchronous=full|normal` parameter out of the URL (sqlx refuses unknown ones).
fn split_synchronous(url: &str) -> Result<(String, SqliteSynchronous), StoreError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), SqliteSynchronous::Full));
    };
    let mut synchronous = SqliteSynchronous::Full;
    let mut rest = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("synchronous", value)) => {
                synchronous = match value.to_ascii_lowercase().as_str() {
                    "full" => SqliteSynchronous::Full,
                    "normal" => SqliteSynchronous::Normal,
                    _ => {
                        return Err(StoreError::Config(format!(
                            "sqlite store url: `synchronous` must be `full` or `normal`, not `{value}`"
                        )));
                    }
                };
            }
            _ => rest.push(pair),
        }
    }
    let url = if rest.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok((url, synchronous))
}

/// The one writer connection. Opening it switches a new file to WAL, which another process
/// creating the same file at that moment can answer with `SQLITE_BUSY` at once (the busy
/// timeout does not cover it), so a busy open is tried again like a raced migration.
async fn open_writer(
    options: &SqliteConnectOptions,
    in_memory: bool,
) -> Result<SqlitePool, StoreError> {
    let mut tries = 1;
    loop {
        let opened = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(u32::from(in_memory))
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options.clone())
            .await
            .map_err(|e| unavailable("opening the sqlite database", e));
        match opened {
            Err(StoreError::Unavailable(msg)) if tries < MIGRATE_TRIES => {
                tracing::debug!(error = %msg, tries, "store: sqlite file busy while opening; retrying");
                tokio::time::sleep(Duration::from_millis(50) * tries).await;
                tries += 1;
            }
            other => return other,
        }
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

fn outcome(written: Written) -> Result<DeliveryOutcome, StoreError> {
    match written {
        Written::Outcome(outcome) => Ok(outcome),
        other => Err(unexpected(&other)),
    }
}

fn moved(written: Written) -> Result<bool, StoreError> {
    match written {
        Written::Moved(moved) => Ok(moved),
        other => Err(unexpected(&other)),
    }
}

fn unexpected(written: &dyn std::fmt::Debug) -> StoreError {
    StoreError::Internal(format!(
        "sqlite writer answered {written:?} to the wrong request"
    ))
}

#[async_trait]
impl Store for SqliteStore {
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
impl QueueStore for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.reader).await?;
        Ok(())
    }

    async fn accept_delivery(
        &self,
        delivery: NewDelivery,
        job: Option<NewJob>,
    ) -> Result<DeliveryOutcome, StoreError> {
        outcome(
            self.committer
                .write(Write::Accept { delivery, job })
                .await?,
        )
    }

    async fn enqueue(&self, job: NewJob) -> Result<DeliveryOutcome, StoreError> {
        outcome(self.committer.write(Write::Enqueue(job)).await?)
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
        let claim = Claim {
            worker: worker.to_owned(),
            kinds: rows::json_list(kinds.iter().copied()),
            lease: rows::micros(lease),
            global: i64::from(limits.global),
            per_repo: i64::from(limits.per_repo),
            per_repo_exempt: rows::json_list(limits.per_repo_exempt.iter().copied()),
        };
        match self.committer.write(Write::Claim(claim)).await? {
            Written::Claimed(job) => Ok(job),
            other => Err(unexpected(&other)),
        }
    }

    async fn heartbeat(
        &self,
        job: Uuid,
        worker: &str,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let worker = worker.to_owned();
        let lease = rows::micros(lease);
        moved(
            self.committer
                .write(Write::Heartbeat { job, worker, lease })
                .await?,
        )
    }

    async fn transition(
        &self,
        job: Uuid,
        worker: &str,
        state: JobState,
        error: Option<&str>,
    ) -> Result<bool, StoreError> {
        let write = Write::Transition {
            job,
            worker: worker.to_owned(),
            state,
            error: error.map(str::to_owned),
        };
        moved(self.committer.write(write).await?)
    }

    async fn prune(&self, older_than: Duration) -> Result<Pruned, StoreError> {
        let older_than = i64::try_from(older_than.as_micros()).unwrap_or(i64::MAX);
        match self.committer.write(Write::Prune { older_than }).await? {
            Written::Pruned(pruned) => Ok(pruned),
            other => Err(unexpected(&other)),
        }
    }

    async fn set_progress(
        &self,
        job: Uuid,
        worker: &str,
        progress: JobProgress,
    ) -> Result<bool, StoreError> {
        let write = Write::Progress {
            job,
            worker: worker.to_owned(),
            progress,
        };
        moved(self.committer.write(write).await?)
    }

    async fn reap(&self, max_attempts: u32) -> Result<Reaped, StoreError> {
        match self.committer.write(Write::Reap { max_attempts }).await? {
            Written::Reaped(reaped) => Ok(reaped),
            other => Err(unexpected(&other)),
        }
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
        let line = line.to_owned();
        match self.committer.write(Write::Log { job, line }).await? {
            Written::Seq(seq) => Ok(seq),
            other => Err(unexpected(&other)),
        }
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
        .execute(&self.reader)
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synchronous_parameter_is_taken_out_of_the_url() {
        let (url, sync) = split_synchronous("sqlite:///d/a.db?synchronous=NORMAL&mode=rwc")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url, "sqlite:///d/a.db?mode=rwc");
        assert!(matches!(sync, SqliteSynchronous::Normal));
        let (url, sync) = split_synchronous("sqlite:///d/a.db").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url, "sqlite:///d/a.db");
        assert!(matches!(sync, SqliteSynchronous::Full));
        let err = split_synchronous("sqlite:///d/a.db?synchronous=off").err();
        assert!(err.is_some_and(|e| e.to_string().contains("`full` or `normal`")));
    }
}
