//! Starting the simulator: bind, optional TLS with a generated CA, and the [`Simulator`] handle
//! tests use (base URL, CA PEM, faults, guest events).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::auth::Auth;
use super::faults::{FaultSettings, Faults};
use super::model::{Cluster, GuestEvent};
use super::routes;
use super::scenario::Scenario;

/// How the simulator runs.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Address to listen on (`127.0.0.1:0` for tests).
    pub listen: SocketAddr,
    /// Serve HTTPS with a generated certificate.
    pub tls: bool,
    /// How long a worker task (create, start, ...) runs.
    pub task_duration: Duration,
    /// Delay before a 401 answer (PVE: 3 s).
    pub auth_failure_delay: Duration,
    /// Concurrent API workers per node (PVE: 3); further requests queue.
    pub workers_per_node: usize,
    /// How long after a start a `dhcp` interface gets its address (link-local only before).
    pub dhcp_delay: Duration,
    /// Ticket lifetime (PVE: 2 hours).
    pub ticket_lifetime: Duration,
    /// What ticket ages are measured with; the system's unless set (a test's
    /// [`model::ManualClock`] expires tickets without waiting).
    pub clock: model::SharedClock,
    /// Initial fault settings.
    pub faults: FaultSettings,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls: false,
            task_duration: Duration::from_millis(50),
            auth_failure_delay: Duration::from_secs(3),
            workers_per_node: 3,
            dhcp_delay: Duration::ZERO,
            ticket_lifetime: Duration::from_secs(7200),
            clock: model::SystemClock::shared(),
            faults: FaultSettings::default(),
        }
    }
}

/// Shared state of a running simulator.
#[derive(Debug)]
pub(crate) struct Sim {
    pub(crate) cluster: Mutex<Cluster>,
    pub(crate) auth: Auth,
    pub(crate) faults: Faults,
    pub(crate) workers: BTreeMap<String, Arc<Semaphore>>,
    pub(crate) entry_node: String,
    pub(crate) opts: SimOptions,
    /// `cluster/resources` answers by `type` filter, with when they were taken.
    pub(crate) resources_cache: Mutex<BTreeMap<String, (std::time::Instant, serde_json::Value)>>,
}

impl Sim {
    fn new(scenario: &Scenario, opts: &SimOptions) -> anyhow::Result<Self> {
        let cluster = scenario.build()?;
        let entry_node = cluster
            .nodes
            .keys()
            .next()
            .cloned()
            .unwrap_or_else(|| "pve".to_owned());
        let per_node = opts.workers_per_node.max(1);
        let workers = cluster
            .nodes
            .keys()
            .map(|n| (n.clone(), Arc::new(Semaphore::new(per_node))))
            .collect();
        let auth = Auth::new(
            scenario.tokens(),
            scenario.users(),
            opts.ticket_lifetime,
            opts.clock.clone(),
        );
        let faults = Faults::new(opts.faults.clone());
        for node in cluster.nodes.values().filter(|n| !n.online) {
            faults.set_node_offline(&node.name, true);
        }
        let opts = opts.clone();
        Ok(Self {
            cluster: Mutex::new(cluster),
            auth,
            faults,
            workers,
            entry_node,
            opts,
            resources_cache: Mutex::new(BTreeMap::new()),
        })
    }

    /// Locks the cluster state (never held across an await).
    pub(crate) fn cluster(&self) -> MutexGuard<'_, Cluster> {
        self.cluster
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The worker pool serving requests addressed to `node` (else the entry node's).
    pub(crate) fn workers_for(&self, node: Option<&str>) -> Option<Arc<Semaphore>> {
        node.and_then(|n| self.workers.get(n))
            .or_else(|| self.workers.get(&self.entry_node))
            .cloned()
    }
}

/// A running simulator.
#[derive(Debug)]
pub struct Simulator {
    sim: Arc<Sim>,
    addr: SocketAddr,
    ca_pem: Option<String>,
    handle: axum_server::Handle,
}

impl Simulator {
    /// Starts the simulator in this process; it accepts connections when this returns.
    pub async fn start(scenario: &Scenario, opts: SimOptions) -> anyhow::Result<Self> {
        let sim = Arc::new(Sim::new(scenario, &opts)?);
        let app = routes::router(sim.clone()).into_make_service();
        let listener = std::net::TcpListener::bind(opts.listen)
            .map_err(|e| anyhow::anyhow!("binding {}: {e} (is the port in use?)", opts.listen))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let handle = axum_server::Handle::new();
        let ca_pem = if opts.tls {
            let (config, ca_pem) = super::tls::server_config(addr)?;
            let server = axum_server::from_tcp_rustls(listener, config).handle(handle.clone());
            tokio::spawn(async move {
                if let Err(e) = server.serve(app).await {
                    tracing::error!(error = %e, "pve-sim https server stopped");
                }
            });
            Some(ca_pem)
        } else {
            let server = axum_server::from_tcp(listener).handle(handle.clone());
            tokio::spawn(async move {
                if let Err(e) = server.serve(app).await {
                    tracing::error!(error = %e, "pve-sim http server stopped");
                }
            });
            None
        };
        Ok(Self {
            sim,
            addr,
            ca_pem,
            handle,
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http(s)://127.0.0.1:PORT` (no path).
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The API base, `<url>/api2/json`.
    pub fn base_url(&self) -> String {
        format!("{}/api2/json", self.url())
    }

    /// The CA certificate (PEM) that signed the server certificate, under TLS.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// Fault injection, changeable while running.
    pub fn faults(&self) -> &Faults {
        &self.sim.faults
    }

    /// The create-only parameters a container was created with (`ostemplate`,
    /// `ssh-public-keys`, `pool`, `storage`; never the password), which PVE applies inside the
    /// guest where the API cannot read them back.
    pub fn created_from(&self, vmid: u32) -> BTreeMap<String, String> {
        self.sim
            .cluster()
            .created_from
            .get(&vmid)
            .cloned()
            .unwrap_or_default()
    }

    /// What the simulator did to a guest so far (hot-plugs, link recreation, pending applied).
    pub fn guest_events(&self, vmid: u32) -> Vec<GuestEvent> {
        self.sim
            .cluster()
            .guests
            .get(&vmid)
            .map(|g| g.events.clone())
            .unwrap_or_default()
    }

    /// The bridges a node has now (its own and the SDN vnets applied to it), by name.
    pub fn bridges(&self, node: &str) -> Vec<String> {
        self.sim
            .cluster()
            .nodes
            .get(node)
            .map(|n| n.network.bridges().into_keys().collect())
            .unwrap_or_default()
    }

    /// Stops serving.
    pub fn shutdown(self) {
        self.handle.shutdown();
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        self.handle.shutdown();
    }
}
