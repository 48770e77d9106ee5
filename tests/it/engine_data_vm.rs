//! VM data sources end to end on the simulator: a VM cloned from the template a
//! `proxmox_virtual_environment_vms` data source finds by name among other qemu guests, its
//! description from the deprecated `proxmox_virtual_environment_vm` (read in a second round,
//! with its VMID from the first), apply, and a next plan that says No changes; a VM that does
//! not exist is bpg's error on the data block.

use crate::engine_support;

use engine_support::{Env, options, stdout, text};

/// Decoys around the template atoll makes: a `noble-` VM that is no template, and a template
/// of another name.
const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso, import, snippets]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
guests:
  - {vmid: 8000, type: qemu, status: running, config: {name: noble-desktop, tags: image}}
  - {vmid: 8001, type: qemu, status: stopped, config: {name: jammy-cloud, template: 1, tags: image}}
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
}
"#;

const CLONE: &str = r#"
data "proxmox_virtual_environment_vms" "images" {
  node_name = "pve"
  filter {
    name   = "name"
    values = ["^noble-"]
    regex  = true
  }
  filter {
    name   = "template"
    values = ["true"]
  }
}

data "proxmox_virtual_environment_vm" "image" {
  node_name = "pve"
  vm_id     = data.proxmox_virtual_environment_vms.images.vms[0].vm_id
}

resource "proxmox_virtual_environment_vm" "web" {
  node_name   = "pve"
  vm_id       = 210
  name        = "web"
  description = "cloned from ${data.proxmox_virtual_environment_vm.image.name} (${data.proxmox_virtual_environment_vm.image.status})"
  clone {
    vm_id = data.proxmox_virtual_environment_vms.images.vms[0].vm_id
  }
  disk {
    interface    = "scsi0"
    datastore_id = "local-lvm"
    size         = 8
  }
  network_device {
    bridge = "vmbr0"
  }
}

output "templates" {
  value = [for vm in data.proxmox_virtual_environment_vms.images.vms : "${vm.vm_id}:${vm.name}"]
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vm_cloned_from_the_template_a_data_source_finds_applies_and_replans_empty() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(TEMPLATE);
    let out = env.apply().await;
    assert!(out.status.success(), "template: {}", text(&out));

    env.write_tf(&format!("{TEMPLATE}{CLONE}"));
    let plan = env.atoll(&["plan"]).await;
    assert!(plan.status.success(), "plan: {}", text(&plan));
    let said = text(&plan);
    assert!(said.contains("Deprecated Resource"), "{said}");
    assert!(said.contains("Use \"proxmox_vm\" instead"), "{said}");
    assert!(said.contains("cloned from noble-cloud (stopped)"), "{said}");

    let out = env.apply().await;
    assert!(out.status.success(), "apply: {}", text(&out));
    assert!(
        stdout(&out).contains("templates = [\n  \"9000:noble-cloud\",\n]"),
        "{}",
        text(&out)
    );
    let web = env.vm_config(210).await;
    assert_eq!(web["description"], "cloned from noble-cloud (stopped)");
    assert!(web["scsi0"].contains("size=8G"), "{}", web["scsi0"]);
    let source = env.vm_config(9000).await;
    assert_eq!(source.get("template").map(String::as_str), Some("1"));

    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vm_data_source_for_a_missing_vm_is_bpgs_error_on_the_data_block() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(
        "data \"proxmox_virtual_environment_vm\" \"gone\" {\n  node_name = \"pve\"\n  vm_id     = 4242\n}\n\noutput \"name\" {\n  value = data.proxmox_virtual_environment_vm.gone.name\n}\n",
    );
    let out = env.atoll(&["plan"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("Error: VM 4242 not found on node \"pve\""),
        "{said}"
    );
    assert!(said.contains("on main.tf line 1"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vms_data_source_filters_the_scenarios_qemu_guests_by_tag_and_status() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(
        r#"
data "proxmox_virtual_environment_vms" "running_images" {
  tags = ["image"]
  filter {
    name   = "status"
    values = ["running", "paused"]
  }
}

resource "terraform_data" "found" {
  input = [for vm in data.proxmox_virtual_environment_vms.running_images.vms : "${vm.vm_id} ${vm.name} ${vm.node_name} ${join(",", vm.tags)} ${vm.template}"]
}
"#,
    );
    let out = env.atoll(&["plan"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let said = stdout(&out);
    assert!(
        said.contains("\"8000 noble-desktop pve image false\""),
        "{said}"
    );
    assert!(!said.contains("8001"), "{said}");
}
