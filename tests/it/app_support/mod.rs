//! The one test world: a real atoll server (SQLite in a temp dir) on its own runtime, with,
//! as the test asks, a fake forge that sends signed webhooks to it, the Proxmox VE simulator
//! its runner plans against, the dashboard's login, and a manual clock.
//!
//! The fake forge, the simulator and the data directory live on the test's runtime; the
//! server runs on a runtime of its own, so the test can stop it gracefully, drop it mid-job
//! like a `kill -9` (no shutdown, leases left to expire) and start another on the same store.
//! The test reads and seeds the store through a handle of its own (`TestApp::store`).

#![allow(dead_code, reason = "each test module uses part of the world")]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use argon2::password_hash::SaltString;
use argon2::{Argon2, PasswordHasher};
use atoll::app::App;
use atoll::config;
use atoll::runner::Runner;
use atoll::store::{JobState, Store};
use fakeforge::{FAKE_TOKEN, FakeComment, FakeForge, ReviewAction};
use model::{ForgeKind, ManualClock, SharedClock, SystemClock};
use pvesim::{Scenario, SimOptions, Simulator};
use tokio::sync::oneshot;

pub(crate) const REPO: &str = "acme/infra";
const WEBHOOK_SECRET: &str = "test-webhook-secret";
const PVE_TOKEN: &str = "root@pam!atoll=secret";
/// The dashboard's user is `ops` with this password (when `Options::login`).
pub(crate) const PASSWORD: &str = "correct horse";
/// The `/api` bearer token (when `Options::login`).
pub(crate) const API_TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// Short leases, so that a server dropped mid-job (`TestApp::crash`) leaves them to expire soon.
pub(crate) const RESTART_QUEUE: &str =
    "{lease_secs: 5, heartbeat_secs: 1, shutdown_grace_secs: 30}";

/// What the world is made of; start from [`Options::new`] (a forge and the runner) or
/// [`Options::dashboard`] (the dashboard alone) and change fields with `..`.
pub(crate) struct Options {
    /// The fake forge and the simulator, wired to the server; `None` starts neither.
    pub(crate) forge: Option<ForgeKind>,
    /// Register the PR runner (without it, queued jobs stay queued).
    pub(crate) runner: bool,
    /// Configure the dashboard login (`ops` / [`PASSWORD`]) and the API token.
    pub(crate) login: bool,
    /// The server-side `apply_requirements`, as YAML (`[approved]`).
    pub(crate) requirements: &'static str,
    /// How long each simulated PVE task runs.
    pub(crate) task: Duration,
    /// The `queue:` section, as YAML (`RESTART_QUEUE`); `None` keeps the defaults.
    pub(crate) queue: Option<&'static str>,
    /// Added to the `server:` section after `listen` (`, public_url: '…'`).
    pub(crate) server_extra: String,
    /// Added to the `web:` section after the login (`, session_ttl_secs: 600`).
    pub(crate) web_extra: String,
    /// How atoll logs in to the forge: the forge section's keys after `api_url`, as YAML.
    pub(crate) auth: String,
    /// The login atoll comments as.
    pub(crate) bot: String,
    /// How long `comment_containing` waits for a comment.
    pub(crate) wait: Duration,
    /// More top-level YAML for the config (`commands: {…}\n`).
    pub(crate) extra: String,
    /// Added by the simulator to every request.
    pub(crate) sim_latency: Duration,
    /// The server's clock; the system's when `None`.
    pub(crate) clock: Option<ManualClock>,
}

impl Options {
    /// A fake `kind` forge and the runner: atoll comments as `atoll-bot` with the fake's
    /// token, `[approved]`, 20 ms PVE tasks, the default queue, no login, 60 s waits.
    pub(crate) fn new(kind: ForgeKind) -> Self {
        Self {
            forge: Some(kind),
            runner: true,
            login: false,
            requirements: "[approved]",
            task: Duration::from_millis(20),
            queue: None,
            server_extra: String::new(),
            web_extra: String::new(),
            auth: format!("bot_user: atoll-bot, token: {FAKE_TOKEN}"),
            bot: "atoll-bot".to_owned(),
            wait: Duration::from_secs(60),
            extra: String::new(),
            sim_latency: Duration::ZERO,
            clock: None,
        }
    }

    /// The dashboard alone, with its login: no forge, no simulator, no runner.
    pub(crate) fn dashboard() -> Self {
        Self {
            forge: None,
            runner: false,
            login: true,
            ..Self::new(ForgeKind::Github)
        }
    }
}

/// One atoll server on its own runtime.
struct Server {
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<oneshot::Sender<()>>,
    stopped: Option<oneshot::Receiver<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

pub(crate) struct TestApp {
    fake: Option<FakeForge>,
    sim: Option<Simulator>,
    dir: tempfile::TempDir,
    yaml: String,
    runner: bool,
    bot: String,
    wait: Duration,
    clock: SharedClock,
    server: Option<Server>,
    /// `http://127.0.0.1:PORT` of the running server.
    pub(crate) base: String,
    /// The server's database, through a handle on the test's runtime.
    pub(crate) store: Arc<dyn Store>,
    /// A client that does not follow redirects, with a 20 s timeout.
    pub(crate) http: reqwest::Client,
}

impl TestApp {
    pub(crate) async fn start(options: Options) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().expect("tempdir");
        let (fake, sim) = match options.forge {
            Some(kind) => {
                let (fake, sim) = forge_and_simulator(kind, &options).await;
                (Some(fake), Some(sim))
            }
            None => (None, None),
        };
        let yaml = config_yaml(&options, &dir, fake.as_ref(), sim.as_ref());
        let clock = options
            .clock
            .as_ref()
            .map_or_else(SystemClock::shared, ManualClock::shared);
        let mut app = Self {
            fake,
            sim,
            store: open_store(&dir).await,
            dir,
            yaml,
            runner: options.runner,
            bot: options.bot,
            wait: options.wait,
            clock,
            server: None,
            base: String::new(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(20))
                .build()
                .expect("client"),
        };
        app.start_server().await;
        app
    }

    /// Starts atoll on the world's data directory and points the forge's webhooks at it.
    pub(crate) async fn start_server(&mut self) {
        assert!(self.server.is_none(), "a server is already running");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("server runtime");
        let settings = config::from_sources(&self.yaml, std::iter::empty())
            .expect("config")
            .settings;
        let (addr_tx, addr_rx) = oneshot::channel::<SocketAddr>();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (stopped_tx, stopped_rx) = oneshot::channel::<()>();
        let (runner, clock) = (self.runner, Arc::clone(&self.clock));
        runtime.spawn(async move {
            let mut app = App::build_with_clock(&settings, clock).await.expect("app");
            if runner {
                let r =
                    Runner::from_settings(&settings, app.store(), app.proxmox()).expect("runner");
                app = app.with_runner(Arc::new(r));
            }
            let _ = addr_tx.send(app.local_addr().expect("addr"));
            let served = app
                .serve(async move {
                    let _ = stop_rx.await;
                })
                .await;
            served.expect("serve");
            let _ = stopped_tx.send(());
        });
        let addr = addr_rx.await.expect("the server started");
        self.base = format!("http://{addr}");
        if let Some(fake) = &self.fake {
            fake.set_webhook(&format!("http://{addr}/events"), WEBHOOK_SECRET);
        }
        self.server = Some(Server {
            runtime: Some(runtime),
            stop: Some(stop_tx),
            stopped: Some(stopped_rx),
        });
    }

    /// Stops atoll gracefully (running jobs get the grace period).
    pub(crate) async fn stop(&mut self) {
        let mut server = self.server.take().expect("a running server");
        if let Some(stop) = server.stop.take() {
            let _ = stop.send(());
        }
        if let Some(stopped) = server.stopped.take() {
            let _ = stopped.await;
        }
    }

    /// Stops atoll and starts a new process-equivalent one on the same data directory and
    /// configuration (a new port).
    pub(crate) async fn restart(mut self) -> Self {
        self.stop().await;
        self.start_server().await;
        self
    }

    /// Drops atoll mid-flight, like `kill -9`: no graceful shutdown, leases are left to expire.
    pub(crate) fn crash(&mut self) {
        drop(self.server.take().expect("a running server"));
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The fake forge (started with `Options::forge`).
    pub(crate) fn fake(&self) -> &FakeForge {
        self.fake.as_ref().expect("the world has a forge")
    }

    /// The simulator (started with `Options::forge`).
    pub(crate) fn sim(&self) -> &Simulator {
        self.sim.as_ref().expect("the world has a simulator")
    }

    /// A Proxmox VE client on the world's simulator, to change guests behind atoll's back.
    pub(crate) fn pve(&self) -> atoll::proxmox::client::ProxmoxClient {
        use atoll::proxmox::client::{Auth, ClientSettings, ProxmoxClient};
        let settings = ClientSettings::new(
            self.sim().url(),
            Auth::ApiToken(PVE_TOKEN.to_owned().into()),
        );
        ProxmoxClient::new(&settings).expect("a client for the simulator")
    }

    /// A store of its own on the world's database.
    pub(crate) async fn observer(&self) -> Arc<dyn Store> {
        open_store(&self.dir).await
    }

    /// Waits (deadline: `Options::wait`) for a comment by atoll on `pr` whose body contains
    /// `needle`.
    pub(crate) async fn comment_containing(&self, pr: u64, needle: &str) -> FakeComment {
        let deadline = Instant::now() + self.wait;
        loop {
            let found = self
                .bot_comments(pr)
                .into_iter()
                .find(|c| c.body.contains(needle));
            if let Some(c) = found {
                return c;
            }
            assert!(
                Instant::now() < deadline,
                "no comment containing {needle:?} on #{pr}; comments: {:#?}",
                self.fake().comments(REPO, pr)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `author` opens a pull request into `main` from `branch` with `files` (path, content);
    /// returns its number.
    pub(crate) async fn open_pr(&self, author: &str, branch: &str, files: &[(&str, &str)]) -> u64 {
        self.fake()
            .open_pr(REPO, author, branch, files)
            .await
            .expect("open the pull request")
    }

    /// `user` comments `text` on `pr`.
    pub(crate) async fn say(&self, pr: u64, user: &str, text: &str) {
        self.fake()
            .comment(REPO, pr, user, text)
            .await
            .expect("comment on the pull request");
    }

    /// Atoll's comments on `pr` containing `needle`.
    pub(crate) fn comments_containing(&self, pr: u64, needle: &str) -> Vec<FakeComment> {
        self.bot_comments(pr)
            .into_iter()
            .filter(|c| c.body.contains(needle))
            .collect()
    }

    /// Atoll's comments on `pr`, oldest first.
    pub(crate) fn bot_comments(&self, pr: u64) -> Vec<FakeComment> {
        self.fake()
            .comments(REPO, pr)
            .into_iter()
            .filter(|c| c.author == self.bot)
            .collect()
    }

    /// Waits (deadline 30 s) until the comment `id` on `pr` is hidden (minimized); `what` names
    /// the situation in the failure message.
    pub(crate) async fn comment_hidden(&self, pr: u64, id: u64, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let old = self
                .fake()
                .comments(REPO, pr)
                .into_iter()
                .find(|c| c.id == id)
                .expect("first plan comment");
            if old.minimized.is_some() {
                return;
            }
            assert!(Instant::now() < deadline, "{what}: {old:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits (deadline 90 s) until every job of `kind` has finished, asserts each succeeded, and
    /// returns each one's id and log lines.
    pub(crate) async fn finished_jobs(&self, kind: &str) -> Vec<(uuid::Uuid, Vec<String>)> {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let jobs: Vec<_> = self
                .store
                .list_jobs(100)
                .await
                .expect("jobs")
                .into_iter()
                .filter(|j| j.kind == kind)
                .collect();
            if !jobs.is_empty() && jobs.iter().all(|j| j.state.is_terminal()) {
                let mut out = Vec::new();
                for j in jobs {
                    assert_eq!(j.state, JobState::Succeeded, "{j:?}");
                    let log = self.store.job_log(j.id, 0).await.expect("log");
                    out.push((j.id, log.into_iter().map(|l| l.line).collect()));
                }
                return out;
            }
            assert!(
                Instant::now() < deadline,
                "{kind} jobs did not finish: {jobs:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Gives alice and bob write access, bob approves `pr`, alice comments `atlantis apply`.
    pub(crate) async fn approve_and_apply(&self, pr: u64) {
        let fake = self.fake();
        fake.set_permission(REPO, "alice", "write");
        // On Gitea only reviews by users with write access are official.
        fake.set_permission(REPO, "bob", "write");
        fake.review(REPO, pr, "bob", ReviewAction::Approve)
            .await
            .expect("approve");
        fake.comment(REPO, pr, "alice", "atlantis apply")
            .await
            .expect("apply");
    }
}

async fn open_store(dir: &tempfile::TempDir) -> Arc<dyn Store> {
    let url = format!("sqlite://{}", dir.path().join("atoll.db").display());
    atoll::store::connect(&url).await.expect("the test's store")
}

async fn forge_and_simulator(kind: ForgeKind, options: &Options) -> (FakeForge, Simulator) {
    let sim = Simulator::start(
        &serde_yaml_ng::from_str::<Scenario>("{}").expect("scenario"),
        SimOptions {
            task_duration: options.task,
            faults: pvesim::FaultSettings {
                latency: options.sim_latency,
                ..Default::default()
            },
            ..SimOptions::default()
        },
    )
    .await
    .expect("simulator");
    let fake = match kind {
        ForgeKind::Github => FakeForge::github().await.expect("fake github"),
        ForgeKind::Gitea => FakeForge::gitea().await.expect("fake gitea"),
    };
    fake.set_web_host(web_host(kind));
    fake.create_repo(REPO).await.expect("repo");
    // Gitea tells only repository admins other users' permissions.
    fake.set_permission(REPO, "atoll-bot", "admin");
    (fake, sim)
}

fn web_host(kind: ForgeKind) -> &'static str {
    match kind {
        ForgeKind::Github => "github.com",
        ForgeKind::Gitea => "gitea.example.com",
    }
}

fn config_yaml(
    options: &Options,
    dir: &tempfile::TempDir,
    fake: Option<&FakeForge>,
    sim: Option<&Simulator>,
) -> String {
    let mut yaml = format!(
        "server: {{listen: '127.0.0.1:0'{}}}\ndata_dir: {:?}\n",
        options.server_extra,
        dir.path()
    );
    if let Some(queue) = options.queue {
        yaml.push_str(&format!("queue: {queue}\n"));
    }
    if options.login {
        let salt = SaltString::encode_b64(b"web-http-test-salt").expect("salt");
        let hash = Argon2::default()
            .hash_password(PASSWORD.as_bytes(), &salt)
            .expect("hash")
            .to_string();
        yaml.push_str(&format!(
            "web: {{username: ops, password_hash: {hash:?}, max_failed_logins: 3{}}}\n\
             api: {{token: {API_TOKEN:?}}}\n",
            options.web_extra
        ));
    }
    if let (Some(kind), Some(fake), Some(sim)) = (options.forge, fake, sim) {
        let host = web_host(kind);
        yaml.push_str(&format!(
            "{}: {{enabled: true, webhook_secret: {WEBHOOK_SECRET}, api_url: '{}', {}}}\n\
             repo_allowlist: ['{host}/acme/*']\n\
             proxmox: {{endpoint: '{}', api_token: '{PVE_TOKEN}'}}\n\
             protect: {{discover: false}}\n\
             repos:\n  - id: /.*/\n    apply_requirements: {}\n",
            kind.as_str(),
            fake.api_url(),
            options.auth,
            sim.url(),
            options.requirements,
        ));
    }
    yaml.push_str(&options.extra);
    yaml
}
