//! What someone outside the repository, or a read-only collaborator, cannot make atoll do,
//! black-box over both fake forges: a command on a fork's pull request is refused before
//! anything is checked out (unless forks are allowed), an approval from a reviewer without
//! write access does not satisfy `approved`, and `atlantis unlock` needs write access or
//! authorship.

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use atoll::locks::LockQuery;
use atoll::store::JobState;
use fakeforge::ReviewAction;
use model::ForgeKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_fork_pr_comment_plan_is_refused_when_forks_are_not_allowed() {
    fork_pr_comment_plan_is_refused_when_forks_are_not_allowed(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_fork_pr_comment_plan_is_refused_when_forks_are_not_allowed() {
    fork_pr_comment_plan_is_refused_when_forks_are_not_allowed(ForgeKind::Gitea).await;
}

/// The attack of issue 11 finding 4: a read-only user opens a PR from a fork and comments
/// `atlantis plan`.
async fn fork_pr_comment_plan_is_refused_when_forks_are_not_allowed(kind: ForgeKind) {
    let mut w = TestApp::start(Options::new(kind)).await;
    let pr = w
        .fake()
        .open_fork_pr(
            REPO,
            "mallory",
            "mallory",
            "evil",
            &[("envs/dev/main.tf", &Container::new("evil").cores(2).hcl())],
        )
        .await
        .expect("fork pr");
    w.fake()
        .comment(REPO, pr, "mallory", "atlantis plan")
        .await
        .expect("comment");
    let reply = w.comment_containing(pr, "Plan Refused").await;
    assert!(reply.body.contains("`mallory/infra`"), "{}", reply.body);
    assert!(
        reply.body.contains("webhook.allow_fork_prs: true"),
        "{}",
        reply.body
    );
    let jobs = w.finished_jobs("plan").await;
    let log = &jobs[0].1;
    assert!(
        !log.iter().any(|l| l.starts_with("checkout")),
        "nothing of the fork is checked out: {log:#?}"
    );
    assert!(w.comments_containing(pr, "Plan:").is_empty());
    let sha = w.fake().head_sha(REPO, pr).expect("sha");
    let statuses = w.fake().statuses(REPO, &sha);
    assert!(
        statuses
            .iter()
            .any(|s| s.context == "atlantis/plan" && s.state == "failure"),
        "{statuses:?}"
    );
    // Nothing was autoplanned when the PR opened either.
    let observer = w.observer().await;
    let autoplans = observer
        .list_pr_jobs(&format!("{}/{REPO}", host(kind)), pr, "autoplan", 10)
        .await
        .expect("jobs");
    assert!(autoplans.is_empty(), "{autoplans:?}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_pr_comment_plan_runs_when_forks_are_allowed() {
    let mut w = TestApp::start(Options {
        extra: "webhook: {allow_fork_prs: true}\n".to_owned(),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let pr = w
        .fake()
        .open_fork_pr(
            REPO,
            "mallory",
            "mallory",
            "trusted",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("fork pr");
    // Autoplan runs on the fork's head, checked out from the fork.
    w.comment_containing(pr, "Plan: 1 to add").await;
    w.fake()
        .comment(REPO, pr, "mallory", "atlantis plan")
        .await
        .expect("comment");
    w.finished_jobs("plan").await;
    assert!(w.comments_containing(pr, "Refused").is_empty());
    assert_eq!(w.comments_containing(pr, "Plan: 1 to add").len(), 2);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_approval_by_a_read_only_reviewer_does_not_satisfy_approved() {
    approval_by_a_read_only_reviewer_does_not_satisfy_approved(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_approval_by_a_read_only_reviewer_does_not_satisfy_approved() {
    approval_by_a_read_only_reviewer_does_not_satisfy_approved(ForgeKind::Gitea).await;
}

async fn approval_by_a_read_only_reviewer_does_not_satisfy_approved(kind: ForgeKind) {
    let mut w = TestApp::start(Options::new(kind)).await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    w.fake().set_permission(REPO, "alice", "write");
    // The fake's default is read access: mallory can review, like anyone on a public repo.
    w.fake()
        .review(REPO, pr, "mallory", ReviewAction::Approve)
        .await
        .expect("approve");
    w.fake()
        .comment(REPO, pr, "alice", "atlantis apply")
        .await
        .expect("apply");
    let refused = w
        .comment_containing(pr, "does not meet the apply requirements")
        .await;
    assert!(refused.body.contains("`approved`"), "{}", refused.body);
    assert!(
        refused.body.contains("someone with write access"),
        "{}",
        refused.body
    );
    assert!(w.comments_containing(pr, "Apply complete").is_empty());
    // The same approval counts once the reviewer has write access.
    w.fake().set_permission(REPO, "mallory", "write");
    if kind == ForgeKind::Gitea {
        // Gitea decides `official` when the review is made: review again.
        w.fake()
            .review(REPO, pr, "mallory", ReviewAction::Approve)
            .await
            .expect("approve");
    }
    w.fake()
        .comment(REPO, pr, "alice", "atlantis apply")
        .await
        .expect("apply");
    w.comment_containing(pr, "Apply complete").await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_unlock_by_a_read_only_user_is_refused_and_keeps_the_locks() {
    unlock_by_a_read_only_user_is_refused_and_keeps_the_locks(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_unlock_by_a_read_only_user_is_refused_and_keeps_the_locks() {
    unlock_by_a_read_only_user_is_refused_and_keeps_the_locks(ForgeKind::Gitea).await;
}

async fn unlock_by_a_read_only_user_is_refused_and_keeps_the_locks(kind: ForgeKind) {
    let mut w = TestApp::start(Options::new(kind)).await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    let observer = w.observer().await;
    let locks = |observer: std::sync::Arc<dyn atoll::store::Store>| async move {
        observer
            .locks()
            .lock_list(&LockQuery {
                repo: None,
                pr: Some(pr),
            })
            .await
            .expect("locks")
            .len()
    };
    assert_eq!(locks(observer.clone()).await, 1);
    w.fake()
        .comment(REPO, pr, "mallory", "atlantis unlock")
        .await
        .expect("unlock");
    let refused = w.comment_containing(pr, "Unlock Failed").await;
    assert!(
        refused
            .body
            .contains("write access to this repository or authorship of this pull request"),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains("commands.unlock_requires"),
        "{}",
        refused.body
    );
    let unlocks = w.finished_jobs("unlock").await;
    assert_eq!(unlocks.len(), 1);
    assert_eq!(locks(observer.clone()).await, 1, "the lock is kept");
    // The author may (alice has only read access here).
    w.fake()
        .comment(REPO, pr, "alice", "atlantis unlock")
        .await
        .expect("unlock");
    w.comment_containing(pr, "Released 1 lock").await;
    assert_eq!(locks(observer).await, 0);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unlock_can_be_limited_to_the_pull_requests_author() {
    let mut w = TestApp::start(Options {
        extra: "commands: {unlock_requires: [author]}\n".to_owned(),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    w.fake().set_permission(REPO, "bob", "write");
    w.fake()
        .comment(REPO, pr, "bob", "atlantis unlock")
        .await
        .expect("unlock");
    let refused = w.comment_containing(pr, "Unlock Failed").await;
    assert!(
        refused
            .body
            .contains("needs authorship of this pull request"),
        "{}",
        refused.body
    );
    w.fake()
        .comment(REPO, pr, "alice", "atlantis unlock")
        .await
        .expect("unlock");
    w.comment_containing(pr, "Released 1 lock").await;
    let observer = w.observer().await;
    let unlocks = observer
        .list_pr_jobs(
            &format!("{}/{REPO}", host(ForgeKind::Github)),
            pr,
            "unlock",
            10,
        )
        .await
        .expect("jobs");
    assert!(unlocks.iter().all(|j| j.state == JobState::Succeeded));
    w.stop().await;
}

fn host(kind: ForgeKind) -> &'static str {
    match kind {
        ForgeKind::Github => "github.com",
        ForgeKind::Gitea => "gitea.example.com",
    }
}
