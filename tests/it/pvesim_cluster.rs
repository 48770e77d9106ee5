//! Conformance of the simulated cluster configuration API: datacenter options (`delete`, the
//! grouped keys read back as objects), `/etc/hosts` written whole against its digest, HA
//! resources for guests that exist, rules over managed resources, groups refused as PVE 9
//! refuses them once migrated, replication jobs only for replicatable volumes, and metric
//! servers with their plugin's options only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use support::{Api, Resp};

const SCENARIO: &str = r#"
nodes:
  - name: pve
    storages:
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
      - {id: tank, type: zfspool, content: [rootdir, images], total: 4T}
  - name: pve2
    storages:
      - {id: tank, type: zfspool, content: [rootdir, images], total: 4T}
guests:
  - {vmid: 100, type: lxc, node: pve, status: running, config: {hostname: db, rootfs: 'tank:8'}}
  - {vmid: 101, type: lxc, node: pve, status: stopped, config: {hostname: web, rootfs: 'local-lvm:8'}}
"#;

fn died(r: &Resp, msg: &str) {
    assert_eq!(
        (r.status, r.message()),
        (500, msg.to_owned()),
        "{:?}",
        r.body
    );
}

#[tokio::test]
async fn datacenter_options_are_set_read_back_as_objects_and_deleted() {
    let api = Api::scenario(SCENARIO).await;
    api.put(
        "/cluster/options",
        &[
            ("keyboard", "de"),
            ("migration", "type=secure,network=10.0.0.0/8"),
        ],
    )
    .await
    .ok();
    let dc = api.get("/cluster/options").await.ok();
    assert_eq!(dc.data()["migration"]["type"], "secure");
    api.put("/cluster/options", &[("delete", "keyboard")])
        .await
        .ok();
    assert!(
        api.get("/cluster/options")
            .await
            .data()
            .get("keyboard")
            .is_none()
    );
    let bad = api
        .put("/cluster/options", &[("migration", "type=fast")])
        .await;
    assert_eq!(bad.status, 400, "{:?}", bad.body);
    assert!(
        bad.error("migration").contains("enumeration"),
        "{:?}",
        bad.body
    );
}

#[tokio::test]
async fn hosts_are_written_whole_and_a_stale_digest_is_refused() {
    let api = Api::scenario(SCENARIO).await;
    let before = api.get("/nodes/pve/hosts").await.ok();
    let digest = before.data()["digest"].as_str().unwrap().to_owned();
    api.post(
        "/nodes/pve/hosts",
        &[("data", "127.0.0.1 localhost\n"), ("digest", &digest)],
    )
    .await
    .ok();
    assert_eq!(
        api.get("/nodes/pve/hosts").await.data()["data"],
        "127.0.0.1 localhost\n"
    );
    died(
        &api.post("/nodes/pve/hosts", &[("data", "x"), ("digest", &digest)])
            .await,
        "detected modified configuration - file changed by other user? Try again.",
    );
}

#[tokio::test]
async fn ha_resources_need_their_guest_and_their_state_starts_and_stops_it() {
    let api = Api::scenario(SCENARIO).await;
    died(
        &api.post("/cluster/ha/resources", &[("sid", "vm:999")])
            .await,
        "resource 'vm:999' does not exist in cluster",
    );
    died(
        &api.post("/cluster/ha/resources", &[("sid", "vm:100")])
            .await,
        "resource 'vm:100' - guest with ID 100 is not a VM",
    );
    died(
        &api.post(
            "/cluster/ha/resources",
            &[("sid", "ct:100"), ("group", "g")],
        )
        .await,
        "invalid parameter 'group': ha groups have been migrated to rules",
    );
    api.post(
        "/cluster/ha/resources",
        &[("sid", "ct:101"), ("state", "started")],
    )
    .await
    .ok();
    let status = api.get("/nodes/pve/lxc/101/status/current").await.ok();
    assert_eq!(status.data()["status"], "running");
    died(
        &api.post("/cluster/ha/resources", &[("sid", "ct:101")])
            .await,
        "create resource failed: resource ID 'ct:101' already defined",
    );
    api.put("/cluster/ha/resources/ct:101", &[("state", "stopped")])
        .await
        .ok();
    let status = api.get("/nodes/pve/lxc/101/status/current").await.ok();
    assert_eq!(status.data()["status"], "stopped");
    api.delete("/cluster/ha/resources/ct:101", &[]).await.ok();
    died(
        &api.delete("/cluster/ha/resources/ct:101", &[]).await,
        "cannot delete service 'ct:101', not HA managed!",
    );
}

#[tokio::test]
async fn rules_take_managed_resources_and_groups_are_migrated() {
    let api = Api::scenario(SCENARIO).await;
    died(
        &api.post("/cluster/ha/groups", &[("group", "g"), ("nodes", "pve")])
            .await,
        "cannot create group: ha groups have been migrated to rules",
    );
    let rule = [
        ("rule", "keep"),
        ("type", "node-affinity"),
        ("resources", "ct:100"),
        ("nodes", "pve:2,pve2"),
    ];
    died(
        &api.post("/cluster/ha/rules", &rule).await,
        "create ha rule failed: cannot use unmanaged resource(s) ct:100.",
    );
    api.post("/cluster/ha/resources", &[("sid", "ct:100")])
        .await
        .ok();
    api.post("/cluster/ha/rules", &rule).await.ok();
    let read = api.get("/cluster/ha/rules/keep").await.ok();
    assert_eq!(read.data()["nodes"], "pve2,pve:2");
    assert_eq!(read.data()["strict"], 0);
    let apart = [
        ("rule", "apart"),
        ("type", "resource-affinity"),
        ("resources", "ct:100"),
        ("nodes", "pve"),
        ("affinity", "negative"),
    ];
    assert_eq!(api.post("/cluster/ha/rules", &apart).await.status, 400);
    // a resource deleted with purge leaves the rules; one left empty goes
    api.delete("/cluster/ha/resources/ct:100", &[]).await.ok();
    let rules = api.get("/cluster/ha/rules").await.ok();
    assert_eq!(rules.data().as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn replication_needs_a_zfs_volume_and_another_node() {
    let api = Api::scenario(SCENARIO).await;
    let job = |id: &'static str, target: &'static str| {
        [("id", id), ("target", target), ("type", "local")]
    };
    died(
        &api.post("/cluster/replication", &job("100-0", "pve")).await,
        "Source and target must not be identical",
    );
    died(
        &api.post("/cluster/replication", &job("102-0", "pve2"))
            .await,
        "Guest '102' does not exist.",
    );
    let lvm = api
        .post("/cluster/replication", &job("101-0", "pve2"))
        .await;
    assert!(
        lvm.message()
            .starts_with("missing replicate feature on volume 'local-lvm:"),
        "{:?}",
        lvm.body
    );
    api.post("/cluster/replication", &job("100-0", "pve2"))
        .await
        .ok();
    let read = api.get("/cluster/replication/100-0").await.ok();
    assert_eq!(read.data()["guest"], 100);
    assert_eq!(read.data()["source"], "pve");
    died(
        &api.post("/cluster/replication", &job("100-0", "pve2"))
            .await,
        "replication job '100-0' already exists",
    );
    api.delete("/cluster/replication/100-0", &[]).await.ok();
}

#[tokio::test]
async fn metric_servers_take_their_plugins_options_only_and_hide_the_token() {
    let api = Api::scenario(SCENARIO).await;
    died(
        &api.post(
            "/cluster/metrics/server/graphite",
            &[
                ("type", "graphite"),
                ("server", "192.0.2.1"),
                ("bucket", "x"),
            ],
        )
        .await,
        "unexpected property 'bucket'",
    );
    let influx = [
        ("type", "influxdb"),
        ("server", "192.0.2.1"),
        ("port", "8086"),
        ("token", "secret"),
    ];
    api.post("/cluster/metrics/server/influx", &influx)
        .await
        .ok();
    let read = api.get("/cluster/metrics/server/influx").await.ok();
    assert!(read.data().get("token").is_none(), "{:?}", read.body);
    died(
        &api.post("/cluster/metrics/server/influx", &influx).await,
        "Metric server 'influx' already exists",
    );
    died(
        &api.get("/cluster/metrics/server/nope").await,
        "status server entry 'nope' does not exist",
    );
    let otel = [
        ("type", "opentelemetry"),
        ("server", "192.0.2.2"),
        ("otel-timeout", "11"),
    ];
    assert_eq!(
        api.post("/cluster/metrics/server/otel", &otel).await.status,
        400
    );
}
