//! The data sources that read the cluster beyond its guests, end to end on the simulator: a
//! container placed on the second node `proxmox_virtual_environment_nodes` lists, with its
//! template from `proxmox_files`, its disk on the store `proxmox_datastores` finds and its
//! description from DNS, a pool and the version; apply, and a next plan that says No changes.
//! Node DNS, hosts and time feed expressions; a read PVE refuses is the error on the block.

use atoll::proxmox::types::{GuestKind, NodeName, VmId};

use crate::engine_support;

use engine_support::{Env, options, stdout, text};

const SCENARIO: &str = r#"
nodes:
  - name: pve
  - name: pve2
    settings:
      search: lab.example
      dns: [192.0.2.53, 192.0.2.54]
      hosts: "127.0.0.1 localhost\n192.0.2.11 pve2.lab.example pve2\n"
      timezone: Europe/Berlin
      utc_offset: 3600
guests:
  - {vmid: 8000, type: lxc, node: pve2, status: running, config: {hostname: db, tags: db;prod}}
pools:
  - {poolid: prod, comment: production, vms: [8000]}
"#;

const CONTAINER: &str = r#"
data "proxmox_virtual_environment_nodes" "all" {}

data "proxmox_virtual_environment_dns" "second" {
  node_name = data.proxmox_virtual_environment_nodes.all.names[1]
}

data "proxmox_files" "templates" {
  node_name    = "pve2"
  datastore_id = "local"
  content_type = "vztmpl"
}

data "proxmox_datastores" "rootfs" {
  node_name = data.proxmox_virtual_environment_nodes.all.names[1]
  filters = {
    content_types = ["rootdir"]
  }
}

data "proxmox_virtual_environment_pools" "all" {}

data "proxmox_virtual_environment_pool" "first" {
  pool_id = data.proxmox_virtual_environment_pools.all.pool_ids[0]
}

data "proxmox_virtual_environment_version" "pve" {}

data "proxmox_virtual_environment_containers" "db" {
  tags = ["db"]
}

resource "proxmox_virtual_environment_container" "web" {
  node_name    = data.proxmox_virtual_environment_nodes.all.names[1]
  vm_id        = 300
  unprivileged = true
  description  = "in ${data.proxmox_virtual_environment_dns.second.domain} via ${join(",", data.proxmox_virtual_environment_dns.second.servers)}, next to ${data.proxmox_virtual_environment_pool.first.members[0].id} (${data.proxmox_virtual_environment_pool.first.comment}) on PVE ${data.proxmox_virtual_environment_version.pve.release}, db ${data.proxmox_virtual_environment_containers.db.containers[0].name}"
  operating_system {
    template_file_id = data.proxmox_files.templates.files[0].id
    type             = "debian"
  }
  disk {
    datastore_id = data.proxmox_datastores.rootfs.datastores[0].id
    size         = 8
  }
}
"#;

const DESCRIPTION: &str =
    "in lab.example via 192.0.2.53,192.0.2.54, next to lxc/8000 (production) on PVE 9.2, db db";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_placed_and_described_by_cluster_data_sources_applies_and_replans_empty() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(CONTAINER);
    let plan = env.atoll(&["plan"]).await;
    assert!(plan.status.success(), "plan: {}", text(&plan));
    let said = text(&plan);
    assert!(said.contains(DESCRIPTION), "{said}");
    assert!(said.contains("Use \"proxmox_version\" instead"), "{said}");

    env.apply().await;
    let pve2: NodeName = "pve2".parse().expect("node");
    let guests = env.client.cluster_guests().await.expect("guests");
    let web = guests
        .iter()
        .find(|g| g.vmid.get() == 300)
        .expect("container 300");
    assert_eq!(web.node, pve2);
    let config = env
        .client
        .guest_config(&pve2, GuestKind::Lxc, VmId::new(300).expect("vmid"), true)
        .await
        .expect("config");
    // PVE keeps a description as comment lines, ending in a newline.
    let description = config.get("description").unwrap_or_default();
    assert_eq!(description.trim_end(), DESCRIPTION);
    let rootfs = config.get("rootfs").unwrap_or_default();
    assert!(rootfs.starts_with("local-lvm:"), "{rootfs}");

    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_dns_hosts_time_and_status_feed_expressions() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(
        r#"
data "proxmox_virtual_environment_hosts" "pve2" {
  node_name = "pve2"
}

data "proxmox_virtual_environment_time" "pve2" {
  node_name = "pve2"
}

data "proxmox_virtual_environment_node" "pve" {
  node_name = "pve"
}

resource "terraform_data" "facts" {
  input = [
    "hosts ${join(" ", data.proxmox_virtual_environment_hosts.pve2.hostnames[1])} at ${data.proxmox_virtual_environment_hosts.pve2.entries[1].address}",
    "zone ${data.proxmox_virtual_environment_time.pve2.time_zone} ${substr(data.proxmox_virtual_environment_time.pve2.local_time, 19, 6)} ${substr(data.proxmox_virtual_environment_time.pve2.utc_time, 19, 1)}",
    "cpus ${data.proxmox_virtual_environment_node.pve.cpu_count}",
  ]
}
"#,
    );
    let plan = env.atoll(&["plan"]).await;
    assert!(plan.status.success(), "{}", text(&plan));
    let said = stdout(&plan);
    assert!(
        said.contains("\"hosts pve2.lab.example pve2 at 192.0.2.11\""),
        "{said}"
    );
    assert!(said.contains("\"zone Europe/Berlin +01:00 Z\""), "{said}");
    assert!(said.contains("\"cpus 16\""), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_pve_refuses_is_the_error_on_the_data_block() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(
        "data \"proxmox_virtual_environment_dns\" \"gone\" {\n  node_name = \"nope\"\n}\n\noutput \"domain\" {\n  value = data.proxmox_virtual_environment_dns.gone.domain\n}\n",
    );
    let out = env.atoll(&["plan"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("Error: error retrieving DNS configuration: GET /nodes/nope/dns: hostname lookup 'nope' failed"),
        "{said}"
    );
    assert!(said.contains("on main.tf line 1"), "{said}");
}
