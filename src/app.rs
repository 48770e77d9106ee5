//! Composition root: builds the state, starts listeners and workers, shuts down gracefully.
//!
//! [`App::build`] connects the store and binds the listener (port 0 works, for tests);
//! [`App::handle`] registers job handlers (`run` registers the PR runner's; kinds without a
//! handler stay queued); [`App::serve`] runs the HTTP server and the queue's workers and reaper
//! until the shutdown future resolves, then lets in-flight requests finish and gives running
//! jobs the configured grace period.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use model::{SharedClock, SystemClock};
use secrecy::ExposeSecret;
use tokio::net::TcpListener;

use crate::config::Settings;
use crate::http::{self, AppState};
use crate::proxmox::ProxmoxApi;
use crate::proxmox::client::{ClientSettings, ProxmoxClient};
use crate::queue::{JobHandler, JobMetrics, Queue, QueueSettings};
use crate::runner::Runner;
use crate::store::{self, ClaimLimits, Store};
use crate::web;
use crate::webhook::{Intake, IntakeSettings};

/// A built server, bound but not yet serving.
#[derive(Debug)]
pub struct App {
    listener: TcpListener,
    router: axum::Router,
    limits: http::ConnectionLimits,
    store: Arc<dyn Store>,
    proxmox: Option<Arc<dyn ProxmoxApi>>,
    queue: Queue,
}

impl App {
    /// Creates the data directory, connects the store (running migrations), builds the webhook
    /// intake and binds `server.listen`.
    pub async fn build(settings: &Settings) -> anyhow::Result<Self> {
        Self::build_with_clock(settings, SystemClock::shared()).await
    }

    /// [`App::build`] on `clock`: the one clock the dashboard's sessions and login windows, the
    /// Proxmox client's ticket renewal and the discovery cache go by (a test's
    /// [`model::ManualClock`] moves them without waiting). The store keeps the database's.
    pub async fn build_with_clock(settings: &Settings, clock: SharedClock) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&settings.data_dir)
            .with_context(|| format!("creating data directory {}", settings.data_dir.display()))?;
        let store = store::connect(settings.store.url.expose_secret())
            .await
            .context("connecting to the store (store.url)")?;
        let intake = Intake::new(Arc::clone(&store), &intake_settings(settings))
            .map_err(anyhow::Error::msg)?;
        let state = AppState {
            intake: Arc::new(intake),
            store: Arc::clone(&store),
            bodies: http::BodyBudget::new(settings.webhook_body),
        };
        let registries = web::Registries::default();
        let proxmox = proxmox_client(settings, &registries, &clock)?;
        let webhooks = Arc::clone(&registries.webhooks);
        let jobs = Arc::clone(&registries.jobs);
        let web_state = web::WebState::new(
            settings,
            Arc::clone(&store),
            registries,
            proxmox.clone(),
            clock,
        )?;
        let router = http::with_outer_layers(
            http::router(state, settings.server.request_timeout)
                .merge(web::router(web_state, settings.server.request_timeout))
                .layer(axum::middleware::from_fn_with_state(
                    webhooks,
                    web::count_webhooks,
                )),
        );
        let listener = TcpListener::bind(settings.server.listen)
            .await
            .with_context(|| format!("listening on {} (server.listen)", settings.server.listen))?;
        let queue = Queue::new(Arc::clone(&store), queue_settings(settings, jobs));
        Ok(Self {
            listener,
            router,
            limits: connection_limits(&settings.server),
            store,
            proxmox,
            queue,
        })
    }

    /// Runs the PR runner's jobs once serving: a handler for every job kind, and the report of
    /// interrupted and given-up jobs after each reaper pass.
    #[must_use]
    pub fn with_runner(self, runner: Arc<Runner>) -> Self {
        let app = match runner.reaped_reports() {
            Some(reports) => self.report_reaped(reports),
            None => self,
        };
        runner
            .handlers()
            .into_iter()
            .fold(app, |app, (kind, handler)| {
                app.handle(kind.as_str(), handler)
            })
    }

    /// Runs jobs of `kind` with `handler` once serving.
    #[must_use]
    pub fn handle(mut self, kind: &str, handler: impl JobHandler) -> Self {
        self.queue = self.queue.handle(kind, handler);
        self
    }

    /// Sends each non-empty reaper pass (jobs requeued, failed or interrupted) to `reports`.
    #[must_use]
    pub fn report_reaped(
        mut self,
        reports: tokio::sync::mpsc::UnboundedSender<crate::store::Reaped>,
    ) -> Self {
        self.queue = self.queue.report_reaped(reports);
        self
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> anyhow::Result<SocketAddr> {
        self.listener
            .local_addr()
            .context("reading the bound address")
    }

    /// The store this app uses.
    pub fn store(&self) -> Arc<dyn Store> {
        Arc::clone(&self.store)
    }

    /// The one Proxmox VE client every part of this app shares (`None`: no `proxmox` section).
    pub fn proxmox(&self) -> Option<Arc<dyn ProxmoxApi>> {
        self.proxmox.clone()
    }

    /// Serves until `shutdown` resolves, then drains in-flight requests, stops claiming jobs
    /// and waits for running ones up to `queue.shutdown_grace_secs`.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let queue = self.queue.start();
        http::serve(self.listener, self.router, self.limits, shutdown).await;
        let report = queue.shutdown().await;
        tracing::info!(
            finished = report.finished,
            released = report.released.len(),
            interrupted = report.interrupted.len(),
            "queue stopped"
        );
        Ok(())
    }
}

/// The Proxmox VE client, built once: one ticket, one set of per-node limits, one latency
/// histogram for the runner, the engine and the dashboard.
fn proxmox_client(
    settings: &Settings,
    registries: &web::Registries,
    clock: &SharedClock,
) -> anyhow::Result<Option<Arc<dyn ProxmoxApi>>> {
    let Some(p) = &settings.proxmox else {
        return Ok(None);
    };
    let mut client = ClientSettings::from(p);
    client.metrics = Arc::clone(&registries.proxmox);
    client.clock = clock.clone();
    let client = ProxmoxClient::new(&client).context("building the Proxmox VE client")?;
    Ok(Some(Arc::new(client)))
}

fn connection_limits(server: &crate::config::ServerSettings) -> http::ConnectionLimits {
    http::ConnectionLimits {
        header_read_timeout: server.header_read_timeout,
        idle_timeout: server.idle_timeout,
        max_connections: server.max_connections,
        trusted_proxies: server.trusted_proxies.clone().into(),
    }
}

fn queue_settings(settings: &Settings, metrics: Arc<JobMetrics>) -> QueueSettings {
    let q = &settings.queue;
    QueueSettings {
        lease: q.lease,
        heartbeat: q.heartbeat,
        reap_interval: (q.lease / 4).max(std::time::Duration::from_secs(1)),
        max_attempts: q.max_attempts,
        limits: ClaimLimits {
            global: q.max_running,
            per_repo: q.max_running_per_repo,
            per_repo_exempt: &crate::jobs::UNLIMITED_PER_REPO_KINDS,
        },
        shutdown_grace: q.shutdown_grace,
        retention: q.retention,
        metrics,
        ..QueueSettings::default()
    }
}

fn intake_settings(settings: &Settings) -> IntakeSettings {
    IntakeSettings {
        github: settings.github.clone(),
        gitea: settings.gitea.clone(),
        repo_allowlist: settings.repo_allowlist.clone(),
        policy: settings.webhook,
        executable_name: settings.commands.executable_name.clone(),
        allow_commands: settings.commands.allow_commands.clone(),
    }
}

/// `atoll serve`: builds the app, announces the address, serves until SIGTERM or SIGINT.
pub async fn run(settings: Settings) -> anyhow::Result<()> {
    let app = App::build(&settings).await?;
    let runner = Runner::from_settings(&settings, app.store(), app.proxmox())?;
    let app = app.with_runner(Arc::new(runner));
    let addr = app.local_addr()?;
    tracing::info!(%addr, "listening");
    // One machine-readable line on stdout for scripts and tests that start on port 0.
    println!("atoll listening on {addr}");
    app.serve(shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("SIGINT received, shutting down"),
        () = term => tracing::info!("SIGTERM received, shutting down"),
    }
}
