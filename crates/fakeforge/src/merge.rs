//! Merging a pull request through the API, the part GitHub
//! (`PUT /repos/{o}/{r}/pulls/{n}/merge`, then `DELETE /repos/{o}/{r}/git/refs/heads/{b}`) and
//! Gitea (`POST /repos/{o}/{r}/pulls/{n}/merge` with `Do` and `delete_branch_after_merge`)
//! share: the checks, the base branch moved to the head, the `closed` webhook with
//! `merged: true`. Each forge's handler puts a refusal in its own words and status.

use super::script::PrEvent;
use super::state::Fault;
use super::{Shared, git, gitea_payloads, github_payloads, hooks};
use model::ForgeKind;

/// A merge as asked through the API.
pub(super) struct MergeAsk {
    pub(super) method: String,
    /// The head the caller expects (GitHub `sha`, Gitea `head_commit_id`).
    pub(super) sha: Option<String>,
    pub(super) delete_branch: bool,
}

/// Why a merge is refused; each forge words it.
pub(super) enum Refusal {
    Missing(Fault),
    /// Closed, already merged, or the forge's mergeability says no.
    NotMergeable,
    /// `sha` is not the head any more.
    HeadMoved,
    BadMethod,
}

/// The merge methods both forges take (Gitea has more; atoll sends only these).
const METHODS: [&str; 3] = ["merge", "squash", "rebase"];

/// Merges `pr` of `full` as `ask` says, then sends the `closed` webhook; returns the merge
/// commit (the head: the fake fast-forwards the base).
pub(super) async fn merge(
    shared: &Shared,
    full: &str,
    number: u64,
    ask: &MergeAsk,
) -> Result<String, Refusal> {
    let (bare, base_ref, head, head_ref) = {
        let mut st = shared.state();
        let repo = st
            .repos
            .get_mut(full)
            .ok_or_else(|| Refusal::Missing(Fault::new(404, "Not Found")))?;
        let pr = repo
            .prs
            .get_mut(&number)
            .ok_or_else(|| Refusal::Missing(Fault::new(404, "Not Found")))?;
        if !pr.open || pr.merged || pr.mergeable == Some(false) {
            return Err(Refusal::NotMergeable);
        }
        if ask.sha.as_deref().is_some_and(|sha| sha != pr.head_sha) {
            return Err(Refusal::HeadMoved);
        }
        if !METHODS.contains(&ask.method.as_str()) {
            return Err(Refusal::BadMethod);
        }
        pr.open = false;
        pr.merged = true;
        pr.merged_with = Some(ask.method.clone());
        let out = (
            repo.bare.clone(),
            pr.base_ref.clone(),
            pr.head_sha.clone(),
            pr.head_ref.clone(),
        );
        repo.default_sha.clone_from(&out.2);
        out
    };
    let moved = git::set_ref(&bare, &format!("refs/heads/{base_ref}"), &head).await;
    if let Err(e) = moved {
        return Err(Refusal::Missing(Fault::new(500, e.to_string())));
    }
    if ask.delete_branch {
        let _ = git::delete_ref(&bare, &format!("refs/heads/{head_ref}")).await;
    }
    let event = {
        let st = shared.state();
        match shared.kind {
            ForgeKind::Github => {
                github_payloads::pr_event(shared, &st, full, number, PrEvent::Closed)
            }
            ForgeKind::Gitea => {
                gitea_payloads::pr_event(shared, &st, full, number, PrEvent::Closed)
            }
        }
    };
    if let Ok((name, kind, payload)) = event {
        let _ = hooks::deliver(shared, &name, kind.as_deref(), &payload).await;
    }
    Ok(head)
}
