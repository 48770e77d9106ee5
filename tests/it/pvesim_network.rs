//! Conformance of the simulated node network API (`PVE::API2::Network`, pve-common's
//! `PVE::Network::Interfaces`): writes land in the pending file that reads show (with
//! `changes`) until a reload applies it; PVE's refusals in its own words; guests see only
//! the running bridges.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use serde_json::Value;
use support::{Api, Resp};

fn died(r: &Resp, msg: &str) {
    assert_eq!(
        (r.status, r.message()),
        (500, msg.to_owned()),
        "{:?}",
        r.body
    );
}

fn iface<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|i| i["iface"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

#[tokio::test]
async fn a_new_bridge_is_pending_until_the_network_is_reloaded() {
    let api = Api::start().await;
    let form = [
        ("iface", "vmbr1"),
        ("type", "bridge"),
        ("bridge_ports", "eno2"),
        ("cidr", "192.168.50.2/24"),
        ("autostart", "1"),
        ("comments", "lab"),
        ("mtu", "1500"),
    ];
    api.post("/nodes/pve/network", &form).await.ok();
    let listed = api.get("/nodes/pve/network").await.ok();
    let vmbr1 = iface(listed.data(), "vmbr1");
    assert_eq!(vmbr1["type"], "bridge");
    assert_eq!(vmbr1["cidr"], "192.168.50.2/24");
    assert_eq!(vmbr1["address"], "192.168.50.2");
    assert_eq!(vmbr1["netmask"], "24");
    assert_eq!(vmbr1["comments"], "lab\n");
    assert_eq!(vmbr1["autostart"], 1);
    let changes = listed.body["changes"].as_str().expect("pending changes");
    assert!(changes.contains("+iface vmbr1"), "{changes}");
    let bridges = api
        .get_q("/nodes/pve/network", &[("type", "bridge")])
        .await
        .ok();
    let names: Vec<&str> = bridges
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["iface"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["vmbr0", "vmbr1"]);

    api.run_ok(reqwest::Method::PUT, "/nodes/pve/network", &[])
        .await;
    let listed = api.get("/nodes/pve/network").await.ok();
    assert!(listed.body.get("changes").is_none(), "{:?}", listed.body);
    let one = api.get("/nodes/pve/network/vmbr1").await.ok();
    assert_eq!(one.data()["bridge_ports"], "eno2");
}

#[tokio::test]
async fn a_revert_throws_the_pending_file_away() {
    let api = Api::start().await;
    api.post(
        "/nodes/pve/network",
        &[("iface", "eno2.30"), ("type", "vlan")],
    )
    .await
    .ok();
    api.delete("/nodes/pve/network", &[]).await.ok();
    let r = api.get("/nodes/pve/network/eno2.30").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error("iface"), "interface does not exist");
}

#[tokio::test]
async fn guests_resolve_bridge_mtus_from_the_running_network_only() {
    let api = Api::start().await;
    let form = [("iface", "vmbr9"), ("type", "bridge"), ("mtu", "9000")];
    api.post("/nodes/pve/network", &form).await.ok();
    let form = [
        ("vmid", "100"),
        ("ostemplate", support::TEMPLATE),
        ("storage", "local-lvm"),
        ("net0", "name=eth0,bridge=vmbr9,mtu=9000"),
    ];
    // create_vm -> update_pct_config -> read_bridge_mtu, before the task: the bridge is
    // only in the pending network file
    let refused = api.post("/nodes/pve/lxc", &form).await;
    assert_eq!(
        (refused.status, refused.message()),
        (500, "bridge 'vmbr9' does not exist".to_owned())
    );
    api.run_ok(reqwest::Method::PUT, "/nodes/pve/network", &[])
        .await;
    api.run_ok(reqwest::Method::POST, "/nodes/pve/lxc", &form)
        .await;
}

#[tokio::test]
async fn pve_refuses_what_its_file_checks_refuse_in_its_words() {
    let api = Api::start().await;
    let post = |form: &'static [(&'static str, &'static str)]| api.post("/nodes/pve/network", form);
    let r = post(&[("iface", "vmbr0"), ("type", "bridge")]).await;
    assert_eq!(r.error("iface"), "interface already exists");
    died(
        &post(&[
            ("iface", "vmbr1"),
            ("type", "bridge"),
            ("bridge_ports", "eno9"),
        ])
        .await,
        "bridge 'vmbr1' - unable to find bridge port 'eno9'",
    );
    let r = post(&[
        ("iface", "vmbr1"),
        ("type", "bridge"),
        ("bridge_ports", "eno1"),
    ])
    .await;
    assert_eq!(
        r.error("bridge_ports"),
        "eno1 is already used on interface 'vmbr0'."
    );
    let r = post(&[
        ("iface", "vmbr1"),
        ("type", "bridge"),
        ("gateway", "10.0.0.1"),
    ])
    .await;
    assert_eq!(
        r.error("gateway"),
        "Default gateway already exists on interface 'vmbr0'."
    );
    died(
        &post(&[("iface", "eno7.20"), ("type", "vlan")]).await,
        "vlan 'eno7.20' - unable to find parent 'eno7'",
    );
    died(
        &post(&[
            ("iface", "vlan_lab"),
            ("type", "vlan"),
            ("vlan-raw-device", "eno2"),
        ])
        .await,
        "missing vlan-id option",
    );
    let r = post(&[("iface", "v"), ("type", "bridge")]).await;
    assert_eq!(r.status, 400);
    assert!(!r.error("iface").is_empty(), "{:?}", r.body);
    let r = post(&[("iface", "vmbr1"), ("type", "bridge"), ("mtu", "100")]).await;
    assert_eq!(r.error("mtu"), "value must have a minimum value of 1280");
    let r = api
        .put(
            "/nodes/pve/network/vmbr7",
            &[("type", "bridge"), ("comments", "x")],
        )
        .await;
    assert_eq!(r.error("iface"), "interface does not exist");
}

#[tokio::test]
async fn an_update_deletes_what_it_is_told_and_a_custom_vlan_keeps_its_device_and_id() {
    let api = Api::start().await;
    let form = [
        ("iface", "vlan_lab"),
        ("type", "vlan"),
        ("vlan-raw-device", "eno3"),
        ("vlan-id", "42"),
        ("cidr", "10.42.0.2/24"),
    ];
    api.post("/nodes/pve/network", &form).await.ok();
    let one = api.get("/nodes/pve/network/vlan_lab").await.ok();
    assert_eq!(one.data()["vlan-raw-device"], "eno3");
    assert_eq!(one.data()["vlan-id"], "42");
    api.put(
        "/nodes/pve/network/vlan_lab",
        &[("type", "vlan"), ("delete", "cidr"), ("comments", "lab")],
    )
    .await
    .ok();
    let one = api.get("/nodes/pve/network/vlan_lab").await.ok();
    assert!(one.data().get("cidr").is_none(), "{}", one.data());
    assert_eq!(one.data()["comments"], "lab\n");
    api.delete("/nodes/pve/network/vlan_lab", &[]).await.ok();
    let r = api.delete("/nodes/pve/network/vlan_lab", &[]).await;
    assert_eq!(r.error("iface"), "interface does not exist");
}
