//! Store and queue throughput, per backend: webhook deliveries accepted per second (each one a
//! delivery row plus a job row in one transaction) with p50/p99 latency, then jobs run per
//! second through the worker pool with a no-op handler.
//!
//! `cargo bench --bench store_queue`: SQLite in both durability modes, and PostgreSQL when
//! `ATOLL_TEST_DATABASE_URL` is set (in a throw-away schema). Knobs: `BENCH_SECS` (default 3),
//! `BENCH_CLIENTS` (64).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use atoll::queue::{JobContext, JobHandler, Queue, QueueSettings};
use atoll::store::{self, ClaimLimits, DeliveryOutcome, NewDelivery, NewJob, Store};
use model::ForgeKind;
use sqlx::Connection;
use tokio::sync::Notify;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn delivery(client: u64, n: u64) -> (NewDelivery, NewJob) {
    let id = format!("{client}-{n}");
    let repo = format!("github.com/acme/repo-{}", n % 16);
    let delivery = NewDelivery {
        forge: ForgeKind::Github,
        delivery_id: id.clone(),
        event: "issue_comment".to_owned(),
        repo: repo.clone(),
    };
    let job = NewJob {
        kind: "plan".to_owned(),
        repo,
        pr: Some(n % 500),
        dedup_key: Some(format!("comment:github:{id}")),
        payload: serde_json::json!({"command": "plan", "dir": "envs/dev", "comment_id": n}),
    };
    (delivery, job)
}

/// Accepts deliveries from `clients` concurrent tasks for `secs`; prints rate and latency.
async fn accept_load(store: Arc<dyn Store>, clients: u64, secs: u64) -> u64 {
    let until = Instant::now() + Duration::from_secs(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut n = 0;
                while Instant::now() < until {
                    let (d, j) = delivery(client, n);
                    let started = Instant::now();
                    let outcome = store.accept_delivery(d, Some(j)).await.expect("accept");
                    latencies.push(started.elapsed());
                    assert!(matches!(outcome, DeliveryOutcome::Accepted { .. }));
                    n += 1;
                }
                latencies
            })
        })
        .collect();
    let started = Instant::now();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("client task"));
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_unstable();
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    println!(
        "  accept_delivery: {} in {elapsed:.2}s = {:.0}/s  p50 {:.2?}  p99 {:.2?}  max {:.2?}",
        all.len(),
        all.len() as f64 / elapsed,
        pct(0.50),
        pct(0.99),
        all[all.len() - 1],
    );
    all.len() as u64
}

/// Logs one line and counts the job; wakes the bench when all are done.
#[derive(Debug)]
struct Noop {
    done: Arc<AtomicU64>,
    target: u64,
    all_done: Arc<Notify>,
}

#[async_trait]
impl JobHandler for Noop {
    async fn run(&self, ctx: JobContext) -> anyhow::Result<()> {
        ctx.log("done").await?;
        if self.done.fetch_add(1, Ordering::SeqCst) + 1 == self.target {
            self.all_done.notify_one();
        }
        Ok(())
    }
}

/// Jobs timed through the worker pool (the first ones queued by the intake phase).
const POOL_JOBS: u64 = 3_000;

/// Runs `jobs` queued jobs through a pool with a handler that logs one line.
async fn drain_load(store: Arc<dyn Store>, jobs: u64) {
    let settings = QueueSettings {
        limits: ClaimLimits {
            global: 16,
            per_repo: 16,
            per_repo_exempt: &[],
        },
        ..QueueSettings::default()
    };
    let all_done = Arc::new(Notify::new());
    let handler = Noop {
        done: Arc::new(AtomicU64::new(0)),
        target: jobs,
        all_done: all_done.clone(),
    };
    let started = Instant::now();
    let pool = Queue::new(store, settings).handle("plan", handler).start();
    all_done.notified().await;
    pool.shutdown().await; // waits for the last outcomes to be recorded
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "  worker pool, 16 slots (claim, heartbeat, 1 log line, finish): {jobs} jobs in {elapsed:.2}s = {:.0}/s",
        jobs as f64 / elapsed
    );
}

async fn run(name: &str, url: &str) {
    let secs = env_or("BENCH_SECS", 3);
    let clients = env_or("BENCH_CLIENTS", 64);
    println!("{name} ({clients} concurrent clients, {secs}s)");
    let store = store::connect(url).await.expect("connect");
    let jobs = accept_load(store.clone(), clients, secs).await;
    drain_load(store, jobs.min(POOL_JOBS)).await;
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    run("sqlite, synchronous=full (default)", &url).await;
    let url = format!("sqlite://{}", dir.path().join("normal.db").display());
    run(
        "sqlite, synchronous=normal",
        &format!("{url}?synchronous=normal"),
    )
    .await;
    if let Ok(base) = std::env::var("ATOLL_TEST_DATABASE_URL") {
        let schema = format!("atoll_bench_{}", uuid::Uuid::new_v4().simple());
        let mut admin = sqlx::PgConnection::connect(&base).await.expect("postgres");
        sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut admin)
            .await
            .expect("schema");
        let sep = if base.contains('?') { '&' } else { '?' };
        run(
            "postgres",
            &format!("{base}{sep}options[search_path]={schema}"),
        )
        .await;
        sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
            .execute(&mut admin)
            .await
            .expect("drop");
    }
}
