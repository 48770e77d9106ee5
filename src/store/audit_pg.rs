//! Audit events and the apply switch in PostgreSQL; called by `locks_pg.rs`. A concurrent
//! switch change waits on the row lock, then finds nothing to change: one audit event per change.

use sqlx::postgres::{PgPool, PgRow};
use sqlx::{PgConnection, Row};

use super::StoreError;
use super::locks::{
    action_from_column, actor_from_columns, pr_column, pr_from_column, switch_event,
};
use crate::locks::{ApplySwitch, AuditEvent, AuditStamp, NewAuditEvent};

const AUDIT_COLUMNS: &str = "seq, at, actor, actor_via, action, repo, pr, target, detail";
const SWITCH_COLUMNS: &str = "enabled, changed_by, changed_via, changed_at, reason";

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

pub(super) async fn insert(
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

pub(super) async fn list(
    pool: &PgPool,
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
        .fetch_all(pool)
        .await?;
    rows.iter().map(audit_from_row).collect()
}

pub(super) async fn switch(pool: &PgPool) -> Result<ApplySwitch, StoreError> {
    let sql = format!("SELECT {SWITCH_COLUMNS} FROM apply_switch WHERE id = 1");
    let row = sqlx::query(&sql).fetch_one(pool).await?;
    switch_from_row(&row)
}

pub(super) async fn set_switch(
    pool: &PgPool,
    enabled: bool,
    stamp: &AuditStamp,
) -> Result<ApplySwitch, StoreError> {
    let mut tx = pool.begin().await?;
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
            insert(&mut tx, &switch_event(enabled, stamp)).await?;
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
