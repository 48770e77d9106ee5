//! Saved plans in PostgreSQL; called by `locks_pg.rs` inside its connections and transactions.

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};
use uuid::Uuid;

use super::StoreError;
use super::locks::{
    comment_column, comment_ids, key_from_columns, pr_column, pr_from_column, project_column,
};
use crate::locks::{LockKey, NewPlan, PlanQuery, PlanSource, SavedPlan};

/// Advisory lock class for plan saves ("PLAN"); the second key is a hash of the project key.
const SAVE_LOCK: i32 = 0x504C_414E;
const PLAN_COLUMNS: &str = "id, repo, pr, dir, workspace, project, job_id, head_sha, \
     config_hash, state_fingerprint, document, rendered, created_at, superseded_at";

fn plan_from_row(row: &PgRow) -> Result<SavedPlan, StoreError> {
    Ok(SavedPlan {
        id: row.try_get("id")?,
        key: key_from_columns(
            row.try_get("repo")?,
            row.try_get("dir")?,
            row.try_get("workspace")?,
            row.try_get("project")?,
        )?,
        pr: pr_from_column(row.try_get("pr")?)?,
        job: row.try_get("job_id")?,
        source: PlanSource {
            head_sha: row.try_get("head_sha")?,
            config_hash: row.try_get("config_hash")?,
            state_fingerprint: row.try_get("state_fingerprint")?,
        },
        document: row.try_get("document")?,
        rendered: row.try_get("rendered")?,
        created_at: row.try_get("created_at")?,
        superseded_at: row.try_get("superseded_at")?,
    })
}

pub(super) async fn insert(
    conn: &mut PgConnection,
    plan: &NewPlan,
) -> Result<SavedPlan, StoreError> {
    let sql = format!(
        "INSERT INTO plans (id, repo, pr, dir, workspace, project, job_id, head_sha, config_hash,
             state_fingerprint, document, rendered)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         RETURNING {PLAN_COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(Uuid::new_v4())
        .bind(&plan.key.repo)
        .bind(pr_column(plan.pr)?)
        .bind(plan.key.dir.as_str())
        .bind(plan.key.workspace.as_str())
        .bind(project_column(plan.key.project.as_ref()))
        .bind(plan.job)
        .bind(&plan.source.head_sha)
        .bind(&plan.source.config_hash)
        .bind(&plan.source.state_fingerprint)
        .bind(&plan.document)
        .bind(&plan.rendered)
        .fetch_one(&mut *conn)
        .await?;
    plan_from_row(&row)
}

/// Makes concurrent saves for one project of a PR wait for each other until commit, so each
/// supersedes the one before instead of failing on the one-current-plan index.
pub(super) async fn serialise_saves(
    conn: &mut PgConnection,
    key: &LockKey,
    pr: u64,
) -> Result<(), StoreError> {
    sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
        .bind(SAVE_LOCK)
        .bind(format!("{key} pr={pr}"))
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Marks the current plan of `pr` for `key` superseded.
pub(super) async fn supersede_key(
    conn: &mut PgConnection,
    key: &LockKey,
    pr: u64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE plans SET superseded_at = now()
         WHERE repo = $1 AND pr = $2 AND dir = $3 AND workspace = $4 AND project = $5
           AND superseded_at IS NULL",
    )
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
    conn: &mut PgConnection,
    repo: &str,
    pr: u64,
) -> Result<u64, StoreError> {
    let done = sqlx::query(
        "UPDATE plans SET superseded_at = now()
         WHERE repo = $1 AND pr = $2 AND superseded_at IS NULL",
    )
    .bind(repo)
    .bind(pr_column(pr)?)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected())
}

pub(super) async fn delete_pr(
    conn: &mut PgConnection,
    repo: &str,
    pr: u64,
) -> Result<u64, StoreError> {
    let done = sqlx::query("DELETE FROM plans WHERE repo = $1 AND pr = $2")
        .bind(repo)
        .bind(pr_column(pr)?)
        .execute(&mut *conn)
        .await?;
    Ok(done.rows_affected())
}

pub(super) async fn get(
    conn: &mut PgConnection,
    id: Uuid,
) -> Result<Option<SavedPlan>, StoreError> {
    let sql = format!("SELECT {PLAN_COLUMNS} FROM plans WHERE id = $1");
    let row = sqlx::query(&sql)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(plan_from_row).transpose()
}

pub(super) async fn list(
    conn: &mut PgConnection,
    query: &PlanQuery,
) -> Result<Vec<SavedPlan>, StoreError> {
    let sql = format!(
        "SELECT {PLAN_COLUMNS} FROM plans
         WHERE repo = $1 AND pr = $2 AND (NOT $3 OR superseded_at IS NULL)
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
    conn: &mut PgConnection,
    repo: &str,
    pr: u64,
    ids: &[u64],
) -> Result<Vec<u64>, StoreError> {
    let pr = pr_column(pr)?;
    let previous: Vec<i64> = sqlx::query_scalar(
        "DELETE FROM plan_comments WHERE repo = $1 AND pr = $2 RETURNING comment_id",
    )
    .bind(repo)
    .bind(pr)
    .fetch_all(&mut *conn)
    .await?;
    let new = ids
        .iter()
        .map(|id| comment_column(*id))
        .collect::<Result<Vec<i64>, _>>()?;
    sqlx::query(
        "INSERT INTO plan_comments (repo, pr, comment_id)
         SELECT $1, $2, id FROM UNNEST($3::BIGINT[]) AS id
         ON CONFLICT DO NOTHING",
    )
    .bind(repo)
    .bind(pr)
    .bind(&new)
    .execute(&mut *conn)
    .await?;
    comment_ids(previous, ids)
}

/// Forgets a closed PR's plan comments.
pub(super) async fn delete_comments(
    conn: &mut PgConnection,
    repo: &str,
    pr: u64,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM plan_comments WHERE repo = $1 AND pr = $2")
        .bind(repo)
        .bind(pr_column(pr)?)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
