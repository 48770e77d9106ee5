//! A repository written as Atlantis's documentation writes its examples (issue 17, "Show"):
//! per-environment workflows with their own `-var-file` (the "Using -var-file per environment"
//! use case), execution order groups with `depends_on` and `abort_on_execution_order_fail`,
//! `autodiscover` with `ignore_paths` beside the listed projects, a project for another base
//! branch, and a server policy set. It plans and applies on the simulator as the documentation
//! says Atlantis would: each environment with its own values, the discovered directory too, the
//! release project left out, the policy check passed, the dependent project refused until its
//! dependency is applied, then everything applied in order.

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use atoll::proxmox::types::{GuestKind, NodeName, VmId};
use fakeforge::ReviewAction;
use model::ForgeKind;

const ATLANTIS_YAML: &str = r#"version: 3
parallel_plan: true
abort_on_execution_order_fail: true
autodiscover:
  mode: enabled
  ignore_paths: ["scratch/**"]
projects:
  - name: staging
    dir: stack
    workspace: staging
    workflow: staging
    execution_order_group: 1
  - name: production
    dir: stack
    workspace: production
    workflow: production
    execution_order_group: 2
    depends_on: [staging]
    apply_requirements: [approved]
  - name: release-only
    dir: release
    branch: /^release\//
workflows:
  staging:
    plan:
      steps:
        - init
        - plan:
            extra_args: ["-var-file", "staging.tfvars"]
  production:
    plan:
      steps:
        - init
        - plan:
            extra_args: ["-var-file", "production.tfvars"]
"#;

/// The server: repositories may pick and define workflows (as Atlantis's `repos.yaml` must
/// allow), and one policy set, the shipped "no privileged containers".
fn server_extra() -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    format!(
        "  - id: /.*/\n    allowed_overrides: [workflow, apply_requirements]\n    \
         allow_custom_workflows: true\n\
         policies:\n  owners: {{users: [carol]}}\n  policy_sets:\n    \
         - {{name: unprivileged, path: '{root}/docs/policies/unprivileged'}}\n"
    )
}

/// `stack/main.tf`: one container whose id and hostname come from the environment's file.
fn stack() -> String {
    let container = Container::new("app")
        .vm_id(None)
        .body("  vm_id = var.id\n  description = \"${var.env} app\"");
    format!(
        "variable \"id\" {{\n  type = number\n}}\nvariable \"env\" {{\n  type = string\n}}\n{}",
        container.hcl()
    )
}

/// `text` with each run of spaces as one (the plan aligns its `=` signs).
fn squashed(text: &str) -> String {
    text.split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atlantis_documentation_style_repository_plans_and_applies_as_atlantis_would() {
    let mut w = TestApp::start(Options {
        requirements: "[]",
        extra: server_extra(),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    for user in ["alice", "bob"] {
        w.fake().set_permission(REPO, user, "write");
    }
    let stack = stack();
    let network = Container::new("net").vm_id(Some(972)).hcl();
    let scratch = Container::new("tmp").vm_id(Some(973)).hcl();
    let release = Container::new("rel").vm_id(Some(974)).hcl();
    let pr = w
        .open_pr(
            "alice",
            "environments",
            &[
                ("atlantis.yaml", ATLANTIS_YAML),
                ("stack/main.tf", &stack),
                ("stack/staging.tfvars", "id = 970\nenv = \"staging\"\n"),
                (
                    "stack/production.tfvars",
                    "id = 971\nenv = \"production\"\n",
                ),
                ("network/main.tf", &network),
                ("scratch/main.tf", &scratch),
                ("release/main.tf", &release),
            ],
        )
        .await;

    // Autoplan: both environments with their own files, the discovered directory, not the
    // ignored one, not the project for release branches (named in a warning).
    let plan = w.comment_containing(pr, "Ran Plan for").await;
    let body = squashed(&plan.body);
    for needle in [
        "vm_id = 970",
        "description = \"staging app\"",
        "vm_id = 971",
        "description = \"production app\"",
        "dir: network workspace: default",
        "is only for base branches matching",
    ] {
        assert!(body.contains(needle), "{needle}: {}", plan.body);
    }
    for absent in ["vm_id = 973", "vm_id = 974"] {
        assert!(!body.contains(absent), "{absent}: {}", plan.body);
    }
    // Execution order groups: staging (1) is shown before production (2).
    let staging_at = plan.body.find("### staging").expect("staging");
    let production_at = plan.body.find("### production").expect("production");
    assert!(staging_at < production_at, "{}", plan.body);

    // The server's policy set ran over each plan and passed.
    let check = w.comment_containing(pr, "Policy Set: `unprivileged`").await;
    assert!(
        check.body.contains(":white_check_mark: passed"),
        "{}",
        check.body
    );

    // `depends_on`: production alone waits for staging.
    w.fake()
        .review(REPO, pr, "bob", ReviewAction::Approve)
        .await
        .expect("approve");
    w.say(pr, "alice", "atlantis apply -p production").await;
    let refused = w
        .comment_containing(
            pr,
            "Can't apply your project unless you apply its dependencies first",
        )
        .await;
    assert!(refused.body.contains("staging"), "{}", refused.body);
    let node: NodeName = "pve".parse().expect("node");
    let pve = w.pve();
    assert!(
        pve.guest_config(&node, GuestKind::Lxc, VmId::new(971).expect("id"), true)
            .await
            .is_err(),
        "production was applied before staging"
    );

    // One apply of everything applies staging first, then production, and the discovered one.
    w.say(pr, "alice", "atlantis apply").await;
    w.comment_containing(pr, "Apply complete").await;
    w.finished_jobs("apply").await;
    for (id, description) in [(970, "staging app"), (971, "production app"), (972, "")] {
        let config = pve
            .guest_config(&node, GuestKind::Lxc, VmId::new(id).expect("id"), true)
            .await
            .unwrap_or_else(|e| panic!("CT {id} was not created: {e}"));
        if !description.is_empty() {
            assert_eq!(
                config.get("description").unwrap_or_default().trim_end(),
                description
            );
        }
    }
    w.stop().await;
}
