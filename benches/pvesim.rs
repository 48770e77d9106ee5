//! Simulator benchmarks (not tests; they print numbers):
//! 1. throughput of `GET config` without latency (target >= 5,000 requests/s);
//! 2. a refresh of 1,000 containers — `cluster/resources` once, then `config?current=1` and
//!    `pending` per container — with 5 ms latency per request and the three-worker cap,
//!    against the floor of 2,001 x 5 ms / 3 = 3.34 s (target within 1.5x).
//!
//! Run: `cargo bench --bench pvesim` (add `--profile dev` to skip the release build).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pvesim::{Scenario, SimOptions, Simulator};

const TOKEN: &str = "PVEAPIToken=root@pam!atoll=secret";

fn scenario(containers: u32) -> Scenario {
    let mut yaml = String::from(
        "nodes:\n  - name: pve\n    storages:\n      - {id: local, type: dir, content: [vztmpl]}\n      \
         - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}\nguests:\n",
    );
    for i in 0..containers {
        let vmid = 1000 + i;
        let _ = writeln!(
            yaml,
            "  - {{vmid: {vmid}, status: running, config: {{hostname: ct{vmid}, memory: 512, cores: 1, \
             rootfs: 'local-lvm:1', net0: 'name=eth0,bridge=vmbr0,ip=dhcp'}}, pending: {{features: 'nesting=1'}}}}"
        );
    }
    serde_yaml_ng::from_str(&yaml).expect("bench scenario parses")
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()
        .expect("client builds")
}

async fn get(client: &reqwest::Client, url: &str) {
    let res = client
        .get(url)
        .header("Authorization", TOKEN)
        .send()
        .await
        .expect("request");
    assert!(res.status().is_success(), "{url}: {}", res.status());
    let _ = res.bytes().await.expect("body");
}

async fn throughput(sim: &Simulator, requests: usize, concurrency: usize) -> f64 {
    let client = client();
    let next = Arc::new(AtomicUsize::new(0));
    let url = format!("{}/nodes/pve/lxc/1000/config", sim.base_url());
    let start = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (client, next, url) = (client.clone(), next.clone(), url.clone());
            tokio::spawn(async move {
                while next.fetch_add(1, Ordering::Relaxed) < requests {
                    get(&client, &url).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("worker");
    }
    requests as f64 / start.elapsed().as_secs_f64()
}

async fn refresh(sim: &Simulator, containers: u32, concurrency: usize) -> Duration {
    let client = client();
    let base = sim.base_url();
    let start = Instant::now();
    get(&client, &format!("{base}/cluster/resources?type=vm")).await;
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (client, next, base) = (client.clone(), next.clone(), base.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= containers as usize {
                        break;
                    }
                    let vmid = 1000 + i;
                    get(
                        &client,
                        &format!("{base}/nodes/pve/lxc/{vmid}/config?current=1"),
                    )
                    .await;
                    get(&client, &format!("{base}/nodes/pve/lxc/{vmid}/pending")).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("worker");
    }
    start.elapsed()
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let containers = 1000;
        let scenario = scenario(containers);
        let sim = Simulator::start(&scenario, SimOptions::default()).await.expect("simulator");
        let _warm = throughput(&sim, 500, 8).await;
        for concurrency in [1, 8, 32] {
            let rps = throughput(&sim, 20_000, concurrency).await;
            println!("GET config, no latency, {concurrency:>2} client(s): {rps:>8.0} requests/s (target >= 5000)");
        }
        sim.faults().set_latency(Duration::from_millis(5));
        let floor = Duration::from_millis(5) * (2 * containers + 1) / 3;
        for concurrency in [3, 6, 12] {
            let wall = refresh(&sim, containers, concurrency).await;
            let ratio = wall.as_secs_f64() / floor.as_secs_f64();
            println!(
                "refresh of {containers} CTs, 5 ms latency, 3 workers, {concurrency:>2} client(s): {:.2} s (floor {:.2} s, {ratio:.2}x, target <= 1.5x)",
                wall.as_secs_f64(),
                floor.as_secs_f64()
            );
        }
    });
}
