//! Conformance: envelope, error formats, authentication (token, ticket, CSRF), TLS, cluster
//! endpoints.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use std::time::Duration;

use pvesim::{Scenario, SimOptions};
use support::{Api, TOKEN};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn success_is_wrapped_in_data_envelope() {
    let api = Api::start().await;
    let r = api.get("/version").await.ok();
    assert_eq!(r.data()["release"], "9.2");
}

#[tokio::test]
async fn error_message_is_in_the_http_status_line() {
    let api = Api::start().await;
    let mut tcp = tokio::net::TcpStream::connect(api.sim.addr())
        .await
        .unwrap();
    let req = format!(
        "GET /api2/json/nodes/pve/lxc/999/config HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\nConnection: close\r\n\r\n"
    );
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    assert!(
        out.starts_with(
            "HTTP/1.1 500 Configuration file 'nodes/pve/lxc/999.conf' does not exist\r\n"
        ),
        "{out}"
    );
    assert!(out.contains(
        r#"{"data":null,"message":"Configuration file 'nodes/pve/lxc/999.conf' does not exist\n"}"#
    ));
}

#[tokio::test]
async fn unknown_path_or_method_is_not_implemented() {
    let api = Api::start().await;
    let r = api.get("/nodes/pve/frobnicate").await;
    assert_eq!(
        (r.status, r.message()),
        (
            501,
            "Method 'GET /nodes/pve/frobnicate' not implemented".to_owned()
        )
    );
    let r = api.delete("/version", &[]).await;
    assert_eq!(r.status, 501);
}

#[tokio::test]
async fn missing_credentials_get_401_no_ticket() {
    let mut api = Api::start().await;
    api.auth = None;
    let r = api.get("/version").await;
    assert_eq!((r.status, r.message()), (401, "No ticket".to_owned()));
}

#[tokio::test]
async fn wrong_token_secret_gets_401_after_the_auth_delay() {
    let opts = SimOptions {
        auth_failure_delay: Duration::from_millis(300),
        ..support::opts()
    };
    let mut api = Api::with(Scenario::default(), opts).await;
    api.auth = Some("PVEAPIToken=root@pam!atoll=wrong".to_owned());
    let start = std::time::Instant::now();
    let r = api.get("/version").await;
    assert_eq!(
        (r.status, r.message()),
        (401, "Authentication failed!".to_owned())
    );
    assert!(start.elapsed() >= Duration::from_millis(300));
}

async fn login(api: &Api, user: &str, password: &str) -> support::Resp {
    api.post(
        "/access/ticket",
        &[("username", user), ("password", password)],
    )
    .await
}

#[tokio::test]
async fn ticket_login_needs_csrf_token_on_writes() {
    let mut api = Api::start().await;
    api.auth = None;
    let r = login(&api, "root@pam", "secret").await.ok();
    let ticket = r.data()["ticket"].as_str().unwrap().to_owned();
    let csrf = r.data()["CSRFPreventionToken"].as_str().unwrap().to_owned();
    assert!(ticket.starts_with("PVE:root@pam:"));
    let cookie = format!("PVEAuthCookie={ticket}");
    let url = format!("{}/cluster/nextid", api.base);
    let ok = api
        .client
        .get(&url)
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let url = format!("{}/nodes/pve/lxc", api.base);
    let form = [
        ("vmid", "100"),
        ("ostemplate", support::TEMPLATE),
        ("storage", "local-lvm"),
    ];
    let no_csrf = api
        .client
        .post(&url)
        .header("Cookie", &cookie)
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(no_csrf.status(), 401);
    let body: serde_json::Value = no_csrf.json().await.unwrap();
    assert_eq!(body["message"], "Permission denied - invalid csrf token\n");
    let with_csrf = api
        .client
        .post(&url)
        .header("Cookie", &cookie)
        .header("CSRFPreventionToken", &csrf)
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(with_csrf.status(), 200);
}

#[tokio::test]
async fn wrong_password_is_refused() {
    let mut api = Api::start().await;
    api.auth = None;
    let r = login(&api, "root@pam", "nope").await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn a_ticket_is_refused_once_it_is_older_than_its_lifetime() {
    let hand = model::ManualClock::new();
    let opts = SimOptions {
        clock: hand.shared(),
        ..support::opts()
    };
    let mut api = Api::with(Scenario::default(), opts).await;
    api.auth = None;
    let r = login(&api, "root@pam", "secret").await.ok();
    let ticket = r.data()["ticket"].as_str().unwrap().to_owned();
    let url = format!("{}/version", api.base);
    let version = async || {
        api.client
            .get(&url)
            .header("Cookie", format!("PVEAuthCookie={ticket}"))
            .send()
            .await
            .unwrap()
            .status()
    };
    // PVE's tickets live two hours, to the second.
    hand.advance(Duration::from_secs(7200));
    assert_eq!(version().await, 200);
    hand.advance(Duration::from_secs(1));
    assert_eq!(version().await, 401);
}

#[tokio::test]
async fn root_ticket_may_set_root_only_keys_and_dev_add_is_hot() {
    let mut api = Api::start().await;
    api.running_ct().await;
    api.auth = None;
    let r = login(&api, "root@pam", "secret").await.ok();
    let cookie = format!("PVEAuthCookie={}", r.data()["ticket"].as_str().unwrap());
    let csrf = r.data()["CSRFPreventionToken"].as_str().unwrap().to_owned();
    let url = format!("{}/nodes/pve/lxc/100/config", api.base);
    let put = |form: Vec<(&'static str, &'static str)>| {
        api.client
            .put(&url)
            .header("Cookie", &cookie)
            .header("CSRFPreventionToken", &csrf)
            .form(&form)
            .send()
    };
    assert_eq!(
        put(vec![("dev0", "/dev/null")]).await.unwrap().status(),
        200
    );
    assert_eq!(
        put(vec![("dev0", "/dev/zero")]).await.unwrap().status(),
        200
    );
    api.auth = Some(TOKEN.to_owned());
    assert_eq!(api.config(100, true).await["dev0"], "/dev/null");
    assert_eq!(
        api.pending_keys(100).await,
        ["dev0"],
        "dev change on a running CT stays pending"
    );
}

#[tokio::test]
async fn tls_serves_with_a_ca_clients_can_trust() {
    support::install_crypto();
    let opts = SimOptions {
        tls: true,
        ..support::opts()
    };
    let api = Api::with(Scenario::default(), opts).await;
    assert!(api.base.starts_with("https://127.0.0.1:"));
    let ca = reqwest::Certificate::from_pem(api.sim.ca_pem().unwrap().as_bytes()).unwrap();
    let client = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(ca)
        .build()
        .unwrap();
    let res = client
        .get(format!("{}/version", api.base))
        .header("Authorization", TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let untrusted = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .build()
        .unwrap();
    assert!(
        untrusted
            .get(format!("{}/version", api.base))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn nextid_is_lowest_free_and_asserting_a_taken_id_fails() {
    let api = Api::start().await;
    assert_eq!(api.get("/cluster/nextid").await.ok().data(), 100);
    api.create_ct(100, &[]).await;
    assert_eq!(api.get("/cluster/nextid").await.ok().data(), 101);
    let r = api.get_q("/cluster/nextid", &[("vmid", "100")]).await;
    assert_eq!(
        (r.status, r.error("vmid")),
        (400, "VM 100 already exists".to_owned())
    );
}

#[tokio::test]
async fn cluster_resources_lists_guests_of_every_node() {
    let api = Api::scenario(
        "nodes: [{name: pve1}, {name: pve2}]\nguests:\n  - {vmid: 100, node: pve1, status: running, config: {hostname: a, memory: 256, tags: 'x;y'}}\n  - {vmid: 200, node: pve2, type: qemu, config: {name: vm, net0: 'virtio,bridge=vmbr0'}}\n",
    )
    .await;
    let r = api
        .get_q("/cluster/resources", &[("type", "vm")])
        .await
        .ok();
    let list = r.data().as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(
        (
            list[0]["id"].as_str(),
            list[0]["status"].as_str(),
            list[0]["name"].as_str()
        ),
        (Some("lxc/100"), Some("running"), Some("a"))
    );
    assert_eq!(
        (list[1]["type"].as_str(), list[1]["node"].as_str()),
        (Some("qemu"), Some("pve2"))
    );
}

#[tokio::test]
async fn offline_node_answers_595_and_its_guests_are_unknown() {
    let api = Api::scenario(
        "nodes: [{name: pve1}, {name: pve2, offline: true}]\nguests: [{vmid: 200, node: pve2}]\n",
    )
    .await;
    let r = api.get("/nodes/pve2/lxc/200/status/current").await;
    assert_eq!(r.status, 595);
    let r = api
        .get_q("/cluster/resources", &[("type", "vm")])
        .await
        .ok();
    assert_eq!(r.data()[0]["status"], "unknown");
}

#[tokio::test]
async fn legacy_error_bodies_carry_only_data_null() {
    let api = Api::start().await;
    api.sim.faults().set_legacy_error_bodies(true);
    let mut tcp = tokio::net::TcpStream::connect(api.sim.addr())
        .await
        .unwrap();
    let req = format!(
        "PUT /api2/json/nodes/pve/lxc/999/config HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\nConnection: close\r\n\r\ncores=2"
    );
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    assert!(
        out.starts_with(
            "HTTP/1.1 500 Configuration file 'nodes/pve/lxc/999.conf' does not exist\r\n"
        ),
        "{out}"
    );
    assert!(out.ends_with("\r\n\r\n{\"data\":null}"), "{out}");
}

#[tokio::test]
async fn nextid_is_not_a_reservation() {
    let api = Api::start().await;
    let a = api.get("/cluster/nextid").await.ok().data().clone();
    let b = api.get("/cluster/nextid").await.ok().data().clone();
    assert_eq!(a, b);
    api.create_ct(100, &[]).await;
    let r = api
        .post(
            "/nodes/pve/lxc",
            &[
                ("vmid", "100"),
                ("ostemplate", support::TEMPLATE),
                ("storage", "local-lvm"),
            ],
        )
        .await;
    assert_eq!(r.message(), "CT 100 already exists on node 'pve'");
}

#[tokio::test]
async fn json_bodies_are_accepted_like_forms() {
    let api = Api::start().await;
    api.create_ct(100, &[]).await;
    let url = format!("{}/nodes/pve/lxc/100/config", api.base);
    let body = serde_json::json!({ "cores": 2, "onboot": true, "delete": ["swap"] });
    let res = api
        .client
        .put(&url)
        .header("Authorization", TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let conf = api.config(100, true).await;
    assert_eq!(
        (
            conf["cores"].as_u64(),
            conf["onboot"].as_u64(),
            conf.get("swap")
        ),
        (Some(2), Some(1), None)
    );
}

#[tokio::test]
async fn cluster_resources_can_be_stale_like_pvestatd_broadcasts() {
    let api = Api::start().await;
    api.sim
        .faults()
        .set_resources_staleness(Duration::from_secs(30));
    let before = api
        .get_q("/cluster/resources", &[("type", "vm")])
        .await
        .ok();
    assert!(before.data().as_array().unwrap().is_empty());
    api.create_ct(100, &[]).await;
    let stale = api
        .get_q("/cluster/resources", &[("type", "vm")])
        .await
        .ok();
    assert!(
        stale.data().as_array().unwrap().is_empty(),
        "still the old broadcast"
    );
    api.sim.faults().set_resources_staleness(Duration::ZERO);
    let fresh = api
        .get_q("/cluster/resources", &[("type", "vm")])
        .await
        .ok();
    assert_eq!(fresh.data()[0]["vmid"], 100);
}
