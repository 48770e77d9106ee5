//! The store side of `locks`: [`LockStore`] over the `locks` table, written once for both
//! backends over [`Db`], and the row conversions the plan and audit owners share.
//!
//! Every lock a command needs is taken in one transaction, in key order (so two acquirers
//! never wait on each other in a cycle), with an upsert that only updates a row the same PR
//! already holds; the unique key `(repo, dir, workspace, project)` makes it impossible for two
//! PRs to both win, on either backend.

use async_trait::async_trait;
use uuid::Uuid;

use super::sql::{Db, On, Row, Sql, Tx};
use super::{StoreError, audit, plans, rows};
use crate::commands::{ProjectName, RepoDir, Workspace};
use crate::locks::{
    Acquisition, Actor, ActorVia, AuditAction, AuditStamp, ClosedPr, KeyFilter, Lock, LockKey,
    LockOwner, LockQuery, NewAuditEvent, Release,
};
use model::ForgeKind;

/// Locks; implemented once for both backends.
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

    /// Takes `key` for a run of the command line through the API (`owner.pr` is
    /// [`crate::locks::REMOTE_RUN`]): granted only when no lock at all is held on the key's
    /// repository, directory and workspace (whatever its project), else the locks in the way.
    /// A remote run never re-takes a lock, not even another remote run's.
    async fn lock_acquire_remote(
        &self,
        key: &LockKey,
        owner: &LockOwner,
    ) -> Result<Acquisition, StoreError>;
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

const LOCK_COLUMNS: &str = "id, repo, dir, workspace, project, pr, pr_url, head_sha, \
     planned_by, job_id, summary, locked_at, planned_at, forge";
/// Attempts at an acquire whose blocker was released before we could name it.
const ACQUIRE_TRIES: u32 = 3;

fn lock_from_row(row: &Row) -> Result<Lock, StoreError> {
    Ok(Lock {
        id: row.id("id")?,
        key: key_from_columns(
            row.get("repo")?,
            &row.get::<String>("dir")?,
            &row.get::<String>("workspace")?,
            &row.get::<String>("project")?,
        )?,
        owner: LockOwner {
            pr: pr_from_column(row.get("pr")?)?,
            pr_url: row.get("pr_url")?,
            head_sha: row.get("head_sha")?,
            user: row.get("planned_by")?,
            job: row.opt_id("job_id")?,
            summary: row.get("summary")?,
            forge: rows::forge_column(row.get("forge")?)?,
        },
        locked_at: row.time("locked_at")?,
        planned_at: row.time("planned_at")?,
    })
}

/// Inserts `key` for `owner`, or refreshes the owner info when `owner.pr` already holds it.
/// `None` when another PR holds it. Two replicas taking the same key serialise on the unique
/// index: the second upsert waits for the first transaction, then sees a row held by another
/// PR and takes nothing. (On SQLite the one writer connection runs them one after the other.)
async fn upsert_lock(
    tx: &mut Tx,
    key: &LockKey,
    owner: &LockOwner,
) -> Result<Option<Lock>, StoreError> {
    let row = Sql::new(format!(
        "INSERT INTO locks ({LOCK_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, {{now}}, {{now}}, $12)
         ON CONFLICT (repo, dir, workspace, project) DO UPDATE SET
             forge = excluded.forge, pr_url = excluded.pr_url, head_sha = excluded.head_sha,
             planned_by = excluded.planned_by, job_id = excluded.job_id,
             summary = excluded.summary, planned_at = excluded.planned_at
         WHERE locks.pr = excluded.pr
         RETURNING {LOCK_COLUMNS}"
    ))
    .bind(Uuid::new_v4())
    .bind(&key.repo)
    .bind(key.dir.as_str())
    .bind(key.workspace.as_str())
    .bind(project_column(key.project.as_ref()))
    .bind(pr_column(owner.pr)?)
    .bind(&owner.pr_url)
    .bind(&owner.head_sha)
    .bind(&owner.user)
    .bind(owner.job)
    .bind(&owner.summary)
    .bind(owner.forge.map(ForgeKind::as_str))
    .fetch_optional(tx)
    .await?;
    row.as_ref().map(lock_from_row).transpose()
}

async fn holder(tx: &mut Tx, key: &LockKey) -> Result<Option<Lock>, StoreError> {
    let row = Sql::new(format!(
        "SELECT {LOCK_COLUMNS} FROM locks
         WHERE repo = $1 AND dir = $2 AND workspace = $3 AND project = $4"
    ))
    .bind(&key.repo)
    .bind(key.dir.as_str())
    .bind(key.workspace.as_str())
    .bind(project_column(key.project.as_ref()))
    .fetch_optional(tx)
    .await?;
    row.as_ref().map(lock_from_row).transpose()
}

/// `head`, the `WHERE` that picks a PR's locks narrowed by `filter` (values bound from `$1`),
/// then `tail`.
fn pr_locks(
    head: &str,
    tail: &str,
    repo: &str,
    pr: u64,
    filter: &KeyFilter,
) -> Result<Sql, StoreError> {
    Ok(Sql::new(format!(
        "{head} WHERE repo = $1 AND pr = $2
             AND (CAST($3 AS TEXT) IS NULL OR dir = $3)
             AND (CAST($4 AS TEXT) IS NULL OR workspace = $4)
             AND (CAST($5 AS TEXT) IS NULL OR project = $5)
         {tail}"
    ))
    .bind(repo)
    .bind(pr_column(pr)?)
    .bind(filter.dir.as_ref().map(|d| d.as_str()))
    .bind(filter.workspace.as_ref().map(|w| w.as_str()))
    .bind(filter.project.as_ref().map(|p| p.as_str())))
}

async fn delete_locks(tx: &mut Tx, release: &Release) -> Result<Vec<Lock>, StoreError> {
    let rows = match release {
        Release::Pr { repo, pr, filter } => {
            if tx.is_postgres() {
                // Row locks in key order first, the order acquirers take them in, so a release
                // racing the same PR's re-plan waits instead of deadlocking.
                let order = "ORDER BY repo, dir, workspace, project FOR UPDATE";
                pr_locks("SELECT 1 FROM locks", order, repo, *pr, filter)?
                    .execute(&mut *tx)
                    .await?;
            }
            let returning = format!("RETURNING {LOCK_COLUMNS}");
            pr_locks("DELETE FROM locks", &returning, repo, *pr, filter)?
                .fetch_all(tx)
                .await?
        }
        Release::Id(id) => {
            Sql::new(format!(
                "DELETE FROM locks WHERE id = $1 RETURNING {LOCK_COLUMNS}"
            ))
            .bind(*id)
            .fetch_all(tx)
            .await?
        }
    };
    let mut locks = rows
        .iter()
        .map(lock_from_row)
        .collect::<Result<Vec<_>, _>>()?;
    locks.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(locks)
}

/// One attempt at taking `keys`: `None` when a lock that blocked us was released before we
/// could read who held it (only possible across PostgreSQL transactions; the caller tries
/// again).
async fn try_acquire(
    db: &Db,
    keys: &[LockKey],
    owner: &LockOwner,
) -> Result<Option<Acquisition>, StoreError> {
    let mut tx = db.begin().await?;
    let mut granted = Vec::new();
    let mut taken = Vec::new();
    let mut held = Vec::new();
    for key in ordered_keys(keys) {
        one_decision_per_directory(&mut tx, key).await?;
        if let Some(run) = remote_run_on(&mut tx, key).await? {
            held.push(run);
            continue;
        }
        match upsert_lock(&mut tx, key, owner).await? {
            Some(lock) => granted.push(lock),
            None => taken.push(key),
        }
    }
    if taken.is_empty() && held.is_empty() {
        tx.commit().await?;
        return Ok(Some(Acquisition::Granted(granted)));
    }
    let blocked = held.len();
    for key in &taken {
        held.extend(holder(&mut tx, key).await?);
    }
    tx.rollback().await?;
    Ok((held.len() == blocked + taken.len()).then_some(Acquisition::Conflict(held)))
}

/// PostgreSQL decides the locks of one directory and workspace one transaction at a time: a
/// remote run's lock (no project) and a pull request's lock on a named project there have
/// different keys, so the unique index alone would let both in. SQLite has one writer.
pub(super) async fn one_decision_per_directory(
    tx: &mut Tx,
    key: &LockKey,
) -> Result<(), StoreError> {
    if tx.is_postgres() {
        Sql::new("SELECT pg_advisory_xact_lock(hashtextextended($1, 7041))")
            .bind(format!(
                "{}\n{}\n{}",
                key.repo,
                key.dir.as_str(),
                key.workspace.as_str()
            ))
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

/// The remote run's lock on `key`'s directory and workspace, which every project there waits
/// for (a key without a project collides with it by the unique index already).
async fn remote_run_on(tx: &mut Tx, key: &LockKey) -> Result<Option<Lock>, StoreError> {
    if key.project.is_none() {
        return Ok(None);
    }
    let row = Sql::new(format!(
        "SELECT {LOCK_COLUMNS} FROM locks
         WHERE repo = $1 AND dir = $2 AND workspace = $3 AND pr = $4 AND project = ''"
    ))
    .bind(&key.repo)
    .bind(key.dir.as_str())
    .bind(key.workspace.as_str())
    .bind(pr_column(crate::locks::REMOTE_RUN)?)
    .fetch_optional(tx)
    .await?;
    row.as_ref().map(lock_from_row).transpose()
}

/// Audit events and superseded plans for locks just deleted, inside the open transaction.
async fn record_released(
    tx: &mut Tx,
    released: &[Lock],
    action: AuditAction,
    stamp: &AuditStamp,
) -> Result<(), StoreError> {
    for lock in released {
        plans::supersede_key(On::Tx(&mut *tx), &lock.key, lock.owner.pr).await?;
        audit::insert(On::Tx(&mut *tx), &release_event(lock, action, stamp)).await?;
    }
    Ok(())
}

#[async_trait]
impl LockStore for Db {
    async fn lock_acquire(
        &self,
        keys: &[LockKey],
        owner: &LockOwner,
    ) -> Result<Acquisition, StoreError> {
        for _ in 1..ACQUIRE_TRIES {
            if let Some(outcome) = try_acquire(self, keys, owner).await? {
                return Ok(outcome);
            }
        }
        try_acquire(self, keys, owner).await?.ok_or_else(|| {
            StoreError::Unavailable(format!(
                "locks kept changing hands while PR #{} tried to take them; try again",
                owner.pr
            ))
        })
    }

    async fn lock_release(
        &self,
        release: &Release,
        stamp: &AuditStamp,
    ) -> Result<Vec<Lock>, StoreError> {
        let mut tx = self.begin().await?;
        let released = delete_locks(&mut tx, release).await?;
        record_released(&mut tx, &released, AuditAction::Unlock, stamp).await?;
        tx.commit().await?;
        Ok(released)
    }

    async fn lock_get(&self, id: Uuid) -> Result<Option<Lock>, StoreError> {
        let row = Sql::new(format!("SELECT {LOCK_COLUMNS} FROM locks WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.read())
            .await?;
        row.as_ref().map(lock_from_row).transpose()
    }

    async fn lock_list(&self, query: &LockQuery) -> Result<Vec<Lock>, StoreError> {
        let rows = Sql::new(format!(
            "SELECT {LOCK_COLUMNS} FROM locks
             WHERE (CAST($1 AS TEXT) IS NULL OR repo = $1)
               AND (CAST($2 AS BIGINT) IS NULL OR pr = $2)
             ORDER BY repo, dir, workspace, project"
        ))
        .bind(&query.repo)
        .bind(query.pr.map(pr_column).transpose()?)
        .fetch_all(self.read())
        .await?;
        rows.iter().map(lock_from_row).collect()
    }

    async fn pr_closed(
        &self,
        repo: &str,
        pr: u64,
        stamp: &AuditStamp,
    ) -> Result<ClosedPr, StoreError> {
        let mut tx = self.begin().await?;
        let release = Release::Pr {
            repo: repo.to_owned(),
            pr,
            filter: KeyFilter::default(),
        };
        let released = delete_locks(&mut tx, &release).await?;
        record_released(&mut tx, &released, AuditAction::PrClosed, stamp).await?;
        let plans_deleted = plans::delete_pr(&mut tx, repo, pr).await?;
        tx.commit().await?;
        Ok(ClosedPr {
            released,
            plans_deleted,
        })
    }

    async fn lock_acquire_remote(
        &self,
        key: &LockKey,
        owner: &LockOwner,
    ) -> Result<Acquisition, StoreError> {
        let mut tx = self.begin().await?;
        one_decision_per_directory(&mut tx, key).await?;
        let held = Sql::new(format!(
            "SELECT {LOCK_COLUMNS} FROM locks WHERE repo = $1 AND dir = $2 AND workspace = $3
             ORDER BY repo, dir, workspace, project"
        ))
        .bind(&key.repo)
        .bind(key.dir.as_str())
        .bind(key.workspace.as_str())
        .fetch_all(&mut tx)
        .await?
        .iter()
        .map(lock_from_row)
        .collect::<Result<Vec<_>, _>>()?;
        if !held.is_empty() {
            tx.rollback().await?;
            return Ok(Acquisition::Conflict(held));
        }
        let row = Sql::new(format!(
            "INSERT INTO locks ({LOCK_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, {{now}}, {{now}}, $12)
             ON CONFLICT (repo, dir, workspace, project) DO NOTHING
             RETURNING {LOCK_COLUMNS}"
        ))
        .bind(Uuid::new_v4())
        .bind(&key.repo)
        .bind(key.dir.as_str())
        .bind(key.workspace.as_str())
        .bind(project_column(key.project.as_ref()))
        .bind(pr_column(owner.pr)?)
        .bind(&owner.pr_url)
        .bind(&owner.head_sha)
        .bind(&owner.user)
        .bind(owner.job)
        .bind(&owner.summary)
        .bind(owner.forge.map(ForgeKind::as_str))
        .fetch_optional(&mut tx)
        .await?;
        match row {
            Some(row) => {
                let lock = lock_from_row(&row)?;
                tx.commit().await?;
                Ok(Acquisition::Granted(vec![lock]))
            }
            None => {
                // taken between our read and our insert (another replica): name the holder
                let held = holder(&mut tx, key).await?;
                tx.rollback().await?;
                Ok(Acquisition::Conflict(held.into_iter().collect()))
            }
        }
    }
}
