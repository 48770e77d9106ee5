//! The apply requirements (`approved`, `mergeable`, `undiverged`, `policies_passed`): which are unmet, as typed
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
    let mut wanted: Vec<Requirement> = projects
        .iter()
        .flat_map(|(_, p)| p.apply_requirements.iter().copied())
        .collect();
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
            // Per project, below.
            Requirement::PoliciesPassed => None,
        };
        unmet.extend(unmet_one);
    }
    unmet.extend(super::policies::unmet(r, job, projects));
    Ok(unmet)
}
