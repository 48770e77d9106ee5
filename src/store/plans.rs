//! The store side of saved plans and their PR comments (owned by `locks`): [`PlanStore`],
//! written once for both backends over [`Db`]. A PR has at most one current plan per key (a
//! partial unique index); saving supersedes the one before in the same transaction.

use async_trait::async_trait;
use uuid::Uuid;

use super::StoreError;
use super::locks::{
    comment_column, comment_ids, key_from_columns, pr_column, pr_from_column, project_column,
};
use super::sql::{Db, On, Row, Sql};
use crate::locks::{LockKey, NewPlan, PlanQuery, PlanSource, SavedPlan};

/// Saved plans and the PR comments that show them; implemented once for both backends.
#[async_trait]
pub trait PlanStore: Send + Sync {
    /// Saves a plan and supersedes the PR's previous plan for the same key.
    async fn plan_save(&self, plan: &NewPlan) -> Result<SavedPlan, StoreError>;

    async fn plan_get(&self, id: Uuid) -> Result<Option<SavedPlan>, StoreError>;

    /// A PR's plans, newest first.
    async fn plan_list(&self, query: &PlanQuery) -> Result<Vec<SavedPlan>, StoreError>;

    /// Records that the plan `id` was applied in full.
    async fn plan_mark_applied(&self, id: Uuid) -> Result<(), StoreError>;

    /// Marks every current plan of a PR superseded (new commits pushed); returns how many.
    async fn plan_supersede_pr(&self, repo: &str, pr: u64) -> Result<u64, StoreError>;

    /// Marks the PR's current plan for one project superseded (its state changed under it:
    /// `atlantis import`, `atlantis state rm`).
    async fn plan_supersede_key(&self, key: &LockKey, pr: u64) -> Result<(), StoreError>;

    /// Records the policy check of a current plan: `previous` must be the check it holds now
    /// (`None`: none yet), so two approvals at once cannot lose one. Returns false when the
    /// plan was superseded or its check changed meanwhile (read it again and retry).
    async fn plan_policy_check_replace(
        &self,
        id: Uuid,
        previous: Option<&serde_json::Value>,
        check: &serde_json::Value,
    ) -> Result<bool, StoreError>;

    /// Records `comments` as the PR's latest plan comments, replacing the ones recorded before,
    /// and returns those (sorted; the ones in `comments` left out) so the caller can hide them.
    /// `LockStore::pr_closed` forgets them.
    async fn plan_comments_replace(
        &self,
        repo: &str,
        pr: u64,
        comments: &[u64],
    ) -> Result<Vec<u64>, StoreError>;
}

/// Advisory lock class for plan saves on PostgreSQL ("PLAN"); the second key is a hash of the
/// project key.
const SAVE_LOCK: i64 = 0x504C_414E;
const PLAN_COLUMNS: &str = "id, repo, pr, dir, workspace, project, job_id, head_sha, \
     config_hash, state_fingerprint, document, rendered, created_at, superseded_at, applied_at, \
     policy_check";

fn plan_from_row(row: &Row) -> Result<SavedPlan, StoreError> {
    Ok(SavedPlan {
        id: row.id("id")?,
        key: key_from_columns(
            row.get("repo")?,
            &row.get::<String>("dir")?,
            &row.get::<String>("workspace")?,
            &row.get::<String>("project")?,
        )?,
        pr: pr_from_column(row.get("pr")?)?,
        job: row.opt_id("job_id")?,
        source: PlanSource {
            sha: row.get("head_sha")?,
            config_hash: row.get("config_hash")?,
            state_fingerprint: row.get("state_fingerprint")?,
        },
        document: row.json("document")?,
        rendered: row.get("rendered")?,
        created_at: row.time("created_at")?,
        superseded_at: row.opt_time("superseded_at")?,
        applied_at: row.opt_time("applied_at")?,
        policy_check: row.opt_json("policy_check")?,
    })
}

/// Marks the current plan of `pr` for `key` superseded.
pub(super) async fn supersede_key(on: On<'_>, key: &LockKey, pr: u64) -> Result<(), StoreError> {
    Sql::new(
        "UPDATE plans SET superseded_at = {now}
         WHERE repo = $1 AND pr = $2 AND dir = $3 AND workspace = $4 AND project = $5
           AND superseded_at IS NULL",
    )
    .bind(&key.repo)
    .bind(pr_column(pr)?)
    .bind(key.dir.as_str())
    .bind(key.workspace.as_str())
    .bind(project_column(key.project.as_ref()))
    .execute(on)
    .await?;
    Ok(())
}

/// Deletes a closed PR's plans and forgets its plan comments; returns how many plans went.
pub(super) async fn delete_pr(
    on: &mut super::sql::Tx,
    repo: &str,
    pr: u64,
) -> Result<u64, StoreError> {
    let deleted = Sql::new("DELETE FROM plans WHERE repo = $1 AND pr = $2")
        .bind(repo)
        .bind(pr_column(pr)?)
        .execute(&mut *on)
        .await?;
    Sql::new("DELETE FROM plan_comments WHERE repo = $1 AND pr = $2")
        .bind(repo)
        .bind(pr_column(pr)?)
        .execute(on)
        .await?;
    Ok(deleted)
}

#[async_trait]
impl PlanStore for Db {
    async fn plan_save(&self, plan: &NewPlan) -> Result<SavedPlan, StoreError> {
        let mut tx = self.begin().await?;
        if tx.is_postgres() {
            // Concurrent saves for one project of a PR wait for each other until commit, so
            // each supersedes the one before instead of failing on the one-current-plan index.
            // (SQLite's one writer connection already runs them one after the other.)
            Sql::new("SELECT pg_advisory_xact_lock(CAST($1 AS INTEGER), hashtext($2))")
                .bind(SAVE_LOCK)
                .bind(format!("{} pr={}", plan.key, plan.pr))
                .execute(&mut tx)
                .await?;
        }
        supersede_key((&mut tx).into(), &plan.key, plan.pr).await?;
        let row = Sql::new(format!(
            "INSERT INTO plans (id, repo, pr, dir, workspace, project, job_id, head_sha,
                 config_hash, state_fingerprint, document, rendered, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, {{now}})
             RETURNING {PLAN_COLUMNS}"
        ))
        .bind(Uuid::new_v4())
        .bind(&plan.key.repo)
        .bind(pr_column(plan.pr)?)
        .bind(plan.key.dir.as_str())
        .bind(plan.key.workspace.as_str())
        .bind(project_column(plan.key.project.as_ref()))
        .bind(plan.job)
        .bind(&plan.source.sha)
        .bind(&plan.source.config_hash)
        .bind(&plan.source.state_fingerprint)
        .bind(&plan.document)
        .bind(&plan.rendered)
        .fetch_one(&mut tx)
        .await?;
        let saved = plan_from_row(&row)?;
        // The lock it was made under shows its summary (the lock is this PR's, if still held).
        Sql::new(
            "UPDATE locks SET summary = $1, planned_at = {now}
             WHERE repo = $2 AND dir = $3 AND workspace = $4 AND project = $5 AND pr = $6",
        )
        .bind(&plan.summary)
        .bind(&plan.key.repo)
        .bind(plan.key.dir.as_str())
        .bind(plan.key.workspace.as_str())
        .bind(project_column(plan.key.project.as_ref()))
        .bind(pr_column(plan.pr)?)
        .execute(&mut tx)
        .await?;
        tx.commit().await?;
        Ok(saved)
    }

    async fn plan_get(&self, id: Uuid) -> Result<Option<SavedPlan>, StoreError> {
        let row = Sql::new(format!("SELECT {PLAN_COLUMNS} FROM plans WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.read())
            .await?;
        row.as_ref().map(plan_from_row).transpose()
    }

    async fn plan_list(&self, query: &PlanQuery) -> Result<Vec<SavedPlan>, StoreError> {
        let rows = Sql::new(format!(
            "SELECT {PLAN_COLUMNS} FROM plans
             WHERE repo = $1 AND pr = $2 AND (NOT $3 OR superseded_at IS NULL)
             ORDER BY seq DESC"
        ))
        .bind(&query.repo)
        .bind(pr_column(query.pr)?)
        .bind(query.current_only)
        .fetch_all(self.read())
        .await?;
        rows.iter().map(plan_from_row).collect()
    }

    async fn plan_mark_applied(&self, id: Uuid) -> Result<(), StoreError> {
        Sql::new("UPDATE plans SET applied_at = {now} WHERE id = $1")
            .bind(id)
            .execute(self.write())
            .await
            .map(drop)
    }

    async fn plan_supersede_pr(&self, repo: &str, pr: u64) -> Result<u64, StoreError> {
        Sql::new(
            "UPDATE plans SET superseded_at = {now}
             WHERE repo = $1 AND pr = $2 AND superseded_at IS NULL",
        )
        .bind(repo)
        .bind(pr_column(pr)?)
        .execute(self.write())
        .await
    }

    async fn plan_supersede_key(&self, key: &LockKey, pr: u64) -> Result<(), StoreError> {
        supersede_key(self.write(), key, pr).await
    }

    async fn plan_policy_check_replace(
        &self,
        id: Uuid,
        previous: Option<&serde_json::Value>,
        check: &serde_json::Value,
    ) -> Result<bool, StoreError> {
        let changed = match previous {
            None => {
                Sql::new(
                    "UPDATE plans SET policy_check = $2
                     WHERE id = $1 AND superseded_at IS NULL AND policy_check IS NULL",
                )
                .bind(id)
                .bind(check)
                .execute(self.write())
                .await?
            }
            Some(previous) => {
                Sql::new(
                    "UPDATE plans SET policy_check = $2
                     WHERE id = $1 AND superseded_at IS NULL AND policy_check = $3",
                )
                .bind(id)
                .bind(check)
                .bind(previous)
                .execute(self.write())
                .await?
            }
        };
        Ok(changed == 1)
    }

    async fn plan_comments_replace(
        &self,
        repo: &str,
        pr: u64,
        comments: &[u64],
    ) -> Result<Vec<u64>, StoreError> {
        let mut tx = self.begin().await?;
        let previous =
            Sql::new("DELETE FROM plan_comments WHERE repo = $1 AND pr = $2 RETURNING comment_id")
                .bind(repo)
                .bind(pr_column(pr)?)
                .fetch_all(&mut tx)
                .await?
                .iter()
                .map(|row| row.get::<i64>("comment_id"))
                .collect::<Result<Vec<_>, _>>()?;
        for id in comments {
            Sql::new(
                "INSERT INTO plan_comments (repo, pr, comment_id, posted_at)
                 VALUES ($1, $2, $3, {now}) ON CONFLICT DO NOTHING",
            )
            .bind(repo)
            .bind(pr_column(pr)?)
            .bind(comment_column(*id)?)
            .execute(&mut tx)
            .await?;
        }
        tx.commit().await?;
        comment_ids(previous, comments)
    }
}
