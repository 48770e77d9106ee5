//! Conformance: the simulator refuses what PVE refuses, with PVE's status and message, and
//! accepts what PVE accepts (issue 16). Each test names the PVE source it mirrors; the
//! parameter checks are `PVE::JSONSchema::validate` (pve-common `src/PVE/JSONSchema.pm`,
//! `check_prop`/`check_type`/`check_object`/`parse_property_string`) run by
//! `RESTHandler::handle` before any API code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use pvesim::GuestEvent;
use reqwest::Method;
use support::{Api, Resp, TEMPLATE};

/// A 400 `Parameter verification failed.` naming `key` with `msg`.
fn assert_param(r: &Resp, key: &str, msg: &str) {
    assert_eq!(
        (r.status, r.message().as_str(), r.error(key).as_str()),
        (400, "Parameter verification failed.", msg),
        "{:?}",
        r.body
    );
}

/// A 500 from a `die` in the API code.
fn assert_die(r: &Resp, msg: &str) {
    assert_eq!(
        (r.status, r.message()),
        (500, msg.to_owned()),
        "{:?}",
        r.body
    );
}

async fn stopped_ct() -> Api {
    let api = Api::start().await;
    api.create_ct(100, &[("net0", "name=eth0,bridge=vmbr0,ip=dhcp")])
        .await;
    api
}

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

const UNKNOWN: &str =
    "property is not defined in schema and the schema does not allow additional properties";

// check_type: a boolean is only '1' or '0' (the `true|yes|on` branch is commented out).
#[tokio::test]
async fn onboot_true_is_not_a_boolean() {
    let api = stopped_ct().await;
    let r = api.set(100, &[("onboot", "true")]).await;
    assert_param(&r, "onboot", "type check ('boolean') failed - got 'true'");
}

// $confdesc hostname: format dns-name, maxLength 255 (check_prop: format, then maxLength).
#[tokio::test]
async fn a_256_character_hostname_is_too_long() {
    let api = stopped_ct().await;
    let long = "a".repeat(256);
    let r = api.set(100, &[("hostname", &long)]).await;
    assert_param(&r, "hostname", "value may only be 255 characters long");
}

// pve_verify_startup_order: `die "unable to parse startup options\n"`.
#[tokio::test]
async fn startup_must_parse_as_startup_options() {
    let api = stopped_ct().await;
    let r = api.set(100, &[("startup", "foo")]).await;
    assert_param(
        &r,
        "startup",
        "invalid format - unable to parse startup options",
    );
    api.set(100, &[("startup", "order=2,up=30")]).await.ok();
}

// nameserver: format lxc-ip-with-ll-iface-list (LXC/Config.pm verify_ip_with_ll_iface).
#[tokio::test]
async fn nameserver_must_be_ip_addresses() {
    let api = stopped_ct().await;
    let r = api.set(100, &[("nameserver", "1.1.1.1 notanip")]).await;
    assert_param(
        &r,
        "nameserver",
        "invalid format - value does not look like a valid IP address",
    );
    api.set(100, &[("nameserver", "1.1.1.1 fe80::1%eth0")])
        .await
        .ok();
}

// $netconf_desc through parse_property_string: sub-key errors raised as "format error" with
// `net0.<key>: <msg>` lines (PVE::Exception stringify).
#[tokio::test]
async fn net0_sub_keys_are_checked_like_pve() {
    let api = stopped_ct().await;
    let cases = [
        (
            "name=eth0,bridge=vmbr0,ip=300.1.1.1/24",
            "net0.ip: invalid format - value does not look like a valid ipv4 network configuration",
        ),
        (
            "name=eth0,bridge=vmbr0,ip=10.0.0.5",
            "net0.ip: invalid format - value does not look like a valid ipv4 network configuration",
        ),
        (
            "name=eth0,bridge=vmbr0,rate=fast",
            "net0.rate: type check ('number') failed - got 'fast'",
        ),
        (
            "name=eth 0,bridge=vmbr0",
            "net0.name: value does not match the regex pattern",
        ),
    ];
    for (value, line) in cases {
        let r = api.set(100, &[("net0", value)]).await;
        let msg = format!("invalid format - format error\n{line}");
        assert_param(&r, "net0", &msg);
    }
}

// $features_desc: parse_property_string turns on/yes/true into 1 (parse_boolean), the rest
// fails check_type.
#[tokio::test]
async fn feature_flags_are_booleans() {
    let api = stopped_ct().await;
    let r = api.set(100, &[("features", "nesting=abc")]).await;
    assert_param(
        &r,
        "features",
        "invalid format - format error\nfeatures.nesting: type check ('boolean') failed - got 'abc'",
    );
    api.set(100, &[("features", "nesting=1")]).await.ok();
}

// $mp_desc size: format disk-size (pve_verify_disk_size).
#[tokio::test]
async fn mount_point_size_must_be_a_disk_size() {
    let api = stopped_ct().await;
    let r = api
        .set(100, &[("mp0", "local-lvm:1,mp=/data,size=abc")])
        .await;
    assert_param(
        &r,
        "mp0",
        "invalid format - format error\nmp0.size: invalid format - value does not look like a valid disk size: abc",
    );
}

// API2/LXC/Config.pm vm_config and API2/LXC/Status.pm: additionalProperties => 0.
#[tokio::test]
async fn unknown_parameters_are_refused_on_reads_and_power_calls() {
    let api = stopped_ct().await;
    let r = api
        .get_q("/nodes/pve/lxc/100/config", &[("bogus", "1")])
        .await;
    assert_param(&r, "bogus", UNKNOWN);
    let r = api
        .get_q("/nodes/pve/lxc/100/status/current", &[("verbose", "1")])
        .await;
    assert_param(&r, "verbose", UNKNOWN);
    let r = api
        .post("/nodes/pve/lxc/100/status/start", &[("timeout", "5")])
        .await;
    assert_param(&r, "timeout", UNKNOWN);
}

// vm_shutdown: timeout is an integer with minimum 0.
#[tokio::test]
async fn a_negative_shutdown_timeout_is_refused() {
    let api = stopped_ct().await;
    let r = api
        .post("/nodes/pve/lxc/100/status/shutdown", &[("timeout", "-5")])
        .await;
    assert_param(&r, "timeout", "value must have a minimum value of 0");
}

// pve-vmid: type integer, then format pve-vmid (`value does not look like a valid VM ID`).
#[tokio::test]
async fn path_vmids_are_checked_as_pve_vmid() {
    let api = Api::start().await;
    let r = api.get("/nodes/pve/lxc/99/config").await;
    assert_param(
        &r,
        "vmid",
        "invalid format - value does not look like a valid VM ID",
    );
    let r = api.get("/nodes/pve/lxc/abc/status/current").await;
    assert_param(&r, "vmid", "type check ('integer') failed - got 'abc'");
}

// resize_vm: disk is an enum of valid_volume_keys (rootfs, mp0..mp255).
#[tokio::test]
async fn resize_refuses_a_disk_that_is_not_a_mount_point() {
    let api = stopped_ct().await;
    let before = api.config(100, false).await["net0"].clone();
    let r = api
        .put(
            "/nodes/pve/lxc/100/resize",
            &[("disk", "net0"), ("size", "1G")],
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.error("disk").starts_with(
            "value 'net0' does not have a value in the enumeration 'rootfs, mp0, mp1,"
        ),
        "{:?}",
        r.body
    );
    assert_eq!(api.config(100, false).await["net0"], before);
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

// pve-manager PVE/HTTPServer.pm rest_handler: a request parameter may repeat a path parameter
// only with the same value.
#[tokio::test]
async fn a_path_parameter_repeated_with_another_value_is_refused() {
    let api = stopped_ct().await;
    let r = api.set(100, &[("vmid", "101"), ("cores", "2")]).await;
    assert_param(
        &r,
        "vmid",
        "duplicate parameter (already defined in URI) with conflicting values!",
    );
    api.set(100, &[("vmid", "100"), ("cores", "2")]).await.ok();
}

// check_type: a JSON `true` passes as a boolean (JSON::is_bool), the string "true" does not.
#[tokio::test]
async fn json_booleans_are_booleans() {
    let api = stopped_ct().await;
    let res = api
        .client
        .put(format!("{}/nodes/pve/lxc/100/config", api.base))
        .header("Authorization", support::TOKEN)
        .json(&serde_json::json!({ "onboot": true }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(api.config(100, false).await["onboot"], 1);
}
