//! QEMU templates, clones, resizes and destruction as qemu-server's `template`, `clone_vm`,
//! `resize_vm` and `destroy_vm` do them, and how `cluster/resources` lists VMs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use reqwest::Method;
use support::Api;

const VM: &str = "guests:\n  - vmid: 200\n    type: qemu\n    config: {name: base, scsi0: 'local-lvm:vm-200-disk-0,size=4G', net0: 'virtio=BC:24:11:00:00:C8,bridge=vmbr0', smbios1: 'uuid=5b0e9a2e-0000-4000-8000-000000000001', vmgenid: '5b0e9a2e-0000-4000-8000-000000000002'}\n";

async fn api_with_vm() -> Api {
    let api = Api::scenario(VM).await;
    // the scenario's volume does not exist yet: create the VM's disk through the API instead
    api.run_ok(
        Method::POST,
        "/nodes/pve/qemu",
        &[
            ("vmid", "201"),
            ("name", "tmpl"),
            ("scsi0", "local-lvm:4"),
            ("ide2", "local-lvm:cloudinit"),
            ("net0", "virtio,bridge=vmbr0"),
        ],
    )
    .await;
    api
}

async fn config(api: &Api, vmid: u32) -> serde_json::Value {
    api.get(&format!("/nodes/pve/qemu/{vmid}/config"))
        .await
        .ok()
        .data()
        .clone()
}

async fn task_error(api: &Api, r: support::Resp) -> String {
    let status = api.wait_task(r.ok().data().as_str().unwrap()).await;
    status["exitstatus"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn template_renames_disks_to_base_volumes_and_cannot_start() {
    let api = api_with_vm().await;
    api.run_ok(Method::POST, "/nodes/pve/qemu/201/template", &[])
        .await;
    let conf = config(&api, 201).await;
    assert_eq!(conf["template"], 1);
    assert_eq!(conf["scsi0"], "local-lvm:base-201-disk-0,size=4G");
    assert_eq!(conf["ide2"], "local-lvm:vm-201-cloudinit,media=cdrom");
    let r = api.post("/nodes/pve/qemu/201/template", &[]).await;
    assert_eq!(r.message(), "you can't convert a template to a template");
    let r = api.post("/nodes/pve/qemu/201/status/start", &[]).await;
    assert_eq!(
        task_error(&api, r).await,
        "you can't start a vm if it's a template"
    );
    let res = api
        .get_q("/cluster/resources", &[("type", "vm")])
        .await
        .ok();
    let entry = res
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["vmid"] == 201)
        .unwrap()
        .clone();
    assert_eq!(
        (
            entry["type"].as_str(),
            entry["template"].as_u64(),
            entry["id"].as_str()
        ),
        (Some("qemu"), Some(1), Some("qemu/201"))
    );
}

#[tokio::test]
async fn running_vm_cannot_become_a_template() {
    let api = api_with_vm().await;
    api.run_ok(Method::POST, "/nodes/pve/qemu/201/status/start", &[])
        .await;
    let r = api.post("/nodes/pve/qemu/201/template", &[]).await;
    assert_eq!(
        r.message(),
        "you can't convert a VM to template if VM is running"
    );
}

#[tokio::test]
async fn linked_clone_of_a_template_and_full_clone_get_new_identity() {
    let api = api_with_vm().await;
    api.run_ok(Method::POST, "/nodes/pve/qemu/201/template", &[])
        .await;
    let src = config(&api, 201).await;
    let status = api
        .run_ok(
            Method::POST,
            "/nodes/pve/qemu/201/clone",
            &[("newid", "210"), ("full", "0"), ("name", "web1")],
        )
        .await;
    assert_eq!(status["type"], "qmclone");
    let linked = config(&api, 210).await;
    assert_eq!(
        linked["scsi0"], "local-lvm:vm-210-disk-0,size=4G",
        "LVM-thin names a linked clone vm-<newid>-disk-<k>"
    );
    assert_eq!(linked["ide2"], "local-lvm:vm-210-cloudinit,media=cdrom");
    assert_eq!(linked["name"], "web1");
    assert!(linked.get("template").is_none());
    assert_ne!(linked["net0"], src["net0"]);
    assert_ne!(linked["smbios1"], src["smbios1"]);
    assert_ne!(linked["vmgenid"], src["vmgenid"]);
    api.run_ok(
        Method::POST,
        "/nodes/pve/qemu/201/clone",
        &[("newid", "211"), ("full", "1"), ("storage", "local-lvm")],
    )
    .await;
    let full = config(&api, 211).await;
    assert_eq!(full["scsi0"], "local-lvm:vm-211-disk-0,size=4G");
    assert_eq!(full["name"], "Copy-of-VM-tmpl");
    let r = api.delete("/nodes/pve/qemu/201", &[]).await;
    assert_eq!(
        task_error(&api, r).await,
        "base volume 'local-lvm:base-201-disk-0' is still in use by linked cloned"
    );
}

#[tokio::test]
async fn linked_clone_needs_a_template_and_newid_must_be_free() {
    let api = api_with_vm().await;
    let r = api
        .post(
            "/nodes/pve/qemu/201/clone",
            &[("newid", "212"), ("full", "0")],
        )
        .await;
    assert_eq!(
        r.message(),
        "Linked clone feature is not supported for 'local-lvm:vm-201-disk-0' (scsi0)"
    );
    let r = api
        .post("/nodes/pve/qemu/201/clone", &[("newid", "200")])
        .await;
    assert_eq!(
        r.message(),
        "unable to create VM 200: config file already exists"
    );
    let r = api
        .post("/nodes/pve/qemu/999/clone", &[("newid", "213")])
        .await;
    assert_eq!(
        r.message(),
        "Configuration file 'nodes/pve/qemu-server/999.conf' does not exist"
    );
}

#[tokio::test]
async fn full_clone_locks_the_new_vm_while_it_copies() {
    let mut opts = support::opts();
    opts.task_duration = std::time::Duration::from_millis(300);
    let api = Api::with(serde_yaml_ng::from_str(VM).unwrap(), opts).await;
    api.run_ok(
        Method::POST,
        "/nodes/pve/qemu",
        &[("vmid", "201"), ("scsi0", "local-lvm:4")],
    )
    .await;
    let r = api
        .post("/nodes/pve/qemu/201/clone", &[("newid", "214")])
        .await
        .ok();
    let st = api.get("/nodes/pve/qemu/214/status/current").await.ok();
    assert_eq!(st.data()["lock"], "clone");
    api.wait_task(r.data().as_str().unwrap()).await;
    let st = api.get("/nodes/pve/qemu/214/status/current").await.ok();
    assert!(st.data().get("lock").is_none());
}

#[tokio::test]
async fn resize_grows_refuses_shrinking_and_accounts_capacity() {
    let api = api_with_vm().await;
    api.run_ok(
        Method::PUT,
        "/nodes/pve/qemu/201/resize",
        &[("disk", "scsi0"), ("size", "+2G")],
    )
    .await;
    assert_eq!(
        config(&api, 201).await["scsi0"],
        "local-lvm:vm-201-disk-0,size=6G"
    );
    api.run_ok(
        Method::PUT,
        "/nodes/pve/qemu/201/resize",
        &[("disk", "scsi0"), ("size", "20G")],
    )
    .await;
    assert_eq!(
        config(&api, 201).await["scsi0"],
        "local-lvm:vm-201-disk-0,size=20G"
    );
    let r = api
        .put(
            "/nodes/pve/qemu/201/resize",
            &[("disk", "scsi0"), ("size", "10G")],
        )
        .await;
    assert_eq!(
        task_error(&api, r).await,
        "shrinking disks is not supported"
    );
    let r = api
        .put(
            "/nodes/pve/qemu/201/resize",
            &[("disk", "ide2"), ("size", "+1G")],
        )
        .await;
    assert_eq!(task_error(&api, r).await, "you can't resize a cdrom");
    let r = api
        .put(
            "/nodes/pve/qemu/201/resize",
            &[("disk", "scsi0"), ("size", "+5000G")],
        )
        .await;
    assert!(
        task_error(&api, r)
            .await
            .starts_with("not enough free space")
    );
}

#[tokio::test]
async fn destroy_refuses_running_and_protected_vms_and_frees_volumes() {
    let api = api_with_vm().await;
    api.put("/nodes/pve/qemu/201/config", &[("protection", "1")])
        .await
        .ok();
    let r = api.delete("/nodes/pve/qemu/201", &[]).await;
    assert_eq!(r.message(), "can't remove VM 201 - protection mode enabled");
    api.put("/nodes/pve/qemu/201/config", &[("delete", "protection")])
        .await
        .ok();
    api.run_ok(Method::POST, "/nodes/pve/qemu/201/status/start", &[])
        .await;
    let r = api.delete("/nodes/pve/qemu/201", &[]).await;
    assert_eq!(r.message(), "VM 201 is running - destroy failed");
    api.run_ok(Method::POST, "/nodes/pve/qemu/201/status/stop", &[])
        .await;
    let status = api
        .run_ok(
            Method::DELETE,
            "/nodes/pve/qemu/201",
            &[("purge", "1"), ("destroy-unreferenced-disks", "1")],
        )
        .await;
    assert_eq!(status["type"], "qmdestroy");
    let content = api.get("/nodes/pve/storage/local-lvm/content").await.ok();
    assert!(
        content
            .data()
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["vmid"] != 201)
    );
}

#[tokio::test]
async fn cloudinit_regeneration_clears_its_pending_view() {
    let api = api_with_vm().await;
    api.put("/nodes/pve/qemu/201/cloudinit", &[]).await.ok();
    api.put(
        "/nodes/pve/qemu/201/config",
        &[
            ("ipconfig0", "ip=10.0.0.9/24,gw=10.0.0.1"),
            ("ciuser", "ops"),
        ],
    )
    .await
    .ok();
    let r = api.get("/nodes/pve/qemu/201/cloudinit").await.ok();
    let item = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "ipconfig0")
        .unwrap()
        .clone();
    assert_eq!(item["pending"], "ip=10.0.0.9/24,gw=10.0.0.1");
    let r = api.put("/nodes/pve/qemu/201/cloudinit", &[]).await.ok();
    assert!(r.data().is_null());
    let r = api.get("/nodes/pve/qemu/201/cloudinit").await.ok();
    assert!(
        r.data()
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e.get("pending").is_none())
    );
    let dump = api
        .get_q("/nodes/pve/qemu/201/cloudinit/dump", &[("type", "user")])
        .await
        .ok();
    assert!(dump.data().as_str().unwrap().contains("user: ops"));
}
