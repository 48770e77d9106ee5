//! Conformance: container lifecycle — create task and lock, VMID uniqueness, node ownership,
//! power-state errors, delete, resize, storage, download-url, interfaces.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use std::time::Duration;

use pvesim::{Scenario, SimOptions};
use reqwest::Method;
use support::{Api, TEMPLATE};

#[tokio::test]
async fn create_returns_a_upid_and_holds_the_create_lock_until_done() {
    let opts = SimOptions {
        task_duration: Duration::from_millis(300),
        ..support::opts()
    };
    let api = Api::with(Scenario::default(), opts).await;
    let r = api
        .post(
            "/nodes/pve/lxc",
            &[
                ("vmid", "123"),
                ("ostemplate", TEMPLATE),
                ("storage", "local-lvm"),
            ],
        )
        .await
        .ok();
    let upid = r.data().as_str().unwrap().to_owned();
    let parts: Vec<&str> = upid.split(':').collect();
    assert_eq!(
        (parts[0], parts[1], parts[5], parts[6], parts[7]),
        ("UPID", "pve", "vzcreate", "123", "root@pam!atoll")
    );
    assert!(parts[2].len() == 8 && parts[4].len() == 8 && upid.ends_with(':'));
    assert_eq!(
        api.get("/nodes/pve/lxc/123/status/current")
            .await
            .ok()
            .data()["lock"],
        "create"
    );
    let r = api.set(123, &[("cores", "2")]).await;
    assert_eq!(
        (r.status, r.message()),
        (500, "CT is locked (create)".to_owned())
    );
    let status = api.wait_task(&upid).await;
    assert_eq!(
        (
            status["exitstatus"].as_str(),
            status["user"].as_str(),
            status["tokenid"].as_str()
        ),
        (Some("OK"), Some("root@pam"), Some("atoll"))
    );
    let log = api.get(&format!("/nodes/pve/tasks/{upid}/log")).await.ok();
    let lines = log.data().as_array().unwrap();
    assert_eq!(lines.last().unwrap()["t"], "TASK OK");
    assert_eq!(lines[0]["n"], 1);
    let conf = api.config(123, true).await;
    assert!(conf.get("lock").is_none());
    assert_eq!(
        (
            conf["hostname"].as_str(),
            conf["memory"].as_u64(),
            conf["swap"].as_u64(),
            conf["unprivileged"].as_u64()
        ),
        (Some("CT123"), Some(512), Some(512), Some(1))
    );
    assert_eq!(conf["rootfs"], "local-lvm:vm-123-disk-0,size=4G");
}

#[tokio::test]
async fn create_on_taken_vmid_names_the_node() {
    let api = Api::scenario("nodes: [{name: pve}, {name: pve2}]\nguests: [{vmid: 100, node: pve2}, {vmid: 101, node: pve, type: qemu}]\n").await;
    let r = api
        .post(
            "/nodes/pve/lxc",
            &[
                ("vmid", "100"),
                ("ostemplate", TEMPLATE),
                ("storage", "local-lvm"),
            ],
        )
        .await;
    assert_eq!(
        (r.status, r.message()),
        (500, "CT 100 already exists on node 'pve2'".to_owned())
    );
    let r = api
        .post(
            "/nodes/pve/lxc",
            &[
                ("vmid", "101"),
                ("ostemplate", TEMPLATE),
                ("storage", "local-lvm"),
            ],
        )
        .await;
    assert_eq!(r.message(), "VM 101 already exists on node 'pve'");
}

#[tokio::test]
async fn guest_on_another_node_is_not_found_there() {
    let api =
        Api::scenario("nodes: [{name: pve}, {name: pve2}]\nguests: [{vmid: 100, node: pve2}]\n")
            .await;
    let r = api.get("/nodes/pve/lxc/100/config").await;
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "Configuration file 'nodes/pve/lxc/100.conf' does not exist".to_owned()
        )
    );
    api.get("/nodes/pve2/lxc/100/config").await.ok();
}

#[tokio::test]
async fn create_needs_a_rootdir_storage_and_an_existing_template() {
    let api = Api::start().await;
    let r = api
        .post(
            "/nodes/pve/lxc",
            &[("vmid", "100"), ("ostemplate", TEMPLATE)],
        )
        .await;
    assert_eq!(
        r.error("storage"),
        "storage 'local' does not support container directories"
    );
    let r = api
        .post(
            "/nodes/pve/lxc",
            &[
                ("vmid", "100"),
                ("ostemplate", "local:vztmpl/nope.tar.zst"),
                ("storage", "local-lvm"),
            ],
        )
        .await
        .ok();
    let status = api.wait_task(r.data().as_str().unwrap()).await;
    assert_eq!(
        status["exitstatus"],
        "unable to create CT 100 - volume 'local:vztmpl/nope.tar.zst' does not exist"
    );
    assert_eq!(
        api.get("/nodes/pve/lxc/100/config").await.status,
        500,
        "a failed create leaves no config"
    );
}

#[tokio::test]
async fn create_generates_macs_and_prints_net_canonically() {
    let api = Api::start().await;
    api.create_ct(
        100,
        &[
            ("net0", "ip=dhcp,bridge=vmbr0,name=eth0"),
            ("tags", "Web;DB;web"),
        ],
    )
    .await;
    let conf = api.config(100, true).await;
    let net0 = conf["net0"].as_str().unwrap();
    assert!(
        net0.starts_with("name=eth0,bridge=vmbr0,hwaddr=BC:24:11:")
            && net0.ends_with(",ip=dhcp,type=veth"),
        "{net0}"
    );
    assert_eq!(conf["tags"], "db;web");
}

#[tokio::test]
async fn starting_running_ct_is_refused() {
    let api = Api::start().await;
    api.running_ct().await;
    let r = api.post("/nodes/pve/lxc/100/status/start", &[]).await;
    assert_eq!(
        (r.status, r.message()),
        (500, "CT 100 already running".to_owned())
    );
}

#[tokio::test]
async fn stopping_or_rebooting_a_stopped_ct_is_refused() {
    let api = Api::start().await;
    api.create_ct(100, &[]).await;
    assert_eq!(
        api.post("/nodes/pve/lxc/100/status/stop", &[])
            .await
            .message(),
        "CT 100 not running"
    );
    assert_eq!(
        api.post("/nodes/pve/lxc/100/status/shutdown", &[])
            .await
            .message(),
        "CT 100 not running"
    );
    assert_eq!(
        api.post("/nodes/pve/lxc/100/status/reboot", &[])
            .await
            .message(),
        "VM 100 not running"
    );
}

#[tokio::test]
async fn start_and_shutdown_change_status() {
    let api = Api::start().await;
    api.create_ct(100, &[]).await;
    let st = api
        .run_ok(Method::POST, "/nodes/pve/lxc/100/status/start", &[])
        .await;
    assert_eq!(st["type"], "vzstart");
    let cur = api.get("/nodes/pve/lxc/100/status/current").await.ok();
    assert_eq!(cur.data()["status"], "running");
    assert!(cur.data()["pid"].as_u64().is_some());
    api.run_ok(
        Method::POST,
        "/nodes/pve/lxc/100/status/shutdown",
        &[("timeout", "30")],
    )
    .await;
    assert_eq!(
        api.get("/nodes/pve/lxc/100/status/current")
            .await
            .ok()
            .data()["status"],
        "stopped"
    );
}

#[tokio::test]
async fn template_cannot_start() {
    let api = Api::scenario("guests: [{vmid: 100, config: {template: 1, hostname: t}}]\n").await;
    let r = api.post("/nodes/pve/lxc/100/status/start", &[]).await.ok();
    let st = api.wait_task(r.data().as_str().unwrap()).await;
    assert_eq!(st["exitstatus"], "you can't start a CT if it's a template");
}

#[tokio::test]
async fn delete_refuses_running_and_protected_then_destroys() {
    let api = Api::start().await;
    api.running_ct().await;
    let r = api.delete("/nodes/pve/lxc/100", &[]).await;
    assert_eq!(
        r.message(),
        "unable to destroy CT 100 - container is running"
    );
    api.run_ok(Method::POST, "/nodes/pve/lxc/100/status/stop", &[])
        .await;
    api.set(100, &[("protection", "1")]).await.ok();
    let r = api.delete("/nodes/pve/lxc/100", &[]).await;
    assert_eq!(r.message(), "can't remove CT 100 - protection mode enabled");
    api.set(100, &[("protection", "0")]).await.ok();
    api.run_ok(Method::DELETE, "/nodes/pve/lxc/100", &[("purge", "1")])
        .await;
    assert_eq!(api.get("/nodes/pve/lxc/100/config").await.status, 500);
    let content = api
        .get_q("/nodes/pve/storage/local-lvm/content", &[("vmid", "100")])
        .await
        .ok();
    assert!(
        content.data().as_array().unwrap().is_empty(),
        "disks are freed"
    );
}

#[tokio::test]
async fn ha_managed_ct_needs_purge() {
    let api = Api::scenario("guests: [{vmid: 100, ha_managed: true}]\n").await;
    let r = api.delete("/nodes/pve/lxc/100", &[]).await;
    assert_eq!(
        r.message(),
        "unable to remove CT 100 - used in HA resources and purge parameter not set."
    );
    let r = api.post("/nodes/pve/lxc/100/status/start", &[]).await.ok();
    assert!(r.data().as_str().unwrap().contains(":hastart:100:"));
}

#[tokio::test]
async fn unknown_task_is_a_400_no_such_task() {
    let api = Api::start().await;
    let r = api
        .get("/nodes/pve/tasks/UPID:pve:00001234:00001234:66F0A2B1:vzstart:100:root@pam:/status")
        .await;
    assert_eq!(
        (r.status, r.error("upid")),
        (400, "no such task".to_owned())
    );
}
