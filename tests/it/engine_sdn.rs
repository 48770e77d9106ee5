//! SDN end to end on the simulator: zones, vnets, a subnet and the applier; apply, then an
//! empty plan; a vnet change whose effect (its guest's link re-plugged) is what the
//! simulator did, and a change nobody is on that is `live`; a destroy; an invalid subnet
//! refused with Proxmox VE's message and nothing applied; and the guard refusing a change
//! that re-plugs a protected guest's link.

use crate::engine_support;

use engine_support::{Env, change, options, sim_get, stdout, text};
use pvesim::GuestEvent;

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso, import, snippets]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
"#;

/// A VLAN zone with a vnet a running VM is on, a simple zone with a vnet and a subnet
/// nobody is on, and the applier.
fn stack(alias: &str, iso_mtu: u32, gateway: &str) -> String {
    format!(
        r#"
resource "proxmox_sdn_zone_vlan" "lan" {{
  id     = "lan"
  bridge = "vmbr0"
}}

resource "proxmox_sdn_zone_simple" "iso" {{
  id  = "iso"
  mtu = {iso_mtu}
}}

resource "proxmox_sdn_vnet" "web" {{
  id    = "web"
  zone  = proxmox_sdn_zone_vlan.lan.id
  tag   = 10
  alias = "{alias}"
}}

resource "proxmox_virtual_environment_sdn_vnet" "lab" {{
  id   = "lab"
  zone = proxmox_sdn_zone_simple.iso.id
}}

resource "proxmox_sdn_subnet" "lab" {{
  vnet    = proxmox_virtual_environment_sdn_vnet.lab.id
  cidr    = "10.9.0.0/24"
  gateway = "{gateway}"
  snat    = true
  dhcp_range = {{
    start_address = "10.9.0.10"
    end_address   = "10.9.0.20"
  }}
}}

resource "proxmox_sdn_applier" "apply" {{}}

resource "proxmox_virtual_environment_vm" "app" {{
  node_name = "pve"
  vm_id     = 300
  name      = "app"
  started   = true
  disk {{
    interface    = "scsi0"
    datastore_id = "local-lvm"
    size         = 4
  }}
  network_device {{
    bridge = proxmox_sdn_vnet.web.id
  }}
}}
"#
    )
}

fn replugs(env: &Env) -> usize {
    let events = env.sim.guest_events(300);
    events
        .iter()
        .filter(|e| matches!(e, GuestEvent::LinkReplugged(_)))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zones_vnets_a_subnet_and_the_applier_apply_and_the_next_plan_is_empty() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack("web servers", 1500, "10.9.0.1"));
    let out = env.apply().await;
    assert!(out.status.success(), "apply: {}", text(&out));
    assert!(
        text(&out).contains("Deprecated Resource"),
        "the long name is deprecated: {}",
        text(&out)
    );

    let vnet = sim_get(&env, "/cluster/sdn/vnets/web?pending=1").await;
    assert!(vnet["state"].is_null(), "applied, nothing pending: {vnet}");
    assert_eq!(vnet["alias"], "web servers", "{vnet}");
    let subnet = sim_get(&env, "/cluster/sdn/vnets/lab/subnets/iso-10.9.0.0-24").await;
    assert_eq!(subnet["gateway"], "10.9.0.1", "{subnet}");
    assert_eq!(subnet["snat"], 1, "{subnet}");
    let bridges = env.sim.bridges("pve");
    assert!(bridges.contains(&"web".to_owned()), "{bridges:?}");
    assert!(bridges.contains(&"lab".to_owned()), "{bridges:?}");
    let vm = sim_get(&env, "/nodes/pve/qemu/300/config").await;
    assert!(
        vm["net0"]
            .as_str()
            .is_some_and(|n| n.contains("bridge=web")),
        "{vm}"
    );

    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vnet_change_replugs_its_guests_as_planned_and_destroy_removes_everything() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack("web servers", 1500, "10.9.0.1"));
    assert!(env.apply().await.status.success());
    let before = replugs(&env);

    // the vnet a running guest is on: link-reset, naming the guest
    env.write_tf(&stack("web", 1500, "10.9.0.1"));
    let plan = env.plan_json().await;
    let web = change(&plan, "proxmox_sdn_vnet.web");
    assert_eq!(web["actions"], serde_json::json!(["update"]), "{web}");
    assert_eq!(web["disruption"], "link-reset", "{web}");
    assert!(web.to_string().contains("VM 300"), "{web}");
    let applier = change(&plan, "proxmox_sdn_applier.apply");
    assert_eq!(
        applier["actions"],
        serde_json::json!(["update"]),
        "{applier}"
    );
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        replugs(&env),
        before + 1,
        "the link was re-plugged as planned"
    );
    assert_eq!(
        sim_get(&env, "/cluster/sdn/vnets/web").await["alias"],
        "web"
    );

    // a zone and a subnet nobody is on: live, and no guest is touched
    env.write_tf(&stack("web", 1400, "10.9.0.254"));
    let plan = env.plan_json().await;
    for address in ["proxmox_sdn_zone_simple.iso", "proxmox_sdn_subnet.lab"] {
        let c = change(&plan, address);
        assert_eq!(c["disruption"], "live", "{address}: {c}");
    }
    assert!(env.apply().await.status.success());
    assert_eq!(replugs(&env), before + 1, "nothing re-plugged");
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));

    env.write_tf("");
    let out = env.apply().await;
    assert!(out.status.success(), "destroy: {}", text(&out));
    for path in ["/cluster/sdn/zones", "/cluster/sdn/vnets"] {
        let list = sim_get(&env, path).await;
        assert_eq!(list.as_array().map(Vec::len), Some(0), "{path}: {list}");
    }
    let running = sim_get(&env, "/cluster/sdn/vnets?running=1").await;
    assert_eq!(
        running.as_array().map(Vec::len),
        Some(0),
        "applied: {running}"
    );
    assert!(!env.sim.bridges("pve").contains(&"lab".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_subnet_is_refused_with_pves_message_and_nothing_is_applied() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack("web servers", 1500, "10.8.0.1"));
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("gateway: 10.8.0.1 is not in subnet 10.9.0.0/24"),
        "{}",
        text(&out)
    );
    let subnets = sim_get(&env, "/cluster/sdn/vnets/lab/subnets").await;
    assert_eq!(subnets.as_array().map(Vec::len), Some(0), "{subnets}");
    let running = sim_get(&env, "/cluster/sdn/vnets?running=1").await;
    assert_eq!(
        running.as_array().map(Vec::len),
        Some(0),
        "not applied: {running}"
    );
    assert!(!env.sim.bridges("pve").contains(&"lab".to_owned()));

    // fixed, the next apply finishes the job
    env.write_tf(&stack("web servers", 1500, "10.9.0.1"));
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(env.sim.bridges("pve").contains(&"lab".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_an_sdn_change_that_replugs_a_protected_guest() {
    let mut env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack("web servers", 1500, "10.9.0.1"));
    assert!(env.apply().await.status.success());
    env.write_config("protect:\n  discover: false\n  guests:\n    - vm_id: 300\n");

    // the subnet's vnet nobody protected is on: allowed
    env.write_tf(&stack("web servers", 1500, "10.9.0.254"));
    let plan = env.plan_json().await;
    assert!(change(&plan, "proxmox_sdn_subnet.lab")["blocked"].is_null());
    assert!(env.apply().await.status.success());

    env.write_tf(&stack("web", 1500, "10.9.0.254"));
    let plan = env.plan_json().await;
    let blocked = &change(&plan, "proxmox_sdn_vnet.web")["blocked"];
    assert_eq!(blocked["rule"], "link-reset", "{blocked}");
    let reason = blocked["reason"].as_str().expect("a reason");
    assert!(reason.contains("protected guest 300"), "{reason}");
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(
        sim_get(&env, "/cluster/sdn/vnets/web").await["alias"],
        "web servers"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdn_data_sources_read_zones_vnets_and_a_subnet() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    let stack = stack("web servers", 1500, "10.9.0.1");
    env.write_tf(&stack);
    assert!(env.apply().await.status.success());
    let reads = r#"
data "proxmox_sdn_vnet" "web" {
  id = "web"
}

data "proxmox_sdn_zones" "vlans" {
  type = "vlan"
}

data "proxmox_sdn_zone_simple" "iso" {
  id = "iso"
}

data "proxmox_sdn_subnet" "lab" {
  vnet = "lab"
  cidr = "10.9.0.0/24"
}

data "proxmox_virtual_environment_sdn_vnets" "all" {}

resource "proxmox_virtual_environment_pool" "facts" {
  pool_id = "facts"
  comment = join("|", [
    data.proxmox_sdn_vnet.web.alias,
    data.proxmox_sdn_zones.vlans.zones[0].bridge,
    data.proxmox_sdn_zone_simple.iso.mtu,
    data.proxmox_sdn_zone_simple.iso.pending,
    data.proxmox_sdn_subnet.lab.gateway,
    data.proxmox_sdn_subnet.lab.dhcp_range.start_address,
    length(data.proxmox_virtual_environment_sdn_vnets.all.vnets),
  ])
}
"#;
    env.write_tf(&format!("{stack}{reads}"));
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    let pool = sim_get(&env, "/pools/facts").await;
    assert_eq!(
        pool["comment"], "web servers|vmbr0|1500|false|10.9.0.1|10.9.0.10|2",
        "{pool}"
    );
}
