//! `GET /metrics` in the Prometheus text format: jobs by kind and state, job durations by kind
//! and outcome, webhook deliveries by forge and result, locks held, dashboard password checks
//! run, and Proxmox VE requests by endpoint class and result with their latency. Labels are
//! bounded (no PR, job, node or guest labels): `kind` comes from the code's fixed job kinds,
//! everything else from small enums.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::WebState;
use crate::locks::LockQuery;
use crate::proxmox::client::ProxmoxMetrics;
use crate::queue::JobMetrics;

/// Jobs read per scrape to count by kind and state (the newest ones).
const JOBS_SCANNED: u32 = 100_000;

/// Webhook deliveries seen on `POST /events`, by forge and result.
#[derive(Debug, Default)]
pub struct WebhookCounters {
    counts: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
}

impl WebhookCounters {
    fn add(&self, forge: &'static str, result: &'static str) {
        if let Ok(mut counts) = self.counts.lock() {
            *counts.entry((forge, result)).or_default() += 1;
        }
    }

    fn snapshot(&self) -> Vec<((&'static str, &'static str), u64)> {
        self.counts
            .lock()
            .map(|c| c.iter().map(|(k, v)| (*k, *v)).collect())
            .unwrap_or_default()
    }
}

/// Middleware for the whole router: counts each `POST /events` by the forge its headers name
/// and the response class. Other requests pass untouched.
pub async fn count_webhooks(
    State(counters): State<Arc<WebhookCounters>>,
    req: Request,
    next: Next,
) -> Response {
    if req.uri().path() != "/events" {
        return next.run(req).await;
    }
    let h = req.headers();
    let forge = if h.contains_key("x-gitea-event") || h.contains_key("x-forgejo-event") {
        "gitea"
    } else if h.contains_key("x-github-event") {
        "github"
    } else {
        "unknown"
    };
    let response = next.run(req).await;
    let result = match response.status() {
        StatusCode::ACCEPTED => "queued",
        s if s.is_success() => "ignored",
        StatusCode::UNAUTHORIZED => "bad_signature",
        StatusCode::FORBIDDEN => "refused",
        s if s.is_client_error() => "bad_request",
        _ => "error",
    };
    counters.add(forge, result);
    response
}

pub(super) async fn metrics(State(state): State<WebState>) -> Response {
    let all = LockQuery::default();
    let (jobs, locks) = match tokio::try_join!(
        state.store.list_jobs(JOBS_SCANNED),
        state.store.locks().lock_list(&all)
    ) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "metrics: store error");
            return (StatusCode::SERVICE_UNAVAILABLE, "store unavailable\n").into_response();
        }
    };
    let mut by_kind: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for job in &jobs {
        *by_kind
            .entry((job.kind.as_str(), job.state.as_str()))
            .or_default() += 1;
    }
    let mut out = String::new();
    out.push_str(
        "# HELP atoll_jobs Jobs in the store by kind and state.\n# TYPE atoll_jobs gauge\n",
    );
    for ((kind, st), n) in &by_kind {
        let _ = writeln!(
            out,
            "atoll_jobs{{kind=\"{}\",state=\"{st}\"}} {n}",
            label(kind)
        );
    }
    out.push_str("# HELP atoll_webhooks_total Webhook deliveries by forge and result since start.\n# TYPE atoll_webhooks_total counter\n");
    for ((forge, result), n) in state.registries.webhooks.snapshot() {
        let _ = writeln!(
            out,
            "atoll_webhooks_total{{forge=\"{forge}\",result=\"{result}\"}} {n}"
        );
    }
    out.push_str(
        "# HELP atoll_locks_held Workspace locks currently held.\n# TYPE atoll_locks_held gauge\n",
    );
    let _ = writeln!(out, "atoll_locks_held {}", locks.len());
    out.push_str("# HELP atoll_dashboard_password_checks_total Argon2 checks of the dashboard password since start.\n# TYPE atoll_dashboard_password_checks_total counter\n");
    let _ = writeln!(
        out,
        "atoll_dashboard_password_checks_total {}",
        state.auth.password_checks()
    );
    job_durations(&mut out, &state.registries.jobs);
    proxmox_requests(&mut out, &state.registries.proxmox);
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        out,
    )
        .into_response()
}

fn job_durations(out: &mut String, jobs: &JobMetrics) {
    out.push_str("# HELP atoll_job_duration_seconds Time from claim to outcome of the jobs this server ran, by kind and outcome.\n# TYPE atoll_job_duration_seconds histogram\n");
    for ((kind, outcome), h) in jobs.durations() {
        let labels = format!("kind=\"{}\",state=\"{outcome}\"", label(&kind));
        h.write(out, "atoll_job_duration_seconds", &labels);
    }
}

fn proxmox_requests(out: &mut String, pve: &ProxmoxMetrics) {
    out.push_str("# HELP atoll_proxmox_requests_total HTTP exchanges with Proxmox VE by endpoint class and result.\n# TYPE atoll_proxmox_requests_total counter\n");
    for ((class, outcome), n) in pve.requests() {
        let _ = writeln!(
            out,
            "atoll_proxmox_requests_total{{class=\"{}\",result=\"{}\"}} {n}",
            class.as_str(),
            outcome.as_str()
        );
    }
    out.push_str("# HELP atoll_proxmox_request_duration_seconds Latency of one HTTP exchange with Proxmox VE, by endpoint class.\n# TYPE atoll_proxmox_request_duration_seconds histogram\n");
    for (class, h) in pve.latency() {
        let labels = format!("class=\"{}\"", class.as_str());
        h.write(out, "atoll_proxmox_request_duration_seconds", &labels);
    }
}

/// A label value escaped for the text format.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
