//! The Gitea/Forgejo API client: a thin reqwest client on `{base}/api/v1` with
//! `Authorization: token …`, `page`/`limit` pagination (stopping on `X-Total-Count`, a short
//! page or no `Link: rel="next"`). Only GETs are retried (twice, after a transient failure);
//! a POST or PATCH never is.

use std::time::Duration;

use async_trait::async_trait;
use reqwest::{Method, RequestBuilder};
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use serde_json::json;

use super::api::{
    Approval, ChangedFile, CommentId, CommitStatus, DEFAULT_MAX_COMMENT_CHARS, Forge, ForgeError,
    MergeRequest, Merged, Permission, PullDetails, Reaction, check_comment_size,
};
use super::gitea_wire as wire;
use super::http_errors::{GET_RETRY_DELAYS, bad_body, classify, has_next_page, transport};
use super::names::{CommitSha, RepoName};
use super::reviews;
use model::ForgeKind;

/// Safety stop for pagination.
const MAX_PAGES: u32 = 500;

/// Settings of the Gitea client.
#[derive(Debug, Clone)]
pub struct GiteaApiSettings {
    /// The site root, e.g. `https://gitea.example.com` (the client adds `/api/v1`).
    pub base_url: String,
    pub token: SecretString,
    /// Split comments above this many characters (Gitea has no built-in limit).
    pub max_comment_chars: usize,
    /// `limit` per page; Gitea caps it at `[api] MAX_RESPONSE_ITEMS` (default 50).
    pub page_size: u32,
    pub timeout: Duration,
}

impl GiteaApiSettings {
    pub fn new(base_url: &str, token: SecretString) -> Self {
        Self {
            base_url: base_url.to_owned(),
            token,
            max_comment_chars: DEFAULT_MAX_COMMENT_CHARS,
            page_size: 50,
            timeout: Duration::from_secs(30),
        }
    }
}

/// Why the client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum GiteaSetupError {
    #[error(
        "gitea base url {0:?} must start with http:// or https:// and name a host, without /api/v1"
    )]
    BadUrl(String),
    #[error("gitea token contains characters that cannot be sent in a header; paste it again")]
    BadToken,
    #[error("building the gitea client failed: {0}")]
    Client(String),
}

/// The Gitea/Forgejo implementation of [`Forge`].
#[derive(Debug)]
pub struct GiteaApi {
    http: reqwest::Client,
    api: String,
    auth: reqwest::header::HeaderValue,
    token: SecretString,
    max_comment_chars: usize,
    page_size: u32,
}

impl GiteaApi {
    pub fn new(settings: &GiteaApiSettings) -> Result<Self, GiteaSetupError> {
        let base = settings.base_url.trim_end_matches('/');
        let parsed =
            reqwest::Url::parse(base).map_err(|_| GiteaSetupError::BadUrl(base.to_owned()))?;
        let scheme_ok = matches!(parsed.scheme(), "http" | "https");
        if !scheme_ok || parsed.host_str().is_none() || base.ends_with("/api/v1") {
            return Err(GiteaSetupError::BadUrl(base.to_owned()));
        }
        let mut auth = reqwest::header::HeaderValue::from_str(&format!(
            "token {}",
            settings.token.expose_secret()
        ))
        .map_err(|_| GiteaSetupError::BadToken)?;
        auth.set_sensitive(true);
        // reqwest is built without a default crypto provider; use ring, as the rest of atoll.
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("atoll/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| GiteaSetupError::Client(e.without_url().to_string()))?;
        Ok(Self {
            http,
            api: format!("{base}/api/v1"),
            auth,
            token: settings.token.clone(),
            max_comment_chars: settings.max_comment_chars,
            page_size: settings.page_size.clamp(1, 100),
        })
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.api))
            .header(reqwest::header::AUTHORIZATION, self.auth.clone())
            .header(reqwest::header::ACCEPT, "application/json")
    }

    /// Sends, and returns the headers and body of a 2xx response or the classified error.
    async fn send(
        &self,
        op: &str,
        request: RequestBuilder,
    ) -> Result<(reqwest::header::HeaderMap, bytes::Bytes), ForgeError> {
        let response = request
            .send()
            .await
            .map_err(|e| transport(op, e.without_url()))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|e| transport(op, e.without_url()))?;
        tracing::debug!(
            forge = "gitea",
            op,
            http.status = status.as_u16(),
            "forge api call"
        );
        if status.is_success() {
            Ok((headers, body))
        } else {
            let err = classify(op, status, &headers, &body);
            tracing::warn!(forge = "gitea", error = %err, "forge api call failed");
            Err(err)
        }
    }

    /// A GET, retried after a transient failure (GETs are idempotent; nothing else is retried).
    async fn get(
        &self,
        op: &str,
        path: &str,
        query: &[(&str, u32)],
    ) -> Result<(reqwest::header::HeaderMap, bytes::Bytes), ForgeError> {
        let mut delays = GET_RETRY_DELAYS.iter();
        loop {
            let request = self.request(Method::GET, path).query(query);
            match self.send(op, request).await {
                Err(ForgeError::Transient { .. }) if let Some(delay) = delays.next() => {
                    tokio::time::sleep(*delay).await;
                }
                other => return other,
            }
        }
    }

    async fn get_json<T: DeserializeOwned>(&self, op: &str, path: &str) -> Result<T, ForgeError> {
        let (_, body) = self.get(op, path, &[]).await?;
        serde_json::from_slice(&body).map_err(|e| bad_body(op, &e))
    }

    async fn send_json(
        &self,
        op: &str,
        method: Method,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<bytes::Bytes, ForgeError> {
        let (_, bytes) = self.send(op, self.request(method, path).json(body)).await?;
        Ok(bytes)
    }

    /// Every item of a paginated list.
    async fn get_all<T: DeserializeOwned>(
        &self,
        op: &str,
        path: &str,
    ) -> Result<Vec<T>, ForgeError> {
        let mut items: Vec<T> = Vec::new();
        for page in 1..=MAX_PAGES {
            let query = [("page", page), ("limit", self.page_size)];
            let (headers, body) = self.get(op, path, &query).await?;
            let batch: Vec<T> = serde_json::from_slice(&body).map_err(|e| bad_body(op, &e))?;
            let received = batch.len();
            items.extend(batch);
            let total = headers
                .get("x-total-count")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<usize>().ok());
            // The server may cap `limit` below ours (MAX_RESPONSE_ITEMS), so a page shorter
            // than asked is not the end while the total or a next link says otherwise.
            let done = received == 0
                || match total {
                    Some(total) => items.len() >= total,
                    None if headers.contains_key(reqwest::header::LINK) => !has_next_page(&headers),
                    None => received < self.page_size as usize,
                };
            if done {
                return Ok(items);
            }
        }
        Err(ForgeError::Rejected {
            op: op.to_owned(),
            message: format!("more than {MAX_PAGES} pages; refusing to read further"),
        })
    }
}

fn repo_path(repo: &RepoName) -> String {
    format!("/repos/{}/{}", repo.owner(), repo.name())
}

#[async_trait]
impl Forge for GiteaApi {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Gitea
    }

    fn max_comment_chars(&self) -> usize {
        self.max_comment_chars
    }

    async fn pull_request(&self, repo: &RepoName, number: u64) -> Result<PullDetails, ForgeError> {
        let op = format!("getting pull request {repo}#{number}");
        let pr: wire::Pull = self
            .get_json(&op, &format!("{}/pulls/{number}", repo_path(repo)))
            .await?;
        pr.into_details(&op)
    }

    async fn changed_files(
        &self,
        repo: &RepoName,
        number: u64,
    ) -> Result<Vec<ChangedFile>, ForgeError> {
        let op = format!("listing files of pull request {repo}#{number}");
        let files: Vec<wire::File> = self
            .get_all(&op, &format!("{}/pulls/{number}/files", repo_path(repo)))
            .await?;
        Ok(files.into_iter().map(wire::File::into_changed).collect())
    }

    async fn approval(
        &self,
        repo: &RepoName,
        number: u64,
        author: &str,
    ) -> Result<Approval, ForgeError> {
        let op = format!("listing reviews of pull request {repo}#{number}");
        let list: Vec<wire::Review> = self
            .get_all(&op, &format!("{}/pulls/{number}/reviews", repo_path(repo)))
            .await?;
        let records = list.into_iter().map(wire::Review::into_record).collect();
        let candidates = reviews::candidates(records, author);
        reviews::confirm(candidates, |user| async move {
            self.permission(repo, &user).await
        })
        .await
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        number: u64,
        body: &str,
    ) -> Result<CommentId, ForgeError> {
        let op = format!("commenting on pull request {repo}#{number}");
        check_comment_size(&op, body, self.max_comment_chars)?;
        let path = format!("{}/issues/{number}/comments", repo_path(repo));
        let bytes = self
            .send_json(&op, Method::POST, &path, &json!({ "body": body }))
            .await?;
        let created: wire::Comment =
            serde_json::from_slice(&bytes).map_err(|e| bad_body(&op, &e))?;
        Ok(CommentId(created.id))
    }

    async fn edit_comment(
        &self,
        repo: &RepoName,
        comment: CommentId,
        body: &str,
    ) -> Result<(), ForgeError> {
        let op = format!("editing comment {comment} in {repo}");
        check_comment_size(&op, body, self.max_comment_chars)?;
        let path = format!("{}/issues/comments/{comment}", repo_path(repo));
        self.send_json(&op, Method::PATCH, &path, &json!({ "body": body }))
            .await
            .map(drop)
    }

    async fn hide_comment(
        &self,
        repo: &RepoName,
        comment: CommentId,
        summary: &str,
    ) -> Result<(), ForgeError> {
        let op = format!("hiding comment {comment} in {repo}");
        let path = format!("{}/issues/comments/{comment}", repo_path(repo));
        let found: wire::Comment = self.get_json(&op, &path).await?;
        let Some(folded) = wire::superseded(summary, &found.body.unwrap_or_default()) else {
            return Ok(()); // already folded
        };
        self.send_json(&op, Method::PATCH, &path, &json!({ "body": folded }))
            .await
            .map(drop)
    }

    async fn set_status(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        status: &CommitStatus,
    ) -> Result<(), ForgeError> {
        let op = format!("setting status {:?} on {repo}@{sha}", status.context);
        let body = json!({
            "state": status.state.as_str(),
            "context": status.context,
            "description": status.short_description(),
            "target_url": status.target_url.clone().unwrap_or_default(),
        });
        let path = format!("{}/statuses/{sha}", repo_path(repo));
        self.send_json(&op, Method::POST, &path, &body)
            .await
            .map(drop)
    }

    async fn react(
        &self,
        repo: &RepoName,
        comment: CommentId,
        reaction: Reaction,
    ) -> Result<(), ForgeError> {
        let op = format!("reacting to comment {comment} in {repo}");
        let path = format!("{}/issues/comments/{comment}/reactions", repo_path(repo));
        let body = json!({ "content": reaction.as_str() });
        self.send_json(&op, Method::POST, &path, &body)
            .await
            .map(drop)
    }

    async fn permission(&self, repo: &RepoName, user: &str) -> Result<Permission, ForgeError> {
        let op = format!("reading {user:?}'s permission on {repo}");
        let segment = super::github_wire::path_segment(user);
        let path = format!("{}/collaborators/{segment}/permission", repo_path(repo));
        let p: wire::PermissionBody = self.get_json(&op, &path).await.map_err(|e| match e {
            ForgeError::Unauthorized { op, detail } => ForgeError::Unauthorized {
                op,
                detail: format!(
                    "{detail}; Gitea tells only repository admins other users' permissions: make atoll's bot account an admin of the repository"
                ),
            },
            other => other,
        })?;
        Ok(Permission::from_word(&p.permission))
    }

    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: u64,
        request: &MergeRequest<'_>,
    ) -> Result<Merged, ForgeError> {
        let op = format!("merging pull request #{number} of {repo}");
        let path = format!("{}/pulls/{number}/merge", repo_path(repo));
        let delete = request.delete_branch.is_some();
        let body = json!({
            "Do": request.style.as_str(),
            "head_commit_id": request.head_sha.as_str(),
            "delete_branch_after_merge": delete,
        });
        self.send_json(&op, Method::POST, &path, &body).await?;
        Ok(Merged {
            branch_deleted: Ok(delete),
        })
    }

    async fn git_auth_header(&self) -> Result<Option<SecretString>, ForgeError> {
        // Gitea's basic auth takes an access token as the password, whatever the user name.
        Ok(Some(super::github_wire::basic_auth("atoll", &self.token)))
    }
}
