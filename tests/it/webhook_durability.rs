//! A 202 means the job is durable: `kill -9` right after it, restart, and the job is there
//! and runs.

use crate::webhook_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use atoll::store::JobState;
use webhook_support::{Delivery, FIXTURE_REPOS, fixture, test_yaml};

const START_DEADLINE: Duration = Duration::from_secs(30);

/// Starts `atoll serve` and waits (with a deadline) for its "listening on" line.
fn start(config: &Path) -> (Child, String) {
    start_logging(config, "warn", Stdio::inherit())
}

/// Starts `atoll serve` with a log filter and somewhere for its logs to go.
fn start_logging(config: &Path, filter: &str, logs: Stdio) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_atoll"))
        .args(["serve", "--config"])
        .arg(config)
        .env("RUST_LOG", filter)
        .stdout(Stdio::piped())
        .stderr(logs)
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
async fn job_survives_kill_9_right_after_202_and_runs_after_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("atoll.yaml");
    // A short lease: a claim by the killed server expires quickly.
    let queue = "queue: {lease_secs: 5, heartbeat_secs: 1}\n";
    std::fs::write(&config, test_yaml(dir.path(), FIXTURE_REPOS, queue)).expect("write config");

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

    // The redelivery GitHub would send after the crash is recognised as a duplicate.
    let mut req = client.post(format!("{base}/events"));
    for (n, v) in &d.headers {
        req = req.header(n.as_str(), v.as_str());
    }
    let resp = req.body(d.body.clone()).send().await.expect("redeliver");
    assert_eq!(resp.status(), 200);
    // The restarted `atoll serve` has the PR runner: it claims the surviving job and runs it.
    // The test config gives GitHub no API token, so the run ends failed with that next step.
    let url = format!("sqlite://{}", dir.path().join("atoll.db").display());
    let store = atoll::store::connect(&url).await.expect("store");
    let deadline = tokio::time::Instant::now() + START_DEADLINE;
    loop {
        let job = store
            .get_job(job_id)
            .await
            .expect("get job")
            .expect("job row");
        if job.state == JobState::Failed {
            assert!(job.attempts >= 1);
            let error = job.error.unwrap_or_default();
            assert!(error.contains("github.token"), "{error}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "job stuck in {:?}",
            job.state
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    second.kill().expect("stop second server");
    second.wait().expect("reap");
}

#[tokio::test(flavor = "multi_thread")]
async fn server_shuts_down_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("atoll.yaml");
    std::fs::write(&config, test_yaml(dir.path(), FIXTURE_REPOS, "")).expect("write config");
    let (mut child, base) = start(&config);
    let client = webhook_support::client();
    let health = client
        .get(format!("{base}/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status(), 200);
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("send SIGTERM");
    assert!(status.success());
    let deadline = std::time::Instant::now() + START_DEADLINE;
    let exit = loop {
        if let Some(exit) = child.try_wait().expect("poll child") {
            break exit;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "server ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "exit status {exit:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn debug_logs_never_contain_secrets_signatures_or_bodies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("atoll.yaml");
    std::fs::write(&config, test_yaml(dir.path(), FIXTURE_REPOS, "")).expect("write config");
    let log_path = dir.path().join("atoll.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let (mut child, base) = start_logging(&config, "trace", Stdio::from(log));
    let client = webhook_support::client();
    let good = Delivery::github(
        "issue_comment",
        "log-1",
        fixture("github/issue_comment.created.pr-plan.json"),
    );
    let bad = Delivery::github(
        "issue_comment",
        "log-2",
        fixture("github/issue_comment.created.pr-plan.json"),
    )
    .set_header(
        "x-hub-signature-256",
        &format!("sha256={}", "cd".repeat(32)),
    );
    let mut signatures = Vec::new();
    for d in [&good, &bad] {
        let mut req = client.post(format!("{base}/events"));
        for (n, v) in &d.headers {
            req = req.header(n.as_str(), v.as_str());
            if n == "x-hub-signature-256" {
                signatures.push(v.trim_start_matches("sha256=").to_owned());
            }
        }
        req.body(d.body.clone()).send().await.expect("deliver");
    }
    child.kill().expect("stop server");
    child.wait().expect("reap");
    let logs = std::fs::read_to_string(&log_path).expect("read logs");
    assert!(
        logs.contains("log-1"),
        "the delivery id should be logged: {logs}"
    );
    let mut forbidden = vec![
        webhook_support::GITHUB_SECRET.to_owned(),
        webhook_support::GITEA_SECRET.to_owned(),
        "It looks like you accidently spelled".to_owned(), // from the payload body
    ];
    forbidden.extend(signatures);
    for needle in forbidden {
        assert!(!logs.contains(&needle), "logs contain {needle:?}");
    }
}
