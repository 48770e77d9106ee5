//! After the claim: heartbeats, transitions, the reaper, logs and wake-ups.

use std::time::Duration;

use model::ForgeKind;

use atoll::store::{DEFAULT_MAX_ATTEMPTS, JobState, StoreError};
use uuid::Uuid;

use super::{EXPIRED, LEASE, WIDE, accepted, delivery, job, queue, state};
use crate::support::TestStore;

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
    let reaped = s.reap(DEFAULT_MAX_ATTEMPTS).await.expect("reap");
    assert_eq!(reaped.requeued, vec![id]);
    assert!(reaped.interrupted.is_empty() && reaped.failed.is_empty());
    let job = s.get_job(id).await.expect("get").expect("job");
    assert_eq!(
        (job.state, job.worker, job.attempts, job.lost_leases),
        (JobState::Queued, None, 1, 1)
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
    let reaped = s.reap(DEFAULT_MAX_ATTEMPTS).await.expect("reap");
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
    assert_eq!(
        s.reap(DEFAULT_MAX_ATTEMPTS).await.expect("reap again"),
        Default::default()
    );
}

pub(crate) async fn unexpired_lease_is_not_reaped(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    s.claim("w", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(
        s.reap(DEFAULT_MAX_ATTEMPTS).await.expect("reap"),
        Default::default()
    );
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

/// Retention deletes finished jobs (with their logs and deliveries) and old delivery records,
/// and never a queued or leased job; a pruned delivery id is new again.
pub(crate) async fn retention_deletes_finished_jobs_and_old_deliveries_only(db: &TestStore) {
    let s = &*db.store;
    let done = accepted(
        s.accept_delivery(
            delivery(ForgeKind::Github, "d-done"),
            Some(job("plan", "r", Some("k-done"))),
        )
        .await
        .expect("accept"),
    );
    s.claim("w", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    s.append_log(done, "a line").await.expect("log");
    assert!(
        s.transition(done, "w", JobState::Succeeded, None)
            .await
            .expect("finish")
    );
    let running = queue(s, "apply", "r").await;
    s.claim("w", &["apply"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    let queued = queue(s, "plan", "other").await;
    s.accept_delivery(delivery(ForgeKind::Gitea, "ping"), None)
        .await
        .expect("ping");

    // Nothing is older than a day yet.
    let none = s.prune(Duration::from_secs(86_400)).await.expect("prune");
    assert_eq!(none, atoll::store::Pruned::default());
    assert!(s.get_job(done).await.expect("get").is_some());

    tokio::time::sleep(Duration::from_millis(20)).await;
    let pruned = s.prune(Duration::from_millis(1)).await.expect("prune");
    assert_eq!(pruned.jobs, 1, "{pruned:?}");
    assert_eq!(pruned.deliveries, 2, "{pruned:?}");
    assert!(!pruned.full());
    assert!(s.get_job(done).await.expect("get").is_none());
    assert!(
        s.job_log(done, 0)
            .await
            .map(|l| l.is_empty())
            .unwrap_or(true)
    );
    assert_eq!(state(s, running).await, JobState::Running);
    assert_eq!(state(s, queued).await, JobState::Queued);
    // The records are gone, so the same delivery id and comment key are new again.
    let again = s
        .accept_delivery(
            delivery(ForgeKind::Github, "d-done"),
            Some(job("plan", "r", Some("k-done"))),
        )
        .await
        .expect("accept again");
    accepted(again);
}

pub(crate) async fn jobs_in_a_state_are_listed_newest_first(db: &TestStore) {
    let s = &*db.store;
    let mut interrupted = Vec::new();
    for repo in ["a", "b"] {
        let id = queue(s, "apply", repo).await;
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
        s.reap(DEFAULT_MAX_ATTEMPTS).await.expect("reap");
        interrupted.push(id);
    }
    let waiting = queue(s, "plan", "c").await;
    let listed: Vec<_> = s
        .list_jobs_in_state(JobState::Interrupted, 10)
        .await
        .expect("list")
        .into_iter()
        .map(|j| j.id)
        .collect();
    interrupted.reverse();
    assert_eq!(listed, interrupted);
    let first: Vec<_> = s
        .list_jobs_in_state(JobState::Interrupted, 1)
        .await
        .expect("list")
        .into_iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(first, interrupted[..1]);
    let queued = s
        .list_jobs_in_state(JobState::Queued, 10)
        .await
        .expect("list");
    assert_eq!(
        queued.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![waiting]
    );
}

/// The schema knows the job kinds atoll runs (`jobs::JobKind::ALL`): a job of another kind is
/// refused when it is written, on both backends, and every known kind is accepted.
pub(crate) async fn only_job_kinds_atoll_runs_can_be_queued(db: &TestStore) {
    let s = db.store.as_ref();
    let refused = s
        .enqueue(job("terraform_apply", "github.com/acme/infra", None))
        .await;
    assert!(refused.is_err(), "an unknown kind was stored: {refused:?}");
    for kind in atoll::jobs::JobKind::ALL {
        s.enqueue(job(kind.as_str(), "github.com/acme/infra", None))
            .await
            .unwrap_or_else(|e| panic!("{} refused: {e}", kind.as_str()));
    }
}
