//! Server time of the dashboard's locks and jobs pages with 1,000 locks and 10,000 jobs in a
//! SQLite store (the target: under 50 ms each). Measured as request latency from a
//! client on the same machine, so it includes HTTP on loopback.
//!
//! `cargo bench --bench web`. Knob: `BENCH_ROUNDS` (default 50 requests per page).

use std::time::{Duration, Instant};

use atoll::store::NewJob;
use futures::future::join_all;
use reqwest::header::COOKIE;
use serde_json::json;

#[path = "../tests/it/app_support/mod.rs"]
mod app_support;
#[allow(unused_imports, reason = "the bench uses part of the support")]
#[path = "../tests/it/web_support/mod.rs"]
mod web_support;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let s = web_support::start().await;
    let seeding = Instant::now();
    for batch in 0..10u64 {
        join_all((0..100u64).map(|i| {
            let pr = batch * 100 + i + 1;
            let repo = format!("github.com/acme/repo{}", pr % 17);
            let s = &s;
            async move { s.lock_in(&repo, &format!("envs/pr{pr}"), pr).await }
        }))
        .await;
    }
    for batch in 0..50u64 {
        let results = join_all((0..200u64).map(|i| {
            let n = batch * 200 + i;
            s.store.enqueue(NewJob {
                kind: if n % 3 == 0 { "apply" } else { "plan" }.to_owned(),
                repo: format!("github.com/acme/repo{}", n % 17),
                pr: Some(n % 1000 + 1),
                dedup_key: None,
                payload: json!({ "n": n }),
            })
        }))
        .await;
        for r in results {
            r.expect("enqueue");
        }
    }
    println!(
        "seeded 1,000 locks and 10,000 jobs in {:.1?}",
        seeding.elapsed()
    );
    let (cookie, _) = s.login().await;
    for (page, path) in [
        ("locks", "/locks"),
        ("jobs", "/jobs"),
        (
            "jobs filtered",
            "/jobs?repo=github.com/acme/repo3&state=queued",
        ),
    ] {
        let mut times = Vec::with_capacity(rounds);
        let mut bytes = 0;
        for _ in 0..rounds {
            let started = Instant::now();
            let resp = s
                .http
                .get(s.url(path))
                .header(COOKIE, &cookie)
                .send()
                .await
                .expect("get");
            assert!(resp.status().is_success(), "{path}: {}", resp.status());
            bytes = resp.bytes().await.expect("body").len();
            times.push(started.elapsed());
        }
        times.sort();
        println!(
            "{page:>14}: median {:>7.2?}  p95 {:>7.2?}  max {:>7.2?}  ({} KB, {rounds} requests)",
            percentile(&times, 0.5),
            percentile(&times, 0.95),
            times[times.len() - 1],
            bytes / 1024
        );
    }
}
