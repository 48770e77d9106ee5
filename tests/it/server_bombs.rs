//! Resource bombs in a pull request, against a running `atoll serve` process: each bomb gets a
//! server of its own (the release or debug binary Cargo built for the tests), a PR carrying the
//! bomb, and a watchdog that kills the server if its resident memory passes `KILL_AT` (so today's
//! unbounded code fails the test instead of taking the machine down). The server must answer the
//! PR with a diagnostic, keep its peak RSS (`VmHWM`) under `PEAK_BOUND`, and still answer
//! `/healthz` afterwards. Each test prints the figure it measured.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use fakeforge::{FAKE_TOKEN, FakeForge};
use pvesim::{Scenario, SimOptions, Simulator};
use tokio::process::{Child, Command};

use crate::bombs;

const SECRET: &str = "bomb-test-webhook-secret";
const REPO: &str = "acme/infra";
const PVE_TOKEN: &str = "root@pam!atoll=secret";

/// The most a server may reach while it refuses one bomb.
const PEAK_BOUND_MIB: u64 = 384;
/// Where the watchdog stops a server that is plainly not bounded.
const KILL_AT_MIB: u64 = 1536;
/// How long a bomb may take to be answered.
const ANSWER_WITHIN: Duration = Duration::from_secs(120);

/// A running `atoll serve` with its fakes.
struct Served {
    fake: FakeForge,
    _sim: Simulator,
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().expect("addr").port()
}

impl Served {
    async fn start() -> Self {
        let sim = Simulator::start(
            &serde_yaml_ng::from_str::<Scenario>("{}").expect("scenario"),
            SimOptions::default(),
        )
        .await
        .expect("simulator");
        let fake = FakeForge::github().await.expect("fake github");
        fake.set_web_host("github.com");
        fake.create_repo(REPO).await.expect("repo");
        fake.set_permission(REPO, "atoll-bot", "admin");
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let config = format!(
            "server: {{listen: '127.0.0.1:{port}'}}\n\
             data_dir: {:?}\n\
             webhook: {{allow_fork_prs: true}}\n\
             github: {{enabled: true, webhook_secret: {SECRET}, api_url: '{}', bot_user: atoll-bot, token: {FAKE_TOKEN}}}\n\
             repo_allowlist: ['github.com/acme/*']\n\
             proxmox: {{endpoint: '{}', api_token: '{PVE_TOKEN}'}}\n\
             protect: {{discover: false}}\n\
             log: {{level: warn}}\n",
            dir.path().join("data"),
            fake.api_url(),
            sim.url(),
        );
        let path = dir.path().join("atoll.yaml");
        std::fs::write(&path, config).expect("config");
        let log = std::fs::File::create(dir.path().join("server.log")).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_atoll"))
            .arg("serve")
            .arg("--config")
            .arg(&path)
            .env_remove("HTTP_PROXY")
            .env_remove("HTTPS_PROXY")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("atoll serve");
        let served = Self {
            fake,
            _sim: sim,
            child,
            port,
            dir,
        };
        served.wait_healthy(Duration::from_secs(60)).await;
        served
            .fake
            .set_webhook(&format!("http://127.0.0.1:{port}/events"), SECRET);
        served
    }

    fn pid(&self) -> u32 {
        self.child.id().expect("the server is running")
    }

    async fn healthz(&self) -> bool {
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("client");
        client
            .get(format!("http://127.0.0.1:{}/healthz", self.port))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
    }

    async fn wait_healthy(&self, within: Duration) {
        let deadline = Instant::now() + within;
        while !self.healthz().await {
            assert!(
                Instant::now() < deadline,
                "atoll serve did not answer /healthz: {}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// Waits for atoll's first comment on `pr`, killing the server (and failing) if its memory
    /// passes `KILL_AT_MIB` or it exits first. Returns the comment's body.
    async fn answer(&mut self, pr: u64) -> String {
        let deadline = Instant::now() + ANSWER_WITHIN;
        loop {
            if let Some(c) = self
                .fake
                .comments(REPO, pr)
                .into_iter()
                .find(|c| c.author == "atoll-bot")
            {
                return c.body;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("atoll serve exited ({status}) on the bomb: {}", self.log());
            }
            let rss = status_kib(self.pid(), "VmRSS:") / 1024;
            if rss > KILL_AT_MIB {
                let _ = self.child.kill().await;
                panic!("atoll serve reached {rss} MiB on the bomb and was killed");
            }
            assert!(
                Instant::now() < deadline,
                "no answer on #{pr} within {ANSWER_WITHIN:?}: {}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Opens the PR, waits for its answer, checks the bounds, and returns the answer.
    async fn survive(
        mut self,
        name: &str,
        files: &[(&str, &str)],
        links: &[(&str, &str)],
    ) -> String {
        let pr = self
            .fake
            .open_pr_with_links(REPO, "mallory", name, files, links)
            .await
            .expect("open pr");
        let body = self.answer(pr).await;
        let peak = status_kib(self.pid(), "VmHWM:") / 1024;
        println!(
            "{name}: peak RSS of atoll serve {peak} MiB; answer: {}",
            body.chars().take(300).collect::<String>()
        );
        assert!(
            peak < PEAK_BOUND_MIB,
            "{name}: atoll serve peaked at {peak} MiB (bound {PEAK_BOUND_MIB} MiB)"
        );
        assert!(
            self.healthz().await,
            "{name}: /healthz failed after the bomb"
        );
        body
    }
}

/// A `/proc/PID/status` field in KiB (0 when the process is gone).
fn status_kib(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status"))
        .unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

const PROJECT_YAML: &str = "version: 3\nprojects:\n- dir: bomb\n";

/// `bomb` as the project `bomb/` of a repository whose atlantis.yaml names it.
async fn survive_as_project(name: &str, bomb: bombs::Bomb) -> String {
    let mut bomb = bomb.under("bomb");
    bomb.files
        .push(("atlantis.yaml".to_owned(), PROJECT_YAML.to_owned()));
    Served::start()
        .await
        .survive(name, &bomb.file_refs(), &bomb.link_refs())
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atlantis_yaml_symlink_to_dev_zero_leaves_the_server_bounded_and_healthy() {
    let bomb = bombs::atlantis_yaml_to_dev_zero();
    let body = Served::start()
        .await
        .survive("dev-zero", &bomb.file_refs(), &bomb.link_refs())
        .await;
    assert!(body.contains("atlantis.yaml"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn module_fan_out_bomb_leaves_the_server_bounded_and_healthy() {
    let body = survive_as_project("fan-out", bombs::module_fan_out()).await;
    assert!(body.contains("Too many module calls"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_module_for_each_bomb_leaves_the_server_bounded_and_healthy() {
    let body = survive_as_project("nested", bombs::nested_module_for_each()).await;
    assert!(body.contains("Too many module calls"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formatlist_byte_bomb_leaves_the_server_bounded_and_healthy() {
    let body = survive_as_project("formatlist", bombs::formatlist_of_padded_strings()).await;
    assert!(body.contains("Evaluation limit reached"), "{body}");
}
