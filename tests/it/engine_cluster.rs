//! The cluster's own configuration end to end on the simulator: the datacenter options and a
//! node's hosts file, HA resources and rules (and the HA groups PVE 9 no longer takes),
//! replication jobs and metric servers. Each family: apply, an empty plan after, a change
//! applied as planned (the effect predicted is what the simulator did), and a destroy; the
//! guard refusing an HA state that stops a protected guest; PVE's refusals in its words.

use crate::engine_support;

use engine_support::{Env, change, options, sim_get, stdout, text};

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso, snippets]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
      - {id: tank, type: zfspool, content: [rootdir, images], total: 4T}
  - name: pve2
    bridges: {vmbr0: 1500}
    storages:
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
      - {id: tank, type: zfspool, content: [rootdir, images], total: 4T}
guests:
  - {vmid: 100, type: lxc, node: pve, status: running, config: {hostname: db, rootfs: 'tank:8'}}
  - {vmid: 101, type: lxc, node: pve, status: running, config: {hostname: web, rootfs: 'local-lvm:8'}}
"#;

fn attribute<'a>(change: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    change["attributes"]
        .as_array()
        .expect("attributes")
        .iter()
        .find(|a| a["path"] == path)
        .unwrap_or_else(|| panic!("no attribute {path} in {change}"))
}

async fn no_changes(env: &Env) {
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}

fn options_stack(keyboard: Option<&str>, language: &str) -> String {
    let keyboard = keyboard.map_or_else(String::new, |k| format!("keyboard = \"{k}\""));
    format!(
        r#"
resource "proxmox_cluster_options" "dc" {{
  {keyboard}
  language                  = "{language}"
  bandwidth_limit_migration = 555555
  migration_type            = "secure"
  migration_cidr            = "10.0.0.0/8"
  crs_ha                    = "static"
  next_id = {{
    lower = 1000
    upper = 2000
  }}
}}

resource "proxmox_virtual_environment_hosts" "pve" {{
  node_name = "pve"
  entry {{
    address   = "127.0.0.1"
    hostnames = ["localhost.localdomain", "localhost"]
  }}
  entry {{
    address   = "10.0.0.5"
    hostnames = ["db.lab", "{language}"]
  }}
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datacenter_options_and_hosts_apply_then_a_removed_option_is_deleted() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&options_stack(Some("pl"), "en"));
    env.apply().await;
    let dc = sim_get(&env, "/cluster/options").await;
    assert_eq!(dc["keyboard"], "pl", "{dc}");
    assert_eq!(dc["migration"]["network"], "10.0.0.0/8", "{dc}");
    assert_eq!(dc["next-id"]["lower"], 1000, "{dc}");
    assert_eq!(dc["bwlimit"], "migration=555555", "{dc}");
    let hosts = sim_get(&env, "/nodes/pve/hosts").await;
    assert_eq!(
        hosts["data"], "127.0.0.1 localhost.localdomain localhost\n10.0.0.5 db.lab en\n",
        "{hosts}"
    );
    no_changes(&env).await;

    // no keyboard any more, another language: the keyboard is deleted, the rest changed
    env.write_tf(&options_stack(None, "de"));
    let plan = env.plan_json().await;
    let dc = change(&plan, "proxmox_cluster_options.dc");
    assert_eq!(dc["actions"], serde_json::json!(["update"]), "{dc}");
    let keyboard = attribute(dc, "keyboard");
    assert_eq!(keyboard["before"], "pl", "{dc}");
    assert!(keyboard["after"].is_null(), "{dc}");
    assert_eq!(keyboard["effect"], "live", "{dc}");
    assert_eq!(attribute(dc, "language")["after"], "de", "{dc}");
    let hosts = change(&plan, "proxmox_virtual_environment_hosts.pve");
    assert_eq!(attribute(hosts, "entry")["effect"], "live", "{hosts}");
    env.apply().await;
    let dc = sim_get(&env, "/cluster/options").await;
    assert!(dc.get("keyboard").is_none(), "deleted as planned: {dc}");
    assert_eq!(dc["language"], "de", "{dc}");
    assert!(
        sim_get(&env, "/nodes/pve/hosts").await["data"]
            .as_str()
            .is_some_and(|d| d.contains("db.lab de")),
    );
    no_changes(&env).await;

    // settings are left as they are when no longer declared
    env.write_tf("");
    env.apply().await;
    assert_eq!(sim_get(&env, "/cluster/options").await["language"], "de");
}

fn ha_stack(state: &str) -> String {
    format!(
        r#"
resource "proxmox_haresource" "db" {{
  resource_id = "ct:100"
  state       = "{state}"
  comment     = "database"
  max_restart = 2
}}

resource "proxmox_virtual_environment_haresource" "web" {{
  resource_id = "ct:101"
}}

resource "proxmox_harule" "prefer_pve" {{
  rule      = "prefer-pve"
  type      = "node-affinity"
  resources = [proxmox_haresource.db.resource_id, proxmox_virtual_environment_haresource.web.resource_id]
  nodes = {{
    pve  = 2
    pve2 = 1
  }}
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ha_resources_and_a_rule_apply_and_a_stopped_state_stops_the_guest_as_planned() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&ha_stack("started"));
    env.apply().await;
    let db = sim_get(&env, "/cluster/ha/resources/ct:100").await;
    assert_eq!(db["state"], "started", "{db}");
    assert_eq!(db["max_restart"], 2, "{db}");
    let rule = sim_get(&env, "/cluster/ha/rules/prefer-pve").await;
    assert_eq!(rule["resources"], "ct:100,ct:101", "{rule}");
    assert_eq!(rule["nodes"], "pve2:1,pve:2", "{rule}");
    no_changes(&env).await;

    env.write_tf(&ha_stack("stopped"));
    let plan = env.plan_json().await;
    let db = change(&plan, "proxmox_haresource.db");
    let state = attribute(db, "state");
    assert_eq!(
        (&state["before"], &state["after"]),
        (&"started".into(), &"stopped".into())
    );
    let notes = db["notes"].to_string();
    assert!(notes.contains("the HA manager stops ct:100"), "{db}");
    let shown = env.plan().await;
    assert!(shown.contains("the HA manager stops ct:100"), "{shown}");
    assert_eq!(
        sim_get(&env, "/nodes/pve/lxc/100/status/current").await["status"],
        "running"
    );
    env.apply().await;
    let status = sim_get(&env, "/nodes/pve/lxc/100/status/current").await;
    assert_eq!(
        status["status"], "stopped",
        "the plan said it stops: {status}"
    );
    no_changes(&env).await;

    env.write_tf("");
    env.apply().await;
    let resources = sim_get(&env, "/cluster/ha/resources").await;
    assert_eq!(resources.as_array().map(Vec::len), Some(0), "{resources}");
    let rules = sim_get(&env, "/cluster/ha/rules").await;
    assert_eq!(rules.as_array().map(Vec::len), Some(0), "{rules}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_an_ha_state_that_stops_a_protected_guest() {
    let mut env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&ha_stack("started"));
    env.apply().await;
    env.write_config("protect:\n  discover: false\n  guests:\n    - vm_id: 100\n");
    env.write_tf(&ha_stack("disabled"));
    let plan = env.plan_json().await;
    let blocked = &change(&plan, "proxmox_haresource.db")["blocked"];
    assert_eq!(blocked["rule"], "stop", "{blocked}");
    assert!(
        blocked["reason"]
            .as_str()
            .is_some_and(|r| r.contains("protected guest 100")),
        "{blocked}"
    );
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(
        sim_get(&env, "/nodes/pve/lxc/100/status/current").await["status"],
        "running"
    );
    assert_eq!(
        sim_get(&env, "/cluster/ha/resources/ct:100").await["state"],
        "started"
    );
}

fn jobs_stack(rate: &str, port: u16, graphite_type: &str) -> String {
    format!(
        r#"
resource "proxmox_replication" "db" {{
  id       = "100-0"
  target   = "pve2"
  type     = "local"
  comment  = "db to pve2"
  {rate}
}}

resource "proxmox_metrics_server" "influx" {{
  name            = "influx"
  server          = "192.0.2.10"
  port            = {port}
  type            = "influxdb"
  influx_db_proto = "http"
  influx_bucket   = "pve"
}}

resource "proxmox_virtual_environment_metrics_server" "graphite" {{
  name          = "graphite"
  server        = "192.0.2.11"
  port          = 2003
  type          = "{graphite_type}"
}}

resource "proxmox_metrics_server" "otel" {{
  name                = "otel"
  server              = "192.0.2.12"
  port                = 4318
  type                = "opentelemetry"
  opentelemetry_proto = "http"
  opentelemetry_path  = "/v1/metrics"
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replication_jobs_and_metric_servers_apply_change_in_place_or_replace_and_go() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&jobs_stack(
        "rate = 10\n  schedule = \"*/30\"",
        8089,
        "graphite",
    ));
    env.apply().await;
    let job = sim_get(&env, "/cluster/replication/100-0").await;
    assert_eq!(job["target"], "pve2", "{job}");
    assert_eq!(job["schedule"], "*/30", "{job}");
    assert_eq!(job["source"], "pve", "{job}");
    let influx = sim_get(&env, "/cluster/metrics/server/influx").await;
    assert_eq!(influx["influxdbproto"], "http", "{influx}");
    assert_eq!(influx["port"], 8089, "{influx}");
    let otel = sim_get(&env, "/cluster/metrics/server/otel").await;
    assert_eq!(otel["otel-path"], "/v1/metrics", "{otel}");
    no_changes(&env).await;

    // a rate taken out is deleted, the schedule back to bpg's default; a port
    // changes in place; a plugin type cannot change: replaced
    env.write_tf(&jobs_stack("", 8090, "opentelemetry"));
    let plan = env.plan_json().await;
    let job = change(&plan, "proxmox_replication.db");
    assert_eq!(job["actions"], serde_json::json!(["update"]), "{job}");
    assert!(attribute(job, "rate")["after"].is_null(), "{job}");
    assert_eq!(attribute(job, "schedule")["after"], "*/15", "{job}");
    let influx = change(&plan, "proxmox_metrics_server.influx");
    assert_eq!(influx["actions"], serde_json::json!(["update"]), "{influx}");
    assert_eq!(attribute(influx, "port")["effect"], "live", "{influx}");
    let graphite = change(&plan, "proxmox_virtual_environment_metrics_server.graphite");
    assert_eq!(
        graphite["actions"],
        serde_json::json!(["delete", "create"]),
        "{graphite}"
    );
    env.apply().await;
    let job = sim_get(&env, "/cluster/replication/100-0").await;
    assert!(job.get("rate").is_none(), "{job}");
    assert_eq!(job["schedule"], "*/15", "{job}");
    assert_eq!(
        sim_get(&env, "/cluster/metrics/server/influx").await["port"],
        8090
    );
    assert_eq!(
        sim_get(&env, "/cluster/metrics/server/graphite").await["type"],
        "opentelemetry"
    );
    no_changes(&env).await;

    env.write_tf("");
    env.apply().await;
    let jobs = sim_get(&env, "/cluster/replication").await;
    assert_eq!(jobs.as_array().map(Vec::len), Some(0), "{jobs}");
    let servers = sim_get(&env, "/cluster/metrics/server").await;
    assert_eq!(servers.as_array().map(Vec::len), Some(0), "{servers}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_proxmox_ve_refuses_fails_the_apply_in_its_words() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    let cases = [
        (
            r#"
resource "proxmox_replication" "web" {
  id     = "101-0"
  target = "pve2"
  type   = "local"
}
"#,
            "missing replicate feature on volume 'local-lvm:",
        ),
        (
            r#"
resource "proxmox_hagroup" "g" {
  group = "prefer"
  nodes = { pve = 1 }
}
"#,
            "cannot create group: ha groups have been migrated to rules",
        ),
        (
            r#"
resource "proxmox_haresource" "ghost" {
  resource_id = "vm:999"
}
"#,
            "resource 'vm:999' does not exist in cluster",
        ),
    ];
    for (tf, words) in cases {
        env.write_tf(tf);
        let out = env.atoll(&["apply", "--auto-approve"]).await;
        assert!(!out.status.success(), "{}", text(&out));
        assert!(text(&out).contains(words), "{words}: {}", text(&out));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metric_servers_token_is_refused_with_the_way_to_set_it() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(
        r#"
resource "proxmox_metrics_server" "influx" {
  name         = "influx"
  server       = "192.0.2.10"
  port         = 8086
  type         = "influxdb"
  influx_token = "s3cr3t-token"
}
"#,
    );
    let out = env.atoll(&["plan"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("Metric Server"), "{all}");
    assert!(
        !all.contains("s3cr3t-token"),
        "the secret never shows: {all}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ha_replication_and_metric_data_sources_answer_from_the_cluster() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&format!(
        "{}{}",
        ha_stack("started"),
        jobs_stack("rate = 10", 8089, "graphite")
    ));
    env.apply().await;
    env.write_tf(&format!(
        r#"{}{}
data "proxmox_haresources" "all" {{}}

data "proxmox_virtual_environment_haresources" "cts" {{
  type = "ct"
}}

data "proxmox_haresource" "db" {{
  resource_id = "ct:100"
}}

data "proxmox_replications" "all" {{}}

data "proxmox_replication" "db" {{
  id = "100-0"
}}

data "proxmox_metrics_server" "otel" {{
  name = "otel"
}}

resource "terraform_data" "probe" {{
  input = join(" | ", [
    join(",", sort(data.proxmox_haresources.all.resource_ids)),
    data.proxmox_virtual_environment_haresources.cts.id,
    "${{data.proxmox_haresource.db.state}}/${{data.proxmox_haresource.db.max_restart}}/${{data.proxmox_haresource.db.type}}",
    join(",", [for j in data.proxmox_replications.all.replications : "${{j.id}}->${{j.target}}"]),
    "${{data.proxmox_replication.db.guest}}/${{data.proxmox_replication.db.rate}}",
    "${{data.proxmox_metrics_server.otel.port}}${{data.proxmox_metrics_server.otel.opentelemetry_path}}",
  ])
}}
"#,
        ha_stack("started"),
        jobs_stack("rate = 10", 8089, "graphite")
    ));
    let plan = env.atoll(&["plan"]).await;
    assert!(plan.status.success(), "plan: {}", text(&plan));
    let said = text(&plan);
    let expected =
        "ct:100,ct:101 | haresources:ct | started/2/ct | 100-0->pve2 | 100/10 | 4318/v1/metrics";
    assert!(said.contains(expected), "{said}");
    assert!(
        said.contains("Use \"proxmox_haresources\" instead"),
        "the long name warns: {said}"
    );
}
