//! Automerge (`automerge: true`, or the server's `automerge` rule): once an apply leaves every
//! project of the PR with a current plan applied (or with nothing to apply), merge the PR with
//! the configured method, deleting the head branch when `delete_source_branch_on_merge` says
//! so for every such project (never a fork's branch). The result, merged or the forge's
//! refusal, is always commented. A project the PR modifies that autoplans but has no current
//! plan (its plan failed, or its workflow refused it) holds the merge back, as a project
//! Atlantis's pull status shows as errored does: merging would ship a change nobody applied.

use super::stages::has_changes;
use super::{Job, Runner};
use crate::forge::{MergeRequest, MergeStyle, PullDetails};
use crate::locks::PlanQuery;
use crate::render::pr as view;
use crate::repocfg::{MergeMethod, Resolution};

pub(super) async fn run(
    r: &Runner,
    job: &Job,
    pull: &PullDetails,
    resolution: &Resolution,
    method: Option<MergeMethod>,
) -> anyhow::Result<()> {
    let plans = r
        .store
        .plans()
        .plan_list(&PlanQuery {
            repo: job.repo(),
            pr: job.pr.number,
            current_only: true,
        })
        .await?;
    let waiting = plans
        .iter()
        .filter(|s| s.applied_at.is_none() && has_changes(s))
        .count();
    if waiting > 0 {
        job.step(&format!(
            "automerge: not yet, {waiting} planned project(s) not applied"
        ))
        .await;
        return Ok(());
    }
    let unplanned: Vec<String> = resolution
        .autoplan()
        .filter(|p| {
            !plans.iter().any(|s| {
                p.dir == s.key.dir && p.workspace == s.key.workspace && p.name == s.key.project
            })
        })
        .map(|p| p.label())
        .collect();
    if !unplanned.is_empty() {
        job.step(&format!(
            "automerge: not merging, no current plan for {}",
            unplanned.join(", ")
        ))
        .await;
        return Ok(());
    }
    let delete = !pull.from_fork
        && plans.iter().all(|s| {
            super::apply::project_for(resolution, s)
                .options
                .delete_source_branch_on_merge
        });
    // `apply --auto-merge-method` over the configured method
    let style = match method.unwrap_or(resolution.run.merge_method) {
        MergeMethod::Merge => MergeStyle::Merge,
        MergeMethod::Squash => MergeStyle::Squash,
        MergeMethod::Rebase => MergeStyle::Rebase,
    };
    let request = MergeRequest {
        style,
        head_sha: &pull.head_sha,
        delete_branch: delete.then_some(pull.head_ref.as_str()),
    };
    job.step(&format!("automerge: merging with {}", style.as_str()))
        .await;
    let outcome = job.forge.merge_pull(&job.name, pull.number, &request).await;
    let body = match &outcome {
        Ok(merged) => view::automerged(&r.executable, style.as_str(), &merged.branch_deleted),
        Err(e) => view::automerge_failed(&r.executable, style.as_str(), &e.to_string()),
    };
    job.comment(&body).await?;
    Ok(())
}
