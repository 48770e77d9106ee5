//! QEMU guests: what self-discovery reads (`netN` MACs, status) and qemu-server's hot/pending
//! rules for a running VM (reference/proxmox.md §3c).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use reqwest::Method;
use support::Api;

const VM: &str = "guests:\n  - vmid: 200\n    type: qemu\n    status: running\n    config: {name: db, cores: 2, memory: 4096, agent: 1, net0: 'virtio=BC:24:11:00:00:C8,bridge=vmbr0', net1: 'e1000,bridge=vmbr1'}\n";

async fn qm_pending_keys(api: &Api) -> Vec<String> {
    let r = api.get("/nodes/pve/qemu/200/pending").await.ok();
    r.data()
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.get("pending").is_some() || e.get("delete").is_some())
        .map(|e| e["key"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn qemu_config_shows_nic_macs_and_generates_missing_ones() {
    let api = Api::scenario(VM).await;
    let conf = api
        .get_q("/nodes/pve/qemu/200/config", &[("current", "1")])
        .await
        .ok();
    assert_eq!(conf.data()["net0"], "virtio=BC:24:11:00:00:C8,bridge=vmbr0");
    assert!(
        conf.data()["net1"]
            .as_str()
            .unwrap()
            .starts_with("e1000=BC:24:11:")
    );
    let st = api.get("/nodes/pve/qemu/200/status/current").await.ok();
    assert_eq!(
        (st.data()["status"].as_str(), st.data()["name"].as_str()),
        (Some("running"), Some("db"))
    );
}

#[tokio::test]
async fn cpuunits_and_cpulimit_are_hot_but_cores_and_serial_are_pending() {
    let api = Api::scenario(VM).await;
    api.put(
        "/nodes/pve/qemu/200/config",
        &[("cpuunits", "200"), ("cpulimit", "2")],
    )
    .await
    .ok();
    assert!(qm_pending_keys(&api).await.is_empty());
    api.put(
        "/nodes/pve/qemu/200/config",
        &[("cores", "4"), ("serial0", "socket")],
    )
    .await
    .ok();
    let mut keys = qm_pending_keys(&api).await;
    keys.sort();
    assert_eq!(keys, ["cores", "serial0"]);
}

#[tokio::test]
async fn memory_is_pending_without_the_memory_hotplug_feature() {
    let api = Api::scenario(VM).await;
    api.put("/nodes/pve/qemu/200/config", &[("memory", "8192")])
        .await
        .ok();
    assert_eq!(qm_pending_keys(&api).await, ["memory"]);
}

#[tokio::test]
async fn bridge_change_is_hot_and_new_mac_needs_network_hotplug() {
    let api = Api::scenario(VM).await;
    api.put(
        "/nodes/pve/qemu/200/config",
        &[("net0", "virtio=BC:24:11:00:00:C8,bridge=vmbr2")],
    )
    .await
    .ok();
    assert!(qm_pending_keys(&api).await.is_empty());
    // `vmconfig_hotplug_pending`: `hotplug` itself is live unless cpu/memory are involved
    api.put("/nodes/pve/qemu/200/config", &[("hotplug", "0")])
        .await
        .ok();
    assert!(qm_pending_keys(&api).await.is_empty());
    api.put(
        "/nodes/pve/qemu/200/config",
        &[("net0", "virtio=BC:24:11:00:00:C9,bridge=vmbr2")],
    )
    .await
    .ok();
    assert_eq!(qm_pending_keys(&api).await, ["net0"]);
}

#[tokio::test]
async fn reboot_applies_pending_changes() {
    let api = Api::scenario(VM).await;
    api.put("/nodes/pve/qemu/200/config", &[("cores", "8")])
        .await
        .ok();
    api.run_ok(Method::POST, "/nodes/pve/qemu/200/status/reboot", &[])
        .await;
    assert!(qm_pending_keys(&api).await.is_empty());
    let conf = api
        .get_q("/nodes/pve/qemu/200/config", &[("current", "1")])
        .await
        .ok();
    assert_eq!(conf.data()["cores"], 8);
}

#[tokio::test]
async fn agent_lists_interfaces_of_a_running_vm() {
    let api = Api::scenario(VM).await;
    let r = api
        .get("/nodes/pve/qemu/200/agent/network-get-interfaces")
        .await
        .ok();
    assert_eq!(r.data()["result"][0]["name"], "lo");
    assert_eq!(
        r.data()["result"][1]["hardware-address"],
        "bc:24:11:00:00:c8"
    );
    api.run_ok(Method::POST, "/nodes/pve/qemu/200/status/stop", &[])
        .await;
    let r = api
        .get("/nodes/pve/qemu/200/agent/network-get-interfaces")
        .await;
    assert_eq!(
        (r.status, r.message()),
        (500, "VM 200 is not running".to_owned())
    );
}

#[tokio::test]
async fn qemu_id_is_not_an_lxc() {
    let api = Api::scenario(VM).await;
    let r = api.get("/nodes/pve/lxc/200/config").await;
    assert_eq!(
        r.message(),
        "Configuration file 'nodes/pve/lxc/200.conf' does not exist"
    );
}
