//! Conformance: what a RUNNING container does with each config key (reference/proxmox.md §3b,
//! pve-container `update_pct_config` / `vmconfig_hotplug_pending`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use pvesim::GuestEvent;
use support::Api;

fn ev(f: fn(String) -> GuestEvent, key: &str) -> GuestEvent {
    f(key.to_owned())
}

#[tokio::test]
async fn memory_change_on_running_ct_is_live() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("memory", "1024"), ("swap", "256")])
        .await
        .ok();
    assert!(api.pending_keys(100).await.is_empty());
    assert_eq!(api.config(100, true).await["memory"], 1024);
    assert!(
        api.sim
            .guest_events(100)
            .contains(&ev(GuestEvent::HotApplied, "memory"))
    );
}

#[tokio::test]
async fn swap_delete_on_running_ct_is_live() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("delete", "swap")]).await.ok();
    assert!(api.config(100, true).await.get("swap").is_none());
    assert!(api.pending_keys(100).await.is_empty());
}

#[tokio::test]
async fn cpulimit_and_cpuunits_are_live_and_cpuunits_is_clamped() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("cpulimit", "1.5"), ("cpuunits", "50000")])
        .await
        .ok();
    let cur = api.config(100, true).await;
    assert_eq!(
        (cur["cpulimit"].as_str(), cur["cpuunits"].as_u64()),
        (Some("1.5"), Some(10000))
    );
    api.set(100, &[("delete", "cpulimit,cpuunits")]).await.ok();
    assert!(api.pending_keys(100).await.is_empty());
}

#[tokio::test]
async fn fastplug_keys_are_written_at_once() {
    let api = Api::start().await;
    api.running_ct().await;
    let form = [
        ("description", "hello"),
        ("onboot", "1"),
        ("startup", "order=3,up=60"),
        ("protection", "1"),
        ("tags", "b;A"),
        ("cores", "4"),
    ];
    api.set(100, &form).await.ok();
    assert!(api.pending_keys(100).await.is_empty());
    let cur = api.config(100, true).await;
    assert_eq!(cur["description"], "hello\n");
    assert_eq!(cur["tags"], "a;b");
    assert_eq!(
        (
            cur["cores"].as_u64(),
            cur["onboot"].as_u64(),
            cur["protection"].as_u64()
        ),
        (Some(4), Some(1), Some(1))
    );
}

#[tokio::test]
async fn hostname_is_written_at_once() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("hostname", "web2")]).await.ok();
    assert_eq!(api.config(100, true).await["hostname"], "web2");
    assert!(api.pending_keys(100).await.is_empty());
    assert!(
        api.sim
            .guest_events(100)
            .contains(&ev(GuestEvent::Written, "hostname"))
    );
}

#[tokio::test]
async fn changed_hwaddr_recreates_link() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(
        100,
        &[(
            "net0",
            "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:AA:BB:CC,ip=10.0.0.5/24,gw=10.0.0.1",
        )],
    )
    .await
    .ok();
    assert!(
        api.sim
            .guest_events(100)
            .contains(&ev(GuestEvent::LinkRecreated, "net0"))
    );
    let ifaces = api.get("/nodes/pve/lxc/100/interfaces").await.ok();
    let eth0 = ifaces
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "eth0")
        .cloned()
        .unwrap();
    assert_eq!(eth0["hwaddr"], "bc:24:11:aa:bb:cc");
}

#[tokio::test]
async fn omitted_hwaddr_generates_a_new_mac_and_recreates_link() {
    let api = Api::start().await;
    api.running_ct().await;
    let before = api.config(100, true).await["net0"]
        .as_str()
        .unwrap()
        .to_owned();
    api.set(
        100,
        &[("net0", "name=eth0,bridge=vmbr0,ip=10.0.0.5/24,gw=10.0.0.1")],
    )
    .await
    .ok();
    let after = api.config(100, true).await["net0"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(before, after);
    assert!(
        after.contains("hwaddr=BC:24:11:") && after.ends_with(",type=veth"),
        "{after}"
    );
    assert!(
        api.sim
            .guest_events(100)
            .contains(&ev(GuestEvent::LinkRecreated, "net0"))
    );
}

/// The current `net0` with one property replaced (keeps the MAC).
async fn net0_with(api: &Api, key: &str, value: &str) -> String {
    let cur = api.config(100, true).await["net0"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut parts: Vec<String> = cur
        .split(',')
        .filter(|p| !p.starts_with(&format!("{key}=")))
        .map(str::to_owned)
        .collect();
    parts.push(format!("{key}={value}"));
    parts.join(",")
}

#[tokio::test]
async fn bridge_or_tag_change_replugs_link() {
    let api = Api::start().await;
    api.running_ct().await;
    let net0 = net0_with(&api, "tag", "20").await;
    api.set(100, &[("net0", &net0)]).await.ok();
    assert!(
        api.sim
            .guest_events(100)
            .contains(&ev(GuestEvent::LinkReplugged, "net0"))
    );
    assert!(api.pending_keys(100).await.is_empty());
    assert!(
        api.config(100, true).await["net0"]
            .as_str()
            .unwrap()
            .contains(",tag=20,")
    );
}

#[tokio::test]
async fn ip_change_is_live_without_link_drop() {
    let api = Api::start().await;
    api.running_ct().await;
    let net0 = net0_with(&api, "ip", "10.0.0.6/24").await;
    api.set(100, &[("net0", &net0)]).await.ok();
    let events = api.sim.guest_events(100);
    assert!(events.contains(&ev(GuestEvent::HotApplied, "net0")));
    assert!(!events.contains(&ev(GuestEvent::LinkRecreated, "net0")));
}

#[tokio::test]
async fn mtu_change_is_stored_but_not_applied_to_the_link() {
    let api = Api::start().await;
    api.running_ct().await;
    let net0 = net0_with(&api, "mtu", "1400").await;
    api.set(100, &[("net0", &net0)]).await.ok();
    assert!(
        api.sim
            .guest_events(100)
            .contains(&ev(GuestEvent::Written, "net0"))
    );
    assert!(api.pending_keys(100).await.is_empty());
}

#[tokio::test]
async fn mtu_above_bridge_mtu_is_refused() {
    let api = Api::start().await;
    api.running_ct().await;
    let net0 = net0_with(&api, "mtu", "9000").await;
    let r = api.set(100, &[("net0", &net0)]).await;
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "net0: MTU size '9000' is bigger than bridge MTU '1500'".to_owned()
        )
    );
}

#[tokio::test]
async fn new_nic_is_hotplugged_and_nic_delete_is_live() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("net1", "name=eth1,bridge=vmbr0,ip=dhcp")])
        .await
        .ok();
    assert!(
        api.sim
            .guest_events(100)
            .contains(&ev(GuestEvent::LinkCreated, "net1"))
    );
    api.set(100, &[("delete", "net1")]).await.ok();
    assert!(
        api.sim
            .guest_events(100)
            .contains(&ev(GuestEvent::LinkDeleted, "net1"))
    );
    assert!(api.config(100, true).await.get("net1").is_none());
}

#[tokio::test]
async fn new_mount_point_is_hotplugged_with_a_new_volume() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("mp0", "local-lvm:2,mp=/mnt/data")])
        .await
        .ok();
    assert_eq!(
        api.config(100, true).await["mp0"],
        "local-lvm:vm-100-disk-1,mp=/mnt/data,size=2G"
    );
    let content = api
        .get_q("/nodes/pve/storage/local-lvm/content", &[("vmid", "100")])
        .await
        .ok();
    assert_eq!(content.data().as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn mount_point_change_and_delete_stay_pending() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("mp0", "local-lvm:2,mp=/mnt/data")])
        .await
        .ok();
    api.set(
        100,
        &[("mp0", "local-lvm:vm-100-disk-1,mp=/mnt/other,size=2G")],
    )
    .await
    .ok();
    assert_eq!(api.pending_keys(100).await, ["mp0"]);
    api.set(100, &[("revert", "mp0")]).await.ok();
    api.set(100, &[("delete", "mp0")]).await.ok();
    let pending = api.pending(100).await;
    assert_eq!(pending["mp0"]["delete"], 1);
}

#[tokio::test]
async fn hotplug_failure_is_a_400_and_nothing_is_written() {
    let api = Api::start().await;
    api.running_ct().await;
    let digest = api.config(100, false).await["digest"].clone();
    let r = api
        .set(100, &[("mp0", "local-lvm:4000,mp=/mnt/huge")])
        .await;
    assert_eq!(
        (r.status, r.message()),
        (400, "Parameter verification failed.".to_owned())
    );
    assert!(
        r.error("mp0")
            .starts_with("unable to hotplug mp0: lvcreate"),
        "{:?}",
        r.body
    );
    assert_eq!(api.config(100, false).await["digest"], digest);
}

#[tokio::test]
async fn features_change_is_pending_until_reboot() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("features", "nesting=1")]).await.ok();
    let pending = api.pending(100).await;
    assert_eq!(pending["features"]["pending"], "nesting=1");
    assert!(api.config(100, true).await.get("features").is_none());
    assert_eq!(api.config(100, false).await["features"], "nesting=1");
    api.run_ok(
        reqwest::Method::POST,
        "/nodes/pve/lxc/100/status/reboot",
        &[],
    )
    .await;
    assert!(api.pending_keys(100).await.is_empty());
    assert_eq!(api.config(100, true).await["features"], "nesting=1");
}

#[tokio::test]
async fn other_keys_stay_pending_on_running_ct() {
    let api = Api::start().await;
    api.running_ct().await;
    let form = [
        ("ostype", "ubuntu"),
        ("arch", "arm64"),
        ("cmode", "shell"),
        ("console", "0"),
        ("tty", "4"),
        ("nameserver", "1.1.1.1,9.9.9.9"),
        ("searchdomain", "example.internal"),
        ("timezone", "UTC"),
        ("entrypoint", "/bin/sh"),
        ("rootfs", "local-lvm:vm-100-disk-0,size=4G,acl=1"),
    ];
    api.set(100, &form).await.ok();
    let mut keys = api.pending_keys(100).await;
    keys.sort();
    assert_eq!(
        keys,
        [
            "arch",
            "cmode",
            "console",
            "entrypoint",
            "nameserver",
            "ostype",
            "rootfs",
            "searchdomain",
            "timezone",
            "tty"
        ]
    );
    assert_eq!(
        api.pending(100).await["nameserver"]["pending"],
        "1.1.1.1 9.9.9.9"
    );
}

#[tokio::test]
async fn deleting_net10_and_above_stays_pending_as_in_pve_container() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("net10", "name=eth10,bridge=vmbr0")])
        .await
        .ok();
    assert!(
        api.sim
            .guest_events(100)
            .contains(&ev(GuestEvent::LinkCreated, "net10"))
    );
    api.set(100, &[("delete", "net10")]).await.ok();
    assert_eq!(
        api.pending(100).await["net10"]["delete"],
        1,
        "pve-container matches net(\\d) when hot-deleting"
    );
}
