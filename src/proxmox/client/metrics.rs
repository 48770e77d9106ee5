//! What the transport counts: every HTTP exchange with PVE by endpoint class and result, with
//! its latency. Classes and results are small enums, so no guest, node or VMID ever becomes a
//! label.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use reqwest::Method;

use crate::metrics::{Histograms, Registry, request_histograms};

/// What kind of PVE endpoint a request went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EndpointClass {
    /// `/version`.
    Version,
    /// `/access/...` (ticket login).
    Auth,
    /// `/cluster/...` and the node list.
    Cluster,
    /// A guest's `config` or `pending` read.
    Config,
    /// A guest's `status/...` or `interfaces` read.
    Status,
    /// `/nodes/{node}/tasks/...`.
    Task,
    /// `/nodes/{node}/storage/...` reads.
    Storage,
    /// Any other write (create, update, power, delete, resize, download).
    Write,
    /// Anything else.
    Other,
}

impl EndpointClass {
    /// Every class, for documentation and tests.
    pub const ALL: [Self; 9] = [
        Self::Version,
        Self::Auth,
        Self::Cluster,
        Self::Config,
        Self::Status,
        Self::Task,
        Self::Storage,
        Self::Write,
        Self::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Version => "version",
            Self::Auth => "auth",
            Self::Cluster => "cluster",
            Self::Config => "config",
            Self::Status => "status",
            Self::Task => "task",
            Self::Storage => "storage",
            Self::Write => "write",
            Self::Other => "other",
        }
    }

    /// The class of `method path` (`path` relative to `/api2/json`, query excluded).
    pub fn of(method: &Method, path: &str) -> Self {
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        match parts.as_slice() {
            ["access", ..] => Self::Auth,
            _ if *method != Method::GET => Self::Write,
            ["version"] => Self::Version,
            ["cluster", ..] | ["nodes"] => Self::Cluster,
            ["nodes", _, "tasks", ..] => Self::Task,
            ["nodes", _, "storage", ..] => Self::Storage,
            ["nodes", _, "lxc" | "qemu", _, "config" | "pending"] => Self::Config,
            ["nodes", _, "lxc" | "qemu", _, "status" | "interfaces", ..] => Self::Status,
            _ => Self::Other,
        }
    }
}

/// How an exchange ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// A 2xx answer.
    Ok,
    /// A 4xx answer (including refused authentication).
    ClientError,
    /// A 5xx answer.
    ServerError,
    /// No answer: connection, TLS or timeout failure.
    Transport,
}

impl Outcome {
    pub const ALL: [Self; 4] = [
        Self::Ok,
        Self::ClientError,
        Self::ServerError,
        Self::Transport,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ClientError => "client_error",
            Self::ServerError => "server_error",
            Self::Transport => "transport",
        }
    }

    pub(super) fn of_status(status: u16) -> Self {
        match status {
            200..=399 => Self::Ok,
            400..=499 => Self::ClientError,
            _ => Self::ServerError,
        }
    }
}

impl EncodeLabelValue for EndpointClass {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), std::fmt::Error> {
        EncodeLabelValue::encode(&self.as_str(), encoder)
    }
}

impl EncodeLabelValue for Outcome {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), std::fmt::Error> {
        EncodeLabelValue::encode(&self.as_str(), encoder)
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    class: EndpointClass,
    result: Outcome,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClassLabel {
    class: EndpointClass,
}

/// Requests to Proxmox VE, shared between the clients that record and `/metrics`, which reads.
#[derive(Debug)]
pub struct ProxmoxMetrics {
    requests: Family<RequestLabels, Counter>,
    latency: Histograms<ClassLabel>,
}

impl Default for ProxmoxMetrics {
    fn default() -> Self {
        Self {
            requests: Family::default(),
            latency: request_histograms(),
        }
    }
}

impl ProxmoxMetrics {
    /// The registry every client uses unless its settings name another: the server's runner
    /// builds its client from the config, and `/metrics` reads this one.
    pub fn process() -> Arc<Self> {
        static SHARED: OnceLock<Arc<ProxmoxMetrics>> = OnceLock::new();
        Arc::clone(SHARED.get_or_init(|| Arc::new(Self::default())))
    }

    pub(super) fn record(&self, class: EndpointClass, outcome: Outcome, took: Duration) {
        let result = outcome;
        self.requests
            .get_or_create(&RequestLabels { class, result })
            .inc();
        self.latency
            .get_or_create(&ClassLabel { class })
            .observe(took.as_secs_f64());
    }

    /// Adds the request counters and latency histograms to a scrape's registry.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "proxmox_requests",
            "HTTP exchanges with Proxmox VE by endpoint class and result",
            self.requests.clone(),
        );
        registry.register(
            "proxmox_request_duration_seconds",
            "Latency of one HTTP exchange with Proxmox VE, by endpoint class",
            self.latency.clone(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_fall_into_fixed_classes_without_ids() {
        let get = Method::GET;
        let cases = [
            (&get, "/version", EndpointClass::Version),
            (&Method::POST, "/access/ticket", EndpointClass::Auth),
            (&get, "/cluster/resources", EndpointClass::Cluster),
            (&get, "/nodes", EndpointClass::Cluster),
            (&get, "/nodes/pve/lxc/100/config", EndpointClass::Config),
            (&get, "/nodes/pve/lxc/100/pending", EndpointClass::Config),
            (
                &get,
                "/nodes/pve/qemu/200/status/current",
                EndpointClass::Status,
            ),
            (
                &get,
                "/nodes/pve/tasks/UPID%3Apve%3A1/status",
                EndpointClass::Task,
            ),
            (
                &get,
                "/nodes/pve/storage/local/content",
                EndpointClass::Storage,
            ),
            (
                &Method::PUT,
                "/nodes/pve/lxc/100/config",
                EndpointClass::Write,
            ),
            (&Method::POST, "/nodes/pve/lxc", EndpointClass::Write),
            (&get, "/nodes/pve/network", EndpointClass::Other),
        ];
        for (method, path, want) in cases {
            assert_eq!(EndpointClass::of(method, path), want, "{method} {path}");
        }
    }
}
