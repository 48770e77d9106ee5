//! The axum router and its middleware (request ids, body limits, timeouts) and [`AppError`].
//! Holds no business logic: handlers hand the request to the owning module and map the result.

mod error;
mod request_id;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

use crate::store::Store;
use crate::webhook::{Intake, Receipt};
use request_id::REQUEST_ID;

pub use error::AppError;
pub use request_id::current as request_id;

/// Largest webhook body accepted (GitHub caps payloads at 25 MB).
pub const MAX_WEBHOOK_BODY: usize = 25 * 1024 * 1024;

/// How long `/readyz` waits for the store.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Shared state of the HTTP handlers.
#[derive(Debug, Clone)]
pub struct AppState {
    pub intake: Arc<Intake>,
    pub store: Arc<dyn Store>,
}

/// Builds the webhook and health routes. Wrap the whole app in [`with_request_ids`].
pub fn router(state: AppState, request_timeout: Duration) -> Router {
    Router::new()
        .route(
            "/events",
            post(events).layer(DefaultBodyLimit::max(MAX_WEBHOOK_BODY)),
        )
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(state)
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ))
}

/// The outermost layers for every route (webhooks, dashboard, `/api`, `/metrics`): an
/// `x-request-id` on every response, and a `request{request.id, method, path}` span.
pub fn with_request_ids(router: Router) -> Router {
    router
        .layer(
            TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
                let id = req
                    .headers()
                    .get(REQUEST_ID)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("-");
                tracing::info_span!("request", request.id = %id, method = %req.method(), path = %req.uri().path())
            }),
        )
        .layer(axum::middleware::from_fn(request_id::assign))
}

async fn events(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let span = tracing::info_span!(
        "webhook",
        delivery.id = tracing::field::Empty,
        forge = tracing::field::Empty,
        repo = tracing::field::Empty,
        pr.number = tracing::field::Empty,
    );
    let receipt =
        tracing::Instrument::instrument(state.intake.receive(&headers, &body), span).await?;
    Ok(match receipt {
        Receipt::Queued { job } => (
            StatusCode::ACCEPTED,
            Json(json!({"status": "queued", "job": job})),
        )
            .into_response(),
        Receipt::NoJob { reason } => (
            StatusCode::OK,
            Json(json!({"status": "ignored", "reason": reason})),
        )
            .into_response(),
        Receipt::Duplicate => {
            (StatusCode::OK, Json(json!({"status": "duplicate"}))).into_response()
        }
    })
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(state): State<AppState>) -> Response {
    match tokio::time::timeout(READY_TIMEOUT, state.store.ping()).await {
        Ok(Ok(())) => (StatusCode::OK, "ready\n").into_response(),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "readiness check: store unreachable");
            (StatusCode::SERVICE_UNAVAILABLE, "store unreachable\n").into_response()
        }
        Err(_) => {
            tracing::warn!("readiness check: store did not answer in time");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "store did not answer in time\n",
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests;
