//! The cases, written once against `dyn Store`.

use std::time::Duration;

use atoll::queue::{Queue, QueueSettings, StopReason};
use atoll::store::{ClaimLimits, DeliveryOutcome, Job, JobState, NewJob, Store};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::handlers::{Gate, Scripted, Stubborn, UntilStopped};
use crate::support::{TestStore, eventually};

const WITHIN: Duration = Duration::from_secs(20);

fn settings() -> QueueSettings {
    QueueSettings {
        poll_interval: Duration::from_secs(3600),
        reap_interval: Duration::from_secs(3600),
        limits: ClaimLimits {
            global: 4,
            per_repo: 4,
            per_repo_exempt: &[],
        },
        shutdown_grace: Duration::from_secs(30),
        ..QueueSettings::default()
    }
}

async fn enqueue(store: &dyn Store, kind: &str, repo: &str, payload: Value) -> Uuid {
    let job = NewJob {
        kind: kind.to_owned(),
        repo: repo.to_owned(),
        pr: Some(1),
        dedup_key: None,
        payload,
    };
    match store.enqueue(job).await.expect("enqueue") {
        DeliveryOutcome::Accepted { job: Some(id) } => id,
        other => panic!("expected a queued job, got {other:?}"),
    }
}

async fn job(store: &dyn Store, id: Uuid) -> Job {
    store
        .get_job(id)
        .await
        .expect("get_job")
        .expect("job exists")
}

/// Waits until the job is in `state`, and returns it.
async fn reaches(store: &dyn Store, id: Uuid, state: JobState) -> Job {
    eventually(
        WITHIN,
        &format!("job {id} to be {}", state.as_str()),
        || async {
            let job = job(store, id).await;
            (job.state == state).then_some(job)
        },
    )
    .await
}

pub(crate) async fn queued_job_runs_to_success_with_durable_log(db: &TestStore) {
    let store = &*db.store;
    let id = enqueue(store, "plan", "r", json!({"lines": ["refresh", "diff"]})).await;
    let pool = Queue::new(db.store.clone(), settings())
        .handle("plan", Scripted)
        .start();
    let done = reaches(store, id, JobState::Succeeded).await;
    assert_eq!((done.attempts, done.error), (1, None));
    let log = store.job_log(id, 0).await.expect("log");
    let lines: Vec<&str> = log.iter().map(|l| l.line.as_str()).collect();
    assert_eq!(lines, ["refresh", "diff"]);
    pool.shutdown().await;
}

pub(crate) async fn handler_error_marks_job_failed_with_its_message(db: &TestStore) {
    let store = &*db.store;
    let id = enqueue(store, "plan", "r", json!({"fail": "no such dir"})).await;
    let pool = Queue::new(db.store.clone(), settings())
        .handle("plan", Scripted)
        .start();
    let failed = reaches(store, id, JobState::Failed).await;
    assert_eq!(
        failed.error.as_deref(),
        Some("plan of envs/dev failed: no such dir")
    );
    pool.shutdown().await;
}

pub(crate) async fn panicking_handler_fails_its_job_and_the_pool_keeps_running(db: &TestStore) {
    let store = &*db.store;
    let bad = enqueue(store, "plan", "r", json!({"panic": true})).await;
    let pool = Queue::new(db.store.clone(), settings())
        .handle("plan", Scripted)
        .start();
    let failed = reaches(store, bad, JobState::Failed).await;
    assert!(failed.error.is_some_and(|e| e.contains("panicked")));
    let good = enqueue(store, "plan", "r", json!({})).await;
    reaches(store, good, JobState::Succeeded).await;
    pool.shutdown().await;
}

pub(crate) async fn pool_never_exceeds_per_repo_or_global_cap(db: &TestStore) {
    let store = &*db.store;
    let mut ids = Vec::new();
    for repo in ["a", "b", "c", "d"] {
        for _ in 0..2 {
            ids.push(enqueue(store, "plan", repo, json!({})).await);
        }
    }
    let gate = Gate::default();
    let mut s = settings();
    s.limits = ClaimLimits {
        global: 3,
        per_repo: 1,
        per_repo_exempt: &[],
    };
    let pool = Queue::new(db.store.clone(), s)
        .handle("plan", gate.clone())
        .start();
    eventually(WITHIN, "three jobs running", || async {
        (gate.counts().0 == 3).then_some(())
    })
    .await;
    gate.release(ids.len());
    for id in &ids {
        reaches(store, *id, JobState::Succeeded).await;
    }
    let (_, max_total, max_per_repo) = gate.counts();
    assert_eq!((max_total, max_per_repo), (3, 1));
    pool.shutdown().await;
}

pub(crate) async fn job_queued_while_idle_is_picked_up_without_waiting_for_a_poll(db: &TestStore) {
    // The poll interval is an hour: only the store's wake-up signal can start this job.
    let pool = Queue::new(db.store.clone(), settings())
        .handle("plan", Scripted)
        .start();
    let id = enqueue(&*db.store, "plan", "r", json!({})).await;
    reaches(&*db.store, id, JobState::Succeeded).await;
    pool.shutdown().await;
}

pub(crate) async fn kinds_without_a_handler_stay_queued(db: &TestStore) {
    let store = &*db.store;
    let other = enqueue(store, "unlock", "r", json!({})).await;
    let plan = enqueue(store, "plan", "r", json!({})).await;
    let pool = Queue::new(db.store.clone(), settings())
        .handle("plan", Scripted)
        .start();
    reaches(store, plan, JobState::Succeeded).await;
    pool.shutdown().await;
    assert_eq!(job(store, other).await.state, JobState::Queued);
}

pub(crate) async fn job_abandoned_by_a_dead_worker_is_run_again(db: &TestStore) {
    let store = &*db.store;
    let id = enqueue(store, "plan", "r", json!({"lines": ["second try"]})).await;
    let wide = ClaimLimits {
        global: 9,
        per_repo: 9,
        per_repo_exempt: &[],
    };
    let dead = store.claim("dead", &["plan"], Duration::ZERO, wide).await;
    assert!(dead.expect("claim").is_some());
    // The reaper runs when the pool starts: the expired lease is requeued and run here.
    let pool = Queue::new(db.store.clone(), settings())
        .handle("plan", Scripted)
        .start();
    let done = reaches(store, id, JobState::Succeeded).await;
    assert_eq!(done.attempts, 2);
    assert_ne!(done.worker.as_deref(), Some("dead"));
    pool.shutdown().await;
}

pub(crate) async fn handler_is_told_when_its_lease_is_lost(db: &TestStore) {
    let store = &*db.store;
    let id = enqueue(store, "plan", "r", json!({})).await;
    let (tx, mut reasons) = mpsc::unbounded_channel();
    // Heartbeats come too late for the lease, and the reaper runs often: the job is taken away.
    let mut s = settings();
    s.lease = Duration::from_millis(100);
    s.heartbeat = Duration::from_millis(400);
    s.reap_interval = Duration::from_millis(50);
    s.limits.global = 1;
    let pool = Queue::new(db.store.clone(), s)
        .handle("plan", UntilStopped(tx))
        .start();
    let reason = tokio::time::timeout(WITHIN, reasons.recv()).await;
    assert_eq!(
        reason.expect("a stop within the deadline"),
        Some(StopReason::LeaseLost)
    );
    let done = reaches(store, id, JobState::Succeeded).await;
    assert_eq!(done.attempts, 2, "the requeued job ran again");
    pool.shutdown().await;
}

pub(crate) async fn shutdown_stops_claiming_and_waits_for_running_jobs(db: &TestStore) {
    let store = &*db.store;
    let first = enqueue(store, "plan", "r", json!({})).await;
    let second = enqueue(store, "plan", "r", json!({})).await;
    let (tx, mut reasons) = mpsc::unbounded_channel();
    let mut s = settings();
    s.limits.global = 1;
    let pool = Queue::new(db.store.clone(), s)
        .handle("plan", UntilStopped(tx))
        .start();
    eventually(WITHIN, "the first job to log", || async {
        let log = store.job_log(first, 0).await.expect("log");
        (!log.is_empty()).then_some(())
    })
    .await;
    let report = pool.shutdown().await;
    assert_eq!(reasons.recv().await, Some(StopReason::Shutdown));
    assert_eq!(report.finished, 1);
    assert!(report.released.is_empty() && report.interrupted.is_empty());
    assert_eq!(job(store, first).await.state, JobState::Succeeded);
    assert_eq!(
        job(store, second).await.state,
        JobState::Queued,
        "nothing claimed after stop"
    );
}

pub(crate) async fn shutdown_after_grace_gives_back_running_and_interrupts_applying(
    db: &TestStore,
) {
    let store = &*db.store;
    let plan = enqueue(store, "plan", "r", json!({})).await;
    let apply = enqueue(store, "apply", "r", json!({})).await;
    let mut s = settings();
    s.shutdown_grace = Duration::from_millis(200);
    let pool = Queue::new(db.store.clone(), s)
        .handle("plan", Stubborn { apply: false })
        .handle("apply", Stubborn { apply: true })
        .start();
    reaches(store, apply, JobState::Applying).await;
    for id in [plan, apply] {
        eventually(WITHIN, "the job to start", || async {
            (!store.job_log(id, 0).await.expect("log").is_empty()).then_some(())
        })
        .await;
    }
    let report = pool.shutdown().await;
    assert_eq!(
        (report.released, report.interrupted),
        (vec![plan], vec![apply])
    );
    let given_back = job(store, plan).await;
    assert_eq!(
        (given_back.state, given_back.worker),
        (JobState::Queued, None)
    );
    let interrupted = job(store, apply).await;
    assert_eq!(interrupted.state, JobState::Interrupted);
    assert!(interrupted.error.is_some_and(|e| e.contains("not retried")));
}

pub(crate) async fn interrupted_apply_is_reported_to_the_caller(db: &TestStore) {
    let store = &*db.store;
    let id = enqueue(store, "apply", "r", json!({})).await;
    let wide = ClaimLimits {
        global: 9,
        per_repo: 9,
        per_repo_exempt: &[],
    };
    let dead = store
        .claim("dead", &["apply"], Duration::from_secs(60), wide)
        .await;
    assert!(dead.expect("claim").is_some());
    assert!(
        store
            .transition(id, "dead", JobState::Applying, None)
            .await
            .expect("applying")
    );
    assert!(
        store
            .heartbeat(id, "dead", Duration::ZERO)
            .await
            .expect("expire the lease")
    );
    let (tx, mut reports) = mpsc::unbounded_channel();
    let pool = Queue::new(db.store.clone(), settings())
        .handle("apply", Scripted)
        .report_reaped(tx)
        .start();
    let report = tokio::time::timeout(WITHIN, reports.recv()).await;
    let report = report
        .expect("a report within the deadline")
        .expect("a report");
    assert_eq!(report.interrupted, vec![id]);
    pool.shutdown().await;
    assert_eq!(
        job(store, id).await.state,
        JobState::Interrupted,
        "never run again"
    );
}
