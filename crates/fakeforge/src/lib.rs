//! Fake GitHub and Gitea for tests and `atoll demo`: in-process axum servers that emulate the
//! API endpoints atoll's forge clients use, keep everything in memory, and
//! send signed webhooks (real headers, real payload shapes) to a configured atoll URL when a
//! test scripts an event. Repositories are real bare git repositories in a temporary directory;
//! a PR's clone URL is their `file://` path (git is not served over HTTP).
//!
//! Test support only: production code paths must never use it.
//!
//! Typical use (a test, or `atoll demo`):
//!
//! ```text
//! let fake = FakeForge::github().await?;            // or FakeForge::gitea()
//! fake.set_web_host("github.com");                  // host in payloads -> atoll repo ids
//! fake.set_webhook("http://127.0.0.1:PORT/events", WEBHOOK_SECRET);
//! fake.create_repo("acme/infra").await?;
//! // atoll's client: GithubApiSettings { api_url: fake.api_url(), auth: Token(FAKE_TOKEN), .. }
//! let pr = fake.open_pr("acme/infra", "alice", "cores-4", &[("envs/dev/main.tf", "...")]).await?;
//! fake.review("acme/infra", pr, "bob", ReviewAction::Approve).await?;
//! fake.comment("acme/infra", pr, "alice", "atlantis apply").await?;
//! fake.comments("acme/infra", pr);                  // what atoll posted, with edit history
//! ```

mod git;
mod gitea;
mod gitea_payloads;
mod github;
mod github_payloads;
mod hooks;
mod jwt;
mod merge;
mod script;
mod state;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use tempfile::TempDir;
use tokio::task::JoinHandle;

pub use hooks::Delivery;
pub use script::ReviewAction;
pub use state::{FakeComment, FakeReview, FakeStatus, InjectedFailure};

use model::ForgeKind;
use state::State;

/// What went wrong while scripting the fake.
#[derive(Debug, thiserror::Error)]
pub enum FakeError {
    #[error("fake forge git: {0}")]
    Git(String),
    #[error("fake forge: {0}")]
    Script(String),
    #[error("fake forge could not deliver the webhook: {0}")]
    Webhook(String),
    #[error("fake forge could not start: {0}")]
    Start(String),
}

/// Where webhooks go.
#[derive(Debug, Clone)]
struct WebhookTarget {
    url: String,
    secret: String,
}

#[derive(Debug)]
struct Shared {
    kind: ForgeKind,
    addr: SocketAddr,
    web_host: Mutex<String>,
    state: Mutex<State>,
    webhook: Mutex<Option<WebhookTarget>>,
    /// The App's public key (PEM) and ids, when GitHub App auth is enabled.
    app: Mutex<Option<(u64, u64, String)>>,
    deliveries: Mutex<Vec<Delivery>>,
    http: reqwest::Client,
    git_root: TempDir,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A running fake forge. Dropping it stops the server.
#[derive(Debug)]
pub struct FakeForge {
    shared: Arc<Shared>,
    server: JoinHandle<()>,
}

impl Drop for FakeForge {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The API token every fake forge accepts from the start.
pub const FAKE_TOKEN: &str = "fake-forge-token-0123456789";

impl FakeForge {
    /// Starts a fake GitHub (REST under `/api/v3`, GraphQL at `/api/graphql`: the Enterprise
    /// layout) on a loopback port.
    pub async fn github() -> Result<Self, FakeError> {
        Self::start(ForgeKind::Github).await
    }

    /// Starts a fake Gitea (REST under `/api/v1`) on a loopback port.
    pub async fn gitea() -> Result<Self, FakeError> {
        Self::start(ForgeKind::Gitea).await
    }

    async fn start(kind: ForgeKind) -> Result<Self, FakeError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| FakeError::Start(e.to_string()))?;
        let addr = listener
            .local_addr()
            .map_err(|e| FakeError::Start(e.to_string()))?;
        let git_root = tempfile::tempdir().map_err(|e| FakeError::Start(e.to_string()))?;
        let _already = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| FakeError::Start(e.to_string()))?;
        let mut state = State::default();
        state.tokens.insert(FAKE_TOKEN.to_owned());
        state
            .token_users
            .insert(FAKE_TOKEN.to_owned(), "atoll-bot".to_owned());
        let shared = Arc::new(Shared {
            kind,
            addr,
            web_host: Mutex::new(addr.to_string()),
            state: Mutex::new(state),
            webhook: Mutex::new(None),
            app: Mutex::new(None),
            deliveries: Mutex::new(Vec::new()),
            http,
            git_root,
        });
        let router = match kind {
            ForgeKind::Github => github::router(Arc::clone(&shared)),
            ForgeKind::Gitea => gitea::router(Arc::clone(&shared)),
        };
        let server = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, router).await {
                tracing::warn!(error = %e, "fake forge server stopped");
            }
        });
        Ok(Self { shared, server })
    }

    pub fn kind(&self) -> ForgeKind {
        self.shared.kind
    }

    /// The API base URL to configure the client with.
    pub fn api_url(&self) -> String {
        match self.shared.kind {
            ForgeKind::Github => format!("http://{}/api/v3", self.shared.addr),
            ForgeKind::Gitea => format!("http://{}", self.shared.addr),
        }
    }

    /// The host web URLs in payloads use (`repository.html_url`), which becomes the `host` of
    /// atoll's repository ids. Defaults to the fake's own `127.0.0.1:port`.
    pub fn set_web_host(&self, host: &str) {
        *lock(&self.shared.web_host) = host.to_owned();
    }

    /// Sends webhooks for scripted events to `url`, signed with `secret`.
    pub fn set_webhook(&self, url: &str, secret: &str) {
        *lock(&self.shared.webhook) = Some(WebhookTarget {
            url: url.to_owned(),
            secret: secret.to_owned(),
        });
    }

    /// Accepts another API token, acting as `user`.
    pub fn add_token(&self, token: &str, user: &str) {
        let mut state = self.shared.state();
        state.tokens.insert(token.to_owned());
        state.token_users.insert(token.to_owned(), user.to_owned());
    }

    /// Enables GitHub App auth: JWTs signed by the key matching `public_key_pem` (RS256, `iss` =
    /// `app_id`) may mint installation tokens for `installation_id`.
    pub fn enable_app(&self, app_id: u64, installation_id: u64, public_key_pem: &str) {
        *lock(&self.shared.app) = Some((app_id, installation_id, public_key_pem.to_owned()));
    }

    /// How many installation tokens were minted.
    pub fn minted_tokens(&self) -> u32 {
        self.shared.state().minted_tokens
    }

    /// Sets `user`'s permission on `repo` (`admin`, `write`, `read`, `none`; default `read`).
    pub fn set_permission(&self, repo: &str, user: &str, permission: &str) {
        self.shared
            .state()
            .permissions
            .insert((repo.to_owned(), user.to_owned()), permission.to_owned());
    }

    /// Makes the fake Gitea refuse comment bodies (new or edited) over `max` characters with
    /// 422, as an instance configured with a size limit would.
    pub fn set_max_comment_chars(&self, max: usize) {
        self.shared.state().max_comment_chars = Some(max);
    }

    /// Makes the next API request fail with this status (and `Retry-After`, if given).
    pub fn fail_next_request(&self, failure: InjectedFailure) {
        self.shared.state().failures.push_back(failure);
    }

    /// Every API request so far, as `METHOD path?query`.
    pub fn requests(&self) -> Vec<String> {
        self.shared.state().requests.clone()
    }

    /// The comments on a PR, oldest first.
    pub fn comments(&self, repo: &str, pr: u64) -> Vec<FakeComment> {
        let state = self.shared.state();
        state
            .comments
            .values()
            .filter(|(r, c)| r == repo && c.pr == pr)
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// The statuses set on a commit, in the order they were set.
    pub fn statuses(&self, repo: &str, sha: &str) -> Vec<FakeStatus> {
        let state = self.shared.state();
        state
            .statuses
            .iter()
            .filter(|(r, s)| r == repo && s.sha == sha)
            .map(|(_, s)| s.clone())
            .collect()
    }

    /// How a PR was merged through the API (`merge`, `squash`, `rebase`); `None` when it was
    /// not (or only by the script's `merge`).
    pub fn merged_with(&self, repo: &str, pr: u64) -> Option<String> {
        let state = self.shared.state();
        state.pr(repo, pr).ok().and_then(|p| p.merged_with.clone())
    }

    /// Whether `branch` exists in `repo`.
    pub async fn branch_exists(&self, repo: &str, branch: &str) -> bool {
        let bare = {
            let state = self.shared.state();
            match state.repo(repo) {
                Ok(r) => r.bare.clone(),
                Err(_) => return false,
            }
        };
        git::ref_exists(&bare, &format!("refs/heads/{branch}")).await
    }

    /// Every webhook delivery attempted so far.
    pub fn deliveries(&self) -> Vec<Delivery> {
        lock(&self.shared.deliveries).clone()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Records the request, answers an injected failure, and checks the token against `schemes`
/// (`Authorization: <scheme><token>`). Returns the acting user.
fn gate(
    shared: &Shared,
    req: &axum::extract::Request,
    schemes: &[&str],
) -> Result<String, Box<axum::response::Response>> {
    use axum::response::IntoResponse;
    let line = format!(
        "{} {}",
        req.method(),
        req.uri().path_and_query().map_or("", |p| p.as_str())
    );
    let mut state = shared.state();
    state.requests.push(line);
    if let Some(failure) = state.failures.pop_front() {
        let status = axum::http::StatusCode::from_u16(failure.status)
            .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (
            status,
            axum::Json(serde_json::json!({ "message": failure.message })),
        )
            .into_response();
        if let Some(secs) = failure.retry_after {
            response
                .headers_mut()
                .insert("retry-after", axum::http::HeaderValue::from(secs));
        }
        return Err(Box::new(response));
    }
    let presented = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| schemes.iter().find_map(|s| v.strip_prefix(s)));
    match presented.and_then(|t| state.token_users.get(t)) {
        Some(user) if presented.is_some_and(|t| state.tokens.contains(t)) => Ok(user.clone()),
        _ => {
            let body = serde_json::json!({ "message": "Bad credentials" });
            Err(Box::new(
                (axum::http::StatusCode::UNAUTHORIZED, axum::Json(body)).into_response(),
            ))
        }
    }
}
