//! Refresh of 1,000 containers through `proxmox::client` against the in-process simulator:
//! `GET /cluster/resources?type=vm` once, then `pending` per container (as `proxmox::inventory`),
//! with 5 ms latency per request and PVE's three API workers per node (the client's per-node
//! limit is three as well). Prints wall time against the floor 1,001 x 5 ms / 3 ~ 1.67 s, and the
//! same refresh without latency (client + simulator throughput).
//!
//! Run: `cargo bench --bench pve_refresh` (optimised) or `cargo bench --profile dev --bench
//! pve_refresh` (quicker to build; the latency-bound figure barely changes).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use atoll::proxmox::client::{Auth, ClientSettings, ProxmoxClient};
use atoll::proxmox::types::GuestKind;
use futures::{StreamExt, stream};
use pvesim::{FaultSettings, Scenario, SimOptions, Simulator};

const GUESTS: u32 = 1_000;
const LATENCY: Duration = Duration::from_millis(5);
const WORKERS: usize = 3;

fn scenario() -> Scenario {
    let mut yaml = String::from("guests:\n");
    for i in 0..GUESTS {
        let vmid = 1000 + i;
        let _ = writeln!(
            yaml,
            "  - {{vmid: {vmid}, status: running, config: {{hostname: ct{vmid}, memory: 512, \
             ostype: debian, rootfs: \"local-lvm:vm-{vmid}-disk-0,size=8G\", \
             net0: \"name=eth0,bridge=vmbr0,hwaddr=BC:24:11:{:02X}:{:02X}:01,ip=dhcp,type=veth\"}}, \
             pending: {{cores: 2}}}}",
            i / 256,
            i % 256
        );
    }
    serde_yaml_ng::from_str(&yaml).expect("benchmark scenario")
}

/// One refresh; returns (requests sent, wall time).
async fn refresh(client: &ProxmoxClient) -> (usize, Duration) {
    let started = Instant::now();
    let guests = client.cluster_guests().await.expect("cluster/resources");
    let lxcs: Vec<_> = guests
        .into_iter()
        .filter(|g| g.kind == GuestKind::Lxc)
        .collect();
    let done = stream::iter(&lxcs)
        .map(|g| async move {
            client
                .guest_pending(&g.node, g.kind, g.vmid)
                .await
                .map(|_| ())
        })
        // Enough in flight that the per-node limit, not this stream, is what throttles.
        .buffer_unordered(64)
        .collect::<Vec<_>>()
        .await;
    let failed = done.iter().filter(|r| r.is_err()).count();
    assert_eq!(failed, 0, "{failed} reads failed");
    (1 + done.len(), started.elapsed())
}

/// Mean time of one `GET pending` sent alone (what a single worker slot costs on this machine).
async fn sequential_mean(client: &ProxmoxClient, count: u32) -> Duration {
    let guests = client.cluster_guests().await.expect("cluster/resources");
    let started = Instant::now();
    for g in guests.iter().take(count as usize) {
        client
            .guest_pending(&g.node, g.kind, g.vmid)
            .await
            .expect("pending");
    }
    started.elapsed() / count
}

async fn run(latency: Duration, rounds: usize) -> Vec<(usize, Duration)> {
    let options = SimOptions {
        workers_per_node: WORKERS,
        faults: FaultSettings {
            latency,
            ..FaultSettings::default()
        },
        ..SimOptions::default()
    };
    let sim = Simulator::start(&scenario(), options)
        .await
        .expect("simulator");
    let mut settings = ClientSettings::new(
        sim.url(),
        Auth::ApiToken("root@pam!atoll=secret".to_owned().into()),
    );
    settings.node_concurrency = WORKERS;
    let client = ProxmoxClient::new(&settings).expect("client");
    if !latency.is_zero() {
        let mean = sequential_mean(&client, 200).await;
        let machine_floor = mean.as_secs_f64() * f64::from(1 + GUESTS) / WORKERS as f64;
        println!(
            "  one request alone: {:.2} ms mean (of which {} ms injected latency); \
             floor at that cost: {machine_floor:.3} s",
            mean.as_secs_f64() * 1000.0,
            latency.as_millis()
        );
    }
    let mut results = Vec::new();
    for _ in 0..rounds {
        results.push(refresh(&client).await);
    }
    results
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let floor = LATENCY * (1 + GUESTS) / WORKERS as u32;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    println!("machine: {cpus} cpus, load average {}", load.join(" "));
    println!(
        "pve_refresh: {GUESTS} containers, {} ms latency, {WORKERS} workers per node",
        LATENCY.as_millis()
    );
    let results = runtime.block_on(run(LATENCY, 3));
    for (i, (requests, wall)) in results.iter().enumerate() {
        println!(
            "  round {}: {requests} requests in {:.3} s (floor {:.3} s, {:.2}x floor; {:.2} ms per request per worker)",
            i + 1,
            wall.as_secs_f64(),
            floor.as_secs_f64(),
            wall.as_secs_f64() / floor.as_secs_f64(),
            wall.as_secs_f64() * 1000.0 * WORKERS as f64 / *requests as f64
        );
    }
    let best = results.iter().map(|(_, w)| *w).min().unwrap_or_default();
    println!(
        "  best: {:.3} s = {:.2}x floor (target <= 1.5x)",
        best.as_secs_f64(),
        best.as_secs_f64() / floor.as_secs_f64()
    );

    let fast = runtime.block_on(run(Duration::ZERO, 3));
    for (requests, wall) in &fast {
        println!(
            "  no latency: {requests} requests in {:.3} s = {:.0} requests/s (client + simulator)",
            wall.as_secs_f64(),
            *requests as f64 / wall.as_secs_f64()
        );
    }
}
