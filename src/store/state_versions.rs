//! State versions: the `state_versions` table, one numbered snapshot per change people make to
//! a scope's state (an apply, `atlantis import`, `atlantis state rm`), with who, when, which job
//! and which commit. The document is handed in already stripped of secrets by
//! `proxmox::state` (which owns its shape); the store numbers and keeps it.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::StoreError;
use super::sql::{Db, Row, Sql};
use super::state::StateScope;

/// Why a version was written. Mirrored by the table's `CHECK` on `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionReason {
    /// An apply by the server (a PR's `atlantis apply`) or a local `atoll apply`.
    Apply,
    /// `atlantis import`.
    Import,
    /// `atlantis state rm`.
    StateRm,
    /// `atoll apply --remote`: the command line through the server's API.
    RemoteApply,
    /// `atoll state mv` (`atoll state rm` is a [`VersionReason::StateRm`]).
    StateMv,
    /// `atoll state import-terraform`.
    ImportTerraform,
}

impl VersionReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "apply",
            Self::Import => "import",
            Self::StateRm => "state_rm",
            Self::RemoteApply => "remote_apply",
            Self::StateMv => "state_mv",
            Self::ImportTerraform => "import_terraform",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Apply,
            Self::Import,
            Self::StateRm,
            Self::RemoteApply,
            Self::StateMv,
            Self::ImportTerraform,
        ]
        .into_iter()
        .find(|r| r.as_str() == text)
    }
}

/// Who wrote a version, why, and from what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionMeta {
    pub actor: String,
    pub reason: VersionReason,
    pub job: Option<Uuid>,
    pub commit: Option<String>,
}

/// One state version; `document` is `None` in listings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateVersion {
    pub version: u32,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(flatten)]
    pub meta: VersionMeta,
    /// How many resources the scope held.
    pub resources: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<serde_json::Value>,
}

/// Attempts at numbering a version when another writer took the same number first
/// (PostgreSQL replicas; SQLite's one writer never collides).
const ADD_TRIES: u32 = 3;

fn number(raw: i64, column: &str) -> Result<u32, StoreError> {
    u32::try_from(raw).map_err(|_| StoreError::Internal(format!("stored {column} {raw}")))
}

fn from_row(row: &Row, with_document: bool) -> Result<StateVersion, StoreError> {
    let reason: String = row.get("reason")?;
    Ok(StateVersion {
        version: number(row.get("version")?, "version")?,
        created_at: row.time("created_at")?,
        meta: VersionMeta {
            actor: row.get("actor")?,
            reason: VersionReason::parse(&reason)
                .ok_or_else(|| StoreError::Internal(format!("unknown version reason {reason}")))?,
            job: row.opt_id("job_id")?,
            commit: row.get("commit_sha")?,
        },
        resources: number(row.get("resources")?, "resources")?,
        document: if with_document {
            Some(row.json("document")?)
        } else {
            None
        },
    })
}

async fn try_add(
    db: &Db,
    scope: &StateScope,
    meta: &VersionMeta,
    document: &serde_json::Value,
    resources: u32,
) -> Result<u32, StoreError> {
    let mut tx = db.begin().await?;
    let last = Sql::new(
        "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) AS last FROM state_versions
         WHERE repo = $1 AND project_dir = $2 AND workspace = $3",
    )
    .bind(&scope.repo)
    .bind(&scope.project_dir)
    .bind(&scope.workspace)
    .fetch_one(&mut tx)
    .await?;
    let version = number(last.get("last")?, "version")? + 1;
    Sql::new(
        "INSERT INTO state_versions (repo, project_dir, workspace, version, created_at, actor,
             reason, job_id, commit_sha, resources, document)
         VALUES ($1, $2, $3, $4, {now}, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&scope.repo)
    .bind(&scope.project_dir)
    .bind(&scope.workspace)
    .bind(i64::from(version))
    .bind(&meta.actor)
    .bind(meta.reason.as_str())
    .bind(meta.job)
    .bind(&meta.commit)
    .bind(i64::from(resources))
    .bind(document)
    .execute(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(version)
}

/// Writes the next version of `scope`; returns its number.
pub(super) async fn add(
    db: &Db,
    scope: &StateScope,
    meta: &VersionMeta,
    document: &serde_json::Value,
    resources: u32,
) -> Result<u32, StoreError> {
    let mut tries = 0;
    loop {
        tries += 1;
        match try_add(db, scope, meta, document, resources).await {
            Err(StoreError::Conflict(_)) if tries < ADD_TRIES => {}
            other => return other,
        }
    }
}

/// Every version of `scope`, newest first, without documents.
pub(super) async fn list(db: &Db, scope: &StateScope) -> Result<Vec<StateVersion>, StoreError> {
    Sql::new(
        "SELECT version, created_at, actor, reason, job_id, commit_sha, resources
         FROM state_versions WHERE repo = $1 AND project_dir = $2 AND workspace = $3
         ORDER BY version DESC",
    )
    .bind(&scope.repo)
    .bind(&scope.project_dir)
    .bind(&scope.workspace)
    .fetch_all(db.read())
    .await?
    .iter()
    .map(|row| from_row(row, false))
    .collect()
}

/// One version of `scope` with its document.
pub(super) async fn get(
    db: &Db,
    scope: &StateScope,
    version: u32,
) -> Result<Option<StateVersion>, StoreError> {
    Sql::new(
        "SELECT version, created_at, actor, reason, job_id, commit_sha, resources, document
         FROM state_versions
         WHERE repo = $1 AND project_dir = $2 AND workspace = $3 AND version = $4",
    )
    .bind(&scope.repo)
    .bind(&scope.project_dir)
    .bind(&scope.workspace)
    .bind(i64::from(version))
    .fetch_optional(db.read())
    .await?
    .as_ref()
    .map(|row| from_row(row, true))
    .transpose()
}
