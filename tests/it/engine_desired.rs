//! The desired-state adapter: bpg container attributes to the PVE config keys and property
//! strings PVE receives (reference/proxmox.md section 2), through the real loader.

use std::collections::BTreeMap;

use atoll::proxmox::desired::{self, DesiredError};
use atoll::proxmox::plan::{Desired, DesiredValue};
use tfconfig::Input;

fn load(tf: &str) -> Result<desired::DesiredState, Vec<DesiredError>> {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("main.tf"), tf).expect("main.tf");
    let input = Input {
        checkout: dir.path().to_path_buf(),
        project_dir: ".".into(),
        workspace: "default".to_owned(),
        vars: Vec::new(),
        limits: Default::default(),
        modules: Default::default(),
    };
    let loaded = tfconfig::load(&input);
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    desired::build(&loaded.resources)
}

fn config(tf: &str) -> BTreeMap<String, DesiredValue> {
    let state = load(tf).expect("desired");
    match &state.resources[0] {
        Desired::Guest(guest) => guest.config.clone(),
        _ => panic!("expected a guest"),
    }
}

fn known(config: &BTreeMap<String, DesiredValue>, key: &str) -> String {
    match config.get(key) {
        Some(DesiredValue::Known(text)) => text.clone(),
        other => panic!("{key}: {other:?}"),
    }
}

const FULL: &str = r#"
resource "proxmox_virtual_environment_container" "ct" {
  node_name = "pve"
  vm_id     = 123
  tags      = ["Web", "ci"]
  environment_variables = { B = "2", A = "1" }
  operating_system {
    template_file_id = "local:vztmpl/debian.tar.zst"
    type             = "debian"
  }
  disk {
    datastore_id  = "zfs"
    size          = 12
    acl           = true
    mount_options = ["noatime", "discard"]
  }
  cpu {
    cores = 2
    units = 512
  }
  features {
    nesting = true
    mount   = ["nfs"]
  }
  startup {
    order    = 3
    up_delay = 60
  }
  initialization {
    hostname = "web"
    dns {
      domain  = "example.org"
      servers = ["1.1.1.1", "9.9.9.9"]
    }
    ip_config {
      ipv4 {
        address = "10.0.0.5/24"
        gateway = "10.0.0.1"
      }
    }
    user_account {
      keys     = ["ssh-ed25519 A", "ssh-ed25519 B"]
      password = "hunter22"
    }
  }
  network_interface {
    name        = "eth0"
    firewall    = true
    vlan_id     = 20
    mac_address = "BC:24:11:00:00:01"
  }
  network_interface {
    name    = "eth1"
    enabled = false
  }
  mount_point {
    volume = "local-lvm"
    size   = "10G"
    path   = "/srv"
    backup = true
  }
  device_passthrough {
    path = "/dev/fuse"
    mode = "0666"
  }
}
"#;

#[test]
fn container_attributes_become_pve_keys_and_property_strings() {
    let config = config(FULL);
    assert_eq!(
        known(&config, "rootfs"),
        "zfs:12,acl=1,mountoptions=noatime;discard"
    );
    assert_eq!(known(&config, "storage"), "zfs");
    assert_eq!(known(&config, "cores"), "2");
    assert_eq!(known(&config, "cpuunits"), "512");
    assert_eq!(known(&config, "features"), "mount=nfs,nesting=1");
    assert_eq!(known(&config, "startup"), "order=3,up=60");
    assert_eq!(known(&config, "hostname"), "web");
    assert_eq!(known(&config, "searchdomain"), "example.org");
    assert_eq!(known(&config, "nameserver"), "1.1.1.1 9.9.9.9");
    assert_eq!(
        known(&config, "net0"),
        "name=eth0,bridge=vmbr0,firewall=1,hwaddr=BC:24:11:00:00:01,tag=20,ip=10.0.0.5/24,gw=10.0.0.1"
    );
    assert!(
        !config.contains_key("net1"),
        "a disabled interface is not sent"
    );
    assert_eq!(known(&config, "mp0"), "local-lvm:10,mp=/srv,backup=1");
    assert_eq!(known(&config, "dev0"), "/dev/fuse,mode=0666");
    assert_eq!(
        known(&config, "ssh-public-keys"),
        "ssh-ed25519 A\nssh-ed25519 B"
    );
    assert_eq!(known(&config, "tags"), "Web;atoll;ci");
    assert_eq!(known(&config, "env"), "A=1\u{0}B=2");
    assert_eq!(known(&config, "ostemplate"), "local:vztmpl/debian.tar.zst");
    assert_eq!(known(&config, "unprivileged"), "0");
    assert!(
        matches!(config.get("password"), Some(DesiredValue::Sensitive(s)) if s.expose() == "hunter22")
    );
}

#[test]
fn unset_computed_attributes_are_left_to_pve() {
    let config = config(
        r#"
resource "proxmox_virtual_environment_container" "ct" {
  node_name = "pve"
  operating_system {
    template_file_id = "local:vztmpl/debian.tar.zst"
  }
  network_interface {
    name = "eth0"
  }
}
"#,
    );
    assert!(
        !config.contains_key("cpuunits"),
        "cpu.units unset: PVE keeps its own"
    );
    assert_eq!(known(&config, "net0"), "name=eth0,bridge=vmbr0");
    assert_eq!(known(&config, "rootfs"), "local:4", "bpg's disk defaults");
}

/// The loader refuses `idmap` where it is written (the engine's own check stays behind it).
#[test]
fn idmap_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().expect("dir");
    let tf = r#"
resource "proxmox_virtual_environment_container" "ct" {
  node_name = "pve"
  operating_system {
    template_file_id = "local:vztmpl/debian.tar.zst"
  }
  idmap {
    type         = "uid"
    container_id = 0
    host_id      = 100000
    size         = 65536
  }
}
"#;
    std::fs::write(dir.path().join("main.tf"), tf).expect("main.tf");
    let loaded = tfconfig::load(&Input {
        checkout: dir.path().to_path_buf(),
        project_dir: ".".into(),
        workspace: "default".to_owned(),
        vars: Vec::new(),
        limits: Default::default(),
        modules: Default::default(),
    });
    let text = loaded.render_diagnostics();
    assert!(loaded.has_errors(), "{text}");
    assert!(text.contains("idmap") && text.contains("SSH"), "{text}");
    assert!(text.contains("on main.tf line 7"), "{text}");
}

#[test]
fn download_volume_id_comes_from_the_url_file_name() {
    let state = load(
        r#"
resource "proxmox_download_file" "t" {
  content_type = "vztmpl"
  datastore_id = "local"
  node_name    = "pve"
  url          = "https://x.example/images/alpine-3.20.tar.xz?sig=abc"
}
"#,
    )
    .expect("desired");
    let Desired::Download(file) = &state.resources[0] else {
        panic!("expected a download");
    };
    assert_eq!(file.volid(), "local:vztmpl/alpine-3.20.tar.xz");
}

fn object(tf: &str) -> atoll::proxmox::plan::DesiredObject {
    let state = load(tf).expect("desired");
    match &state.resources[0] {
        Desired::Object(object) => object.clone(),
        _ => panic!("expected a pool or firewall object"),
    }
}

#[test]
fn firewall_rules_become_pve_rule_parameters_in_order_with_group_insertions() {
    let rules = object(
        r#"
resource "proxmox_virtual_environment_firewall_rules" "r" {
  node_name    = "pve"
  container_id = 101
  rule {
    security_group = "webserver"
    iface          = "net0"
  }
  rule {
    type    = "in"
    action  = "DROP"
    proto   = "tcp"
    dport   = "25"
    enabled = false
  }
}
"#,
    );
    assert_eq!(rules.id.path(), "/nodes/pve/lxc/101/firewall/rules");
    let entries = rules.entries.expect("entries");
    let pairs = |e: &BTreeMap<String, String>| {
        e.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    assert_eq!(
        pairs(&entries[0]),
        "action=webserver,enable=1,iface=net0,type=group"
    );
    assert_eq!(
        pairs(&entries[1]),
        "action=DROP,dport=25,enable=0,proto=tcp,type=in"
    );
}

#[test]
fn firewall_options_send_every_argument_with_bpgs_defaults_under_pves_names() {
    let options = object(
        r#"
resource "proxmox_virtual_environment_firewall_options" "o" {
  node_name = "pve"
  vm_id     = 100
  enabled   = true
}
"#,
    );
    assert_eq!(options.id.path(), "/nodes/pve/qemu/100/firewall/options");
    let fields: Vec<String> = options
        .fields
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert_eq!(
        fields.join(","),
        "dhcp=0,enable=1,ipfilter=0,log_level_in=nolog,log_level_out=nolog,macfilter=1,ndp=0,\
         policy_in=DROP,policy_out=ACCEPT,radv=1"
    );
    assert_eq!(options.labels["policy_in"], "input_policy");
}

#[test]
fn an_object_named_as_pve_would_refuse_is_an_error_before_any_request() {
    let errors = load(
        r#"
resource "proxmox_virtual_environment_firewall_alias" "a" {
  name = "1-bad/../name"
  cidr = "10.0.0.1"
}
"#,
    )
    .expect_err("refused");
    let said = errors[0].to_string();
    assert!(said.contains("alias name"), "{said}");
    assert!(said.contains("1-bad/../name"), "{said}");
}

#[test]
fn a_rule_list_longer_than_atoll_applies_is_refused_with_what_to_do() {
    let errors = load(
        r#"
resource "proxmox_virtual_environment_firewall_rules" "r" {
  node_name = "pve"
  vm_id     = 100
  dynamic "rule" {
    for_each = range(1001)
    content {
      type   = "in"
      action = "ACCEPT"
      dport  = rule.value
      proto  = "tcp"
    }
  }
}
"#,
    )
    .expect_err("refused");
    let said = errors[0].to_string();
    assert!(said.contains("1001 rule blocks"), "{said}");
    assert!(said.contains("split them"), "{said}");
}
