//! The apply requirements (`approved`, `mergeable`, `undiverged`): which are unmet, as typed
//! values that `render` puts in words.

use super::{Job, Runner, project};
use crate::forge::{Mergeable, PullDetails};
use crate::locks::SavedPlan;
use crate::render::pr::Unmet;
use crate::repocfg::{Project, Requirement};

/// Each unmet requirement across the projects to apply, in name order.
pub(super) async fn unmet_requirements(
    r: &Runner,
    job: &Job,
    pull: &PullDetails,
    projects: &[(SavedPlan, Project)],
) -> anyhow::Result<Vec<Unmet>> {
    let wanted: Vec<Requirement> = projects
        .iter()
        .flat_map(|(_, p)| p.apply_requirements.iter().copied())
        .collect();
    unmet(r, job, pull, wanted).await
}

/// Each of `wanted` that is unmet, in name order (once each).
pub(super) async fn unmet(
    r: &Runner,
    job: &Job,
    pull: &PullDetails,
    mut wanted: Vec<Requirement>,
) -> anyhow::Result<Vec<Unmet>> {
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
        };
        unmet.extend(unmet_one);
    }
    Ok(unmet)
}
