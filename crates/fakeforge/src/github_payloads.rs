//! GitHub's JSON shapes as the fake serves them in API responses and webhook payloads
//! (`pull_request`, `issue_comment`, `pull_request_review`).

use serde_json::{Value, json};

use super::script::{HookPayload, PrEvent};
use super::state::{FakeComment, FakeReview, Fault, Pr, State as Mem};
use super::{Shared, lock};

pub(super) fn user(login: &str) -> Value {
    json!({ "login": login, "id": 1, "type": if login.ends_with("[bot]") { "Bot" } else { "User" } })
}

pub(super) fn repo_json(shared: &Shared, st: &Mem, full: &str) -> Value {
    let host = lock(&shared.web_host).clone();
    let (owner, name) = full.split_once('/').unwrap_or((full, ""));
    let repo = st.repos.get(full);
    let clone = repo.map(super::script::clone_url).unwrap_or_default();
    let id = repo.map_or(1, |r| r.id);
    let fork = repo.is_some_and(|r| r.fork_of.is_some());
    json!({
        "id": id, "name": name, "full_name": full, "private": false, "fork": fork,
        "owner": user(owner), "html_url": format!("https://{host}/{full}"),
        "clone_url": clone, "default_branch": "main",
    })
}

pub(super) fn pr_json(shared: &Shared, st: &Mem, full: &str, pr: &Pr) -> Value {
    let repo = repo_json(shared, st, full);
    let head_repo = pr
        .head_repo
        .as_deref()
        .map_or_else(|| repo.clone(), |fork| repo_json(shared, st, fork));
    let head_owner = pr.head_repo.as_deref().unwrap_or(full);
    let head_owner = head_owner.split_once('/').map_or(head_owner, |(o, _)| o);
    let host = lock(&shared.web_host).clone();
    json!({
        "number": pr.number, "state": if pr.open { "open" } else { "closed" },
        "title": pr.title, "body": null, "draft": pr.draft, "merged": pr.merged,
        "mergeable": pr.mergeable, "mergeable_state": pr.mergeable_state,
        "html_url": format!("https://{host}/{full}/pull/{}", pr.number),
        "user": user(&pr.author),
        "head": { "ref": pr.head_ref, "sha": pr.head_sha, "label": format!("{head_owner}:{}", pr.head_ref), "repo": head_repo },
        "base": { "ref": pr.base_ref, "sha": pr.base_sha, "label": pr.base_ref, "repo": repo },
    })
}

pub(super) fn review_json(r: &FakeReview) -> Value {
    json!({ "id": r.id, "node_id": format!("PRR_fake{}", r.id), "user": user(&r.user), "state": r.state, "commit_id": r.commit_id, "body": "" })
}

pub(super) fn comment_json(shared: &Shared, full: &str, c: &FakeComment) -> Value {
    let host = lock(&shared.web_host).clone();
    json!({
        "id": c.id, "node_id": Mem::node_id(c.id), "body": c.body, "user": user(&c.author),
        "html_url": format!("https://{host}/{full}/pull/{}#issuecomment-{}", c.pr, c.id),
        "author_association": "MEMBER",
    })
}

/// `pull_request` webhook: `(event, None, payload)`.
pub(super) fn pr_event(
    shared: &Shared,
    st: &Mem,
    full: &str,
    number: u64,
    event: PrEvent<'_>,
) -> Result<HookPayload, Fault> {
    let pr = st.pr(full, number)?;
    let action = match event {
        PrEvent::Opened => "opened",
        PrEvent::Pushed { .. } => "synchronize",
        PrEvent::Reopened => "reopened",
        PrEvent::Closed => "closed",
    };
    let mut payload = json!({
        "action": action, "number": number, "pull_request": pr_json(shared, st, full, pr),
        "repository": repo_json(shared, st, full), "sender": user(&pr.author),
    });
    if let PrEvent::Pushed { before } = event {
        payload["before"] = json!(before);
        payload["after"] = json!(pr.head_sha);
    }
    Ok(("pull_request".into(), None, payload))
}

/// `issue_comment` webhook (action `created`) for a comment on a PR.
pub(super) fn comment_event(
    shared: &Shared,
    st: &Mem,
    full: &str,
    c: &FakeComment,
) -> Result<HookPayload, Fault> {
    let pr = st.pr(full, c.pr)?;
    let host = lock(&shared.web_host).clone();
    let issue = json!({
        "number": c.pr, "title": pr.title, "user": user(&pr.author), "state": if pr.open { "open" } else { "closed" },
        "pull_request": { "url": format!("http://{}/api/v3/repos/{full}/pulls/{}", shared.addr, c.pr), "html_url": format!("https://{host}/{full}/pull/{}", c.pr), "merged_at": null },
    });
    let payload = json!({
        "action": "created", "issue": issue, "comment": comment_json(shared, full, c),
        "repository": repo_json(shared, st, full), "sender": user(&c.author),
    });
    Ok(("issue_comment".into(), None, payload))
}

/// `pull_request_review` webhook (action `submitted`, lower-case state as GitHub sends it).
pub(super) fn review_event(
    shared: &Shared,
    st: &Mem,
    full: &str,
    number: u64,
    r: &FakeReview,
) -> Result<HookPayload, Fault> {
    let pr = st.pr(full, number)?;
    let mut review = review_json(r);
    review["state"] = json!(r.state.to_ascii_lowercase());
    let payload = json!({
        "action": "submitted", "review": review, "pull_request": pr_json(shared, st, full, pr),
        "repository": repo_json(shared, st, full), "sender": user(&r.user),
    });
    Ok(("pull_request_review".into(), None, payload))
}
