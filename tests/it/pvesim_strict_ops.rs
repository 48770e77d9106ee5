//! Conformance: container create, hot-plug, destroy and resize refuse and accept what PVE's
//! API code does, each test naming the pve-container function it mirrors (`src/PVE/API2/LXC.pm`
//! `create_vm`, `destroy_vm`, `resize_vm`; `src/PVE/LXC.pm` `update_net`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_strict::{assert_die, assert_param};
use crate::pvesim_support as support;

use pvesim::GuestEvent;
use reqwest::Method;
use support::{Api, Resp, TEMPLATE};

async fn create(api: &Api, extra: &[(&str, &str)]) -> Resp {
    let mut form = vec![("vmid", "120"), ("ostemplate", TEMPLATE)];
    form.extend_from_slice(extra);
    api.post("/nodes/pve/lxc", &form).await
}

/// `POST /nodes/pve/lxc` as root@pam with a ticket (hook scripts are root@pam's, and a token
/// never is root@pam): the status and the message.
async fn create_as_root(api: &Api, extra: &[(&str, &str)]) -> (u16, String) {
    let r = api
        .post(
            "/access/ticket",
            &[("username", "root@pam"), ("password", "secret")],
        )
        .await
        .ok();
    let cookie = format!("PVEAuthCookie={}", r.data()["ticket"].as_str().unwrap());
    let csrf = r.data()["CSRFPreventionToken"].as_str().unwrap().to_owned();
    let mut form = vec![("vmid", "120"), ("ostemplate", TEMPLATE)];
    form.extend_from_slice(extra);
    let res = api
        .client
        .post(format!("{}/nodes/pve/lxc", api.base))
        .header("Cookie", cookie)
        .header("CSRFPreventionToken", csrf)
        .form(&form)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let body: serde_json::Value = res.json().await.unwrap_or_default();
    let message = body["message"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned();
    (status, message)
}

// create_vm: `die "mount points configured, but 'rootfs' not set - aborting\n"`.
#[tokio::test]
async fn create_with_a_mount_point_needs_rootfs() {
    let api = Api::start().await;
    let r = create(&api, &[("mp0", "local-lvm:1,mp=/data")]).await;
    assert_die(
        &r,
        "mount points configured, but 'rootfs' not set - aborting",
    );
}

// create_vm -> PVE::Tools::validate_ssh_public_keys: `die "SSH public key validation error\n"`.
#[tokio::test]
async fn create_refuses_an_invalid_ssh_key() {
    let api = Api::start().await;
    let r = create(&api, &[("ssh-public-keys", "not a key")]).await;
    assert_die(&r, "SSH public key validation error");
}

// create_vm: unique has `requires => 'restore'` (check_object).
#[tokio::test]
async fn unique_requires_restore() {
    let api = Api::start().await;
    let r = create(&api, &[("unique", "1")]).await;
    assert_param(&r, "restore", "missing property required by 'unique'");
}

// create_vm $check_and_activate_storage -> storage_check_enabled, before the task starts.
#[tokio::test]
async fn create_refuses_a_missing_rootfs_storage_at_once() {
    let api = Api::start().await;
    let r = create(&api, &[("rootfs", "nosuch:8")]).await;
    assert_die(&r, "storage 'nosuch' does not exist");
    assert_eq!(api.get("/nodes/pve/lxc/120/config").await.status, 500);
}

// create_vm runs update_pct_config before create_and_lock_config: the MTU check is synchronous.
#[tokio::test]
async fn create_refuses_an_mtu_above_the_bridges_at_once() {
    let api = Api::start().await;
    let r = create(
        &api,
        &[
            ("storage", "local-lvm"),
            ("net0", "name=eth0,bridge=vmbr0,mtu=9000"),
        ],
    )
    .await;
    assert_die(&r, "net0: MTU size '9000' is bigger than bridge MTU '1500'");
}

// vmconfig_hotplug_pending -> update_net -> hotplug_net -> veth_create -> read_bridge_mtu.
#[tokio::test]
async fn a_nic_hotplugged_onto_a_missing_bridge_is_refused() {
    let api = Api::start().await;
    api.running_ct().await;
    let r = api
        .set(100, &[("net1", "name=eth1,bridge=vmbr9,ip=dhcp")])
        .await;
    assert_param(
        &r,
        "net1",
        "unable to hotplug net1: bridge 'vmbr9' does not exist",
    );
    assert!(api.config(100, true).await.get("net1").is_none());
}

// create_vm: the default storage is checked only when rootfs is absent (`pct create` form).
#[tokio::test]
async fn create_with_rootfs_on_its_own_storage_needs_no_default_storage() {
    let api = Api::start().await;
    let r = create(&api, &[("rootfs", "local-lvm:8")]).await.ok();
    let status = api.wait_task(r.data().as_str().unwrap()).await;
    assert_eq!(status["exitstatus"], "OK");
    let cur = api.get("/nodes/pve/lxc/120/status/current").await.ok();
    assert_eq!(cur.data()["maxdisk"], 8_u64 << 30);
}

async fn volumes(api: &Api) -> Vec<String> {
    let r = api.get("/nodes/pve/storage/local-lvm/content").await.ok();
    let items = r.data().as_array().cloned().unwrap_or_default();
    items
        .iter()
        .filter_map(|v| v["volid"].as_str().map(str::to_owned))
        .collect()
}

/// CT 100 with an owned volume no key refers to any more (`unused0` pointed elsewhere).
async fn ct_with_unreferenced_volume(api: &Api) -> String {
    api.create_ct(
        100,
        &[("rootfs", "local-lvm:2"), ("mp0", "local-lvm:1,mp=/data")],
    )
    .await;
    let mp0 = api.config(100, false).await["mp0"]
        .as_str()
        .unwrap()
        .to_owned();
    let volid = mp0.split(',').next().unwrap().to_owned();
    api.set(100, &[("delete", "mp0")]).await.ok();
    let rootfs = api.config(100, false).await["rootfs"]
        .as_str()
        .unwrap()
        .to_owned();
    let root_vol = rootfs.split(',').next().unwrap().to_owned();
    api.set(100, &[("unused0", &root_vol)]).await.ok();
    volid
}

// destroy_lxc_container: referenced volumes always; all of the CT's disks only with
// destroy-unreferenced-disks.
#[tokio::test]
async fn destroy_removes_unreferenced_disks_only_when_asked() {
    let api = Api::start().await;
    let orphan = ct_with_unreferenced_volume(&api).await;
    api.run_ok(Method::DELETE, "/nodes/pve/lxc/100", &[]).await;
    assert_eq!(volumes(&api).await, vec![orphan.clone()]);

    let api = Api::start().await;
    let orphan = ct_with_unreferenced_volume(&api).await;
    let flag = [("destroy-unreferenced-disks", "1")];
    api.run_ok(Method::DELETE, "/nodes/pve/lxc/100", &flag)
        .await;
    assert!(!volumes(&api).await.contains(&orphan));
}

// resize_vm: the new size is measured from volume_size_info, not from the config's size.
#[tokio::test]
async fn resize_grows_from_the_volumes_real_size() {
    let api = Api::start().await;
    api.create_ct(100, &[("rootfs", "local-lvm:4")]).await;
    let rootfs = api.config(100, false).await["rootfs"]
        .as_str()
        .unwrap()
        .to_owned();
    let volid = rootfs.split(',').next().unwrap().to_owned();
    api.set(100, &[("rootfs", &format!("{volid},size=1G"))])
        .await
        .ok();
    let form = [("disk", "rootfs"), ("size", "+1G")];
    api.run_ok(Method::PUT, "/nodes/pve/lxc/100/resize", &form)
        .await;
    assert_eq!(
        api.config(100, false).await["rootfs"],
        format!("{volid},size=5G")
    );
}

// create_vm: $rpcenv->check_pool_exist raises a permission exception; update_pct_config ->
// check_hookscript dies before the container is locked.
#[tokio::test]
async fn a_missing_pool_or_hookscript_is_refused_at_once() {
    let api = Api::start().await;
    let r = create(&api, &[("pool", "nosuch")]).await;
    assert_eq!(
        (r.status, r.message()),
        (
            403,
            "Permission check failed (pool 'nosuch' does not exist)".to_owned()
        )
    );
    let (status, message) = create_as_root(
        &api,
        &[
            ("storage", "local-lvm"),
            ("hookscript", "local:snippets/nosuch.sh"),
        ],
    )
    .await;
    assert_eq!(
        (status, message.as_str()),
        (500, "script 'local:snippets/nosuch.sh' does not exist")
    );
    assert_eq!(api.get("/nodes/pve/lxc/120/config").await.status, 500);
}

// destroy_vm $early_checks: check_protection comes before the running state.
#[tokio::test]
async fn destroy_checks_protection_before_the_running_state() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("protection", "1")]).await.ok();
    let r = api.delete("/nodes/pve/lxc/100", &[]).await;
    assert_die(&r, "can't remove CT 100 - protection mode enabled");
}

// update_net: only hwaddr/name re-create and bridge/tag/firewall/link_down re-plug the veth.
#[tokio::test]
async fn a_trunks_change_does_not_replug_the_link() {
    let api = Api::start().await;
    api.running_ct().await;
    let net0 = api.config(100, false).await["net0"]
        .as_str()
        .unwrap()
        .to_owned();
    api.set(100, &[("net0", &format!("{net0},trunks=10;20"))])
        .await
        .ok();
    let events = api.sim.guest_events(100);
    assert!(events.contains(&GuestEvent::Written("net0".to_owned())));
    assert!(!events.contains(&GuestEvent::LinkReplugged("net0".to_owned())));
}

// create_vm's own parameters (src/PVE/API2/LXC.pm): minLength, pve-storage-id (parse_id),
// pve-poolid, bwlimit minimum, ostemplate maxLength; checked before anything else.
#[tokio::test]
async fn create_parameters_answer_in_pves_words() {
    let api = Api::start().await;
    let long = format!("local:vztmpl/{}.tar.zst", "a".repeat(250));
    let rules: &[(&str, &str, &str)] = &[
        (
            "password",
            "abc",
            "value must be at least 5 characters long",
        ),
        (
            "storage",
            "x",
            "invalid format - storage ID 'x' cannot be shorter than 2 characters",
        ),
        (
            "pool",
            "bad pool",
            "invalid format - pool name 'bad pool' contains invalid characters",
        ),
        ("bwlimit", "-1", "value must have a minimum value of 0"),
    ];
    for (key, value, msg) in rules {
        let r = create(&api, &[(key, value)]).await;
        assert_param(&r, key, msg);
    }
    let form = [("vmid", "120"), ("ostemplate", long.as_str())];
    let r = api.post("/nodes/pve/lxc", &form).await;
    assert_param(&r, "ostemplate", "value may only be 255 characters long");
    let r = api
        .post("/nodes/pve/lxc", &[("ostemplate", TEMPLATE)])
        .await;
    assert_param(&r, "vmid", "property is missing and it is not optional");
    assert!(
        api.get("/nodes/pve/lxc")
            .await
            .ok()
            .data()
            .as_array()
            .unwrap()
            .is_empty()
    );
}
