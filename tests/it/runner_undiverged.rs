//! The `undiverged` apply requirement, black-box on real git: a PR whose branch contains the
//! base branch's current head may apply; once the base moves on (another PR merged), apply is
//! refused, naming the requirement and what to do.

use crate::app_support::{Options, REPO, RESTART_QUEUE, TestApp};
use crate::support::Container;
use model::ForgeKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_undiverged_is_met_until_the_base_moves_on() {
    undiverged_is_met_until_the_base_moves_on(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_undiverged_is_met_until_the_base_moves_on() {
    undiverged_is_met_until_the_base_moves_on(ForgeKind::Gitea).await;
}

async fn undiverged_is_met_until_the_base_moves_on(kind: ForgeKind) {
    let mut w = TestApp::start(Options {
        requirements: "[undiverged]",
        queue: Some(RESTART_QUEUE),
        ..Options::new(kind)
    })
    .await;
    w.fake().set_permission(REPO, "alice", "write");
    let first = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "a",
            &[("envs/a/main.tf", &Container::new("a").cores(1).hcl())],
        )
        .await
        .expect("pr 1");
    w.comment_containing(first, "Plan:").await;
    let second = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "b",
            &[("envs/b/main.tf", &Container::new("b").cores(1).hcl())],
        )
        .await
        .expect("pr 2");
    w.comment_containing(second, "Plan:").await;

    // Both branch off the current main: the first applies.
    w.fake()
        .comment(REPO, first, "alice", "atlantis apply")
        .await
        .expect("apply 1");
    w.comment_containing(first, "Apply complete").await;
    w.fake().merge(REPO, first).await.expect("merge 1");
    w.comment_containing(first, "Locks released").await;

    // main now has the first PR's commit, which the second branch lacks.
    w.fake()
        .comment(REPO, second, "alice", "atlantis apply")
        .await
        .expect("apply 2");
    let refused = w.comment_containing(second, "Apply Failed").await;
    assert!(refused.body.contains("`undiverged`"), "{}", refused.body);
    assert!(
        refused.body.contains("rebase it onto main"),
        "{}",
        refused.body
    );
    assert!(w.comments_containing(second, "Apply complete").is_empty());
    w.stop().await;
}
