//! A saved plan is applied only while it is fresh: the state it was made from, the guests it
//! changes as the cluster held them, and the configuration it was made from must still hold.

use crate::engine_support;

use crate::support::Container;
use engine_support::{Env, text};

fn cores(n: u32) -> String {
    Container::new("f")
        .vm_id(950)
        .body(&format!("  cpu {{\n    cores = {n}\n  }}"))
        .hcl()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_plan_is_refused_once_state_changed_since() {
    let env = Env::start().await;
    env.write_tf(&cores(1));
    env.apply().await;
    env.write_tf(&cores(2));
    let saved = env.dir.path().join("a.plan").display().to_string();
    assert!(env.atoll(&["plan", "--out", &saved]).await.status.success());
    env.write_tf(&cores(3));
    env.apply().await;
    env.write_tf(&cores(2));
    let out = env.atoll(&["apply", "--plan", &saved]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("the plan is stale"), "{}", text(&out));
    assert_eq!(env.live_config(950).await["cores"], "3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_plan_is_refused_when_the_configuration_changed() {
    let env = Env::start().await;
    env.write_tf(&cores(1));
    env.apply().await;
    env.write_tf(&cores(2));
    let saved = env.dir.path().join("b.plan").display().to_string();
    assert!(env.atoll(&["plan", "--out", &saved]).await.status.success());
    env.write_tf(&cores(4));
    let out = env.atoll(&["apply", "--plan", &saved]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("different configuration"),
        "{}",
        text(&out)
    );
    env.write_tf(&cores(2));
    let out = env.atoll(&["apply", "--plan", &saved]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(env.live_config(950).await["cores"], "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detailed_exitcode_is_two_with_changes_and_zero_without() {
    let env = Env::start().await;
    env.write_tf(&cores(1));
    let out = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    env.apply().await;
    let out = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    env.write_tf("resource \"proxmox_virtual_environment_container\" \"x\" {\n  nodename = 1\n}\n");
    let out = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(out.status.code(), Some(1), "an error is 1: {}", text(&out));
}

/// Sets a config key of a guest on the simulator, as someone might by hand.
async fn set_behind_atolls_back(env: &Env, vmid: u32, key: &str, value: &str) {
    let change = atoll::proxmox::client::ConfigChange {
        set: [(key.to_owned(), value.to_owned())].into_iter().collect(),
        ..Default::default()
    };
    let vmid = atoll::proxmox::types::VmId::new(vmid).expect("vmid");
    env.client
        .guest_update_config(
            &engine_support::node(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid,
            &change,
        )
        .await
        .expect("changing the guest");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_plan_is_refused_naming_the_change_when_the_guest_changed_on_the_cluster() {
    let env = Env::start().await;
    env.write_tf(&cores(1));
    env.apply().await;
    env.write_tf(&cores(2));
    let saved = env.dir.path().join("c.plan").display().to_string();
    assert!(env.atoll(&["plan", "--out", &saved]).await.status.success());
    set_behind_atolls_back(&env, 950, "cores", "6").await;
    let out = env.atoll(&["apply", "--plan", &saved]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("the cluster changed since this plan: CT 950 (cores 1 -> 6)"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("make a new plan"), "{}", text(&out));
    assert_eq!(env.live_config(950).await["cores"], "6", "not overwritten");
    // A new plan sees the change and applies.
    env.apply().await;
    assert_eq!(env.live_config(950).await["cores"], "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_plan_is_refused_when_the_guest_was_stopped_since() {
    let env = Env::start().await;
    env.write_tf(&cores(1));
    env.apply().await;
    env.write_tf(&cores(2));
    let saved = env.dir.path().join("d.plan").display().to_string();
    assert!(env.atoll(&["plan", "--out", &saved]).await.status.success());
    let vmid = atoll::proxmox::types::VmId::new(950).expect("vmid");
    let node = engine_support::node();
    let stop = atoll::proxmox::client::PowerAction::Stop;
    let upid = env
        .client
        .guest_power(&node, atoll::proxmox::types::GuestKind::Lxc, vmid, stop)
        .await
        .expect("stop");
    env.client.wait_task(&upid).await.expect("stopped");
    let out = env.atoll(&["apply", "--plan", &saved]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("CT 950 (running -> stopped)"),
        "{}",
        text(&out)
    );
}

fn pool(comment: &str) -> String {
    format!(
        "resource \"proxmox_virtual_environment_pool\" \"web\" {{\n  pool_id = \"web\"\n  comment = \"{comment}\"\n}}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_plan_is_refused_when_an_object_it_changes_was_changed_outside_since() {
    let env = Env::start().await;
    env.write_tf(&pool("web servers"));
    env.apply().await;
    env.write_tf(&pool("web"));
    let saved = env.dir.path().join("p.plan").display().to_string();
    assert!(env.atoll(&["plan", "--out", &saved]).await.status.success());
    // someone edits the pool in the GUI
    let response = reqwest::Client::new()
        .put(format!("{}/pools/web", env.sim.base_url()))
        .header("Authorization", crate::pvesim_support::TOKEN)
        .form(&[("comment", "edited by hand")])
        .send()
        .await
        .expect("the simulator answers");
    assert!(response.status().is_success(), "{response:?}");
    let out = env.atoll(&["apply", "--plan", &saved]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains(
            "the cluster changed since this plan: pool web (comment web servers -> edited by hand)"
        ),
        "{}",
        text(&out)
    );
}
