//! The web dashboard (locks with unlock, jobs with live logs and apply progress, pull requests
//! with their plans, the apply switch, protected guests), its login, the bearer-token JSON API under `/api` and `/metrics`.
//!
//! Owns: sessions (in memory), CSRF tokens, the page templates (`templates/web/`, embedded so
//! the binary runs from any directory, autoescaped) and the HTTP shape of the API. It must not
//! decide who holds a lock or run jobs: unlocks go through `LockStore::lock_release` (which
//! writes the audit event) and the PR announcement is a queued `announce_unlock` job.

mod api;
mod auth;
mod login;
mod metrics;
mod pages;
mod pulls;
mod stream;
mod views;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use secrecy::SecretString;
use tower_http::timeout::TimeoutLayer;

use crate::config::{ProtectSettings, Settings};
use crate::store::Store;

pub use auth::{hash_password, hash_password_cli};
pub use metrics::{WebhookCounters, count_webhooks};

/// The job kind that tells a PR its lock was released from the dashboard.
pub const ANNOUNCE_UNLOCK_KIND: &str = crate::locks::UnlockAnnouncement::KIND;

/// What the dashboard, API and metrics handlers share.
#[derive(Debug, Clone)]
pub struct WebState {
    store: Arc<dyn Store>,
    auth: Arc<auth::Auth>,
    tera: Arc<tera::Tera>,
    protect: Arc<ProtectSettings>,
    api_token: Option<SecretString>,
    webhooks: Arc<WebhookCounters>,
    /// The command word users type (`atlantis`), for the next steps pages suggest.
    executable: String,
}

impl WebState {
    /// Builds the state; fails only if an embedded template does not parse (a build bug).
    pub fn new(
        settings: &Settings,
        store: Arc<dyn Store>,
        webhooks: Arc<WebhookCounters>,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            store,
            auth: Arc::new(auth::Auth::new(&settings.web)),
            tera: Arc::new(views::templates()?),
            protect: Arc::new(settings.protect.clone()),
            api_token: settings.api.token.clone(),
            webhooks,
            executable: settings.commands.executable_name.clone(),
        })
    }
}

/// The dashboard, `/api` and `/metrics` routes. Pages time out after `request_timeout`; the
/// log stream does not (it ends when the job does or the client leaves).
pub fn router(state: WebState, request_timeout: Duration) -> Router {
    let timed = Router::new()
        .merge(pages::routes())
        .merge(pulls::routes())
        .nest("/api", api::routes(state.clone()))
        .route("/metrics", get(metrics::metrics))
        .route("/static/atoll.css", get(css))
        .route("/static/job.js", get(js))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ));
    Router::new()
        .merge(timed)
        .merge(stream::routes())
        .with_state(state)
}

async fn css() -> Response {
    asset(
        "text/css; charset=utf-8",
        include_str!("../../templates/web/atoll.css"),
    )
}

async fn js() -> Response {
    asset(
        "text/javascript; charset=utf-8",
        include_str!("../../templates/web/job.js"),
    )
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("max-age=300"),
            ),
        ],
        body,
    )
        .into_response()
}
