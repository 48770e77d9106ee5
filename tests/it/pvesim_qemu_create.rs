//! `POST /nodes/{node}/qemu` as qemu-server's `create_vm` answers it: disks allocated on
//! `images` storages with capacity accounting, EFI/TPM/cloud-init volumes, the schema check,
//! root-only keys, and the `create` lock during `qmcreate`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use reqwest::Method;
use support::Api;

const IMPORTS: &str = "nodes:\n  - name: pve\n    storages:\n      - {id: local, type: dir, content: [iso, import, vztmpl], total: 100G, isos: [debian.iso], imports: [debian-12.qcow2]}\n      - {id: local-lvm, type: lvmthin, content: [images, rootdir], total: 100G}\n";

async fn create(api: &Api, form: &[(&str, &str)]) -> serde_json::Value {
    api.run_ok(Method::POST, "/nodes/pve/qemu", form).await;
    let id = form.iter().find(|(k, _)| *k == "vmid").unwrap().1;
    api.get(&format!("/nodes/pve/qemu/{id}/config"))
        .await
        .ok()
        .data()
        .clone()
}

async fn lvm_used(api: &Api) -> u64 {
    let r = api.get("/nodes/pve/storage").await.ok();
    let s = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["storage"] == "local-lvm")
        .unwrap()
        .clone();
    s["used"].as_u64().unwrap()
}

#[tokio::test]
async fn create_allocates_disks_efi_tpm_and_cloudinit_like_qemu_server() {
    let api = Api::start().await;
    let conf = create(
        &api,
        &[
            ("vmid", "300"),
            ("name", "web"),
            ("scsi0", "local-lvm:32,iothread=1"),
            ("virtio1", "file=local-lvm:8,backup=0"),
            ("efidisk0", "local-lvm:1,efitype=4m,pre-enrolled-keys=1"),
            ("tpmstate0", "local-lvm:1,version=v2.0"),
            ("ide2", "local-lvm:cloudinit"),
            ("net0", "virtio,bridge=vmbr0"),
        ],
    )
    .await;
    // `$foreach_volume_with_alloc` walks the keys sorted: efidisk0 gets disk-0
    // LVM-thin rounds the 528 KiB OVMF vars up to one 4 MiB extent
    assert_eq!(
        conf["efidisk0"],
        "local-lvm:vm-300-disk-0,efitype=4m,ms-cert=2023k,pre-enrolled-keys=1,size=4M"
    );
    assert_eq!(conf["scsi0"], "local-lvm:vm-300-disk-1,iothread=1,size=32G");
    assert_eq!(
        conf["tpmstate0"],
        "local-lvm:vm-300-disk-2,size=4M,version=v2.0"
    );
    assert_eq!(conf["virtio1"], "local-lvm:vm-300-disk-3,backup=0,size=8G");
    assert_eq!(conf["ide2"], "local-lvm:vm-300-cloudinit,media=cdrom");
    assert!(
        conf["net0"]
            .as_str()
            .unwrap()
            .starts_with("virtio=BC:24:11:")
    );
    assert!(conf["smbios1"].as_str().unwrap().starts_with("uuid="));
    assert_eq!(conf["vmgenid"].as_str().unwrap().len(), 36);
    assert_eq!(conf["boot"], "order=scsi0;ide2;net0");
    assert_eq!(lvm_used(&api).await, (40 << 30) + (12 << 20));
}

#[tokio::test]
async fn efidisk_on_a_directory_storage_keeps_the_vars_size() {
    let api = Api::scenario("nodes:\n  - name: pve\n    storages:\n      - {id: tank, type: dir, content: [images], total: 10G}\n").await;
    let conf = create(
        &api,
        &[
            ("vmid", "301"),
            ("efidisk0", "tank:1,efitype=4m"),
            ("sata0", "tank:1"),
        ],
    )
    .await;
    assert_eq!(
        conf["efidisk0"],
        "tank:301/vm-301-disk-0.raw,efitype=4m,size=528K"
    );
    assert_eq!(conf["sata0"], "tank:301/vm-301-disk-1.raw,size=1G");
    let conf = create(&api, &[("vmid", "302"), ("efidisk0", "tank:1")]).await;
    assert_eq!(conf["efidisk0"], "tank:302/vm-302-disk-0.raw,size=128K");
}

#[tokio::test]
async fn cdrom_drives_keep_their_medium_and_isos_need_media_cdrom() {
    let api = Api::scenario(IMPORTS).await;
    let conf = create(
        &api,
        &[
            ("vmid", "303"),
            ("ide2", "file=local:iso/debian.iso,media=cdrom"),
            ("ide0", "none"),
            ("sata1", "cdrom,media=cdrom"),
        ],
    )
    .await;
    assert_eq!(conf["ide2"], "local:iso/debian.iso,media=cdrom,size=120M");
    assert_eq!(conf["ide0"], "none,media=cdrom");
    assert_eq!(conf["sata1"], "cdrom,media=cdrom");
    let r = api
        .post(
            "/nodes/pve/qemu",
            &[("vmid", "304"), ("ide2", "local:iso/debian.iso")],
        )
        .await;
    assert_eq!(
        (r.status, r.error("ide2")),
        (
            400,
            "explicit 'media=cdrom' is required for iso images".to_owned()
        )
    );
}

#[tokio::test]
async fn import_from_copies_the_source_size_and_checks_its_type() {
    let api = Api::scenario(IMPORTS).await;
    let conf = create(
        &api,
        &[
            ("vmid", "305"),
            (
                "scsi0",
                "local-lvm:0,import-from=local:import/debian-12.qcow2",
            ),
        ],
    )
    .await;
    assert_eq!(conf["scsi0"], "local-lvm:vm-305-disk-0,size=2G");
    let r = api
        .post(
            "/nodes/pve/qemu",
            &[
                ("vmid", "306"),
                (
                    "scsi0",
                    "local-lvm:8,import-from=local:import/debian-12.qcow2",
                ),
            ],
        )
        .await;
    assert_eq!(
        r.error("scsi0"),
        "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>"
    );
    let r = api
        .post(
            "/nodes/pve/qemu",
            &[
                ("vmid", "306"),
                ("scsi0", "local-lvm:0,import-from=local:iso/debian.iso"),
            ],
        )
        .await;
    assert_eq!(
        r.error("scsi0"),
        "local:iso/debian.iso has wrong type 'iso' - needs to be 'images' or 'import'"
    );
}

#[tokio::test]
async fn disks_need_a_storage_with_images_content_and_free_space() {
    let api = Api::scenario(IMPORTS).await;
    let r = api
        .post("/nodes/pve/qemu", &[("vmid", "307"), ("scsi0", "local:8")])
        .await;
    assert_eq!(
        (r.status, r.error("storage")),
        (400, "storage 'local' does not support vm images".to_owned())
    );
    let r = api
        .post(
            "/nodes/pve/qemu",
            &[("vmid", "307"), ("scsi0", "local-lvm:500")],
        )
        .await
        .ok();
    let status = api.wait_task(r.data().as_str().unwrap()).await;
    let exit = status["exitstatus"].as_str().unwrap();
    assert!(
        exit.starts_with("unable to create VM 307 - lvcreate 'pve/vm-307-disk-0' error"),
        "{exit}"
    );
    assert_eq!(api.get("/nodes/pve/qemu/307/config").await.status, 500);
}

#[tokio::test]
async fn taken_vmid_unknown_keys_and_bad_values_are_refused() {
    let api = Api::scenario("guests: [{vmid: 100}]").await;
    let r = api.post("/nodes/pve/qemu", &[("vmid", "100")]).await;
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "unable to create VM 100 - CT 100 already exists on node 'pve'".to_owned()
        )
    );
    let r = api
        .post(
            "/nodes/pve/qemu",
            &[
                ("vmid", "308"),
                ("hostname", "x"),
                ("cores", "0"),
                ("cpu", "pentium9"),
                ("scsihw", "nvme"),
                ("serial0", "tty"),
            ],
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.error("hostname"),
        "property is not defined in schema and the schema does not allow additional properties"
    );
    assert_eq!(r.error("cores"), "value must have a minimum value of 1");
    assert!(
        r.error("cpu")
            .contains("Built-in cputype 'pentium9' is not defined")
    );
    assert!(
        r.error("scsihw")
            .starts_with("value 'nvme' does not have a value in the enumeration")
    );
    assert_eq!(r.error("serial0"), "value does not match the regex pattern");
    let r = api
        .post(
            "/nodes/pve/qemu",
            &[("vmid", "308"), ("sshkeys", "ssh-ed25519 AAAA")],
        )
        .await;
    assert!(
        r.error("sshkeys")
            .starts_with("invalid format - invalid urlencoded string")
    );
    let r = api
        .post(
            "/nodes/pve/qemu",
            &[("vmid", "308"), ("ipconfig0", "ip=10.0.0.5,gw=10.0.0.1")],
        )
        .await;
    assert_eq!(r.status, 400, "an address without prefix is not a CIDR");
}

#[tokio::test]
async fn root_only_options_are_refused_for_api_tokens() {
    let api = Api::start().await;
    for (key, value, msg) in [
        ("args", "-no-reboot", "only root can set 'args' config"),
        (
            "hookscript",
            "local:snippets/hook.pl",
            "only root can set 'hookscript' config",
        ),
        ("arch", "x86_64", "only root can set 'arch' config"),
        (
            "hostpci0",
            "host=0000:01:00.0",
            "only root can set 'hostpci0' config for non-mapped devices",
        ),
        (
            "serial0",
            "/dev/ttyS0",
            "only root can set 'serial0' config for real devices",
        ),
    ] {
        let r = api
            .post("/nodes/pve/qemu", &[("vmid", "309"), (key, value)])
            .await;
        assert_eq!((r.status, r.message()), (500, msg.to_owned()), "{key}");
    }
}

#[tokio::test]
async fn create_holds_the_create_lock_until_the_task_ends() {
    let mut opts = support::opts();
    opts.task_duration = std::time::Duration::from_millis(300);
    let api = Api::with(pvesim::Scenario::default(), opts).await;
    let r = api
        .post(
            "/nodes/pve/qemu",
            &[("vmid", "310"), ("scsi0", "local-lvm:4")],
        )
        .await
        .ok();
    let st = api.get("/nodes/pve/qemu/310/status/current").await.ok();
    assert_eq!(st.data()["lock"], "create");
    let status = api.wait_task(r.data().as_str().unwrap()).await;
    assert_eq!(status["type"], "qmcreate");
    let st = api.get("/nodes/pve/qemu/310/status/current").await.ok();
    assert!(st.data().get("lock").is_none());
}

#[tokio::test]
async fn boot_order_must_name_existing_devices() {
    let api = Api::start().await;
    create(&api, &[("vmid", "311"), ("scsi0", "local-lvm:4")]).await;
    let r = api
        .put(
            "/nodes/pve/qemu/311/config",
            &[("boot", "order=scsi0;net0")],
        )
        .await;
    assert_eq!(
        r.message(),
        "invalid bootorder: device 'net0' does not exist'"
    );
    api.put(
        "/nodes/pve/qemu/311/config",
        &[
            ("boot", "order=scsi0;net0"),
            ("net0", "virtio,bridge=vmbr0"),
        ],
    )
    .await
    .ok();
}
