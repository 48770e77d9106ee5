//! QEMU VMs end to end on the simulator: a cloud-image template, k3s-style VMs cloned from it
//! with cloud-init, a plan that is empty after apply, `cpu.units` applied live without the VM
//! stopping, `serial_device` restarting it exactly once, and what atoll refuses where it is
//! written.

use crate::engine_support;

use engine_support::{Env, options, stdout, text};
use pvesim::GuestEvent;

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso, import, snippets]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
"#;

const TEMPLATE: &str = r#"
resource "proxmox_virtual_environment_vm" "template" {
  node_name = "pve"
  vm_id     = 9000
  name      = "noble-cloud"
  template  = true
  started   = false
  disk {
    interface    = "scsi0"
    datastore_id = "local-lvm"
    size         = 3
  }
  network_device {}
  initialization {
    datastore_id = "local-lvm"
  }
}
"#;

/// The k3s VMs; `serial` adds a serial port (the change that restarted the runner's VM).
fn k3s(units: u32, serial: bool) -> String {
    let serial = if serial {
        "  serial_device {\n    device = \"socket\"\n  }\n"
    } else {
        ""
    };
    format!(
        r#"{TEMPLATE}
resource "proxmox_virtual_environment_vm" "k3s" {{
  for_each  = {{ a = 201, b = 202, c = 203 }}
  node_name = "pve"
  vm_id     = each.value
  name      = "k3s-${{each.key}}"
  clone {{
    vm_id = 9000
  }}
  agent {{
    enabled = true
  }}
  cpu {{
    cores = 2
    units = {units}
  }}
  memory {{
    dedicated = 4096
  }}
  disk {{
    interface    = "scsi0"
    datastore_id = "local-lvm"
    size         = 20
  }}
  network_device {{
    bridge = "vmbr0"
  }}
  initialization {{
    ip_config {{
      ipv4 {{
        address = "10.0.0.${{each.value}}/24"
        gateway = "10.0.0.1"
      }}
    }}
    user_account {{
      username = "ubuntu"
      keys     = ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK0wmN/Cr3JXqmLW7u+g9pTh+wyqDHpSQEIQczXkVx9q me@laptop"]
    }}
  }}
{serial}}}
"#
    )
}

async fn env() -> Env {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(TEMPLATE);
    let out = env.apply().await;
    assert!(out.status.success(), "template: {}", text(&out));
    env
}

fn stops(env: &Env, vmid: u32) -> usize {
    env.sim
        .guest_events(vmid)
        .iter()
        .filter(|e| matches!(e, GuestEvent::Stopped))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cloned_cloud_init_vms_apply_and_the_next_plan_is_empty() {
    let env = env().await;
    let template = env.vm_config(9000).await;
    assert_eq!(template.get("template").map(String::as_str), Some("1"));
    env.write_tf(&k3s(100, false));
    let out = env.apply().await;
    assert!(out.status.success(), "apply: {}", text(&out));
    let vm = env.vm_config(202).await;
    assert_eq!(vm["cores"], "2");
    assert_eq!(vm["memory"], "4096");
    assert_eq!(vm["ipconfig0"], "gw=10.0.0.1,ip=10.0.0.202/24");
    assert_eq!(vm["ciuser"], "ubuntu");
    assert!(vm["scsi0"].contains("size=20G"), "{}", vm["scsi0"]);
    assert!(vm["tags"].contains("atoll"), "{}", vm["tags"]);
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpu_units_is_applied_live_and_serial_device_restarts_the_vm_once() {
    let env = env().await;
    env.write_tf(&k3s(100, false));
    assert!(env.apply().await.status.success());
    let before = stops(&env, 201);

    env.write_tf(&k3s(300, false));
    let plan = env.plan_json().await;
    let change = plan["resource_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["address"] == "proxmox_virtual_environment_vm.k3s[\"a\"]")
        .expect("k3s a")
        .clone();
    assert_eq!(change["disruption"], "live", "{change}");
    assert_eq!(change["attributes"][0]["path"], "cpu.units", "{change}");
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(env.vm_config(201).await["cpuunits"], "300");
    assert_eq!(stops(&env, 201), before, "cpu.units must not stop the VM");

    env.write_tf(&k3s(300, true));
    let plan = env.plan().await;
    assert!(plan.contains("restart"), "{plan}");
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(env.vm_config(201).await["serial0"], "socket");
    assert_eq!(stops(&env, 201), before + 1, "restarted exactly once");
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_atoll_refuses_is_an_error_where_it_is_written_and_nothing_reaches_proxmox() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    let cases = [
        ("  kvm_arguments = \"-cpu host\"\n", "kvm_arguments", 4),
        (
            "  disk {\n    interface = \"nvme0\"\n  }\n",
            "disk interface",
            5,
        ),
        (
            "  disk {\n    interface = \"scsi0\"\n    file_id = \"local:iso/x.img\"\n  }\n",
            "import_from",
            6,
        ),
    ];
    for (body, says, line) in cases {
        env.write_tf(&format!(
            "resource \"proxmox_virtual_environment_vm\" \"v\" {{\n  node_name = \"pve\"\n  vm_id = 300\n{body}}}\n"
        ));
        let out = env.atoll(&["plan"]).await;
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let said = text(&out);
        assert!(said.contains(says), "{said}");
        assert!(said.contains(&format!("main.tf line {line}")), "{said}");
    }
    assert!(env.sim.guest_events(300).is_empty());
    env.write_tf(
        "resource \"proxmox_virtual_environment_vm\" \"v\" {\n  node_name = \"pve\"\n  hostpci {\n    device = \"hostpci0\"\n    id = \"0000:01:00.0\"\n  }\n}\n",
    );
    let out = env.atoll(&["validate"]).await;
    assert!(
        text(&out).contains("Needs root on Proxmox VE"),
        "{}",
        text(&out)
    );
}

/// A running VM that ignores ACPI shutdown requests, with the config qemu-server holds for
/// [`stubborn`] (so only a pull request's change shows).
const STUBBORN: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local-lvm, type: lvmthin, content: [images], total: 4T}
guests:
  - vmid: 300
    type: qemu
    status: running
    ignores_acpi: true
    config:
      name: stubborn
      tags: atoll
      acpi: 1
      agent: 'enabled=0,fstrim_cloned_disks=0,type=virtio'
      bios: seabios
      boot: 'order=scsi0;net0'
      cores: 1
      cpu: qemu64
      sockets: 1
      numa: 0
      memory: 512
      balloon: 0
      protection: 0
      keyboard: en-us
      ostype: other
      scsihw: virtio-scsi-pci
      onboot: 1
      tablet: 1
      scsi0: 'local-lvm:vm-300-disk-0,size=8G'
      net0: 'virtio=BC:24:11:00:03:00,bridge=vmbr0,firewall=0'
"#;

fn stubborn(serial: bool) -> String {
    let serial = if serial { "  serial_device {}\n" } else { "" };
    format!(
        "resource \"proxmox_virtual_environment_vm\" \"s\" {{\n  node_name = \"pve\"\n  vm_id = 300\n  name = \"stubborn\"\n  disk {{\n    interface = \"scsi0\"\n    size = 8\n  }}\n  network_device {{}}\n{serial}}}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vm_that_ignores_acpi_is_never_stopped_hard_and_the_change_waits_pending() {
    let env = Env::with_scenario(STUBBORN, options(20)).await;
    env.write_tf(&stubborn(false));
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    env.write_tf(&stubborn(true));
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("never stops a guest hard"), "{said}");
    assert!(said.contains("restart it yourself"), "{said}");
    assert_eq!(stops(&env, 300), 0, "never stopped");
    let pending = env
        .config_of(atoll::proxmox::types::GuestKind::Qemu, 300, false)
        .await;
    assert_eq!(pending.get("serial0").map(String::as_str), Some("socket"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_and_the_vms_cloned_from_it_apply_together() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&k3s(100, false).replace(
        "    vm_id = 9000\n  }",
        "    vm_id = proxmox_virtual_environment_vm.template.vm_id\n  }",
    ));
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(env.vm_config(203).await["cores"], "2");
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}
