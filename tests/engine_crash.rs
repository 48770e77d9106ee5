//! Crash safety: `kill -9` of `atoll apply` while it creates 20 containers; the next plan
//! shows exactly the remaining work and a second apply converges with no duplicates.

mod engine_support;

use std::time::{Duration, Instant};

use engine_support::{Env, container, options, text};

const COUNT: usize = 20;

fn twenty() -> String {
    (0..COUNT)
        .map(|i| container(&format!("ct{i:02}"), None, ""))
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
