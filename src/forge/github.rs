//! GitHub webhook payloads (`X-GitHub-Event`): lenient structs holding only what atoll reads.

use serde::Deserialize;

use super::payload::{Pr, Repo, User, name_of};

use super::{
    ForgeEvent, PayloadError, PrAction, PullRequest, RepoRef, check_json, decode, is_fork, repo_ref,
};

#[derive(Deserialize)]
struct PrPayload {
    action: String,
    pull_request: Pr,
    repository: Repo,
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
}

#[derive(Deserialize)]
struct Review {
    state: String,
    user: Option<User>,
}

#[derive(Deserialize)]
struct PrNumber {
    number: u64,
}

#[derive(Deserialize)]
struct ReviewPayload {
    action: String,
    review: Review,
    pull_request: PrNumber,
    repository: Repo,
}

pub(super) fn parse(event: &str, body: &[u8]) -> Result<ForgeEvent, PayloadError> {
    match event {
        "ping" => check_json(body).map(|()| ForgeEvent::Ping),
        "pull_request" => pull_request(event, decode(event, body)?),
        "issue_comment" => comment(event, decode(event, body)?),
        "pull_request_review" => review(event, decode(event, body)?),
        other => check_json(body).map(|()| ForgeEvent::Ignored {
            repo: None,
            reason: format!("event {other:?} is not handled"),
        }),
    }
}

fn repo(event: &str, r: &Repo) -> Result<RepoRef, PayloadError> {
    repo_ref(event, &r.full_name, &r.html_url)
}

fn pull_request(event: &str, p: PrPayload) -> Result<ForgeEvent, PayloadError> {
    let repo = repo(event, &p.repository)?;
    let action = match p.action.as_str() {
        "opened" => PrAction::Opened,
        "synchronize" => PrAction::Updated,
        "reopened" => PrAction::Reopened,
        "ready_for_review" => PrAction::ReadyForReview,
        "closed" => PrAction::Closed {
            merged: p.pull_request.merged.unwrap_or(false),
        },
        other => {
            return Ok(ForgeEvent::Ignored {
                repo: Some(repo),
                reason: format!("pull_request action {other:?} needs no job"),
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

fn comment(event: &str, p: CommentPayload) -> Result<ForgeEvent, PayloadError> {
    let repo = repo(event, &p.repository)?;
    if p.issue.pull_request.is_none() {
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

fn review(event: &str, p: ReviewPayload) -> Result<ForgeEvent, PayloadError> {
    let repo = repo(event, &p.repository)?;
    if p.action != "submitted" {
        let reason = format!("pull_request_review action {:?} needs no job", p.action);
        return Ok(ForgeEvent::Ignored {
            repo: Some(repo),
            reason,
        });
    }
    Ok(ForgeEvent::Review {
        repo,
        pr_number: p.pull_request.number,
        reviewer: p.review.user.map(|u| u.login).unwrap_or_default(),
        approved: p.review.state.eq_ignore_ascii_case("approved"),
    })
}
