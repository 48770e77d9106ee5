//! Fault injection: latency, the three-worker cap, `got timeout` lock errors, lost responses,
//! tasks failing part-way, random transient errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use std::time::{Duration, Instant};

use pvesim::{FaultSettings, Scenario, SimOptions, TaskFailure};
use reqwest::Method;
use support::{Api, TEMPLATE};

#[tokio::test]
async fn latency_is_added_to_every_request() {
    let api = Api::start().await;
    api.sim.faults().set_latency(Duration::from_millis(150));
    let start = Instant::now();
    api.get("/version").await.ok();
    assert!(start.elapsed() >= Duration::from_millis(150));
}

#[tokio::test]
async fn requests_beyond_three_workers_queue() {
    let opts = SimOptions {
        faults: FaultSettings {
            latency: Duration::from_millis(200),
            ..FaultSettings::default()
        },
        ..support::opts()
    };
    let api = Api::with(Scenario::default(), opts).await;
    let start = Instant::now();
    let calls: Vec<_> = (0..6).map(|_| api.get("/nodes/pve/lxc")).collect();
    for r in futures::future::join_all(calls).await {
        assert_eq!(r.status, 200);
    }
    // six requests, three at a time, 200 ms each: at least two rounds
    assert!(
        start.elapsed() >= Duration::from_millis(400),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn lock_timeout_is_transient_and_a_retry_succeeds() {
    let api = Api::start().await;
    api.create_ct(100, &[]).await;
    api.sim.faults().inject_lock_timeouts(1);
    let r = api.set(100, &[("cores", "2")]).await;
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "can't lock file '/run/lock/lxc/pve-config-100.lock' - got timeout".to_owned()
        )
    );
    assert!(
        api.config(100, true).await.get("cores").is_none(),
        "nothing was written"
    );
    api.set(100, &[("cores", "2")]).await.ok();
    assert_eq!(api.config(100, true).await["cores"], 2);
}

#[tokio::test]
async fn lost_create_response_still_creates_the_guest() {
    let api = Api::start().await;
    api.sim.faults().lose_responses(1);
    let r = api
        .post(
            "/nodes/pve/lxc",
            &[
                ("vmid", "100"),
                ("ostemplate", TEMPLATE),
                ("storage", "local-lvm"),
            ],
        )
        .await;
    assert_eq!(
        (r.status, r.message()),
        (596, "Connection timed out".to_owned())
    );
    let r = api.get("/nodes/pve/lxc/100/status/current").await.ok();
    assert_eq!(
        r.data()["vmid"],
        100,
        "the create ran although its answer was lost"
    );
    let again = api
        .post(
            "/nodes/pve/lxc",
            &[
                ("vmid", "100"),
                ("ostemplate", TEMPLATE),
                ("storage", "local-lvm"),
            ],
        )
        .await;
    assert_eq!(again.message(), "CT 100 already exists on node 'pve'");
}

#[tokio::test]
async fn failed_create_task_reports_exit_status_and_log_and_cleans_up() {
    let api = Api::start().await;
    let failure = TaskFailure {
        task_type: Some("vzcreate".to_owned()),
        vmid: Some(100),
        message: "command 'lxc-usernsexec' failed: exit code 2".to_owned(),
        times: 1,
    };
    api.sim.faults().fail_tasks(failure);
    let r = api
        .post(
            "/nodes/pve/lxc",
            &[
                ("vmid", "100"),
                ("ostemplate", TEMPLATE),
                ("storage", "local-lvm"),
            ],
        )
        .await
        .ok();
    let upid = r.data().as_str().unwrap().to_owned();
    let st = api.wait_task(&upid).await;
    assert_eq!(
        st["exitstatus"],
        "unable to create CT 100 - command 'lxc-usernsexec' failed: exit code 2"
    );
    let log = api.get(&format!("/nodes/pve/tasks/{upid}/log")).await.ok();
    let lines: Vec<&str> = log
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["t"].as_str().unwrap())
        .collect();
    assert!(lines[0].starts_with("extracting archive"), "{lines:?}");
    assert_eq!(
        *lines.last().unwrap(),
        "TASK ERROR: unable to create CT 100 - command 'lxc-usernsexec' failed: exit code 2"
    );
    assert_eq!(
        api.get("/nodes/pve/lxc/100/config").await.status,
        500,
        "config removed"
    );
    let content = api
        .get_q("/nodes/pve/storage/local-lvm/content", &[("vmid", "100")])
        .await
        .ok();
    assert!(
        content.data().as_array().unwrap().is_empty(),
        "partially created volume removed"
    );
    api.create_ct(100, &[]).await;
}

#[tokio::test]
async fn shutdown_without_force_fails_with_container_did_not_stop() {
    let api = Api::start().await;
    api.running_ct().await;
    api.sim.faults().fail_tasks(TaskFailure {
        task_type: Some("vzshutdown".to_owned()),
        vmid: None,
        message: "timeout".to_owned(),
        times: 1,
    });
    let r = api
        .post("/nodes/pve/lxc/100/status/shutdown", &[("timeout", "1")])
        .await
        .ok();
    let st = api.wait_task(r.data().as_str().unwrap()).await;
    assert_eq!(st["exitstatus"], "container did not stop");
    assert_eq!(
        api.get("/nodes/pve/lxc/100/status/current")
            .await
            .ok()
            .data()["status"],
        "running"
    );
    api.run_ok(
        Method::POST,
        "/nodes/pve/lxc/100/status/shutdown",
        &[("forceStop", "1")],
    )
    .await;
}

#[tokio::test]
async fn error_rate_one_fails_every_request_with_a_transient_error() {
    let api = Api::start().await;
    api.create_ct(100, &[]).await;
    api.sim.faults().set_error_rate(1.0);
    assert_eq!(api.get("/version").await.status, 596);
    assert_eq!(api.get("/nodes/pve/lxc/100/config").await.status, 596);
    let put = api.set(100, &[("cores", "2")]).await;
    assert!(put.message().ends_with("got timeout"), "{:?}", put.body);
    api.sim.faults().set_error_rate(0.0);
    api.get("/version").await.ok();
}

#[tokio::test]
async fn node_taken_offline_at_run_time_answers_595() {
    let api = Api::start().await;
    api.sim.faults().set_node_offline("pve", true);
    let r = api.get("/nodes/pve/lxc").await;
    assert_eq!(
        (r.status, r.message()),
        (595, "No route to host".to_owned())
    );
    api.sim.faults().set_node_offline("pve", false);
    api.get("/nodes/pve/lxc").await.ok();
}

#[tokio::test]
async fn a_delayed_auth_failure_does_not_hold_a_worker() {
    let opts = SimOptions {
        workers_per_node: 1,
        auth_failure_delay: Duration::from_secs(2),
        ..support::opts()
    };
    let api = Api::with(Scenario::default(), opts).await;
    let bad = api
        .client
        .post(format!("{}/access/ticket", api.base))
        .form(&[("username", "root@pam"), ("password", "x")])
        .send();
    let bad = tokio::spawn(bad);
    tokio::time::sleep(Duration::from_millis(100)).await; // let the failed login start first
    let start = Instant::now();
    api.get("/version").await.ok();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "the only worker was free: {:?}",
        start.elapsed()
    );
    assert_eq!(bad.await.unwrap().unwrap().status(), 401);
}

#[tokio::test]
async fn changes_that_cut_the_self_guests_link_lose_their_answer() {
    let api = Api::start().await;
    api.running_ct().await;
    api.sim.faults().set_self_guest(Some(100));
    api.set(100, &[("memory", "1024")]).await.ok();
    let net0 = "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:AA:BB:CC,ip=10.0.0.5/24,gw=10.0.0.1";
    let r = api.set(100, &[("net0", net0)]).await;
    assert_eq!(
        (r.status, r.message()),
        (596, "Connection reset by peer".to_owned())
    );
    assert!(
        api.config(100, true).await["net0"]
            .as_str()
            .unwrap()
            .contains("BC:24:11:AA:BB:CC"),
        "the change was made"
    );
    let r = api.post("/nodes/pve/lxc/100/status/reboot", &[]).await;
    assert_eq!(r.status, 596);
}

#[tokio::test]
async fn new_task_can_be_unknown_for_a_moment() {
    let api = Api::start().await;
    api.create_ct(100, &[]).await;
    api.sim
        .faults()
        .set_task_visibility_delay(Duration::from_secs(30));
    let r = api.post("/nodes/pve/lxc/100/status/start", &[]).await.ok();
    let upid = r.data().as_str().unwrap().to_owned();
    let st = api.get(&format!("/nodes/pve/tasks/{upid}/status")).await;
    assert_eq!(
        (st.status, st.error("upid")),
        (400, "no such task".to_owned())
    );
}
