//! `atlantis plan -- <Terraform flags>` through the fake forge: the targeted plan of one
//! container with a variable file from the checkout, Terraform's partial-plan warning in the
//! comment, an apply that creates only the target, and a flag atoll does not honour refused by name without a plan.

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use model::ForgeKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_with_target_and_var_file_plans_and_applies_only_the_target_and_says_it_is_partial() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let yaml = "version: 3\nprojects:\n  - dir: envs/dev\n    autoplan:\n      enabled: false\n";
    let main = format!(
        "variable \"cores\" {{\n  default = 1\n}}\n{}{}",
        Container::new("picked")
            .vm_id(970)
            .body("  cpu {\n    cores = var.cores\n  }")
            .hcl(),
        Container::new("left").vm_id(971).hcl()
    );
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "target",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &main),
                ("envs/dev/big.tfvars", "cores = 3\n"),
            ],
        )
        .await
        .expect("pr");
    w.fake()
        .comment(
            REPO,
            pr,
            "alice",
            "atlantis plan -d envs/dev -- -target=proxmox_virtual_environment_container.picked -var-file=big.tfvars",
        )
        .await
        .expect("comment");
    let plan = w.comment_containing(pr, "Plan:").await;
    assert!(
        plan.body.contains("Resource targeting is in effect"),
        "{}",
        plan.body
    );
    assert!(plan.body.contains("container.picked"), "{}", plan.body);
    assert!(!plan.body.contains("container.left"), "{}", plan.body);
    assert!(plan.body.contains("cores        = 3"), "{}", plan.body);

    // The saved plan applies only the target, with the variable file's value.
    w.fake().set_permission(REPO, "alice", "write");
    w.fake().set_permission(REPO, "bob", "write");
    w.fake()
        .review(REPO, pr, "bob", fakeforge::ReviewAction::Approve)
        .await
        .expect("approve");
    w.fake()
        .comment(REPO, pr, "alice", "atlantis apply -d envs/dev")
        .await
        .expect("comment");
    w.comment_containing(pr, "Apply complete").await;
    let guests = w.pve().cluster_guests().await.expect("guests");
    let ids: Vec<u32> = guests.iter().map(|g| g.vmid.get()).collect();
    assert_eq!(ids, [970], "only the target was created");

    w.fake()
        .comment(REPO, pr, "alice", "atlantis plan -- -out=/tmp/x")
        .await
        .expect("comment");
    let refused = w
        .comment_containing(pr, "`-out` after `--` is not supported")
        .await;
    assert!(refused.body.contains("-target=ADDRESS"), "{}", refused.body);
    w.stop().await;
}
