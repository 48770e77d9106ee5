//! Pools and the firewall end to end on the simulator: a pool the guests join, a security
//! group, cluster aliases and IP sets, a guest's firewall options and rules; apply, then an
//! empty plan; a change applied as planned; a destroy; and the guard refusing a change that
//! can drop a protected guest's traffic while letting an additive one through.

use crate::engine_support;

use engine_support::{Env, change, options, sim_get, stdout, text};

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso, import, snippets]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
"#;

/// A VM in a pool, with its firewall; `extra_rule` is added after the SSH rule, `policy` is
/// the VM's input policy.
fn stack(extra_rule: &str, policy: &str, comment: &str) -> String {
    format!(
        r#"
resource "proxmox_virtual_environment_pool" "web" {{
  pool_id = "web"
  comment = "{comment}"
}}

resource "proxmox_virtual_environment_firewall_alias" "lan" {{
  name    = "lan"
  cidr    = "10.0.0.0/24"
  comment = "office"
}}

resource "proxmox_virtual_environment_firewall_ipset" "admins" {{
  name    = "admins"
  comment = "admin laptops"
  cidr {{
    name    = "10.0.0.5"
    comment = "alice"
  }}
  cidr {{
    name = "10.0.0.6/31"
  }}
}}

resource "proxmox_virtual_environment_cluster_firewall_security_group" "web" {{
  name    = "webserver"
  comment = "http and https"
  rule {{
    type   = "in"
    action = "ACCEPT"
    proto  = "tcp"
    dport  = "80,443"
  }}
}}

resource "proxmox_virtual_environment_vm" "app" {{
  node_name = "pve"
  vm_id     = 300
  name      = "app"
  pool_id   = proxmox_virtual_environment_pool.web.pool_id
  started   = false
  disk {{
    interface    = "scsi0"
    datastore_id = "local-lvm"
    size         = 4
  }}
  network_device {{
    bridge   = "vmbr0"
    firewall = true
  }}
}}

resource "proxmox_virtual_environment_firewall_options" "app" {{
  node_name    = "pve"
  vm_id        = proxmox_virtual_environment_vm.app.vm_id
  enabled      = true
  input_policy = "{policy}"
  log_level_in = "info"
}}

resource "proxmox_virtual_environment_firewall_rules" "app" {{
  node_name = "pve"
  vm_id     = proxmox_virtual_environment_vm.app.vm_id
  rule {{
    security_group = proxmox_virtual_environment_cluster_firewall_security_group.web.name
  }}
  rule {{
    type    = "in"
    action  = "ACCEPT"
    source  = "+dc/admins"
    proto   = "tcp"
    dport   = "22"
    comment = "ssh from admins"
  }}
{extra_rule}}}
"#
    )
}

const HTTPS_ALT: &str = r#"  rule {
    type   = "in"
    action = "ACCEPT"
    proto  = "tcp"
    dport  = "8443"
  }
"#;

const DROP_SMTP: &str = r#"  rule {
    type   = "in"
    action = "DROP"
    proto  = "tcp"
    dport  = "25"
  }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_and_a_guests_firewall_apply_and_the_next_plan_is_empty() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack("", "DROP", "web servers"));
    let out = env.apply().await;
    assert!(out.status.success(), "apply: {}", text(&out));

    let pool = sim_get(&env, "/pools/web").await;
    assert_eq!(pool["comment"], "web servers", "{pool}");
    let members = pool["members"].as_array().expect("members");
    assert!(members.iter().any(|m| m["vmid"] == 300), "{pool}");
    let rules = sim_get(&env, "/nodes/pve/qemu/300/firewall/rules").await;
    let rules = rules.as_array().expect("rules");
    assert_eq!(rules.len(), 2, "{rules:?}");
    assert_eq!(rules[0]["type"], "group");
    assert_eq!(rules[0]["action"], "webserver");
    assert_eq!(rules[1]["dport"], "22");
    assert_eq!(rules[1]["source"], "+dc/admins");
    let options = sim_get(&env, "/nodes/pve/qemu/300/firewall/options").await;
    assert_eq!(options["enable"], 1, "{options}");
    assert_eq!(options["policy_in"], "DROP", "{options}");
    let set = sim_get(&env, "/cluster/firewall/ipset/admins").await;
    assert_eq!(set.as_array().expect("entries").len(), 2, "{set}");

    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule_and_comment_changes_apply_as_planned_and_destroy_removes_everything() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack("", "DROP", "web servers"));
    assert!(env.apply().await.status.success());

    env.write_tf(&stack(HTTPS_ALT, "DROP", "web"));
    let plan = env.plan_json().await;
    let rules = change(&plan, "proxmox_virtual_environment_firewall_rules.app");
    assert_eq!(rules["actions"], serde_json::json!(["update"]), "{rules}");
    assert_eq!(
        rules["disruption"], "live",
        "an accepting rule is additive: {rules}"
    );
    let pool = change(&plan, "proxmox_virtual_environment_pool.web");
    assert_eq!(pool["attributes"][0]["path"], "comment", "{pool}");
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    let rules = sim_get(&env, "/nodes/pve/qemu/300/firewall/rules").await;
    assert_eq!(rules[2]["dport"], "8443", "{rules}");
    assert_eq!(sim_get(&env, "/pools/web").await["comment"], "web");

    env.write_tf(&stack(DROP_SMTP, "DROP", "web"));
    let plan = env.plan_json().await;
    let rules = change(&plan, "proxmox_virtual_environment_firewall_rules.app");
    assert_eq!(
        rules["disruption"], "link-reset",
        "a dropping rule: {rules}"
    );
    assert!(env.apply().await.status.success());
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));

    env.write_tf("");
    let out = env.apply().await;
    assert!(out.status.success(), "destroy: {}", text(&out));
    let groups = sim_get(&env, "/cluster/firewall/groups").await;
    assert_eq!(groups.as_array().map(Vec::len), Some(0), "{groups}");
    let aliases = sim_get(&env, "/cluster/firewall/aliases").await;
    assert_eq!(aliases.as_array().map(Vec::len), Some(0), "{aliases}");
    let pools = sim_get(&env, "/pools").await;
    assert_eq!(pools.as_array().map(Vec::len), Some(0), "{pools}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_a_firewall_change_that_can_drop_a_protected_guests_traffic() {
    let mut env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack("", "DROP", "web servers"));
    assert!(env.apply().await.status.success());
    env.write_config("protect:\n  discover: false\n  guests:\n    - vm_id: 300\n");

    // an accepting rule is additive: allowed, and applied
    env.write_tf(&stack(HTTPS_ALT, "DROP", "web servers"));
    let plan = env.plan_json().await;
    let rules = change(&plan, "proxmox_virtual_environment_firewall_rules.app");
    assert!(rules["blocked"].is_null(), "{rules}");
    let shown = env.plan().await;
    assert!(shown.contains("drops nothing that flows today"), "{shown}");
    assert!(env.apply().await.status.success());

    // a dropping rule, a policy that drops more: refused, and nothing reaches the cluster
    env.write_tf(&stack(DROP_SMTP, "REJECT", "web servers"));
    let plan = env.plan_json().await;
    for address in [
        "proxmox_virtual_environment_firewall_rules.app",
        "proxmox_virtual_environment_firewall_options.app",
    ] {
        let blocked = &change(&plan, address)["blocked"];
        assert_eq!(blocked["rule"], "link-reset", "{address}: {blocked}");
        let reason = blocked["reason"].as_str().expect("a reason");
        assert!(reason.contains("protected guest 300"), "{reason}");
    }
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    let rules = sim_get(&env, "/nodes/pve/qemu/300/firewall/rules").await;
    assert_eq!(rules.as_array().map(Vec::len), Some(3), "{rules}");
    assert_eq!(rules[2]["dport"], "8443", "{rules}");
    let options = sim_get(&env, "/nodes/pve/qemu/300/firewall/options").await;
    assert_eq!(options["policy_in"], "DROP", "{options}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nodes_dns_and_time_zone_are_set_and_left_alone_when_no_longer_declared() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    let settings = |domain: &str| {
        format!(
            r#"
resource "proxmox_virtual_environment_dns" "pve" {{
  node_name = "pve"
  domain    = "{domain}"
  servers   = ["1.1.1.1", "9.9.9.9"]
}}

resource "proxmox_virtual_environment_time" "pve" {{
  node_name = "pve"
  time_zone = "Europe/Berlin"
}}
"#
        )
    };
    env.write_tf(&settings("lab.example"));
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    let dns = sim_get(&env, "/nodes/pve/dns").await;
    assert_eq!(dns["search"], "lab.example", "{dns}");
    assert_eq!(dns["dns2"], "9.9.9.9", "{dns}");
    assert_eq!(
        sim_get(&env, "/nodes/pve/time").await["timezone"],
        "Europe/Berlin"
    );
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));

    env.write_tf(&settings("home.example"));
    let plan = env.plan_json().await;
    let dns = change(&plan, "proxmox_virtual_environment_dns.pve");
    assert_eq!(dns["attributes"][0]["path"], "domain", "{dns}");
    assert_eq!(dns["attributes"][0]["before"], "lab.example", "{dns}");
    assert!(env.apply().await.status.success());

    env.write_tf("");
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        sim_get(&env, "/nodes/pve/dns").await["search"],
        "home.example"
    );
}
