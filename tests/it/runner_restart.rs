//! What survives a restart of atoll, black-box: an apply cut short by a crash is reported on its
//! PR by the next server on the same store (exactly once), and a plan after a restart still
//! hides the plan comments posted before it.

use std::time::{Duration, Instant};

use model::ForgeKind;

use crate::app_support::{Options, REPO, RESTART_QUEUE, TestApp};
use crate::support::Container;
use atoll::store::JobState;

const GUESTS: usize = 8;

fn eight_containers() -> String {
    (0..GUESTS)
        .map(|i| Container::new(&format!("ct{i}")).cores(1).hcl())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_interrupted_by_a_crash_is_reported_after_restart_exactly_once() {
    let mut w = TestApp::start(Options {
        task: Duration::from_millis(400),
        queue: Some(RESTART_QUEUE),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "eight",
            &[("envs/dev/main.tf", &eight_containers())],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    let sha = w.fake().head_sha(REPO, pr).expect("sha");
    w.approve_and_apply(pr).await;

    // Crash as soon as the first guest is done: the others are in progress or not started.
    let observer = w.observer().await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let apply = loop {
        let jobs = observer.list_jobs(50).await.expect("jobs");
        if let Some(job) = jobs.iter().find(|j| j.kind == "apply") {
            let log = observer.job_log(job.id, 0).await.expect("log");
            if log
                .iter()
                .any(|l| l.line.starts_with("guest[") && l.line.contains(": done: "))
            {
                break job.id;
            }
        }
        assert!(Instant::now() < deadline, "no guest finished: {jobs:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    w.crash();
    let job = observer.get_job(apply).await.expect("get").expect("job");
    assert_eq!(job.state, JobState::Applying, "the crash came mid-apply");
    assert!(w.comments_containing(pr, "Apply complete").is_empty());

    w.start_server().await;
    let report = w.comment_containing(pr, "Apply Interrupted").await;
    let body = &report.body;
    assert!(body.contains(&apply.to_string()), "{body}");
    assert!(body.contains("done:"), "{body}");
    assert!(
        body.contains("not started") || body.contains("in progress"),
        "some guests had not finished: {body}"
    );
    assert_eq!(
        body.matches("* `proxmox_virtual_environment_container.ct")
            .count(),
        GUESTS,
        "every planned guest is listed: {body}"
    );
    assert!(
        body.contains("Nothing will be retried automatically"),
        "{body}"
    );
    assert!(body.contains(" plan` to see the real state"), "{body}");
    // The report's comment goes out before its status: wait for the status rather than race it.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let statuses = w.fake().statuses(REPO, &sha);
        if statuses
            .iter()
            .any(|s| s.context == "atlantis/apply" && s.state == "failure")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no failed apply status: {statuses:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let job = observer.get_job(apply).await.expect("get").expect("job");
    assert_eq!(job.state, JobState::Interrupted, "never retried");

    // A further restart scans the store again and reports nothing twice.
    w.stop().await;
    w.start_server().await;
    w.fake()
        .comment(REPO, pr, "alice", "atlantis version")
        .await
        .expect("version");
    w.comment_containing(pr, &format!("atoll {}", env!("CARGO_PKG_VERSION")))
        .await;
    assert_eq!(w.comments_containing(pr, "Apply Interrupted").len(), 1);
    let reports = observer
        .list_jobs(100)
        .await
        .expect("jobs")
        .into_iter()
        .filter(|j| j.kind == "apply_interrupted")
        .count();
    assert_eq!(reports, 1);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_after_a_restart_hides_the_plan_comment_posted_before_it() {
    let mut w = TestApp::start(Options {
        queue: Some(RESTART_QUEUE),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "re",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr");
    let first = w.comment_containing(pr, "cores        = 2").await;
    w.stop().await;
    w.start_server().await;
    w.fake()
        .push(
            REPO,
            pr,
            &[("envs/dev/main.tf", &Container::new("web").cores(3).hcl())],
        )
        .await
        .expect("push");
    w.comment_containing(pr, "cores        = 3").await;
    w.comment_hidden(
        pr,
        first.id,
        "old plan comment not hidden after the restart",
    )
    .await;
    w.stop().await;
}

/// A job stored by an older version (or by hand) that this version cannot read fails at once
/// with the reason, is not retried, and the worker goes on with the next job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_job_that_no_longer_parses_fails_with_the_reason() {
    let w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let observer = w.observer().await;
    let bad = atoll::store::NewJob {
        kind: "apply".to_owned(),
        repo: "github.com/acme/infra".to_owned(),
        pr: Some(1),
        dedup_key: None,
        payload: serde_json::json!({
            "forge": "github", "repo": "acme-infra", "pr": 1, "comment_id": 5,
            "command": {"verb": "apply", "project": null, "dir": null, "workspace": null,
                        "verbose": false},
        }),
    };
    let id = match observer.enqueue(bad).await.expect("enqueue") {
        atoll::store::DeliveryOutcome::Accepted { job: Some(id) } => id,
        other => panic!("not queued: {other:?}"),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let job = loop {
        let job = observer.get_job(id).await.expect("job").expect("stored");
        if job.state.is_terminal() {
            break job;
        }
        assert!(Instant::now() < deadline, "still {:?}", job.state);
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.attempts, 1, "{job:?}");
    let error = job.error.unwrap_or_default();
    assert!(
        error.contains("not one this version of atoll reads"),
        "{error}"
    );
    assert!(error.contains("host/owner/name"), "{error}");
    // The worker is still there: a PR's autoplan runs as usual.
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").cores(1).hcl())],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
}
