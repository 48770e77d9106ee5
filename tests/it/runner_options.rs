//! The run options of `atlantis.yaml` (issue 17 item 8), black-box through the fake forges:
//! `silence_pr_comments`, `emoji_reaction`, `plan_requirements`, `repo_locks`,
//! `execution_order_group` with `abort_on_execution_order_fail`, `depends_on`, and `automerge`
//! with `delete_source_branch_on_merge`.

use std::time::{Duration, Instant};

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use fakeforge::ReviewAction;
use model::ForgeKind;
use pvesim::TaskFailure;

/// A Terraform file the evaluator refuses, so its project's plan fails.
const BROKEN_TF: &str = "resource \"proxmox_virtual_environment_container\" \"x\" {\n";

fn world(kind: ForgeKind, requirements: &'static str) -> Options {
    Options {
        requirements,
        ..Options::new(kind)
    }
}

/// Waits (30 s) until `cond` holds; `what` names it in the failure.
async fn eventually(what: &str, mut cond: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond().await {
        assert!(Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silenced_projects_comment_only_when_their_plan_or_apply_fails() {
    let mut w = TestApp::start(world(
        ForgeKind::Github,
        "[]\n    allowed_overrides: [silence_pr_comments]",
    ))
    .await;
    let yaml = "version: 3\nprojects:\n- name: quiet\n  dir: quiet\n  \
                silence_pr_comments: [plan, apply]\n- name: hushed\n  dir: hushed\n  \
                silence_pr_comments: [apply]\n- name: broken\n  dir: broken\n  \
                silence_pr_comments: [plan]\n";
    let pr = w
        .open_pr(
            "alice",
            "quiet",
            &[
                ("atlantis.yaml", yaml),
                ("quiet/main.tf", &Container::new("quiet").hcl()),
                ("hushed/main.tf", &Container::new("hushed").hcl()),
                ("broken/main.tf", BROKEN_TF),
            ],
        )
        .await;
    let plan = w.comment_containing(pr, "Plan Error").await;
    assert!(plan.body.contains("### broken"), "{}", plan.body);
    assert!(plan.body.contains("### hushed"), "{}", plan.body);
    assert!(!plan.body.contains("quiet"), "{}", plan.body);

    w.fake().set_permission(REPO, "alice", "write");
    w.say(pr, "alice", "atlantis apply -p quiet").await;
    w.finished_jobs("apply").await;
    let sha = w.fake().head_sha(REPO, pr).expect("sha");
    let last = w
        .fake()
        .statuses(REPO, &sha)
        .into_iter()
        .rfind(|s| s.context == "atlantis/apply")
        .expect("an apply status");
    assert_eq!(last.state, "success", "{last:?} {:#?}", w.bot_comments(pr));
    assert!(
        w.comments_containing(pr, "Apply for").is_empty(),
        "a silenced apply that worked leaves no comment"
    );

    w.sim().faults().fail_tasks(TaskFailure {
        task_type: Some("vzcreate".to_owned()),
        vmid: None,
        message: "lvcreate 'pve/vm-101-disk-0' error: out of space".to_owned(),
        times: 1,
    });
    w.say(pr, "alice", "atlantis apply -p hushed").await;
    let failed = w.comment_containing(pr, "Apply failed").await;
    assert!(
        failed.body.contains("### Apply for hushed"),
        "{}",
        failed.body
    );
    assert!(failed.body.contains("out of space"), "{}", failed.body);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_command_comments_get_the_repositorys_emoji_reaction() {
    let mut w = TestApp::start(world(ForgeKind::Gitea, "[]")).await;
    let pr = w
        .open_pr(
            "alice",
            "emoji",
            &[
                ("atlantis.yaml", "version: 3\nemoji_reaction: rocket\n"),
                ("envs/dev/main.tf", &Container::new("web").hcl()),
            ],
        )
        .await;
    w.comment_containing(pr, "Plan:").await;
    let id = w
        .fake()
        .comment(REPO, pr, "alice", "atlantis plan")
        .await
        .expect("comment");
    let fake = w.fake();
    eventually("the rocket reaction", async || {
        fake.comments(REPO, pr)
            .iter()
            .find(|c| c.id == id)
            .is_some_and(|c| !c.reactions.is_empty())
    })
    .await;
    let reactions = fake
        .comments(REPO, pr)
        .into_iter()
        .find(|c| c.id == id)
        .map(|c| c.reactions)
        .unwrap_or_default();
    assert_eq!(reactions, [("atoll-bot".to_owned(), "rocket".to_owned())]);

    let other = w
        .open_pr(
            "alice",
            "bad-emoji",
            &[
                ("atlantis.yaml", "version: 3\nemoji_reaction: thumbsup\n"),
                ("lab/main.tf", &Container::new("lab").hcl()),
            ],
        )
        .await;
    let refused = w.comment_containing(other, "is not a reaction").await;
    assert!(refused.body.contains("`eyes`"), "{}", refused.body);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_plan_waits_for_the_plan_requirements_but_autoplan_does_not() {
    let mut w = TestApp::start(world(
        ForgeKind::Github,
        "[]\n    plan_requirements: [approved]",
    ))
    .await;
    let pr = w
        .open_pr(
            "alice",
            "reqs",
            &[("envs/dev/main.tf", &Container::new("web").hcl())],
        )
        .await;
    w.comment_containing(pr, "Plan:").await;
    w.say(pr, "alice", "atlantis plan").await;
    let refused = w.comment_containing(pr, "Plan Failed").await;
    assert!(refused.body.contains("`approved`"), "{}", refused.body);
    assert_eq!(w.comments_containing(pr, "Plan:").len(), 1);

    w.fake().set_permission(REPO, "bob", "write");
    w.fake()
        .review(REPO, pr, "bob", ReviewAction::Approve)
        .await
        .expect("approve");
    w.say(pr, "alice", "atlantis plan").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while w.comments_containing(pr, "Plan:").len() < 2 {
        assert!(Instant::now() < deadline, "no second plan");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_repo_locks_on_apply_two_prs_plan_and_the_second_apply_meets_the_lock() {
    let mut w = TestApp::start(world(
        ForgeKind::Github,
        "[]\n    allowed_overrides: [repo_locks]",
    ))
    .await;
    let yaml = "version: 3\nrepo_locks: {mode: on_apply}\nprojects:\n- dir: envs/dev\n";
    let first = w
        .open_pr(
            "alice",
            "a",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &Container::new("web").cores(2).hcl()),
            ],
        )
        .await;
    w.comment_containing(first, "Plan:").await;
    let second = w
        .open_pr(
            "carol",
            "b",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &Container::new("web").cores(3).hcl()),
            ],
        )
        .await;
    w.comment_containing(second, "Plan:").await;
    let store = w.observer().await;
    let locks = store
        .locks()
        .lock_list(&atoll::locks::LockQuery::default())
        .await
        .expect("locks");
    assert!(locks.is_empty(), "plans take no lock: {locks:?}");

    w.fake().set_permission(REPO, "alice", "write");
    w.fake().set_permission(REPO, "carol", "write");
    w.say(first, "alice", "atlantis apply").await;
    w.comment_containing(first, "Apply complete").await;
    let locks = store
        .locks()
        .lock_list(&atoll::locks::LockQuery::default())
        .await
        .expect("locks");
    assert_eq!(
        locks.iter().map(|l| l.owner.pr).collect::<Vec<_>>(),
        [first]
    );
    w.say(second, "carol", "atlantis apply").await;
    let conflict = w.comment_containing(second, "locked by pull request").await;
    assert!(
        conflict.body.contains(&format!("#{first}")),
        "{}",
        conflict.body
    );
    assert!(w.comments_containing(second, "Apply for").is_empty());
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execution_order_groups_plan_in_order_and_a_failure_skips_the_later_groups() {
    let mut w = TestApp::start(world(ForgeKind::Github, "[]")).await;
    let yaml = "version: 3\nabort_on_execution_order_fail: true\nprojects:\n\
                - name: app\n  dir: app\n  execution_order_group: 2\n\
                - name: db\n  dir: db\n  execution_order_group: 1\n\
                - name: broken\n  dir: broken\n  execution_order_group: 1\n\
                - name: late\n  dir: late\n  execution_order_group: 3\n";
    let pr = w
        .open_pr(
            "alice",
            "groups",
            &[
                ("atlantis.yaml", yaml),
                ("app/main.tf", &Container::new("app").hcl()),
                ("db/main.tf", &Container::new("db").hcl()),
                ("broken/main.tf", BROKEN_TF),
                ("late/main.tf", &Container::new("late").hcl()),
            ],
        )
        .await;
    let plan = w.comment_containing(pr, "Plan Skipped").await;
    let body = &plan.body;
    let at = |s: &str| body.find(s).unwrap_or_else(|| panic!("{s} in {body}"));
    assert!(at("### db") < at("### broken"), "{body}");
    assert!(at("### broken") < at("### app"), "{body}");
    assert!(at("### app") < at("### late"), "{body}");
    assert_eq!(body.matches("**Plan Skipped**").count(), 2, "{body}");
    assert!(
        body.contains("broken failed in an earlier execution order group"),
        "{body}"
    );
    assert!(
        body.contains("abort\\_on\\_execution\\_order\\_fail"),
        "{body}"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_applies_only_after_its_dependencies_and_one_apply_orders_them() {
    let mut w = TestApp::start(world(ForgeKind::Github, "[]")).await;
    let yaml = "version: 3\nprojects:\n- name: app\n  dir: app\n  depends_on: [db]\n\
                - name: db\n  dir: db\n";
    let pr = w
        .open_pr(
            "alice",
            "deps",
            &[
                ("atlantis.yaml", yaml),
                ("app/main.tf", &Container::new("app").hcl()),
                ("db/main.tf", &Container::new("db").hcl()),
            ],
        )
        .await;
    w.comment_containing(pr, "Plan:").await;
    w.fake().set_permission(REPO, "alice", "write");
    w.say(pr, "alice", "atlantis apply -p app").await;
    let refused = w.comment_containing(pr, "Apply Skipped").await;
    assert!(
        refused
            .body
            .contains(r"Can't apply your project unless you apply its dependencies first: \[db\]"),
        "{}",
        refused.body
    );
    assert!(w.comments_containing(pr, "Apply for").is_empty());

    w.say(pr, "alice", "atlantis apply").await;
    w.finished_jobs("apply").await;
    let applied = w.comments_containing(pr, "Apply complete");
    let labels: Vec<&str> = applied
        .iter()
        .map(|c| {
            if c.body.contains("Apply for db") {
                "db"
            } else {
                "app"
            }
        })
        .collect();
    assert_eq!(labels, ["db", "app"], "{applied:#?}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_automerge_merges_with_the_configured_method_or_reports_the_refusal() {
    automerge_merges_with_the_configured_method_or_reports_the_refusal(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_automerge_merges_with_the_configured_method_or_reports_the_refusal() {
    automerge_merges_with_the_configured_method_or_reports_the_refusal(ForgeKind::Gitea).await;
}

async fn automerge_merges_with_the_configured_method_or_reports_the_refusal(kind: ForgeKind) {
    let mut w = TestApp::start(world(
        kind,
        "[]\n    automerge_method: squash\n    allowed_overrides: [delete_source_branch_on_merge]",
    ))
    .await;
    let yaml = "version: 3\nautomerge: true\ndelete_source_branch_on_merge: true\n";
    let merged = w
        .open_pr(
            "alice",
            "to-merge",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &Container::new("web").hcl()),
            ],
        )
        .await;
    w.comment_containing(merged, "Plan:").await;
    w.fake().set_permission(REPO, "alice", "write");
    w.say(merged, "alice", "atlantis apply").await;
    let note = w.comment_containing(merged, "Automatically merged").await;
    assert!(note.body.contains("`squash`"), "{}", note.body);
    assert!(
        note.body.contains("The source branch is deleted"),
        "{}",
        note.body
    );
    assert_eq!(
        w.fake().merged_with(REPO, merged).as_deref(),
        Some("squash")
    );
    assert!(!w.fake().branch_exists(REPO, "to-merge").await);
    // The forge's `closed` webhook releases the locks, as for a merge by hand.
    w.comment_containing(merged, "Locks released").await;

    let refused = w
        .open_pr(
            "alice",
            "conflicted",
            &[
                ("atlantis.yaml", yaml),
                ("lab/main.tf", &Container::new("lab").hcl()),
            ],
        )
        .await;
    w.comment_containing(refused, "Plan:").await;
    w.fake()
        .set_mergeable(REPO, refused, Some(false), "dirty")
        .expect("conflict");
    w.say(refused, "alice", "atlantis apply").await;
    let failed = w.comment_containing(refused, "Automerge Failed").await;
    let reason = match kind {
        ForgeKind::Github => "Pull Request is not mergeable",
        ForgeKind::Gitea => "Please try again later",
    };
    assert!(failed.body.contains(reason), "{}", failed.body);
    assert!(failed.body.contains("HTTP 405"), "{}", failed.body);
    assert_eq!(w.fake().merged_with(REPO, refused), None);
    assert!(w.fake().branch_exists(REPO, "conflicted").await);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_that_fails_in_one_group_skips_the_later_groups_and_says_why() {
    let mut w = TestApp::start(world(ForgeKind::Gitea, "[]")).await;
    let yaml = "version: 3\nabort_on_execution_order_fail: true\nparallel_apply: true\n\
                projects:\n- name: second\n  dir: second\n  execution_order_group: 2\n\
                - name: first\n  dir: first\n  execution_order_group: 1\n";
    let pr = w
        .open_pr(
            "alice",
            "abort",
            &[
                ("atlantis.yaml", yaml),
                ("first/main.tf", &Container::new("first").hcl()),
                ("second/main.tf", &Container::new("second").hcl()),
            ],
        )
        .await;
    w.comment_containing(pr, "Plan:").await;
    w.fake().set_permission(REPO, "alice", "write");
    w.sim().faults().fail_tasks(TaskFailure {
        task_type: Some("vzcreate".to_owned()),
        vmid: None,
        message: "lvcreate error: out of space".to_owned(),
        times: 1,
    });
    w.say(pr, "alice", "atlantis apply").await;
    let skipped = w.comment_containing(pr, "Apply Skipped").await;
    assert!(
        skipped
            .body
            .contains("* second: not run because first failed"),
        "{}",
        skipped.body
    );
    assert!(
        skipped.body.contains("atoll apply -p second"),
        "{}",
        skipped.body
    );
    let failed = w.comment_containing(pr, "Apply failed").await;
    assert!(
        failed.body.contains("### Apply for first"),
        "{}",
        failed.body
    );
    assert!(w.comments_containing(pr, "Apply for second").is_empty());
    w.stop().await;
}

/// A project whose plan failed has no current plan; applying the other projects must not
/// merge the pull request (Atlantis's pull status shows the project errored), or a change
/// nobody applied would be merged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn automerge_waits_while_a_modified_project_has_no_current_plan() {
    let mut w = TestApp::start(world(ForgeKind::Github, "[]")).await;
    let yaml = "version: 3\nautomerge: true\n";
    let pr = w
        .open_pr(
            "alice",
            "half-broken",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &Container::new("web").hcl()),
                (
                    "lab/main.tf",
                    "resource \"proxmox_virtual_environment_container\" \"x\" {\n",
                ),
            ],
        )
        .await;
    let plan = w.comment_containing(pr, "Plan:").await;
    assert!(plan.body.contains("Plan Error"), "{}", plan.body);
    w.fake().set_permission(REPO, "alice", "write");
    w.say(pr, "alice", "atlantis apply").await;
    w.comment_containing(pr, "Apply complete").await;
    let applies = w.finished_jobs("apply").await;
    assert!(
        applies.iter().any(|(_, log)| log
            .iter()
            .any(|l| l.contains("automerge: not merging, no current plan for dir: lab"))),
        "{applies:#?}"
    );
    assert_eq!(w.fake().merged_with(REPO, pr), None);
    assert!(w.comments_containing(pr, "Automatically merged").is_empty());
    w.stop().await;
}

/// Atlantis's `apply --auto-merge-disabled` and `--auto-merge-method`: this apply does not
/// merge, or merges with the method it names instead of the configured one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_flags_turn_automerge_off_or_choose_its_method() {
    let mut w = TestApp::start(world(ForgeKind::Github, "[]")).await;
    let yaml = "version: 3\nautomerge: true\n";
    w.fake().set_permission(REPO, "alice", "write");
    let kept = w
        .open_pr(
            "alice",
            "kept-open",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &Container::new("web").hcl()),
            ],
        )
        .await;
    w.comment_containing(kept, "Plan:").await;
    w.say(kept, "alice", "atlantis apply --auto-merge-disabled")
        .await;
    w.comment_containing(kept, "Apply complete").await;
    let applies = w.finished_jobs("apply").await;
    assert!(
        applies.iter().any(|(_, log)| log
            .iter()
            .any(|l| l.contains("automerge: off for this apply"))),
        "{applies:#?}"
    );
    assert_eq!(w.fake().merged_with(REPO, kept), None);

    let rebased = w
        .open_pr(
            "alice",
            "rebased",
            &[
                ("atlantis.yaml", yaml),
                ("lab/main.tf", &Container::new("lab").hcl()),
            ],
        )
        .await;
    w.comment_containing(rebased, "Plan:").await;
    w.fake()
        .comment(
            REPO,
            rebased,
            "alice",
            "atlantis apply --auto-merge-method rebase",
        )
        .await
        .expect("apply");
    let note = w.comment_containing(rebased, "Automatically merged").await;
    assert!(note.body.contains("`rebase`"), "{}", note.body);
    assert_eq!(
        w.fake().merged_with(REPO, rebased).as_deref(),
        Some("rebase")
    );
    w.stop().await;
}
