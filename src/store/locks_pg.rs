//! [`LockStore`] for PostgreSQL: locks, audit events and the apply switch here, plans in
//! `plans_pg.rs`. Two replicas acquiring the same key serialise on the unique index: the second
//! upsert waits for the first transaction, then sees a row held by another PR and takes nothing.
//! Times are the transaction's `now()`.

use async_trait::async_trait;
use sqlx::postgres::{PgPool, PgRow};
use sqlx::{PgConnection, Row};
use uuid::Uuid;

use super::audit_pg as audit;
use super::locks::{
    LockStore, key_from_columns, ordered_keys, pr_column, pr_from_column, project_column,
    release_event,
};
use super::plans_pg as plans;
use super::{PgStore, StoreError, rows};
use crate::locks::{
    Acquisition, ApplySwitch, AuditAction, AuditEvent, AuditStamp, ClosedPr, KeyFilter, Lock,
    LockKey, LockOwner, LockQuery, NewAuditEvent, NewPlan, PlanQuery, Release, SavedPlan,
};
use model::ForgeKind;

const LOCK_COLUMNS: &str = "id, repo, dir, workspace, project, pr, pr_url, head_sha, \
     planned_by, job_id, summary, locked_at, planned_at, forge";
/// Attempts at an acquire whose blocker was released before we could name it.
const ACQUIRE_TRIES: u32 = 3;

fn lock_from_row(row: &PgRow) -> Result<Lock, StoreError> {
    Ok(Lock {
        id: row.try_get("id")?,
        key: key_from_columns(
            row.try_get("repo")?,
            row.try_get("dir")?,
            row.try_get("workspace")?,
            row.try_get("project")?,
        )?,
        owner: LockOwner {
            pr: pr_from_column(row.try_get("pr")?)?,
            pr_url: row.try_get("pr_url")?,
            head_sha: row.try_get("head_sha")?,
            user: row.try_get("planned_by")?,
            job: row.try_get("job_id")?,
            summary: row.try_get("summary")?,
            forge: rows::forge_column(row.try_get("forge")?)?,
        },
        locked_at: row.try_get("locked_at")?,
        planned_at: row.try_get("planned_at")?,
    })
}

/// Inserts `key` for `owner`, or refreshes the owner info when `owner.pr` already holds it.
/// `None` when another PR holds it.
async fn upsert_lock(
    conn: &mut PgConnection,
    key: &LockKey,
    owner: &LockOwner,
) -> Result<Option<Lock>, StoreError> {
    let sql = format!(
        "INSERT INTO locks (id, repo, dir, workspace, project, pr, pr_url, head_sha, planned_by,
             job_id, summary, forge)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (repo, dir, workspace, project) DO UPDATE SET
             forge = excluded.forge, pr_url = excluded.pr_url, head_sha = excluded.head_sha,
             planned_by = excluded.planned_by, job_id = excluded.job_id,
             summary = excluded.summary, planned_at = excluded.planned_at
         WHERE locks.pr = excluded.pr
         RETURNING {LOCK_COLUMNS}"
    );
    let row = sqlx::query(&sql)
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
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(lock_from_row).transpose()
}

async fn holder(conn: &mut PgConnection, key: &LockKey) -> Result<Option<Lock>, StoreError> {
    let sql = format!(
        "SELECT {LOCK_COLUMNS} FROM locks
         WHERE repo = $1 AND dir = $2 AND workspace = $3 AND project = $4"
    );
    let row = sqlx::query(&sql)
        .bind(&key.repo)
        .bind(key.dir.as_str())
        .bind(key.workspace.as_str())
        .bind(project_column(key.project.as_ref()))
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(lock_from_row).transpose()
}

async fn delete_locks(conn: &mut PgConnection, release: &Release) -> Result<Vec<Lock>, StoreError> {
    let rows = match release {
        Release::Pr { repo, pr, filter } => {
            // Row locks in key order first, the order acquirers take them in, so a release
            // racing the same PR's re-plan waits instead of deadlocking.
            sqlx::query(
                "SELECT 1 FROM locks WHERE repo = $1 AND pr = $2
                     AND ($3::text IS NULL OR dir = $3) AND ($4::text IS NULL OR workspace = $4)
                     AND ($5::text IS NULL OR project = $5)
                 ORDER BY repo, dir, workspace, project FOR UPDATE",
            )
            .bind(repo)
            .bind(pr_column(*pr)?)
            .bind(filter.dir.as_ref().map(|d| d.as_str()))
            .bind(filter.workspace.as_ref().map(|w| w.as_str()))
            .bind(filter.project.as_ref().map(|p| p.as_str()))
            .execute(&mut *conn)
            .await?;
            let sql = format!(
                "DELETE FROM locks WHERE repo = $1 AND pr = $2
                     AND ($3::text IS NULL OR dir = $3) AND ($4::text IS NULL OR workspace = $4)
                     AND ($5::text IS NULL OR project = $5)
                 RETURNING {LOCK_COLUMNS}"
            );
            sqlx::query(&sql)
                .bind(repo)
                .bind(pr_column(*pr)?)
                .bind(filter.dir.as_ref().map(|d| d.as_str()))
                .bind(filter.workspace.as_ref().map(|w| w.as_str()))
                .bind(filter.project.as_ref().map(|p| p.as_str()))
                .fetch_all(&mut *conn)
                .await?
        }
        Release::Id(id) => {
            let sql = format!("DELETE FROM locks WHERE id = $1 RETURNING {LOCK_COLUMNS}");
            sqlx::query(&sql).bind(id).fetch_all(&mut *conn).await?
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
/// could read who held it (only possible across transactions; the caller tries again).
async fn try_acquire(
    pool: &PgPool,
    keys: &[LockKey],
    owner: &LockOwner,
) -> Result<Option<Acquisition>, StoreError> {
    let mut tx = pool.begin().await?;
    let mut granted = Vec::new();
    let mut taken = Vec::new();
    for key in ordered_keys(keys) {
        match upsert_lock(&mut tx, key, owner).await? {
            Some(lock) => granted.push(lock),
            None => taken.push(key),
        }
    }
    if taken.is_empty() {
        tx.commit().await?;
        return Ok(Some(Acquisition::Granted(granted)));
    }
    let mut held = Vec::with_capacity(taken.len());
    for key in &taken {
        held.extend(holder(&mut tx, key).await?);
    }
    tx.rollback().await?;
    Ok((held.len() == taken.len()).then_some(Acquisition::Conflict(held)))
}

/// Audit events and superseded plans for locks just deleted, inside the open transaction.
async fn record_released(
    conn: &mut PgConnection,
    released: &[Lock],
    action: AuditAction,
    stamp: &AuditStamp,
) -> Result<(), StoreError> {
    for lock in released {
        plans::supersede_key(conn, &lock.key, lock.owner.pr).await?;
        audit::insert(conn, &release_event(lock, action, stamp)).await?;
    }
    Ok(())
}

#[async_trait]
impl LockStore for PgStore {
    async fn lock_acquire(
        &self,
        keys: &[LockKey],
        owner: &LockOwner,
    ) -> Result<Acquisition, StoreError> {
        for _ in 1..ACQUIRE_TRIES {
            if let Some(outcome) = try_acquire(&self.pool, keys, owner).await? {
                return Ok(outcome);
            }
        }
        try_acquire(&self.pool, keys, owner).await?.ok_or_else(|| {
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
        let mut tx = self.pool.begin().await?;
        let released = delete_locks(&mut tx, release).await?;
        record_released(&mut tx, &released, AuditAction::Unlock, stamp).await?;
        tx.commit().await?;
        Ok(released)
    }

    async fn lock_get(&self, id: Uuid) -> Result<Option<Lock>, StoreError> {
        let sql = format!("SELECT {LOCK_COLUMNS} FROM locks WHERE id = $1");
        let row = sqlx::query(&sql)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(lock_from_row).transpose()
    }

    async fn lock_list(&self, query: &LockQuery) -> Result<Vec<Lock>, StoreError> {
        let sql = format!(
            "SELECT {LOCK_COLUMNS} FROM locks
             WHERE ($1::text IS NULL OR repo = $1) AND ($2::bigint IS NULL OR pr = $2)
             ORDER BY repo, dir, workspace, project"
        );
        let rows = sqlx::query(&sql)
            .bind(&query.repo)
            .bind(query.pr.map(pr_column).transpose()?)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(lock_from_row).collect()
    }

    async fn pr_closed(
        &self,
        repo: &str,
        pr: u64,
        stamp: &AuditStamp,
    ) -> Result<ClosedPr, StoreError> {
        let mut tx = self.pool.begin().await?;
        let release = Release::Pr {
            repo: repo.to_owned(),
            pr,
            filter: KeyFilter::default(),
        };
        let released = delete_locks(&mut tx, &release).await?;
        record_released(&mut tx, &released, AuditAction::PrClosed, stamp).await?;
        let plans_deleted = plans::delete_pr(&mut tx, repo, pr).await?;
        plans::delete_comments(&mut tx, repo, pr).await?;
        tx.commit().await?;
        Ok(ClosedPr {
            released,
            plans_deleted,
        })
    }

    async fn plan_save(&self, plan: &NewPlan) -> Result<SavedPlan, StoreError> {
        let mut tx = self.pool.begin().await?;
        plans::serialise_saves(&mut tx, &plan.key, plan.pr).await?;
        plans::supersede_key(&mut tx, &plan.key, plan.pr).await?;
        let saved = plans::insert(&mut tx, plan).await?;
        // The lock it was made under shows its summary (the lock is this PR's, if still held).
        sqlx::query(
            "UPDATE locks SET summary = $1, planned_at = now()
             WHERE repo = $2 AND dir = $3 AND workspace = $4 AND project = $5 AND pr = $6",
        )
        .bind(&plan.summary)
        .bind(&plan.key.repo)
        .bind(plan.key.dir.as_str())
        .bind(plan.key.workspace.as_str())
        .bind(project_column(plan.key.project.as_ref()))
        .bind(pr_column(plan.pr)?)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(saved)
    }

    async fn plan_get(&self, id: Uuid) -> Result<Option<SavedPlan>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        plans::get(&mut conn, id).await
    }

    async fn plan_list(&self, query: &PlanQuery) -> Result<Vec<SavedPlan>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        plans::list(&mut conn, query).await
    }

    async fn plan_supersede_pr(&self, repo: &str, pr: u64) -> Result<u64, StoreError> {
        let mut conn = self.pool.acquire().await?;
        plans::supersede_pr(&mut conn, repo, pr).await
    }

    async fn plan_comments_replace(
        &self,
        repo: &str,
        pr: u64,
        comments: &[u64],
    ) -> Result<Vec<u64>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let previous = plans::replace_comments(&mut tx, repo, pr, comments).await?;
        tx.commit().await?;
        Ok(previous)
    }

    async fn audit_append(&self, event: &NewAuditEvent) -> Result<AuditEvent, StoreError> {
        let mut conn = self.pool.acquire().await?;
        audit::insert(&mut conn, event).await
    }

    async fn audit_list(
        &self,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<AuditEvent>, StoreError> {
        audit::list(&self.pool, limit, before).await
    }

    async fn apply_switch(&self) -> Result<ApplySwitch, StoreError> {
        audit::switch(&self.pool).await
    }

    async fn set_apply_switch(
        &self,
        enabled: bool,
        stamp: &AuditStamp,
    ) -> Result<ApplySwitch, StoreError> {
        audit::set_switch(&self.pool, enabled, stamp).await
    }
}
