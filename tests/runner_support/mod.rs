//! A PR world that can restart atoll: the fake forge, the simulator and the data directory live
//! on the test's runtime; each atoll server runs on its own runtime, so the test can stop it
//! gracefully or drop it mid-job like a `kill -9` (no shutdown, leases left to expire).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use atoll::app::App;
use atoll::config::{self, Loaded};
use atoll::fakeforge::{FAKE_TOKEN, FakeComment, FakeForge};
use atoll::pvesim::{Scenario, SimOptions, Simulator};
use atoll::runner::Runner;
use atoll::store::{ForgeKind, Store};
use tokio::sync::oneshot;

const SECRET: &str = "runner-test-webhook-secret";
pub(crate) const REPO: &str = "acme/infra";
const TOKEN: &str = "root@pam!atoll=secret";
const TEMPLATE: &str = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";

pub(crate) fn container(name: &str, cores: u32) -> String {
    format!(
        r#"resource "proxmox_virtual_environment_container" "{name}" {{
  node_name = "pve"
  unprivileged = true
  operating_system {{
    template_file_id = "{TEMPLATE}"
    type             = "debian"
  }}
  disk {{
    datastore_id = "local-lvm"
    size         = 8
  }}
  cpu {{
    cores = {cores}
  }}
}}
"#
    )
}

/// What the world is made of.
pub(crate) struct Options {
    pub(crate) kind: ForgeKind,
    /// The server-side `apply_requirements`, as YAML (`[approved]`).
    pub(crate) requirements: &'static str,
    /// How long each simulated PVE task runs.
    pub(crate) task: Duration,
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
    _sim: Simulator,
    dir: tempfile::TempDir,
    yaml: String,
    server: Option<Server>,
}

impl World {
    pub(crate) async fn new(options: Options) -> Self {
        let sim = Simulator::start(
            &serde_yaml_ng::from_str::<Scenario>("{}").expect("scenario"),
            SimOptions {
                task_duration: options.task,
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
        let yaml = format!(
            "server: {{listen: '127.0.0.1:0'}}\n\
             data_dir: {:?}\n\
             queue: {{lease_secs: 5, heartbeat_secs: 1, shutdown_grace_secs: 30}}\n\
             {section}: {{enabled: true, webhook_secret: {SECRET}, bot_user: atoll-bot, api_url: '{}', token: {FAKE_TOKEN}}}\n\
             repo_allowlist: ['{host}/acme/*']\n\
             proxmox: {{endpoint: '{}', api_token: '{TOKEN}'}}\n\
             protect: {{discover: false}}\n\
             repos:\n  - id: /.*/\n    apply_requirements: {}\n",
            dir.path(),
            fake.api_url(),
            sim.url(),
            options.requirements,
        );
        fake.create_repo(REPO).await.expect("repo");
        // Gitea tells only repository admins other users' permissions.
        fake.set_permission(REPO, "atoll-bot", "admin");
        let mut world = Self {
            fake,
            _sim: sim,
            dir,
            yaml,
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
            let runner = Runner::from_settings(&settings, app.store()).expect("runner");
            let app = Arc::new(runner).register(app);
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

    /// A store of its own on the world's database, to watch jobs from the test.
    pub(crate) async fn observer(&self) -> Arc<dyn Store> {
        let url = format!("sqlite://{}", self.dir.path().join("atoll.db").display());
        atoll::store::connect(&url).await.expect("observer store")
    }

    /// Waits (deadline 60 s) for a comment by atoll on `pr` whose body contains `needle`.
    pub(crate) async fn comment_containing(&self, pr: u64, needle: &str) -> FakeComment {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let found = self
                .fake
                .comments(REPO, pr)
                .into_iter()
                .find(|c| c.author == "atoll-bot" && c.body.contains(needle));
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
        self.fake
            .comments(REPO, pr)
            .into_iter()
            .filter(|c| c.author == "atoll-bot" && c.body.contains(needle))
            .collect()
    }
}
