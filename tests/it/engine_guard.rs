//! The self-host guard end to end: a protected `vm_id`, or atoll's own guest found by MAC.
//! Disruptive changes are blocked at plan time with the reason; live changes unless allowed;
//! a plan made before the guest became protected is refused at apply time.

use crate::engine_support;

use crate::support::Container;
use engine_support::{Env, text};
use serde_json::Value;

const ID: u32 = 801;

fn guest(cpu: &str, features: &str, nic: &str, unprivileged: bool) -> String {
    Container::new("self").vm_id(ID).body(&format!(
            "  cpu {{\n{cpu}\n  }}\n  features {{\n{features}\n  }}\n  network_interface {{\n    name = \"eth0\"\n{nic}\n  }}"
        )).hcl()
    .replace(
        "unprivileged = true",
        &format!("unprivileged = {unprivileged}"),
    )
}

fn base() -> String {
    guest("    cores = 1", "    nesting = false", "", true)
}

const PROTECT_ID: &str = "protect:\n  discover: false\n  guests:\n    - vm_id: 801\n";

async fn blocked(env: &Env) -> Value {
    let plan = env.plan_json().await;
    let change = plan["resource_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["vm_id"] == ID)
        .cloned()
        .expect("a change for the protected guest");
    change["blocked"].clone()
}

async fn env_with_guest() -> Env {
    let env = Env::start().await;
    env.write_tf(&base());
    env.apply().await;
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disruptive_changes_to_a_protected_vm_id_are_blocked_at_plan_time() {
    let mut env = env_with_guest().await;
    env.write_config(PROTECT_ID);
    let cases = [
        (
            "restart",
            guest("    cores = 1", "    nesting = true", "", true),
        ),
        (
            "link-reset",
            guest(
                "    cores = 1",
                "    nesting = false",
                "    firewall = true",
                true,
            ),
        ),
        (
            "replace",
            guest("    cores = 1", "    nesting = false", "", false),
        ),
        ("destroy", String::new()),
        (
            "live-change",
            guest("    cores = 2", "    nesting = false", "", true),
        ),
    ];
    for (rule, tf) in cases {
        env.write_tf(&tf);
        let blocked = blocked(&env).await;
        assert_eq!(blocked["rule"], rule, "{blocked:#}");
        let reason = blocked["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("protect.guests"), "{reason}");
        let out = env.atoll(&["apply", "--auto-approve"]).await;
        assert_eq!(out.status.code(), Some(1), "{rule}: {}", text(&out));
        assert!(
            text(&out).contains("blocked by the guard"),
            "{}",
            text(&out)
        );
    }
    assert_eq!(env.lxc_ids().await, vec![ID], "still there");
    assert_eq!(env.live_config(ID).await["cores"], "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_change_to_a_protected_guest_is_allowed_when_configured() {
    let mut env = env_with_guest().await;
    env.write_config(&format!("{PROTECT_ID}  allow_live_changes: true\n"));
    env.write_tf(&guest("    cores = 2", "    nesting = false", "", true));
    assert_eq!(blocked(&env).await, Value::Null);
    env.apply().await;
    assert_eq!(env.live_config(ID).await["cores"], "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_guest_found_by_mac_cannot_be_destroyed() {
    let mut env = env_with_guest().await;
    let net0 = env.live_config(ID).await["net0"].clone();
    let mac = net0
        .split(',')
        .find_map(|f| f.strip_prefix("hwaddr="))
        .expect("a MAC")
        .to_ascii_lowercase();
    env.write_config(&format!(
        "protect:\n  discover: true\n  local_macs: [\"{mac}\"]\n"
    ));
    env.write_tf("");
    let blocked = blocked(&env).await;
    assert_eq!(blocked["rule"], "destroy", "{blocked:#}");
    let reason = blocked["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("atoll runs in it"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_made_before_the_guest_became_protected_is_refused_at_apply() {
    let mut env = env_with_guest().await;
    env.write_tf(&guest("    cores = 1", "    nesting = true", "", true));
    let saved = env.dir.path().join("saved.plan");
    let saved_arg = saved.display().to_string();
    let out = env.atoll(&["plan", "--out", &saved_arg]).await;
    assert!(out.status.success(), "{}", text(&out));
    env.write_config(PROTECT_ID);
    let out = env.atoll(&["apply", "--plan", &saved_arg]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("the guard refuses this plan"),
        "{}",
        text(&out)
    );
    let pending = env.live_config(ID).await;
    assert!(
        !pending
            .get("features")
            .is_some_and(|f| f.contains("nesting=1"))
    );
}

/// Protected container 100 (`db`) on `vmbr0` as `BC:24:11:AA:BB:01` with `10.0.0.5/24`, and a
/// second bridge `vmbr1`.
const DB_SCENARIO: &str = r"
nodes:
  - name: pve
    bridges: {vmbr0: 1500, vmbr1: 1500}
guests:
  - vmid: 100
    status: running
    config:
      hostname: db
      rootfs: local-lvm:8
      net0: name=eth0,bridge=vmbr0,hwaddr=BC:24:11:AA:BB:01,ip=10.0.0.5/24,type=veth
";

const PROTECT_DB: &str = "protect:\n  discover: false\n  guests:\n    - vm_id: 100\n";

/// A new container (no `vm_id`) with one interface: `nic` inside `network_interface`, `ip`
/// as its IPv4 address.
fn newcomer(nic: &str, ip: Option<&str>) -> String {
    let ip = ip
        .map(|ip| {
            format!("  initialization {{\n    ip_config {{\n      ipv4 {{\n        address = \"{ip}\"\n      }}\n    }}\n  }}\n")
        })
        .unwrap_or_default();
    Container::new("newcomer")
        .body(&format!(
            "  network_interface {{\n    name = \"eth0\"\n{nic}\n  }}\n{ip}"
        ))
        .hcl()
}

async fn newcomer_blocked(env: &Env) -> Value {
    let plan = env.plan_json().await;
    let change = plan["resource_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| {
            c["address"]
                .as_str()
                .is_some_and(|a| a.ends_with(".newcomer"))
        })
        .cloned()
        .expect("a change for the new container");
    change["blocked"].clone()
}

async fn db_env() -> Env {
    let mut env = Env::with_scenario(DB_SCENARIO, engine_support::options(20)).await;
    env.write_config(PROTECT_DB);
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_guest_with_a_protected_guests_mac_or_static_ip_is_blocked_and_not_applied() {
    let env = db_env().await;
    let cases = [
        (
            "the MAC in lower case",
            newcomer(
                "    bridge = \"vmbr1\"\n    mac_address = \"bc:24:11:aa:bb:01\"",
                None,
            ),
            "BC:24:11:AA:BB:01",
        ),
        (
            "the static IP on the same bridge",
            newcomer("    bridge = \"vmbr0\"", Some("10.0.0.5/24")),
            "10.0.0.5",
        ),
    ];
    for (what, tf, address) in cases {
        env.write_tf(&tf);
        let blocked = newcomer_blocked(&env).await;
        assert_eq!(blocked["rule"], "network-identity", "{what}: {blocked:#}");
        let reason = blocked["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("100 (db)") && reason.contains(address),
            "{what}: {reason}"
        );
        let out = env.atoll(&["apply", "--auto-approve"]).await;
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out));
        assert!(
            text(&out).contains("blocked by the guard"),
            "{}",
            text(&out)
        );
        assert_eq!(
            env.lxc_ids().await,
            vec![100],
            "{what}: nothing was created"
        );
    }
    // The same address on another bridge is another network: planned and applied.
    env.write_tf(&newcomer("    bridge = \"vmbr1\"", Some("10.0.0.5/24")));
    assert_eq!(newcomer_blocked(&env).await, Value::Null);
    env.apply().await;
    assert_eq!(env.lxc_ids().await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_plan_is_refused_at_apply_once_the_protected_guest_holds_its_address() {
    let env = db_env().await;
    env.write_tf(&newcomer("    bridge = \"vmbr0\"", Some("10.0.0.9/24")));
    let saved = env.dir.path().join("saved.plan").display().to_string();
    let out = env.atoll(&["plan", "--out", &saved]).await;
    assert!(out.status.success(), "{}", text(&out));
    // Someone gives the protected guest that address before the apply.
    let mut set = std::collections::BTreeMap::new();
    set.insert(
        "net0".to_owned(),
        "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:AA:BB:01,ip=10.0.0.9/24,type=veth".to_owned(),
    );
    let change = atoll::proxmox::client::ConfigChange {
        set,
        ..Default::default()
    };
    let vmid = atoll::proxmox::types::VmId::new(100).expect("vmid");
    env.client
        .guest_update_config(
            &engine_support::node(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid,
            &change,
        )
        .await
        .expect("changing the protected guest");
    let out = env.atoll(&["apply", "--plan", &saved]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("the guard refuses this plan") && said.contains("10.0.0.9"),
        "{said}"
    );
    assert_eq!(env.lxc_ids().await, vec![100], "nothing was created");
}
