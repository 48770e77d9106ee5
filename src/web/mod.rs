//! The web dashboard (locks with unlock, jobs with live logs and apply progress, pull requests
//! with their plans, the apply switch, protected guests), its login, the bearer-token JSON API
//! under `/api` and `/metrics`.
//!
//! Owns: sessions (rows in the store's `web_sessions`, by token hash), CSRF tokens, the page
//! templates (`templates/web/`, embedded so the binary runs from any directory, autoescaped) and the HTTP shape of the API. It must not
//! decide who holds a lock or run jobs: unlocks go through `LockStore::lock_release` (which
//! writes the audit event) and the PR announcement is a queued `announce_unlock` job.

mod api;
mod api_state;
mod auth;
mod login;
mod login_limits;
mod metrics;
mod pages;
mod password;
mod protect;
mod pulls;
mod state_page;
mod stream;
mod views;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use model::SharedClock;
use secrecy::SecretString;
use tower_http::timeout::TimeoutLayer;

use crate::config::{ProtectSettings, Settings};
use crate::http::ShownError;
use crate::proxmox::ProxmoxApi;
use crate::proxmox::client::ProxmoxMetrics;
use crate::queue::JobMetrics;
use crate::store::Store;

pub use metrics::{WebhookCounters, count_webhooks};
pub use password::{hash_password, hash_password_cli};

/// The id in a URL path (`/jobs/{id}`), or `None` when it is not one: a malformed id gets the
/// same 404 as an unknown one (the styled page, the API's JSON), never the router's plain-text
/// rejection.
fn path_id(raw: &str) -> Option<uuid::Uuid> {
    uuid::Uuid::parse_str(raw).ok()
}

/// Largest form or API body read (the login form is read before anyone is authenticated).
const MAX_FORM_BODY: usize = 64 * 1024;

/// The in-memory counters other parts record and `/metrics` shows.
#[derive(Debug, Clone)]
pub struct Registries {
    /// Filled by [`count_webhooks`].
    pub webhooks: Arc<WebhookCounters>,
    /// Filled by the queue (`QueueSettings::metrics`).
    pub jobs: Arc<JobMetrics>,
    /// Filled by the Proxmox client's transport (`ClientSettings::metrics`).
    pub proxmox: Arc<ProxmoxMetrics>,
}

impl Default for Registries {
    /// Fresh webhook and job registries; the process-wide Proxmox one, which clients built
    /// from settings record into.
    fn default() -> Self {
        Self {
            webhooks: Arc::default(),
            jobs: Arc::default(),
            proxmox: ProxmoxMetrics::process(),
        }
    }
}

/// What the dashboard, API and metrics handlers share.
#[derive(Debug, Clone)]
pub struct WebState {
    store: Arc<dyn Store>,
    auth: Arc<auth::Auth>,
    tera: Arc<tera::Tera>,
    protect: Arc<ProtectSettings>,
    api_token: Option<SecretString>,
    registries: Registries,
    discovery: protect::Discovery,
    /// The command word users type (`atlantis`), for the next steps pages suggest.
    executable: String,
}

impl WebState {
    /// Builds the state; fails if an embedded template does not parse (a build bug) or the
    /// Proxmox client cannot be built from `proxmox` (asked for the protected guests page).
    /// Session and login-window expiry and the discovery cache go by `clock`.
    pub fn new(
        settings: &Settings,
        store: Arc<dyn Store>,
        registries: Registries,
        api: Option<Arc<dyn ProxmoxApi>>,
        clock: SharedClock,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            discovery: protect::Discovery::new(&settings.protect, api, clock.clone()),
            auth: Arc::new(auth::Auth::new(&settings.web, Arc::clone(&store), clock)),
            store,
            tera: Arc::new(views::templates()?),
            protect: Arc::new(settings.protect.clone()),
            api_token: settings.api.token.clone(),
            registries,
            executable: settings.commands.executable_name.clone(),
        })
    }
}

/// The dashboard, `/api` and `/metrics` routes. Pages time out after `request_timeout`; the
/// log stream does not (it ends when the job does or the client leaves).
pub fn router(state: WebState, request_timeout: Duration) -> Router {
    let dashboard = Router::new()
        .merge(pages::routes())
        .merge(pulls::routes())
        .merge(state_page::routes())
        .layer(middleware::from_fn_with_state(state.clone(), error_pages));
    let timed = Router::new()
        .merge(dashboard)
        .nest("/api", api::routes(state.clone()))
        .route("/metrics", get(metrics::metrics))
        .route("/static/atoll.css", get(css))
        .route("/static/job.js", get(js))
        .layer(DefaultBodyLimit::max(MAX_FORM_BODY))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ));
    Router::new()
        .merge(timed)
        .merge(stream::routes())
        .with_state(state)
}

/// Dashboard routes answer an [`AppError`] as the styled page with its message (and the
/// signed-in user's navigation, when there is one), keeping its status and `Retry-After`.
async fn error_pages(State(state): State<WebState>, req: Request, next: Next) -> Response {
    let headers = req.headers().clone();
    let response = next.run(req).await;
    let Some(shown) = response.extensions().get::<ShownError>().cloned() else {
        return response;
    };
    let session = state.auth.session(&headers).await;
    let mut page = pages::message(
        &state,
        response.status(),
        shown.title,
        &shown.message,
        session.as_ref(),
    );
    if let Some(retry) = response.headers().get(header::RETRY_AFTER) {
        page.headers_mut()
            .insert(header::RETRY_AFTER, retry.clone());
    }
    page
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
