//! How much one pull request can make atoll post or retry, black-box: a reply is cut to
//! `commands.max_reply_comments` comments with a note linking the job's log, a burst of
//! identical `atlantis apply` comments runs one apply and gets one answer, and a job whose
//! worker keeps dying is failed after `queue.max_attempts` and its pull request told.

use std::time::{Duration, Instant};

use crate::app_support::{Options, REPO, TestApp};
use crate::support::{Container, TEMPLATE};
use atoll::store::JobState;
use fakeforge::ReviewAction;
use model::ForgeKind;

const PUBLIC_URL: &str = "https://atoll.example.com";

/// `count` containers with a description: a plan of several thousand lines.
fn many_containers(count: u32) -> String {
    format!(
        r#"resource "proxmox_virtual_environment_container" "lxc" {{
  count = {count}
  node_name = "pve"
  unprivileged = true
  description = "one of many"
  operating_system {{
    template_file_id = "{TEMPLATE}"
    type             = "debian"
  }}
  disk {{
    datastore_id = "local-lvm"
    size         = 8
  }}
  memory {{
    dedicated = 512
  }}
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_reply_is_cut_to_the_configured_comments_with_a_link_to_the_job_log() {
    let mut w = TestApp::start(Options {
        server_extra: format!(", public_url: '{PUBLIC_URL}'"),
        auth: format!(
            "{}, max_comment_chars: 20000",
            Options::new(ForgeKind::Gitea).auth
        ),
        extra: "commands: {max_reply_comments: 3}\n".to_owned(),
        wait: Duration::from_secs(90),
        ..Options::new(ForgeKind::Gitea)
    })
    .await;
    w.fake().set_max_comment_chars(20_000);
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "big",
            &[("envs/big/main.tf", &many_containers(400))],
        )
        .await
        .expect("pr");
    let jobs = w.finished_jobs("autoplan").await;
    let (id, log) = &jobs[0];
    let parts = w.bot_comments(pr);
    assert_eq!(
        parts.len(),
        3,
        "{:#?}",
        parts.iter().map(|c| c.body.len()).collect::<Vec<_>>()
    );
    for part in &parts {
        assert!(part.body.chars().count() <= 20_000);
    }
    let note = &parts[1].body;
    assert!(note.contains("**Output truncated**"), "{note}");
    assert!(
        note.contains(&format!("[the job's log]({PUBLIC_URL}/jobs/{id})")),
        "{note}"
    );
    assert!(parts[2].body.starts_with("(continued, part 3 of 3)"));
    assert!(
        parts[2].body.contains("Plan: 400 to add"),
        "the end of the reply (summary, next step) is kept: {}",
        parts[2].body
    );
    assert!(
        log.iter().any(|l| l.starts_with("reply: ")),
        "the left-out text is in the job's log"
    );
    w.stop().await;
}

/// 100 concurrent identical `atlantis apply` comments (issue 11 finding 19).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_apply_comments_at_once_run_one_apply_and_get_one_answer() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "many",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    w.fake().set_permission(REPO, "alice", "write");
    w.fake().set_permission(REPO, "bob", "write");
    w.fake()
        .review(REPO, pr, "bob", ReviewAction::Approve)
        .await
        .expect("approve");
    const N: usize = 100;
    let sends = (0..N).map(|_| w.fake().comment(REPO, pr, "alice", "atlantis apply"));
    for sent in futures::future::join_all(sends).await {
        sent.expect("comment");
    }
    let observer = w.observer().await;
    let deadline = Instant::now() + Duration::from_secs(120);
    let applies = loop {
        let applies = observer
            .list_pr_jobs("github.com/acme/infra", pr, "apply", 500)
            .await
            .expect("jobs");
        if applies.len() == N && applies.iter().all(|j| j.state.is_terminal()) {
            break applies;
        }
        assert!(
            Instant::now() < deadline,
            "applies did not finish: {applies:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    w.finished_jobs("apply_coalesced").await;
    assert!(applies.iter().all(|j| j.state == JobState::Succeeded));
    let applied = applies.iter().filter(|j| j.applying_at.is_some()).count();
    assert_eq!(applied, 1, "exactly one apply changed anything");
    let answers: Vec<_> = w
        .bot_comments(pr)
        .into_iter()
        .filter(|c| !c.body.contains("Plan:"))
        .collect();
    assert!(answers.len() <= 2, "{answers:#?}");
    assert_eq!(
        answers
            .iter()
            .filter(|c| c.body.contains("Apply complete"))
            .count(),
        1,
        "{answers:#?}"
    );
    assert!(
        answers.iter().any(|c| c.body.contains("are not run again")),
        "{answers:#?}"
    );
    assert!(w.comments_containing(pr, "stale").is_empty());
    w.stop().await;
}

/// With several jobs of a repository running at once, the later identical applies see the
/// first one still queued or running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_apply_comments_running_side_by_side_still_apply_once() {
    let mut w = TestApp::start(Options {
        queue: Some("{max_running: 8, max_running_per_repo: 8}"),
        task: Duration::from_millis(300),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "side",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    w.fake().set_permission(REPO, "alice", "write");
    w.fake().set_permission(REPO, "bob", "write");
    w.fake()
        .review(REPO, pr, "bob", ReviewAction::Approve)
        .await
        .expect("approve");
    const N: usize = 12;
    let sends = (0..N).map(|_| w.fake().comment(REPO, pr, "alice", "atlantis apply"));
    for sent in futures::future::join_all(sends).await {
        sent.expect("comment");
    }
    let observer = w.observer().await;
    let deadline = Instant::now() + Duration::from_secs(120);
    let applies = loop {
        let applies = observer
            .list_pr_jobs("github.com/acme/infra", pr, "apply", 100)
            .await
            .expect("jobs");
        if applies.len() == N && applies.iter().all(|j| j.state.is_terminal()) {
            break applies;
        }
        assert!(
            Instant::now() < deadline,
            "applies did not finish: {applies:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    w.finished_jobs("apply_coalesced").await;
    assert_eq!(
        applies.iter().filter(|j| j.applying_at.is_some()).count(),
        1
    );
    let answers: Vec<_> = w
        .bot_comments(pr)
        .into_iter()
        .filter(|c| !c.body.contains("Plan:"))
        .collect();
    assert!(answers.len() <= 2, "{answers:#?}");
    assert_eq!(
        answers
            .iter()
            .filter(|c| c.body.contains("Apply complete"))
            .count(),
        1,
        "{answers:#?}"
    );
    assert!(
        answers
            .iter()
            .any(|c| c.body.contains("already queued or running")),
        "the duplicates ran while the first apply did: {answers:#?}"
    );
    w.stop().await;
}

/// A job that kills its worker each time it runs (issue 11 finding 1: a crash loop).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_whose_worker_keeps_dying_is_failed_after_max_attempts_and_the_pr_told() {
    let mut w = TestApp::start(Options {
        queue: Some("{lease_secs: 5, heartbeat_secs: 1, shutdown_grace_secs: 30, max_attempts: 2}"),
        // Slow enough that the plan is still running when the test kills the server.
        sim_latency: Duration::from_secs(2),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "bomb",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr");
    let observer = w.observer().await;
    for attempt in 1..=2u32 {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let jobs = observer
                .list_pr_jobs("github.com/acme/infra", pr, "autoplan", 10)
                .await
                .expect("jobs");
            let running = jobs
                .iter()
                .any(|j| j.state == JobState::Running && j.attempts == attempt);
            if running {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "attempt {attempt} never started: {jobs:#?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The worker process dies under the job, as under an OOM kill.
        w.crash();
        w.start_server().await;
    }
    let report = w.comment_containing(pr, "was started 2 times").await;
    assert!(report.body.contains("**Plan Failed**"), "{}", report.body);
    assert!(
        report.body.contains("queue.max_attempts"),
        "{}",
        report.body
    );
    assert!(report.body.contains("SECURITY.md"), "{}", report.body);
    assert!(
        report.body.contains(" plan` to try again"),
        "{}",
        report.body
    );
    let jobs = observer
        .list_pr_jobs("github.com/acme/infra", pr, "autoplan", 10)
        .await
        .expect("jobs");
    assert_eq!(
        jobs.iter()
            .map(|j| (j.state, j.lost_leases))
            .collect::<Vec<_>>(),
        vec![(JobState::Failed, 2)]
    );
    assert!(
        w.comments_containing(pr, "Plan:").is_empty(),
        "never started a third time"
    );
    // The status is set after the comment.
    w.finished_jobs("job_gave_up").await;
    let sha = w.fake().head_sha(REPO, pr).expect("sha");
    assert!(
        w.fake()
            .statuses(REPO, &sha)
            .iter()
            .any(|s| s.context == "atlantis/plan" && s.state == "failure")
    );
    // A restart reports it no second time.
    w.stop().await;
    w.start_server().await;
    w.fake()
        .comment(REPO, pr, "alice", "atlantis version")
        .await
        .expect("version");
    w.comment_containing(pr, &format!("atoll {}", env!("CARGO_PKG_VERSION")))
        .await;
    assert_eq!(w.comments_containing(pr, "was started 2 times").len(), 1);
    w.stop().await;
}
