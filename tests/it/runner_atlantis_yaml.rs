//! Issue 17's bugs, black-box through the fake forge: an `atlantis.yaml` written for Atlantis
//! is planned (with warnings for keys atoll ignores), and a comment whose `-w` does not match
//! what the file configures is refused instead of planned with the server's defaults.

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use model::ForgeKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atlantis_only_keys_are_warned_about_and_empty_values_planned_as_atlantis_does() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let yaml = "version: 3\nrepo_locks: {mode: on_plan}\nemoji_reaction: eyes\n\
                silence_pr_comments: [apply]\nprojects:\n- dir: envs/dev\n  workspace: \"\"\n  \
                autoplan:\n";
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "keys",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &Container::new("web").cores(2).hcl()),
            ],
        )
        .await
        .expect("open pr");
    let plan = w.comment_containing(pr, "Plan:").await;
    // `workspace: ""` is `default` and `autoplan:` alone keeps autoplan on, as in Atlantis.
    assert!(
        plan.body.contains("dir: envs/dev workspace: default"),
        "{}",
        plan.body
    );
    // Markdown escapes the underscores. Top-level keys the server rules do not let the
    // repository override are ignored with a warning, as Atlantis ignores them.
    for key in [r"repo\_locks", r"silence\_pr\_comments"] {
        assert!(
            plan.body
                .contains(&format!("{key}: is ignored: the server rules")),
            "{}",
            plan.body
        );
    }
    assert!(!plan.body.contains(r"emoji\_reaction"), "{}", plan.body);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mistyped_workspace_is_refused_and_an_ambiguous_one_asks_for_a_project_name() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let yaml = "version: 3\nprojects:\n- dir: envs/dev\n  workspace: notmyworkspace\n  \
                autoplan: {enabled: false}\n- name: blue\n  dir: lab\n  workspace: ws\n  \
                autoplan: {enabled: false}\n- name: green\n  dir: lab\n  workspace: ws\n  \
                autoplan: {enabled: false}\n";
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "typo",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &Container::new("web").cores(2).hcl()),
                ("lab/main.tf", &Container::new("lab").cores(1).hcl()),
            ],
        )
        .await
        .expect("open pr");
    w.fake()
        .comment(
            REPO,
            pr,
            "alice",
            "atlantis plan -d envs/dev -w myworkspace",
        )
        .await
        .expect("comment");
    let refused = w
        .comment_containing(pr, "only configured for the following workspaces")
        .await;
    assert!(
        refused.body.contains("`notmyworkspace`"),
        "{}",
        refused.body
    );
    w.fake()
        .comment(REPO, pr, "alice", "atlantis plan -d lab -w ws")
        .await
        .expect("comment");
    let ambiguous = w.comment_containing(pr, "must specify project name").await;
    assert!(
        ambiguous.body.contains("`blue`, `green`"),
        "{}",
        ambiguous.body
    );
    assert!(w.comments_containing(pr, "Plan:").is_empty());
    let locks = w
        .observer()
        .await
        .locks()
        .lock_list(&atoll::locks::LockQuery::default())
        .await
        .expect("locks");
    assert!(
        locks.is_empty(),
        "nothing was planned, so no lock: {locks:?}"
    );
    w.stop().await;
}
