//! Gitea and Forgejo webhook payloads, routed on `X-Gitea-Event-Type` (see
//! `reference/forges.md` 3.2: new commits are `pull_request_sync`, PR conversation comments are
//! `issue_comment` + type `pull_request_comment`, and `X-Gitea-Event: pull_request_comment` is a
//! review comment).

use serde::Deserialize;

use super::payload::{Pr, Repo, User, name_of};

use super::{
    EventHeaders, ForgeEvent, PayloadError, PrAction, PullRequest, RepoRef, check_json, decode,
    is_fork, repo_ref,
};

#[derive(Deserialize)]
struct PrPayload {
    action: String,
    pull_request: Pr,
    repository: Repo,
    sender: Option<User>,
    review: Option<Review>,
}

#[derive(Deserialize)]
struct Review {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Issue {
    number: u64,
    /// Present only when the issue is a pull request.
    pull_request: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct Comment {
    id: u64,
    body: Option<String>,
    user: Option<User>,
}

#[derive(Deserialize)]
struct CommentPayload {
    action: String,
    issue: Issue,
    comment: Comment,
    repository: Repo,
    is_pull: Option<bool>,
}

pub(super) fn parse(headers: EventHeaders<'_>, body: &[u8]) -> Result<ForgeEvent, PayloadError> {
    let kind = headers.event_type.unwrap_or(headers.event);
    match kind {
        "pull_request" | "pull_request_sync" => pull_request(kind, decode(kind, body)?),
        // Without an event type, `pull_request_comment` is a review comment.
        "pull_request_comment" if headers.event_type.is_none() => review_comment(body),
        "pull_request_comment" | "issue_comment" => comment(kind, decode(kind, body)?),
        "pull_request_review_approved" | "pull_request_approved" => {
            review(kind, decode(kind, body)?, true)
        }
        "pull_request_review_rejected" | "pull_request_rejected" => {
            review(kind, decode(kind, body)?, false)
        }
        "pull_request_review_comment" => review_comment(body),
        other => check_json(body).map(|()| ForgeEvent::Ignored {
            repo: None,
            reason: format!("event type {other:?} is not handled"),
        }),
    }
}

fn review_comment(body: &[u8]) -> Result<ForgeEvent, PayloadError> {
    check_json(body)?;
    let reason = "review comments do not run commands; comment on the conversation".to_owned();
    Ok(ForgeEvent::Ignored { repo: None, reason })
}

fn repo(event: &str, r: &Repo) -> Result<RepoRef, PayloadError> {
    repo_ref(event, &r.full_name, &r.html_url)
}

fn pull_request(kind: &str, p: PrPayload) -> Result<ForgeEvent, PayloadError> {
    let repo = repo(kind, &p.repository)?;
    let action = match p.action.as_str() {
        "opened" => PrAction::Opened,
        "synchronized" => PrAction::Updated,
        "reopened" => PrAction::Reopened,
        "closed" => PrAction::Closed {
            merged: p.pull_request.merged.unwrap_or(false),
        },
        other => {
            return Ok(ForgeEvent::Ignored {
                repo: Some(repo),
                reason: format!("{kind} action {other:?} needs no job"),
            });
        }
    };
    let pr = p.pull_request;
    let from_fork = is_fork(name_of(&pr.head), name_of(&pr.base));
    let pr = PullRequest {
        number: pr.number,
        head_sha: pr.head.sha,
        head_ref: pr.head.name,
        base_ref: pr.base.name,
        author: pr.user.map(|u| u.login).unwrap_or_default(),
        draft: pr.draft.unwrap_or(false),
        from_fork,
    };
    Ok(ForgeEvent::PullRequest { repo, pr, action })
}

fn comment(kind: &str, p: CommentPayload) -> Result<ForgeEvent, PayloadError> {
    let repo = repo(kind, &p.repository)?;
    let is_pull = p.is_pull.unwrap_or(false) || p.issue.pull_request.is_some();
    if !is_pull {
        let reason = "comment is on an issue, not a pull request".to_owned();
        return Ok(ForgeEvent::Ignored {
            repo: Some(repo),
            reason,
        });
    }
    if p.action != "created" {
        let reason = format!("comment {}; only new comments run commands", p.action);
        return Ok(ForgeEvent::Ignored {
            repo: Some(repo),
            reason,
        });
    }
    Ok(ForgeEvent::Comment {
        repo,
        pr_number: p.issue.number,
        comment_id: p.comment.id,
        author: p.comment.user.map(|u| u.login).unwrap_or_default(),
        body: p.comment.body.unwrap_or_default(),
    })
}

fn review(kind: &str, p: PrPayload, approved: bool) -> Result<ForgeEvent, PayloadError> {
    let repo = repo(kind, &p.repository)?;
    // The review type is authoritative when present (older versions only set the header).
    let approved = p
        .review
        .map_or(approved, |r| r.kind == "pull_request_review_approved");
    Ok(ForgeEvent::Review {
        repo,
        pr_number: p.pull_request.number,
        reviewer: p.sender.map(|u| u.login).unwrap_or_default(),
        approved,
    })
}
