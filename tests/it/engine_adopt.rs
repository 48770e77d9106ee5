//! A guest that exists on the cluster but is missing from state (a crash between its create
//! and the state write, or a lost state) is adopted by VMID and atoll's marker tag, never
//! created twice; a guest without the marker is never taken over.

use crate::engine_support;

use crate::support::Container;
use engine_support::{Env, text};

const ADDRESS: &str = "proxmox_virtual_environment_container.kept";

async fn forget(env: &Env, address: &str) {
    let forgotten = env.state().await.forget(address).await;
    assert!(forgotten.expect("forget"), "{address} was in state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guest_missing_from_state_with_the_marker_is_adopted_not_created_again() {
    let env = Env::start().await;
    env.write_tf(&Container::new("kept").vm_id(970).hcl());
    env.apply().await;
    forget(&env, ADDRESS).await;
    let plan = env.plan().await;
    assert!(
        plan.contains("No changes."),
        "adopted, nothing to do: {plan}"
    );
    env.apply().await;
    let listed = env.atoll(&["state", "list"]).await;
    assert!(
        text(&listed).contains(&format!("{ADDRESS}\tnode=pve\tvm_id=970")),
        "{}",
        text(&listed)
    );
    assert_eq!(env.lxc_ids().await, vec![970]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guest_with_the_vmid_but_without_the_marker_is_not_taken_over() {
    let env = Env::start().await;
    // someone else's container on VMID 971
    env.write_tf(
        &Container::new("other")
            .vm_id(971)
            .body("  tags = [\"theirs\"]")
            .hcl(),
    );
    env.apply().await;
    let tagged = env.live_config(971).await["tags"].clone();
    assert!(tagged.contains("atoll"), "{tagged}");
    let node = engine_support::node();
    let id = atoll::proxmox::types::VmId::new(971).expect("id");
    let change = atoll::proxmox::client::ConfigChange {
        set: [("tags".to_owned(), "theirs".to_owned())].into(),
        ..Default::default()
    };
    env.client
        .guest_update_config(&node, atoll::proxmox::types::GuestKind::Lxc, id, &change)
        .await
        .expect("removing the marker");
    forget(&env, "proxmox_virtual_environment_container.other").await;
    env.write_tf(&Container::new("mine").vm_id(971).hcl());
    let plan = env.plan().await;
    assert!(plan.contains("Plan: 1 to add"), "{plan}");
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("already exists"), "{}", text(&out));
    assert_eq!(env.live_config(971).await["tags"], "theirs", "left alone");
}
