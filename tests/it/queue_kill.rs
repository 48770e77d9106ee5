//! `kill -9` of a process that has accepted deliveries and is running jobs: after a restart the
//! accepted job is there and runs, the running plan is run again, the applying job is
//! `interrupted` (never retried), and a redelivery is still a duplicate.
//!
//! The child process is this test binary itself, running the ignored `child_serve_until_killed`.
//! Runs against SQLite, and PostgreSQL when `ATOLL_TEST_DATABASE_URL` is set.

use crate::support;

use crate::queue_worker::handlers;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use atoll::queue::{Queue, QueueSettings};
use atoll::store::{self, ClaimLimits, DeliveryOutcome, Job, JobState, NewDelivery, NewJob, Store};
use handlers::{Scripted, Stubborn};
use model::ForgeKind;
use serde_json::json;
use support::eventually;

const CHILD_ENV: &str = "ATOLL_KILL_TEST_STORE";
const WITHIN: Duration = Duration::from_secs(30);

fn settings() -> QueueSettings {
    QueueSettings {
        lease: Duration::from_secs(1),
        heartbeat: Duration::from_millis(250),
        poll_interval: Duration::from_millis(200),
        reap_interval: Duration::from_millis(100),
        limits: ClaimLimits {
            global: 4,
            per_repo: 4,
            per_repo_exempt: &[],
        },
        ..QueueSettings::default()
    }
}

fn delivery() -> NewDelivery {
    NewDelivery {
        forge: ForgeKind::Github,
        delivery_id: "72d3162e-cc78-11e3-81ab-4c9367dc0958".to_owned(),
        event: "issue_comment".to_owned(),
        repo: "github.com/acme/infra".to_owned(),
    }
}

fn new_job(kind: &str, dedup: &str) -> NewJob {
    NewJob {
        kind: kind.to_owned(),
        repo: "github.com/acme/infra".to_owned(),
        pr: Some(7),
        dedup_key: Some(dedup.to_owned()),
        payload: json!({"lines": ["ran after restart"]}),
    }
}

/// Kills the child on every path out of the test.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child half of job_accepted_before_kill_9_survives_and_runs_after_restart"]
async fn child_serve_until_killed() {
    let url = std::env::var(CHILD_ENV).expect("run by the parent test, which sets the store url");
    let store = store::connect(&url).await.expect("child opens the store");
    let plan = Some(new_job("plan", "comment:github:acme/infra:1"));
    let accepted = store
        .accept_delivery(delivery(), plan)
        .await
        .expect("accept");
    assert!(matches!(
        accepted,
        DeliveryOutcome::Accepted { job: Some(_) }
    ));
    store
        .enqueue(new_job("apply", "comment:github:acme/infra:2"))
        .await
        .expect("enqueue apply");
    // Acknowledged (as with a 202) but not yet claimed: this pool has no handler for it.
    store
        .enqueue(new_job("help", "comment:github:acme/infra:3"))
        .await
        .expect("enqueue later");
    let _pool = Queue::new(store, settings())
        .handle("plan", Stubborn { apply: false })
        .handle("apply", Stubborn { apply: true })
        .start();
    std::future::pending::<()>().await;
}

fn by_kind<'a>(jobs: &'a [Job], kind: &str) -> Option<&'a Job> {
    jobs.iter().find(|job| job.kind == kind)
}

async fn has_log(store: &dyn Store, job: &Job) -> bool {
    store
        .job_log(job.id, 0)
        .await
        .is_ok_and(|log| !log.is_empty())
}

async fn started(store: &dyn Store) -> Option<Vec<Job>> {
    let jobs = store.list_jobs(10).await.ok()?;
    let plan = by_kind(&jobs, "plan")?;
    let apply = by_kind(&jobs, "apply")?;
    let ready = plan.state == JobState::Running
        && apply.state == JobState::Applying
        && by_kind(&jobs, "help").is_some()
        && has_log(store, plan).await
        && has_log(store, apply).await;
    ready.then_some(jobs)
}

mod sqlite {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn job_accepted_before_kill_9_survives_and_runs_after_restart() {
        let db = crate::support::sqlite().await;
        super::kill_and_restart(&db.url).await;
    }
}

mod postgres {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn job_accepted_before_kill_9_survives_and_runs_after_restart() {
        let Some(db) = crate::support::postgres().await else {
            return;
        };
        super::kill_and_restart(&db.url).await;
        db.finish().await;
    }
}

async fn kill_and_restart(url: &str) {
    let exe = std::env::current_exe().expect("test binary path");
    let child = Command::new(exe)
        .args([
            "queue_kill::child_serve_until_killed",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_ENV, url)
        .stdout(Stdio::null())
        .spawn()
        .expect("spawning the child");
    let mut child = Killed(child);

    let observer = store::connect(url).await.expect("parent opens the store");
    let jobs = eventually(WITHIN, "the child to run plan and apply", || {
        started(&*observer)
    })
    .await;
    child.0.kill().expect("kill -9 the child"); // SIGKILL: no destructor, no shutdown
    child.0.wait().expect("reaping the child");
    drop(observer);

    let ids = |kind: &str| by_kind(&jobs, kind).map(|job| job.id).expect("job by kind");
    let (plan, apply, later) = (ids("plan"), ids("apply"), ids("help"));
    let restarted: Arc<dyn Store> = store::connect(url).await.expect("reopen after kill");
    let pool = Queue::new(restarted.clone(), settings())
        .handle("plan", Scripted)
        .handle("apply", Scripted)
        .handle("help", Scripted)
        .start();
    let state = |id| {
        let store = restarted.clone();
        async move { store.get_job(id).await.ok().flatten() }
    };
    let done = |id, want: JobState| {
        let state = &state;
        async move {
            eventually(
                WITHIN,
                &format!("job {id} to be {}", want.as_str()),
                || async { state(id).await.filter(|job| job.state == want) },
            )
            .await
        }
    };
    assert_eq!(done(later, JobState::Succeeded).await.attempts, 1);
    assert_eq!(
        done(plan, JobState::Succeeded).await.attempts,
        2,
        "plan re-run once"
    );
    let interrupted = done(apply, JobState::Interrupted).await;
    assert_eq!(
        interrupted.attempts, 1,
        "an interrupted apply is never retried"
    );
    let again = restarted
        .accept_delivery(delivery(), Some(new_job("plan", "x")))
        .await;
    assert_eq!(again.expect("redelivery"), DeliveryOutcome::Duplicate);
    pool.shutdown().await;
}
