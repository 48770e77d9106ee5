//! The store side of `locks`: the [`LockStore`] trait (a supertrait of `Store`) over the
//! `locks`, `plans`, `audit_events` and `apply_switch` tables, and the row conversions both
//! backends share. The SQL itself is in `locks_sqlite.rs`/`locks_pg.rs` and
//! `plans_sqlite.rs`/`plans_pg.rs`.
//!
//! Every lock a command needs is taken in one transaction, in key order (so two acquirers
//! never wait on each other in a cycle), with an upsert that only updates a row the same PR
//! already holds; the unique key `(repo, dir, workspace, project)` makes it impossible for two
//! PRs to both win, on either backend.

use async_trait::async_trait;
use uuid::Uuid;

use super::StoreError;
use crate::commands::{ProjectName, RepoDir, Workspace};
use crate::locks::{
    Acquisition, Actor, ActorVia, ApplySwitch, AuditAction, AuditEvent, AuditStamp, ClosedPr, Lock,
    LockKey, LockOwner, LockQuery, NewAuditEvent, NewPlan, PlanQuery, Release, SavedPlan,
};

/// Locks, saved plans, audit events and the apply switch; implemented by both backends.
#[async_trait]
pub trait LockStore: Send + Sync {
    /// Takes every lock in `keys` for `owner.pr`, or none. Keys the PR already holds are
    /// re-taken with `owner`'s info (same id). On conflict nothing changes and the locks held
    /// by other PRs are returned.
    async fn lock_acquire(
        &self,
        keys: &[LockKey],
        owner: &LockOwner,
    ) -> Result<Acquisition, StoreError>;

    /// Releases the selected locks, marks their current plans superseded and writes one
    /// `unlock` audit event per released lock, in one transaction. Returns what was released.
    async fn lock_release(
        &self,
        release: &Release,
        stamp: &AuditStamp,
    ) -> Result<Vec<Lock>, StoreError>;

    async fn lock_get(&self, id: Uuid) -> Result<Option<Lock>, StoreError>;

    /// Locks matching `query`, ordered by key.
    async fn lock_list(&self, query: &LockQuery) -> Result<Vec<Lock>, StoreError>;

    /// A PR was merged or closed: releases all its locks (one `pr_closed` audit event each) and
    /// deletes all its saved plans and recorded plan comments, in one transaction.
    async fn pr_closed(
        &self,
        repo: &str,
        pr: u64,
        stamp: &AuditStamp,
    ) -> Result<ClosedPr, StoreError>;

    /// Saves a plan and supersedes the PR's previous plan for the same key.
    async fn plan_save(&self, plan: &NewPlan) -> Result<SavedPlan, StoreError>;

    async fn plan_get(&self, id: Uuid) -> Result<Option<SavedPlan>, StoreError>;

    /// A PR's plans, newest first.
    async fn plan_list(&self, query: &PlanQuery) -> Result<Vec<SavedPlan>, StoreError>;

    /// Marks every current plan of a PR superseded (new commits pushed); returns how many.
    async fn plan_supersede_pr(&self, repo: &str, pr: u64) -> Result<u64, StoreError>;

    /// Records `comments` as the PR's latest plan comments, replacing the ones recorded before,
    /// and returns those (sorted; the ones in `comments` left out) so the caller can hide them.
    /// `pr_closed` forgets them.
    async fn plan_comments_replace(
        &self,
        repo: &str,
        pr: u64,
        comments: &[u64],
    ) -> Result<Vec<u64>, StoreError>;

    async fn audit_append(&self, event: &NewAuditEvent) -> Result<AuditEvent, StoreError>;

    /// At most `limit` events with `seq < before` (all when `None`), newest first.
    async fn audit_list(
        &self,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<AuditEvent>, StoreError>;

    async fn apply_switch(&self) -> Result<ApplySwitch, StoreError>;

    /// Turns applies on or off. When the state changes, records who and why and appends an
    /// `apply_switch_on`/`apply_switch_off` audit event in the same transaction; setting the
    /// state it already has changes nothing. Returns the switch after the call.
    async fn set_apply_switch(
        &self,
        enabled: bool,
        stamp: &AuditStamp,
    ) -> Result<ApplySwitch, StoreError>;
}

/// The keys to take, sorted and without duplicates: every acquirer inserts in this order.
pub(super) fn ordered_keys(keys: &[LockKey]) -> Vec<&LockKey> {
    let mut ordered: Vec<&LockKey> = keys.iter().collect();
    ordered.sort();
    ordered.dedup();
    ordered
}

/// The stored form of an optional project name (`''` for none).
pub(super) fn project_column(project: Option<&ProjectName>) -> &str {
    project.map_or("", ProjectName::as_str)
}

/// A key from its stored columns; a value the names refuse means a corrupt row.
pub(super) fn key_from_columns(
    repo: String,
    dir: &str,
    workspace: &str,
    project: &str,
) -> Result<LockKey, StoreError> {
    let corrupt = |what: &str, e: &dyn std::fmt::Display| {
        StoreError::Internal(format!("stored lock/plan {what}: {e}"))
    };
    Ok(LockKey {
        repo,
        dir: RepoDir::parse(dir).map_err(|e| corrupt("dir", &e))?,
        workspace: Workspace::parse(workspace).map_err(|e| corrupt("workspace", &e))?,
        project: if project.is_empty() {
            None
        } else {
            Some(ProjectName::parse(project).map_err(|e| corrupt("project", &e))?)
        },
    })
}

pub(super) fn actor_from_columns(name: String, via: &str) -> Result<Actor, StoreError> {
    let via = ActorVia::parse(via)
        .ok_or_else(|| StoreError::Internal(format!("unknown actor kind `{via}`")))?;
    Ok(Actor { name, via })
}

pub(super) fn action_from_column(action: &str) -> Result<AuditAction, StoreError> {
    AuditAction::parse(action)
        .ok_or_else(|| StoreError::Internal(format!("unknown audit action `{action}`")))
}

/// The audit event written for one released lock.
pub(super) fn release_event(lock: &Lock, action: AuditAction, stamp: &AuditStamp) -> NewAuditEvent {
    NewAuditEvent {
        actor: stamp.actor.clone(),
        action,
        repo: Some(lock.key.repo.clone()),
        pr: Some(lock.owner.pr),
        target: lock.key.to_string(),
        detail: format!(
            "{} (lock held by #{} at {})",
            stamp.detail,
            lock.owner.pr,
            short_sha(&lock.owner.head_sha)
        ),
    }
}

/// The audit event written when the apply switch changes.
pub(super) fn switch_event(enabled: bool, stamp: &AuditStamp) -> NewAuditEvent {
    NewAuditEvent {
        actor: stamp.actor.clone(),
        action: if enabled {
            AuditAction::ApplySwitchOn
        } else {
            AuditAction::ApplySwitchOff
        },
        repo: None,
        pr: None,
        target: "apply switch".to_owned(),
        detail: stamp.detail.clone(),
    }
}

fn short_sha(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// `pr` as stored (both backends use a signed 64-bit column).
pub(super) fn pr_column(pr: u64) -> Result<i64, StoreError> {
    i64::try_from(pr)
        .map_err(|_| StoreError::Internal(format!("pull request number {pr} is out of range")))
}

pub(super) fn pr_from_column(pr: i64) -> Result<u64, StoreError> {
    u64::try_from(pr)
        .map_err(|_| StoreError::Internal(format!("stored pull request number {pr} is negative")))
}

/// A forge comment id as stored (signed 64-bit on both backends).
pub(super) fn comment_column(id: u64) -> Result<i64, StoreError> {
    i64::try_from(id).map_err(|_| StoreError::Internal(format!("comment id {id} is out of range")))
}

/// Stored comment ids, sorted, without the ones being recorded now.
pub(super) fn comment_ids(stored: Vec<i64>, now: &[u64]) -> Result<Vec<u64>, StoreError> {
    let mut ids = stored
        .into_iter()
        .map(|id| {
            u64::try_from(id)
                .map_err(|_| StoreError::Internal(format!("stored comment id {id} is negative")))
        })
        .collect::<Result<Vec<u64>, _>>()?;
    ids.retain(|id| !now.contains(id));
    ids.sort_unstable();
    Ok(ids)
}
