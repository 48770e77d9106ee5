//! Conformance of the simulated SDN API (pve-network): zones, vnets and subnets written as
//! pending, shown by `pending=1`, made running (and bridges on the nodes) by
//! `PUT /cluster/sdn`; each refusal in pve-network's words.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use support::{Api, Resp};

fn died(r: &Resp, msg: &str) {
    assert_eq!(
        (r.status, r.message()),
        (500, msg.to_owned()),
        "{:?}",
        r.body
    );
}

async fn apply(api: &Api) {
    let upid = api.put("/cluster/sdn", &[]).await.ok();
    let upid = upid.data().as_str().expect("a UPID").to_owned();
    let status = api.wait_task(&upid).await;
    assert_eq!(status["exitstatus"], "OK", "{status}");
}

#[tokio::test]
async fn writes_stay_pending_until_sdn_is_applied_and_then_vnets_are_bridges() {
    let api = Api::start().await;
    api.post(
        "/cluster/sdn/zones",
        &[("zone", "lan"), ("type", "vlan"), ("bridge", "vmbr0")],
    )
    .await
    .ok();
    api.post(
        "/cluster/sdn/vnets",
        &[("vnet", "web"), ("zone", "lan"), ("tag", "10")],
    )
    .await
    .ok();
    let zone = api.get("/cluster/sdn/zones/lan").await.ok();
    assert_eq!(zone.data()["bridge"], "vmbr0");
    assert_eq!(zone.data()["type"], "vlan");
    let pending = api
        .get_q("/cluster/sdn/vnets/web", &[("pending", "1")])
        .await
        .ok();
    assert_eq!(pending.data()["state"], "new", "{:?}", pending.body);
    assert_eq!(pending.data()["pending"]["tag"], 10, "{:?}", pending.body);
    assert!(!api.sim.bridges("pve").contains(&"web".to_owned()));

    apply(&api).await;
    assert!(api.sim.bridges("pve").contains(&"web".to_owned()));
    let pending = api
        .get_q("/cluster/sdn/vnets/web", &[("pending", "1")])
        .await
        .ok();
    assert!(pending.data()["state"].is_null(), "{:?}", pending.body);

    api.put("/cluster/sdn/vnets/web", &[("alias", "web servers")])
        .await
        .ok();
    let pending = api
        .get_q("/cluster/sdn/vnets/web", &[("pending", "1")])
        .await
        .ok();
    assert_eq!(pending.data()["state"], "changed");
    assert_eq!(pending.data()["pending"]["alias"], "web servers");
    let running = api
        .get_q("/cluster/sdn/vnets", &[("running", "1")])
        .await
        .ok();
    assert!(running.data()[0]["alias"].is_null(), "{:?}", running.body);

    api.delete("/cluster/sdn/vnets/web", &[]).await.ok();
    let pending = api
        .get_q("/cluster/sdn/vnets/web", &[("pending", "1")])
        .await
        .ok();
    assert_eq!(pending.data()["state"], "deleted");
    apply(&api).await;
    assert!(!api.sim.bridges("pve").contains(&"web".to_owned()));
    died(
        &api.get("/cluster/sdn/vnets/web").await,
        "sdn vnet 'web' does not exist",
    );
}

#[tokio::test]
async fn zone_and_vnet_refusals_use_pve_words() {
    let api = Api::start().await;
    let long = api
        .post(
            "/cluster/sdn/zones",
            &[("zone", "toolongid"), ("type", "simple")],
        )
        .await;
    assert_eq!(long.status, 400);
    assert_eq!(long.error("zone"), "value may only be 8 characters long");
    died(
        &api.post("/cluster/sdn/zones", &[("zone", "lan"), ("type", "vlan")])
            .await,
        "missing value for required option 'bridge'",
    );
    died(
        &api.post(
            "/cluster/sdn/zones",
            &[("zone", "iso"), ("type", "simple"), ("bridge", "vmbr0")],
        )
        .await,
        "unexpected property 'bridge'",
    );
    api.post("/cluster/sdn/zones", &[("zone", "iso"), ("type", "simple")])
        .await
        .ok();
    api.post(
        "/cluster/sdn/zones",
        &[("zone", "lan"), ("type", "vlan"), ("bridge", "vmbr0")],
    )
    .await
    .ok();
    died(
        &api.post("/cluster/sdn/vnets", &[("vnet", "web"), ("zone", "lan")])
            .await,
        "create sdn vnet object failed: 400 Parameter verification failed.\ntag: missing vlan tag",
    );
    died(
        &api.post(
            "/cluster/sdn/vnets",
            &[("vnet", "lab"), ("zone", "iso"), ("tag", "5")],
        )
        .await,
        "create sdn vnet object failed: 400 Parameter verification failed.\ntag: vlan tag is not allowed on simple zone",
    );
    api.post(
        "/cluster/sdn/vnets",
        &[("vnet", "web"), ("zone", "lan"), ("tag", "10")],
    )
    .await
    .ok();
    died(
        &api.post(
            "/cluster/sdn/vnets",
            &[("vnet", "web2"), ("zone", "lan"), ("tag", "10")],
        )
        .await,
        "create sdn vnet object failed: 400 Parameter verification failed.\ntag: tag 10 already exist in vnet web",
    );
    died(
        &api.delete("/cluster/sdn/zones/lan", &[]).await,
        "delete sdn zone object failed: zone lan is used by vnet web",
    );
    let vnets = api.get("/cluster/sdn/vnets").await.ok();
    assert_eq!(
        vnets.data().as_array().map(Vec::len),
        Some(1),
        "nothing half-written"
    );
}

#[tokio::test]
async fn a_subnet_is_named_by_its_zone_and_must_fit_its_cidr() {
    let api = Api::start().await;
    api.post("/cluster/sdn/zones", &[("zone", "iso"), ("type", "simple")])
        .await
        .ok();
    api.post("/cluster/sdn/vnets", &[("vnet", "lab"), ("zone", "iso")])
        .await
        .ok();
    died(
        &api.post(
            "/cluster/sdn/vnets/lab/subnets",
            &[
                ("subnet", "10.9.0.0/24"),
                ("type", "subnet"),
                ("gateway", "10.8.0.1"),
            ],
        )
        .await,
        "create sdn subnet object failed: 400 Parameter verification failed.\ngateway: 10.8.0.1 is not in subnet 10.9.0.0/24",
    );
    died(
        &api.post(
            "/cluster/sdn/vnets/lab/subnets",
            &[
                ("subnet", "10.9.0.0/24"),
                (
                    "dhcp-range",
                    "start-address=10.9.0.50,end-address=10.9.1.60",
                ),
            ],
        )
        .await,
        "create sdn subnet object failed: 400 Parameter verification failed.\ndhcp-range: end-address 10.9.1.60 is not in subnet 10.9.0.0/24",
    );
    api.post(
        "/cluster/sdn/vnets/lab/subnets",
        &[
            ("subnet", "10.9.0.0/24"),
            ("type", "subnet"),
            ("gateway", "10.9.0.1"),
            (
                "dhcp-range",
                "start-address=10.9.0.10,end-address=10.9.0.20",
            ),
        ],
    )
    .await
    .ok();
    let subnet = api
        .get("/cluster/sdn/vnets/lab/subnets/iso-10.9.0.0-24")
        .await
        .ok();
    assert_eq!(subnet.data()["cidr"], "10.9.0.0/24");
    assert_eq!(subnet.data()["zone"], "iso");
    assert_eq!(subnet.data()["dhcp-range"][0]["start-address"], "10.9.0.10");
    died(
        &api.put("/cluster/sdn/vnets/lab", &[("vlanaware", "1")])
            .await,
        "update sdn vnet object failed: 400 Parameter verification failed.\nvlanaware: vlanaware vnet is not compatible with subnets",
    );
    let subnets = api.get("/cluster/sdn/vnets/lab/subnets").await.ok();
    assert_eq!(subnets.data().as_array().map(Vec::len), Some(1));
    let bad = api
        .get("/cluster/sdn/vnets/lab/subnets/iso-10.9.0.0-33")
        .await;
    assert_eq!(bad.status, 400, "{:?}", bad.body);
}
