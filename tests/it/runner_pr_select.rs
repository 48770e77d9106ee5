//! Project selection through a real PR, black-box: the fake forge sends the webhook of a PR
//! into `main`, atoll reads the base branch from the forge and applies `atlantis.yaml`'s
//! `branch` filter to it (Atlantis's rule: a project whose regex does not match the PR's base
//! branch is neither autoplanned nor selectable by comment).

use crate::app_support::{Options, TestApp};
use crate::support::Container;
use model::ForgeKind;

const YAML: &str = "version: 3
projects:
  - name: web-main
    dir: envs/dev
    branch: /^main$/
  - name: web-release
    dir: envs/prod
    branch: /^release\\//
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_for_another_base_branch_is_not_planned_and_a_comment_naming_it_is_told_why() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let pr = w
        .open_pr(
            "alice",
            "both",
            &[
                ("atlantis.yaml", YAML),
                ("envs/dev/main.tf", &Container::new("web").cores(2).hcl()),
                ("envs/prod/main.tf", &Container::new("rel").cores(2).hcl()),
            ],
        )
        .await;
    let plan = w.comment_containing(pr, "Plan:").await;
    assert!(plan.body.contains("web-main"), "{}", plan.body);
    assert!(!plan.body.contains("container.rel"), "{}", plan.body);
    assert!(
        plan.body.contains("is only for base branches matching"),
        "{}",
        plan.body
    );
    w.finished_jobs("autoplan").await;

    w.say(pr, "alice", "atlantis plan -p web-release").await;
    let refused = w.comment_containing(pr, "Plan Error").await;
    assert!(
        refused
            .body
            .contains("is configured in atlantis.yaml only for base branches"),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("base branch is"), "{}", refused.body);
    assert!(!refused.body.contains("Plan:"), "{}", refused.body);
    assert!(refused.body.contains("web-release"), "{}", refused.body);
    w.stop().await;
}

/// Atlantis's `DetermineWorkspaceFromHCL`: a discovered project whose configuration names a
/// Terraform Cloud workspace (`cloud { workspaces { name } }`) is planned, locked and kept in
/// that workspace, and `terraform.workspace` evaluates to it; a listed project keeps its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discovered_project_with_a_cloud_block_runs_in_the_workspace_it_names() {
    let mut w = TestApp::start(Options::new(ForgeKind::Gitea)).await;
    let cloud = "terraform {\n  cloud {\n    organization = \"acme\"\n    workspaces {\n      name = \"prod\"\n    }\n  }\n}\n";
    let main = Container::new("web")
        .body("  description = \"in ${terraform.workspace}\"")
        .hcl();
    let pr = w
        .open_pr(
            "alice",
            "cloud",
            &[("envs/prod/cloud.tf", cloud), ("envs/prod/main.tf", &main)],
        )
        .await;
    let plan = w.comment_containing(pr, "Plan:").await;
    assert!(
        plan.body.contains("dir: envs/prod workspace: prod"),
        "{}",
        plan.body
    );
    assert!(plan.body.contains("in prod"), "{}", plan.body);
    w.finished_jobs("autoplan").await;
    let locks = w
        .store
        .locks()
        .lock_list(&atoll::locks::LockQuery::default())
        .await
        .expect("locks");
    assert_eq!(locks.len(), 1, "{locks:#?}");
    assert_eq!(locks[0].key.workspace.as_str(), "prod", "{locks:#?}");
    w.stop().await;
}
