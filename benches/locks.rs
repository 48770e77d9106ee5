//! Lock and plan storage, per backend: listing 1,000 held locks (what the dashboard's locks page
//! reads), contended all-or-nothing acquires with release, and saving large plans.
//!
//! `cargo bench --bench locks` (SQLite always; PostgreSQL when `ATOLL_TEST_DATABASE_URL` is set,
//! in a throw-away schema). Knobs: `BENCH_SECS` (default 3), `BENCH_CLIENTS` (32).

use std::sync::Arc;
use std::time::{Duration, Instant};

use atoll::commands::{RepoDir, Workspace};
use atoll::locks::{
    Acquisition, Actor, ActorVia, AuditStamp, KeyFilter, LockKey, LockOwner, LockQuery, NewPlan,
    PlanSource, Release,
};
use atoll::store::{self, Store};
use sqlx::Connection;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn key(repo: &str, dir: &str) -> LockKey {
    LockKey {
        repo: repo.to_owned(),
        dir: RepoDir::parse(dir).expect("dir"),
        workspace: Workspace::default_workspace(),
        project: None,
    }
}

fn owner(pr: u64) -> LockOwner {
    LockOwner {
        pr,
        pr_url: format!("https://github.com/acme/infra/pull/{pr}"),
        head_sha: format!("{pr:040x}"),
        user: format!("user{pr}"),
        job: Some(uuid::Uuid::new_v4()),
        summary: "Plan: 1 to add, 2 to change, 0 to destroy. 1 restart. 0 blocked.".to_owned(),
        forge: Some(model::ForgeKind::Github),
    }
}

fn report(what: &str, mut samples: Vec<Duration>, elapsed: Option<Duration>) {
    samples.sort_unstable();
    let pct = |p: f64| {
        let at = (samples.len() as f64 * p) as usize;
        samples[at.min(samples.len() - 1)]
    };
    let rate = elapsed.map_or(String::new(), |e| {
        format!(" = {:.0}/s", samples.len() as f64 / e.as_secs_f64())
    });
    println!(
        "  {what}: {} runs{rate}  p50 {:.2?}  p99 {:.2?}  max {:.2?}",
        samples.len(),
        pct(0.50),
        pct(0.99),
        samples[samples.len() - 1]
    );
}

/// 250 PRs in 10 repositories, 4 locks each; then the full list and one PR's list.
async fn list_load(store: &dyn Store) {
    for pr in 0..250_u64 {
        let repo = format!("github.com/acme/repo-{}", pr % 10);
        let keys: Vec<_> = (0..4)
            .map(|n| key(&repo, &format!("pr{pr}/envs/{n}")))
            .collect();
        let outcome = store
            .locks()
            .lock_acquire(&keys, &owner(pr))
            .await
            .expect("seed");
        assert!(matches!(outcome, Acquisition::Granted(ref l) if l.len() == 4));
    }
    let mut all = Vec::new();
    let mut one = Vec::new();
    for n in 0..50_u64 {
        let started = Instant::now();
        let locks = store
            .locks()
            .lock_list(&LockQuery::default())
            .await
            .expect("list");
        all.push(started.elapsed());
        assert_eq!(locks.len(), 1000);
        let query = LockQuery {
            repo: Some(format!("github.com/acme/repo-{}", n % 10)),
            pr: Some(n),
        };
        let started = Instant::now();
        assert_eq!(
            store.locks().lock_list(&query).await.expect("list").len(),
            4
        );
        one.push(started.elapsed());
    }
    report("lock_list (1,000 locks)", all, None);
    report("lock_list (one PR of 1,000 locks)", one, None);
}

/// `clients` PRs each take 3 of 20 shared keys and release them, for `secs`.
async fn contended_load(store: Arc<dyn Store>, clients: u64, secs: u64) {
    let until = Instant::now() + Duration::from_secs(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let repo = "github.com/acme/contended";
                let pr = 10_000 + client;
                let stamp = AuditStamp {
                    actor: Actor::new("bench", ActorVia::System),
                    detail: "bench".to_owned(),
                };
                let (mut samples, mut granted) = (Vec::new(), 0_u64);
                let mut n = client;
                while Instant::now() < until {
                    let keys: Vec<_> = (0..3)
                        .map(|i| key(repo, &format!("shared/{}", (n * 7 + i * 3) % 20)))
                        .collect();
                    let started = Instant::now();
                    let outcome = store
                        .locks()
                        .lock_acquire(&keys, &owner(pr))
                        .await
                        .expect("acquire");
                    samples.push(started.elapsed());
                    if matches!(outcome, Acquisition::Granted(_)) {
                        granted += 1;
                        let release = Release::Pr {
                            repo: repo.to_owned(),
                            pr,
                            filter: KeyFilter::default(),
                        };
                        store
                            .locks()
                            .lock_release(&release, &stamp)
                            .await
                            .expect("release");
                    }
                    n += 1;
                }
                (samples, granted)
            })
        })
        .collect();
    let started = Instant::now();
    let (mut samples, mut granted) = (Vec::new(), 0);
    for task in tasks {
        let (s, g) = task.await.expect("client");
        samples.extend(s);
        granted += g;
    }
    let elapsed = started.elapsed();
    println!(
        "  contended acquires: {granted} granted (each then released), {} refused",
        samples.len() as u64 - granted
    );
    report("lock_acquire (3 of 20 shared keys)", samples, Some(elapsed));
}

/// 100 saves of a plan with 5,000 rendered lines and a 2,000-change document.
async fn plan_load(store: &dyn Store) {
    let changes: Vec<_> = (0..2000)
        .map(|n| serde_json::json!({"address": format!("res.x[{n}]"), "actions": ["update"]}))
        .collect();
    let document = serde_json::json!({"format_version": "1", "resource_changes": changes});
    let rendered = "  ~ cores = 2 -> 4  # live\n".repeat(5000);
    let mut samples = Vec::new();
    for n in 0..100_u64 {
        let plan = NewPlan {
            key: key("github.com/acme/plans", &format!("envs/{}", n % 5)),
            pr: 1,
            job: None,
            source: PlanSource {
                sha: format!("{n:040x}"),
                config_hash: "c".to_owned(),
                state_fingerprint: "s".to_owned(),
            },
            document: document.clone(),
            rendered: rendered.clone(),
            summary: "Plan: 0 to add, 5000 to change, 0 to destroy.".to_owned(),
        };
        let started = Instant::now();
        store.plans().plan_save(&plan).await.expect("save");
        samples.push(started.elapsed());
    }
    println!(
        "  plan size: {} bytes rendered, {} bytes JSON",
        rendered.len(),
        document.to_string().len()
    );
    report("plan_save", samples, None);
}

async fn run(name: &str, url: &str) {
    let secs = env_or("BENCH_SECS", 3);
    let clients = env_or("BENCH_CLIENTS", 32);
    println!("{name}");
    let store = store::connect(url).await.expect("connect");
    list_load(&*store).await;
    contended_load(Arc::clone(&store), clients, secs).await;
    plan_load(&*store).await;
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    run("sqlite", &url).await;
    if let Ok(base) = std::env::var("ATOLL_TEST_DATABASE_URL") {
        let schema = format!("atoll_bench_{}", uuid::Uuid::new_v4().simple());
        let mut admin = sqlx::PgConnection::connect(&base).await.expect("postgres");
        sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut admin)
            .await
            .expect("schema");
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options[search_path]={schema}");
        run("postgres", &url).await;
        sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
            .execute(&mut admin)
            .await
            .expect("drop");
    }
}
