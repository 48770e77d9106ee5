//! Conformance: the simulator refuses what PVE refuses, with PVE's status and message, and
//! accepts what PVE accepts (issue 16): parameter checks here, container operations in
//! `pvesim_strict_ops.rs`. Each test names the PVE source it mirrors; the
//! parameter checks are `PVE::JSONSchema::validate` (pve-common `src/PVE/JSONSchema.pm`,
//! `check_prop`/`check_type`/`check_object`/`parse_property_string`) run by
//! `RESTHandler::handle` before any API code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use support::{Api, Resp};

/// A 400 `Parameter verification failed.` naming `key` with `msg`.
pub(crate) fn assert_param(r: &Resp, key: &str, msg: &str) {
    assert_eq!(
        (r.status, r.message().as_str(), r.error(key).as_str()),
        (400, "Parameter verification failed.", msg),
        "{:?}",
        r.body
    );
}

/// A 500 from a `die` in the API code.
pub(crate) fn assert_die(r: &Resp, msg: &str) {
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

/// `(parameter, value, message)` for `PUT config`: one row per `$confdesc` rule.
const CONFIG_RULES: &[(&str, &str, &str)] = &[
    // check_prop enum
    (
        "arch",
        "sparc",
        "value 'sparc' does not have a value in the enumeration 'amd64, i386, arm64, armhf, riscv32, riscv64'",
    ),
    // check_prop maximum / minimum
    ("cores", "8193", "value must have a maximum value of 8192"),
    ("memory", "8", "value must have a minimum value of 16"),
    (
        "cpulimit",
        "1.5x",
        "type check ('number') failed - got '1.5x'",
    ),
    // pve_verify_tag (pve-tag-list)
    (
        "tags",
        "ok;bad!tag",
        "invalid format - invalid characters in tag",
    ),
    // pve_verify_dns_name (dns-name-list)
    (
        "searchdomain",
        "example.com bad_domain",
        "invalid format - value does not look like a valid DNS name",
    ),
    // verify_ct_timezone -> pve_verify_timezone
    (
        "timezone",
        "nowhere",
        "invalid format - invalid time zone 'nowhere'",
    ),
    // $mp_desc mp: verify_lxc_mp_string
    (
        "mp0",
        "local-lvm:1,mp=/data/../etc",
        "invalid format - format error\nmp0.mp: invalid format - /data/../etc contains illegal character sequences",
    ),
    // $mp_desc: mp is not optional
    (
        "mp1",
        "local-lvm:1",
        "invalid format - format error\nmp1.mp: property is missing and it is not optional",
    ),
    // $rootfs_desc mountoptions pattern
    (
        "rootfs",
        "local-lvm:4,mountoptions=sync",
        "invalid format - format error\nrootfs.mountoptions: value does not match the regex pattern",
    ),
    // pve_verify_mac_addr: the I/G bit must not be set
    (
        "net1",
        "name=eth1,bridge=vmbr0,hwaddr=01:00:00:00:00:01",
        "invalid format - format error\nnet1.hwaddr: invalid format - value does not look like a valid unicast MAC address",
    ),
    // parse_property_string: a key the format does not have, a repeated key
    (
        "net1",
        "name=eth1,colour=red",
        "invalid format - invalid key in comma-separated list property: colour",
    ),
    (
        "net1",
        "name=eth1,name=eth2",
        "invalid format - duplicate key in comma-separated list property: name",
    ),
    // verify_lxc_dev_string
    (
        "dev0",
        "/tmp/x",
        "invalid format - format error\ndev0.path: invalid format - /tmp/x is not a valid device path",
    ),
    // update_vm: delete is a pve-configid-list
    (
        "delete",
        "9bad",
        "invalid format - invalid configuration ID '9bad'",
    ),
    // update_vm: digest maxLength 40
    (
        "digest",
        "0123456789012345678901234567890123456789x",
        "value may only be 40 characters long",
    ),
];

// pve-container src/PVE/LXC/Config.pm $confdesc and its formats, checked by check_prop.
#[tokio::test]
async fn config_rules_answer_in_pves_words() {
    let api = stopped_ct().await;
    for (key, value, msg) in CONFIG_RULES {
        let r = api.set(100, &[(key, value)]).await;
        assert_param(&r, key, msg);
    }
}

/// pve-container `update_pct_config` (PVE 9.1+): "SLAAC is not supported for host-managed
/// network configuration", unless the link is down; on create and on update alike.
#[tokio::test]
async fn a_host_managed_nic_cannot_take_ipv6_by_slaac() {
    let api = stopped_ct().await;
    let r = api
        .set(
            100,
            &[(
                "net0",
                "name=eth0,bridge=vmbr0,host-managed=1,ip=dhcp,ip6=auto",
            )],
        )
        .await;
    assert_die(
        &r,
        "net0: SLAAC is not supported for host-managed network configuration.",
    );
    api.set(
        100,
        &[(
            "net0",
            "name=eth0,bridge=vmbr0,host-managed=1,ip6=auto,link_down=1",
        )],
    )
    .await
    .ok();
    api.set(
        100,
        &[("net0", "name=eth0,bridge=vmbr0,host-managed=1,ip6=dhcp")],
    )
    .await
    .ok();
}
