//! From webhook to plan comment: 50 PRs, each a 10-container project, planned by a real
//! atoll server (SQLite, real git) against the simulator with 5 ms latency per request, the
//! webhooks sent by the fake GitHub. Prints p50/p95 and the process's peak RSS (server,
//! simulator and fake forge together: an upper bound for the server).
//!
//! `cargo bench --bench runner_plan`

use std::sync::Arc;
use std::time::{Duration, Instant};

use atoll::app::App;
use atoll::runner::Runner;
use fakeforge::{FAKE_TOKEN, FakeForge};
use pvesim::{FaultSettings, Scenario, SimOptions, Simulator};

const SECRET: &str = "bench-secret";
const REPO: &str = "acme/infra";
const PRS: usize = 50;

fn project(n: usize) -> String {
    (0..10)
        .map(|i| {
            format!(
                "resource \"proxmox_virtual_environment_container\" \"c{i}\" {{\n  node_name = \"pve\"\n  vm_id = {}\n  operating_system {{\n    template_file_id = \"local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst\"\n    type = \"debian\"\n  }}\n  disk {{\n    datastore_id = \"local-lvm\"\n    size = 8\n  }}\n}}\n",
                1000 + n * 10 + i
            )
        })
        .collect()
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let scenario: Scenario = serde_yaml_ng::from_str("{}").expect("scenario");
    let options = SimOptions {
        faults: FaultSettings {
            latency: Duration::from_millis(5),
            ..FaultSettings::default()
        },
        ..SimOptions::default()
    };
    let sim = Simulator::start(&scenario, options).await.expect("sim");
    let fake = FakeForge::github().await.expect("fake");
    fake.set_web_host("github.com");
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = format!(
        "server: {{listen: '127.0.0.1:0'}}\ndata_dir: {:?}\n\
         github: {{enabled: true, webhook_secret: {SECRET}, bot_user: atoll-bot, api_url: '{}', token: {FAKE_TOKEN}}}\n\
         repo_allowlist: ['github.com/acme/*']\n\
         proxmox: {{endpoint: '{}', api_token: 'root@pam!atoll=secret'}}\n\
         protect: {{discover: false}}\nqueue: {{max_running_per_repo: 4}}\n",
        dir.path(),
        fake.api_url(),
        sim.url()
    );
    let settings = atoll::config::from_sources(&yaml, std::iter::empty())
        .expect("config")
        .settings;
    let app = App::build(&settings).await.expect("app");
    let runner = Runner::from_settings(&settings, app.store(), app.proxmox()).expect("runner");
    let app = app.with_runner(Arc::new(runner));
    let addr = app.local_addr().expect("addr");
    fake.set_webhook(&format!("http://{addr}/events"), SECRET);
    tokio::spawn(app.serve(std::future::pending()));
    fake.create_repo(REPO).await.expect("repo");
    let mut samples = Vec::with_capacity(PRS);
    for n in 0..PRS {
        let path = format!("envs/p{n}/main.tf");
        let started = Instant::now();
        let pr = fake
            .open_pr(REPO, "alice", &format!("b{n}"), &[(&path, &project(n))])
            .await
            .expect("pr");
        let deadline = started + Duration::from_secs(60);
        loop {
            let done = fake
                .comments(REPO, pr)
                .iter()
                .any(|c| c.author == "atoll-bot" && c.body.contains("Plan:"));
            if done {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "PR {pr} not planned in 60 s: {:?}",
                fake.comments(REPO, pr)
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        samples.push(started.elapsed());
    }
    samples.sort();
    let p = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "runner_plan: {PRS} PRs x 10 containers, sim latency 5 ms: webhook->plan comment p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms; peak RSS {:.1} MB (whole process)",
        p(0.5).as_secs_f64() * 1e3,
        p(0.95).as_secs_f64() * 1e3,
        p(1.0).as_secs_f64() * 1e3,
        peak_rss_mb()
    );
}
