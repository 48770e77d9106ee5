//! The original product requirements, one test each, against the simulator over HTTP with the
//! real `atoll` binary.

use crate::engine_support;

use crate::support::{Container, TEMPLATE};
use engine_support::{Env, stdout, text};

// a well-formed key: PVE runs `ssh-keygen -l` on every key line (`validate_ssh_public_keys`)
const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f atoll@test";

fn web(extra: &str) -> String {
    Container::new("web")
        .vm_id(200)
        .body(&format!(
            r#"  initialization {{
    hostname = "web-1"
    user_account {{
      keys = ["{KEY}"]
    }}
    ip_config {{
      ipv4 {{
        address = "10.0.0.50/24"
        gateway = "10.0.0.1"
      }}
    }}
  }}
  network_interface {{
    name = "eth0"
  }}
{extra}"#
        ))
        .hcl()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_apply_creates_a_running_container_with_key_hostname_and_network() {
    let env = Env::start().await;
    env.write_tf(&web(""));
    env.apply().await;
    let status = env
        .client
        .guest_status(
            &engine_support::node(),
            atoll::proxmox::types::GuestKind::Lxc,
            atoll::proxmox::types::VmId::new(200).expect("id"),
        )
        .await
        .expect("status");
    assert_eq!(status.status, atoll::proxmox::client::RunState::Running);
    let config = env.live_config(200).await;
    assert_eq!(config["hostname"], "web-1");
    assert!(
        config["net0"].contains("ip=10.0.0.50/24"),
        "{}",
        config["net0"]
    );
    assert!(config["net0"].contains("gw=10.0.0.1"), "{}", config["net0"]);
    assert!(
        config["net0"].contains("bridge=vmbr0"),
        "{}",
        config["net0"]
    );
    let created = env.sim.created_from(200);
    assert_eq!(
        created.get("ssh-public-keys").map(String::as_str),
        Some(KEY)
    );
    assert!(env.plan().await.contains("No changes."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_comes_from_a_download_and_is_fetched_once() {
    let env = Env::start().await;
    let tf = r#"
resource "proxmox_virtual_environment_download_file" "alpine" {
  content_type = "vztmpl"
  datastore_id = "local"
  node_name    = "pve"
  url          = "https://images.example/alpine-3.20-default_20240908_amd64.tar.xz"
}
"#
    .to_owned()
        + &Container::new("a").vm_id(301).hcl().replace(
            TEMPLATE,
            "${proxmox_virtual_environment_download_file.alpine.id}",
        )
        + &Container::new("b").vm_id(302).hcl().replace(
            TEMPLATE,
            "${proxmox_virtual_environment_download_file.alpine.id}",
        );
    env.write_tf(&tf);
    let out = env.apply().await;
    let downloads = text(&out).matches(": download started").count();
    assert_eq!(downloads, 1, "{}", text(&out));
    let volid = "local:vztmpl/alpine-3.20-default_20240908_amd64.tar.xz";
    for id in [301, 302] {
        let created = env.sim.created_from(id);
        assert_eq!(created.get("ostemplate").map(String::as_str), Some(volid));
    }
    let again = env.apply().await;
    assert_eq!(text(&again).matches(": download started").count(), 0);
    assert!(env.plan().await.contains("No changes."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dhcp_or_static_address_per_container_shows_in_net0() {
    let env = Env::start().await;
    let dhcp = Container::new("dhcp")
        .vm_id(401)
        .body(
            r#"  initialization {
    ip_config {
      ipv4 {
        address = "dhcp"
      }
    }
  }
  network_interface {
    name = "eth0"
  }"#,
        )
        .hcl();
    let fixed = Container::new("fixed")
        .vm_id(402)
        .body(
            r#"  initialization {
    ip_config {
      ipv4 {
        address = "192.168.5.20/24"
        gateway = "192.168.5.1"
      }
    }
  }
  network_interface {
    name   = "eth0"
    bridge = "vmbr0"
  }"#,
        )
        .hcl();
    env.write_tf(&(dhcp + &fixed));
    env.apply().await;
    let a = env.live_config(401).await;
    let b = env.live_config(402).await;
    assert!(a["net0"].contains("ip=dhcp"), "{}", a["net0"]);
    assert!(!a["net0"].contains("gw="), "{}", a["net0"]);
    assert!(b["net0"].contains("ip=192.168.5.20/24"), "{}", b["net0"]);
    assert!(b["net0"].contains("gw=192.168.5.1"), "{}", b["net0"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_disk_is_on_the_chosen_datastore() {
    let yaml = r#"
nodes:
  - name: pve
    storages:
      - {id: local, type: dir, content: [vztmpl, iso], templates: [debian-12-standard_12.7-1_amd64.tar.zst]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images]}
      - {id: fast-zfs, type: zfspool, content: [rootdir, images]}
"#;
    let env = Env::with_scenario(yaml, engine_support::options(20)).await;
    env.write_tf(
        &Container::new("z")
            .vm_id(501)
            .hcl()
            .replace("\"local-lvm\"", "\"fast-zfs\""),
    );
    env.apply().await;
    let config = env.live_config(501).await;
    assert!(
        config["rootfs"].starts_with("fast-zfs:"),
        "{}",
        config["rootfs"]
    );
    assert!(env.plan().await.contains("No changes."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_lives_in_the_store_and_lists_from_another_directory() {
    let env = Env::start().await;
    env.write_tf(&Container::new("s").vm_id(601).hcl());
    env.apply().await;
    assert!(!env.project().join("terraform.tfstate").exists());
    let elsewhere = tempfile::tempdir().expect("dir");
    let dir = env.project().display().to_string();
    let output = env
        .command(&["state", "list", "--dir", &dir])
        .current_dir(elsewhere.path())
        .output()
        .await
        .expect("state list");
    assert!(output.status.success(), "{}", text(&output));
    let listed = stdout(&output);
    assert!(
        listed.contains("proxmox_virtual_environment_container.s\tnode=pve\tvm_id=601"),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_then_apply_gives_an_identical_configuration() {
    let env = Env::start().await;
    env.write_tf(&web(""));
    env.apply().await;
    let before = env.live_config(200).await;
    env.write_tf("");
    env.apply().await;
    assert!(env.lxc_ids().await.is_empty(), "destroyed");
    env.write_tf(&web(""));
    env.apply().await;
    let after = env.live_config(200).await;
    let volatile = ["digest", "net0"];
    for key in before.keys().chain(after.keys()) {
        if volatile.contains(&key.as_str()) {
            continue;
        }
        assert_eq!(before.get(key), after.get(key), "key {key} differs");
    }
    let strip_mac = |net: &str| {
        net.split(',')
            .filter(|f| !f.starts_with("hwaddr="))
            .collect::<Vec<_>>()
            .join(",")
    };
    assert_eq!(strip_mac(&before["net0"]), strip_mac(&after["net0"]));
}
