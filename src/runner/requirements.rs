//! The apply requirements (`approved`, `mergeable`, `undiverged`), each unmet one named with
//! why, and the reasons a saved plan is stale, in words.

use super::{Job, Runner, project};
use crate::forge::{Mergeable, PullDetails};
use crate::locks::{SavedPlan, Stale};
use crate::repocfg::{Project, Requirement};

/// Each unmet requirement, named with why, across the projects to apply.
pub(super) async fn unmet_requirements(
    r: &Runner,
    job: &Job,
    pull: &PullDetails,
    projects: &[(SavedPlan, Project)],
) -> anyhow::Result<Vec<(String, String)>> {
    let mut wanted: Vec<Requirement> = projects
        .iter()
        .flat_map(|(_, p)| p.apply_requirements.iter().copied())
        .collect();
    wanted.sort_by_key(|r| r.as_str());
    wanted.dedup();
    let mut unmet = Vec::new();
    for req in wanted {
        let why = match req {
            Requirement::Approved => {
                let approval = job
                    .forge
                    .approval(&job.name, pull.number, &pull.author)
                    .await?;
                (!approval.is_approved()).then(|| {
                    "the pull request has no approving review by someone with write access \
                     (other than its author); ask such a reviewer to approve it"
                        .to_owned()
                })
            }
            Requirement::Mergeable => match &pull.mergeable {
                Mergeable::Yes => None,
                Mergeable::No { reason } => {
                    Some(format!("the forge says it cannot be merged: {reason}"))
                }
                Mergeable::Unknown => Some(
                    "the forge is still computing mergeability; try again in a minute".to_owned(),
                ),
            },
            Requirement::Undiverged => project::undiverged(r, job, pull).await?,
        };
        if let Some(why) = why {
            unmet.push((req.as_str().to_owned(), why));
        }
    }
    Ok(unmet)
}

/// Why a saved plan is stale, for the comment; `cluster` names the guests that changed on
/// the cluster since the plan, if any did.
pub(super) fn stale_reasons(stale: &[Stale], cluster: Option<String>) -> Vec<String> {
    stale
        .iter()
        .map(|s| match s {
            Stale::HeadSha { planned, now } => format!(
                "new commits were pushed: the plan was made at {}, the pull request head is now {}",
                short(planned),
                short(now)
            ),
            Stale::ConfigHash { .. } => {
                "the configuration evaluates differently than when it was planned".to_owned()
            }
            Stale::StateFingerprint { .. } => cluster.clone().unwrap_or_else(|| {
                "atoll's state changed since the plan (another apply ran)".to_owned()
            }),
        })
        .collect()
}

fn short(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}
