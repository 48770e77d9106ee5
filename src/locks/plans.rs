//! Saved plans with their provenance ([`PlanSource`], with the freshness rule apply checks).

use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use super::LockKey;
pub use model::{PlanSource, Stale};

/// A plan to save for one project of a PR. Saving it supersedes the PR's previous plan for
/// the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPlan {
    pub key: LockKey,
    pub pr: u64,
    pub job: Option<Uuid>,
    pub source: PlanSource,
    /// The JSON plan document (`format_version` 1, see DESIGN.md).
    pub document: serde_json::Value,
    /// The rendered, terraform-style text.
    pub rendered: String,
    /// Its one-line summary (`Plan: 1 to add, ...`), shown on the lock it is made under.
    pub summary: String,
}

/// A plan as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SavedPlan {
    pub id: Uuid,
    pub key: LockKey,
    pub pr: u64,
    pub job: Option<Uuid>,
    pub source: PlanSource,
    pub document: serde_json::Value,
    pub rendered: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Set when a newer plan for the same key replaced it, or its lock was released.
    #[serde(with = "time::serde::rfc3339::option")]
    pub superseded_at: Option<OffsetDateTime>,
    /// Set when this plan was applied in full (`depends_on` and `automerge` read it).
    #[serde(with = "time::serde::rfc3339::option")]
    pub applied_at: Option<OffsetDateTime>,
    /// Its policy check (`policies::PolicyCheck` as JSON) with the approvals it got; `None`
    /// when no policy set was configured when it was planned.
    pub policy_check: Option<serde_json::Value>,
}

/// Which plans of a PR to list (newest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanQuery {
    pub repo: String,
    pub pr: u64,
    /// Only the latest, not superseded, plan of each project.
    pub current_only: bool,
}
