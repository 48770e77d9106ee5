//! A burst of identical `atlantis apply` comments on one pull request runs one apply. Before
//! anything else, an apply job looks at the PR's earlier apply jobs with the same flags: if one
//! is still queued or running, or one already applied the plans that are current now, this job
//! does nothing more. The PR gets one short answer for all of them: a follow-up
//! `apply_coalesced` job enqueued with the dedup key `coalesced:<earlier job id>`, which the
//! store accepts once however many duplicates offer it.
//!
//! An earlier apply that was refused (no permission, unmet requirements, stale plan) never
//! moved to `applying`, so applying again after fixing the cause is not a duplicate.

use super::{Job, Runner};
use crate::commands::Command;
use crate::jobs::{ApplyCoalesced, Coalesced, JobKind, JobSpec};
use crate::locks::{KeyFilter, PlanQuery};
use crate::render::notice::{self, JobRef};
use crate::store::{DeliveryOutcome, Job as StoredJob};

/// How many of the PR's latest apply jobs are looked at.
const SCAN: u32 = 500;

/// Whether this apply job duplicates an earlier one; if so the PR's one answer is queued (by
/// the first duplicate only) and the caller stops.
pub(super) async fn absorbed(r: &Runner, job: &Job, command: &Command) -> anyhow::Result<bool> {
    let Some(about) = duplicate_of(r, job, command).await? else {
        return Ok(false);
    };
    job.step(&format!(
        "identical to apply job {} ({}): not run again",
        about.job,
        if about.in_flight {
            "queued or running"
        } else {
            "already applied these plans"
        }
    ))
    .await;
    let key = format!("coalesced:{}", about.job);
    let notice = JobSpec::ApplyCoalesced(ApplyCoalesced {
        pr: job.pr.clone(),
        command: Some(command.clone()),
        coalesced: about,
    });
    match r.store.enqueue(notice.to_new_job(Some(key))).await? {
        DeliveryOutcome::Accepted { .. } => job.step("the pull request will be told once").await,
        DeliveryOutcome::Duplicate => job.step("the pull request was already told").await,
    }
    Ok(true)
}

/// The earlier apply job of this PR with the same flags that this one duplicates: the oldest
/// one still queued or running, else the latest one that applied after every plan this
/// command would apply now was made.
async fn duplicate_of(
    r: &Runner,
    job: &Job,
    command: &Command,
) -> anyhow::Result<Option<Coalesced>> {
    let me = job.ctx.job().id;
    let jobs = r
        .store
        .list_pr_jobs(&job.repo(), job.pr.number, JobKind::Apply.as_str(), SCAN)
        .await?;
    let Some(at) = jobs.iter().position(|j| j.id == me) else {
        return Ok(None);
    };
    let earlier: Vec<&StoredJob> = jobs[at + 1..]
        .iter()
        .filter(|j| same_flags(j, command))
        .collect();
    if let Some(running) = earlier.iter().rev().find(|j| !j.state.is_terminal()) {
        return Ok(Some(Coalesced {
            job: running.id,
            in_flight: true,
        }));
    }
    let Some((prev, applied_at)) = earlier.iter().find_map(|j| j.applying_at.map(|at| (j, at)))
    else {
        return Ok(None);
    };
    let filter = KeyFilter::from_command(command);
    let plans = r
        .store
        .plans()
        .plan_list(&PlanQuery {
            repo: job.repo(),
            pr: job.pr.number,
            current_only: true,
        })
        .await?;
    let mut plans = plans.iter().filter(|p| filter.matches(&p.key)).peekable();
    let applied = plans.peek().is_some() && plans.all(|p| p.created_at <= applied_at);
    Ok(applied.then_some(Coalesced {
        job: prev.id,
        in_flight: false,
    }))
}

/// Whether a stored apply job was asked for the same projects (`-p`, `-d`, `-w`).
fn same_flags(stored: &StoredJob, command: &Command) -> bool {
    let Ok(spec) = JobSpec::parse(&stored.kind, &stored.payload) else {
        return false;
    };
    let Some(theirs) = spec.command() else {
        return false;
    };
    theirs.project == command.project
        && theirs.dir == command.dir
        && theirs.dir_glob == command.dir_glob
        && theirs.workspace == command.workspace
}

/// The `apply_coalesced` job: the one answer to the identical comments.
pub(super) async fn run(r: &Runner, job: &Job, about: &Coalesced) -> anyhow::Result<()> {
    let id = about.job.to_string();
    let link = r
        .public_url
        .as_ref()
        .map(|base| format!("{base}/jobs/{id}"));
    let body = notice::apply_coalesced(
        &r.executable,
        JobRef {
            id: &id,
            link: link.as_deref(),
        },
        about.in_flight,
    );
    job.comment(&body).await?;
    Ok(())
}
