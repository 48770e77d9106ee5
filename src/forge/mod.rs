//! Everything forge-specific: webhook payload parsing into [`ForgeEvent`], and the [`Forge`]
//! trait with its GitHub (octocrab) and Gitea/Forgejo (reqwest) API clients. Forge wire types
//! never leak outside this module: callers see only the normalised event and the neutral API
//! types. It must not decide what a comment means or run anything.
//!
//! Parsing is lenient: unknown actions and missing optional fields never fail a payload; only a
//! body that is not JSON, or lacks the fields an event cannot do without, is an error.

mod api;
mod gitea;
mod gitea_api;
mod gitea_wire;
mod github;
mod github_api;
mod github_client;
mod github_wire;
mod http_errors;
mod names;
mod payload;
mod reviews;

pub use api::{
    Approval, ChangedFile, CommentId, CommitStatus, DEFAULT_MAX_COMMENT_CHARS, Forge, ForgeError,
    MAX_STATUS_DESCRIPTION_CHARS, MergeRequest, MergeStyle, Mergeable, Merged, Permission, PrState,
    PullDetails, Reaction, StatusKind, StatusState,
};
pub use gitea_api::{GiteaApi, GiteaApiSettings, GiteaSetupError};
pub use github_api::GithubApi;
pub use github_client::{GithubApiSettings, GithubAuth, GithubSetupError};
pub use names::{CommitSha, InvalidName, RepoName};

use std::fmt;

use model::ForgeKind;

/// A repository as `host/owner/name`, the form the allowlist and job keys use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoRef {
    pub host: String,
    pub owner: String,
    pub name: String,
}

impl fmt::Display for RepoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.host, self.owner, self.name)
    }
}

/// The pull request fields atoll needs from a PR event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub number: u64,
    pub head_sha: String,
    pub head_ref: String,
    pub base_ref: String,
    pub author: String,
    pub draft: bool,
    /// The head branch lives in another repository (or that repository was deleted).
    pub from_fork: bool,
}

/// What happened to a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrAction {
    Opened,
    /// New commits on the head branch.
    Updated,
    Reopened,
    ReadyForReview,
    Closed {
        merged: bool,
    },
}

/// One webhook delivery, normalised across forges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForgeEvent {
    /// The forge testing the hook.
    Ping,
    PullRequest {
        repo: RepoRef,
        pr: PullRequest,
        action: PrAction,
    },
    /// A new comment on a pull request's conversation.
    Comment {
        repo: RepoRef,
        pr_number: u64,
        comment_id: u64,
        author: String,
        body: String,
    },
    /// A review was submitted.
    Review {
        repo: RepoRef,
        pr_number: u64,
        reviewer: String,
        approved: bool,
    },
    /// A well-formed event atoll does not act on, and why.
    Ignored {
        repo: Option<RepoRef>,
        reason: String,
    },
}

impl ForgeEvent {
    pub fn repo(&self) -> Option<&RepoRef> {
        match self {
            Self::Ping => None,
            Self::PullRequest { repo, .. }
            | Self::Comment { repo, .. }
            | Self::Review { repo, .. } => Some(repo),
            Self::Ignored { repo, .. } => repo.as_ref(),
        }
    }

    pub fn pr_number(&self) -> Option<u64> {
        match self {
            Self::PullRequest { pr, .. } => Some(pr.number),
            Self::Comment { pr_number, .. } | Self::Review { pr_number, .. } => Some(*pr_number),
            Self::Ping | Self::Ignored { .. } => None,
        }
    }
}

/// The event names a delivery carried (`X-GitHub-Event`, or `X-Gitea-Event` and its type).
#[derive(Debug, Clone, Copy)]
pub struct EventHeaders<'a> {
    pub event: &'a str,
    /// Gitea/Forgejo `X-Gitea-Event-Type`: the one to dispatch on.
    pub event_type: Option<&'a str>,
}

/// Why a verified payload could not be understood.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    #[error("body is not valid JSON: {0}")]
    NotJson(String),
    #[error("{event} payload is missing or has a malformed field: {detail}")]
    Malformed { event: String, detail: String },
}

/// Parses a verified payload into a [`ForgeEvent`].
pub fn parse_event(
    forge: ForgeKind,
    headers: EventHeaders<'_>,
    body: &[u8],
) -> Result<ForgeEvent, PayloadError> {
    match forge {
        ForgeKind::Github => github::parse(headers.event, body),
        ForgeKind::Gitea => gitea::parse(headers, body),
    }
}

/// Deserialises the body straight into a lenient payload struct (no intermediate JSON tree):
/// a syntax error is "not JSON", a missing or mistyped field names the event.
fn decode<T: serde::de::DeserializeOwned>(event: &str, body: &[u8]) -> Result<T, PayloadError> {
    serde_json::from_slice(body).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => PayloadError::Malformed {
            event: event.to_owned(),
            detail: e.to_string(),
        },
        _ => PayloadError::NotJson(e.to_string()),
    })
}

/// Checks that an event atoll does not read is still JSON (so a broken body is a 400 for
/// every event), without building anything.
fn check_json(body: &[u8]) -> Result<(), PayloadError> {
    serde_json::from_slice::<serde::de::IgnoredAny>(body)
        .map(|_| ())
        .map_err(|e| PayloadError::NotJson(e.to_string()))
}

/// Whether a PR's head lives outside its base repository. A missing head repository (a deleted
/// fork) counts as a fork: it cannot be trusted like a branch of the base.
fn is_fork(head_full_name: Option<&str>, base_full_name: Option<&str>) -> bool {
    match (head_full_name, base_full_name) {
        (Some(head), Some(base)) => !head.eq_ignore_ascii_case(base),
        _ => true,
    }
}

/// `https://host[:port]/owner/name` -> `host[:port]` (lower-cased).
fn host_of(html_url: &str) -> Option<String> {
    let rest = html_url.split_once("://")?.1;
    let host = rest.split('/').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Builds a [`RepoRef`] from `full_name` (`owner/name`) and the repository's web URL.
fn repo_ref(event: &str, full_name: &str, html_url: &str) -> Result<RepoRef, PayloadError> {
    let malformed = |detail: &str| PayloadError::Malformed {
        event: event.to_owned(),
        detail: detail.to_owned(),
    };
    let (owner, name) = full_name
        .split_once('/')
        .filter(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/'))
        .ok_or_else(|| malformed("repository.full_name is not owner/name"))?;
    let host = host_of(html_url).ok_or_else(|| malformed("repository.html_url has no host"))?;
    Ok(RepoRef {
        host,
        owner: owner.to_owned(),
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_in_another_or_deleted_repository_is_a_fork() {
        assert!(!is_fork(Some("acme/infra"), Some("ACME/infra")));
        assert!(is_fork(Some("mallory/infra"), Some("acme/infra")));
        assert!(is_fork(None, Some("acme/infra")));
    }

    #[test]
    fn repository_host_comes_from_its_web_url() {
        let r = repo_ref(
            "e",
            "acme/infra",
            "https://Gitea.Example.com:3000/acme/infra",
        )
        .expect("valid repository");
        assert_eq!(r.to_string(), "gitea.example.com:3000/acme/infra");
        assert!(repo_ref("e", "acme", "https://github.com/acme").is_err());
        assert!(repo_ref("e", "acme/infra", "not a url").is_err());
    }

    #[test]
    fn unknown_pull_request_action_parses_as_ignored() {
        let body = br#"{"action":"stacked","pull_request":{"number":1,"head":{"ref":"a","sha":"b","repo":null},"base":{"ref":"main","sha":"c","repo":null}},"repository":{"full_name":"acme/infra","html_url":"https://github.com/acme/infra"}}"#;
        let headers = EventHeaders {
            event: "pull_request",
            event_type: None,
        };
        let event = parse_event(ForgeKind::Github, headers, body).expect("lenient parse");
        assert!(matches!(event, ForgeEvent::Ignored { reason, .. } if reason.contains("stacked")));
    }

    #[test]
    fn pull_request_from_deleted_fork_is_marked_as_fork() {
        let body = br#"{"action":"opened","pull_request":{"number":1,"draft":null,"head":{"ref":"a","sha":"b","repo":null},"base":{"ref":"main","sha":"c","repo":{"full_name":"acme/infra"}}},"repository":{"full_name":"acme/infra","html_url":"https://github.com/acme/infra"}}"#;
        let headers = EventHeaders {
            event: "pull_request",
            event_type: None,
        };
        let event = parse_event(ForgeKind::Github, headers, body).expect("lenient parse");
        assert!(matches!(event, ForgeEvent::PullRequest { pr, .. } if pr.from_fork && !pr.draft));
    }
}
