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
