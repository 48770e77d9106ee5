//! The requirements (`approved`, `mergeable`, `undiverged`, `policies_passed`) of apply
//! (`apply_requirements`) and of a comment plan (`plan_requirements`): which are unmet, as
//! typed values that `render` puts in words.

use super::{Job, Runner, project};
use crate::forge::{CommitStatus, Mergeable, PullDetails, StatusKind, StatusState};
use crate::locks::SavedPlan;
use crate::render::pr::{self as view, Unmet};
use crate::repocfg::{Project, Requirement};

/// Each unmet apply requirement across the projects to apply, in name order.
pub(super) async fn unmet_requirements(
    r: &Runner,
    job: &Job,
    pull: &PullDetails,
    projects: &[(SavedPlan, Project)],
) -> anyhow::Result<Vec<Unmet>> {
    let wanted = projects
        .iter()
        .flat_map(|(_, p)| p.apply_requirements.iter().copied());
    let mut unmet = unmet(r, job, pull, wanted).await?;
    unmet.extend(super::policies::unmet(r, job, projects));
    Ok(unmet)
}

/// Whether a comment plan of `projects` may run: `false` after commenting each unmet
/// `plan_requirements` entry and failing the plan status.
pub(super) async fn plan_allowed(
    r: &Runner,
    job: &Job,
    pull: &PullDetails,
    projects: &[Project],
) -> anyhow::Result<bool> {
    let wanted = projects
        .iter()
        .flat_map(|p| p.options.plan_requirements.iter().copied());
    let unmet = unmet(r, job, pull, wanted).await?;
    if unmet.is_empty() {
        return Ok(true);
    }
    job.step("refused: plan requirements unmet").await;
    job.comment(&view::plan_unmet_requirements(&r.executable, &unmet))
        .await?;
    let status = CommitStatus::aggregate(
        StatusKind::Plan,
        StatusState::Failure,
        "plan requirements not met",
    );
    job.status(&pull.head_sha, &status).await;
    Ok(false)
}

/// Each unmet requirement of `wanted`, once, in name order.
pub(super) async fn unmet(
    r: &Runner,
    job: &Job,
    pull: &PullDetails,
    wanted: impl IntoIterator<Item = Requirement>,
) -> anyhow::Result<Vec<Unmet>> {
    let mut wanted: Vec<Requirement> = wanted.into_iter().collect();
    wanted.sort_by_key(|r| r.as_str());
    wanted.dedup();
    let mut unmet = Vec::new();
    for req in wanted {
        let unmet_one = match req {
            Requirement::Approved => {
                let approval = job
                    .forge
                    .approval(&job.name, pull.number, &pull.author)
                    .await?;
                (!approval.is_approved()).then_some(Unmet::NotApproved)
            }
            Requirement::Mergeable => match &pull.mergeable {
                Mergeable::Yes => None,
                Mergeable::No { reason } => Some(Unmet::NotMergeable {
                    reason: reason.clone(),
                }),
                Mergeable::Unknown => Some(Unmet::MergeabilityUnknown),
            },
            Requirement::Undiverged => project::undiverged(r, job, pull).await?,
            // Per project's saved plan: `unmet_requirements` asks `policies`.
            Requirement::PoliciesPassed => None,
        };
        unmet.extend(unmet_one);
    }
    Ok(unmet)
}
