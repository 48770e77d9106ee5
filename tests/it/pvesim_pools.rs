//! Conformance of the simulated pools API (`PVE::API2::Pool`): create, list, read with members,
//! update members and comment, delete only when empty; guests created with `pool=`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use serde_json::Value;
use support::{Api, Resp};

fn died(r: &Resp, msg: &str) {
    assert_eq!(
        (r.status, r.message()),
        (500, msg.to_owned()),
        "{:?}",
        r.body
    );
}

fn member_ids(pool: &Value) -> Vec<String> {
    pool["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn pools_are_created_listed_and_commented() {
    let api = Api::start().await;
    api.post("/pools", &[("poolid", "prod"), ("comment", "production")])
        .await
        .ok();
    api.post("/pools", &[("poolid", "prod/web")]).await.ok();
    let list = api.get("/pools").await.ok();
    assert_eq!(list.data()[0]["poolid"], "prod");
    assert_eq!(list.data()[0]["comment"], "production");
    assert_eq!(list.data()[1]["poolid"], "prod/web");
    api.put("/pools/prod", &[("comment", "live")]).await.ok();
    let one = api.get("/pools/prod").await.ok();
    assert_eq!(one.data()["comment"], "live");
    assert_eq!(one.data()["members"], serde_json::json!([]));
}

#[tokio::test]
async fn pool_creation_refusals_use_pve_words() {
    let api = Api::start().await;
    api.post("/pools", &[("poolid", "prod")]).await.ok();
    died(
        &api.post("/pools", &[("poolid", "prod")]).await,
        "create pool failed: pool 'prod' already exists",
    );
    died(
        &api.post("/pools", &[("poolid", "dev/web")]).await,
        "create pool failed: parent 'dev' of pool 'dev/web' does not exist",
    );
    died(
        &api.post("/pools", &[("poolid", "1st")]).await,
        "create pool failed: pool name must start with a letter",
    );
    let r = api.post("/pools", &[("poolid", "bad name")]).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.error("poolid"),
        "invalid format - pool name 'bad name' contains invalid characters"
    );
    let r = api.post("/pools", &[]).await;
    assert_eq!(
        r.error("poolid"),
        "property is missing and it is not optional"
    );
    died(&api.get("/pools/nope").await, "pool 'nope' does not exist");
}

#[tokio::test]
async fn members_are_added_moved_and_removed_as_pve_allows() {
    let api = Api::scenario(
        "guests: [{vmid: 100}, {vmid: 101, type: qemu}]\npools: [{poolid: a}, {poolid: b}]",
    )
    .await;
    api.put("/pools/a", &[("vms", "100,101"), ("storage", "local")])
        .await
        .ok();
    let a = api.get("/pools/a").await.ok();
    assert_eq!(
        member_ids(a.data()),
        ["lxc/100", "qemu/101", "storage/pve/local"]
    );
    let only_qemu = api
        .get_q("/pools", &[("poolid", "a"), ("type", "qemu")])
        .await
        .ok();
    assert_eq!(member_ids(&only_qemu.data()[0]), ["qemu/101"]);
    died(
        &api.put("/pools/a", &[("vms", "100")]).await,
        "update pools failed: VM 100 is already a pool member",
    );
    died(
        &api.put("/pools/b", &[("vms", "100")]).await,
        "update pools failed: VM 100 belongs already to pool 'a' and 'allow-move' is not set",
    );
    api.put(
        "/pools",
        &[("poolid", "b"), ("vms", "100"), ("allow-move", "1")],
    )
    .await
    .ok();
    assert_eq!(
        member_ids(api.get("/pools/a").await.ok().data()),
        ["qemu/101", "storage/pve/local"]
    );
    died(
        &api.put("/pools/b", &[("vms", "101"), ("delete", "1")])
            .await,
        "update pools failed: VM 101 is not a pool member",
    );
    let res = api
        .get_q("/cluster/resources", &[("type", "vm")])
        .await
        .ok();
    let ct = res
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["vmid"] == 100)
        .cloned();
    assert_eq!(ct.unwrap()["pool"], "b", "cluster/resources names the pool");
}

#[tokio::test]
async fn only_an_empty_pool_is_deleted() {
    let api = Api::scenario(
        "guests: [{vmid: 100}]\npools: [{poolid: a, vms: [100]}, {poolid: b, storage: [local]}, {poolid: c}, {poolid: c/d}, {poolid: gone, vms: [555]}]",
    )
    .await;
    died(
        &api.delete("/pools/a", &[]).await,
        "delete pool failed: pool 'a' is not empty (contains VM 100)",
    );
    died(
        &api.delete("/pools/b", &[]).await,
        "delete pool failed: pool 'b' is not empty (contains storage 'local')",
    );
    died(
        &api.delete("/pools?poolid=c", &[]).await,
        "delete pool failed: pool 'c' is not empty (contains pool 'c/d')",
    );
    api.delete("/pools/gone", &[]).await.ok();
    died(
        &api.delete("/pools/gone", &[]).await,
        "delete pool failed: pool 'gone' does not exist",
    );
}

#[tokio::test]
async fn a_guest_created_with_pool_is_a_member() {
    let api = Api::scenario("pools: [{poolid: web}]").await;
    api.create_ct(100, &[("pool", "web")]).await;
    let web = api.get("/pools/web").await.ok();
    assert_eq!(member_ids(web.data()), ["lxc/100"]);
    let form = [
        ("vmid", "101"),
        ("ostemplate", support::TEMPLATE),
        ("storage", "local-lvm"),
        ("pool", "nope"),
    ];
    // create_vm: $rpcenv->check_pool_exist raises a permission exception
    let r = api.post("/nodes/pve/lxc", &form).await;
    assert_eq!(
        (r.status, r.message()),
        (
            403,
            "Permission check failed (pool 'nope' does not exist)".to_owned()
        )
    );
    let vm = [("vmid", "102"), ("pool", "nope")];
    died(
        &api.post("/nodes/pve/qemu", &vm).await,
        "pool 'nope' does not exist",
    );
}
