//! Webhook intake throughput: signed deliveries per second and latency percentiles through
//! `POST /events` with the SQLite store (a file, as deployed; and in memory, to separate the
//! cost of durable commits from the intake's own), against a bare axum handler returning 200 under the
//! same load in the same run; then the resident memory of an idle `atoll serve`.
//!
//! Run: `cargo bench --bench webhook` (optionally `-- N CONCURRENCY`, default 20000 64).
//! Prints numbers; asserts nothing beyond "every delivery was accepted".

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use atoll::app::App;
use axum::http::StatusCode;
use axum::routing::post;
use tokio::sync::Semaphore;

const SECRET: &str = "bench-secret";

/// One prepared delivery: headers and signed body.
struct Prepared {
    delivery: String,
    signature: String,
    body: bytes::Bytes,
}

fn prepare(n: usize) -> Vec<Prepared> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/github/issue_comment.created.pr-plan.json"
    );
    let template = std::fs::read_to_string(path).expect("fixture");
    assert!(template.contains("\"id\": 492700400"), "fixture comment id");
    (0..n)
        .map(|i| {
            // A distinct comment id per delivery, so every one is a new job (no dedup).
            let body = template.replacen(
                "\"id\": 492700400",
                &format!("\"id\": {}", 1_000_000 + i),
                1,
            );
            Prepared {
                delivery: format!("bench-{i}"),
                signature: format!("sha256={}", atoll::webhook::sign(SECRET, body.as_bytes())),
                body: bytes::Bytes::from(body),
            }
        })
        .collect()
}

struct Report {
    ok: usize,
    failed: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

async fn load(url: &str, deliveries: &[Prepared], concurrency: usize, expect: u16) -> Report {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .build()
        .expect("client");
    let gate = Arc::new(Semaphore::new(concurrency));
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(deliveries.len());
    for d in deliveries {
        let permit = Arc::clone(&gate).acquire_owned().await.expect("semaphore");
        let req = client
            .post(url)
            .header("content-type", "application/json")
            .header("x-github-event", "issue_comment")
            .header("x-github-delivery", d.delivery.as_str())
            .header("x-hub-signature-256", d.signature.as_str())
            .body(d.body.clone());
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            let status = req.send().await.map(|r| r.status().as_u16()).unwrap_or(0);
            drop(permit);
            (status, t.elapsed())
        }));
    }
    let mut report = Report {
        ok: 0,
        failed: 0,
        elapsed: Duration::ZERO,
        latencies: Vec::new(),
    };
    for t in tasks {
        let (status, latency) = t.await.expect("request task");
        if status == expect {
            report.ok += 1;
        } else {
            report.failed += 1;
        }
        report.latencies.push(latency);
    }
    report.elapsed = start.elapsed();
    report.latencies.sort();
    report
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(idx).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn print(name: &str, r: &Report) {
    let rate = r.ok as f64 / r.elapsed.as_secs_f64();
    println!(
        "{name:<32} {:>6} ok {:>4} failed  {:>8.0} req/s  p50 {:>6.2} ms  p99 {:>6.2} ms  max {:>7.2} ms",
        r.ok,
        r.failed,
        rate,
        pct(&r.latencies, 0.50),
        pct(&r.latencies, 0.99),
        pct(&r.latencies, 1.0),
    );
}

fn config_yaml(dir: &std::path::Path, store: &str) -> String {
    format!(
        "server: {{listen: '127.0.0.1:0'}}\ndata_dir: {dir:?}\n{store}\
         github: {{enabled: true, webhook_secret: {SECRET}}}\nrepo_allowlist: ['*']\n\
         log: {{level: warn}}\n"
    )
}

/// Starts atoll in-process; returns its `/events` URL and store.
async fn start_atoll(dir: &std::path::Path, store: &str) -> (String, Arc<dyn atoll::store::Store>) {
    let loaded =
        atoll::config::from_sources(&config_yaml(dir, store), std::iter::empty()).expect("config");
    let app = App::build(&loaded.settings).await.expect("app");
    let url = format!("http://{}/events", app.local_addr().expect("addr"));
    let store = app.store();
    tokio::spawn(app.serve(std::future::pending()));
    (url, store)
}

/// Warm-up, then the measured run; checks every job was stored.
async fn run_atoll(
    name: &str,
    dir: &std::path::Path,
    store: &str,
    load_set: &Loads,
    concurrency: usize,
) {
    let (url, store) = start_atoll(dir, store).await;
    load(&url, &load_set.warmup, concurrency, 202).await;
    let report = load(&url, &load_set.measured, concurrency, 202).await;
    print(name, &report);
    let jobs = store.list_jobs(u32::MAX).await.expect("jobs").len();
    let expected = load_set.warmup.len() + load_set.measured.len();
    if jobs != expected {
        println!("  !! jobs stored: {jobs}, expected {expected}");
    }
}

struct Loads {
    warmup: Vec<Prepared>,
    measured: Vec<Prepared>,
}

async fn throughput(n: usize, concurrency: usize) {
    // Warm-up deliveries: comment ids after the measured ones, so none is a duplicate.
    let mut all = prepare(n + 500);
    let warmup: Vec<Prepared> = all
        .split_off(n)
        .into_iter()
        .map(|mut d| {
            d.delivery = format!("warm-{}", d.delivery);
            d
        })
        .collect();
    let loads = Loads {
        warmup,
        measured: all,
    };

    let bare = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind bare");
    let bare_url = format!("http://{}/events", bare.local_addr().expect("addr"));
    let router = axum::Router::new().route("/events", post(|| async { StatusCode::OK }));
    tokio::spawn(async move { axum::serve(bare, router).await });

    println!(
        "webhook bench: {n} signed issue_comment deliveries (15.6 KB each), {concurrency} concurrent"
    );
    load(&bare_url, &loads.warmup, concurrency, 200).await;
    let bare_report = load(&bare_url, &loads.measured, concurrency, 200).await;
    print("bare axum handler (200)", &bare_report);

    let dir = tempfile::tempdir().expect("tempdir");
    run_atoll(
        "atoll /events, SQLite file",
        dir.path(),
        "",
        &loads,
        concurrency,
    )
    .await;
    let mem = tempfile::tempdir().expect("tempdir");
    let in_memory = "store: {url: 'sqlite::memory:'}\n";
    run_atoll(
        "atoll /events, SQLite :memory:",
        mem.path(),
        in_memory,
        &loads,
        concurrency,
    )
    .await;
}

fn idle_rss() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("atoll.yaml");
    std::fs::write(&config, config_yaml(dir.path(), "")).expect("config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_atoll"))
        .args(["serve", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn atoll serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("listening line");
    // Let start-up allocations settle before reading the idle figure.
    std::thread::sleep(Duration::from_secs(2));
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .unwrap_or("VmRSS: unknown");
    println!(
        "idle atoll serve: {} ({})",
        rss.trim_start_matches("VmRSS:").trim(),
        line.trim()
    );
    let _ = child.kill();
    let _ = child.wait();
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let n = args.first().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let concurrency = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(64);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(throughput(n, concurrency));
    idle_rss();
}
