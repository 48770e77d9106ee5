//! A saved plan is applied only while it is fresh: the state it was made from and the
//! configuration it was made from must still hold.

mod engine_support;

use engine_support::{Env, container, text};

fn cores(n: u32) -> String {
    container("f", Some(950), &format!("  cpu {{\n    cores = {n}\n  }}"))
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
