//! Conformance: container templates and clones (pve-container `API2/LXC.pm` `template` and
//! `clone_vm`): what PVE refuses, with its messages, and what a linked or full clone holds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use reqwest::Method;
use support::Api;

/// Converts CT `vmid` into a template: the call answers `null` and the task runs on.
async fn make_template(api: &Api, vmid: u32) {
    let r = api
        .post(&format!("/nodes/pve/lxc/{vmid}/template"), &[])
        .await
        .ok();
    assert!(
        r.data().is_null(),
        "pve-container answers null: {:?}",
        r.data()
    );
    for _ in 0..400 {
        if api.config(vmid, true).await["template"] == 1 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("CT {vmid} did not become a template");
}

#[tokio::test]
async fn a_template_has_base_volumes_and_refuses_start_and_a_second_conversion() {
    let api = Api::start().await;
    api.create_ct(100, &[]).await;
    make_template(&api, 100).await;
    let config = api.config(100, true).await;
    assert!(
        config["rootfs"]
            .as_str()
            .unwrap()
            .starts_with("local-lvm:base-100-disk-0"),
        "{config}"
    );
    let r = api.post("/nodes/pve/lxc/100/template", &[]).await;
    assert_eq!(r.message(), "you can't convert a template to a template");
    let r = api.post("/nodes/pve/lxc/100/status/start", &[]).await;
    let said = if r.status == 200 {
        let upid = r.data().as_str().unwrap().to_owned();
        api.wait_task(&upid).await["exitstatus"]
            .as_str()
            .unwrap()
            .to_owned()
    } else {
        r.message()
    };
    assert!(
        said.contains("you can't start a CT if it's a template"),
        "{said}"
    );
}

#[tokio::test]
async fn a_running_container_is_not_converted() {
    let api = Api::start().await;
    api.running_ct().await;
    let r = api.post("/nodes/pve/lxc/100/template", &[]).await;
    assert_eq!(
        r.message(),
        "you can't convert a CT to template if the CT is running"
    );
}

#[tokio::test]
async fn linked_clones_need_a_template_and_full_clones_of_running_ones_a_snapshot() {
    let api = Api::start().await;
    api.running_ct().await;
    let r = api
        .post(
            "/nodes/pve/lxc/100/clone",
            &[("newid", "101"), ("full", "0")],
        )
        .await;
    assert_eq!(
        r.message(),
        "Linked clone feature for 'local-lvm:vm-100-disk-0' is not available"
    );
    let r = api
        .post("/nodes/pve/lxc/100/clone", &[("newid", "101")])
        .await;
    assert_eq!(
        r.message(),
        "Full clone of a running container is only possible from a snapshot"
    );
    let r = api
        .post(
            "/nodes/pve/lxc/100/clone",
            &[("newid", "101"), ("full", "0"), ("storage", "local-lvm")],
        )
        .await;
    assert_eq!(
        r.message(),
        "parameter 'storage' not allowed for linked clones"
    );
    let r = api
        .post("/nodes/pve/lxc/100/clone", &[("newid", "100")])
        .await;
    assert_eq!(r.message(), "CT 100 already exists on node 'pve'");
}

#[tokio::test]
async fn a_template_is_cloned_linked_by_default_with_new_macs_and_no_template_flag() {
    let api = Api::start().await;
    api.create_ct(
        100,
        &[("net0", "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01")],
    )
    .await;
    make_template(&api, 100).await;
    api.run_ok(
        Method::POST,
        "/nodes/pve/lxc/100/clone",
        &[("newid", "101"), ("hostname", "copy")],
    )
    .await;
    let config = api.config(101, true).await;
    assert_eq!(config["hostname"], "copy");
    assert!(config.get("template").is_none(), "{config}");
    assert!(config.get("lock").is_none(), "{config}");
    assert!(
        !config["net0"]
            .as_str()
            .unwrap()
            .contains("BC:24:11:00:00:01"),
        "{config}"
    );
    assert!(
        config["rootfs"]
            .as_str()
            .unwrap()
            .starts_with("local-lvm:vm-101-disk-0"),
        "{config}"
    );
    assert!(
        api.config(100, true).await.get("lock").is_none(),
        "source unlocked"
    );
    api.run_ok(
        Method::POST,
        "/nodes/pve/lxc/100/clone",
        &[("newid", "102"), ("full", "1")],
    )
    .await;
    let full = api.config(102, true).await;
    assert!(
        full["rootfs"]
            .as_str()
            .unwrap()
            .starts_with("local-lvm:vm-102-disk-0"),
        "{full}"
    );
}
