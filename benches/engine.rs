//! Engine benchmarks against the in-process simulator, driving the real `atoll` binary:
//!
//! 1. a no-change `atoll plan` of 1,000 containers with 5 ms latency per request, against the
//!    request floor (requests x latency / the node's 3 API workers);
//! 2. an `atoll apply` creating 100 containers with 200 ms tasks, against the floor the
//!    per-node parallelism sets (ceil(100 / P) x (create task + start task));
//!
//! and the peak memory (VmHWM) of the `atoll` process for both. Prints the numbers; asserts
//! nothing. Run: `cargo bench --bench engine` (add `--profile dev` for a quick debug build); with
//! `ATOLL_BENCH_BEFORE=<path to another atoll binary>` the no-change plan is also run with that
//! binary on the same simulator, for a before/after figure in one run.
//!
//! Measured 2026-11-30 on the shared 2-core build machine (release): plan 4.52 s vs a 3.33 s
//! floor (1.36x; the bare requests through the client alone took 4.26 s), peak 67 MiB; apply
//! 12.79 s vs a 10.0 s floor (1.28x), peak 21 MiB.
//!
//! Measured 2026-12-04, same machine, quiet (release), after the refresh began reading
//! `pending` alone: plan 2.59 s vs the new 1.67 s floor (1.55x; 1,001 requests, the bare
//! requests through the client alone 2.29 s, so the plan is 1.13x its own requests), peak
//! 77 MiB; apply 13.01 s vs 10.0 s (1.30x). Before and after in one run, both dev builds
//! (`ATOLL_BENCH_BEFORE`): 5.60 s before, 3.27 s after (1.71x).

use std::path::Path;
use std::time::{Duration, Instant};

use pvesim::{Scenario, SimOptions, Simulator};

const TEMPLATE: &str = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";
const WORKERS: usize = 3;

fn project(count: usize, first_id: u32) -> String {
    format!(
        r#"
resource "proxmox_virtual_environment_container" "ct" {{
  count     = {count}
  node_name = "pve"
  vm_id     = {first_id} + count.index
  unprivileged = true
  operating_system {{
    template_file_id = "{TEMPLATE}"
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
    ok: bool,
}

/// Runs the binary, sampling its peak resident memory (VmHWM) until it exits.
async fn atoll(sim: &Simulator, root: &Path, args: &[&str]) -> Run {
    atoll_binary(env!("CARGO_BIN_EXE_atoll"), sim, root, args).await
}

/// The same run with another build of atoll (`ATOLL_BENCH_BEFORE`: an earlier commit's binary,
/// to measure a change before and after in one run).
async fn atoll_binary(binary: &str, sim: &Simulator, root: &Path, args: &[&str]) -> Run {
    let started = Instant::now();
    let mut child = tokio::process::Command::new(binary)
        .args(args)
        .env_clear()
        .env("PROXMOX_VE_ENDPOINT", sim.url())
        .env("PROXMOX_VE_API_TOKEN", "root@pam!atoll=secret")
        .env(
            "ATOLL_STORE__URL",
            format!("sqlite://{}", root.join("atoll.db").display()),
        )
        .env("ATOLL_PROTECT__DISCOVER", "false")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawning atoll");
    let pid = child.id().unwrap_or_default();
    let mut peak_kib = 0;
    let status = loop {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
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
        ok: status.is_ok_and(|s| s.success()),
    }
}

async fn simulator(task: Duration) -> Simulator {
    let scenario: Scenario = serde_yaml_ng::from_str(
        "nodes:\n  - name: pve\n    storages:\n      - {id: local, type: dir, content: [vztmpl], templates: [debian-12-standard_12.7-1_amd64.tar.zst]}\n      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 8T}\n",
    )
    .expect("scenario");
    let options = SimOptions {
        task_duration: task,
        workers_per_node: WORKERS,
        auth_failure_delay: Duration::from_millis(10),
        ..SimOptions::default()
    };
    Simulator::start(&scenario, options)
        .await
        .expect("simulator")
}

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("repo/.git")).expect("checkout");
    std::fs::create_dir_all(dir.path().join("repo/stack")).expect("project");
    dir
}

async fn no_change_plan() {
    let count = 1000;
    let sim = simulator(Duration::from_millis(1)).await;
    let dir = workdir();
    let stack = dir.path().join("repo/stack");
    std::fs::write(stack.join("main.tf"), project(count, 1000)).expect("main.tf");
    let stack_arg = stack.display().to_string();
    let setup = atoll(
        &sim,
        dir.path(),
        &[
            "apply",
            "--auto-approve",
            "--parallelism",
            "32",
            "--dir",
            &stack_arg,
        ],
    )
    .await;
    assert!(setup.ok, "setting up {count} containers failed");
    let unloaded = atoll(
        &sim,
        dir.path(),
        &["plan", "--detailed-exitcode", "--dir", &stack_arg],
    )
    .await;
    let latency = Duration::from_millis(5);
    sim.faults().set_latency(latency);
    let run = atoll(
        &sim,
        dir.path(),
        &["plan", "--detailed-exitcode", "--dir", &stack_arg],
    )
    .await;
    let before = match std::env::var("ATOLL_BENCH_BEFORE") {
        Ok(binary) => Some(
            atoll_binary(
                &binary,
                &sim,
                dir.path(),
                &["plan", "--detailed-exitcode", "--dir", &stack_arg],
            )
            .await,
        ),
        Err(_) => None,
    };
    let raw = raw_reads(&sim, count, false).await;
    let two_reads = raw_reads(&sim, count, true).await;
    // cluster/resources once, then pending (current and pending values) per guest
    let requests = 1 + count;
    let floor = latency * requests as u32 / WORKERS as u32;
    println!("no-change plan, {count} containers, 5 ms latency per request:");
    println!("  exit ok (no changes):  {}", run.ok);
    println!(
        "  elapsed:               {:.2} s",
        run.elapsed.as_secs_f64()
    );
    println!(
        "  request floor:         {:.2} s ({requests} requests x 5 ms / {WORKERS} API workers)",
        floor.as_secs_f64()
    );
    println!(
        "  ratio to floor:        {:.2}x (target <= 1.5x)",
        run.elapsed.as_secs_f64() / floor.as_secs_f64()
    );
    println!(
        "  peak memory (VmHWM):   {:.1} MiB",
        run.peak_kib as f64 / 1024.0
    );
    if let Some(before) = before {
        println!(
            "  ATOLL_BENCH_BEFORE:    {:.2} s, exit ok {} ({:.2}x this floor; this build is \
             {:.2}x faster)",
            before.elapsed.as_secs_f64(),
            before.ok,
            before.elapsed.as_secs_f64() / floor.as_secs_f64(),
            before.elapsed.as_secs_f64() / run.elapsed.as_secs_f64()
        );
    }
    println!(
        "  same plan, no latency: {:.2} s (load, evaluation, diff and process start)",
        unloaded.elapsed.as_secs_f64()
    );
    println!(
        "  same requests alone:   {:.2} s (the client alone, on this machine now; ratio {:.2}x)",
        raw.as_secs_f64(),
        run.elapsed.as_secs_f64() / raw.as_secs_f64()
    );
    println!(
        "  two reads per guest:   {:.2} s (config?current=1 and pending, as refresh read before; \
         floor {:.2} s)",
        two_reads.as_secs_f64(),
        (latency * (1 + 2 * count) as u32 / WORKERS as u32).as_secs_f64()
    );
    sim.shutdown();
}

async fn create_hundred() {
    let count = 100;
    let per_node = 4;
    let task = Duration::from_millis(200);
    let sim = simulator(task).await;
    let dir = workdir();
    let stack = dir.path().join("repo/stack");
    std::fs::write(stack.join("main.tf"), project(count, 5000)).expect("main.tf");
    let stack_arg = stack.display().to_string();
    let parallelism = per_node.to_string();
    let run = atoll(
        &sim,
        dir.path(),
        &[
            "apply",
            "--auto-approve",
            "--parallelism",
            &parallelism,
            "--dir",
            &stack_arg,
        ],
    )
    .await;
    // each guest: the create task, then the start task, one guest after the other per slot
    let rounds = count.div_ceil(per_node) as u32;
    let floor = task * 2 * rounds;
    println!(
        "apply creating {count} containers, 200 ms tasks, {per_node} guests at once per node:"
    );
    println!("  exit ok:               {}", run.ok);
    println!(
        "  elapsed:               {:.2} s",
        run.elapsed.as_secs_f64()
    );
    println!(
        "  per-node floor:        {:.2} s ({rounds} rounds x (create + start) x 200 ms)",
        floor.as_secs_f64()
    );
    println!(
        "  ratio to floor:        {:.2}x",
        run.elapsed.as_secs_f64() / floor.as_secs_f64()
    );
    println!(
        "  peak memory (VmHWM):   {:.1} MiB",
        run.peak_kib as f64 / 1024.0
    );
    sim.shutdown();
}

/// The plan's requests and nothing else, through the same client: what this machine can do.
/// With `config_too`, each guest's `config?current=1` is read before its `pending`, as the
/// refresh did until it read `pending` alone.
async fn raw_reads(sim: &Simulator, count: usize, config_too: bool) -> Duration {
    use atoll::proxmox::client::{Auth, ClientSettings, ProxmoxClient};
    use atoll::proxmox::types::{GuestKind, VmId};
    use futures::StreamExt;
    let settings = ClientSettings::new(
        sim.url(),
        Auth::ApiToken("root@pam!atoll=secret".to_owned().into()),
    );
    let client = ProxmoxClient::new(&settings).expect("client");
    let node = "pve".parse().expect("node");
    let started = Instant::now();
    client.cluster_guests().await.expect("cluster");
    futures::stream::iter(0..count as u32)
        .map(|i| {
            let (client, node) = (&client, &node);
            async move {
                let id = VmId::new(1000 + i).expect("id");
                if config_too {
                    let _ = client.guest_config(node, GuestKind::Lxc, id, true).await;
                }
                let _ = client
                    .guest_pending(node, atoll::proxmox::types::GuestKind::Lxc, id)
                    .await;
            }
        })
        .buffer_unordered(64)
        .collect::<Vec<()>>()
        .await;
    started.elapsed()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        no_change_plan().await;
        create_hundred().await;
    });
}
