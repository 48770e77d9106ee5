//! Saved plans in SQLite; called by `locks_sqlite.rs` inside its connections and transactions.

use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};
use uuid::Uuid;

use super::StoreError;
use super::locks::{
    comment_column, comment_ids, key_from_columns, pr_column, pr_from_column, project_column,
};
use super::locks_sqlite::{time_from_micros, uuid_column};
use super::rows;
use crate::locks::{LockKey, NewPlan, PlanQuery, PlanSource, SavedPlan};

const PLAN_COLUMNS: &str = "id, repo, pr, dir, workspace, project, job_id, head_sha, \
     config_hash, state_fingerprint, document, rendered, created_at, superseded_at";

fn plan_from_row(row: &SqliteRow) -> Result<SavedPlan, StoreError> {
    let document: String = row.try_get("document")?;
    let superseded_at: Option<i64> = row.try_get("superseded_at")?;
    Ok(SavedPlan {
        id: rows::uuid_from_db(row.try_get("id")?)?,
        key: key_from_columns(
            row.try_get("repo")?,
            row.try_get("dir")?,
            row.try_get("workspace")?,
            row.try_get("project")?,
        )?,
        pr: pr_from_column(row.try_get("pr")?)?,
        job: uuid_column(row.try_get("job_id")?)?,
        source: PlanSource {
            head_sha: row.try_get("head_sha")?,
            config_hash: row.try_get("config_hash")?,
            state_fingerprint: row.try_get("state_fingerprint")?,
        },
        document: serde_json::from_str(&document)
            .map_err(|e| StoreError::Internal(format!("stored plan document: {e}")))?,
        rendered: row.try_get("rendered")?,
        created_at: time_from_micros(row.try_get("created_at")?)?,
        superseded_at: superseded_at.map(time_from_micros).transpose()?,
    })
}

pub(super) async fn insert(
    conn: &mut SqliteConnection,
    plan: &NewPlan,
    now: i64,
) -> Result<SavedPlan, StoreError> {
    let sql = format!(
        "INSERT INTO plans (id, repo, pr, dir, workspace, project, job_id, head_sha, config_hash,
             state_fingerprint, document, rendered, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         RETURNING {PLAN_COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(Uuid::new_v4().to_string())
        .bind(&plan.key.repo)
        .bind(pr_column(plan.pr)?)
        .bind(plan.key.dir.as_str())
        .bind(plan.key.workspace.as_str())
        .bind(project_column(plan.key.project.as_ref()))
        .bind(plan.job.map(|j| j.to_string()))
        .bind(&plan.source.head_sha)
        .bind(&plan.source.config_hash)
        .bind(&plan.source.state_fingerprint)
        .bind(plan.document.to_string())
        .bind(&plan.rendered)
        .bind(now)
        .fetch_one(&mut *conn)
        .await?;
    plan_from_row(&row)
}

/// Marks the current plan of `pr` for `key` superseded.
pub(super) async fn supersede_key(
    conn: &mut SqliteConnection,
    key: &LockKey,
    pr: u64,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE plans SET superseded_at = ?1
         WHERE repo = ?2 AND pr = ?3 AND dir = ?4 AND workspace = ?5 AND project = ?6
           AND superseded_at IS NULL",
    )
    .bind(now)
    .bind(&key.repo)
    .bind(pr_column(pr)?)
    .bind(key.dir.as_str())
    .bind(key.workspace.as_str())
    .bind(project_column(key.project.as_ref()))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub(super) async fn supersede_pr(
    conn: &mut SqliteConnection,
    repo: &str,
    pr: u64,
    now: i64,
) -> Result<u64, StoreError> {
    let done = sqlx::query(
        "UPDATE plans SET superseded_at = ?1
         WHERE repo = ?2 AND pr = ?3 AND superseded_at IS NULL",
    )
    .bind(now)
    .bind(repo)
    .bind(pr_column(pr)?)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected())
}

pub(super) async fn delete_pr(
    conn: &mut SqliteConnection,
    repo: &str,
    pr: u64,
) -> Result<u64, StoreError> {
    let done = sqlx::query("DELETE FROM plans WHERE repo = ?1 AND pr = ?2")
        .bind(repo)
        .bind(pr_column(pr)?)
        .execute(&mut *conn)
        .await?;
    Ok(done.rows_affected())
}

pub(super) async fn get(
    conn: &mut SqliteConnection,
    id: Uuid,
) -> Result<Option<SavedPlan>, StoreError> {
    let sql = format!("SELECT {PLAN_COLUMNS} FROM plans WHERE id = ?1");
    let row = sqlx::query(&sql)
        .bind(id.to_string())
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(plan_from_row).transpose()
}

pub(super) async fn list(
    conn: &mut SqliteConnection,
    query: &PlanQuery,
) -> Result<Vec<SavedPlan>, StoreError> {
    let sql = format!(
        "SELECT {PLAN_COLUMNS} FROM plans
         WHERE repo = ?1 AND pr = ?2 AND (NOT ?3 OR superseded_at IS NULL)
         ORDER BY seq DESC"
    );
    let rows = sqlx::query(&sql)
        .bind(&query.repo)
        .bind(pr_column(query.pr)?)
        .bind(query.current_only)
        .fetch_all(&mut *conn)
        .await?;
    rows.iter().map(plan_from_row).collect()
}

/// Replaces the PR's recorded plan comments with `ids`; returns the ones recorded before.
pub(super) async fn replace_comments(
    conn: &mut SqliteConnection,
    repo: &str,
    pr: u64,
    ids: &[u64],
    now: i64,
) -> Result<Vec<u64>, StoreError> {
    let pr = pr_column(pr)?;
    let previous: Vec<i64> = sqlx::query_scalar(
        "DELETE FROM plan_comments WHERE repo = ?1 AND pr = ?2 RETURNING comment_id",
    )
    .bind(repo)
    .bind(pr)
    .fetch_all(&mut *conn)
    .await?;
    for id in ids {
        sqlx::query(
            "INSERT INTO plan_comments (repo, pr, comment_id, posted_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT DO NOTHING",
        )
        .bind(repo)
        .bind(pr)
        .bind(comment_column(*id)?)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    comment_ids(previous, ids)
}

/// Forgets a closed PR's plan comments.
pub(super) async fn delete_comments(
    conn: &mut SqliteConnection,
    repo: &str,
    pr: u64,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM plan_comments WHERE repo = ?1 AND pr = ?2")
        .bind(repo)
        .bind(pr_column(pr)?)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
