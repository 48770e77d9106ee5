//! `--remote URL`: the command line on an atoll server's state and locks, through its API
//! (`/api/state...`, bearer `ATOLL_REMOTE_TOKEN`): the calls, their errors (401, unreachable,
//! refused), and the project lock a run takes ([`Remote::take_lock`], waiting with backoff
//! while a pull request holds it). `remote_state` reads and writes the state over it.
//! The token is a secret: it goes in the `Authorization` header only, never in a message.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use uuid::Uuid;

use super::args::RemoteArgs;
use crate::locks::{Lock, REMOTE_RUN};
use crate::store::{StateScope, StoreError};

/// Longest wait between two lock attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Why a call to the server failed, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub(super) enum RemoteError {
    #[error(
        "the atoll server at {url} refused the API token (401): set ATOLL_REMOTE_TOKEN to the \
         server's api.token"
    )]
    Unauthorized { url: String },
    #[error(
        "the atoll server at {url} cannot be reached ({detail}); check --remote (or \
         ATOLL_REMOTE) and that the server is running"
    )]
    Unreachable { url: String, detail: String },
    #[error("the atoll server at {url} answered {status}: {message}")]
    Refused {
        url: String,
        status: u16,
        message: String,
    },
}

impl From<RemoteError> for StoreError {
    fn from(e: RemoteError) -> Self {
        match &e {
            RemoteError::Unauthorized { .. } => Self::Config(e.to_string()),
            RemoteError::Unreachable { .. } => Self::Unavailable(e.to_string()),
            RemoteError::Refused { status: 404, .. } => Self::NotFound(e.to_string()),
            RemoteError::Refused { status: 409, .. } => Self::Conflict(e.to_string()),
            RemoteError::Refused { .. } => Self::Internal(e.to_string()),
        }
    }
}

/// An atoll server's API.
#[derive(Debug)]
pub(super) struct Remote {
    base: String,
    token: SecretString,
    http: reqwest::Client,
}

impl Remote {
    /// The server `--remote` names, with the token from `ATOLL_REMOTE_TOKEN`; `None` without
    /// `--remote`.
    pub(super) fn from_args(args: &RemoteArgs) -> anyhow::Result<Option<Self>> {
        let Some(url) = &args.remote else {
            return Ok(None);
        };
        let base = url.trim().trim_end_matches('/').to_owned();
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            anyhow::bail!(
                "--remote {base:?} is not a URL: give the atoll server's address, like \
                 https://atoll.example.com"
            );
        }
        let token = std::env::var("ATOLL_REMOTE_TOKEN")
            .ok()
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--remote needs the server's API token: set ATOLL_REMOTE_TOKEN to its \
                     api.token"
                )
            })?;
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .connect_timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("atoll-cli/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| anyhow::anyhow!("building the HTTP client: {}", e.without_url()))?;
        Ok(Some(Self {
            base,
            token: SecretString::from(token.trim().to_owned()),
            http,
        }))
    }

    /// One API call; the answer's JSON, or 409's body as `Err(Conflict)` for the lock.
    pub(super) async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<(StatusCode, Value), RemoteError> {
        let url = format!("{}/api{path}", self.base);
        let mut request = self
            .http
            .request(method, &url)
            .query(query)
            .bearer_auth(self.token.expose_secret());
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|e| RemoteError::Unreachable {
            url: self.base.clone(),
            detail: e.without_url().to_string(),
        })?;
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED {
            return Err(RemoteError::Unauthorized {
                url: self.base.clone(),
            });
        }
        let value: Value = response.json().await.unwrap_or(Value::Null);
        if status.is_success() || status == StatusCode::CONFLICT && path == "/state/lock" {
            return Ok((status, value));
        }
        let message = value
            .get("error")
            .and_then(Value::as_str)
            .map_or_else(|| "no explanation".to_owned(), str::to_owned);
        Err(RemoteError::Refused {
            url: self.base.clone(),
            status: status.as_u16(),
            message,
        })
    }

    /// Takes the project's lock for this run, waiting (with backoff, up to `timeout`) while
    /// a pull request or another remote run holds it, and saying who does.
    pub(super) async fn take_lock(
        &self,
        scope: &StateScope,
        actor: &str,
        timeout: Duration,
    ) -> anyhow::Result<Uuid> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut pause = Duration::from_millis(200);
        let mut told = String::new();
        let body = json!({
            "repo": scope.repo, "dir": scope.project_dir,
            "workspace": scope.workspace, "actor": actor,
        });
        loop {
            let (status, answer) = self
                .call(Method::POST, "/state/lock", &[], Some(body.clone()))
                .await?;
            if status.is_success() {
                let id = answer
                    .pointer("/lock/id")
                    .and_then(Value::as_str)
                    .and_then(|id| Uuid::parse_str(id).ok())
                    .ok_or_else(|| anyhow::anyhow!("the server granted a lock without an id"))?;
                return Ok(id);
            }
            let held: Vec<Lock> = answer
                .get("held_by")
                .cloned()
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default();
            let who = holders(&held);
            let now = tokio::time::Instant::now();
            if now >= deadline {
                anyhow::bail!(
                    "{} ({}) is locked by {who}; nothing was changed. Run again once it is \
                     unlocked (the pull request merged or closed, or `atlantis unlock`), or wait \
                     longer with --lock-timeout",
                    scope.project_dir,
                    scope.workspace
                );
            }
            if who != told {
                eprintln!(
                    "Waiting for the lock on {} ({}) of {}: held by {who}",
                    scope.project_dir, scope.workspace, scope.repo
                );
                told = who;
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(MAX_BACKOFF);
        }
    }

    /// Gives the lock back; a failure is only reported (the dashboard can unlock it).
    pub(super) async fn release_lock(&self, id: Uuid) {
        let path = format!("/state/lock/{id}");
        if let Err(e) = self.call(Method::DELETE, &path, &[], None).await {
            eprintln!(
                "Warning: the lock of this run could not be released ({e}); unlock it from \
                 the server's dashboard"
            );
        }
    }

    /// Asks the server to write a state version of `scope` from its own rows.
    pub(super) async fn add_version(
        &self,
        scope: &StateScope,
        lock: Uuid,
        actor: &str,
        commit: Option<&str>,
    ) -> Result<u32, RemoteError> {
        let lock = lock.to_string();
        let mut query = query(scope);
        query.push(("lock", &lock));
        let body = json!({ "actor": actor, "commit": commit });
        let (_, answer) = self
            .call(Method::POST, "/state/versions", &query, Some(body))
            .await?;
        Ok(answer
            .get("version")
            .and_then(Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0))
    }
}

pub(super) fn query(scope: &StateScope) -> Vec<(&'static str, &str)> {
    vec![
        ("repo", scope.repo.as_str()),
        ("dir", scope.project_dir.as_str()),
        ("workspace", scope.workspace.as_str()),
    ]
}

/// `pull request #12 (planned by alice)`, `a remote run of bob`, joined.
fn holders(locks: &[Lock]) -> String {
    if locks.is_empty() {
        return "someone (the server did not say who)".to_owned();
    }
    let each: Vec<String> = locks
        .iter()
        .map(|lock| {
            if lock.owner.pr == REMOTE_RUN {
                format!("a remote run of {}", lock.owner.user)
            } else {
                let url = if lock.owner.pr_url.is_empty() {
                    String::new()
                } else {
                    format!(", {}", lock.owner.pr_url)
                };
                format!(
                    "pull request #{} (planned by {}{url})",
                    lock.owner.pr, lock.owner.user
                )
            }
        })
        .collect();
    each.join(" and ")
}
