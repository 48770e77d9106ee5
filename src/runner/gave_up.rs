//! A job whose worker process died under it `queue.max_attempts` times (killed, out of memory:
//! a crash loop) is failed by the reaper, never started again. Its pull request is told by a
//! follow-up `job_gave_up` job, which only comments and sets the command's status: it checks
//! nothing out and evaluates nothing, so it cannot take the worker down the same way.

use anyhow::anyhow;

use super::{Job, Runner};
use crate::forge::{CommitStatus, StatusKind, StatusState};
use crate::jobs::{GaveUp, JobGaveUp, JobSpec};
use crate::render::notice::{self, JobRef};
use crate::store::{DeliveryOutcome, Store};

/// How a given-up job of `kind` is named, the command that tries it again, and the status it
/// sets; `None` for kinds no comment starts again.
fn described(kind: &str) -> Option<(&'static str, &'static str, Option<StatusKind>)> {
    match kind {
        "plan" | "autoplan" => Some(("Plan", "plan", Some(StatusKind::Plan))),
        "apply" => Some(("Apply", "apply", Some(StatusKind::Apply))),
        "unlock" => Some(("Unlock", "unlock", None)),
        _ => None,
    }
}

/// Enqueues the report of one given-up job (a duplicate offer changes nothing).
pub(super) async fn offer(store: &dyn Store, job: &crate::store::Job) {
    if job.pr.is_none() || described(&job.kind).is_none() {
        return;
    }
    // A job of an older layout, or not about a PR, cannot be told on one.
    let Ok(spec) = JobSpec::parse(&job.kind, &job.payload) else {
        return tracing::warn!(job.id = %job.id, "given-up job has an unreadable payload; not reported");
    };
    let Some(pr) = spec.pr() else {
        return;
    };
    // The follow-up carries no comment id: it must not react to the command comment again.
    let report = JobSpec::JobGaveUp(JobGaveUp {
        pr: pr.clone(),
        command: spec.command().cloned(),
        gave_up: GaveUp {
            job: job.id,
            kind: job.kind.clone(),
            attempts: job.lost_leases,
        },
    });
    let follow_up = report.to_new_job(Some(format!("gave_up:{}", job.id)));
    match store.enqueue(follow_up).await {
        Ok(DeliveryOutcome::Accepted { .. }) => {
            tracing::info!(job.id = %job.id, "queued the report of a job whose worker kept dying");
        }
        Ok(DeliveryOutcome::Duplicate) => {}
        Err(e) => {
            tracing::warn!(job.id = %job.id, error = %e, "cannot queue the report of a given-up job");
        }
    }
}

/// The `job_gave_up` job: the comment, then the command's status (failure).
pub(super) async fn run(r: &Runner, job: &Job, about: &GaveUp) -> anyhow::Result<()> {
    let (what, verb, status) =
        described(&about.kind).ok_or_else(|| anyhow!("job kind {} is not reported", about.kind))?;
    let id = about.job.to_string();
    let link = r
        .public_url
        .as_ref()
        .map(|base| format!("{base}/jobs/{id}"));
    let body = notice::job_gave_up(
        &r.executable,
        what,
        verb,
        about.attempts,
        JobRef {
            id: &id,
            link: link.as_deref(),
        },
    );
    job.step(&format!(
        "reporting job {id}: its worker died {} times",
        about.attempts
    ))
    .await;
    job.comment(&body).await?;
    if let Some(kind) = status {
        let pull = job.forge.pull_request(&job.name, job.pr.number).await?;
        let text = format!(
            "atoll's worker died {} times on it; comment to retry",
            about.attempts
        );
        let status = CommitStatus::aggregate(kind, StatusState::Failure, &text);
        let status = match link {
            Some(url) => status.with_target_url(&url),
            None => status,
        };
        job.status(&pull.head_sha, &status).await;
    }
    Ok(())
}
