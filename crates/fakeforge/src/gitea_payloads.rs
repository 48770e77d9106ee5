//! Gitea's JSON shapes as the fake serves them in API responses and webhook payloads, with
//! Gitea's event naming (`pull_request_sync`, `issue_comment` + `pull_request_comment`,
//! `pull_request_review_approved` / `_rejected`).

use serde_json::{Value, json};

use super::script::{HookPayload, PrEvent};
use super::state::{FakeComment, FakeReview, Fault, Pr, State as Mem};
use super::{Shared, lock};

pub(super) fn user(login: &str) -> Value {
    json!({ "id": 1, "login": login, "username": login, "full_name": "", "email": format!("{login}@noreply.invalid") })
}

pub(super) fn repo_json(shared: &Shared, st: &Mem, full: &str) -> Value {
    let host = lock(&shared.web_host).clone();
    let (owner, name) = full.split_once('/').unwrap_or((full, ""));
    let repo = st.repos.get(full);
    let clone = repo.map(super::script::clone_url).unwrap_or_default();
    let id = repo.map_or(7, |r| r.id);
    let fork = repo.is_some_and(|r| r.fork_of.is_some());
    json!({
        "id": id, "owner": user(owner), "name": name, "full_name": full, "private": false, "fork": fork,
        "html_url": format!("https://{host}/{full}"), "clone_url": clone, "default_branch": "main",
    })
}

pub(super) fn pr_json(shared: &Shared, st: &Mem, full: &str, pr: &Pr) -> Value {
    let host = lock(&shared.web_host).clone();
    let branch = |repo_full: &str, name: &str, sha: &str| {
        let repo = repo_json(shared, st, repo_full);
        json!({ "label": name, "ref": name, "sha": sha, "repo_id": repo["id"], "repo": repo })
    };
    let head_repo = pr.head_repo.as_deref().unwrap_or(full);
    json!({
        "id": pr.number + 30, "number": pr.number, "user": user(&pr.author), "title": pr.title, "body": "",
        "state": if pr.open { "open" } else { "closed" }, "draft": pr.draft,
        "html_url": format!("https://{host}/{full}/pulls/{}", pr.number),
        "mergeable": pr.mergeable.unwrap_or(false), "merged": pr.merged,
        "merged_at": if pr.merged { json!("2026-11-30T10:00:00Z") } else { Value::Null },
        "base": branch(full, &pr.base_ref, &pr.base_sha), "head": branch(head_repo, &pr.head_ref, &pr.head_sha),
        "merge_base": pr.base_sha,
    })
}

pub(super) fn comment_json(shared: &Shared, full: &str, c: &FakeComment) -> Value {
    let host = lock(&shared.web_host).clone();
    json!({
        "id": c.id, "body": c.body, "user": user(&c.author),
        "html_url": format!("https://{host}/{full}/pulls/{}#issuecomment-{}", c.pr, c.id),
        "issue_url": format!("https://{host}/{full}/issues/{}", c.pr),
        "pull_request_url": format!("https://{host}/{full}/pulls/{}", c.pr),
    })
}

/// PR webhook: `X-Gitea-Event: pull_request`, type `pull_request` or `pull_request_sync`.
pub(super) fn pr_event(
    shared: &Shared,
    st: &Mem,
    full: &str,
    number: u64,
    event: PrEvent<'_>,
) -> Result<HookPayload, Fault> {
    let pr = st.pr(full, number)?;
    let (action, kind) = match event {
        PrEvent::Opened => ("opened", "pull_request"),
        PrEvent::Pushed { .. } => ("synchronized", "pull_request_sync"),
        PrEvent::Reopened => ("reopened", "pull_request"),
        PrEvent::Closed => ("closed", "pull_request"),
    };
    let payload = json!({
        "action": action, "number": number, "pull_request": pr_json(shared, st, full, pr),
        "requested_reviewer": null, "repository": repo_json(shared, st, full),
        "sender": user(&pr.author), "commit_id": "", "review": null,
    });
    Ok(("pull_request".into(), Some(kind.into()), payload))
}

/// Comment webhook: `X-Gitea-Event: issue_comment`, type `pull_request_comment`.
pub(super) fn comment_event(
    shared: &Shared,
    st: &Mem,
    full: &str,
    c: &FakeComment,
) -> Result<HookPayload, Fault> {
    let pr = st.pr(full, c.pr)?;
    let issue = json!({
        "id": c.pr + 30, "number": c.pr, "user": user(&pr.author), "title": pr.title, "body": "",
        "state": if pr.open { "open" } else { "closed" },
        "pull_request": { "merged": pr.merged, "merged_at": null, "draft": pr.draft },
    });
    let payload = json!({
        "action": "created", "issue": issue, "pull_request": pr_json(shared, st, full, pr),
        "comment": comment_json(shared, full, c), "repository": repo_json(shared, st, full),
        "sender": user(&c.author), "is_pull": true,
    });
    Ok((
        "issue_comment".into(),
        Some("pull_request_comment".into()),
        payload,
    ))
}

/// Review webhook: approved / rejected / comment, as Gitea names them.
pub(super) fn review_event(
    shared: &Shared,
    st: &Mem,
    full: &str,
    number: u64,
    r: &FakeReview,
) -> Result<HookPayload, Fault> {
    let pr = st.pr(full, number)?;
    let (event, kind) = match r.state.as_str() {
        "APPROVED" => ("pull_request_approved", "pull_request_review_approved"),
        "CHANGES_REQUESTED" => ("pull_request_rejected", "pull_request_review_rejected"),
        _ => ("pull_request_comment", "pull_request_review_comment"),
    };
    let payload = json!({
        "action": "reviewed", "number": number, "pull_request": pr_json(shared, st, full, pr),
        "requested_reviewer": null, "repository": repo_json(shared, st, full),
        "sender": user(&r.user), "commit_id": r.commit_id, "review": { "type": kind, "content": "" },
    });
    Ok((event.into(), Some(kind.into()), payload))
}
