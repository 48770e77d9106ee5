//! Faults injected in the simulator (a failed task, `got timeout`): the apply reports which
//! guests changed and which did not, and state matches the cluster afterwards.

use crate::engine_support;

use crate::support::Container;
use engine_support::{Env, stdout, text};
use pvesim::TaskFailure;

fn three(cores: u32) -> String {
    [701, 702, 703]
        .iter()
        .map(|id| {
            Container::new(&format!("c{id}"))
                .vm_id(*id)
                .body(&format!("  cpu {{\n    cores = {cores}\n  }}"))
                .hcl()
        })
        .collect()
}

async fn state_addresses(env: &Env) -> Vec<String> {
    let out = env.atoll(&["state", "list"]).await;
    assert!(out.status.success(), "{}", text(&out));
    stdout(&out)
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_create_task_is_reported_and_only_the_others_are_in_state() {
    let env = Env::start().await;
    env.sim.faults().fail_tasks(TaskFailure {
        task_type: Some("vzcreate".to_owned()),
        vmid: Some(702),
        message: "lvcreate 'pve/vm-702-disk-0' error: out of space".to_owned(),
        times: 1,
    });
    env.write_tf(&three(1));
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains("ok      proxmox_virtual_environment_container.c701"),
        "{report}"
    );
    assert!(
        report.contains("ok      proxmox_virtual_environment_container.c703"),
        "{report}"
    );
    assert!(
        report.contains("FAILED  proxmox_virtual_environment_container.c702 (not changed)"),
        "{report}"
    );
    assert!(report.contains("out of space"), "{report}");
    assert_eq!(env.lxc_ids().await, vec![701, 703]);
    assert_eq!(
        state_addresses(&env).await,
        vec![
            "proxmox_virtual_environment_container.c701",
            "proxmox_virtual_environment_container.c703"
        ]
    );
    let plan = env.plan().await;
    assert!(
        plan.contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    env.apply().await;
    assert_eq!(env.lxc_ids().await, vec![701, 702, 703]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_timeouts_are_reported_per_guest_and_state_matches_the_cluster() {
    let env = Env::start().await;
    env.write_tf(&three(1));
    env.apply().await;
    // Every request touching a guest now fails with `got timeout`, beyond the client's retries.
    env.sim.faults().inject_lock_timeouts(1000);
    env.write_tf(&three(2));
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = text(&out);
    assert!(report.contains("got timeout"), "{report}");
    assert!(!report.contains("ok      "), "nothing changed: {report}");
    env.sim.faults().inject_lock_timeouts(0);
    for id in [701, 702, 703] {
        assert_eq!(env.live_config(id).await["cores"], "1", "CT {id} unchanged");
    }
    // State still says what the cluster has: the next plan wants exactly the three changes.
    let plan = env.plan().await;
    assert!(
        plan.contains("Plan: 0 to add, 3 to change, 0 to destroy."),
        "{plan}"
    );
    env.apply().await;
    assert!(env.plan().await.contains("No changes."));
}
