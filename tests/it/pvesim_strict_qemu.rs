//! Conformance of the QEMU endpoints (issue 16): the simulator refuses what qemu-server refuses,
//! with PVE's status and message. One test per rule, each naming the qemu-server source it
//! mirrors (`src/PVE/QemuServer.pm` `$confdesc`, `QemuServer/Network.pm`, `QemuServer/Drive.pm`,
//! `QemuServer/Agent.pm`, `QemuServer/Memory.pm`, `src/PVE/API2/Qemu.pm`); the checks are
//! `PVE::JSONSchema::validate` run by `RESTHandler::handle` before any API code, so they answer
//! 400 `Parameter verification failed.`; a `die` in the API code answers 500.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_strict::{assert_die, assert_param};
use crate::pvesim_support as support;

use support::Api;

const VM: &str = "guests:\n  - vmid: 200\n    type: qemu\n    config: {name: web, cores: 2, memory: 2048, scsi0: 'local-lvm:vm-200-disk-0,size=4G', net0: 'virtio=BC:24:11:00:00:C8,bridge=vmbr0', boot: 'order=scsi0;net0'}\n";
const CONFIG: &str = "/nodes/pve/qemu/200/config";
const UNKNOWN: &str =
    "property is not defined in schema and the schema does not allow additional properties";

async fn vm() -> Api {
    Api::scenario(VM).await
}

/// `PUT .../config` with one key; the error for that key.
async fn set_refused(key: &str, value: &str, msg: &str) {
    let r = vm().await.put(CONFIG, &[(key, value)]).await;
    assert_param(&r, key, msg);
}

// $confdesc onboot: type boolean; check_type takes only 1 and 0.
#[tokio::test]
async fn onboot_true_is_not_a_boolean() {
    set_refused(
        "onboot",
        "true",
        "type check ('boolean') failed - got 'true'",
    )
    .await;
}

// $confdesc cores: integer, minimum 1.
#[tokio::test]
async fn zero_cores_are_below_the_minimum() {
    set_refused("cores", "0", "value must have a minimum value of 1").await;
}

// $confdesc cpuunits: integer, maximum 262144.
#[tokio::test]
async fn cpuunits_above_262144_are_refused() {
    set_refused(
        "cpuunits",
        "300000",
        "value must have a maximum value of 262144",
    )
    .await;
}

// QemuServer/Memory.pm $memory_fmt: `current` is the default key, an integer >= 16.
#[tokio::test]
async fn memory_must_be_an_integer_amount() {
    let msg =
        "invalid format - format error\nmemory.current: type check ('integer') failed - got 'abc'";
    set_refused("memory", "abc", msg).await;
    set_refused(
        "memory",
        "8",
        "invalid format - format error\nmemory.current: value must have a minimum value of 16",
    )
    .await;
}

// Network.pm $net_fmt: `model` is an enum of $nic_model_list (the default key).
#[tokio::test]
async fn net0_with_an_unknown_model_is_refused() {
    let r = vm()
        .await
        .put(CONFIG, &[("net0", "e1001,bridge=vmbr0")])
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.error("net0").starts_with(
            "invalid format - format error\nnet0.model: value 'e1001' does not have a value in the enumeration 'e1000, e1000-82540em,"
        ),
        "{}",
        r.error("net0")
    );
}

// Network.pm $net_fmt: each model is a keyAlias of `model` and an alias of `macaddr`
// (`virtio=<MAC>`); JSONSchema parse_property_string refuses a second model.
#[tokio::test]
async fn net0_naming_the_model_twice_is_refused() {
    set_refused(
        "net0",
        "model=e1000,virtio=BC:24:11:00:00:01",
        "invalid format - key alias 'model' is already defined",
    )
    .await;
}

// Network.pm $net_fmt macaddr: format mac-addr (pve_verify_mac_addr: unicast only).
#[tokio::test]
async fn net0_with_a_multicast_mac_is_refused() {
    set_refused(
        "net0",
        "virtio=01:00:5E:00:00:01,bridge=vmbr0",
        "invalid format - format error\nnet0.macaddr: invalid format - value does not look like a valid unicast MAC address",
    )
    .await;
}

// Network.pm $net_fmt bridge: format pve-bridge-id (JSONSchema.pm parse_bridge_id).
#[tokio::test]
async fn net0_with_a_bad_bridge_name_is_refused() {
    set_refused(
        "net0",
        "virtio,bridge=vm br0",
        "invalid format - format error\nnet0.bridge: invalid format - invalid bridge ID 'vm br0'",
    )
    .await;
}

// Network.pm $net_fmt tag: integer 1..4094.
#[tokio::test]
async fn net0_vlan_tag_above_4094_is_refused() {
    set_refused(
        "net0",
        "virtio,bridge=vmbr0,tag=4095",
        "invalid format - format error\nnet0.tag: value must have a maximum value of 4094",
    )
    .await;
}

// Drive.pm size: format disk-size (pve_verify_disk_size).
#[tokio::test]
async fn scsi0_with_a_bad_size_is_refused() {
    set_refused(
        "scsi0",
        "local-lvm:vm-200-disk-0,size=abc",
        "invalid format - format error\nscsi0.size: invalid format - value does not look like a valid disk size: abc",
    )
    .await;
}

// Drive.pm format: standard option pve-qm-image-format, an enum.
#[tokio::test]
async fn scsi0_with_an_unknown_image_format_is_refused() {
    set_refused(
        "scsi0",
        "local-lvm:vm-200-disk-0,format=vhd",
        "invalid format - format error\nscsi0.format: value 'vhd' does not have a value in the enumeration 'raw, qcow, qed, qcow2, vmdk, cloop'",
    )
    .await;
}

// Drive.pm $efidisk_fmt efitype: enum 2m, 4m.
#[tokio::test]
async fn efidisk_type_must_be_2m_or_4m() {
    set_refused(
        "efidisk0",
        "local-lvm:1,efitype=8m",
        "invalid format - format error\nefidisk0.efitype: value '8m' does not have a value in the enumeration '2m, 4m'",
    )
    .await;
}

// Agent.pm $agent_fmt: `enabled` is a boolean (parse_property_string's parse_boolean
// accepts on/yes/true but not `maybe`).
#[tokio::test]
async fn agent_enabled_must_be_a_boolean() {
    set_refused(
        "agent",
        "enabled=maybe",
        "invalid format - format error\nagent.enabled: type check ('boolean') failed - got 'maybe'",
    )
    .await;
    let r = vm().await.put(CONFIG, &[("agent", "enabled=yes")]).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

// Network.pm $ipconfig_fmt ip: format pve-ipv4-config.
#[tokio::test]
async fn ipconfig0_with_a_bad_address_is_refused() {
    set_refused(
        "ipconfig0",
        "ip=300.1.1.1/24,gw=10.0.0.1",
        "invalid format - format error\nipconfig0.ip: invalid format - value does not look like a valid ipv4 network configuration",
    )
    .await;
}

// Network.pm $ipconfig_fmt gw: requires ip (check_object inside parse_property_string).
#[tokio::test]
async fn ipconfig0_gateway_requires_an_address() {
    set_refused(
        "ipconfig0",
        "gw=10.0.0.1",
        "invalid format - format error\nipconfig0.ip: missing property required by 'ipconfig0.gw'",
    )
    .await;
}

// $confdesc_cloudinit sshkeys: format urlencoded (pve_verify_urlencoded).
#[tokio::test]
async fn sshkeys_must_be_url_encoded() {
    set_refused(
        "sshkeys",
        "ssh-ed25519 AAAA",
        "invalid format - invalid urlencoded string: ssh-ed25519 AAAA",
    )
    .await;
}

// $confdesc_cloudinit nameserver: format address-list (pve_verify_address: IP or DNS name).
#[tokio::test]
async fn nameserver_entries_must_be_addresses() {
    set_refused(
        "nameserver",
        "1.1.1.1 bad_host",
        "invalid format - value does not look like a valid address: bad_host",
    )
    .await;
}

// $confdesc hotplug: format pve-hotplug-features (parse_hotplug_features dies first).
#[tokio::test]
async fn hotplug_names_only_known_features() {
    set_refused(
        "hotplug",
        "disk,floppy",
        "invalid format - invalid hotplug feature 'floppy'",
    )
    .await;
}

// $vga_fmt memory: integer 4..512.
#[tokio::test]
async fn vga_memory_below_4_is_refused() {
    set_refused(
        "vga",
        "std,memory=2",
        "invalid format - format error\nvga.memory: value must have a minimum value of 4",
    )
    .await;
}

// Machine.pm pve-qemu-machine type: the machine-type pattern.
#[tokio::test]
async fn machine_type_must_match_the_pattern() {
    set_refused(
        "machine",
        "pc-q35-latest",
        "invalid format - format error\nmachine.type: value does not match the regex pattern",
    )
    .await;
}

// $boot_fmt order: format pve-qm-bootdev-list (verify_bootdev).
#[tokio::test]
async fn boot_order_names_only_boot_devices() {
    set_refused(
        "boot",
        "order=scsi0;efidisk0",
        "invalid format - format error\nboot.order: invalid format - invalid boot device 'efidisk0'",
    )
    .await;
}

// API2/Qemu.pm update_vm_api: every device of `order=` must exist (a die, after the schema).
#[tokio::test]
async fn boot_order_naming_a_missing_device_is_refused() {
    let r = vm()
        .await
        .put(CONFIG, &[("boot", "order=scsi5;net0")])
        .await;
    assert_die(&r, "invalid bootorder: device 'scsi5' does not exist'");
}

// $confdesc description: maxLength 8192.
#[tokio::test]
async fn description_longer_than_8192_characters_is_refused() {
    let long = "d".repeat(8193);
    set_refused(
        "description",
        &long,
        "value may only be 8192 characters long",
    )
    .await;
}

// $confdesc serialN: pattern `(/dev/[^,]+|socket)`.
#[tokio::test]
async fn serial_port_must_be_a_device_or_socket() {
    set_refused("serial0", "tty", "value does not match the regex pattern").await;
}

// update_vm: additionalProperties 0 - an unknown key is named.
#[tokio::test]
async fn unknown_config_keys_are_refused() {
    set_refused("hostname", "web", UNKNOWN).await;
}

// vm_config, vm_status, vm_start: only their declared parameters.
#[tokio::test]
async fn unknown_parameters_are_refused_on_reads_and_power_calls() {
    let api = vm().await;
    let r = api.get_q(CONFIG, &[("bogus", "1")]).await;
    assert_param(&r, "bogus", UNKNOWN);
    let r = api
        .get_q("/nodes/pve/qemu/200/status/current", &[("verbose", "1")])
        .await;
    assert_param(&r, "verbose", UNKNOWN);
    let r = api
        .post("/nodes/pve/qemu/200/status/start", &[("forceStop", "1")])
        .await;
    assert_param(&r, "forceStop", UNKNOWN);
    let r = api
        .get_q("/nodes/pve/qemu/200/pending", &[("x", "1")])
        .await;
    assert_param(&r, "x", UNKNOWN);
}

// vm_shutdown timeout: integer, minimum 0; vm_stop timeout: an integer.
#[tokio::test]
async fn a_negative_or_non_numeric_timeout_is_refused() {
    let api = vm().await;
    let r = api
        .post("/nodes/pve/qemu/200/status/shutdown", &[("timeout", "-5")])
        .await;
    assert_param(&r, "timeout", "value must have a minimum value of 0");
    let r = api
        .post("/nodes/pve/qemu/200/status/stop", &[("timeout", "soon")])
        .await;
    assert_param(&r, "timeout", "type check ('integer') failed - got 'soon'");
}

// vm_suspend statestorage: requires todisk.
#[tokio::test]
async fn suspend_statestorage_requires_todisk() {
    let r = vm()
        .await
        .post(
            "/nodes/pve/qemu/200/status/suspend",
            &[("statestorage", "local-lvm")],
        )
        .await;
    assert_param(&r, "todisk", "missing property required by 'statestorage'");
}

// resize_vm disk: enum of valid_drive_names (ide, scsi, virtio, sata, efidisk0, tpmstate0).
#[tokio::test]
async fn resize_of_a_non_disk_key_is_refused() {
    let r = vm()
        .await
        .put(
            "/nodes/pve/qemu/200/resize",
            &[("disk", "net0"), ("size", "+1G")],
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    let e = r.error("disk");
    assert!(
        e.starts_with(
            "value 'net0' does not have a value in the enumeration 'ide0, ide1, ide2, ide3, scsi0,"
        ) && e.ends_with("sata5, efidisk0, tpmstate0'"),
        "{e}"
    );
}

// resize_vm size: pattern `\+?\d+(\.\d+)?[KMGT]?`.
#[tokio::test]
async fn resize_size_must_match_the_pattern() {
    let r = vm()
        .await
        .put(
            "/nodes/pve/qemu/200/resize",
            &[("disk", "scsi0"), ("size", "+1GB")],
        )
        .await;
    assert_param(&r, "size", "value does not match the regex pattern");
}

// create_vm: `force` and `unique` require `archive`.
#[tokio::test]
async fn create_force_requires_archive() {
    let r = Api::start()
        .await
        .post("/nodes/pve/qemu", &[("vmid", "300"), ("force", "1")])
        .await;
    assert_param(&r, "archive", "missing property required by 'force'");
}

// create_vm vmid: standard option pve-vmid (pve_verify_vmid).
#[tokio::test]
async fn create_with_a_short_vmid_is_refused() {
    let r = Api::start()
        .await
        .post("/nodes/pve/qemu", &[("vmid", "99")])
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(
        r.error("vmid")
            .starts_with("invalid format - value does not look like a valid VM ID")
    );
}

// clone_vm format: enum raw, qcow2, vmdk; newid: pve-vmid.
#[tokio::test]
async fn clone_format_and_newid_are_checked() {
    let r = vm()
        .await
        .post(
            "/nodes/pve/qemu/200/clone",
            &[("newid", "201"), ("format", "vhd")],
        )
        .await;
    assert_param(
        &r,
        "format",
        "value 'vhd' does not have a value in the enumeration 'raw, qcow2, vmdk'",
    );
    let r = vm()
        .await
        .post("/nodes/pve/qemu/200/clone", &[("name", "x")])
        .await;
    assert_param(&r, "newid", "property is missing and it is not optional");
}

// cloudinit_generated_config_dump type: enum user, network, meta.
#[tokio::test]
async fn cloudinit_dump_type_is_an_enum() {
    let r = vm()
        .await
        .get_q("/nodes/pve/qemu/200/cloudinit/dump", &[("type", "vendor")])
        .await;
    assert_param(
        &r,
        "type",
        "value 'vendor' does not have a value in the enumeration 'user, network, meta'",
    );
}

// A valid change of every kind checked above still passes: the table refuses only what
// qemu-server refuses.
#[tokio::test]
async fn valid_values_pass_the_schema() {
    let api = vm().await;
    let form = [
        ("onboot", "1"),
        ("cores", "4"),
        ("memory", "4096"),
        (
            "net1",
            "e1000=BC:24:11:00:00:09,bridge=vmbr0,tag=10,trunks=20-30;40",
        ),
        ("ipconfig0", "ip=10.0.0.5/24,gw=10.0.0.1"),
        (
            "sshkeys",
            "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        ),
        ("nameserver", "1.1.1.1 dns.example.com"),
        ("hotplug", "disk,network"),
        ("vga", "std,memory=16"),
        ("machine", "pc-q35-9.2+pve1"),
        ("boot", "order=scsi0;net0"),
        ("tags", "web;prod"),
    ];
    let r = api.put(CONFIG, &form).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}
