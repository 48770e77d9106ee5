//! Plan truthfulness: for every container attribute the engine supports, on a running and on
//! a stopped guest, the effect the plan predicts equals what the simulator did (live: in
//! `config?current=1` at once; restart: in `/pending` until the restart; link-reset: the
//! link was recreated or re-plugged; replace: destroyed and created). Prints the table.

use crate::engine_support;

use std::collections::BTreeMap;

use crate::support::TEMPLATE;
use atoll::proxmox::types::GuestKind;
use engine_support::truth::{observe, pending_keys, print_table};
use engine_support::{Env, options, stdout, text};

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500, vmbr1: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso], templates: [debian-12-standard_12.7-1_amd64.tar.zst]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
"#;

fn defaults() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("unprivileged", "true"),
        ("description", "base"),
        ("tags", "\"a\""),
        ("onboot", "true"),
        ("env", "A = \"1\""),
        ("ostype", "debian"),
        ("size", "8"),
        ("cores", "1"),
        ("cpulimit", "0"),
        ("cpuunits", "100"),
        ("arch", "amd64"),
        ("memory", "512"),
        ("swap", "0"),
        ("console", "true"),
        ("cmode", "tty"),
        ("tty", "2"),
        ("nesting", "false"),
        ("order", "1"),
        ("hostname", "h1"),
        ("entrypoint", ""),
        ("domain", "example.org"),
        ("servers", "\"1.1.1.1\""),
        ("ip", "10.0.0.5/24"),
        ("gw", "10.0.0.1"),
        ("ifname", "eth0"),
        ("bridge", "vmbr0"),
        ("firewall", "false"),
        ("rate", "0"),
        ("vlan", "0"),
        ("mtu", "0"),
        ("mp", ""),
    ])
}

/// (attribute path, placeholder, new value)
const CASES: &[(&str, &str, &str)] = &[
    ("cpu.cores", "cores", "2"),
    ("cpu.limit", "cpulimit", "2"),
    ("cpu.units", "cpuunits", "200"),
    ("cpu.architecture", "arch", "arm64"),
    ("memory.dedicated", "memory", "1024"),
    ("memory.swap", "swap", "256"),
    ("description", "description", "changed"),
    ("tags", "tags", "\"a\", \"b\""),
    ("start_on_boot", "onboot", "false"),
    ("startup.order", "order", "2"),
    ("console.enabled", "console", "false"),
    ("console.type", "cmode", "console"),
    ("console.tty_count", "tty", "4"),
    ("features.nesting", "nesting", "true"),
    ("operating_system.type", "ostype", "ubuntu"),
    ("environment_variables", "env", "A = \"2\""),
    ("initialization.hostname", "hostname", "h2"),
    ("initialization.entrypoint", "entrypoint", "/usr/sbin/init"),
    ("initialization.dns.domain", "domain", "example.net"),
    ("initialization.dns.servers", "servers", "\"9.9.9.9\""),
    ("initialization.ip_config.ipv4.address", "ip", "10.0.0.6/24"),
    ("initialization.ip_config.ipv4.gateway", "gw", "10.0.0.254"),
    ("network_interface.name", "ifname", "eth1"),
    ("network_interface.bridge", "bridge", "vmbr1"),
    ("network_interface.firewall", "firewall", "true"),
    ("network_interface.rate_limit", "rate", "10"),
    ("network_interface.vlan_id", "vlan", "10"),
    ("network_interface.mtu", "mtu", "1400"),
    ("disk.size", "size", "10"),
    (
        "mount_point (added)",
        "mp",
        "mount_point {\n    volume = \"local-lvm\"\n    size = \"1G\"\n    path = \"/mnt/data\"\n  }",
    ),
    ("unprivileged", "unprivileged", "false"),
];

fn render(id: u32, started: bool, values: &BTreeMap<&str, &str>) -> String {
    let v = |k: &str| values[k];
    let entry = if v("entrypoint").is_empty() {
        String::new()
    } else {
        format!("entrypoint = \"{}\"", v("entrypoint"))
    };
    format!(
        r#"resource "proxmox_virtual_environment_container" "t{id}" {{
  node_name = "pve"
  vm_id = {id}
  started = {started}
  unprivileged = {unpriv}
  description = "{desc}"
  tags = [{tags}]
  start_on_boot = {onboot}
  environment_variables = {{ {env} }}
  operating_system {{
    template_file_id = "{TEMPLATE}"
    type = "{ostype}"
  }}
  disk {{
    datastore_id = "local-lvm"
    size = {size}
  }}
  cpu {{
    cores = {cores}
    limit = {cpulimit}
    units = {cpuunits}
    architecture = "{arch}"
  }}
  memory {{
    dedicated = {memory}
    swap = {swap}
  }}
  console {{
    enabled = {console}
    type = "{cmode}"
    tty_count = {tty}
  }}
  features {{
    nesting = {nesting}
  }}
  startup {{
    order = {order}
    up_delay = 5
    down_delay = 5
  }}
  initialization {{
    hostname = "{hostname}"
    {entry}
    dns {{
      domain = "{domain}"
      servers = [{servers}]
    }}
    ip_config {{
      ipv4 {{
        address = "{ip}"
        gateway = "{gw}"
      }}
    }}
  }}
  network_interface {{
    name = "{ifname}"
    bridge = "{bridge}"
    firewall = {firewall}
    rate_limit = {rate}
    vlan_id = {vlan}
    mtu = {mtu}
  }}
  {mp}
}}
"#,
        unpriv = v("unprivileged"),
        desc = v("description"),
        tags = v("tags"),
        onboot = v("onboot"),
        env = v("env"),
        ostype = v("ostype"),
        size = v("size"),
        cores = v("cores"),
        cpulimit = v("cpulimit"),
        cpuunits = v("cpuunits"),
        arch = v("arch"),
        memory = v("memory"),
        swap = v("swap"),
        console = v("console"),
        cmode = v("cmode"),
        tty = v("tty"),
        nesting = v("nesting"),
        order = v("order"),
        hostname = v("hostname"),
        domain = v("domain"),
        servers = v("servers"),
        ip = v("ip"),
        gw = v("gw"),
        ifname = v("ifname"),
        bridge = v("bridge"),
        firewall = v("firewall"),
        rate = v("rate"),
        vlan = v("vlan"),
        mtu = v("mtu"),
        mp = v("mp"),
    )
}

struct Case {
    attribute: &'static str,
    running: bool,
    id: u32,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (i, (attribute, _, _)) in CASES.iter().enumerate() {
        for running in [true, false] {
            let id = 1000 + 2 * i as u32 + u32::from(!running);
            out.push(Case {
                attribute,
                running,
                id,
            });
        }
    }
    out
}

fn tf(changed: bool) -> String {
    let mut all = String::new();
    for (i, (_, key, value)) in CASES.iter().enumerate() {
        for running in [true, false] {
            let id = 1000 + 2 * i as u32 + u32::from(!running);
            let mut values = defaults();
            if changed {
                values.insert(key, value);
            }
            all.push_str(&render(id, running, &values));
        }
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn predicted_effect_equals_what_the_simulator_did_for_every_attribute() {
    let env = Env::with_scenario(SCENARIO, options(10)).await;
    env.write_tf(&tf(false));
    env.apply().await;
    assert!(env.plan().await.contains("No changes."), "base is stable");
    let cases = cases();
    let mut before = BTreeMap::new();
    for case in &cases {
        let events = env.sim.guest_events(case.id).len();
        before.insert(case.id, (events, env.live_config(case.id).await));
    }
    env.write_tf(&tf(true));
    let plan = env.plan_json().await;
    let out = env
        .atoll(&["apply", "--auto-approve", "--restart", "never"])
        .await;
    assert!(out.status.success(), "{}", text(&out));
    let report = stdout(&out);
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
        let replaced = report.contains(&format!("destroyed CT {}", case.id));
        let (events, pending, changed_now) = if replaced {
            (Vec::new(), Vec::new(), true)
        } else {
            let events = env.sim.guest_events(case.id)[*seen..].to_vec();
            let pending = pending_keys(&env, GuestKind::Lxc, case.id, &keys).await;
            let now = env.live_config(case.id).await;
            let changed = keys.iter().any(|k| now.get(k) != config_before.get(k));
            (events, pending, changed)
        };
        let observed = observe(&events, &pending, changed_now, replaced);
        rows.push((case.attribute, case.running, "", predicted, observed));
    }
    let disagreements = print_table(&rows);
    assert!(
        disagreements.is_empty(),
        "disagreements: {disagreements:#?}"
    );
    // The restart ones apply once the guest restarts; then nothing is left.
    env.apply().await;
    assert!(env.plan().await.contains("No changes."));
}
