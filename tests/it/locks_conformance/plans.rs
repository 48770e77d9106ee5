//! Saved plans: provenance, supersession and the latest plan per project.

use atoll::locks::{ActorVia, PlanQuery, SavedPlan};
use atoll::store::Store;

use super::{REPO, key, plan, stamp};
use crate::support::TestStore;

async fn plans_of(s: &dyn Store, pr: u64, current_only: bool) -> Vec<SavedPlan> {
    let query = PlanQuery {
        repo: REPO.to_owned(),
        pr,
        current_only,
    };
    s.plans().plan_list(&query).await.expect("plan_list")
}

pub(crate) async fn saving_a_plan_supersedes_only_the_same_keys_previous_plan(db: &TestStore) {
    let s = &*db.store;
    let x = key("x", "default", None);
    let y = key("y", "default", None);
    let x1 = s.plans().plan_save(&plan(&x, 7, "a")).await.expect("x1");
    let y1 = s.plans().plan_save(&plan(&y, 7, "a")).await.expect("y1");
    let other_pr = s
        .plans()
        .plan_save(&plan(&x, 8, "z"))
        .await
        .expect("other PR");
    let x2 = s.plans().plan_save(&plan(&x, 7, "b")).await.expect("x2");
    assert!(x1.superseded_at.is_none() && x2.superseded_at.is_none());
    let current: Vec<_> = plans_of(s, 7, true).await.iter().map(|p| p.id).collect();
    assert_eq!(
        current,
        vec![x2.id, y1.id],
        "latest per project, newest first"
    );
    let all: Vec<_> = plans_of(s, 7, false).await.iter().map(|p| p.id).collect();
    assert_eq!(all, vec![x2.id, y1.id, x1.id]);
    let x1_now = s.plans().plan_get(x1.id).await.expect("get").expect("kept");
    assert!(x1_now.superseded_at.is_some_and(|at| at >= x1.created_at));
    let other_now = s
        .plans()
        .plan_get(other_pr.id)
        .await
        .expect("get")
        .expect("kept");
    assert!(
        other_now.superseded_at.is_none(),
        "another PR's plan is untouched"
    );
}

pub(crate) async fn saved_plan_keeps_document_and_provenance(db: &TestStore) {
    let s = &*db.store;
    let k = key("envs/dev", "staging", Some("prod/web"));
    let mut new = plan(&k, 42, "0123456789abcdef0123456789abcdef01234567");
    new.document = serde_json::json!({
        "format_version": "1",
        "resource_changes": [{"address": "a.b[\"c\"]", "attributes": [{"path": "cores", "before": 2, "after": 4}]}],
        "summary": {"add": 0, "change": 1, "restart": 0, "note": "ünïcode ✓"}
    });
    new.rendered = "line\n".repeat(5000);
    let saved = s.plans().plan_save(&new).await.expect("save");
    assert_eq!(saved.key, k);
    assert_eq!(saved.pr, 42);
    assert_eq!(saved.job, new.job);
    assert_eq!(saved.source, new.source);
    assert_eq!(saved.document, new.document);
    assert_eq!(saved.rendered, new.rendered);
    assert_eq!(
        s.plans().plan_get(saved.id).await.expect("get"),
        Some(saved.clone())
    );
    assert!(saved.source.stale_against(&new.source).is_empty());
    assert_eq!(
        s.plans()
            .plan_get(uuid::Uuid::new_v4())
            .await
            .expect("get unknown"),
        None
    );
}

pub(crate) async fn new_commits_supersede_every_current_plan_of_the_pr(db: &TestStore) {
    let s = &*db.store;
    s.plans()
        .plan_save(&plan(&key("x", "default", None), 7, "a"))
        .await
        .expect("x");
    s.plans()
        .plan_save(&plan(&key("y", "default", None), 7, "a"))
        .await
        .expect("y");
    s.plans()
        .plan_save(&plan(&key("x", "default", None), 8, "a"))
        .await
        .expect("other");
    assert_eq!(
        s.plans()
            .plan_supersede_pr(REPO, 7)
            .await
            .expect("supersede"),
        2
    );
    assert!(plans_of(s, 7, true).await.is_empty());
    assert_eq!(plans_of(s, 7, false).await.len(), 2, "history is kept");
    assert_eq!(plans_of(s, 8, true).await.len(), 1);
    assert_eq!(
        s.plans().plan_supersede_pr(REPO, 7).await.expect("again"),
        0
    );
}

/// Eight saves of the same project race through two handles: all succeed, and exactly one
/// plan is current afterwards.
pub(crate) async fn concurrent_saves_leave_exactly_one_current_plan(db: &TestStore) {
    let other = db.reopen().await;
    let k = key("envs/dev", "default", None);
    let mut tasks = Vec::new();
    for n in 0..8 {
        let store = if n % 2 == 0 {
            std::sync::Arc::clone(&db.store)
        } else {
            std::sync::Arc::clone(&other)
        };
        let new = plan(&k, 7, &format!("sha{n}"));
        tasks.push(tokio::spawn(
            async move { store.plans().plan_save(&new).await },
        ));
    }
    for task in tasks {
        task.await.expect("task").expect("every save succeeds");
    }
    assert_eq!(plans_of(&*db.store, 7, true).await.len(), 1);
    assert_eq!(plans_of(&*db.store, 7, false).await.len(), 8);
}

pub(crate) async fn plan_comments_are_replaced_per_pr_and_survive_reopening(db: &TestStore) {
    let s = &*db.store;
    let first = s
        .plans()
        .plan_comments_replace(REPO, 4, &[11, 12])
        .await
        .expect("record");
    assert!(first.is_empty(), "nothing recorded before: {first:?}");
    let other_pr = s
        .plans()
        .plan_comments_replace(REPO, 5, &[20])
        .await
        .expect("pr 5");
    assert!(other_pr.is_empty(), "another PR's comments are its own");
    let other_repo = s
        .plans()
        .plan_comments_replace("gitea.example.com/acme/infra", 4, &[30])
        .await
        .expect("other repo");
    assert!(
        other_repo.is_empty(),
        "another repository's comments are its own"
    );
    let reopened = db.reopen().await;
    let superseded = reopened
        .plans()
        .plan_comments_replace(REPO, 4, &[13])
        .await
        .expect("replace");
    assert_eq!(superseded, vec![11, 12]);
    let again = reopened
        .plans()
        .plan_comments_replace(REPO, 4, &[13, 14])
        .await
        .expect("replace again");
    assert!(
        again.is_empty(),
        "a comment still current is not superseded: {again:?}"
    );
    let stamp = stamp("alice", ActorVia::Forge, "pull request merged");
    reopened
        .locks()
        .pr_closed(REPO, 4, &stamp)
        .await
        .expect("close");
    let after_close = reopened
        .plans()
        .plan_comments_replace(REPO, 4, &[15])
        .await
        .expect("after close");
    assert!(
        after_close.is_empty(),
        "closing forgets them: {after_close:?}"
    );
    let pr5 = reopened
        .plans()
        .plan_comments_replace(REPO, 5, &[])
        .await
        .expect("pr 5");
    assert_eq!(pr5, vec![20]);
}

/// The locks page shows what is planned under a lock: saving a plan sets the summary of the
/// lock it was made under, and only while that PR holds it.
pub(crate) async fn saving_a_plan_shows_its_summary_on_the_prs_lock(db: &TestStore) {
    let s = &*db.store;
    let k = key("envs/dev", "default", None);
    let lock = super::take(s, std::slice::from_ref(&k), &super::owner(7, "a"))
        .await
        .remove(0);
    let mut new = plan(&k, 7, "a");
    new.summary = "Plan: 1 to add, 0 to change, 0 to destroy.".to_owned();
    s.plans().plan_save(&new).await.expect("save");
    let now = s
        .locks()
        .lock_get(lock.id)
        .await
        .expect("get")
        .expect("held");
    assert_eq!(
        now.owner.summary,
        "Plan: 1 to add, 0 to change, 0 to destroy."
    );
    // Another PR's plan of the same key (refused a lock elsewhere) leaves the lock alone.
    let mut other = plan(&k, 8, "z");
    other.summary = "Plan: 9 to add, 0 to change, 0 to destroy.".to_owned();
    s.plans().plan_save(&other).await.expect("save");
    let now = s
        .locks()
        .lock_get(lock.id)
        .await
        .expect("get")
        .expect("held");
    assert_eq!(
        now.owner.summary,
        "Plan: 1 to add, 0 to change, 0 to destroy."
    );
}

/// `atlantis import` and `state rm` change one project's state: its current plan of the PR is
/// superseded, no other plan is, and the audit trail takes both actions with the commenter.
pub(crate) async fn a_state_change_supersedes_its_projects_plan_and_is_audited(db: &TestStore) {
    let s = &*db.store;
    let x = key("x", "default", None);
    let y = key("y", "default", None);
    let x1 = s.plans().plan_save(&plan(&x, 7, "a")).await.expect("x1");
    let y1 = s.plans().plan_save(&plan(&y, 7, "a")).await.expect("y1");
    let other_pr = s.plans().plan_save(&plan(&x, 8, "z")).await.expect("x8");
    s.plans()
        .plan_supersede_key(&x, 7)
        .await
        .expect("supersede");
    let current: Vec<_> = plans_of(s, 7, true).await.iter().map(|p| p.id).collect();
    assert_eq!(current, vec![y1.id], "only x's plan of PR 7 is gone");
    assert_eq!(
        plans_of(s, 8, true)
            .await
            .iter()
            .map(|p| p.id)
            .collect::<Vec<_>>(),
        vec![other_pr.id]
    );
    assert!(x1.superseded_at.is_none());
    for action in [
        atoll::locks::AuditAction::Import,
        atoll::locks::AuditAction::StateRm,
    ] {
        let event = atoll::locks::NewAuditEvent {
            actor: atoll::locks::Actor::new("alice", ActorVia::Comment),
            action,
            repo: Some(REPO.to_owned()),
            pr: Some(7),
            target: x.to_string(),
            detail: "atlantis import a.b pve/100".to_owned(),
        };
        let stored = s
            .audit()
            .audit_append(&event)
            .await
            .expect("the schema takes it");
        assert_eq!(stored.action, action);
        assert_eq!(stored.actor.name, "alice");
    }
    let listed = s.audit().audit_list(2, None).await.expect("list");
    assert_eq!(listed[0].action, atoll::locks::AuditAction::StateRm);
}

pub(crate) async fn policy_checks_are_saved_with_the_plan_from_what_was_read_and_a_new_plan_has_none(
    db: &TestStore,
) {
    let s = &*db.store;
    let k = key("envs/dev", "default", None);
    let first = s.plans().plan_save(&plan(&k, 7, "a")).await.expect("save");
    assert_eq!(first.policy_check, None, "a new plan has no check");
    let checked = serde_json::json!({"sets": [{"name": "guests", "failures": ["ünïcode ✓"],
        "approve_count": 1, "approvals": []}]});
    assert!(
        s.plans()
            .plan_policy_check_replace(first.id, None, &checked)
            .await
            .expect("first check")
    );
    assert!(
        !s.plans()
            .plan_policy_check_replace(first.id, None, &checked)
            .await
            .expect("second first check"),
        "a check is written once from none"
    );
    let saved = s
        .plans()
        .plan_get(first.id)
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(saved.policy_check.as_ref(), Some(&checked));
    let approved = serde_json::json!({"sets": [{"name": "guests", "failures": ["ünïcode ✓"],
        "approve_count": 1, "approvals": ["dave"]}]});
    let read = saved.policy_check.clone();
    assert!(
        s.plans()
            .plan_policy_check_replace(first.id, read.as_ref(), &approved)
            .await
            .expect("approve")
    );
    assert!(
        !s.plans()
            .plan_policy_check_replace(first.id, read.as_ref(), &checked)
            .await
            .expect("stale approve"),
        "a write from a check read before another write is refused"
    );
    let second = s
        .plans()
        .plan_save(&plan(&k, 7, "b"))
        .await
        .expect("replan");
    assert_eq!(
        second.policy_check, None,
        "a new plan starts without approvals"
    );
    assert!(
        !s.plans()
            .plan_policy_check_replace(first.id, Some(&approved), &checked)
            .await
            .expect("superseded"),
        "a superseded plan's check is not changed"
    );
    let current = plans_of(s, 7, true).await;
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].policy_check, None);
}
