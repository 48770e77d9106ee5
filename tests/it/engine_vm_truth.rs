//! Plan truthfulness for VMs: for each VM attribute, on a running and a stopped VM, with the
//! `hotplug` option at PVE's default and with `cpu,memory` added, the effect the plan predicts
//! equals what the simulator (qemu-server's rules) did: live = in `config?current=1` at once;
//! restart = in `/pending` until the restart; link-reset = the link was re-plugged. Prints the
//! table.

use crate::engine_support;

use std::collections::BTreeMap;

use atoll::proxmox::types::GuestKind;
use engine_support::truth::{observe, pending_keys, print_table};
use engine_support::{Env, options, stdout, text};

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500, vmbr1: 1500}
    storages:
      - {id: local, type: dir, content: [iso, snippets]}
      - {id: local-lvm, type: lvmthin, content: [images], total: 8T}
"#;

const DEFAULT_HOTPLUG: &str = "network,disk,usb";
const FULL_HOTPLUG: &str = "network,disk,usb,memory,cpu";

/// One VM with every placeholder `@name@` filled from `values`.
const VM: &str = r#"
resource "proxmox_virtual_environment_vm" "t@id@" {
  node_name       = "pve"
  vm_id           = @id@
  started         = @started@
  name            = "@name@"
  description     = "@description@"
  tags            = [@tags@]
  on_boot         = @onboot@
  hotplug         = "@hotplug@"
  bios            = "@bios@"
  machine         = "@machine@"
  scsi_hardware   = "@scsihw@"
  keyboard_layout = "@keyboard@"
  tablet_device   = @tablet@
  agent {
    enabled = @agent@
  }
  cpu {
    cores      = @cores@
    sockets    = @sockets@
    type       = "@cputype@"
    units      = @units@
    limit      = @limit@
    hotplugged = @vcpus@
    numa       = @numa@
  }
  memory {
    dedicated = @memory@
    floating  = @balloon@
  }
  operating_system {
    type = "@ostype@"
  }
  disk {
    interface    = "scsi0"
    datastore_id = "local-lvm"
    size         = @size@
  }
  @disk2@
  network_device {
    bridge     = "@bridge@"
    vlan_id    = @vlan@
    firewall   = @firewall@
    rate_limit = @rate@
    model      = "@model@"
  }
  @net2@
  initialization {
    datastore_id = "local-lvm"
    ip_config {
      ipv4 {
        address = "@ip@"
        gateway = "10.0.0.1"
      }
    }
    user_account {
      username = "@user@"
    }
  }
  @serial@
  vga {
    type = "@vga@"
  }
  startup {
    order = @order@
  }
}
"#;

fn defaults(hotplug: &'static str) -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("name", "vm"),
        ("description", "base"),
        ("tags", "\"a\""),
        ("onboot", "true"),
        ("hotplug", hotplug),
        ("bios", "seabios"),
        ("machine", "q35"),
        ("scsihw", "virtio-scsi-pci"),
        ("keyboard", "en-us"),
        ("tablet", "true"),
        ("agent", "false"),
        ("cores", "2"),
        ("sockets", "1"),
        ("cputype", "x86-64-v2-AES"),
        ("units", "100"),
        ("limit", "0"),
        ("vcpus", "1"),
        ("numa", "true"),
        ("memory", "2048"),
        ("balloon", "1024"),
        ("ostype", "l26"),
        ("size", "8"),
        ("disk2", ""),
        ("bridge", "vmbr0"),
        ("vlan", "0"),
        ("firewall", "false"),
        ("rate", "0"),
        ("model", "virtio"),
        ("net2", ""),
        ("ip", "10.0.0.5/24"),
        ("user", "ubuntu"),
        ("serial", ""),
        ("vga", "std"),
        ("order", "1"),
    ])
}

/// (attribute path, placeholder, new value)
const CASES: &[(&str, &str, &str)] = &[
    ("cpu.units", "units", "300"),
    ("cpu.limit", "limit", "2"),
    ("cpu.cores", "cores", "4"),
    ("cpu.sockets", "sockets", "2"),
    ("cpu.type", "cputype", "host"),
    ("cpu.numa", "numa", "false"),
    ("cpu.hotplugged", "vcpus", "2"),
    ("memory.dedicated", "memory", "4096"),
    ("memory.floating (size)", "balloon", "1536"),
    ("memory.floating (off)", "balloon", "0"),
    ("name", "name", "vm2"),
    ("description", "description", "changed"),
    ("tags", "tags", "\"a\", \"b\""),
    ("on_boot", "onboot", "false"),
    ("startup.order", "order", "2"),
    ("bios", "bios", "ovmf"),
    ("machine", "machine", "pc"),
    ("scsi_hardware", "scsihw", "virtio-scsi-single"),
    ("keyboard_layout", "keyboard", "de"),
    ("tablet_device", "tablet", "false"),
    ("agent.enabled", "agent", "true"),
    ("operating_system.type", "ostype", "win11"),
    ("vga.type", "vga", "qxl"),
    ("serial_device (added)", "serial", "serial_device {}"),
    ("disk.size", "size", "10"),
    (
        "disk (added)",
        "disk2",
        "disk {\n    interface = \"scsi1\"\n    datastore_id = \"local-lvm\"\n    size = 2\n  }",
    ),
    ("network_device.bridge", "bridge", "vmbr1"),
    ("network_device.vlan_id", "vlan", "10"),
    ("network_device.firewall", "firewall", "true"),
    ("network_device.rate_limit", "rate", "10"),
    ("network_device.model", "model", "e1000"),
    (
        "network_device (added)",
        "net2",
        "network_device {\n    bridge = \"vmbr0\"\n  }",
    ),
    ("initialization.ip_config.ipv4.address", "ip", "10.0.0.6/24"),
    ("initialization.user_account.username", "user", "admin"),
];

struct Case {
    attribute: &'static str,
    running: bool,
    hotplug: &'static str,
    id: u32,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (h, hotplug) in [DEFAULT_HOTPLUG, FULL_HOTPLUG].into_iter().enumerate() {
        for (i, (attribute, _, _)) in CASES.iter().enumerate() {
            for running in [true, false] {
                let id = 2000 + 200 * h as u32 + 2 * i as u32 + u32::from(!running);
                out.push(Case {
                    attribute,
                    running,
                    hotplug,
                    id,
                });
            }
        }
    }
    out
}

fn tf(changed: bool) -> String {
    let mut all = String::new();
    for (h, hotplug) in [DEFAULT_HOTPLUG, FULL_HOTPLUG].into_iter().enumerate() {
        for (i, (_, key, value)) in CASES.iter().enumerate() {
            for running in [true, false] {
                let id = 2000 + 200 * h as u32 + 2 * i as u32 + u32::from(!running);
                let mut values = defaults(hotplug);
                if changed {
                    values.insert(key, value);
                }
                let mut vm = VM
                    .replace("@id@", &id.to_string())
                    .replace("@started@", &running.to_string());
                for (name, value) in values {
                    vm = vm.replace(&format!("@{name}@"), value);
                }
                all.push_str(&vm);
            }
        }
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn predicted_effect_equals_what_qemu_server_did_for_every_vm_attribute() {
    let env = Env::with_scenario(SCENARIO, options(5)).await;
    env.write_tf(&tf(false));
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(env.plan().await.contains("No changes."), "base is stable");
    let cases = cases();
    let mut before = BTreeMap::new();
    for case in &cases {
        let events = env.sim.guest_events(case.id).len();
        before.insert(case.id, (events, env.vm_config(case.id).await));
    }
    env.write_tf(&tf(true));
    let plan = env.plan_json().await;
    let out = env
        .atoll(&["apply", "--auto-approve", "--restart", "never"])
        .await;
    assert!(out.status.success(), "{}", text(&out));
    let mut rows = Vec::new();
    for case in &cases {
        let change = plan["resource_changes"]
            .as_array()
            .expect("changes")
            .iter()
            .find(|c| c["vm_id"] == case.id)
            .expect("a change per case");
        let predicted = change["disruption"].as_str().unwrap_or("none").to_owned();
        let keys: Vec<String> = change["attributes"]
            .as_array()
            .expect("attributes")
            .iter()
            .filter_map(|a| a["pve_key"].as_str().map(str::to_owned))
            .collect();
        let (seen, config_before) = &before[&case.id];
        let events = env.sim.guest_events(case.id)[*seen..].to_vec();
        let pending = pending_keys(&env, GuestKind::Qemu, case.id, &keys).await;
        let now = env.vm_config(case.id).await;
        let changed = keys.iter().any(|k| now.get(k) != config_before.get(k));
        let observed = observe(&events, &pending, changed, false);
        rows.push((
            case.attribute,
            case.running,
            case.hotplug,
            predicted,
            observed,
        ));
    }
    let disagreements = print_table(&rows);
    assert!(
        disagreements.is_empty(),
        "disagreements: {disagreements:#?}"
    );
    // What waited for a restart is applied by one; then nothing is left.
    let out = env.apply().await;
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(env.plan().await.contains("No changes."));
}
