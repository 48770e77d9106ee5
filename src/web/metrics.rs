//! `GET /metrics` in the Prometheus text format: jobs by kind and state, webhook deliveries by
//! forge and result, locks held. Labels are bounded (no PR, job or guest labels): `kind` comes
//! from the code's fixed job kinds, `state`, `forge` and `result` from small enums.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::WebState;
use crate::locks::LockQuery;

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
        state.store.lock_list(&all)
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
    for ((forge, result), n) in state.webhooks.snapshot() {
        let _ = writeln!(
            out,
            "atoll_webhooks_total{{forge=\"{forge}\",result=\"{result}\"}} {n}"
        );
    }
    out.push_str(
        "# HELP atoll_locks_held Workspace locks currently held.\n# TYPE atoll_locks_held gauge\n",
    );
    let _ = writeln!(out, "atoll_locks_held {}", locks.len());
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        out,
    )
        .into_response()
}

/// A label value escaped for the text format.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
