//! Fault tests against the simulator: a transient `got timeout` is retried and succeeds, a
//! failed task surfaces its exit status and log tail, a create whose response was lost is found
//! instead of being sent again.

use crate::pve_client_support;

use atoll::proxmox::client::{ConfigChange, CreateOutcome, PveError};
use atoll::proxmox::types::{GuestKind, LxcNet};
use pve_client_support::sim::*;
use pve_client_support::vmid;
use pvesim::TaskFailure;

#[tokio::test]
async fn transient_got_timeout_is_retried_and_succeeds() {
    let (sim, client) = start("{}").await;
    create_running(&client, 100).await;
    sim.faults().inject_lock_timeouts(2);
    let change = ConfigChange {
        set: [("cores".to_owned(), "2".to_owned())].into(),
        ..ConfigChange::default()
    };
    client
        .guest_update_config(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            &change,
        )
        .await
        .expect("third try succeeds");
    let live = client
        .guest_config(&pve(), GuestKind::Lxc, vmid(100), true)
        .await
        .expect("cfg");
    assert_eq!(live.get("cores").as_deref(), Some("2"));
}

#[tokio::test]
async fn failed_task_surfaces_exit_status_and_log_tail() {
    let (sim, client) = start("{}").await;
    sim.faults().fail_tasks(TaskFailure {
        task_type: Some("vzcreate".into()),
        vmid: Some(100),
        message: "lvcreate 'pve/vm-100-disk-0' error: out of space".into(),
        times: 1,
    });
    let err = client
        .guest_create_and_wait(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            &create_request(100),
        )
        .await
        .expect_err("fails");
    let PveError::Task {
        exitstatus,
        log_tail,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert!(exitstatus.contains("out of space"), "{exitstatus}");
    let last = log_tail.last().expect("log tail");
    assert!(
        last.starts_with("TASK ERROR:") && last.contains("out of space"),
        "{log_tail:?}"
    );
}

#[tokio::test]
async fn create_whose_response_was_lost_is_not_duplicated() {
    let (sim, client) = start("{}").await;
    sim.faults().lose_responses(1);
    let outcome = client
        .guest_create_and_wait(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            &create_request(100),
        )
        .await
        .expect("create");
    assert_eq!(
        outcome,
        CreateOutcome::Recovered,
        "the lost create was found, not re-sent"
    );
    let guests = client.cluster_guests().await.expect("resources");
    assert_eq!(guests.iter().filter(|g| g.vmid == vmid(100)).count(), 1);
    let status = client
        .guest_status(&pve(), GuestKind::Lxc, vmid(100))
        .await
        .expect("status");
    assert_eq!(status.lock, None, "create finished");
    let net: LxcNet = client
        .guest_config(&pve(), GuestKind::Lxc, vmid(100), true)
        .await
        .expect("cfg")
        .get("net0")
        .expect("net0")
        .parse()
        .expect("net");
    assert_eq!(net.name, "eth0");
}

#[tokio::test]
async fn lost_create_response_then_failed_task_is_reported_not_retried() {
    let (sim, client) = start("{}").await;
    sim.faults().lose_responses(1);
    sim.faults().fail_tasks(TaskFailure {
        task_type: Some("vzcreate".into()),
        vmid: Some(100),
        message: "unable to create CT 100 - no space left".into(),
        times: 1,
    });
    let err = client
        .guest_create_and_wait(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            &create_request(100),
        )
        .await
        .expect_err("failed");
    assert!(
        matches!(&err, PveError::Task { exitstatus, .. } if exitstatus.contains("disappeared")),
        "{err:?}"
    );
    let guests = client.cluster_guests().await.expect("resources");
    assert!(
        guests.iter().all(|g| g.vmid != vmid(100)),
        "no second create was sent"
    );
}
