//! Policy checks through the fake forges, with the example policy sets atoll ships
//! (`docs/policies/`) evaluated over real plans of the simulator: the policy comment and the
//! `atlantis/policy_check` status after a plan, apply refused while a set fails, who may
//! `approve_policies` (owners, not the author where self-approval is prevented), and a new plan
//! needing new approvals.

use std::time::{Duration, Instant};

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use fakeforge::FakeComment;
use model::ForgeKind;

/// `policies:` with the two shipped sets: `unprivileged` owned by alice and dave (alice may not
/// approve her own pull request), `datastores` by the global owner carol.
fn policies_yaml() -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    format!(
        "policies:\n  conftest_version: 0.46.0\n  owners: {{users: [carol]}}\n  policy_sets:\n    \
         - {{name: unprivileged, path: '{root}/docs/policies/unprivileged', source: local, \
         owners: {{users: [alice, dave]}}, prevent_self_approve: true}}\n    \
         - {{name: datastores, path: '{root}/docs/policies/datastores'}}\n"
    )
}

async fn world(kind: ForgeKind) -> TestApp {
    let w = TestApp::start(Options {
        requirements: "[policies_passed]",
        extra: policies_yaml(),
        ..Options::new(kind)
    })
    .await;
    for user in ["alice", "bob", "carol", "dave"] {
        w.fake().set_permission(REPO, user, "write");
    }
    w
}

/// Waits until atoll has posted `n` comments containing `needle` on `pr`; returns the last.
async fn nth_comment(w: &TestApp, pr: u64, needle: &str, n: usize) -> FakeComment {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = w.comments_containing(pr, needle);
        if found.len() >= n {
            return found[n - 1].clone();
        }
        assert!(
            Instant::now() < deadline,
            "fewer than {n} comments containing {needle:?} on #{pr}: {:#?}",
            w.bot_comments(pr)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn policy_status(w: &TestApp, pr: u64) -> Option<String> {
    let sha = w.fake().head_sha(REPO, pr).expect("sha");
    w.fake()
        .statuses(REPO, &sha)
        .into_iter()
        .rev()
        .find(|s| s.context == "atlantis/policy_check")
        .map(|s| s.state)
}

async fn say(w: &TestApp, pr: u64, user: &str, text: &str) {
    w.fake()
        .comment(REPO, pr, user, text)
        .await
        .expect("comment");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_privileged_container_fails_policy_until_an_owner_approves_and_replans_need_new_approval()
 {
    let w = world(ForgeKind::Github).await;
    let privileged = Container::new("web")
        .hcl()
        .replace("unprivileged = true", "unprivileged = false");
    let pr = w
        .open_pr("alice", "web", &[("envs/dev/main.tf", &privileged)])
        .await;

    let check = w.comment_containing(pr, "Policy Set: `unprivileged`").await;
    assert!(
        check.body.contains("privileged containers are not allowed"),
        "{}",
        check.body
    );
    assert!(
        check
            .body
            .contains("policy set: unprivileged: requires: 1 approval(s), have: 0."),
        "{}",
        check.body
    );
    assert!(
        check.body.contains("policy set: datastores: passed."),
        "{}",
        check.body
    );
    assert!(
        check.body.contains("atoll approve_policies -d envs/dev"),
        "{}",
        check.body
    );
    w.finished_jobs("autoplan").await;
    assert_eq!(policy_status(&w, pr).as_deref(), Some("failure"));

    say(&w, pr, "alice", "atlantis apply").await;
    let refused = w.comment_containing(pr, "Apply Failed").await;
    assert!(
        refused.body.contains("`policies_passed`"),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("unprivileged"), "{}", refused.body);

    say(&w, pr, "bob", "atlantis approve_policies").await;
    let not_owner = w.comment_containing(pr, "is not a policy owner").await;
    assert!(not_owner.body.contains("bob"), "{}", not_owner.body);

    say(&w, pr, "alice", "atlantis approve_policies").await;
    let own = w.comment_containing(pr, "prevents self-approval").await;
    assert!(own.body.contains("have: 0."), "{}", own.body);

    say(&w, pr, "dave", "atlantis approve_policies -d envs/dev").await;
    let approved = w.comment_containing(pr, "approved (1 of 1").await;
    assert!(
        approved
            .body
            .contains("policy set: unprivileged: approved."),
        "{}",
        approved.body
    );
    w.finished_jobs("approve_policies").await;
    assert_eq!(policy_status(&w, pr).as_deref(), Some("success"));

    // A new plan is checked again and needs new approvals.
    say(&w, pr, "alice", "atlantis plan").await;
    let again = nth_comment(&w, pr, "Policy Set: `unprivileged`", 2).await;
    assert!(again.body.contains("have: 0."), "{}", again.body);
    w.finished_jobs("plan").await;
    say(&w, pr, "alice", "atlantis apply").await;
    nth_comment(&w, pr, "Apply Failed", 2).await;

    say(
        &w,
        pr,
        "carol",
        "atlantis approve_policies --policy-set unprivileged",
    )
    .await;
    nth_comment(&w, pr, "approved (1 of 1", 2).await;
    say(&w, pr, "alice", "atlantis apply").await;
    let applied = w.comment_containing(pr, "Apply complete").await;
    assert!(applied.body.contains("web"), "{}", applied.body);

    // With policy sets configured, help lists the command.
    say(&w, pr, "alice", "atlantis help").await;
    w.comment_containing(pr, "atoll approve_policies [-p NAME")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_a_disallowed_datastore_fails_and_a_passing_plan_applies() {
    let w = world(ForgeKind::Gitea).await;
    // `local` holds no container root disks on the simulator, as on a default PVE install:
    // the policy catches what the apply would fail on.
    let elsewhere = Container::new("web")
        .hcl()
        .replace("datastore_id = \"local-lvm\"", "datastore_id = \"local\"");
    let pr = w
        .open_pr("alice", "web", &[("envs/dev/main.tf", &elsewhere)])
        .await;
    let failed = w.comment_containing(pr, "Policy Set: `datastores`").await;
    assert!(
        failed
            .body
            .contains("is on datastore local, which is not allowed"),
        "{}",
        failed.body
    );
    assert!(
        failed
            .body
            .contains("policy set: datastores: requires: 1 approval(s), have: 0."),
        "{}",
        failed.body
    );
    assert!(
        failed.body.contains("policy set: unprivileged: passed."),
        "{}",
        failed.body
    );
    w.finished_jobs("autoplan").await;
    assert_eq!(policy_status(&w, pr).as_deref(), Some("failure"));
    say(&w, pr, "carol", "atlantis approve_policies").await;
    let approved = w.comment_containing(pr, "approved (1 of 1").await;
    assert!(
        approved.body.contains("policy set: datastores: approved."),
        "{}",
        approved.body
    );

    w.fake()
        .push(
            REPO,
            pr,
            &[("envs/dev/main.tf", &Container::new("web").hcl())],
        )
        .await
        .expect("push");
    let passed = nth_comment(&w, pr, "Policy Set: `datastores`", 2).await;
    assert!(
        passed.body.contains("policy set: datastores: passed."),
        "{}",
        passed.body
    );
    assert!(
        passed.body.contains("atoll apply -d envs/dev"),
        "{}",
        passed.body
    );
    w.finished_jobs("autoplan").await;
    assert_eq!(policy_status(&w, pr).as_deref(), Some("success"));
    say(&w, pr, "alice", "atlantis apply").await;
    let applied = w.comment_containing(pr, "Apply complete").await;
    assert!(applied.body.contains("web"), "{}", applied.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_policies_without_policy_sets_says_there_is_nothing_to_approve() {
    let w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let pr = w
        .open_pr(
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").hcl())],
        )
        .await;
    w.comment_containing(pr, "Plan:").await;
    w.finished_jobs("autoplan").await;
    assert!(
        w.comments_containing(pr, "Policy Set").is_empty(),
        "no policy check without policy sets"
    );
    assert_eq!(policy_status(&w, pr), None);
    say(&w, pr, "alice", "atlantis approve_policies").await;
    let refused = w.comment_containing(pr, "Approve Policies Error").await;
    assert!(refused.body.contains("no policy sets"), "{}", refused.body);
}
