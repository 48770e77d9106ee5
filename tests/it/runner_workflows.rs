//! Custom workflows through the fake forge (issue 17 item 2): per-environment variable files
//! and `TF_VAR_*` from two workflows plan two different containers and the saved plan applies
//! with them; a `run` step refuses only the project using it; a repository's own `workflows:`
//! is refused with Atlantis's words unless the server allows custom workflows; and a workflow
//! the server defines, picked by a repo rule, applies to projects that name none.

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use atoll::proxmox::types::{GuestKind, NodeName, VmId};
use model::ForgeKind;

/// A repo rule letting `atlantis.yaml` pick and define workflows (continues `repos:`).
const ALLOW_WORKFLOWS: &str =
    "  - id: /.*/\n    allowed_overrides: [workflow]\n    allow_custom_workflows: true\n";

/// `stack/main.tf`: one container whose id, cores and description come from variables.
fn stack() -> String {
    let container = Container::new("web")
        .vm_id(None)
        .body("  vm_id = var.id\n  description = var.owner\n  cpu {\n    cores = var.cores\n  }");
    format!(
        "variable \"id\" {{\n  type = number\n}}\nvariable \"cores\" {{\n  default = 1\n}}\n\
         variable \"owner\" {{\n  default = \"nobody\"\n}}\n{}",
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
async fn two_workflows_with_their_own_var_files_plan_and_apply_their_own_values() {
    let mut w = TestApp::start(Options {
        extra: ALLOW_WORKFLOWS.to_owned(),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let yaml = r#"version: 3
projects:
  - {name: prod, dir: stack, workflow: prod, autoplan: {enabled: false}}
  - {name: dev, dir: stack, workspace: dev, workflow: dev, autoplan: {enabled: false}}
workflows:
  prod:
    plan:
      steps:
        - env: {name: TF_VAR_owner, value: ops-team}
        - init: {extra_args: [-upgrade]}
        - plan: {extra_args: ["-var-file=envs/prod.tfvars"]}
        - policy_check
  dev:
    plan:
      steps: [init, {plan: {extra_args: ["-var-file=envs/dev.tfvars", "-var", "cores=2"]}}]
"#;
    let main = stack();
    let pr = w
        .open_pr(
            "alice",
            "envs",
            &[
                ("atlantis.yaml", yaml),
                ("stack/main.tf", &main),
                ("stack/envs/prod.tfvars", "id = 980\ncores = 4\n"),
                ("stack/envs/dev.tfvars", "id = 981\ncores = 3\n"),
            ],
        )
        .await;
    // The comment's `-var` comes after the workflow's (Terraform's order: it wins).
    w.say(pr, "alice", "atlantis plan -p dev -- -var cores=1")
        .await;
    let dev = w.comment_containing(pr, "Plan:").await;
    assert!(squashed(&dev.body).contains("vm_id = 981"), "{}", dev.body);
    assert!(squashed(&dev.body).contains("cores = 1"), "{}", dev.body);
    w.say(pr, "alice", "atlantis plan -p prod").await;
    let prod = w.comment_containing(pr, "980").await;
    assert!(squashed(&prod.body).contains("cores = 4"), "{}", prod.body);
    assert!(
        squashed(&prod.body).contains("description = \"ops-team\""),
        "{}",
        prod.body
    );
    // Markdown escapes the underscores of the warnings.
    assert!(
        prod.body
            .contains(r"policy\_check: atoll checks the server's policy sets"),
        "{}",
        prod.body
    );
    assert!(
        prod.body.contains(r"\`-upgrade\` has no effect"),
        "{}",
        prod.body
    );

    // The saved plan keeps the workflow's options: apply evaluates with them again.
    w.fake().set_permission(REPO, "alice", "write");
    w.fake().set_permission(REPO, "bob", "write");
    w.fake()
        .review(REPO, pr, "bob", fakeforge::ReviewAction::Approve)
        .await
        .expect("approve");
    w.say(pr, "alice", "atlantis apply -p prod").await;
    w.comment_containing(pr, "Apply complete").await;
    let node: NodeName = "pve".parse().expect("node");
    let config = w
        .pve()
        .guest_config(&node, GuestKind::Lxc, VmId::new(980).expect("id"), true)
        .await
        .expect("container 980");
    assert_eq!(config.get("cores").unwrap_or_default(), "4");
    assert_eq!(
        config.get("description").unwrap_or_default().trim_end(),
        "ops-team"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_step_refuses_only_the_project_using_it() {
    let mut w = TestApp::start(Options {
        extra: ALLOW_WORKFLOWS.to_owned(),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let yaml = r#"version: 3
projects:
  - {name: good, dir: good}
  - {name: shell, dir: shell, workflow: scripted}
workflows:
  scripted:
    plan:
      steps:
        - init
        - run: terraform plan -out $PLANFILE
"#;
    let pr = w
        .open_pr(
            "alice",
            "shell",
            &[
                ("atlantis.yaml", yaml),
                ("good/main.tf", &Container::new("good").vm_id(982).hcl()),
                ("shell/main.tf", &Container::new("shell").vm_id(983).hcl()),
            ],
        )
        .await;
    let plan = w.comment_containing(pr, "atoll never runs a shell").await;
    assert!(plan.body.contains("Plan: 1 to add"), "{}", plan.body);
    assert!(plan.body.contains("container.good"), "{}", plan.body);
    assert!(!plan.body.contains("container.shell"), "{}", plan.body);
    assert!(
        plan.body.contains("workflows.scripted.plan.steps[1]"),
        "{}",
        plan.body
    );
    assert!(plan.body.contains("is a `run` step"), "{}", plan.body);
    let locks = w
        .observer()
        .await
        .locks()
        .lock_list(&atoll::locks::LockQuery::default())
        .await
        .expect("locks");
    assert_eq!(
        locks.len(),
        1,
        "only the planned project is locked: {locks:?}"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_workflows_are_refused_with_atlantis_words_unless_the_server_allows_them() {
    let mut w = TestApp::start(Options {
        extra: "  - id: /.*/\n    allowed_overrides: [workflow]\n".to_owned(),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let yaml = "version: 3\nprojects:\n  - {dir: stack, workflow: mine}\nworkflows:\n  mine:\n    \
                plan:\n      steps: [init, plan]\n";
    let pr = w
        .open_pr(
            "alice",
            "custom",
            &[
                ("atlantis.yaml", yaml),
                ("stack/main.tf", &Container::new("web").vm_id(984).hcl()),
            ],
        )
        .await;
    let refused = w
        .comment_containing(pr, "repo config not allowed to define custom workflows")
        .await;
    assert!(
        refused.body.contains("allow_custom_workflows: true"),
        "{}",
        refused.body
    );
    assert!(w.comments_containing(pr, "Plan:").is_empty());
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_workflow_picked_by_a_repo_rule_plans_projects_that_name_none() {
    let extra = "  - id: /.*/\n    workflow: big\nworkflows:\n  big:\n    plan:\n      steps:\n        \
                 - init\n        - plan: {extra_args: [-var-file=big.tfvars]}\n";
    let mut w = TestApp::start(Options {
        extra: extra.to_owned(),
        ..Options::new(ForgeKind::Github)
    })
    .await;
    let main = format!(
        "variable \"cores\" {{\n  default = 1\n}}\n{}",
        Container::new("web")
            .vm_id(985)
            .body("  cpu {\n    cores = var.cores\n  }")
            .hcl()
    );
    let pr = w
        .open_pr(
            "alice",
            "server",
            &[
                ("envs/dev/main.tf", &main),
                ("envs/dev/big.tfvars", "cores = 6\n"),
            ],
        )
        .await;
    let plan = w.comment_containing(pr, "Plan:").await;
    assert!(squashed(&plan.body).contains("cores = 6"), "{}", plan.body);
    w.stop().await;
}
