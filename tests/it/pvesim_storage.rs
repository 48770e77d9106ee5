//! Conformance: storages (content, capacity, resize, download-url) and `/interfaces`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use std::time::Duration;

use pvesim::{Scenario, SimOptions};
use reqwest::Method;
use support::{Api, TEMPLATE};

#[tokio::test]
async fn resize_grows_and_refuses_shrinking() {
    let api = Api::start().await;
    api.create_ct(100, &[]).await;
    api.run_ok(
        Method::PUT,
        "/nodes/pve/lxc/100/resize",
        &[("disk", "rootfs"), ("size", "+2G")],
    )
    .await;
    assert_eq!(
        api.config(100, true).await["rootfs"],
        "local-lvm:vm-100-disk-0,size=6G"
    );
    let r = api
        .put(
            "/nodes/pve/lxc/100/resize",
            &[("disk", "rootfs"), ("size", "5G")],
        )
        .await;
    assert_eq!(r.message(), "unable to shrink disk size");
    let r = api
        .put(
            "/nodes/pve/lxc/100/resize",
            &[("disk", "rootfs"), ("size", "6G")],
        )
        .await;
    assert_eq!(r.message(), "disk is already at specified size");
}

#[tokio::test]
async fn storage_reports_capacity_and_content() {
    let api = Api::start().await;
    api.create_ct(100, &[("rootfs", "local-lvm:8")]).await;
    let r = api
        .get_q("/nodes/pve/storage", &[("content", "rootdir")])
        .await
        .ok();
    let list = r.data().as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(
        (list[0]["storage"].as_str(), list[0]["used"].as_u64()),
        (Some("local-lvm"), Some(8 << 30))
    );
    let r = api
        .get_q("/nodes/pve/storage/local/content", &[("content", "vztmpl")])
        .await
        .ok();
    assert_eq!(r.data()[0]["volid"], TEMPLATE);
    assert_eq!(r.data()[0]["format"], "tzst");
}

#[tokio::test]
async fn create_fails_when_the_storage_is_full() {
    let api = Api::scenario("nodes: [{name: pve, storages: [{id: local, type: dir, content: [vztmpl], templates: [t.tar.zst]}, {id: small, type: lvmthin, content: [rootdir], total: 2G}]}]\n").await;
    let r = api
        .post(
            "/nodes/pve/lxc",
            &[
                ("vmid", "100"),
                ("ostemplate", "local:vztmpl/t.tar.zst"),
                ("storage", "small"),
            ],
        )
        .await
        .ok();
    let st = api.wait_task(r.data().as_str().unwrap()).await;
    assert!(
        st["exitstatus"]
            .as_str()
            .unwrap()
            .starts_with("unable to create CT 100 - lvcreate 'pve/vm-100-disk-0' error:"),
        "{st}"
    );
}

#[tokio::test]
async fn download_url_adds_a_template_and_refuses_to_overwrite() {
    let api = Api::start().await;
    let form = [
        ("url", "https://example.com/alpine-3.20.tar.xz"),
        ("content", "vztmpl"),
        ("filename", "alpine-3.20.tar.xz"),
    ];
    api.run_ok(Method::POST, "/nodes/pve/storage/local/download-url", &form)
        .await;
    let r = api
        .get_q("/nodes/pve/storage/local/content", &[("content", "vztmpl")])
        .await
        .ok();
    assert!(
        r.data()
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["volid"] == "local:vztmpl/alpine-3.20.tar.xz")
    );
    let r = api
        .post("/nodes/pve/storage/local/download-url", &form)
        .await
        .ok();
    let st = api.wait_task(r.data().as_str().unwrap()).await;
    assert_eq!(
        st["exitstatus"],
        "refusing to override existing file '/var/lib/vz/template/cache/alpine-3.20.tar.xz'"
    );
}

#[tokio::test]
async fn download_url_checks_extension_storage_type_and_checksum() {
    let api = Api::start().await;
    let r = api
        .post(
            "/nodes/pve/storage/local/download-url",
            &[
                ("url", "https://x/a.iso"),
                ("content", "vztmpl"),
                ("filename", "a.iso"),
            ],
        )
        .await;
    assert_eq!(r.error("filename"), "wrong file extension");
    let r = api
        .post(
            "/nodes/pve/storage/local-lvm/download-url",
            &[
                ("url", "https://x/a.tar.gz"),
                ("content", "vztmpl"),
                ("filename", "a.tar.gz"),
            ],
        )
        .await;
    assert_eq!(
        r.message(),
        "can't upload to storage type 'lvmthin', not a file based storage!"
    );
    let form = [
        ("url", "https://x/b.tar.gz"),
        ("content", "vztmpl"),
        ("filename", "b.tar.gz"),
        ("checksum", "abc"),
        ("checksum-algorithm", "sha256"),
    ];
    let r = api
        .post("/nodes/pve/storage/local/download-url", &form)
        .await
        .ok();
    let st = api.wait_task(r.data().as_str().unwrap()).await;
    assert!(
        st["exitstatus"]
            .as_str()
            .unwrap()
            .starts_with("checksum mismatch"),
        "{st}"
    );
}

#[tokio::test]
async fn interfaces_are_null_when_stopped_and_list_lowercase_macs_when_running() {
    let api = Api::start().await;
    api.create_ct(100, &[("net0", "name=eth0,bridge=vmbr0,ip=10.1.2.3/24")])
        .await;
    assert!(
        api.get("/nodes/pve/lxc/100/interfaces")
            .await
            .ok()
            .data()
            .is_null()
    );
    api.run_ok(Method::POST, "/nodes/pve/lxc/100/status/start", &[])
        .await;
    let mac = api.config(100, true).await["net0"]
        .as_str()
        .unwrap()
        .split("hwaddr=")
        .nth(1)
        .unwrap()[..17]
        .to_lowercase();
    let r = api.get("/nodes/pve/lxc/100/interfaces").await.ok();
    let eth0 = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "eth0")
        .cloned()
        .unwrap();
    assert_eq!(
        (eth0["hwaddr"].as_str(), eth0["inet"].as_str()),
        (Some(mac.as_str()), Some("10.1.2.3/24"))
    );
}

#[tokio::test]
async fn dhcp_address_appears_only_after_the_dhcp_delay() {
    let opts = SimOptions {
        dhcp_delay: Duration::from_millis(300),
        ..support::opts()
    };
    let api = Api::with(Scenario::default(), opts).await;
    api.create_ct(
        100,
        &[("net0", "name=eth0,bridge=vmbr0,ip=dhcp"), ("start", "1")],
    )
    .await;
    let eth0 = |r: &support::Resp| {
        r.data()
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == "eth0")
            .cloned()
            .unwrap()
    };
    let early = eth0(&api.get("/nodes/pve/lxc/100/interfaces").await.ok());
    assert!(early.get("inet").is_none() && early["inet6"].as_str().unwrap().starts_with("fe80::"));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let now = eth0(&api.get("/nodes/pve/lxc/100/interfaces").await.ok());
        if now.get("inet").is_some() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no DHCP address");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn unused_volume_delete_is_live_and_frees_the_volume() {
    let api = Api::start().await;
    api.create_ct(
        100,
        &[
            ("rootfs", "local-lvm:4"),
            ("mp0", "local-lvm:2,mp=/mnt/data"),
        ],
    )
    .await;
    api.set(100, &[("delete", "mp0")]).await.ok();
    let conf = api.config(100, true).await;
    assert_eq!(
        conf["unused0"], "local-lvm:vm-100-disk-1",
        "a stopped CT's removed mount point becomes unused"
    );
    api.run_ok(
        reqwest::Method::POST,
        "/nodes/pve/lxc/100/status/start",
        &[],
    )
    .await;
    api.set(100, &[("delete", "unused0")]).await.ok();
    assert!(api.config(100, true).await.get("unused0").is_none());
    let content = api
        .get_q("/nodes/pve/storage/local-lvm/content", &[("vmid", "100")])
        .await
        .ok();
    assert_eq!(
        content.data().as_array().map(Vec::len),
        Some(1),
        "only the rootfs is left"
    );
}
