//! `atlantis cancel` and `--verbose`, black-box over the fake forges: a cancel reaches the
//! commands queued behind a running one (the queue's per-repository cap does not hold it back),
//! cancels them before they start, leaves the running one to finish and says so; only someone
//! who may unlock may cancel; `--verbose` posts the job's log after the reply; `run` is accepted
//! as the executable name, as Atlantis accepts it.

use std::time::{Duration, Instant};

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use atoll::store::{Job, JobState, Store};
use model::ForgeKind;

const REPO_ID: &str = "github.com/acme/infra";

/// Waits (60 s) until `check` holds for the PR's jobs of `kind`; returns them.
async fn jobs_until(
    store: &dyn Store,
    pr: u64,
    kind: &str,
    what: &str,
    check: impl Fn(&[Job]) -> bool,
) -> Vec<Job> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let jobs = store
            .list_pr_jobs(REPO_ID, pr, kind, 20)
            .await
            .expect("jobs");
        if check(&jobs) {
            return jobs;
        }
        assert!(Instant::now() < deadline, "{what}: {jobs:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_queued_plan_behind_a_running_one_and_lets_the_running_one_finish() {
    let mut w = TestApp::start(Options {
        // Slow enough that the first plan is still running while the others queue behind it.
        sim_latency: Duration::from_millis(700),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let fake = w.fake();
    fake.set_permission(REPO, "alice", "write");
    let pr = fake
        .open_pr(
            REPO,
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr");
    let observer = w.observer().await;
    jobs_until(
        &*observer,
        pr,
        "autoplan",
        "the autoplan never ran",
        |jobs| jobs.iter().any(|j| j.state == JobState::Running),
    )
    .await;
    fake.comment(REPO, pr, "alice", "atlantis plan -d envs/dev")
        .await
        .expect("plan comment");
    jobs_until(&*observer, pr, "plan", "the plan was not queued", |jobs| {
        jobs.iter().any(|j| j.state == JobState::Queued)
    })
    .await;
    fake.comment(REPO, pr, "alice", "atlantis cancel")
        .await
        .expect("cancel comment");
    let reply = w.comment_containing(pr, "**Cancelled** 1 queued").await;
    assert!(
        reply
            .body
            .contains("`atoll plan -d envs/dev`, asked by alice"),
        "{}",
        reply.body
    );
    assert!(reply.body.contains("Still running"), "{}", reply.body);
    assert!(reply.body.contains("autoplan of"), "{}", reply.body);
    // The cancelled plan never runs; the autoplan that was running finishes with its plan.
    w.comment_containing(pr, "Plan:").await;
    let plans = jobs_until(&*observer, pr, "plan", "the plan job", |jobs| {
        jobs.iter().all(|j| j.state.is_terminal())
    })
    .await;
    assert_eq!(plans.len(), 1, "{plans:#?}");
    assert_eq!(plans[0].state, JobState::Cancelled);
    assert_eq!(plans[0].attempts, 0, "a cancelled job never started");
    assert_eq!(
        plans[0].error.as_deref(),
        Some("cancelled by alice with `atoll cancel`")
    );
    let autoplans = jobs_until(&*observer, pr, "autoplan", "the autoplan", |jobs| {
        jobs.iter().all(|j| j.state.is_terminal())
    })
    .await;
    assert_eq!(autoplans[0].state, JobState::Succeeded, "{autoplans:#?}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_with_nothing_queued_says_so_and_an_outsider_may_not_cancel() {
    let mut w = TestApp::start(Options::new(ForgeKind::Gitea)).await;
    let fake = w.fake();
    let pr = fake
        .open_pr(
            REPO,
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").hcl())],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    // mallory neither wrote the PR nor has write access.
    fake.comment(REPO, pr, "mallory", "atlantis cancel")
        .await
        .expect("cancel comment");
    let refused = w.comment_containing(pr, "**Cancel Failed**").await;
    assert!(refused.body.contains("mallory"), "{}", refused.body);
    assert!(
        refused.body.contains("commands.unlock_requires"),
        "{}",
        refused.body
    );
    // `run` is an executable name, as in Atlantis; the author may cancel.
    fake.comment(REPO, pr, "alice", "run cancel")
        .await
        .expect("cancel comment");
    let reply = w.comment_containing(pr, "**Nothing to cancel**").await;
    assert!(reply.body.contains("plan` to plan again"), "{}", reply.body);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_plan_posts_the_jobs_log_after_the_plan() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let fake = w.fake();
    let pr = fake
        .open_pr(
            REPO,
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").hcl())],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    assert!(
        w.comments_containing(pr, "Log of this job").is_empty(),
        "a plan without --verbose posts no log"
    );
    fake.comment(REPO, pr, "alice", "atlantis plan --verbose")
        .await
        .expect("plan comment");
    let log = w.comment_containing(pr, "Log of this job").await;
    assert!(log.body.contains("<details>"), "{}", log.body);
    assert!(log.body.contains("--verbose"), "{}", log.body);
    assert!(
        log.body.contains("comment"),
        "the plan's steps: {}",
        log.body
    );
    let plans = w.comments_containing(pr, "Plan:");
    assert_eq!(plans.len(), 2, "{plans:#?}");
    assert!(
        plans.iter().all(|p| p.id < log.id),
        "the log follows the plan"
    );
    w.stop().await;
}
