//! The runner tests' world: the fake forge sends signed webhooks to a real atoll server (SQLite
//! in a temp dir, the runner registered), which checks out real git, plans against the Proxmox
//! simulator and comments back through the forge's API client.
//!
//! The fake forge, the simulator and the data directory live on the test's runtime; each atoll
//! server runs on its own runtime, so the test can stop it gracefully or drop it mid-job like a
//! `kill -9` (no shutdown, leases left to expire), and start another on the same store.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use atoll::app::App;
use atoll::config::{self, Loaded};
use atoll::runner::Runner;
use atoll::store::{JobState, Store};
use fakeforge::{FAKE_TOKEN, FakeComment, FakeForge, ReviewAction};
use model::ForgeKind;
use pvesim::{Scenario, SimOptions, Simulator};
use tokio::sync::oneshot;

const SECRET: &str = "runner-test-webhook-secret";
pub(crate) const REPO: &str = "acme/infra";
const TOKEN: &str = "root@pam!atoll=secret";

/// Short leases, so that a server dropped mid-job (`World::crash`) leaves them to expire soon.
pub(crate) const RESTART_QUEUE: &str =
    "{lease_secs: 5, heartbeat_secs: 1, shutdown_grace_secs: 30}";

/// What the world is made of.
pub(crate) struct Options {
    pub(crate) kind: ForgeKind,
    /// The server-side `apply_requirements`, as YAML (`[approved]`).
    pub(crate) requirements: &'static str,
    /// How long each simulated PVE task runs.
    pub(crate) task: Duration,
    /// The `queue:` section, as YAML (`RESTART_QUEUE`); `None` keeps the defaults.
    pub(crate) queue: Option<&'static str>,
    /// Added to the `server:` section after `listen` (`, public_url: '…'`).
    pub(crate) server_extra: String,
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
}

impl Options {
    /// `kind`, atoll commenting as `atoll-bot` with the fake's token, `[approved]`, 20 ms PVE
    /// tasks, the default queue, no extra server settings, 60 s waits.
    pub(crate) fn new(kind: ForgeKind) -> Self {
        Self {
            kind,
            requirements: "[approved]",
            task: Duration::from_millis(20),
            queue: None,
            server_extra: String::new(),
            auth: format!("bot_user: atoll-bot, token: {FAKE_TOKEN}"),
            bot: "atoll-bot".to_owned(),
            wait: Duration::from_secs(60),
            extra: String::new(),
            sim_latency: Duration::ZERO,
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

pub(crate) struct World {
    pub(crate) fake: FakeForge,
    sim: Simulator,
    dir: tempfile::TempDir,
    yaml: String,
    bot: String,
    wait: Duration,
    server: Option<Server>,
}

impl World {
    pub(crate) async fn new(options: Options) -> Self {
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
        let fake = match options.kind {
            ForgeKind::Github => FakeForge::github().await.expect("fake github"),
            ForgeKind::Gitea => FakeForge::gitea().await.expect("fake gitea"),
        };
        let (section, host) = match options.kind {
            ForgeKind::Github => ("github", "github.com"),
            ForgeKind::Gitea => ("gitea", "gitea.example.com"),
        };
        fake.set_web_host(host);
        let dir = tempfile::tempdir().expect("tempdir");
        let queue = options
            .queue
            .map(|q| format!("queue: {q}\n"))
            .unwrap_or_default();
        let yaml = format!(
            "server: {{listen: '127.0.0.1:0'{}}}\n\
             data_dir: {:?}\n\
             {queue}\
             {section}: {{enabled: true, webhook_secret: {SECRET}, api_url: '{}', {}}}\n\
             repo_allowlist: ['{host}/acme/*']\n\
             proxmox: {{endpoint: '{}', api_token: '{TOKEN}'}}\n\
             protect: {{discover: false}}\n\
             repos:\n  - id: /.*/\n    apply_requirements: {}\n\
             {}",
            options.server_extra,
            dir.path(),
            fake.api_url(),
            options.auth,
            sim.url(),
            options.requirements,
            options.extra,
        );
        fake.create_repo(REPO).await.expect("repo");
        // Gitea tells only repository admins other users' permissions.
        fake.set_permission(REPO, "atoll-bot", "admin");
        let mut world = Self {
            fake,
            sim,
            dir,
            yaml,
            bot: options.bot,
            wait: options.wait,
            server: None,
        };
        world.start().await;
        world
    }

    /// Starts atoll on the world's data directory and points the forge's webhooks at it.
    pub(crate) async fn start(&mut self) {
        assert!(self.server.is_none(), "a server is already running");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("server runtime");
        let loaded: Loaded = config::from_sources(&self.yaml, std::iter::empty()).expect("config");
        let settings = loaded.settings;
        let (addr_tx, addr_rx) = oneshot::channel::<SocketAddr>();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (stopped_tx, stopped_rx) = oneshot::channel::<()>();
        runtime.spawn(async move {
            let app = App::build(&settings).await.expect("app");
            let runner =
                Runner::from_settings(&settings, app.store(), app.proxmox()).expect("runner");
            let app = app.with_runner(Arc::new(runner));
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
        self.fake
            .set_webhook(&format!("http://{addr}/events"), SECRET);
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

    /// Drops atoll mid-flight, like `kill -9`: no graceful shutdown, leases are left to expire.
    pub(crate) fn crash(&mut self) {
        drop(self.server.take().expect("a running server"));
    }

    /// A Proxmox VE client on the world's simulator, to change guests behind atoll's back.
    pub(crate) fn pve(&self) -> atoll::proxmox::client::ProxmoxClient {
        use atoll::proxmox::client::{Auth, ClientSettings, ProxmoxClient};
        let settings = ClientSettings::new(self.sim.url(), Auth::ApiToken(TOKEN.to_owned().into()));
        ProxmoxClient::new(&settings).expect("a client for the simulator")
    }

    /// A store of its own on the world's database, to watch jobs from the test.
    pub(crate) async fn observer(&self) -> Arc<dyn Store> {
        let url = format!("sqlite://{}", self.dir.path().join("atoll.db").display());
        atoll::store::connect(&url).await.expect("observer store")
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
                self.fake.comments(REPO, pr)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
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
        self.fake
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
                .fake
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
        let store = self.observer().await;
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let jobs: Vec<_> = store
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
                    let log = store.job_log(j.id, 0).await.expect("log");
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
        self.fake.set_permission(REPO, "alice", "write");
        // On Gitea only reviews by users with write access are official.
        self.fake.set_permission(REPO, "bob", "write");
        self.fake
            .review(REPO, pr, "bob", ReviewAction::Approve)
            .await
            .expect("approve");
        self.fake
            .comment(REPO, pr, "alice", "atlantis apply")
            .await
            .expect("apply");
    }
}
