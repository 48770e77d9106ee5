//! The cases, written once against `dyn Store`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use atoll::store::{
    ClaimLimits, DeliveryOutcome, ForgeKind, JobState, MAX_ATTEMPTS, NewDelivery, NewJob, Store,
    StoreError,
};
use serde_json::json;
use uuid::Uuid;

use crate::support::TestStore;

const LEASE: Duration = Duration::from_secs(60);
const EXPIRED: Duration = Duration::ZERO;
const WIDE: ClaimLimits = ClaimLimits {
    global: 100,
    per_repo: 100,
};

fn delivery(forge: ForgeKind, id: &str) -> NewDelivery {
    NewDelivery {
        forge,
        delivery_id: id.to_owned(),
        event: "issue_comment".to_owned(),
        repo: "github.com/acme/infra".to_owned(),
    }
}

fn job(kind: &str, repo: &str, dedup: Option<&str>) -> NewJob {
    NewJob {
        kind: kind.to_owned(),
        repo: repo.to_owned(),
        pr: Some(7),
        dedup_key: dedup.map(str::to_owned),
        payload: json!({"command": "plan", "dir": "envs/dev"}),
    }
}

fn accepted(outcome: DeliveryOutcome) -> Uuid {
    match outcome {
        DeliveryOutcome::Accepted { job: Some(id) } => id,
        other => panic!("expected an accepted job, got {other:?}"),
    }
}

async fn queue(store: &dyn Store, kind: &str, repo: &str) -> Uuid {
    accepted(store.enqueue(job(kind, repo, None)).await.expect("enqueue"))
}

async fn state(store: &dyn Store, id: Uuid) -> JobState {
    store
        .get_job(id)
        .await
        .expect("get_job")
        .expect("job exists")
        .state
}

pub(crate) async fn ping_answers(db: &TestStore) {
    db.store.ping().await.expect("ping");
}

pub(crate) async fn duplicate_delivery_is_processed_once(db: &TestStore) {
    let s = &*db.store;
    let first = s
        .accept_delivery(
            delivery(ForgeKind::Github, "d-1"),
            Some(job("plan", "r", None)),
        )
        .await
        .expect("first delivery");
    let id = accepted(first);
    let again = s
        .accept_delivery(
            delivery(ForgeKind::Github, "d-1"),
            Some(job("plan", "r", None)),
        )
        .await
        .expect("redelivery");
    assert_eq!(again, DeliveryOutcome::Duplicate);
    let jobs = s.list_jobs(10).await.expect("list");
    assert_eq!(jobs.len(), 1, "the redelivery must not queue a second job");
    assert_eq!(jobs[0].id, id);
}

pub(crate) async fn same_comment_id_with_new_delivery_id_queues_once(db: &TestStore) {
    let s = &*db.store;
    let key = "comment:gitea:git.example/acme/infra:4411";
    let first = s
        .accept_delivery(
            delivery(ForgeKind::Gitea, "g-1"),
            Some(job("plan", "r", Some(key))),
        )
        .await
        .expect("first");
    accepted(first);
    let second = s
        .accept_delivery(
            delivery(ForgeKind::Gitea, "g-2"),
            Some(job("plan", "r", Some(key))),
        )
        .await
        .expect("second");
    assert_eq!(second, DeliveryOutcome::Duplicate);
    assert_eq!(s.list_jobs(10).await.expect("list").len(), 1);
    // Nothing was written for the duplicate: its delivery id is still new.
    let third = s
        .accept_delivery(delivery(ForgeKind::Gitea, "g-2"), None)
        .await
        .expect("third");
    assert_eq!(third, DeliveryOutcome::Accepted { job: None });
}

pub(crate) async fn same_delivery_id_from_another_forge_is_a_new_delivery(db: &TestStore) {
    let s = &*db.store;
    let gh = s
        .accept_delivery(delivery(ForgeKind::Github, "x"), None)
        .await;
    let gt = s
        .accept_delivery(delivery(ForgeKind::Gitea, "x"), None)
        .await;
    assert_eq!(gh.expect("github"), DeliveryOutcome::Accepted { job: None });
    assert_eq!(gt.expect("gitea"), DeliveryOutcome::Accepted { job: None });
}

pub(crate) async fn delivery_without_job_is_recorded_once(db: &TestStore) {
    let s = &*db.store;
    let first = s
        .accept_delivery(delivery(ForgeKind::Github, "p"), None)
        .await;
    assert_eq!(
        first.expect("first"),
        DeliveryOutcome::Accepted { job: None }
    );
    let again = s
        .accept_delivery(
            delivery(ForgeKind::Github, "p"),
            Some(job("plan", "r", None)),
        )
        .await;
    assert_eq!(again.expect("again"), DeliveryOutcome::Duplicate);
    assert!(s.list_jobs(10).await.expect("list").is_empty());
}

pub(crate) async fn enqueue_without_delivery_dedups_by_key(db: &TestStore) {
    let s = &*db.store;
    let key = Some("autoplan:github:acme/infra:7:abc123");
    accepted(s.enqueue(job("plan", "r", key)).await.expect("first"));
    let again = s.enqueue(job("plan", "r", key)).await.expect("second");
    assert_eq!(again, DeliveryOutcome::Duplicate);
    let via_delivery = s
        .accept_delivery(
            delivery(ForgeKind::Github, "new"),
            Some(job("plan", "r", key)),
        )
        .await
        .expect("third");
    assert_eq!(via_delivery, DeliveryOutcome::Duplicate);
}

pub(crate) async fn jobs_without_dedup_key_are_never_duplicates(db: &TestStore) {
    let s = &*db.store;
    let a = queue(s, "plan", "r").await;
    let b = queue(s, "plan", "r").await;
    assert_ne!(a, b);
    assert_eq!(s.list_jobs(10).await.expect("list").len(), 2);
}

pub(crate) async fn stored_job_keeps_its_fields(db: &TestStore) {
    let s = &*db.store;
    let mut new = job("apply", "github.com/acme/infra", Some("k"));
    new.pr = Some(4_000_000_000);
    new.payload = json!({"nested": {"list": [1, "two", null]}, "unicode": "ünï"});
    let id = accepted(s.enqueue(new.clone()).await.expect("enqueue"));
    let stored = s.get_job(id).await.expect("get").expect("exists");
    assert_eq!(stored.kind, "apply");
    assert_eq!(stored.repo, "github.com/acme/infra");
    assert_eq!(stored.pr, Some(4_000_000_000));
    assert_eq!(stored.payload, new.payload);
    assert_eq!(stored.state, JobState::Queued);
    assert_eq!(stored.attempts, 0);
    assert_eq!(
        (stored.worker, stored.lease_until, stored.error),
        (None, None, None)
    );
    assert!(s.get_job(Uuid::new_v4()).await.expect("get").is_none());
}

pub(crate) async fn list_jobs_returns_newest_first(db: &TestStore) {
    let s = &*db.store;
    let ids = [
        queue(s, "a", "r").await,
        queue(s, "b", "r").await,
        queue(s, "c", "r").await,
    ];
    let listed: Vec<Uuid> = s
        .list_jobs(2)
        .await
        .expect("list")
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(listed, vec![ids[2], ids[1]]);
}

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

pub(crate) async fn heartbeat_extends_only_the_holders_lease(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    let job = s
        .claim("w1", &["plan"], Duration::from_secs(5), WIDE)
        .await
        .expect("claim");
    let before = job.expect("job").lease_until.expect("lease");
    assert!(s.heartbeat(id, "w1", LEASE).await.expect("heartbeat"));
    let after = s
        .get_job(id)
        .await
        .expect("get")
        .expect("job")
        .lease_until
        .expect("lease");
    assert!(
        after > before + Duration::from_secs(30),
        "{after} should be well after {before}"
    );
    assert!(!s.heartbeat(id, "w2", LEASE).await.expect("other worker"));
    assert!(
        !s.heartbeat(Uuid::new_v4(), "w1", LEASE)
            .await
            .expect("missing job")
    );
    assert!(
        s.transition(id, "w1", JobState::Succeeded, None)
            .await
            .expect("done")
    );
    assert!(!s.heartbeat(id, "w1", LEASE).await.expect("finished job"));
}

pub(crate) async fn transition_follows_job_lifecycle(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "apply", "r").await;
    assert!(
        !s.transition(id, "w", JobState::Applying, None)
            .await
            .expect("unclaimed")
    );
    s.claim("w", &["apply"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert!(
        !s.transition(id, "w", JobState::Running, None)
            .await
            .expect("to running")
    );
    assert!(
        !s.transition(id, "w", JobState::Interrupted, None)
            .await
            .expect("not applying")
    );
    assert!(
        s.transition(id, "w", JobState::Applying, None)
            .await
            .expect("applying")
    );
    assert_eq!(state(s, id).await, JobState::Applying);
    let failed = s
        .transition(id, "w", JobState::Failed, Some("pve said no"))
        .await;
    assert!(failed.expect("failed"));
    let job = s.get_job(id).await.expect("get").expect("job");
    assert_eq!(
        (job.state, job.error.as_deref()),
        (JobState::Failed, Some("pve said no"))
    );
    assert_eq!(job.lease_until, None, "a finished job holds no lease");
    assert_eq!(job.worker.as_deref(), Some("w"), "who ran it is kept");
}

pub(crate) async fn transition_by_another_worker_is_refused(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    s.claim("w1", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert!(
        !s.transition(id, "w2", JobState::Succeeded, None)
            .await
            .expect("w2")
    );
    assert_eq!(state(s, id).await, JobState::Running);
}

pub(crate) async fn terminal_job_cannot_be_moved_again(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    s.claim("w", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert!(
        s.transition(id, "w", JobState::Cancelled, None)
            .await
            .expect("cancel")
    );
    for target in [JobState::Succeeded, JobState::Queued, JobState::Applying] {
        assert!(
            !s.transition(id, "w", target, None)
                .await
                .expect("after terminal")
        );
    }
    assert_eq!(state(s, id).await, JobState::Cancelled);
}

pub(crate) async fn released_job_is_claimable_again(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    s.claim("w1", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert!(
        s.transition(id, "w1", JobState::Queued, None)
            .await
            .expect("release")
    );
    let job = s.get_job(id).await.expect("get").expect("job");
    assert_eq!(
        (job.state, job.worker, job.lease_until),
        (JobState::Queued, None, None)
    );
    let again = s
        .claim("w2", &["plan"], LEASE, WIDE)
        .await
        .expect("reclaim")
        .expect("job");
    assert_eq!((again.id, again.attempts), (id, 2));
}

pub(crate) async fn expired_running_job_is_requeued_with_attempts_counted(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    s.claim("dead", &["plan"], EXPIRED, WIDE)
        .await
        .expect("claim")
        .expect("job");
    let reaped = s.reap().await.expect("reap");
    assert_eq!(reaped.requeued, vec![id]);
    assert!(reaped.interrupted.is_empty() && reaped.failed.is_empty());
    let job = s.get_job(id).await.expect("get").expect("job");
    assert_eq!(
        (job.state, job.worker, job.attempts),
        (JobState::Queued, None, 1)
    );
    // The old holder has lost it; a new claim counts a second attempt.
    assert!(
        !s.transition(id, "dead", JobState::Succeeded, None)
            .await
            .expect("stale")
    );
    let again = s
        .claim("alive", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!((again.id, again.attempts), (id, 2));
}

pub(crate) async fn expired_applying_job_is_interrupted_not_retried(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "apply", "r").await;
    s.claim("dead", &["apply"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert!(
        s.transition(id, "dead", JobState::Applying, None)
            .await
            .expect("applying")
    );
    assert!(
        s.heartbeat(id, "dead", EXPIRED)
            .await
            .expect("expire the lease")
    );
    let reaped = s.reap().await.expect("reap");
    assert_eq!(reaped.interrupted, vec![id]);
    assert!(reaped.requeued.is_empty());
    let job = s.get_job(id).await.expect("get").expect("job");
    assert_eq!(job.state, JobState::Interrupted);
    assert!(
        job.error
            .as_deref()
            .is_some_and(|e| e.contains("not retried"))
    );
    assert!(
        s.claim("w", &["apply"], LEASE, WIDE)
            .await
            .expect("claim")
            .is_none()
    );
    assert_eq!(s.reap().await.expect("reap again"), Default::default());
}

pub(crate) async fn job_that_keeps_losing_its_worker_fails_after_max_attempts(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    for attempt in 1..=MAX_ATTEMPTS {
        let job = s
            .claim("crashy", &["plan"], EXPIRED, WIDE)
            .await
            .expect("claim");
        assert_eq!(job.expect("job").attempts, attempt);
        let reaped = s.reap().await.expect("reap");
        if attempt < MAX_ATTEMPTS {
            assert_eq!(reaped.requeued, vec![id], "attempt {attempt}");
        } else {
            assert_eq!(reaped.failed, vec![id], "attempt {attempt}");
        }
    }
    let job = s.get_job(id).await.expect("get").expect("job");
    assert_eq!(job.state, JobState::Failed);
    assert!(job.error.is_some_and(|e| e.contains("lease")));
}

pub(crate) async fn unexpired_lease_is_not_reaped(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    s.claim("w", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(s.reap().await.expect("reap"), Default::default());
    assert_eq!(state(s, id).await, JobState::Running);
}

pub(crate) async fn job_log_lines_are_dense_ordered_and_resumable(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    let other = queue(s, "plan", "r").await;
    for (i, line) in ["one", "two", "", "four <b>&"].iter().enumerate() {
        assert_eq!(s.append_log(id, line).await.expect("append"), i as i64 + 1);
    }
    assert_eq!(s.append_log(other, "x").await.expect("other job"), 1);
    let all = s.job_log(id, 0).await.expect("log");
    let lines: Vec<(i64, &str)> = all.iter().map(|l| (l.seq, l.line.as_str())).collect();
    assert_eq!(
        lines,
        vec![(1, "one"), (2, "two"), (3, ""), (4, "four <b>&")]
    );
    let rest = s.job_log(id, 2).await.expect("resume");
    assert_eq!(rest.iter().map(|l| l.seq).collect::<Vec<_>>(), vec![3, 4]);
    assert!(s.job_log(id, 4).await.expect("caught up").is_empty());
}

pub(crate) async fn append_log_to_missing_job_is_not_found(db: &TestStore) {
    let err = db.store.append_log(Uuid::new_v4(), "lost").await;
    assert!(matches!(err, Err(StoreError::NotFound(_))), "got {err:?}");
}

pub(crate) async fn job_signal_fires_when_a_job_is_queued(db: &TestStore) {
    let mut signal = db.store.job_signal();
    signal.borrow_and_update();
    queue(&*db.store, "plan", "r").await;
    tokio::time::timeout(Duration::from_secs(10), signal.changed())
        .await
        .expect("signal within 10s")
        .expect("signal sender alive");
}

pub(crate) async fn jobs_survive_reopening_the_store(db: &TestStore) {
    let id = queue(&*db.store, "plan", "r").await;
    db.store.append_log(id, "line").await.expect("append");
    let reopened = db.reopen().await;
    assert_eq!(state(&*reopened, id).await, JobState::Queued);
    assert_eq!(reopened.job_log(id, 0).await.expect("log").len(), 1);
}
