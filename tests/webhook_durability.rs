//! A 202 means the job is durable: `kill -9` right after it, restart, and the job is there
//! and can be claimed.

mod webhook_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use atoll::store::{ClaimLimits, JobState};
use webhook_support::{Delivery, FIXTURE_REPOS, fixture, test_yaml};

const START_DEADLINE: Duration = Duration::from_secs(30);

/// Starts `atoll serve` and waits (with a deadline) for its "listening on" line.
fn start(config: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_atoll"))
        .args(["serve", "--config"])
        .arg(config)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn atoll serve");
    let stdout = child.stdout.take().expect("stdout piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(addr) = line.strip_prefix("atoll listening on ") {
                let _ = tx.send(addr.to_owned());
            }
        }
    });
    let addr = rx
        .recv_timeout(START_DEADLINE)
        .expect("server announced its address in time");
    (child, format!("http://{addr}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn job_survives_kill_9_right_after_202_and_is_claimable_after_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("atoll.yaml");
    std::fs::write(&config, test_yaml(dir.path(), FIXTURE_REPOS, "")).expect("write config");

    let (mut first, base) = start(&config);
    let client = webhook_support::client();
    let d = Delivery::github(
        "issue_comment",
        "k9-1",
        fixture("github/issue_comment.created.pr-plan.json"),
    );
    let mut req = client.post(format!("{base}/events"));
    for (n, v) in &d.headers {
        req = req.header(n.as_str(), v.as_str());
    }
    let resp = req.body(d.body.clone()).send().await.expect("deliver");
    assert_eq!(resp.status(), 202);
    let body: serde_json::Value = resp.json().await.expect("json");
    let job_id: uuid::Uuid = body["job"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("job id");
    first.kill().expect("kill -9"); // SIGKILL: no shutdown code runs
    first.wait().expect("reap killed server");

    let (mut second, base) = start(&config);
    let ready = client
        .get(format!("{base}/readyz"))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 200);

    let url = format!("sqlite://{}", dir.path().join("atoll.db").display());
    let store = atoll::store::connect(&url)
        .await
        .expect("open the server's database");
    let job = store
        .get_job(job_id)
        .await
        .expect("get job")
        .expect("job survived kill -9");
    assert_eq!((job.kind.as_str(), job.state), ("plan", JobState::Queued));
    let limits = ClaimLimits {
        global: 4,
        per_repo: 1,
    };
    let claimed = store
        .claim("test-worker", &["plan"], Duration::from_secs(30), limits)
        .await
        .expect("claim")
        .expect("the surviving job is claimable");
    assert_eq!(claimed.id, job_id);
    assert_eq!(claimed.payload["command"]["dir"], "envs/dev");

    // The redelivery GitHub would send after the crash is recognised as a duplicate.
    let mut req = client.post(format!("{base}/events"));
    for (n, v) in &d.headers {
        req = req.header(n.as_str(), v.as_str());
    }
    let resp = req.body(d.body.clone()).send().await.expect("redeliver");
    assert_eq!(resp.status(), 200);
    second.kill().expect("stop second server");
    second.wait().expect("reap");
}
