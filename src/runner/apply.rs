//! The apply job: permission -> apply switch -> saved plans -> requirements (each unmet one
//! named) -> per project: freshness (head SHA, config hash, state fingerprint: atoll's state and
//! the guests the plan changes, as the cluster holds them now), guard, apply
//! with progress by editing the apply comment and on the job (guests finished of total) ->
//! statuses.

use std::sync::{Arc, Mutex};

use anyhow::Context as _;

use super::interrupted::log;
use super::progress::GuestProgress;
use super::project::{self, checkout, lock_key, open_pull, project_io, resolve};
use super::requirements::unmet_requirements;
use super::{Job, Runner};
use super::{coalesce, gate, parallel, stages};
use crate::commands::Command;
use crate::forge::{CommentId, CommitStatus, PullDetails, StatusKind, StatusState};
use crate::locks::{KeyFilter, PlanQuery, PlanSource, SavedPlan};
use crate::proxmox::apply::{
    ApplyEvent, ApplyReport, ApplySettings, Outcome, PreflightError, RestartPolicy, check_fresh,
};
use crate::proxmox::plan::Plan;
use crate::render::pr::{self as view, ApplyEnd, GuestLine};
use crate::repocfg::{self, Project, Resolution};
use crate::store::JournalEntry;

/// Runs an apply job; every refusal or failure ends in a comment.
pub(super) async fn run(r: &Runner, job: &Job, command: &Command) -> anyhow::Result<()> {
    match steps(r, job, command).await {
        Ok(()) => Ok(()),
        Err(e) => {
            let next = format!(
                "Fix the cause, re-plan with `{} plan`, then apply again.",
                r.executable
            );
            job.comment(&view::error("Apply Error", &format!("{e:#}"), &next))
                .await?;
            Err(e)
        }
    }
}

async fn steps(r: &Runner, job: &Job, command: &Command) -> anyhow::Result<()> {
    let Some((pull, plans)) = admitted(r, job, command).await? else {
        return Ok(());
    };
    apply_plans(r, job, pull, plans, command).await
}

/// The checks before any checkout, each refusal answered: identical to an earlier apply,
/// permission, fork, the apply switch, saved plans. `None`: refused (or folded into the
/// earlier apply).
async fn admitted(
    r: &Runner,
    job: &Job,
    command: &Command,
) -> anyhow::Result<Option<(PullDetails, Vec<SavedPlan>)>> {
    if coalesce::absorbed(r, job, command).await? {
        return Ok(None);
    }
    let user = job.user();
    if !gate::permission(job, &user).await?.can_apply() {
        job.comment(&view::apply_no_permission(&user)).await?;
        return Ok(None);
    }
    let pull = open_pull(job).await?;
    if gate::refuse_fork(&r.policy, job, &pull, StatusKind::Apply).await? {
        return Ok(None);
    }
    let switch = r.store.audit().apply_switch().await?;
    if !switch.enabled {
        let reason = switch
            .reason
            .unwrap_or_else(|| "no reason given".to_owned());
        job.comment(&view::apply_turned_off(&r.executable, &reason))
            .await?;
        return Ok(None);
    }
    let filter = KeyFilter::from_command(command);
    let plans: Vec<SavedPlan> = r
        .store
        .plans()
        .plan_list(&PlanQuery {
            repo: job.repo(),
            pr: job.pr.number,
            current_only: true,
        })
        .await?
        .into_iter()
        .filter(|p| filter.matches(&p.key))
        .collect();
    if plans.is_empty() {
        let filtered =
            command.dir.is_some() || command.project.is_some() || command.workspace.is_some();
        job.comment(&view::apply_no_plan(&r.executable, filtered))
            .await?;
        return Ok(None);
    }
    Ok(Some((pull, plans)))
}

/// Checkout -> projects in plan-comment order (by execution order group, dependencies first)
/// -> requirements -> `on_apply` locks -> each stage of projects -> statuses -> automerge.
async fn apply_plans(
    r: &Runner,
    job: &Job,
    pull: PullDetails,
    plans: Vec<SavedPlan>,
    command: &Command,
) -> anyhow::Result<()> {
    let co = checkout(r, job, &pull).await?;
    let resolution = resolve(r, job, &co.path, &pull.base_ref).await?;
    job.acknowledge(resolution.run.emoji_reaction.as_ref())
        .await;
    let mut projects: Vec<(SavedPlan, Project)> = plans
        .into_iter()
        .map(|s| {
            let p = project_for(&resolution, &s);
            (s, p)
        })
        .collect();
    // Apply (and comment) in the order the plan comment lists them: atlantis.yaml's order,
    // then by key for projects it does not list; by execution order group first.
    projects.sort_by_cached_key(|(s, p)| {
        let listed = resolution.modified.iter().position(|m| m == p);
        (
            p.options.execution_order_group,
            listed.unwrap_or(usize::MAX),
            s.key.to_string(),
        )
    });
    stages::order_by_dependencies(&mut projects);
    let unmet = unmet_requirements(r, job, &pull, &projects).await?;
    if !unmet.is_empty() {
        job.comment(&view::unmet_requirements(&r.executable, &unmet))
            .await?;
        return Ok(());
    }
    let locking: Vec<Project> = projects
        .iter()
        .filter(|(_, p)| p.options.repo_locks == repocfg::LockMode::OnApply)
        .map(|(_, p)| p.clone())
        .collect();
    if !super::plan::take_locks(r, job, &locking, &pull.head_sha, StatusKind::Apply).await? {
        return Ok(());
    }
    let guests = GuestProgress::new(
        projects
            .iter()
            .map(|(s, _)| serde_json::from_value::<Plan>(s.document.clone()).ok()),
    );
    // The first of the lines an interrupted apply is reported from (see `interrupted`).
    job.journal(&JournalEntry::attempt(pull.head_sha.as_str()))
        .await;
    let turns = parallel::Turns::new(projects.len());
    let run = stages::Run {
        root: &co.path,
        pull: &pull,
        guests: &guests,
        turns: &turns,
        resolution: &resolution,
    };
    let applied = match stages::apply_in_stages(r, job, &projects, &run).await {
        Ok(applied) => applied,
        Err(e) => {
            // Other projects may have changed guests before this error: the status says so.
            job.status(
                &pull.head_sha,
                &CommitStatus::aggregate(StatusKind::Apply, StatusState::Failure, "apply failed"),
            )
            .await;
            return Err(e);
        }
    };
    let (state, text) = if applied {
        (StatusState::Success, "applied")
    } else {
        (StatusState::Failure, "apply failed or refused")
    };
    job.status(
        &pull.head_sha,
        &CommitStatus::aggregate(StatusKind::Apply, state, text),
    )
    .await;
    if applied && resolution.run.automerge {
        if command.auto_merge_disabled {
            job.step("automerge: off for this apply (--auto-merge-disabled)")
                .await;
        } else {
            super::automerge::run(r, job, &pull, &resolution, command.auto_merge_method).await?;
        }
    }
    Ok(())
}

/// The project a saved plan was made for: as the PR modifies it, else as atlantis.yaml lists
/// it (planned by name though unmodified), else a directory with the server's settings.
pub(super) fn project_for(resolution: &Resolution, saved: &SavedPlan) -> Project {
    resolution
        .modified
        .iter()
        .chain(resolution.configured())
        .find(|p| {
            p.dir == saved.key.dir
                && p.workspace == saved.key.workspace
                && p.name == saved.key.project
        })
        .cloned()
        .unwrap_or_else(|| {
            resolution.default_project(saved.key.dir.clone(), saved.key.workspace.clone())
        })
}

/// One project's place in the job's guest count (projects may apply in parallel).
#[derive(Clone, Copy)]
pub(super) struct ProjectProgress<'a> {
    pub(super) index: usize,
    pub(super) guests: &'a GuestProgress,
    /// Apply comments are posted in project order, also when projects apply in parallel.
    pub(super) turns: &'a parallel::Turns,
}

/// Applies one saved plan; `false` when it was refused or failed (the comment says why).
/// With `silence_pr_comments: [apply]` it comments only when the apply fails.
pub(super) async fn apply_one(
    r: &Runner,
    job: &Job,
    root: &std::path::Path,
    pull: &PullDetails,
    saved: &SavedPlan,
    p: &Project,
    tally: ProjectProgress<'_>,
) -> anyhow::Result<bool> {
    let label = p.label();
    let flags = lock_key(job, p).plan_flags();
    let turn = tally.turns.turn(tally.index);
    if let Err(refused) = &p.workflow {
        anyhow::bail!("{label}: {refused}");
    }
    job.step(&format!("freshness {label}")).await;
    let plan: Plan = serde_json::from_value(saved.document.clone())
        .context("the saved plan is not a plan document; re-plan")?;
    let (state, mut input) = project_io(r, job, root, p);
    let head = pull.head_sha.as_str();
    let prepared = project::prepare(r, job, &state, &mut input, head, &plan.options).await?;
    let fresh = prepared.now();
    let now = PlanSource {
        sha: pull.head_sha.as_str().to_owned(),
        config_hash: fresh.config_hash.clone(),
        state_fingerprint: fresh.state_fingerprint_for(&plan),
    };
    let stale = saved.source.stale_against(&now);
    if !stale.is_empty() {
        let cluster = match check_fresh(&plan, &fresh) {
            Err(PreflightError::ClusterChanged(changes)) => Some(changes.to_string()),
            _ => None,
        };
        let body = view::stale(&r.executable, &label, &stale, cluster.as_deref(), &flags);
        turn.wait().await;
        job.comment(&body).await?;
        return Ok(false);
    }
    job.step(&format!("guard {label}")).await;
    let engine = project::engine(r)?;
    engine.recheck(&plan, &prepared)?;
    turn.wait().await;
    let silenced = p.options.silence.apply;
    let comment = if silenced {
        None
    } else {
        Some(
            job.comment(&view::apply_progress(&label, &[], None))
                .await?,
        )
    };
    drop(turn);
    for address in log::planned_guests(&plan) {
        job.journal(&log::planned(tally.index, &label, address))
            .await;
    }
    job.begin_apply().await?;
    tally.guests.report(job).await;
    let desired = engine.settle(&state, &input, &prepared).await?;
    let lines: Arc<Mutex<Vec<GuestLine>>> = Arc::default();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<JournalEntry>();
    let events = {
        let lines = Arc::clone(&lines);
        let label = label.clone();
        move |event: &ApplyEvent| {
            if let Ok(mut l) = lines.lock() {
                record(&mut l, event);
            }
            tally.guests.record(tally.index, event);
            let _ = tx.send(log::entry(tally.index, &label, event));
        }
    };
    let settings = ApplySettings {
        restart: match p.restart {
            repocfg::RestartPolicy::Auto => RestartPolicy::Auto,
            repocfg::RestartPolicy::Never => RestartPolicy::Never,
        },
        ..ApplySettings::default()
    };
    let executor = engine.executor(&state, settings, &events);
    let progress = Progress {
        job,
        comment,
        label: &label,
        lines,
        guests: tally.guests,
    };
    let report = progress.follow(executor.execute(&plan, &desired), rx).await;
    tally.guests.report(job).await;
    job.record_state_version(&state, crate::store::VersionReason::Apply, head)
        .await;
    let final_lines = result_lines(&report);
    let (outputs, checks) = if report.failed() {
        (String::new(), String::new())
    } else {
        project::outputs(&state, &input, &prepared.data).await
    };
    let done = ApplyEnd {
        failed: report.failed(),
        executable: &r.executable,
        flags: &flags,
        outputs: &outputs,
        checks: checks.trim(),
    };
    let body = view::apply_progress(&label, &final_lines, Some(&done));
    match comment {
        Some(comment) => job.edit(comment, &body).await?,
        // Silenced: a failure is still reported; a success is not.
        None if report.failed() => drop(job.comment(&body).await?),
        None => {
            job.step(&format!(
                "apply comment {label}: left out (silence_pr_comments: [apply])"
            ))
            .await;
        }
    }
    Ok(!report.failed())
}

/// Logs each guest event to the job's durable log and edits the apply comment each time a
/// guest's step starts or ends.
struct Progress<'a> {
    job: &'a Job,
    /// `None` when the apply comment is silenced.
    comment: Option<CommentId>,
    label: &'a str,
    lines: Arc<Mutex<Vec<GuestLine>>>,
    guests: &'a GuestProgress,
}

impl Progress<'_> {
    async fn follow(
        &self,
        run: impl std::future::Future<Output = ApplyReport>,
        mut changed: tokio::sync::mpsc::UnboundedReceiver<JournalEntry>,
    ) -> ApplyReport {
        tokio::pin!(run);
        loop {
            tokio::select! {
                report = &mut run => {
                    while let Ok(entry) = changed.try_recv() {
                        self.job.journal(&entry).await;
                    }
                    return report;
                }
                Some(entry) = changed.recv() => {
                    self.job.journal(&entry).await;
                    if let Some(comment) = self.comment {
                        let snapshot = self.lines.lock().map(|l| l.clone()).unwrap_or_default();
                        let body = view::apply_progress(self.label, &snapshot, None);
                        if let Err(e) = self.job.edit(comment, &body).await {
                            self.job.step(&format!("progress edit failed: {e:#}")).await;
                        }
                    }
                    self.guests.report(self.job).await;
                }
            }
        }
    }
}

fn result_lines(report: &ApplyReport) -> Vec<GuestLine> {
    report
        .results
        .iter()
        .map(|res| GuestLine {
            address: res.address.clone(),
            status: match &res.outcome {
                Outcome::Changed { detail, .. } => format!("done: {detail}"),
                Outcome::Failed { error, .. } => format!("FAILED: {error}"),
                Outcome::Skipped { reason } => format!("skipped: {reason}"),
            },
        })
        .collect()
}

fn record(lines: &mut Vec<GuestLine>, event: &ApplyEvent) {
    let (address, status) = match event {
        ApplyEvent::Started { address, step } => (address, format!("{step}…")),
        ApplyEvent::Done { address, detail } => (address, format!("done: {detail}")),
        ApplyEvent::Failed { address, error } => (address, format!("FAILED: {error}")),
    };
    match lines.iter_mut().find(|l| &l.address == address) {
        Some(line) => line.status = status,
        None => lines.push(GuestLine {
            address: address.clone(),
            status,
        }),
    }
}
