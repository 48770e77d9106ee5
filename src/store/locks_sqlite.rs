//! [`LockStore`] for SQLite: locks, audit events and the apply switch here, plans in
//! `plans_sqlite.rs`. Every write goes through the single writer connection, so transactions
//! in one process queue instead of failing; the first statement of each is a write, so
//! another process waits on the busy timeout instead of failing on a stale snapshot.

use async_trait::async_trait;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};
use time::OffsetDateTime;
use uuid::Uuid;

use super::audit_sqlite as audit;
use super::locks::{
    LockStore, key_from_columns, ordered_keys, pr_column, pr_from_column, project_column,
    release_event,
};
use super::plans_sqlite as plans;
use super::{SqliteStore, StoreError, rows};
use crate::locks::{
    Acquisition, ApplySwitch, AuditAction, AuditEvent, AuditStamp, ClosedPr, KeyFilter, Lock,
    LockKey, LockOwner, LockQuery, NewAuditEvent, NewPlan, PlanQuery, Release, SavedPlan,
};
use model::ForgeKind;

const LOCK_COLUMNS: &str = "id, repo, dir, workspace, project, pr, pr_url, head_sha, \
     planned_by, job_id, summary, locked_at, planned_at, forge";

pub(super) fn time_from_micros(micros: i64) -> Result<OffsetDateTime, StoreError> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000)
        .map_err(|e| StoreError::Internal(format!("stored time {micros}: {e}")))
}

pub(super) fn uuid_column(raw: Option<String>) -> Result<Option<Uuid>, StoreError> {
    raw.as_deref().map(rows::uuid_from_db).transpose()
}

fn lock_from_row(row: &SqliteRow) -> Result<Lock, StoreError> {
    Ok(Lock {
        id: rows::uuid_from_db(row.try_get("id")?)?,
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
            job: uuid_column(row.try_get("job_id")?)?,
            summary: row.try_get("summary")?,
            forge: rows::forge_column(row.try_get("forge")?)?,
        },
        locked_at: time_from_micros(row.try_get("locked_at")?)?,
        planned_at: time_from_micros(row.try_get("planned_at")?)?,
    })
}

/// Inserts `key` for `owner`, or refreshes the owner info when `owner.pr` already holds it.
/// `None` when another PR holds it.
async fn upsert_lock(
    conn: &mut SqliteConnection,
    key: &LockKey,
    owner: &LockOwner,
    now: i64,
) -> Result<Option<Lock>, StoreError> {
    let sql = format!(
        "INSERT INTO locks ({LOCK_COLUMNS})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13)
         ON CONFLICT (repo, dir, workspace, project) DO UPDATE SET
             forge = excluded.forge, pr_url = excluded.pr_url, head_sha = excluded.head_sha,
             planned_by = excluded.planned_by, job_id = excluded.job_id,
             summary = excluded.summary, planned_at = excluded.planned_at
         WHERE locks.pr = excluded.pr
         RETURNING {LOCK_COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(Uuid::new_v4().to_string())
        .bind(&key.repo)
        .bind(key.dir.as_str())
        .bind(key.workspace.as_str())
        .bind(project_column(key.project.as_ref()))
        .bind(pr_column(owner.pr)?)
        .bind(&owner.pr_url)
        .bind(&owner.head_sha)
        .bind(&owner.user)
        .bind(owner.job.map(|j| j.to_string()))
        .bind(&owner.summary)
        .bind(now)
        .bind(owner.forge.map(ForgeKind::as_str))
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(lock_from_row).transpose()
}

async fn holder(conn: &mut SqliteConnection, key: &LockKey) -> Result<Option<Lock>, StoreError> {
    let sql = format!(
        "SELECT {LOCK_COLUMNS} FROM locks
         WHERE repo = ?1 AND dir = ?2 AND workspace = ?3 AND project = ?4"
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

async fn delete_locks(
    conn: &mut SqliteConnection,
    release: &Release,
) -> Result<Vec<Lock>, StoreError> {
    let rows = match release {
        Release::Pr { repo, pr, filter } => {
            let sql = format!(
                "DELETE FROM locks WHERE repo = ?1 AND pr = ?2
                     AND (?3 IS NULL OR dir = ?3) AND (?4 IS NULL OR workspace = ?4)
                     AND (?5 IS NULL OR project = ?5)
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
            let sql = format!("DELETE FROM locks WHERE id = ?1 RETURNING {LOCK_COLUMNS}");
            sqlx::query(&sql)
                .bind(id.to_string())
                .fetch_all(&mut *conn)
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

/// Audit events and superseded plans for locks just deleted, inside the open transaction.
async fn record_released(
    conn: &mut SqliteConnection,
    released: &[Lock],
    action: AuditAction,
    stamp: &AuditStamp,
    now: i64,
) -> Result<(), StoreError> {
    for lock in released {
        plans::supersede_key(conn, &lock.key, lock.owner.pr, now).await?;
        audit::insert(conn, &release_event(lock, action, stamp), now).await?;
    }
    Ok(())
}

#[async_trait]
impl LockStore for SqliteStore {
    async fn lock_acquire(
        &self,
        keys: &[LockKey],
        owner: &LockOwner,
    ) -> Result<Acquisition, StoreError> {
        let now = rows::now_micros();
        let mut tx = self.writer.begin().await?;
        let mut granted = Vec::new();
        let mut taken = Vec::new();
        for key in ordered_keys(keys) {
            match upsert_lock(&mut tx, key, owner, now).await? {
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
        let now = rows::now_micros();
        let mut tx = self.writer.begin().await?;
        let released = delete_locks(&mut tx, release).await?;
        record_released(&mut tx, &released, AuditAction::Unlock, stamp, now).await?;
        tx.commit().await?;
        Ok(released)
    }

    async fn lock_get(&self, id: Uuid) -> Result<Option<Lock>, StoreError> {
        let sql = format!("SELECT {LOCK_COLUMNS} FROM locks WHERE id = ?1");
        let row = sqlx::query(&sql)
            .bind(id.to_string())
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(lock_from_row).transpose()
    }

    async fn lock_list(&self, query: &LockQuery) -> Result<Vec<Lock>, StoreError> {
        let sql = format!(
            "SELECT {LOCK_COLUMNS} FROM locks
             WHERE (?1 IS NULL OR repo = ?1) AND (?2 IS NULL OR pr = ?2)
             ORDER BY repo, dir, workspace, project"
        );
        let rows = sqlx::query(&sql)
            .bind(&query.repo)
            .bind(query.pr.map(pr_column).transpose()?)
            .fetch_all(&self.reader)
            .await?;
        rows.iter().map(lock_from_row).collect()
    }

    async fn pr_closed(
        &self,
        repo: &str,
        pr: u64,
        stamp: &AuditStamp,
    ) -> Result<ClosedPr, StoreError> {
        let now = rows::now_micros();
        let mut tx = self.writer.begin().await?;
        let release = Release::Pr {
            repo: repo.to_owned(),
            pr,
            filter: KeyFilter::default(),
        };
        let released = delete_locks(&mut tx, &release).await?;
        record_released(&mut tx, &released, AuditAction::PrClosed, stamp, now).await?;
        let plans_deleted = plans::delete_pr(&mut tx, repo, pr).await?;
        plans::delete_comments(&mut tx, repo, pr).await?;
        tx.commit().await?;
        Ok(ClosedPr {
            released,
            plans_deleted,
        })
    }

    async fn plan_save(&self, plan: &NewPlan) -> Result<SavedPlan, StoreError> {
        let now = rows::now_micros();
        let mut tx = self.writer.begin().await?;
        plans::supersede_key(&mut tx, &plan.key, plan.pr, now).await?;
        let saved = plans::insert(&mut tx, plan, now).await?;
        // The lock it was made under shows its summary (the lock is this PR's, if still held).
        sqlx::query(
            "UPDATE locks SET summary = ?1, planned_at = ?2
             WHERE repo = ?3 AND dir = ?4 AND workspace = ?5 AND project = ?6 AND pr = ?7",
        )
        .bind(&plan.summary)
        .bind(now)
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
        let mut conn = self.reader.acquire().await?;
        plans::get(&mut conn, id).await
    }

    async fn plan_list(&self, query: &PlanQuery) -> Result<Vec<SavedPlan>, StoreError> {
        let mut conn = self.reader.acquire().await?;
        plans::list(&mut conn, query).await
    }

    async fn plan_supersede_pr(&self, repo: &str, pr: u64) -> Result<u64, StoreError> {
        let mut conn = self.writer.acquire().await?;
        plans::supersede_pr(&mut conn, repo, pr, rows::now_micros()).await
    }

    async fn plan_comments_replace(
        &self,
        repo: &str,
        pr: u64,
        comments: &[u64],
    ) -> Result<Vec<u64>, StoreError> {
        let mut tx = self.writer.begin().await?;
        let previous =
            plans::replace_comments(&mut tx, repo, pr, comments, rows::now_micros()).await?;
        tx.commit().await?;
        Ok(previous)
    }

    async fn audit_append(&self, event: &NewAuditEvent) -> Result<AuditEvent, StoreError> {
        let mut conn = self.writer.acquire().await?;
        audit::insert(&mut conn, event, rows::now_micros()).await
    }

    async fn audit_list(
        &self,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<AuditEvent>, StoreError> {
        audit::list(&self.reader, limit, before).await
    }

    async fn apply_switch(&self) -> Result<ApplySwitch, StoreError> {
        audit::switch(&self.reader).await
    }

    async fn set_apply_switch(
        &self,
        enabled: bool,
        stamp: &AuditStamp,
    ) -> Result<ApplySwitch, StoreError> {
        audit::set_switch(&self.writer, enabled, stamp).await
    }
}
