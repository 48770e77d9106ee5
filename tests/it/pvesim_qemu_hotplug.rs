//! One test per `vmconfig_hotplug_pending` rule for a running VM: what applies live and what
//! waits for a full stop+start.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use support::Api;

async fn running(hotplug: Option<&str>) -> Api {
    let hp = hotplug
        .map(|h| format!(", hotplug: '{h}'"))
        .unwrap_or_default();
    let yaml = format!(
        "guests:\n  - vmid: 200\n    type: qemu\n    status: running\n    config: {{cores: 2, memory: 2048, balloon: 1024, ostype: l26, agent: '1', net0: 'virtio=BC:24:11:00:00:C8,bridge=vmbr0', ide0: 'none,media=cdrom'{hp}}}\n"
    );
    Api::scenario(&yaml).await
}

async fn pending_after(api: &Api, form: &[(&str, &str)]) -> Vec<String> {
    api.put("/nodes/pve/qemu/200/config", form).await.ok();
    let r = api.get("/nodes/pve/qemu/200/pending").await.ok();
    let mut keys: Vec<String> = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.get("pending").is_some() || e.get("delete").is_some())
        .map(|e| e["key"].as_str().unwrap().to_owned())
        .collect();
    keys.sort();
    keys
}

#[tokio::test]
async fn cpuunits_cpulimit_and_balloon_target_are_hot() {
    let api = running(None).await;
    assert!(
        pending_after(
            &api,
            &[
                ("cpuunits", "300"),
                ("cpulimit", "1.5"),
                ("balloon", "1536")
            ]
        )
        .await
        .is_empty()
    );
}

#[tokio::test]
async fn disabling_the_balloon_device_is_pending() {
    let api = running(None).await;
    assert_eq!(pending_after(&api, &[("balloon", "0")]).await, ["balloon"]);
}

#[tokio::test]
async fn memory_is_hot_only_with_memory_hotplug() {
    assert_eq!(
        pending_after(&running(None).await, &[("memory", "4096")]).await,
        ["memory"]
    );
    assert!(
        pending_after(
            &running(Some("network,disk,memory")).await,
            &[("memory", "4096")]
        )
        .await
        .is_empty()
    );
}

#[tokio::test]
async fn vcpus_is_hot_only_with_cpu_hotplug() {
    assert_eq!(
        pending_after(&running(None).await, &[("vcpus", "1")]).await,
        ["vcpus"]
    );
    assert!(
        pending_after(&running(Some("cpu,network")).await, &[("vcpus", "1")])
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn hardware_keys_stay_pending_until_a_restart() {
    let api = running(None).await;
    let form = [
        ("serial0", "socket"),
        ("cores", "4"),
        ("sockets", "2"),
        ("cpu", "host"),
        ("numa", "1"),
        ("vga", "qxl"),
        ("machine", "q35"),
        ("bios", "ovmf"),
        ("scsihw", "virtio-scsi-single"),
        ("ostype", "win11"),
        ("watchdog", "model=i6300esb"),
        ("audio0", "device=ich9-intel-hda"),
        ("rng0", "source=/dev/urandom"),
        ("smbios1", "uuid=5b0e9a2e-0000-4000-8000-000000000001"),
        ("keyboard", "de"),
        ("boot", "order=net0"),
    ];
    let keys = pending_after(&api, &form).await;
    let mut expected: Vec<String> = form.iter().map(|(k, _)| (*k).to_owned()).collect();
    expected.sort();
    assert_eq!(keys, expected);
}

#[tokio::test]
async fn efidisk_and_tpmstate_are_pending() {
    let api = running(None).await;
    assert_eq!(
        pending_after(
            &api,
            &[
                ("efidisk0", "local-lvm:1,efitype=4m"),
                ("tpmstate0", "local-lvm:1,version=v2.0")
            ]
        )
        .await,
        ["efidisk0", "tpmstate0"]
    );
}

#[tokio::test]
async fn tablet_is_hot_only_with_usb_hotplug() {
    assert!(
        pending_after(&running(None).await, &[("tablet", "0")])
            .await
            .is_empty()
    );
    assert_eq!(
        pending_after(&running(Some("network,disk")).await, &[("tablet", "0")]).await,
        ["tablet"]
    );
}

#[tokio::test]
async fn new_scsi_and_virtio_disks_are_hot_with_disk_hotplug_but_sata_and_ide_are_not() {
    let api = running(None).await;
    assert!(
        pending_after(
            &api,
            &[("scsi1", "local-lvm:2"), ("virtio2", "local-lvm:2")]
        )
        .await
        .is_empty()
    );
    let conf = api.get("/nodes/pve/qemu/200/config").await.ok();
    assert_eq!(conf.data()["scsi1"], "local-lvm:vm-200-disk-0,size=2G");
    assert_eq!(
        pending_after(&api, &[("sata1", "local-lvm:2"), ("ide1", "local-lvm:2")]).await,
        ["ide1", "sata1"]
    );
    assert_eq!(
        pending_after(&running(Some("network")).await, &[("scsi1", "local-lvm:2")]).await,
        ["scsi1"]
    );
}

#[tokio::test]
async fn cdrom_medium_change_is_hot_even_on_ide() {
    let api = running(Some("network")).await;
    assert!(
        pending_after(&api, &[("ide0", "cdrom,media=cdrom")])
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn disk_cache_change_is_pending_but_throttle_is_hot() {
    let api = running(None).await;
    api.put("/nodes/pve/qemu/200/config", &[("scsi1", "local-lvm:2")])
        .await
        .ok();
    assert!(
        pending_after(
            &api,
            &[("scsi1", "local-lvm:vm-200-disk-0,mbps_rd=100,size=2G")]
        )
        .await
        .is_empty()
    );
    assert_eq!(
        pending_after(
            &api,
            &[(
                "scsi1",
                "local-lvm:vm-200-disk-0,cache=writeback,mbps_rd=100,size=2G"
            )]
        )
        .await,
        ["scsi1"]
    );
}

#[tokio::test]
async fn nic_bridge_and_rate_are_hot_but_model_change_needs_network_hotplug() {
    let api = running(Some("disk")).await;
    assert!(
        pending_after(
            &api,
            &[("net0", "virtio=BC:24:11:00:00:C8,bridge=vmbr1,rate=10")]
        )
        .await
        .is_empty()
    );
    assert_eq!(
        pending_after(
            &api,
            &[("net0", "e1000=BC:24:11:00:00:C8,bridge=vmbr1,rate=10")]
        )
        .await,
        ["net0"]
    );
    assert_eq!(
        pending_after(&api, &[("net1", "virtio,bridge=vmbr0")]).await,
        ["net0", "net1"]
    );
}

#[tokio::test]
async fn agent_fstrim_is_hot_but_agent_type_is_pending() {
    let api = running(None).await;
    assert!(
        pending_after(&api, &[("agent", "1,fstrim_cloned_disks=1")])
            .await
            .is_empty()
    );
    assert_eq!(
        pending_after(&api, &[("agent", "1,fstrim_cloned_disks=1,type=isa")]).await,
        ["agent"]
    );
}

#[tokio::test]
async fn turning_on_cpu_hotplug_is_pending() {
    let api = running(None).await;
    assert_eq!(
        pending_after(&api, &[("hotplug", "network,disk,cpu")]).await,
        ["hotplug"]
    );
}

#[tokio::test]
async fn qemu_digest_mismatch_uses_qemu_servers_message() {
    let api = running(None).await;
    let r = api
        .put(
            "/nodes/pve/qemu/200/config",
            &[("cores", "3"), ("digest", "0000")],
        )
        .await;
    assert_eq!(
        r.message(),
        "checksum mismatch (file change by other user?)"
    );
}
