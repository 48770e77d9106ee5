//! [`LockStore`] for PostgreSQL: locks, audit events and the apply switch here, plans in
//! `plans_pg.rs`. Two replicas acquiring the same key serialise on the unique index: the second
//! upsert waits for the first transaction, then sees a row held by another PR and takes nothing.
//! Times are the transaction's `now()`.

use async_trait::async_trait;
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};
use uuid::Uuid;

use super::locks::{
    LockStore, action_from_column, actor_from_columns, key_from_columns, ordered_keys, pr_column,
    pr_from_column, project_column, release_event, switch_event,
};
use super::plans_pg as plans;
use super::{PgStore, StoreError};
use crate::locks::{
    Acquisition, ApplySwitch, AuditAction, AuditEvent, AuditStamp, ClosedPr, KeyFilter, Lock,
    LockKey, LockOwner, LockQuery, NewAuditEvent, NewPlan, PlanQuery, Release, SavedPlan,
};

const LOCK_COLUMNS: &str = "id, repo, dir, workspace, project, pr, pr_url, head_sha, \
     planned_by, job_id, summary, locked_at, planned_at";
const AUDIT_COLUMNS: &str = "seq, at, actor, actor_via, action, repo, pr, target, detail";
const SWITCH_COLUMNS: &str = "enabled, changed_by, changed_via, changed_at, reason";

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
        },
        locked_at: row.try_get("locked_at")?,
        planned_at: row.try_get("planned_at")?,
    })
}

fn audit_from_row(row: &PgRow) -> Result<AuditEvent, StoreError> {
    let pr: Option<i64> = row.try_get("pr")?;
    Ok(AuditEvent {
        seq: row.try_get("seq")?,
        at: row.try_get("at")?,
        actor: actor_from_columns(row.try_get("actor")?, row.try_get("actor_via")?)?,
        action: action_from_column(row.try_get("action")?)?,
        repo: row.try_get("repo")?,
        pr: pr.map(pr_from_column).transpose()?,
        target: row.try_get("target")?,
        detail: row.try_get("detail")?,
    })
}

fn switch_from_row(row: &PgRow) -> Result<ApplySwitch, StoreError> {
    let by: Option<String> = row.try_get("changed_by")?;
    let via: Option<String> = row.try_get("changed_via")?;
    Ok(ApplySwitch {
        enabled: row.try_get("enabled")?,
        changed_by: match (by, via) {
            (Some(name), Some(via)) => Some(actor_from_columns(name, &via)?),
            _ => None,
        },
        changed_at: row.try_get("changed_at")?,
        reason: row.try_get("reason")?,
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
             job_id, summary)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (repo, dir, workspace, project) DO UPDATE SET
             pr_url = excluded.pr_url, head_sha = excluded.head_sha,
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

async fn insert_audit(
    conn: &mut PgConnection,
    event: &NewAuditEvent,
) -> Result<AuditEvent, StoreError> {
    let sql = format!(
        "INSERT INTO audit_events (actor, actor_via, action, repo, pr, target, detail)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {AUDIT_COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(&event.actor.name)
        .bind(event.actor.via.as_str())
        .bind(event.action.as_str())
        .bind(&event.repo)
        .bind(event.pr.map(pr_column).transpose()?)
        .bind(&event.target)
        .bind(&event.detail)
        .fetch_one(&mut *conn)
        .await?;
    audit_from_row(&row)
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
        insert_audit(conn, &release_event(lock, action, stamp)).await?;
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
        let mut tx = self.pool.begin().await?;
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
            return Ok(Acquisition::Granted(granted));
        }
        let mut held = Vec::with_capacity(taken.len());
        for key in taken {
            held.extend(holder(&mut tx, key).await?);
        }
        tx.rollback().await?;
        Ok(Acquisition::Conflict(held))
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
        tx.commit().await?;
        Ok(ClosedPr {
            released,
            plans_deleted,
        })
    }

    async fn plan_save(&self, plan: &NewPlan) -> Result<SavedPlan, StoreError> {
        let mut tx = self.pool.begin().await?;
        plans::supersede_key(&mut tx, &plan.key, plan.pr).await?;
        let saved = plans::insert(&mut tx, plan).await?;
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

    async fn audit_append(&self, event: &NewAuditEvent) -> Result<AuditEvent, StoreError> {
        let mut conn = self.pool.acquire().await?;
        insert_audit(&mut conn, event).await
    }

    async fn audit_list(
        &self,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<AuditEvent>, StoreError> {
        let sql = format!(
            "SELECT {AUDIT_COLUMNS} FROM audit_events WHERE ($1::bigint IS NULL OR seq < $1)
             ORDER BY seq DESC LIMIT $2"
        );
        let rows = sqlx::query(&sql)
            .bind(before)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(audit_from_row).collect()
    }

    async fn apply_switch(&self) -> Result<ApplySwitch, StoreError> {
        let sql = format!("SELECT {SWITCH_COLUMNS} FROM apply_switch WHERE id = 1");
        let row = sqlx::query(&sql).fetch_one(&self.pool).await?;
        switch_from_row(&row)
    }

    async fn set_apply_switch(
        &self,
        enabled: bool,
        stamp: &AuditStamp,
    ) -> Result<ApplySwitch, StoreError> {
        let mut tx = self.pool.begin().await?;
        let sql = format!(
            "UPDATE apply_switch SET enabled = $1, changed_by = $2, changed_via = $3,
                 changed_at = now(), reason = $4
             WHERE id = 1 AND enabled <> $1 RETURNING {SWITCH_COLUMNS}"
        );
        let changed = sqlx::query(&sql)
            .bind(enabled)
            .bind(&stamp.actor.name)
            .bind(stamp.actor.via.as_str())
            .bind(&stamp.detail)
            .fetch_optional(&mut *tx)
            .await?;
        let row = match changed {
            Some(row) => {
                insert_audit(&mut tx, &switch_event(enabled, stamp)).await?;
                row
            }
            None => {
                let sql = format!("SELECT {SWITCH_COLUMNS} FROM apply_switch WHERE id = 1");
                sqlx::query(&sql).fetch_one(&mut *tx).await?
            }
        };
        tx.commit().await?;
        switch_from_row(&row)
    }
}
