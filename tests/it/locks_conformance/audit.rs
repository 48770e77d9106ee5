//! The audit trail and the apply switch; and that all of it outlives the process.

use std::sync::Arc;

use atoll::locks::{Actor, ActorVia, AuditAction, LockQuery, NewAuditEvent, PlanQuery};
use sqlx::Connection;

use super::{REPO, key, owner, plan, stamp, take};
use crate::support::TestStore;

fn event(n: u32) -> NewAuditEvent {
    NewAuditEvent {
        actor: Actor::new(format!("user{n}"), ActorVia::Comment),
        action: AuditAction::Apply,
        repo: Some(REPO.to_owned()),
        pr: Some(u64::from(n)),
        target: format!("envs/{n}"),
        detail: "atlantis apply".to_owned(),
    }
}

pub(crate) async fn audit_events_list_newest_first_and_page_backwards(db: &TestStore) {
    let s = &*db.store;
    let mut appended = Vec::new();
    for n in 1..=5 {
        appended.push(s.audit().audit_append(&event(n)).await.expect("append"));
    }
    assert!(appended.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(appended[2].actor, Actor::new("user3", ActorVia::Comment));
    assert_eq!(appended[2].pr, Some(3));
    let page = s.audit().audit_list(2, None).await.expect("page 1");
    assert_eq!(page, vec![appended[4].clone(), appended[3].clone()]);
    let next = s
        .audit()
        .audit_list(2, Some(page[1].seq))
        .await
        .expect("page 2");
    assert_eq!(next, vec![appended[2].clone(), appended[1].clone()]);
    let last = s
        .audit()
        .audit_list(10, Some(next[1].seq))
        .await
        .expect("page 3");
    assert_eq!(last, vec![appended[0].clone()]);
}

/// Raw SQL against the same database: the table refuses updates and deletes.
pub(crate) async fn audit_events_cannot_be_changed_or_deleted(db: &TestStore) {
    db.store
        .audit()
        .audit_append(&event(1))
        .await
        .expect("append");
    let statements = [
        "UPDATE audit_events SET actor = 'mallory'",
        "DELETE FROM audit_events",
    ];
    for sql in statements {
        let outcome = if db.url.starts_with("sqlite") {
            let mut conn = sqlx::SqliteConnection::connect(&db.url)
                .await
                .expect("conn");
            sqlx::query(sql).execute(&mut conn).await.map(|_| ())
        } else {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("conn");
            sqlx::query(sql).execute(&mut conn).await.map(|_| ())
        };
        let err = outcome
            .expect_err("the audit trail must refuse it")
            .to_string();
        assert!(err.contains("append-only"), "{sql}: {err}");
    }
    let events = db.store.audit().audit_list(10, None).await.expect("list");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].actor.name, "user1");
}

pub(crate) async fn apply_switch_starts_on_with_nobody_named(db: &TestStore) {
    let switch = db.store.audit().apply_switch().await.expect("switch");
    assert!(switch.enabled);
    assert_eq!(
        (switch.changed_by, switch.changed_at, switch.reason),
        (None, None, None)
    );
}

pub(crate) async fn turning_apply_switch_off_records_who_and_audits_once(db: &TestStore) {
    let s = &*db.store;
    let off = stamp("admin", ActorVia::Dashboard, "maintenance window");
    let switch = s.audit().set_apply_switch(false, &off).await.expect("off");
    assert!(!switch.enabled);
    assert_eq!(switch.changed_by.as_ref(), Some(&off.actor));
    assert_eq!(switch.reason.as_deref(), Some("maintenance window"));
    assert!(switch.changed_at.is_some());
    assert_eq!(s.audit().apply_switch().await.expect("read"), switch);
    // Off again: nothing changes, nothing is audited.
    let again = stamp("other", ActorVia::Api, "again");
    assert_eq!(
        s.audit()
            .set_apply_switch(false, &again)
            .await
            .expect("off again"),
        switch
    );
    let on = stamp("admin", ActorVia::Dashboard, "done");
    assert!(
        s.audit()
            .set_apply_switch(true, &on)
            .await
            .expect("on")
            .enabled
    );
    let actions: Vec<_> = s
        .audit()
        .audit_list(10, None)
        .await
        .expect("audit")
        .iter()
        .map(|e| (e.action, e.actor.name.clone()))
        .collect();
    assert_eq!(
        actions,
        vec![
            (AuditAction::ApplySwitchOn, "admin".to_owned()),
            (AuditAction::ApplySwitchOff, "admin".to_owned()),
        ]
    );
}

pub(crate) async fn concurrent_switch_offs_audit_exactly_once(db: &TestStore) {
    let other = db.reopen().await;
    let mut tasks = Vec::new();
    for n in 0..8 {
        let store = if n % 2 == 0 {
            Arc::clone(&db.store)
        } else {
            Arc::clone(&other)
        };
        tasks.push(tokio::spawn(async move {
            let by = stamp(&format!("admin{n}"), ActorVia::Dashboard, "off");
            store.audit().set_apply_switch(false, &by).await
        }));
    }
    for task in tasks {
        let switch = task.await.expect("task").expect("set");
        assert!(!switch.enabled);
    }
    let events = db.store.audit().audit_list(10, None).await.expect("audit");
    assert_eq!(events.len(), 1, "{events:?}");
    let switch = db.store.audit().apply_switch().await.expect("read");
    assert_eq!(switch.changed_by.as_ref(), Some(&events[0].actor));
}

pub(crate) async fn locks_plans_and_switch_survive_reopening_the_store(db: &TestStore) {
    let k = key("envs/dev", "default", None);
    take(&*db.store, std::slice::from_ref(&k), &owner(3, "a")).await;
    let saved = db
        .store
        .plans()
        .plan_save(&plan(&k, 3, "a"))
        .await
        .expect("save");
    let locks = db
        .store
        .locks()
        .lock_list(&LockQuery::default())
        .await
        .expect("list");
    let off = stamp("admin", ActorVia::Dashboard, "freeze");
    db.store
        .audit()
        .set_apply_switch(false, &off)
        .await
        .expect("off");
    let reopened = db.reopen().await;
    assert_eq!(
        reopened
            .locks()
            .lock_list(&LockQuery::default())
            .await
            .expect("list"),
        locks
    );
    let plans = reopened
        .plans()
        .plan_list(&PlanQuery {
            repo: REPO.to_owned(),
            pr: 3,
            current_only: true,
        })
        .await
        .expect("plans");
    assert_eq!(plans, vec![saved]);
    assert!(
        !reopened
            .audit()
            .apply_switch()
            .await
            .expect("switch")
            .enabled
    );
    assert_eq!(
        reopened
            .audit()
            .audit_list(10, None)
            .await
            .expect("audit")
            .len(),
        1
    );
}
