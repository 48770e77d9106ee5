//! Claiming: order, kinds, leases and caps, under concurrency.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use atoll::store::{ClaimLimits, JobState, Store};

use super::{LEASE, WIDE, queue};
use crate::support::TestStore;

pub(crate) async fn claim_returns_oldest_queued_job_of_requested_kinds(db: &TestStore) {
    let s = &*db.store;
    let _unlock = queue(s, "unlock", "r").await;
    let plan1 = queue(s, "plan", "r").await;
    let plan2 = queue(s, "plan", "r").await;
    let claim = |kinds: &'static [&'static str]| s.claim("w", kinds, LEASE, WIDE);
    assert!(claim(&[]).await.expect("no kinds").is_none());
    assert!(claim(&["nothing"]).await.expect("unknown kind").is_none());
    assert_eq!(
        claim(&["plan", "apply"])
            .await
            .expect("c1")
            .expect("job")
            .id,
        plan1
    );
    assert_eq!(claim(&["plan"]).await.expect("c2").expect("job").id, plan2);
    assert!(claim(&["plan"]).await.expect("c3").is_none());
}

pub(crate) async fn claim_leases_job_to_worker_and_counts_attempt(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    let claimed = s
        .claim("w1", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!((claimed.id, claimed.state), (id, JobState::Running));
    assert_eq!(claimed.worker.as_deref(), Some("w1"));
    assert_eq!(claimed.attempts, 1);
    let lease = claimed.lease_until.expect("a lease");
    let now = time::OffsetDateTime::now_utc();
    assert!(lease > now + Duration::from_secs(30) && lease < now + Duration::from_secs(90));
}

pub(crate) async fn claim_respects_global_cap(db: &TestStore) {
    let s = &*db.store;
    for repo in ["a", "b", "c"] {
        queue(s, "plan", repo).await;
    }
    let cap = ClaimLimits {
        global: 2,
        per_repo: 5,
        per_repo_exempt: &[],
    };
    let first = s
        .claim("w", &["plan"], LEASE, cap)
        .await
        .expect("1")
        .expect("job");
    assert!(
        s.claim("w", &["plan"], LEASE, cap)
            .await
            .expect("2")
            .is_some()
    );
    assert!(
        s.claim("w", &["plan"], LEASE, cap)
            .await
            .expect("3")
            .is_none()
    );
    assert!(
        s.transition(first.id, "w", JobState::Succeeded, None)
            .await
            .expect("done")
    );
    assert!(
        s.claim("w", &["plan"], LEASE, cap)
            .await
            .expect("4")
            .is_some()
    );
}

pub(crate) async fn claim_respects_per_repo_cap(db: &TestStore) {
    let s = &*db.store;
    let a1 = queue(s, "plan", "a").await;
    let _a2 = queue(s, "plan", "a").await;
    let b1 = queue(s, "plan", "b").await;
    let cap = ClaimLimits {
        global: 10,
        per_repo: 1,
        per_repo_exempt: &[],
    };
    let claim = || s.claim("w", &["plan"], LEASE, cap);
    assert_eq!(claim().await.expect("1").expect("job").id, a1);
    // a2 is older than b1 but repo `a` is full, so b1 goes first.
    assert_eq!(claim().await.expect("2").expect("job").id, b1);
    assert!(claim().await.expect("3").is_none());
    assert!(
        s.transition(a1, "w", JobState::Applying, None)
            .await
            .expect("applying")
    );
    assert!(claim().await.expect("applying still counts").is_none());
}

pub(crate) async fn concurrent_claims_never_hand_one_job_to_two_workers(db: &TestStore) {
    const JOBS: usize = 40;
    const WORKERS: usize = 8;
    for i in 0..JOBS {
        queue(&*db.store, "plan", &format!("repo-{}", i % 5)).await;
    }
    // Half the workers use a second handle on the same database (another process or replica).
    let other = db.reopen().await;
    let mut tasks = Vec::new();
    for w in 0..WORKERS {
        let store: Arc<dyn Store> = if w % 2 == 0 {
            db.store.clone()
        } else {
            other.clone()
        };
        tasks.push(tokio::spawn(async move {
            let name = format!("worker-{w}");
            let mut got = Vec::new();
            while let Some(job) = store
                .claim(&name, &["plan"], LEASE, WIDE)
                .await
                .expect("claim")
            {
                assert_eq!(job.worker.as_deref(), Some(name.as_str()));
                got.push(job.id);
            }
            got
        }));
    }
    let mut seen = HashSet::new();
    for task in tasks {
        for id in task.await.expect("worker task") {
            assert!(seen.insert(id), "job {id} was claimed twice");
        }
    }
    assert_eq!(seen.len(), JOBS, "every job is claimed exactly once");
}

/// A kind the per-repository cap exempts (`cancel`) is claimed while its repository is full;
/// the global cap still holds it back.
pub(crate) async fn per_repo_exempt_kind_is_claimed_while_its_repo_is_full(db: &TestStore) {
    let s = &*db.store;
    let running = queue(s, "plan", "a").await;
    let _queued = queue(s, "plan", "a").await;
    let cancel = queue(s, "cancel", "a").await;
    let cap = ClaimLimits {
        global: 2,
        per_repo: 1,
        per_repo_exempt: &["cancel"],
    };
    let kinds = &["plan", "cancel"];
    assert_eq!(
        s.claim("w", kinds, LEASE, cap)
            .await
            .expect("1")
            .expect("job")
            .id,
        running
    );
    // The second plan is older, but repo `a` is full: the cancel goes first.
    assert_eq!(
        s.claim("w", kinds, LEASE, cap)
            .await
            .expect("2")
            .expect("job")
            .id,
        cancel
    );
    // Two running: the global cap holds even an exempt kind back.
    queue(s, "cancel", "a").await;
    assert!(s.claim("w", kinds, LEASE, cap).await.expect("3").is_none());
}

/// `atlantis cancel`: the PR's queued jobs of the given kinds, queued before the cancel, are
/// cancelled with the reason; running jobs, other PRs, other kinds and later jobs are not.
pub(crate) async fn cancel_queued_cancels_only_the_prs_earlier_queued_jobs_of_those_kinds(
    db: &TestStore,
) {
    use atoll::store::CancelQueued;

    use super::{job, state};
    let s = &*db.store;
    let enqueue = |kind: &str, pr: u64| {
        let mut new = job(kind, "r", None);
        new.pr = Some(pr);
        async move { super::accepted(s.enqueue(new).await.expect("enqueue")) }
    };
    let running = enqueue("plan", 7).await;
    let claimed = s
        .claim("w", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(claimed.id, running);
    let plan = enqueue("plan", 7).await;
    let apply = enqueue("apply", 7).await;
    let help = enqueue("help", 7).await;
    let other_pr = enqueue("plan", 8).await;
    let cancel = enqueue("cancel", 7).await;
    let later = enqueue("plan", 7).await;
    let cancelled = s
        .cancel_queued(&CancelQueued {
            repo: "r",
            pr: 7,
            before: cancel,
            kinds: &["plan", "apply"],
            reason: "cancelled by alice",
        })
        .await
        .expect("cancel");
    let ids: Vec<_> = cancelled.iter().map(|j| j.id).collect();
    assert_eq!(ids, vec![plan, apply], "oldest first");
    for j in &cancelled {
        assert_eq!(j.state, JobState::Cancelled);
        assert_eq!(j.error.as_deref(), Some("cancelled by alice"));
        assert_eq!(j.attempts, 0);
    }
    assert_eq!(state(s, running).await, JobState::Running);
    assert_eq!(state(s, help).await, JobState::Queued);
    assert_eq!(state(s, other_pr).await, JobState::Queued);
    assert_eq!(state(s, later).await, JobState::Queued);
    // A cancelled job is never claimed; a second cancel finds nothing more.
    let next = s
        .claim("w", &["plan", "apply"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(next.id, other_pr);
    let again = s
        .cancel_queued(&CancelQueued {
            repo: "r",
            pr: 7,
            before: cancel,
            kinds: &["plan", "apply"],
            reason: "again",
        })
        .await
        .expect("cancel again");
    assert!(again.is_empty(), "{again:#?}");
}
