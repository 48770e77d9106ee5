//! The store side of the apply journal (owned by `runner`): one typed row per step of an apply,
//! so what an interrupted apply had done is read back as data, not parsed from log lines.
//! Written once for both backends over [`Db`]; rows go with their job (`ON DELETE CASCADE`).

use async_trait::async_trait;
use uuid::Uuid;

use super::StoreError;
use super::sql::{Db, Row, Sql};

/// One step of an apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalEvent {
    /// A new attempt at applying `head_sha` began; what came before belongs to older attempts.
    Attempt { head_sha: String },
    /// The guest will be changed (written for every guest before the first change).
    Planned,
    /// A step on the guest began (`create`, `update`, `restart`, ...).
    Started { step: String },
    /// The guest is done; `detail` says what changed.
    Done { detail: String },
    /// The guest failed with Proxmox VE's error.
    Failed { error: String },
}

impl JournalEvent {
    fn column(&self) -> (&'static str, &str) {
        match self {
            Self::Attempt { head_sha } => ("attempt", head_sha),
            Self::Planned => ("planned", ""),
            Self::Started { step } => ("started", step),
            Self::Done { detail } => ("done", detail),
            Self::Failed { error } => ("failed", error),
        }
    }

    fn from_columns(event: &str, text: String) -> Result<Self, StoreError> {
        Ok(match event {
            "attempt" => Self::Attempt { head_sha: text },
            "planned" => Self::Planned,
            "started" => Self::Started { step: text },
            "done" => Self::Done { detail: text },
            "failed" => Self::Failed { error: text },
            other => {
                return Err(StoreError::Internal(format!(
                    "unknown apply journal event `{other}`"
                )));
            }
        })
    }
}

/// One journal row: `event` about guest `address` of the apply's project number `project`
/// (named `label`). An [`JournalEvent::Attempt`] names no project or guest (index 0, empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    pub project: u32,
    pub label: String,
    pub address: String,
    pub event: JournalEvent,
}

impl JournalEntry {
    /// The start of an attempt at `head_sha`.
    pub fn attempt(head_sha: &str) -> Self {
        Self {
            project: 0,
            label: String::new(),
            address: String::new(),
            event: JournalEvent::Attempt {
                head_sha: head_sha.to_owned(),
            },
        }
    }
}

/// The apply journal; implemented once for both backends.
#[async_trait]
pub trait JournalStore: Send + Sync {
    /// Appends one entry to the journal of `job`.
    async fn journal_append(&self, job: Uuid, entry: &JournalEntry) -> Result<(), StoreError>;

    /// Every entry of `job`, in the order written.
    async fn journal(&self, job: Uuid) -> Result<Vec<JournalEntry>, StoreError>;
}

fn entry_from_row(row: &Row) -> Result<JournalEntry, StoreError> {
    let project: i64 = row.get("project")?;
    Ok(JournalEntry {
        project: u32::try_from(project)
            .map_err(|_| StoreError::Internal(format!("stored journal project index {project}")))?,
        label: row.get("label")?,
        address: row.get("address")?,
        event: JournalEvent::from_columns(&row.get::<String>("event")?, row.get("text")?)?,
    })
}

#[async_trait]
impl JournalStore for Db {
    async fn journal_append(&self, job: Uuid, entry: &JournalEntry) -> Result<(), StoreError> {
        let (event, text) = entry.event.column();
        Sql::new(
            "INSERT INTO apply_journal (job_id, project, label, address, event, text, at)
             VALUES ($1, $2, $3, $4, $5, $6, {now})",
        )
        .bind(job)
        .bind(i64::from(entry.project))
        .bind(&entry.label)
        .bind(&entry.address)
        .bind(event)
        .bind(text)
        .execute(self.write())
        .await?;
        Ok(())
    }

    async fn journal(&self, job: Uuid) -> Result<Vec<JournalEntry>, StoreError> {
        let rows = Sql::new(
            "SELECT CAST(project AS BIGINT) AS project, label, address, event, text
             FROM apply_journal WHERE job_id = $1 ORDER BY seq",
        )
        .bind(job)
        .fetch_all(self.read())
        .await?;
        rows.iter().map(entry_from_row).collect()
    }
}
