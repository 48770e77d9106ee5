//! The HTTP edge: the listener ([`serve`]: connection cap, header-read and idle timeouts), the
//! axum router for webhooks and health, the middleware every route gets (request ids, security
//! headers), bounded webhook bodies, and [`AppError`]. Holds no business logic: handlers hand
//! the request to the owning module and map the result.

mod body;
mod client_addr;
mod conn;
mod error;
mod request_id;
mod security_headers;
mod serve;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

use crate::store::Store;
use crate::webhook::{Intake, Receipt};
use request_id::REQUEST_ID;

pub use body::{BodyBudget, BodyError};
pub use client_addr::{ClientAddr, IpNetwork};
pub use error::{AppError, ShownError};
pub use request_id::current as request_id;
pub use serve::{ConnectionLimits, serve};

/// How long `/readyz` waits for the store.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Shared state of the HTTP handlers.
#[derive(Debug, Clone)]
pub struct AppState {
    pub intake: Arc<Intake>,
    pub store: Arc<dyn Store>,
    /// Shared by every delivery being read.
    pub bodies: BodyBudget,
}

/// Builds the webhook and health routes. Wrap the whole app in [`with_outer_layers`].
pub fn router(state: AppState, request_timeout: Duration) -> Router {
    Router::new()
        .route("/events", post(events))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(state)
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ))
}

/// The outermost layers for every route (webhooks, dashboard, `/api`, `/metrics`, and the
/// fallback's 404): an `x-request-id` and the security headers on every response, and a
/// `request{request.id, method, route}` span. `route` is the matched route (`/jobs/{id}`), never
/// the raw path, so ids and whatever a client typed stay out of the logs (a request no route
/// matched has none). Health checks (`/healthz`, `/readyz`) get a debug-level span, so
/// a probe every few seconds does not fill the log.
pub fn with_outer_layers(router: Router) -> Router {
    router
        .route_layer(axum::middleware::from_fn(record_route))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_response(log_response),
        )
        .layer(axum::middleware::from_fn(request_id::assign))
        .layer(axum::middleware::from_fn(security_headers::add))
}

fn request_span<B>(req: &Request<B>) -> tracing::Span {
    let id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    let method = req.method();
    if matches!(req.uri().path(), "/healthz" | "/readyz") {
        tracing::debug_span!("request", request.id = %id, %method, route = tracing::field::Empty)
    } else {
        tracing::info_span!("request", request.id = %id, %method, route = tracing::field::Empty)
    }
}

/// One line per answered request (the access log), at the level of its span: health checks at
/// debug, everything else at info.
fn log_response<B>(res: &Response<B>, latency: Duration, span: &tracing::Span) {
    let status = res.status().as_u16();
    let ms = latency.as_millis();
    if span
        .metadata()
        .is_some_and(|m| *m.level() == tracing::Level::DEBUG)
    {
        tracing::debug!(status, latency_ms = ms, "answered");
    } else {
        tracing::info!(status, latency_ms = ms, "answered");
    }
}

/// Records the matched route on the request span (it runs only for requests a route matched).
async fn record_route(req: Request, next: axum::middleware::Next) -> Response {
    if let Some(route) = req.extensions().get::<axum::extract::MatchedPath>() {
        tracing::Span::current().record("route", route.as_str());
    }
    next.run(req).await
}

/// `POST /events`: the headers are checked before any of the body is read, the body is read
/// within the budget, then the intake verifies and stores it.
async fn events(State(state): State<AppState>, req: Request) -> Result<Response, AppError> {
    let span = tracing::info_span!(
        "webhook",
        delivery.id = tracing::field::Empty,
        forge = tracing::field::Empty,
        repo = tracing::field::Empty,
        pr.number = tracing::field::Empty,
    );
    let (parts, body) = req.into_parts();
    let receive = async {
        state.intake.check_headers(&parts.headers)?;
        let body = state.bodies.read(&parts.headers, body).await?;
        Ok::<_, AppError>(state.intake.receive(&parts.headers, &body).await?)
    };
    let receipt = tracing::Instrument::instrument(receive, span).await?;
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
