//! The GitHub (and GitHub Enterprise) API client on octocrab: personal token or GitHub App
//! (JWT to installation token, cached and renewed by octocrab). Requests go through octocrab's
//! raw methods with our own lenient response structs; octocrab's `retry` feature is not
//! compiled in, so nothing is retried behind our back (a retried POST could double a comment):
//! only GETs are retried, twice, after a transient failure.
//!
//! Paths passed to octocrab are always relative: octocrab adds the `Authorization` header only
//! to relative URIs (or api.github.com), so pages are requested by number, never by following
//! the absolute URL in a `Link` header.

use async_trait::async_trait;
use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use octocrab::Octocrab;
use secrecy::SecretString;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::api::{
    Approval, ChangedFile, CommentId, CommitStatus, DEFAULT_MAX_COMMENT_CHARS, Forge, ForgeError,
    MergeRequest, Merged, Permission, PullDetails, Reaction, check_comment_size,
};
use super::github_client::{
    GithubApiSettings, GithubAuth, GithubSetupError, build, describe, graphql_base, octo_error,
};
use super::github_wire as wire;
use super::http_errors::{GET_RETRY_DELAYS, bad_body, classify, has_next_page, transport};
use super::names::{CommitSha, RepoName};
use super::reviews;
use model::ForgeKind;

/// Page size for list endpoints (GitHub's documented maximum).
const PER_PAGE: u32 = 100;
/// Safety stop for pagination (GitHub lists at most 3,000 files = 30 pages).
const MAX_PAGES: u32 = 100;

/// The GitHub implementation of [`Forge`].
#[derive(Debug)]
pub struct GithubApi {
    rest: Octocrab,
    /// Same auth, based where GitHub serves GraphQL (`/api/graphql` on Enterprise).
    graphql: Octocrab,
    token: Option<SecretString>,
}

impl GithubApi {
    pub fn new(settings: &GithubApiSettings) -> Result<Self, GithubSetupError> {
        let rest_base = settings.api_url.trim_end_matches('/').to_owned();
        let graphql_base = graphql_base(&rest_base);
        let token = match &settings.auth {
            GithubAuth::Token(t) => Some(t.clone()),
            GithubAuth::App { .. } => None,
        };
        Ok(Self {
            rest: build(&rest_base, settings)?,
            graphql: build(&graphql_base, settings)?,
            token,
        })
    }

    /// Sends a request and returns the body of a 2xx response, or the classified error.
    async fn send(
        &self,
        op: &str,
        response: octocrab::Result<http::Response<BoxBody<Bytes, octocrab::Error>>>,
    ) -> Result<(http::HeaderMap, Bytes), ForgeError> {
        let response = response.map_err(|e| octo_error(op, &e))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| transport(op, describe(&e)))?
            .to_bytes();
        tracing::debug!(
            forge = "github",
            op,
            http.status = status.as_u16(),
            "forge api call"
        );
        if status.is_success() {
            Ok((headers, body))
        } else {
            let err = classify(op, status, &headers, &body);
            tracing::warn!(forge = "github", error = %err, "forge api call failed");
            Err(err)
        }
    }

    /// A GET, retried after a transient failure (GETs are idempotent; nothing else is retried).
    async fn get(&self, op: &str, uri: &str) -> Result<(http::HeaderMap, Bytes), ForgeError> {
        let mut delays = GET_RETRY_DELAYS.iter();
        loop {
            match self.send(op, self.rest._get(uri).await).await {
                Err(ForgeError::Transient { .. }) if let Some(delay) = delays.next() => {
                    tokio::time::sleep(*delay).await;
                }
                other => return other,
            }
        }
    }

    async fn get_json<T: DeserializeOwned>(&self, op: &str, path: &str) -> Result<T, ForgeError> {
        let (_, body) = self.get(op, path).await?;
        serde_json::from_slice(&body).map_err(|e| bad_body(op, &e))
    }

    /// Every item of a list endpoint, page by page.
    async fn get_all<T: DeserializeOwned>(
        &self,
        op: &str,
        path: &str,
    ) -> Result<Vec<T>, ForgeError> {
        let mut items = Vec::new();
        for page in 1..=MAX_PAGES {
            let uri = format!("{path}?per_page={PER_PAGE}&page={page}");
            let (headers, body) = self.get(op, &uri).await?;
            let batch: Vec<T> = serde_json::from_slice(&body).map_err(|e| bad_body(op, &e))?;
            let done = batch.is_empty() || !has_next_page(&headers);
            items.extend(batch);
            if done {
                return Ok(items);
            }
        }
        Err(ForgeError::Rejected {
            op: op.to_owned(),
            message: format!("more than {MAX_PAGES} pages; refusing to read further"),
        })
    }

    async fn post_json<T: DeserializeOwned>(
        &self,
        op: &str,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, ForgeError> {
        let (_, bytes) = self
            .send(op, self.rest._post(path, Some(body)).await)
            .await?;
        serde_json::from_slice(&bytes).map_err(|e| bad_body(op, &e))
    }
}

fn repo_path(repo: &RepoName) -> String {
    format!("/repos/{}/{}", repo.owner(), repo.name())
}

#[async_trait]
impl Forge for GithubApi {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Github
    }

    fn max_comment_chars(&self) -> usize {
        DEFAULT_MAX_COMMENT_CHARS
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
        check_comment_size(&op, body, self.max_comment_chars())?;
        let path = format!("{}/issues/{number}/comments", repo_path(repo));
        let created: wire::Comment = self.post_json(&op, &path, &json!({ "body": body })).await?;
        Ok(CommentId(created.id))
    }

    async fn edit_comment(
        &self,
        repo: &RepoName,
        comment: CommentId,
        body: &str,
    ) -> Result<(), ForgeError> {
        let op = format!("editing comment {comment} in {repo}");
        check_comment_size(&op, body, self.max_comment_chars())?;
        let path = format!("{}/issues/comments/{comment}", repo_path(repo));
        let response = self
            .rest
            ._patch(path.as_str(), Some(&json!({ "body": body })))
            .await;
        self.send(&op, response).await.map(drop)
    }

    async fn hide_comment(
        &self,
        repo: &RepoName,
        comment: CommentId,
        _summary: &str,
    ) -> Result<(), ForgeError> {
        let op = format!("hiding comment {comment} in {repo}");
        let found: wire::Comment = self
            .get_json(
                &op,
                &format!("{}/issues/comments/{comment}", repo_path(repo)),
            )
            .await?;
        let node_id = found.node_id.ok_or_else(|| ForgeError::Rejected {
            op: op.clone(),
            message: "the comment has no node_id to minimize".to_owned(),
        })?;
        let query = json!({
            "query": "mutation($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) { minimizedComment { isMinimized } } }",
            "variables": { "id": node_id },
        });
        let (_, body) = self
            .send(&op, self.graphql._post("/graphql", Some(&query)).await)
            .await?;
        wire::check_graphql(&op, &body)
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
            "target_url": status.target_url,
        });
        let path = format!("{}/statuses/{sha}", repo_path(repo));
        self.post_json::<serde_json::Value>(&op, &path, &body)
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
        self.post_json::<serde_json::Value>(&op, &path, &body)
            .await
            .map(drop)
    }

    async fn permission(&self, repo: &RepoName, user: &str) -> Result<Permission, ForgeError> {
        let op = format!("reading {user:?}'s permission on {repo}");
        let user = wire::path_segment(user);
        let p: wire::PermissionBody = self
            .get_json(
                &op,
                &format!("{}/collaborators/{user}/permission", repo_path(repo)),
            )
            .await?;
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
        let body = json!({
            "merge_method": request.style.as_str(),
            "sha": request.head_sha.as_str(),
        });
        let response = self.rest._put(path.as_str(), Some(&body)).await;
        self.send(&op, response).await?;
        let Some(branch) = request.delete_branch else {
            return Ok(Merged {
                branch_deleted: Ok(false),
            });
        };
        let op = format!("deleting branch {branch:?} of {repo}");
        let path = format!(
            "{}/git/refs/heads/{}",
            repo_path(repo),
            branch
                .split('/')
                .map(super::github_wire::path_segment)
                .collect::<Vec<_>>()
                .join("/")
        );
        let response = self.rest._delete(path.as_str(), None::<&()>).await;
        let branch_deleted = match self.send(&op, response).await {
            Ok(_) => Ok(true),
            Err(e) => Err(e.to_string()),
        };
        Ok(Merged { branch_deleted })
    }

    async fn git_auth_header(&self) -> Result<Option<SecretString>, ForgeError> {
        let token = match &self.token {
            Some(token) => token.clone(),
            None => self
                .rest
                .installation_token()
                .await
                .map_err(|e| octo_error("getting a github app installation token", &e))?,
        };
        Ok(Some(wire::basic_auth("x-access-token", &token)))
    }
}
