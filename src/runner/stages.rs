//! An apply's projects in stages: one execution order group after another (ascending), and
//! within a group the projects whose `depends_on` are in the same apply after those
//! dependencies. A stage's projects apply concurrently with `parallel_apply`. Before each
//! project its dependencies must be applied (or have nothing to apply); with
//! `abort_on_execution_order_fail`, a failure stops the later groups. Projects left out are
//! named in one comment with why.

use std::path::Path;

use super::apply::{ProjectProgress, apply_one};
use super::progress::GuestProgress;
use super::project::lock_key;
use super::{Job, Runner, order, parallel};
use crate::commands::ProjectName;
use crate::forge::PullDetails;
use crate::locks::{PlanQuery, SavedPlan};
use crate::render::pr::{self as view, SkippedView};
use crate::repocfg::{Project, Resolution};

/// What every project of one apply shares.
pub(super) struct Run<'a> {
    pub(super) root: &'a Path,
    pub(super) pull: &'a PullDetails,
    pub(super) guests: &'a GuestProgress,
    pub(super) turns: &'a parallel::Turns,
    pub(super) resolution: &'a Resolution,
}

/// Orders `projects` (sorted by group) so that, within a group, a project comes after the
/// dependencies it applies with; otherwise their order stays.
pub(super) fn order_by_dependencies(projects: &mut Vec<(SavedPlan, Project)>) {
    let refs: Vec<&Project> = projects.iter().map(|(_, p)| p).collect();
    let waves = order::waves(&refs);
    let mut keyed: Vec<(usize, (SavedPlan, Project))> =
        waves.into_iter().zip(std::mem::take(projects)).collect();
    keyed.sort_by_key(|(wave, (_, p))| (p.options.execution_order_group, *wave));
    *projects = keyed.into_iter().map(|(_, pair)| pair).collect();
}

/// Consecutive index ranges of one stage (group and dependency wave).
fn stages(projects: &[(SavedPlan, Project)]) -> Vec<std::ops::Range<usize>> {
    let refs: Vec<&Project> = projects.iter().map(|(_, p)| p).collect();
    let waves = order::waves(&refs);
    let key = |i: usize| (projects[i].1.options.execution_order_group, waves[i]);
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=projects.len() {
        if i == projects.len() || key(i) != key(start) {
            out.push(start..i);
            start = i;
        }
    }
    out
}

/// Applies `projects` (ordered with [`order_by_dependencies`]) stage by stage; `Ok(true)`
/// when every one applied. An error stops everything (as in `parallel::try_in_order`).
pub(super) async fn apply_in_stages(
    r: &Runner,
    job: &Job,
    projects: &[(SavedPlan, Project)],
    run: &Run<'_>,
) -> anyhow::Result<bool> {
    let pr_plans = r
        .store
        .plans()
        .plan_list(&PlanQuery {
            repo: job.repo(),
            pr: job.pr.number,
            current_only: true,
        })
        .await?;
    let abort = run.resolution.run.abort_on_execution_order_fail;
    let mut all_applied = true;
    let mut applied_now: Vec<ProjectName> = Vec::new();
    let mut failed: Vec<(i64, String)> = Vec::new();
    let mut skipped: Vec<SkippedView> = Vec::new();
    for stage in stages(projects) {
        let mut members = Vec::new();
        let mut work = Vec::new();
        for i in stage {
            let (saved, p) = &projects[i];
            let group = p.options.execution_order_group;
            let earlier: Vec<String> = failed
                .iter()
                .filter(|(g, _)| *g < group)
                .map(|(_, label)| label.clone())
                .collect();
            let reason = if abort && !earlier.is_empty() {
                Some(order::abort_reason(&earlier))
            } else {
                missing_dependencies(p, &pr_plans, &applied_now)
            };
            if let Some(reason) = reason {
                job.step(&format!("skipped {}: {reason}", p.label())).await;
                // Its turn to comment passes to the next project.
                drop(run.turns.turn(i));
                skipped.push(SkippedView {
                    label: p.label(),
                    flags: lock_key(job, p).plan_flags(),
                    reason,
                });
                all_applied = false;
                continue;
            }
            let tally = ProjectProgress {
                index: i,
                guests: run.guests,
                turns: run.turns,
            };
            members.push(i);
            work.push(apply_one(r, job, run.root, run.pull, saved, p, tally));
        }
        let results = parallel::try_in_order(work, run.resolution.parallel_apply).await?;
        for (i, ok) in members.into_iter().zip(results) {
            let (saved, p) = &projects[i];
            if ok {
                if let Err(e) = r.store.plans().plan_mark_applied(saved.id).await {
                    job.step(&format!("recording {} as applied failed: {e}", p.label()))
                        .await;
                }
                applied_now.extend(p.name.clone());
            } else {
                all_applied = false;
                failed.push((p.options.execution_order_group, p.label()));
            }
        }
    }
    if !skipped.is_empty() {
        job.comment(&view::apply_skipped(&r.executable, &skipped))
            .await?;
    }
    Ok(all_applied)
}

/// Atlantis's refusal when a `depends_on` project of this PR is planned with changes but not
/// applied (a dependency this PR has no plan for does not hold it back, as in Atlantis).
fn missing_dependencies(
    p: &Project,
    pr_plans: &[SavedPlan],
    applied_now: &[ProjectName],
) -> Option<String> {
    let missing: Vec<String> = p
        .options
        .depends_on
        .iter()
        .filter(|dep| !applied_now.contains(dep))
        .filter(|dep| {
            pr_plans
                .iter()
                .find(|s| s.key.project.as_ref() == Some(*dep))
                .is_some_and(|s| s.applied_at.is_none() && has_changes(s))
        })
        .map(ToString::to_string)
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "Can't apply your project unless you apply its dependencies first: [{}]",
            missing.join(", ")
        )
    })
}

/// Whether a saved plan has anything to apply (an unreadable one counts as having changes).
pub(super) fn has_changes(saved: &SavedPlan) -> bool {
    serde_json::from_value::<crate::proxmox::plan::Plan>(saved.document.clone())
        .map_or(true, |plan| crate::proxmox::apply::has_steps(&plan))
}
