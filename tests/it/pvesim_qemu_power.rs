//! QEMU power as `vm_start`, `_do_vm_stop` and `vm_reboot` do it (agent shutdown vs ACPI, a
//! guest that ignores ACPI, pending applied by stop+start) and the guest agent's answers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use pvesim::GuestEvent;
use reqwest::Method;
use support::Api;

fn scenario(agent: &str, ignores_acpi: bool) -> String {
    format!(
        "guests:\n  - vmid: 200\n    type: qemu\n    status: running\n    ignores_acpi: {ignores_acpi}\n    config: {{name: db, cores: 2, agent: '{agent}', net0: 'virtio=BC:24:11:00:00:C8,bridge=vmbr0', net1: 'virtio=BC:24:11:00:00:C9,bridge=vmbr0', ipconfig0: 'ip=192.0.2.10/24,gw=192.0.2.1'}}\n"
    )
}

fn power_events(api: &Api) -> Vec<GuestEvent> {
    api.sim
        .guest_events(200)
        .into_iter()
        .filter(|e| matches!(e, GuestEvent::Started | GuestEvent::Stopped))
        .collect()
}

async fn exit_of(api: &Api, path: &str, form: &[(&str, &str)]) -> String {
    let r = api.post(path, form).await.ok();
    let status = api.wait_task(r.data().as_str().unwrap()).await;
    status["exitstatus"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn shutdown_of_a_guest_ignoring_acpi_times_out_unless_forced() {
    let api = Api::scenario(&scenario("0", true)).await;
    let exit = exit_of(&api, "/nodes/pve/qemu/200/status/shutdown", &[]).await;
    assert_eq!(exit, "VM quit/powerdown failed - got timeout");
    assert!(power_events(&api).is_empty(), "the VM never stopped");
    let exit = exit_of(
        &api,
        "/nodes/pve/qemu/200/status/shutdown",
        &[("forceStop", "1"), ("timeout", "30")],
    )
    .await;
    assert_eq!(exit, "WARNINGS: 1");
    assert_eq!(power_events(&api), [GuestEvent::Stopped]);
}

#[tokio::test]
async fn shutdown_goes_through_the_agent_when_it_runs() {
    let api = Api::scenario(&scenario("enabled=1,fstrim_cloned_disks=1", true)).await;
    assert_eq!(
        exit_of(&api, "/nodes/pve/qemu/200/status/shutdown", &[]).await,
        "OK"
    );
    assert_eq!(power_events(&api), [GuestEvent::Stopped]);
    // `_do_vm_stop` returns at once for a stopped VM
    assert_eq!(
        exit_of(&api, "/nodes/pve/qemu/200/status/stop", &[]).await,
        "OK"
    );
    let r = api.post("/nodes/pve/qemu/200/status/reboot", &[]).await;
    assert_eq!(r.message(), "VM 200 not running");
}

#[tokio::test]
async fn stop_and_start_apply_pending_and_reboot_restarts_exactly_once() {
    let api = Api::scenario(&scenario("1", false)).await;
    api.put("/nodes/pve/qemu/200/config", &[("cores", "4")])
        .await
        .ok();
    api.run_ok(Method::POST, "/nodes/pve/qemu/200/status/reboot", &[])
        .await;
    assert_eq!(
        power_events(&api),
        [GuestEvent::Stopped, GuestEvent::Started]
    );
    let conf = api
        .get_q("/nodes/pve/qemu/200/config", &[("current", "1")])
        .await
        .ok();
    assert_eq!(conf.data()["cores"], 4);
    api.put("/nodes/pve/qemu/200/config", &[("sockets", "2")])
        .await
        .ok();
    api.run_ok(Method::POST, "/nodes/pve/qemu/200/status/stop", &[])
        .await;
    api.run_ok(Method::POST, "/nodes/pve/qemu/200/status/start", &[])
        .await;
    let conf = api
        .get_q("/nodes/pve/qemu/200/config", &[("current", "1")])
        .await
        .ok();
    assert_eq!(conf.data()["sockets"], 2);
    let exit = exit_of(&api, "/nodes/pve/qemu/200/status/start", &[]).await;
    assert_eq!(exit, "VM 200 already running");
}

#[tokio::test]
async fn agent_reports_lo_and_each_nic_with_its_cloudinit_address() {
    let api = Api::scenario(&scenario("1", false)).await;
    let r = api.post("/nodes/pve/qemu/200/agent/ping", &[]).await.ok();
    assert_eq!(r.data()["result"], serde_json::json!({}));
    let r = api
        .get("/nodes/pve/qemu/200/agent/network-get-interfaces")
        .await
        .ok();
    let ifaces = r.data()["result"].as_array().unwrap().clone();
    assert_eq!(ifaces.len(), 3);
    assert_eq!(ifaces[0]["name"], "lo");
    assert_eq!(ifaces[1]["hardware-address"], "bc:24:11:00:00:c8");
    assert_eq!(ifaces[1]["ip-addresses"][0]["ip-address"], "192.0.2.10");
    assert_eq!(ifaces[2]["hardware-address"], "bc:24:11:00:00:c9");
    assert_eq!(ifaces[2]["ip-addresses"][0]["ip-address"], "10.0.200.11");
}

#[tokio::test]
async fn agent_errors_follow_assert_agent_available() {
    let api = Api::scenario(&scenario("0", false)).await;
    let r = api
        .get("/nodes/pve/qemu/200/agent/network-get-interfaces")
        .await;
    assert_eq!(
        (r.status, r.message()),
        (500, "QEMU guest agent is not running".to_owned())
    );
    // deleting `agent` is not hot-pluggable: it takes effect at the next start
    api.put("/nodes/pve/qemu/200/config", &[("delete", "agent")])
        .await
        .ok();
    api.run_ok(Method::POST, "/nodes/pve/qemu/200/status/reboot", &[])
        .await;
    let r = api.post("/nodes/pve/qemu/200/agent/ping", &[]).await;
    assert_eq!(r.message(), "No QEMU guest agent configured");
}
