//! Container gaps found on real projects, each end to end on the simulator: plan on an empty
//! cluster, apply, a second plan with no changes, then a change whose predicted effect is what
//! the simulator did. A mount point that grows (and one that would shrink), a template
//! container, a rootfs's `replicate`, and containers cloned from a template.

use crate::engine_support;

use atoll::proxmox::client::PowerAction;
use atoll::proxmox::types::{GuestKind, VmId};
use engine_support::{Env, node, options, stdout, text};
use pvesim::GuestEvent;

use crate::support::TEMPLATE;

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso], templates: [debian-12-standard_12.7-1_amd64.tar.zst]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
      - {id: thick, type: lvm, content: [rootdir, images], total: 1T}
"#;

/// A container with `extra` inside its resource block.
fn container(id: u32, extra: &str) -> String {
    format!(
        r#"
resource "proxmox_virtual_environment_container" "c{id}" {{
  node_name    = "pve"
  vm_id        = {id}
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
    name = "eth0"
  }}
{extra}
}}
"#
    )
}

fn mount_point(size: &str) -> String {
    mount_point_on("local-lvm", size)
}

fn mount_point_on(storage: &str, size: &str) -> String {
    format!(
        "  mount_point {{\n    volume = \"{storage}\"\n    size   = \"{size}\"\n    path   = \"/mnt/data\"\n  }}\n"
    )
}

async fn env() -> Env {
    Env::with_scenario(SCENARIO, options(10)).await
}

async fn assert_no_changes(env: &Env) {
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}

fn change_of(plan: &serde_json::Value, vmid: u32) -> &serde_json::Value {
    plan["resource_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["vm_id"] == vmid)
        .expect("a change for the guest")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_growing_mount_point_is_resized_live_and_a_shrinking_one_is_said_to_replace() {
    let env = env().await;
    env.write_tf(&container(300, &mount_point("1G")));
    env.apply().await;
    assert!(env.live_config(300).await["mp0"].contains("size=1G"));
    assert_no_changes(&env).await;
    let stops_before = env.sim.guest_events(300).len();

    env.write_tf(&container(300, &mount_point("3G")));
    let plan = env.plan_json().await;
    let change = change_of(&plan, 300);
    assert_eq!(change["disruption"], "live", "{change}");
    assert_eq!(change["attributes"][0]["path"], "mount_point[0].size");
    env.apply().await;
    let mp0 = env.live_config(300).await["mp0"].clone();
    assert!(mp0.contains("size=3G"), "{mp0}");
    assert!(mp0.starts_with("local-lvm:vm-300-disk-1"), "{mp0}");
    let stopped = env.sim.guest_events(300)[stops_before..]
        .iter()
        .any(|e| matches!(e, GuestEvent::Stopped));
    assert!(!stopped, "a live resize must not stop the container");
    assert_no_changes(&env).await;

    env.write_tf(&container(300, &mount_point("2G")));
    let plan = env.plan().await;
    assert!(plan.contains("must be replaced"), "{plan}");
    assert!(plan.contains("unable to shrink disk size"), "{plan}");
}

/// pve-container keeps a running container's mount point change pending and, when it is
/// applied, allocates the new volume and keeps the old one as `unusedN`
/// (`vmconfig_hotplug_pending` "don't try to hotplug over existing mp",
/// `apply_pending_mountpoint`): a restart, not a new container, and the data stays behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_point_moved_to_another_storage_restarts_the_container_and_keeps_the_old_volume() {
    let env = env().await;
    env.write_tf(&container(301, &mount_point("1G")));
    env.apply().await;
    let old = env.live_config(301).await["mp0"].clone();
    let old_volume = old.split(',').next().expect("volume").to_owned();
    assert!(old_volume.starts_with("local-lvm:vm-301-disk-"), "{old}");
    let rootfs = env.live_config(301).await["rootfs"].clone();

    env.write_tf(&container(301, &mount_point_on("thick", "1G")));
    let plan = env.plan_json().await;
    let change = change_of(&plan, 301);
    assert_eq!(
        (&change["disruption"], &change["actions"]),
        (
            &serde_json::json!("restart"),
            &serde_json::json!(["update"])
        ),
        "{change}"
    );
    let text = env.plan().await;
    assert!(
        text.contains("mount_point[0] moves to thick")
            && text.contains("copies no data")
            && text.contains(&format!("{old_volume} stays attached as an unused disk")),
        "{text}"
    );

    let events_before = env.sim.guest_events(301).len();
    env.apply().await;
    let config = env.live_config(301).await;
    assert!(
        config["mp0"].starts_with("thick:vm-301-disk-"),
        "{config:?}"
    );
    assert!(config["mp0"].contains("mp=/mnt/data"), "{config:?}");
    assert_eq!(config.get("unused0"), Some(&old_volume), "{config:?}");
    let events = &env.sim.guest_events(301)[events_before..];
    assert!(
        events.iter().any(|e| matches!(e, GuestEvent::Stopped)),
        "the change waits for a restart: {events:?}"
    );
    assert_eq!(
        config["rootfs"], rootfs,
        "the container is kept, not made anew"
    );
    assert_no_changes(&env).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_container_is_converted_never_started_and_stays_planned_empty() {
    let env = env().await;
    env.write_tf(&container(9000, "  template = true\n"));
    env.apply().await;
    let config = env.live_config(9000).await;
    assert_eq!(config.get("template").map(String::as_str), Some("1"));
    assert!(
        config["rootfs"].starts_with("local-lvm:base-9000-disk-0"),
        "{}",
        config["rootfs"]
    );
    let started = env
        .sim
        .guest_events(9000)
        .iter()
        .any(|e| matches!(e, GuestEvent::Started));
    assert!(!started, "a template never starts");
    assert_no_changes(&env).await;
    let vmid = VmId::new(9000).expect("vmid");
    let refused = env
        .client
        .guest_power(&node(), GuestKind::Lxc, vmid, PowerAction::Start)
        .await;
    let message = match refused {
        Ok(upid) => env
            .client
            .wait_task(&upid)
            .await
            .expect_err("starting a template fails")
            .to_string(),
        Err(e) => e.to_string(),
    };
    assert!(
        message.contains("you can't start a CT if it's a template"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_root_disk_replicate_flag_reaches_proxmox() {
    let env = env().await;
    let replicated = container(301, "").replace(
        "    size         = 4\n",
        "    size         = 4\n    replicate    = true\n",
    );
    env.write_tf(&replicated);
    env.apply().await;
    let rootfs = env.live_config(301).await["rootfs"].clone();
    assert!(rootfs.contains("replicate=1"), "{rootfs}");
    assert_no_changes(&env).await;
}

fn clones(cores: u32) -> String {
    let template = container(9000, "  template = true\n  started = false\n");
    format!(
        r#"{template}
resource "proxmox_virtual_environment_container" "linked" {{
  node_name = "pve"
  vm_id     = 310
  clone {{
    vm_id = 9000
    full  = false
  }}
  cpu {{
    cores = {cores}
  }}
  disk {{
    size = 8
  }}
  network_interface {{
    name = "eth0"
  }}
  initialization {{
    hostname = "linked"
  }}
}}

resource "proxmox_virtual_environment_container" "full" {{
  node_name = "pve"
  vm_id     = 311
  clone {{
    vm_id        = 9000
    datastore_id = "local-lvm"
  }}
  network_interface {{
    name = "eth0"
  }}
  initialization {{
    hostname = "full"
  }}
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn containers_cloned_from_a_template_apply_and_then_plan_empty() {
    let env = env().await;
    env.write_tf(&clones(1));
    let out = env.apply().await;
    assert!(stdout(&out).contains("cloned CT 310"), "{}", text(&out));
    let template_mac = env.live_config(9000).await["net0"].clone();
    let linked = env.live_config(310).await;
    assert_eq!(linked["hostname"], "linked");
    assert!(
        linked["rootfs"].starts_with("local-lvm:vm-310-disk-0")
            && linked["rootfs"].contains("size=8G"),
        "linked clone grown to 8G: {}",
        linked["rootfs"]
    );
    assert_ne!(linked["net0"], template_mac, "a clone gets a new MAC");
    let full = env.live_config(311).await;
    assert_eq!(full["hostname"], "full");
    assert!(full["rootfs"].contains("size=4G"), "{}", full["rootfs"]);
    assert_no_changes(&env).await;

    env.write_tf(&clones(2));
    let plan = env.plan_json().await;
    let change = change_of(&plan, 310);
    assert_eq!(change["disruption"], "live", "{change}");
    env.apply().await;
    assert_eq!(env.live_config(310).await["cores"], "2");
    assert_no_changes(&env).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_containers_ipv4_and_ipv6_are_read_from_its_interfaces() {
    let env = env().await;
    let addressed = container(
        304,
        "  initialization {\n    ip_config {\n      ipv4 {\n        address = \"10.0.0.5/24\"\n        gateway = \"10.0.0.1\"\n      }\n    }\n  }\n",
    );
    let outputs = "output \"ip\" {\n  value = proxmox_virtual_environment_container.c304.ipv4[\"eth0\"]\n}\n\noutput \"families\" {\n  value = keys(proxmox_virtual_environment_container.c304.ipv6)\n}\n";
    env.write_tf(&format!("{addressed}{outputs}"));
    env.apply().await;
    assert_no_changes(&env).await;

    // Another container reads the first one's address: known at plan, from its interfaces.
    let peer = container(
        305,
        "  description = \"peer of ${proxmox_virtual_environment_container.c304.ipv4[\"eth0\"]}\"\n",
    );
    env.write_tf(&format!("{addressed}{peer}{outputs}"));
    let plan = env.plan_json().await;
    let description = change_of(&plan, 305)["attributes"]
        .as_array()
        .expect("attributes")
        .iter()
        .find(|a| a["path"] == "description")
        .expect("a description")
        .clone();
    assert_eq!(description["after"], "peer of 10.0.0.5", "{description}");
    let out = env.apply().await;
    let said = stdout(&out);
    assert!(said.contains("ip = \"10.0.0.5\""), "{said}");
    assert!(said.contains("\"eth0\""), "{said}");
    assert_eq!(
        env.live_config(305).await["description"].trim_end(),
        "peer of 10.0.0.5"
    );
    assert_no_changes(&env).await;
}

fn ipv4(address: &str) -> String {
    format!(
        "  initialization {{\n    hostname = \"web\"\n    ip_config {{\n      ipv4 {{\n        address = \"{address}\"\n      }}\n    }}\n  }}\n"
    )
}

/// pve-container `update_ipconfig` removes a running container's static address at once and
/// starts no DHCP client unless the interface is `host-managed`: live, and the plan says what
/// the guest is left with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_to_dhcp_is_live_and_the_plan_says_the_container_waits_for_its_own_client() {
    let env = env().await;
    env.write_tf(&container(302, &ipv4("10.0.0.5/24")));
    env.apply().await;
    env.write_tf(&container(302, &ipv4("dhcp")));
    let plan = env.plan_json().await;
    assert_eq!(change_of(&plan, 302)["disruption"], "live");
    let text = env.plan().await;
    assert!(
        text.contains("loses 10.0.0.5/24 at once and has no IPv4 address on eth0"),
        "{text}"
    );
    env.apply().await;
    assert!(env.live_config(302).await["net0"].contains("ip=dhcp"));
    assert_no_changes(&env).await;
}

/// The same rule at plan time: the plan is refused on the container, with PVE's words, before
/// anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_managed_nic_with_slaac_is_refused_at_plan() {
    let env = env().await;
    let tf = container(303, "").replace(
        "    name = \"eth0\"\n",
        "    name = \"eth0\"\n    host_managed = true\n",
    );
    let tf = tf.replace(
        "  network_interface {",
        "  initialization {\n    ip_config {\n      ipv6 {\n        address = \"auto\"\n      }\n    }\n  }\n  network_interface {",
    );
    env.write_tf(&tf);
    let out = env.atoll(&["plan"]).await;
    assert!(!out.status.success());
    let shown = text(&out);
    assert!(
        shown.contains("SLAAC is not supported for host-managed network configuration"),
        "{shown}"
    );
    assert!(env.lxc_ids().await.is_empty());
}
