//! `GET /metrics` in the Prometheus text format: jobs by kind and state, job durations by kind
//! and outcome, webhook deliveries by forge and result, locks held, dashboard password checks
//! run, and Proxmox VE requests by endpoint class and result with their latency. Labels are
//! bounded (no PR, job, node or guest labels): `kind` comes from the code's fixed job kinds,
//! everything else from small enums.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};

use super::WebState;
use crate::jobs::JobKind;
use crate::locks::LockQuery;
use crate::metrics::{CONTENT_TYPE, Registry, encode};

/// Jobs read per scrape to count by kind and state (the newest ones).
const JOBS_SCANNED: u32 = 100_000;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    forge: &'static str,
    result: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    kind: &'static str,
    state: &'static str,
}

/// Webhook deliveries seen on `POST /events`, by forge and result.
#[derive(Debug, Default)]
pub struct WebhookCounters {
    counts: Family<WebhookLabels, Counter>,
}

impl WebhookCounters {
    fn register(&self, registry: &mut Registry) {
        registry.register(
            "webhooks",
            "Webhook deliveries by forge and result since start",
            self.counts.clone(),
        );
    }

    fn add(&self, forge: &'static str, result: &'static str) {
        self.counts
            .get_or_create(&WebhookLabels { forge, result })
            .inc();
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
    let mut by_kind: HashMap<JobLabels, i64> = HashMap::new();
    for job in &jobs {
        // Kinds come from the code's fixed set (the store refuses others); a row from a newer
        // version counts as `other` rather than adding a label value.
        let kind = JobKind::parse(&job.kind).map_or("other", JobKind::as_str);
        let labels = JobLabels {
            kind,
            state: job.state.as_str(),
        };
        *by_kind.entry(labels).or_default() += 1;
    }
    let jobs_gauge: Family<JobLabels, Gauge> = Family::default();
    for (labels, n) in &by_kind {
        jobs_gauge.get_or_create(labels).set(*n);
    }
    let mut registry = Registry::with_prefix("atoll");
    registry.register("jobs", "Jobs in the store by kind and state", jobs_gauge);
    state.registries.webhooks.register(&mut registry);
    registry.register(
        "locks_held",
        "Workspace locks currently held",
        ConstGauge::new(i64::try_from(locks.len()).unwrap_or(i64::MAX)),
    );
    registry.register(
        "dashboard_password_checks",
        "Argon2 checks of the dashboard password since start",
        ConstCounter::new(state.auth.password_checks()),
    );
    state.registries.jobs.register(&mut registry);
    state.registries.proxmox.register(&mut registry);
    let mut out = String::new();
    if let Err(e) = encode(&mut out, &registry) {
        tracing::error!(error = %e, "metrics: encoding failed");
        return (StatusCode::INTERNAL_SERVER_ERROR, "encoding failed\n").into_response();
    }
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE))],
        out,
    )
        .into_response()
}
