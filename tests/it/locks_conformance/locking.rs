//! Acquiring and releasing locks, under concurrency too.

use std::sync::Arc;

use atoll::commands::{RepoDir, Workspace};
use atoll::locks::{Acquisition, ActorVia, AuditAction, KeyFilter, LockQuery, PlanQuery, Release};
use atoll::store::Store;
use uuid::Uuid;

use super::{REPO, key, key_in, keys_of, owner, plan, stamp, take};
use crate::support::TestStore;

pub(crate) async fn acquire_takes_every_key_and_lists_owner_info(db: &TestStore) {
    let s = &*db.store;
    let keys = [
        key("envs/prod", "default", None),
        key("envs/dev", "default", None),
    ];
    let me = owner(12, "abc123");
    let locks = take(s, &keys, &me).await;
    // Granted in key order, with the owner as given.
    assert_eq!(
        keys_of(&locks),
        vec![keys[1].clone(), keys[0].clone()],
        "locks come back ordered by key"
    );
    assert!(locks.iter().all(|l| l.owner == me));
    assert!(locks.iter().all(|l| l.locked_at == l.planned_at));
    let listed = s
        .locks()
        .lock_list(&LockQuery::default())
        .await
        .expect("list");
    assert_eq!(listed, locks);
    let got = s.locks().lock_get(locks[0].id).await.expect("get");
    assert_eq!(got.as_ref(), Some(&locks[0]));
    assert_eq!(
        s.locks()
            .lock_get(Uuid::new_v4())
            .await
            .expect("get unknown"),
        None
    );
}

pub(crate) async fn second_pr_plan_reports_lock_owner_and_takes_nothing(db: &TestStore) {
    let s = &*db.store;
    let shared = key("envs/dev", "default", None);
    let free = key("envs/qa", "default", None);
    let first = take(s, std::slice::from_ref(&shared), &owner(12, "aaa")).await;
    let outcome = s
        .locks()
        .lock_acquire(&[free.clone(), shared.clone()], &owner(13, "bbb"))
        .await
        .expect("acquire");
    let Acquisition::Conflict(held) = outcome else {
        panic!("PR 13 must not get a lock PR 12 holds: {outcome:?}");
    };
    assert_eq!(held, first, "the conflict names the holding PR's lock");
    assert_eq!(held[0].owner.pr, 12);
    assert_eq!(held[0].key.plan_flags(), "-d envs/dev");
    // All or nothing: the free key was not taken either.
    let listed = s
        .locks()
        .lock_list(&LockQuery::default())
        .await
        .expect("list");
    assert_eq!(keys_of(&listed), vec![shared]);
}

pub(crate) async fn reacquire_by_same_pr_keeps_id_and_updates_owner_info(db: &TestStore) {
    let s = &*db.store;
    let k = key("envs/dev", "default", None);
    let before = take(s, std::slice::from_ref(&k), &owner(12, "aaa")).await;
    let mut newer = owner(12, "bbb");
    newer.summary = "Plan: 0 to add, 1 to change, 0 to destroy.".to_owned();
    newer.user = "bob".to_owned();
    let after = take(s, std::slice::from_ref(&k), &newer).await;
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].id, before[0].id, "the lock id is stable");
    assert_eq!(after[0].locked_at, before[0].locked_at);
    assert!(after[0].planned_at >= before[0].planned_at);
    assert_eq!(after[0].owner, newer, "owner info follows the latest plan");
    let listed = s
        .locks()
        .lock_list(&LockQuery::default())
        .await
        .expect("list");
    assert_eq!(listed, after);
}

pub(crate) async fn keys_differing_in_workspace_or_project_are_separate_locks(db: &TestStore) {
    let s = &*db.store;
    let base = key("envs/dev", "default", None);
    take(s, std::slice::from_ref(&base), &owner(1, "a")).await;
    for (pr, other) in [
        (2, key("envs/dev", "staging", None)),
        (3, key("envs/dev", "default", Some("web"))),
        (
            4,
            key_in("github.com/acme/other", "envs/dev", "default", None),
        ),
    ] {
        take(s, std::slice::from_ref(&other), &owner(pr, "b")).await;
    }
    // The same project name with the same dir and workspace is one lock.
    let again = s
        .locks()
        .lock_acquire(&[key("envs/dev", "default", Some("web"))], &owner(5, "c"))
        .await
        .expect("acquire");
    assert!(matches!(again, Acquisition::Conflict(ref held) if held[0].owner.pr == 3));
    // So is the unnamed project: no NULL loophole in the unique key.
    let unnamed = s
        .locks()
        .lock_acquire(&[base], &owner(6, "d"))
        .await
        .expect("acquire");
    assert!(matches!(unnamed, Acquisition::Conflict(ref held) if held[0].owner.pr == 1));
}

/// 16 PRs race for two keys, half of them through a second handle on the same database (a
/// second process or replica), half asking in the reverse order. Exactly one wins both keys.
pub(crate) async fn concurrent_acquirers_of_overlapping_keys_never_both_win(db: &TestStore) {
    let other: Arc<dyn Store> = db.reopen().await;
    for round in 0..3 {
        let a = key(&format!("round{round}/a"), "default", None);
        let b = key(&format!("round{round}/b"), "default", None);
        let mut tasks = Vec::new();
        for pr in 1..=16_u64 {
            let store = if pr % 2 == 0 {
                Arc::clone(&db.store)
            } else {
                Arc::clone(&other)
            };
            let keys = if pr % 4 < 2 {
                vec![a.clone(), b.clone()]
            } else {
                vec![b.clone(), a.clone()]
            };
            tasks.push(tokio::spawn(async move {
                (
                    pr,
                    store.locks().lock_acquire(&keys, &owner(pr, "sha")).await,
                )
            }));
        }
        let mut winners = Vec::new();
        let mut losers = Vec::new();
        for task in tasks {
            let (pr, outcome) = task.await.expect("task");
            match outcome.unwrap_or_else(|e| panic!("round {round}, PR {pr}: {e}")) {
                Acquisition::Granted(locks) => winners.push((pr, locks)),
                Acquisition::Conflict(held) => losers.push((pr, held)),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: exactly one winner");
        let (winner, locks) = &winners[0];
        assert_eq!(keys_of(locks), vec![a.clone(), b.clone()]);
        for (pr, held) in &losers {
            assert!(
                !held.is_empty(),
                "round {round}: PR {pr} is told who holds it"
            );
            assert!(
                held.iter().all(|l| l.owner.pr == *winner),
                "PR {pr}: {held:?}"
            );
        }
        let listed = db
            .store
            .locks()
            .lock_list(&LockQuery::default())
            .await
            .expect("list");
        let round_locks: Vec<_> = listed.iter().filter(|l| l.key == a || l.key == b).collect();
        assert_eq!(round_locks.len(), 2);
        assert!(round_locks.iter().all(|l| l.owner.pr == *winner));
    }
}

pub(crate) async fn unlock_with_dir_flag_releases_only_that_lock(db: &TestStore) {
    let s = &*db.store;
    let x = key("x", "default", None);
    let y = key("y", "default", None);
    let x_staging = key("x", "staging", None);
    take(
        s,
        &[x.clone(), y.clone(), x_staging.clone()],
        &owner(7, "a"),
    )
    .await;
    let by = stamp(
        "alice",
        ActorVia::Comment,
        "atlantis unlock -d x -w staging",
    );
    let filter = KeyFilter {
        dir: Some(RepoDir::parse("x").expect("dir")),
        workspace: Some(Workspace::parse("staging").expect("ws")),
        project: None,
        dir_glob: None,
    };
    let release = Release::Pr {
        repo: REPO.to_owned(),
        pr: 7,
        filter,
    };
    let released = s
        .locks()
        .lock_release(&release, &by)
        .await
        .expect("release");
    assert_eq!(keys_of(&released), vec![x_staging]);
    let left = s
        .locks()
        .lock_list(&LockQuery::default())
        .await
        .expect("list");
    assert_eq!(keys_of(&left), vec![x.clone(), y]);
    // `-d x` alone releases every workspace of x.
    let release = Release::Pr {
        repo: REPO.to_owned(),
        pr: 7,
        filter: KeyFilter {
            dir: Some(RepoDir::parse("x").expect("dir")),
            ..KeyFilter::default()
        },
    };
    let released = s
        .locks()
        .lock_release(&release, &by)
        .await
        .expect("release");
    assert_eq!(keys_of(&released), vec![x]);
}

pub(crate) async fn unlock_without_flags_releases_only_that_prs_locks(db: &TestStore) {
    let s = &*db.store;
    let mine = [key("a", "default", None), key("b", "default", None)];
    let theirs = key("c", "default", None);
    take(s, &mine, &owner(7, "a")).await;
    take(s, std::slice::from_ref(&theirs), &owner(8, "b")).await;
    let release = Release::Pr {
        repo: REPO.to_owned(),
        pr: 7,
        filter: KeyFilter::default(),
    };
    let by = stamp("alice", ActorVia::Comment, "atlantis unlock");
    let released = s
        .locks()
        .lock_release(&release, &by)
        .await
        .expect("release");
    assert_eq!(keys_of(&released), mine.to_vec());
    let left = s
        .locks()
        .lock_list(&LockQuery::default())
        .await
        .expect("list");
    assert_eq!(keys_of(&left), vec![theirs]);
    // The same PR number in another repository is another PR.
    let elsewhere = Release::Pr {
        repo: "github.com/acme/other".to_owned(),
        pr: 8,
        filter: KeyFilter::default(),
    };
    assert!(
        s.locks()
            .lock_release(&elsewhere, &by)
            .await
            .expect("release")
            .is_empty()
    );
}

pub(crate) async fn unlock_by_id_is_audited_with_actor_and_frees_the_key(db: &TestStore) {
    let s = &*db.store;
    let k = key("envs/dev", "default", Some("web"));
    let lock = take(s, std::slice::from_ref(&k), &owner(12, "abcdef0123456789")).await;
    let by = stamp("admin", ActorVia::Dashboard, "unlocked from the dashboard");
    let released = s
        .locks()
        .lock_release(&Release::Id(lock[0].id), &by)
        .await
        .expect("release");
    assert_eq!(released, lock);
    assert_eq!(s.locks().lock_get(lock[0].id).await.expect("get"), None);
    let events = s.audit().audit_list(10, None).await.expect("audit");
    assert_eq!(events.len(), 1);
    let event = &events[0];
    assert_eq!(event.action, AuditAction::Unlock);
    assert_eq!(event.actor, by.actor);
    assert_eq!((event.repo.as_deref(), event.pr), (Some(REPO), Some(12)));
    assert_eq!(event.target, k.to_string());
    assert!(
        event.detail.contains("unlocked from the dashboard"),
        "{event:?}"
    );
    assert!(event.detail.contains("#12"), "{event:?}");
    // The key is free for another PR now.
    take(s, &[k], &owner(13, "b")).await;
}

pub(crate) async fn unlock_of_unknown_lock_releases_nothing_and_audits_nothing(db: &TestStore) {
    let s = &*db.store;
    take(s, &[key("a", "default", None)], &owner(1, "a")).await;
    let by = stamp("admin", ActorVia::Dashboard, "unlock");
    let released = s
        .locks()
        .lock_release(&Release::Id(Uuid::new_v4()), &by)
        .await
        .expect("release");
    assert!(released.is_empty());
    assert!(
        s.audit()
            .audit_list(10, None)
            .await
            .expect("audit")
            .is_empty()
    );
    assert_eq!(
        s.locks()
            .lock_list(&LockQuery::default())
            .await
            .expect("list")
            .len(),
        1
    );
}

pub(crate) async fn unlock_discards_the_released_keys_current_plan(db: &TestStore) {
    let s = &*db.store;
    let x = key("x", "default", None);
    let y = key("y", "default", None);
    take(s, &[x.clone(), y.clone()], &owner(7, "a")).await;
    let px = s
        .plans()
        .plan_save(&plan(&x, 7, "a"))
        .await
        .expect("save x");
    let py = s
        .plans()
        .plan_save(&plan(&y, 7, "a"))
        .await
        .expect("save y");
    let release = Release::Pr {
        repo: REPO.to_owned(),
        pr: 7,
        filter: KeyFilter {
            dir: Some(RepoDir::parse("x").expect("dir")),
            ..KeyFilter::default()
        },
    };
    s.locks()
        .lock_release(
            &release,
            &stamp("alice", ActorVia::Comment, "atlantis unlock -d x"),
        )
        .await
        .expect("release");
    let x_now = s.plans().plan_get(px.id).await.expect("get").expect("kept");
    assert!(
        x_now.superseded_at.is_some(),
        "the unlocked key's plan is discarded"
    );
    let current = s
        .plans()
        .plan_list(&PlanQuery {
            repo: REPO.to_owned(),
            pr: 7,
            current_only: true,
        })
        .await
        .expect("list");
    assert_eq!(
        current.iter().map(|p| p.id).collect::<Vec<_>>(),
        vec![py.id]
    );
}

pub(crate) async fn closing_pr_releases_locks_deletes_plans_and_audits(db: &TestStore) {
    let s = &*db.store;
    let mine = [key("a", "default", None), key("b", "default", None)];
    let theirs = key("c", "default", None);
    take(s, &mine, &owner(7, "a")).await;
    take(s, std::slice::from_ref(&theirs), &owner(8, "b")).await;
    s.plans()
        .plan_save(&plan(&mine[0], 7, "a"))
        .await
        .expect("save");
    s.plans()
        .plan_save(&plan(&mine[0], 7, "b"))
        .await
        .expect("save again");
    let kept = s
        .plans()
        .plan_save(&plan(&theirs, 8, "b"))
        .await
        .expect("save");
    let by = stamp(
        "carol",
        ActorVia::Forge,
        "pull request closed without merging",
    );
    let closed = s.locks().pr_closed(REPO, 7, &by).await.expect("close");
    assert_eq!(keys_of(&closed.released), mine.to_vec());
    assert_eq!(closed.plans_deleted, 2);
    let left = s
        .locks()
        .lock_list(&LockQuery::default())
        .await
        .expect("list");
    assert_eq!(keys_of(&left), vec![theirs]);
    assert!(s.plans().plan_get(kept.id).await.expect("get").is_some());
    let events = s.audit().audit_list(10, None).await.expect("audit");
    assert_eq!(events.len(), 2);
    assert!(
        events
            .iter()
            .all(|e| e.action == AuditAction::PrClosed && e.pr == Some(7))
    );
    assert!(events.iter().all(|e| e.actor == by.actor));
    // Closing again finds nothing to do.
    let again = s
        .locks()
        .pr_closed(REPO, 7, &by)
        .await
        .expect("close again");
    assert!(again.released.is_empty() && again.plans_deleted == 0);
}

pub(crate) async fn lock_list_filters_by_repo_and_pr(db: &TestStore) {
    let s = &*db.store;
    let other = "gitea.example.com/acme/infra";
    take(s, &[key("a", "default", None)], &owner(1, "a")).await;
    take(s, &[key("b", "default", None)], &owner(2, "a")).await;
    take(s, &[key_in(other, "a", "default", None)], &owner(1, "a")).await;
    let count = |repo: Option<&str>, pr: Option<u64>| {
        let query = LockQuery {
            repo: repo.map(str::to_owned),
            pr,
        };
        async move { s.locks().lock_list(&query).await.expect("list").len() }
    };
    assert_eq!(count(None, None).await, 3);
    assert_eq!(count(Some(REPO), None).await, 2);
    assert_eq!(count(Some(other), None).await, 1);
    assert_eq!(count(None, Some(1)).await, 2);
    assert_eq!(count(Some(REPO), Some(2)).await, 1);
    assert_eq!(count(Some(REPO), Some(3)).await, 0);
}
