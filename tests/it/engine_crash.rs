//! Crash safety: `kill -9` of `atoll apply` while it creates 20 containers; the next plan
//! shows exactly the remaining work and a second apply converges with no duplicates.

use crate::engine_support;

use std::time::{Duration, Instant};

use crate::support::Container;
use engine_support::{Env, options, text};

const COUNT: usize = 20;

fn twenty() -> String {
    (0..COUNT)
        .map(|i| Container::new(&format!("ct{i:02}")).hcl())
        .collect()
}

async fn wait_until<F, Fut>(what: &str, deadline: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_apply_leaves_exactly_the_remaining_work_and_reapply_converges() {
    let env = Env::with_scenario("{}", options(150)).await;
    env.write_tf(&twenty());
    let dir = env.project().display().to_string();
    let mut child = env
        .command(&[
            "apply",
            "--auto-approve",
            "--parallelism",
            "3",
            "--dir",
            &dir,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawning atoll apply");
    wait_until(
        "some containers to exist",
        Duration::from_secs(30),
        || async { env.lxc_ids().await.len() >= 5 },
    )
    .await;
    child.start_kill().expect("kill -9");
    let _ = child.wait().await;
    // Tasks the dead process started still finish on the cluster.
    wait_until("create locks to clear", Duration::from_secs(30), || async {
        env.client
            .cluster_guests()
            .await
            .expect("guests")
            .iter()
            .all(|g| g.lock.is_none())
    })
    .await;
    let existing = env.lxc_ids().await;
    assert!(
        existing.len() < COUNT,
        "the kill came too late to test anything"
    );
    let plan = env.plan_json().await;
    let changes = plan["resource_changes"].as_array().expect("changes");
    let creates = changes
        .iter()
        .filter(|c| c["actions"] == serde_json::json!(["create"]))
        .count();
    let others: Vec<&serde_json::Value> = changes
        .iter()
        .filter(|c| c["actions"] != serde_json::json!(["create"]))
        .filter(|c| c["actions"] != serde_json::json!(["no-op"]))
        .collect();
    assert_eq!(creates, COUNT - existing.len(), "plan: {plan:#}");
    for change in &others {
        // a container created but not started yet: only its power state is left
        assert_eq!(
            change["actions"],
            serde_json::json!(["update"]),
            "{change:#}"
        );
        let paths: Vec<&str> = change["attributes"]
            .as_array()
            .expect("attributes")
            .iter()
            .filter_map(|a| a["path"].as_str())
            .collect();
        assert_eq!(paths, vec!["started"], "{change:#}");
    }
    let second = env.atoll(&["apply", "--auto-approve"]).await;
    assert!(second.status.success(), "{}", text(&second));
    let after = env.lxc_ids().await;
    assert_eq!(after.len(), COUNT, "no duplicates, none missing: {after:?}");
    assert!(env.plan().await.contains("No changes."));
}

/// Starts `atoll apply` for `tf` and kills it (`kill -9`) once a container is being created;
/// the create task goes on on the cluster and holds the container's `create` lock.
async fn kill_while_creating(env: &Env, tf: &str) {
    env.write_tf(tf);
    let dir = env.project().display().to_string();
    let mut child = env
        .command(&["apply", "--auto-approve", "--dir", &dir])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawning atoll apply");
    wait_until("a create lock", Duration::from_secs(30), || async {
        let guests = env.client.cluster_guests().await.expect("guests");
        guests.iter().any(|g| g.lock.as_deref() == Some("create"))
    })
    .await;
    child.start_kill().expect("kill -9");
    let _ = child.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reapply_right_after_a_kill_waits_for_the_create_lock_then_converges() {
    let env = Env::with_scenario("{}", options(1500)).await;
    kill_while_creating(&env, &Container::new("slow").vm_id(970).hcl()).await;
    let second = env.atoll(&["apply", "--auto-approve"]).await;
    assert!(second.status.success(), "{}", text(&second));
    assert!(
        text(&second).contains("CT 970 is locked (create); waiting"),
        "progress is logged: {}",
        text(&second)
    );
    assert_eq!(env.lxc_ids().await, vec![970]);
    assert!(env.plan().await.contains("No changes."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_that_outlasts_lock_wait_secs_names_the_task_holding_it() {
    let mut env = Env::with_scenario("{}", options(6000)).await;
    env.write_config("protect:\n  discover: false\nproxmox:\n  lock_wait_secs: 1\n");
    kill_while_creating(&env, &Container::new("slow").vm_id(971).hcl()).await;
    let second = env.atoll(&["apply", "--auto-approve"]).await;
    assert_eq!(second.status.code(), Some(1), "{}", text(&second));
    let said = text(&second);
    assert!(
        said.contains("CT 971 on node pve is still locked (create)")
            && said.contains(":vzcreate:971:")
            && said.contains("lock_wait_secs"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_lock_with_no_task_says_how_to_clear_it() {
    let scenario = "guests:\n  - vmid: 972\n    config: {hostname: old, rootfs: 'local-lvm:8', lock: backup}\n";
    let mut env = Env::with_scenario(scenario, options(20)).await;
    env.write_config("protect:\n  discover: false\nproxmox:\n  lock_wait_secs: 0\n");
    env.write_tf(&Container::new("old").vm_id(972).hcl());
    let out = env.atoll(&["plan"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("still locked (backup)") && said.contains("pct unlock 972"),
        "{said}"
    );
}

/// A configuration error found while planning prints once, with its file and line, not under
/// a second "Error:" heading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configuration_error_prints_once_with_its_file_and_line() {
    let mut env = Env::start().await;
    env.write_config("protect:\n  discover: false\n");
    env.write_tf("resource \"random_password\" \"db\" {\n  length = var.missing\n}\n");
    let out = env.atoll(&["plan"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("Reference to undeclared input variable"),
        "{said}"
    );
    assert!(said.contains("on main.tf line 2"), "{said}");
    assert!(!said.contains("Error: Error"), "{said}");
}
