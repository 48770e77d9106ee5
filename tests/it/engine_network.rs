//! A node's network end to end on the simulator: a Linux VLAN and a Linux bridge with a
//! container on it; apply (one reload of the node, before the container is made), then an
//! empty plan; a comment change that is live and a port change that resets the bridge, each
//! as the simulator saw it; destroy; the guard refusing a change that cuts a protected
//! guest's bridge; a failed reload reported; bpg's deprecated long name warned about.

use crate::engine_support;

use engine_support::{Env, change, options, stdout, text};
use pvesim::{GuestEvent, TaskFailure};

use crate::support::TEMPLATE;

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso], templates: [debian-12-standard_12.7-1_amd64.tar.zst]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
"#;

/// A VLAN `eno3.20`, a bridge `vmbr1` on `ports` with `comment`, and CT 101 on the bridge.
fn stack(ports: &str, comment: &str) -> String {
    format!(
        r#"
resource "proxmox_network_linux_vlan" "lab" {{
  node_name = "pve"
  name      = "eno3.20"
  comment   = "lab vlan"
}}

resource "proxmox_network_linux_bridge" "lab" {{
  node_name  = "pve"
  name       = "vmbr1"
  address    = "192.168.50.2/24"
  ports      = [{ports}]
  comment    = "{comment}"
  depends_on = [proxmox_network_linux_vlan.lab]
}}

resource "proxmox_virtual_environment_container" "web" {{
  node_name    = "pve"
  vm_id        = 101
  unprivileged = true
  operating_system {{
    template_file_id = "{TEMPLATE}"
    type             = "debian"
  }}
  disk {{
    datastore_id = "local-lvm"
    size         = 4
  }}
  network_interface {{
    name   = "eth0"
    bridge = proxmox_network_linux_bridge.lab.name
  }}
}}
"#
    )
}

async fn get(env: &Env, path: &str) -> serde_json::Value {
    let response = reqwest::Client::new()
        .get(format!("{}{path}", env.sim.base_url()))
        .header("Authorization", crate::pvesim_support::TOKEN)
        .send()
        .await
        .expect("the simulator answers");
    response.json().await.expect("json")
}

fn bridge_resets(env: &Env) -> usize {
    env.sim
        .guest_events(101)
        .iter()
        .filter(|e| matches!(e, GuestEvent::BridgeReset(_)))
        .count()
}

const BRIDGE: &str = "proxmox_network_linux_bridge.lab";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_and_a_vlan_apply_before_their_container_and_the_next_plan_is_empty() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack(r#""eno2""#, "lab"));
    let plan = env.plan_json().await;
    assert_eq!(
        change(&plan, BRIDGE)["actions"],
        serde_json::json!(["create"])
    );
    let out = env.apply().await;
    assert!(out.status.success(), "apply: {}", text(&out));

    let listed = get(&env, "/nodes/pve/network").await;
    assert!(
        listed.get("changes").is_none(),
        "nothing left pending: {listed}"
    );
    let vmbr1 = &get(&env, "/nodes/pve/network/vmbr1").await["data"];
    assert_eq!(vmbr1["type"], "bridge", "{vmbr1}");
    assert_eq!(vmbr1["bridge_ports"], "eno2", "{vmbr1}");
    assert_eq!(vmbr1["cidr"], "192.168.50.2/24", "{vmbr1}");
    assert_eq!(vmbr1["comments"], "lab\n", "{vmbr1}");
    assert_eq!(vmbr1["autostart"], 1, "{vmbr1}");
    let vlan = &get(&env, "/nodes/pve/network/eno3.20").await["data"];
    assert_eq!(vlan["vlan-raw-device"], "eno3", "{vlan}");
    let ct = env.live_config(101).await;
    assert!(ct["net0"].contains("bridge=vmbr1"), "{ct:?}");

    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_is_live_and_a_port_change_resets_the_bridge_as_planned_then_destroy() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack(r#""eno2""#, "lab"));
    env.apply().await;
    let before = bridge_resets(&env);

    env.write_tf(&stack(r#""eno2""#, "lab bridge"));
    let plan = env.plan_json().await;
    let bridge = change(&plan, BRIDGE);
    assert_eq!(bridge["actions"], serde_json::json!(["update"]), "{bridge}");
    assert_eq!(bridge["disruption"], "live", "{bridge}");
    let notes = bridge["notes"].to_string();
    assert!(notes.contains("used by CT 101"), "{bridge}");
    env.apply().await;
    assert_eq!(bridge_resets(&env), before, "a comment cuts nothing");
    let vmbr1 = &get(&env, "/nodes/pve/network/vmbr1").await["data"];
    assert_eq!(vmbr1["comments"], "lab bridge\n", "{vmbr1}");

    env.write_tf(&stack(r#""eno2", "eno3.20""#, "lab bridge"));
    let plan = env.plan_json().await;
    let bridge = change(&plan, BRIDGE);
    assert_eq!(bridge["disruption"], "link-reset", "{bridge}");
    assert_eq!(bridge["attributes"][0]["path"], "ports", "{bridge}");
    env.apply().await;
    assert!(
        bridge_resets(&env) > before,
        "the port change reset the bridge"
    );
    let vmbr1 = &get(&env, "/nodes/pve/network/vmbr1").await["data"];
    assert_eq!(vmbr1["bridge_ports"], "eno2 eno3.20", "{vmbr1}");
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));

    env.write_tf("");
    let plan = env.plan_json().await;
    assert_eq!(change(&plan, BRIDGE)["disruption"], "link-reset");
    env.apply().await;
    for iface in ["vmbr1", "eno3.20"] {
        let gone = get(&env, &format!("/nodes/pve/network/{iface}")).await;
        assert_eq!(
            gone["errors"]["iface"], "interface does not exist",
            "{iface}: {gone}"
        );
    }
    let listed = get(&env, "/nodes/pve/network").await;
    assert!(listed.get("changes").is_none(), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_to_cut_a_bridge_a_protected_guest_uses() {
    let mut env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack(r#""eno2""#, "lab"));
    env.apply().await;
    env.write_config("protect:\n  discover: false\n  guests:\n    - vm_id: 101\n");

    // a comment goes through
    env.write_tf(&stack(r#""eno2""#, "lab bridge"));
    let plan = env.plan_json().await;
    assert!(change(&plan, BRIDGE)["blocked"].is_null(), "{plan}");
    env.apply().await;

    // a port change would cut the guest's bridge: refused, and nothing reaches the node
    env.write_tf(&stack(r#""eno3.20""#, "lab bridge"));
    let plan = env.plan_json().await;
    let blocked = &change(&plan, BRIDGE)["blocked"];
    assert_eq!(blocked["rule"], "link-reset", "{blocked}");
    let reason = blocked["reason"].as_str().expect("a reason");
    assert!(reason.contains("protected guest 101"), "{reason}");
    assert!(reason.contains("bridge vmbr1"), "{reason}");
    assert!(reason.contains("net0"), "{reason}");
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    let vmbr1 = &get(&env, "/nodes/pve/network/vmbr1").await["data"];
    assert_eq!(vmbr1["bridge_ports"], "eno2", "{vmbr1}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_network_reload_is_reported_on_the_interfaces_it_carried() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.sim.faults().fail_tasks(TaskFailure {
        task_type: Some("srvreload".to_owned()),
        vmid: None,
        message: "vmbr1 : error: vmbr1: bridge port eno2 does not exist".to_owned(),
        times: 1,
    });
    env.write_tf(
        r#"
resource "proxmox_network_linux_bridge" "lab" {
  node_name = "pve"
  name      = "vmbr1"
  ports     = ["eno2"]
}
"#,
    );
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("applying it failed"), "{shown}");
    assert!(shown.contains("bridge port eno2 does not exist"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_long_name_bpg_deprecated_still_plans_with_a_warning() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(
        r#"
resource "proxmox_virtual_environment_network_linux_vlan" "lab" {
  node_name = "pve"
  name      = "vlan_lab"
  interface = "eno3"
  vlan      = 42
}
"#,
    );
    let out = env.atoll(&["plan"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("Deprecated Resource"), "{shown}");
    assert!(shown.contains("proxmox_network_linux_vlan"), "{shown}");
    env.apply().await;
    let vlan = &get(&env, "/nodes/pve/network/vlan_lab").await["data"];
    assert_eq!(vlan["vlan-id"], "42", "{vlan}");
    assert_eq!(vlan["vlan-raw-device"], "eno3", "{vlan}");
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}
