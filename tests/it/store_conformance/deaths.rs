//! A job whose worker dies under it: lost leases are counted durably, a graceful give-back is
//! not one, and the last allowed death fails the job. Also what the runner reads back about a
//! pull request's jobs: its jobs of a kind, and when a job first applied.

use atoll::store::{JobState, NewJob, Store};
use serde_json::json;

use super::{EXPIRED, LEASE, WIDE, accepted, queue};
use crate::support::TestStore;

pub(crate) async fn job_whose_worker_keeps_dying_fails_after_max_attempts_not_counting_give_backs(
    db: &TestStore,
) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    // A graceful shutdown gives the job back: that is no death.
    s.claim("w", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert!(
        s.transition(id, "w", JobState::Queued, None)
            .await
            .expect("give back")
    );
    for death in 1..=3u32 {
        let job = s
            .claim("crashy", &["plan"], EXPIRED, WIDE)
            .await
            .expect("claim")
            .expect("job");
        assert_eq!((job.attempts, job.lost_leases), (death + 1, death - 1));
        let reaped = s.reap(3).await.expect("reap");
        if death < 3 {
            assert_eq!(reaped.requeued, vec![id], "death {death}");
        } else {
            assert_eq!(reaped.failed, vec![id], "death {death}");
            assert!(reaped.requeued.is_empty());
        }
    }
    let job = s.get_job(id).await.expect("get").expect("job");
    assert_eq!((job.state, job.lost_leases), (JobState::Failed, 3));
    assert!(job.worker_kept_dying(), "{:?}", job.error);
    assert!(
        s.claim("w", &["plan"], LEASE, WIDE)
            .await
            .expect("claim")
            .is_none(),
        "never started again"
    );
    // The count survives reopening the store.
    let again = db.reopen().await;
    let job = again.get_job(id).await.expect("get").expect("job");
    assert_eq!(job.lost_leases, 3);
}

pub(crate) async fn a_lower_max_attempts_fails_a_job_on_its_next_death(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "plan", "r").await;
    s.claim("crashy", &["plan"], EXPIRED, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(s.reap(1).await.expect("reap").failed, vec![id]);
    let failed_by_handler = queue(s, "plan", "r").await;
    s.claim("w", &["plan"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    assert!(
        s.transition(failed_by_handler, "w", JobState::Failed, Some("boom"))
            .await
            .expect("fail")
    );
    let job = s
        .get_job(failed_by_handler)
        .await
        .expect("get")
        .expect("job");
    assert!(
        !job.worker_kept_dying(),
        "a handler's failure is not a death"
    );
}

fn pr_job(kind: &str, pr: u64) -> NewJob {
    NewJob {
        kind: kind.to_owned(),
        repo: "github.com/acme/infra".to_owned(),
        pr: Some(pr),
        dedup_key: None,
        payload: json!({}),
    }
}

async fn enqueue(s: &dyn Store, job: NewJob) -> uuid::Uuid {
    accepted(s.enqueue(job).await.expect("enqueue"))
}

pub(crate) async fn a_pull_requests_jobs_of_a_kind_are_listed_newest_first(db: &TestStore) {
    let s = &*db.store;
    let first = enqueue(s, pr_job("apply", 7)).await;
    enqueue(s, pr_job("plan", 7)).await;
    enqueue(s, pr_job("apply", 8)).await;
    let second = enqueue(s, pr_job("apply", 7)).await;
    let listed: Vec<_> = s
        .list_pr_jobs("github.com/acme/infra", 7, "apply", 10)
        .await
        .expect("list")
        .into_iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(listed, vec![second, first]);
    let limited = s
        .list_pr_jobs("github.com/acme/infra", 7, "apply", 1)
        .await
        .expect("list");
    assert_eq!(limited.len(), 1);
    assert!(
        s.list_pr_jobs("github.com/acme/other", 7, "apply", 10)
            .await
            .expect("list")
            .is_empty()
    );
}

pub(crate) async fn applying_at_is_set_when_a_job_first_applies_and_kept(db: &TestStore) {
    let s = &*db.store;
    let id = enqueue(s, pr_job("apply", 7)).await;
    s.claim("w", &["apply"], LEASE, WIDE)
        .await
        .expect("claim")
        .expect("job");
    let running = s.get_job(id).await.expect("get").expect("job");
    assert_eq!(running.applying_at, None);
    assert!(
        s.transition(id, "w", JobState::Applying, None)
            .await
            .expect("applying")
    );
    let applying = s.get_job(id).await.expect("get").expect("job");
    let at = applying.applying_at.expect("set when applying");
    assert!(
        s.transition(id, "w", JobState::Succeeded, None)
            .await
            .expect("done")
    );
    let done = s.get_job(id).await.expect("get").expect("job");
    assert_eq!(done.applying_at, Some(at), "kept after the job ends");
}
