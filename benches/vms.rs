//! VM benchmarks (issue 14) against the in-process simulator, driving the real `atoll` binary
//! as `benches/engine.rs` does, with the project of `tests/it/engine_vm.rs`: a cloud-image
//! template VM and VMs cloned from it with cloud-init.
//!
//! 1. A no-change `atoll plan` of 500 VMs (the template and 499 clones, on node `pve1`) and 500
//!    containers (on node `pve2`), with `L` = 5 ms latency per request. Its request floor is
//!    `L x (1 + max over nodes of ceil(guests on the node / W))`: one `cluster/resources`,
//!    then `pending` (current and pending values in one list) per guest, each node serving
//!    `W` = 3 requests at once (the simulator's workers, which atoll's client limit matches) and
//!    the nodes in parallel: 5 ms x (1 + ceil(500 / 3)) = 0.84 s. (Until 2026-12-04 the refresh
//!    also read `config?current=1` per guest: twice the reads, a 1.675 s floor.) The guests are seeded by an apply with 1 ms tasks.
//! 2. An `atoll apply` cloning 50 VMs from the template with `T` = 500 ms tasks. Each clone runs
//!    two tasks one after the other, `qmclone` then `qmstart`; atoll works on `P` = 4 guests at
//!    once per node (`--parallelism`, `ApplySettings::per_node`, default 4). PVE runs tasks in
//!    forked workers outside its 3 API workers, so those bound only the requests between tasks
//!    (free here: no latency). Floor: `ceil(50 / P) x 2 x T` = 13 x 1 s = 13 s.
//! 3. The peak memory of each `atoll` process: its `VmHWM` (peak resident set) read from
//!    `/proc/<pid>/status` every 5 ms until it exits.
//!
//! Prints the numbers; asserts nothing. Run: `cargo bench --bench vms` (about 40 s).
//!
//! Measured 2026-12-03 on the shared 2-core build machine (release, load average ~6): plan
//! 4.84 s vs the 1.68 s floor (2.89x), peak 70.5 MiB; the same reads alone through the client
//! took 4.45 s with one window of 64 guests in cluster order, as `proxmox::inventory` reads, and
//! 2.47 s with a window per node: the single window fills with `pve1`'s guests while `pve2`
//! idles. Apply 21.44 s vs the 13.0 s floor (1.65x), peak 26.9 MiB; the task poller's backoff
//! (100 ms growing by half) sees a 500 ms task done after 812 ms, which makes 21.12 s.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use atoll::proxmox::client::{Auth, ClientSettings, ClusterGuest, ProxmoxClient, TaskPolling};
use futures::StreamExt;
use pvesim::{Scenario, SimOptions, Simulator};

const LATENCY: Duration = Duration::from_millis(5);
/// PVE's API workers per node (the simulator's default).
const WORKERS: u32 = 3;
/// atoll's guests at once per node during an apply (`atoll apply --parallelism` default).
const PER_NODE: u32 = 4;
/// atoll's guest reads in flight across the cluster (`proxmox::inventory::IN_FLIGHT`).
const IN_FLIGHT: usize = 64;

const SCENARIO: &str = r#"
nodes:
  - name: pve1
    storages:
      - {id: local, type: dir, content: [vztmpl, iso, snippets], templates: [debian-12-standard_12.7-1_amd64.tar.zst]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 64T}
  - name: pve2
    storages:
      - {id: local, type: dir, content: [vztmpl, iso, snippets], templates: [debian-12-standard_12.7-1_amd64.tar.zst]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 64T}
"#;

const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK0wmN/Cr3JXqmLW7u+g9pTh+wyqDHpSQEIQczXkVx9q me@laptop";

/// The cloud-image template, VM 9000 on `node`.
fn template(node: &str) -> String {
    format!(
        r#"
resource "proxmox_virtual_environment_vm" "template" {{
  node_name = "{node}"
  vm_id     = 9000
  name      = "noble-cloud"
  template  = true
  started   = false
  disk {{
    interface    = "scsi0"
    datastore_id = "local-lvm"
    size         = 3
  }}
  network_device {{}}
  initialization {{
    datastore_id = "local-lvm"
  }}
}}
"#
    )
}

/// `count` VMs cloned from the template with cloud-init, as `tests/it/engine_vm.rs` does.
fn clones(node: &str, count: u32, first_id: u32) -> String {
    format!(
        r#"
resource "proxmox_virtual_environment_vm" "vm" {{
  count     = {count}
  node_name = "{node}"
  vm_id     = {first_id} + count.index
  name      = "vm-${{count.index}}"
  clone {{
    vm_id = proxmox_virtual_environment_vm.template.vm_id
  }}
  agent {{
    enabled = true
  }}
  cpu {{
    cores = 2
  }}
  memory {{
    dedicated = 2048
  }}
  network_device {{
    bridge = "vmbr0"
  }}
  initialization {{
    ip_config {{
      ipv4 {{
        address = "dhcp"
      }}
    }}
    user_account {{
      username = "ubuntu"
      keys     = ["{KEY}"]
    }}
  }}
}}
"#
    )
}

fn containers(node: &str, count: u32, first_id: u32) -> String {
    format!(
        r#"
resource "proxmox_virtual_environment_container" "ct" {{
  count        = {count}
  node_name    = "{node}"
  vm_id        = {first_id} + count.index
  unprivileged = true
  operating_system {{
    template_file_id = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
    type             = "debian"
  }}
  disk {{
    datastore_id = "local-lvm"
    size         = 1
  }}
  initialization {{
    hostname = "ct-${{count.index}}"
    ip_config {{
      ipv4 {{
        address = "dhcp"
      }}
    }}
  }}
  network_interface {{
    name = "eth0"
  }}
}}
"#
    )
}

struct Run {
    elapsed: Duration,
    peak_kib: u64,
    code: Option<i32>,
}

/// One `atoll` command in `root/repo/stack`, sampling its peak resident memory (VmHWM).
async fn atoll(sim: &Simulator, root: &Path, args: &[&str]) -> Run {
    let stack = root.join("repo/stack").display().to_string();
    let started = Instant::now();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_atoll"))
        .args(args)
        .args(["--dir", &stack])
        .env_clear()
        .env("PROXMOX_VE_ENDPOINT", sim.url())
        .env("PROXMOX_VE_API_TOKEN", "root@pam!atoll=secret")
        .env(
            "ATOLL_STORE__URL",
            format!("sqlite://{}", root.join("atoll.db").display()),
        )
        .env("ATOLL_PROTECT__DISCOVER", "false")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(root.join("atoll.log")).expect("atoll.log"))
        .spawn()
        .expect("spawning atoll");
    let status_file = format!("/proc/{}/status", child.id().unwrap_or_default());
    let mut peak_kib = 0;
    let status = loop {
        if let Ok(status) = std::fs::read_to_string(&status_file) {
            let hwm = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok());
            peak_kib = peak_kib.max(hwm.unwrap_or(0));
        }
        tokio::select! {
            status = child.wait() => break status,
            () = tokio::time::sleep(Duration::from_millis(5)) => {}
        }
    };
    Run {
        elapsed: started.elapsed(),
        peak_kib,
        code: status.ok().and_then(|s| s.code()),
    }
}

/// What the last `atoll` command wrote to stderr.
fn log(root: &Path) -> String {
    std::fs::read_to_string(root.join("atoll.log")).unwrap_or_default()
}

async fn simulator(task: Duration) -> Simulator {
    let scenario: Scenario = serde_yaml_ng::from_str(SCENARIO).expect("scenario");
    let options = SimOptions {
        task_duration: task,
        workers_per_node: WORKERS as usize,
        auth_failure_delay: Duration::from_millis(10),
        ..SimOptions::default()
    };
    Simulator::start(&scenario, options)
        .await
        .expect("simulator")
}

/// A checkout whose `stack/main.tf` is `project`.
fn workdir(project: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("repo/.git")).expect("checkout");
    std::fs::create_dir_all(dir.path().join("repo/stack")).expect("project");
    std::fs::write(dir.path().join("repo/stack/main.tf"), project).expect("main.tf");
    dir
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn ratio(measured: Duration, floor: Duration) -> String {
    format!("{:.2}x", measured.as_secs_f64() / floor.as_secs_f64())
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

async fn no_change_plan() {
    let (vm_count, ct_count) = (500, 500);
    let sim = simulator(Duration::from_millis(1)).await;
    let project = template("pve1")
        + &clones("pve1", vm_count - 1, 1000)
        + &containers("pve2", ct_count, 2000);
    // The template first, as `tests/it/engine_vm.rs` does: apply starts all guests at once,
    // so a clone would not wait for a template made in the same apply.
    let dir = workdir(&template("pve1"));
    let apply = ["apply", "--auto-approve", "--parallelism", "32"];
    let seed = atoll(&sim, dir.path(), &apply).await;
    assert_eq!(seed.code, Some(0), "the template: {}", log(dir.path()));
    std::fs::write(dir.path().join("repo/stack/main.tf"), project).expect("main.tf");
    let seeded = Instant::now();
    let seed = atoll(&sim, dir.path(), &apply).await;
    assert_eq!(
        seed.code,
        Some(0),
        "seeding {vm_count} VMs and {ct_count} containers failed: {}",
        log(dir.path())
    );
    let seeded = seeded.elapsed();
    let plan = ["plan", "--detailed-exitcode"];
    let unloaded = atoll(&sim, dir.path(), &plan).await;
    sim.faults().set_latency(LATENCY);
    let run = atoll(&sim, dir.path(), &plan).await;
    let (in_order, per_node) = raw_reads(&sim).await;
    let reads_per_node = vm_count.max(ct_count);
    let rounds = 1 + reads_per_node.div_ceil(WORKERS);
    let floor = LATENCY * rounds;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "no-change plan, {vm_count} VMs on pve1 + {ct_count} containers on pve2, 5 ms latency:"
    );
    let _ = writeln!(
        out,
        "  exit code:             {:?} (0: no changes)",
        run.code
    );
    let _ = writeln!(out, "  elapsed:               {}", secs(run.elapsed));
    let _ = writeln!(
        out,
        "  request floor:         {} (5 ms x (1 + ceil({reads_per_node} reads per node / {WORKERS} workers)))",
        secs(floor)
    );
    let _ = writeln!(
        out,
        "  ratio to floor:        {}",
        ratio(run.elapsed, floor)
    );
    let _ = writeln!(out, "  peak memory (VmHWM):   {}", mib(run.peak_kib));
    let _ = writeln!(
        out,
        "  same plan, no latency: {} (process start, load, evaluation, diff; peak {})",
        secs(unloaded.elapsed),
        mib(unloaded.peak_kib)
    );
    let _ = writeln!(
        out,
        "  the reads alone, one window of {IN_FLIGHT} in cluster order:                    {} ({})",
        secs(in_order),
        ratio(in_order, floor)
    );
    let _ = writeln!(
        out,
        "  the reads alone, one window of {IN_FLIGHT} per node:                         {} ({})",
        secs(per_node),
        ratio(per_node, floor)
    );
    let _ = writeln!(
        out,
        "  (seeding apply: {}, peak {})",
        secs(seeded),
        mib(seed.peak_kib)
    );
    print!("{out}");
    sim.shutdown();
}

/// The plan's reads and nothing else, through the same client: `cluster/resources`, then
/// `pending` per guest; once with one window of `IN_FLIGHT` guests in cluster order, once with
/// a window per node (`proxmox::inventory` interleaves the nodes in one window).
async fn raw_reads(sim: &Simulator) -> (Duration, Duration) {
    let settings = ClientSettings::new(
        sim.url(),
        Auth::ApiToken("root@pam!atoll=secret".to_owned().into()),
    );
    let client = ProxmoxClient::new(&settings).expect("client");
    let read = |guest: ClusterGuest| {
        let client = &client;
        async move {
            let pending = client.guest_pending(&guest.node, guest.kind, guest.vmid);
            pending.await.expect("pending");
        }
    };
    let started = Instant::now();
    let guests = client.cluster_guests().await.expect("cluster/resources");
    futures::stream::iter(guests)
        .map(read)
        .buffer_unordered(IN_FLIGHT)
        .collect::<Vec<()>>()
        .await;
    let in_order = started.elapsed();

    let started = Instant::now();
    let guests = client.cluster_guests().await.expect("cluster/resources");
    let (first, second): (Vec<_>, Vec<_>) = guests
        .into_iter()
        .partition(|g| g.node.to_string() == "pve1");
    let window = |guests: Vec<ClusterGuest>| {
        futures::stream::iter(guests)
            .map(read)
            .buffer_unordered(IN_FLIGHT)
            .collect::<Vec<()>>()
    };
    futures::join!(window(first), window(second));
    (in_order, started.elapsed())
}

/// When atoll's task poller first sees a task of `duration` finished: it asks at once, then
/// after `first_delay`, growing by half each time up to `max_delay`.
fn seen_after(duration: Duration) -> Duration {
    let polling = TaskPolling::default();
    let (mut at, mut delay) = (Duration::ZERO, polling.first_delay);
    while at < duration {
        at += delay;
        delay = (delay * 3 / 2).min(polling.max_delay);
    }
    at
}

async fn clone_fifty() {
    let count = 50;
    let task = Duration::from_millis(500);
    let sim = simulator(task).await;
    let dir = workdir(&template("pve1"));
    let parallelism = PER_NODE.to_string();
    let apply = ["apply", "--auto-approve", "--parallelism", &parallelism];
    let seed = atoll(&sim, dir.path(), &apply).await;
    assert_eq!(
        seed.code,
        Some(0),
        "creating the template failed: {}",
        log(dir.path())
    );
    let main_tf = dir.path().join("repo/stack/main.tf");
    std::fs::write(main_tf, template("pve1") + &clones("pve1", count, 1000)).expect("main.tf");
    let run = atoll(&sim, dir.path(), &apply).await;
    let rounds = count.div_ceil(PER_NODE);
    let floor = task * 2 * rounds;
    let seen = seen_after(task);
    let polled = seen * 2 * rounds;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "apply cloning {count} VMs from one template, 500 ms tasks, {PER_NODE} guests at once per node:"
    );
    let _ = writeln!(out, "  exit code:             {:?}", run.code);
    let _ = writeln!(out, "  elapsed:               {}", secs(run.elapsed));
    let _ = writeln!(
        out,
        "  per-node floor:        {} (ceil({count} / {PER_NODE}) x (clone + start) x 500 ms)",
        secs(floor)
    );
    let _ = writeln!(
        out,
        "  ratio to floor:        {}",
        ratio(run.elapsed, floor)
    );
    let _ = writeln!(out, "  peak memory (VmHWM):   {}", mib(run.peak_kib));
    let _ = writeln!(
        out,
        "  floor as atoll polls:  {} (a 500 ms task is seen done after {} ms; ratio {})",
        secs(polled),
        seen.as_millis(),
        ratio(run.elapsed, polled)
    );
    print!("{out}");
    sim.shutdown();
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!("machine: load average {}", load.join(" "));
    runtime.block_on(async {
        no_change_plan().await;
        clone_fifty().await;
    });
}
