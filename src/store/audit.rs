//! The store side of the audit log and the apply switch (owned by `locks`): [`AuditStore`],
//! written once for both backends over [`Db`]. A concurrent switch change waits on the row (the
//! writer connection on SQLite, the row lock on PostgreSQL), then finds nothing to change: one
//! audit event per change.

use async_trait::async_trait;

use super::StoreError;
use super::locks::{action_from_column, actor_from_columns, pr_column, pr_from_column};
use super::sql::{Db, On, Row, Sql};
use crate::locks::{ApplySwitch, AuditAction, AuditEvent, AuditStamp, NewAuditEvent};

/// The audit log and the apply switch; implemented once for both backends.
#[async_trait]
pub trait AuditStore: Send + Sync {
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

const AUDIT_COLUMNS: &str = "seq, at, actor, actor_via, action, repo, pr, target, detail";
const SWITCH_COLUMNS: &str = "enabled, changed_by, changed_via, changed_at, reason";

fn audit_from_row(row: &Row) -> Result<AuditEvent, StoreError> {
    let pr: Option<i64> = row.get("pr")?;
    Ok(AuditEvent {
        seq: row.get("seq")?,
        at: row.time("at")?,
        actor: actor_from_columns(row.get("actor")?, &row.get::<String>("actor_via")?)?,
        action: action_from_column(&row.get::<String>("action")?)?,
        repo: row.get("repo")?,
        pr: pr.map(pr_from_column).transpose()?,
        target: row.get("target")?,
        detail: row.get("detail")?,
    })
}

fn switch_from_row(row: &Row) -> Result<ApplySwitch, StoreError> {
    let by: Option<String> = row.get("changed_by")?;
    let via: Option<String> = row.get("changed_via")?;
    Ok(ApplySwitch {
        enabled: row.get("enabled")?,
        changed_by: match (by, via) {
            (Some(name), Some(via)) => Some(actor_from_columns(name, &via)?),
            _ => None,
        },
        changed_at: row.opt_time("changed_at")?,
        reason: row.get("reason")?,
    })
}

/// Appends `event` where `on` says (inside a lock or switch transaction, or on its own).
pub(super) async fn insert(on: On<'_>, event: &NewAuditEvent) -> Result<AuditEvent, StoreError> {
    let row = Sql::new(format!(
        "INSERT INTO audit_events (at, actor, actor_via, action, repo, pr, target, detail)
         VALUES ({{now}}, $1, $2, $3, $4, $5, $6, $7) RETURNING {AUDIT_COLUMNS}"
    ))
    .bind(&event.actor.name)
    .bind(event.actor.via.as_str())
    .bind(event.action.as_str())
    .bind(&event.repo)
    .bind(event.pr.map(pr_column).transpose()?)
    .bind(&event.target)
    .bind(&event.detail)
    .fetch_one(on)
    .await?;
    audit_from_row(&row)
}

/// The audit event written when the apply switch changes.
fn switch_event(enabled: bool, stamp: &AuditStamp) -> NewAuditEvent {
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

fn read_switch() -> Sql {
    Sql::new(format!(
        "SELECT {SWITCH_COLUMNS} FROM apply_switch WHERE id = 1"
    ))
}

#[async_trait]
impl AuditStore for Db {
    async fn audit_append(&self, event: &NewAuditEvent) -> Result<AuditEvent, StoreError> {
        insert(self.write(), event).await
    }

    async fn audit_list(
        &self,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<AuditEvent>, StoreError> {
        let rows = Sql::new(format!(
            "SELECT {AUDIT_COLUMNS} FROM audit_events
             WHERE (CAST($1 AS BIGINT) IS NULL OR seq < $1)
             ORDER BY seq DESC LIMIT $2"
        ))
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(self.read())
        .await?;
        rows.iter().map(audit_from_row).collect()
    }

    async fn apply_switch(&self) -> Result<ApplySwitch, StoreError> {
        switch_from_row(&read_switch().fetch_one(self.read()).await?)
    }

    async fn set_apply_switch(
        &self,
        enabled: bool,
        stamp: &AuditStamp,
    ) -> Result<ApplySwitch, StoreError> {
        let mut tx = self.begin().await?;
        let changed = Sql::new(format!(
            "UPDATE apply_switch SET enabled = $1, changed_by = $2, changed_via = $3,
                 changed_at = {{now}}, reason = $4
             WHERE id = 1 AND enabled <> $1 RETURNING {SWITCH_COLUMNS}"
        ))
        .bind(enabled)
        .bind(&stamp.actor.name)
        .bind(stamp.actor.via.as_str())
        .bind(&stamp.detail)
        .fetch_optional(&mut tx)
        .await?;
        let row = match changed {
            Some(row) => {
                insert((&mut tx).into(), &switch_event(enabled, stamp)).await?;
                row
            }
            None => read_switch().fetch_one(&mut tx).await?,
        };
        tx.commit().await?;
        switch_from_row(&row)
    }
}
