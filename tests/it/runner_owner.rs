//! Two projects in one repository that declare the same `vm_id`: once the first has applied,
//! the second's plan (autoplan, and a comment) fails naming the first as the guest's owner,
//! and the guest on the cluster is left as the first made it.

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use atoll::proxmox::owner::owner_tag;
use atoll::proxmox::types::{GuestKind, NodeName, VmId};
use atoll::store::StateScope;
use model::ForgeKind;

async fn tags(w: &TestApp) -> Option<String> {
    let node: NodeName = "pve".parse().expect("node");
    let id = VmId::new(960).expect("id");
    let config = w
        .pve()
        .guest_config(&node, GuestKind::Lxc, id, false)
        .await
        .expect("config of CT 960");
    config.get("tags")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_project_declaring_the_same_vm_id_fails_its_plan_naming_the_owner() {
    let w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let ct = Container::new("web").vm_id(960).hcl();
    let first = w
        .open_pr("alice", "first", &[("envs/a/main.tf", &ct)])
        .await;
    w.comment_containing(first, "Plan:").await;
    w.approve_and_apply(first).await;
    w.comment_containing(first, "Apply complete").await;
    let owner = StateScope {
        repo: format!("github.com/{REPO}"),
        project_dir: "envs/a".to_owned(),
        workspace: "default".to_owned(),
    };
    let applied = tags(&w).await;
    assert_eq!(applied, Some(format!("atoll;{}", owner_tag(&owner))));

    let second = w.open_pr("bob", "second", &[("envs/b/main.tf", &ct)]).await;
    let refusal = format!(
        "CT 960 already exists on node pve, managed by github.com/{REPO} envs/a (default); \
         choose another vm_id or move it with a moved block / atoll state mv"
    );
    let autoplan = w.comment_containing(second, &refusal).await;
    assert!(
        !autoplan.body.contains("Plan: 1 to add"),
        "{}",
        autoplan.body
    );
    w.say(second, "bob", "atlantis plan -d envs/b").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while w.comments_containing(second, &refusal).len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no second refusal: {:#?}",
            w.bot_comments(second)
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        tags(&w).await,
        applied,
        "the guest is left as envs/a made it"
    );
    let held = w.store.state().state_holders(960).await.expect("holders");
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].scope, owner);
}
