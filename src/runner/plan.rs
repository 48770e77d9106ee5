//! The plan job: checkout -> select projects -> take locks -> plan each project (concurrently
//! with `parallel_plan`) -> save plan -> comment -> statuses. Autoplan (`command` is `None`) plans the autoplan projects;
//! `atlantis plan` plans the ones its flags select.

use std::path::Path;

use super::project::{self, checkout, lock_key, open_pull, pr_url, project_io, resolve};
use super::{Job, Runner};
use super::{gate, order, parallel, policies, requirements};
use crate::commands::{Command, PlanOptions};
use crate::forge::{CommitSha, CommitStatus, StatusKind, StatusState};
use crate::locks::{Acquisition, LockOwner, NewPlan};
use crate::policies::PolicyCheck;
use crate::render::policies::ProjectPolicyView;
use crate::render::pr::{self as view, ConflictView, PlanOutcome, ProjectPlanView};
use crate::render::{plan_output, plan_summary};
use crate::repocfg::{LockMode, Project, Resolution, select};

/// Runs a plan job; every failure ends in a comment.
pub(super) async fn run(r: &Runner, job: &Job, command: Option<Command>) -> anyhow::Result<()> {
    match steps(r, job, command.as_ref()).await {
        Ok(()) => Ok(()),
        Err(e) => {
            let next = format!(
                "Fix the cause, then comment `{} plan` to try again.",
                r.executable
            );
            let body = view::error("Plan Error", &format!("{e:#}"), &next);
            job.comment(&body).await?;
            Err(e)
        }
    }
}

async fn steps(r: &Runner, job: &Job, command: Option<&Command>) -> anyhow::Result<()> {
    let pull = open_pull(job).await?;
    if gate::refuse_fork(&r.policy, job, &pull, StatusKind::Plan).await? {
        return Ok(());
    }
    let sha = pull.head_sha.clone();
    let co = checkout(r, job, &pull).await?;
    let resolution = resolve(r, job, &co.path, &pull.base_ref).await?;
    job.acknowledge(resolution.run.emoji_reaction.as_ref())
        .await;
    let mut projects = match command {
        None => resolution.autoplan().cloned().collect::<Vec<_>>(),
        Some(c) => select(c, &resolution)?,
    };
    order::by_group(&mut projects);
    let warnings = warnings(&resolution, &projects);
    let options = command.map(|c| c.options.clone()).unwrap_or_default();
    if projects.is_empty() {
        job.status(
            &sha,
            &CommitStatus::aggregate(
                StatusKind::Plan,
                StatusState::Success,
                "no projects to plan",
            ),
        )
        .await;
        if command.is_some() || !warnings.is_empty() {
            let body = view::no_projects(&r.executable, &warnings);
            job.comment(&body).await?;
        }
        return Ok(());
    }
    // A comment plan checks `plan_requirements`; autoplan does not (as in Atlantis).
    if command.is_some() && !requirements::plan_allowed(r, job, &pull, &projects).await? {
        return Ok(());
    }
    // A project its workflow refuses is reported, not locked or planned.
    let locking: Vec<Project> = projects
        .iter()
        .filter(|p| p.workflow.is_ok() && p.options.repo_locks == LockMode::OnPlan)
        .cloned()
        .collect();
    if !take_locks(r, job, &locking, &sha, StatusKind::Plan).await? {
        return Ok(());
    }
    let target = PlanTarget {
        root: &co.path,
        sha: &sha,
        options: &options,
    };
    let (views, checks) = plan_groups(r, job, &projects, &resolution, &target).await;
    let failed = views
        .iter()
        .any(|v| !matches!(v.outcome, PlanOutcome::Planned { .. }));
    // `silence_pr_comments: [plan]` leaves out a project's result unless it failed.
    let shown: Vec<ProjectPlanView> = views
        .iter()
        .zip(&projects)
        .filter(|(v, p)| {
            !p.options.silence.plan || !matches!(v.outcome, PlanOutcome::Planned { .. })
        })
        .map(|(v, _)| v.clone())
        .collect();
    if shown.is_empty() {
        job.step("comment: left out (silence_pr_comments: [plan])")
            .await;
    } else {
        job.step("comment").await;
        job.plan_comment(r, &view::plan_comment(&r.executable, &shown, &warnings))
            .await?;
    }
    let (state, text) = if failed {
        (StatusState::Failure, "some plans failed")
    } else {
        (StatusState::Success, "plans succeeded")
    };
    job.status(
        &sha,
        &CommitStatus::aggregate(StatusKind::Plan, state, text),
    )
    .await;
    policies::report_checks(r, job, &sha, &checks).await
}

/// The resolution's warnings, then those of the workflows the planned `projects` run (once
/// each: projects sharing a workflow share its warnings).
fn warnings(resolution: &Resolution, projects: &[Project]) -> Vec<String> {
    let mut out: Vec<String> = resolution
        .warnings
        .iter()
        .map(ToString::to_string)
        .collect();
    for warning in projects
        .iter()
        .filter_map(|p| p.workflow.as_ref().ok())
        .flat_map(|w| &w.warnings)
    {
        let line = warning.to_string();
        if !out.contains(&line) {
            out.push(line);
        }
    }
    for ex in &resolution.excluded {
        out.push(format!(
            "{} is not managed by this server (repo rule `{}`); plan it with `atoll plan` by hand",
            ex.project.label(),
            ex.pattern
        ));
    }
    out
}

/// Where and with what a plan job plans each project.
struct PlanTarget<'a> {
    root: &'a Path,
    sha: &'a CommitSha,
    options: &'a PlanOptions,
}

/// Plans `projects` (sorted by execution order group) one group after another, each group's
/// projects concurrently with `parallel_plan`. With `abort_on_execution_order_fail`, a failed
/// group leaves the later groups unplanned, each shown as skipped with the failed projects.
async fn plan_groups(
    r: &Runner,
    job: &Job,
    projects: &[Project],
    resolution: &Resolution,
    target: &PlanTarget<'_>,
) -> (Vec<ProjectPlanView>, Vec<ProjectPolicyView>) {
    let mut views = Vec::with_capacity(projects.len());
    let mut checks = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for group in order::groups(projects) {
        if resolution.run.abort_on_execution_order_fail && !failed.is_empty() {
            let reason = order::abort_reason(&failed);
            job.step(&format!("skipped {} project(s): {reason}", group.len()))
                .await;
            views.extend(group.iter().map(|p| ProjectPlanView {
                label: p.label(),
                flags: lock_key(job, p).plan_flags(),
                outcome: PlanOutcome::Skipped {
                    reason: reason.clone(),
                },
            }));
            continue;
        }
        let work = group
            .iter()
            .map(|p| plan_project(r, job, target.root, p, target.sha, target.options))
            .collect();
        let (planned, checked): (Vec<_>, Vec<_>) =
            parallel::in_order(work, resolution.parallel_plan)
                .await
                .into_iter()
                .unzip();
        checks.extend(checked.into_iter().flatten());
        failed.extend(
            planned
                .iter()
                .filter(|v| matches!(v.outcome, PlanOutcome::Failed { .. }))
                .map(|v| v.label.clone()),
        );
        views.extend(planned);
    }
    (views, checks)
}

/// Step "take locks": all or nothing; a conflict comments the holder and the re-plan command.
/// `kind` says whether a plan or an apply takes them (its status fails on a conflict).
pub(super) async fn take_locks(
    r: &Runner,
    job: &Job,
    projects: &[Project],
    sha: &CommitSha,
    kind: StatusKind,
) -> anyhow::Result<bool> {
    let doing = match kind {
        StatusKind::Plan | StatusKind::PolicyCheck => "planning",
        StatusKind::Apply => "applying",
    };
    if projects.is_empty() {
        return Ok(true);
    }
    job.step("take locks").await;
    let keys: Vec<_> = projects.iter().map(|p| lock_key(job, p)).collect();
    let owner = LockOwner {
        pr: job.pr.number,
        pr_url: pr_url(job),
        head_sha: sha.as_str().to_owned(),
        user: job.user(),
        job: Some(job.ctx.job().id),
        summary: doing.to_owned(),
        forge: Some(job.pr.forge),
    };
    match r.store.locks().lock_acquire(&keys, &owner).await? {
        Acquisition::Granted(_) => Ok(true),
        Acquisition::Conflict(locks) => {
            let conflicts: Vec<ConflictView> = locks
                .iter()
                .map(|l| ConflictView {
                    label: l.key.to_string(),
                    holder_pr: l.owner.pr,
                    holder_url: l.owner.pr_url.clone(),
                    flags: l.key.plan_flags(),
                    holder_user: l.owner.user.clone(),
                })
                .collect();
            job.comment(&view::lock_conflict(&r.executable, &conflicts))
                .await?;
            let status = CommitStatus::aggregate(
                kind,
                StatusState::Failure,
                "locked by another pull request",
            );
            job.status(sha, &status).await;
            Ok(false)
        }
    }
}

/// Step "plan" for one project: its status pending, the plan made, saved and policy-checked,
/// its status set.
async fn plan_project(
    r: &Runner,
    job: &Job,
    root: &Path,
    p: &Project,
    sha: &CommitSha,
    options: &PlanOptions,
) -> (ProjectPlanView, Option<ProjectPolicyView>) {
    let (outcome, check) = match &p.workflow {
        // The workflow's options first, the comment's after (Terraform's order: later wins).
        Ok(workflow) => {
            job.status(sha, &project_status(p, StatusState::Pending, "planning"))
                .await;
            job.step(&format!("plan {}", p.label())).await;
            let options = workflow.options.followed_by(options);
            match plan_one(r, job, root, p, sha, &options).await {
                Ok(done) => done,
                Err(e) => {
                    let error = format!("{e:#}");
                    (PlanOutcome::Failed { error }, None)
                }
            }
        }
        Err(refused) => {
            let error = refused.to_string();
            (PlanOutcome::Failed { error }, None)
        }
    };
    let (state, text) = match &outcome {
        PlanOutcome::Failed { .. } | PlanOutcome::Skipped { .. } => {
            (StatusState::Failure, "plan failed".to_owned())
        }
        PlanOutcome::Planned { summary, .. } => (StatusState::Success, summary.clone()),
    };
    job.status(sha, &project_status(p, state, &text)).await;
    let flags = lock_key(job, p).plan_flags();
    let check = check.map(|check| ProjectPolicyView {
        label: p.label(),
        flags: flags.clone(),
        check,
    });
    let view = ProjectPlanView {
        label: p.label(),
        flags,
        outcome,
    };
    (view, check)
}

fn project_status(p: &Project, state: StatusState, text: &str) -> CommitStatus {
    match &p.name {
        Some(name) => CommitStatus::named_project(StatusKind::Plan, name.as_str(), state, text),
        None => CommitStatus::project(
            StatusKind::Plan,
            p.dir.as_str(),
            p.workspace.as_str(),
            state,
            text,
        ),
    }
}

async fn plan_one(
    r: &Runner,
    job: &Job,
    root: &Path,
    p: &Project,
    sha: &CommitSha,
    options: &PlanOptions,
) -> anyhow::Result<(PlanOutcome, Option<PolicyCheck>)> {
    let (state, mut input) = project_io(r, job, root, p);
    let prepared = project::prepare(r, job, &state, &mut input, sha.as_str(), options).await?;
    let plan = &prepared.plan;
    let text = plan_output(plan, &prepared.desired.warnings);
    let summary = plan_summary(plan);
    let document = serde_json::to_value(plan)?;
    job.step(&format!("save plan {}", p.label())).await;
    let saved = r
        .store
        .plans()
        .plan_save(&NewPlan {
            key: lock_key(job, p),
            pr: job.pr.number,
            job: Some(job.ctx.job().id),
            source: plan.source.clone(),
            document,
            rendered: text.clone(),
            summary: summary.clone(),
        })
        .await?;
    let check = policies::check_plan(r, job, saved.id, &saved.document).await?;
    let outcome = PlanOutcome::Planned {
        text,
        summary,
        blocked: plan.summary.blocked,
        changes: crate::proxmox::apply::has_steps(plan),
    };
    Ok((outcome, check))
}
