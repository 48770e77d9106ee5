//! Policy checks in the PR workflow: the check of each new plan (saved with it), the comment
//! and the `atlantis/policy_check` status after a plan job, `atlantis approve_policies`, and
//! the `policies_passed` apply requirement. Evaluating is `policies`' job; this module only
//! runs it off the async workers, saves and reports.

use anyhow::Context as _;
use uuid::Uuid;

use super::project::open_pull;
use super::{Job, Runner};
use crate::commands::Command;
use crate::forge::{CommitSha, CommitStatus, StatusKind, StatusState};
use crate::locks::{KeyFilter, LockKey, PlanQuery, SavedPlan};
use crate::policies::{ApprovalRequest, PolicyCheck};
use crate::render::policies::{self as view, ApprovedProject, ProjectPolicyView};
use crate::render::pr::Unmet;
use crate::repocfg::{Project, Requirement};

/// How often an approval is retried when another one changed the check at the same time.
const APPROVAL_ATTEMPTS: usize = 5;

/// Checks a just-saved plan against every policy set and saves the result with it; `None`
/// when the server has no policy set.
pub(super) async fn check_plan(
    r: &Runner,
    job: &Job,
    plan: Uuid,
    document: &serde_json::Value,
) -> anyhow::Result<Option<PolicyCheck>> {
    if !r.policies.enabled() {
        return Ok(None);
    }
    let settings = std::sync::Arc::clone(&r.policies);
    let input = document.clone();
    let check = tokio::task::spawn_blocking(move || crate::policies::check(&settings, &input))
        .await
        .context("evaluating the policies")?;
    for set in &check.sets {
        let result = match (&set.error, set.passed()) {
            (Some(e), _) => format!("error: {e}"),
            (None, true) => "passed".to_owned(),
            (None, false) => format!("{} failure(s)", set.failures.len()),
        };
        job.step(&format!("policy set {}: {result}", set.name))
            .await;
    }
    let saved = serde_json::to_value(&check)?;
    r.store
        .plans()
        .plan_policy_check_replace(plan, None, &saved)
        .await?;
    Ok(Some(check))
}

/// After a plan job: the policy comment and the aggregate `atlantis/policy_check` status.
pub(super) async fn report_checks(
    r: &Runner,
    job: &Job,
    sha: &CommitSha,
    checks: &[ProjectPolicyView],
) -> anyhow::Result<()> {
    if checks.is_empty() {
        return Ok(());
    }
    job.step("policy check comment").await;
    job.comment(&view::policy_check(&r.executable, checks))
        .await?;
    set_status(r, job, sha).await
}

/// `atlantis/policy_check` over every current plan of the PR (a plan of some projects leaves
/// the others' checks standing).
async fn set_status(r: &Runner, job: &Job, sha: &CommitSha) -> anyhow::Result<()> {
    let checks: Vec<PolicyCheck> = current_plans(r, job)
        .await?
        .iter()
        .filter_map(|p| PolicyCheck::from_saved(p.policy_check.as_ref()))
        .collect();
    if !checks.is_empty() {
        let cleared = checks.iter().filter(|c| c.cleared()).count();
        job.status(sha, &aggregate(cleared, checks.len())).await;
    }
    Ok(())
}

fn aggregate(cleared: usize, total: usize) -> CommitStatus {
    let state = if cleared == total {
        StatusState::Success
    } else {
        StatusState::Failure
    };
    let text = format!("{cleared}/{total} projects passed or approved policies");
    CommitStatus::aggregate(StatusKind::PolicyCheck, state, &text)
}

/// How the comments name the project a plan is for (as `Project::label`).
fn label(key: &LockKey) -> String {
    match &key.project {
        Some(name) => name.to_string(),
        None => format!("dir: {} workspace: {}", key.dir, key.workspace),
    }
}

/// `atlantis approve_policies [-p|-d|-w] [--policy-set NAME] [--clear-policy-approval]`.
pub(super) async fn approve(r: &Runner, job: &Job, command: &Command) -> anyhow::Result<()> {
    job.step("approve policies").await;
    if !r.policies.enabled() {
        let body = crate::render::pr::error(
            "Approve Policies Error",
            "this server has no policy sets (`policies:` in its configuration), so there is \
             nothing to approve",
            "Plans are not policy-checked here; comment `apply` once the other requirements are met.",
        );
        job.comment(&body).await?;
        return Ok(());
    }
    let pull = open_pull(job).await?;
    let user = job.user();
    let request = ApprovalRequest {
        user: &user,
        author: &pull.author,
        set: command.policy_set.as_deref(),
        clear: command.clear_policy_approval,
    };
    let filter = KeyFilter::from_command(command);
    let plans = current_plans(r, job).await?;
    let mut approved = Vec::new();
    for plan in plans.iter().filter(|p| filter.matches(&p.key)) {
        if let Some(project) = approve_one(r, job, plan, &request).await? {
            approved.push(project);
        }
    }
    let filtered = filter != KeyFilter::default();
    job.comment(&view::approve_policies(
        &r.executable,
        &user,
        &approved,
        filtered,
    ))
    .await?;
    // The status covers every current plan, not only those this comment selected.
    set_status(r, job, &pull.head_sha).await
}

async fn current_plans(r: &Runner, job: &Job) -> anyhow::Result<Vec<SavedPlan>> {
    Ok(r.store
        .plans()
        .plan_list(&PlanQuery {
            repo: job.repo(),
            pr: job.pr.number,
            current_only: true,
        })
        .await?)
}

/// One plan's approval, saved only if its check is still the one read (else read again).
async fn approve_one(
    r: &Runner,
    job: &Job,
    plan: &SavedPlan,
    request: &ApprovalRequest<'_>,
) -> anyhow::Result<Option<ApprovedProject>> {
    let mut saved = plan.policy_check.clone();
    for _ in 0..APPROVAL_ATTEMPTS {
        let Some(mut check) = PolicyCheck::from_saved(saved.as_ref()) else {
            return Ok(None);
        };
        let before = check.clone();
        let events = check.approve(&r.policies, request);
        let stored = check != before;
        if stored {
            let value = serde_json::to_value(&check)?;
            let written = r
                .store
                .plans()
                .plan_policy_check_replace(plan.id, saved.as_ref(), &value)
                .await?;
            if !written {
                match r.store.plans().plan_get(plan.id).await? {
                    Some(now) if now.superseded_at.is_none() => {
                        saved = now.policy_check;
                        continue;
                    }
                    _ => return Ok(None),
                }
            }
        }
        job.step(&format!(
            "approve_policies {}: {} change(s)",
            plan.key,
            events.len()
        ))
        .await;
        return Ok(Some(ApprovedProject {
            label: label(&plan.key),
            events,
            check,
        }));
    }
    Err(anyhow::anyhow!(
        "the policy check of {} kept changing while approving; comment approve_policies again",
        plan.key
    ))
}

/// The `policies_passed` requirement, per project: enforced when a project lists it or the
/// server has policy sets (as Atlantis adds it when policy checks are on).
pub(super) fn unmet(r: &Runner, job: &Job, projects: &[(SavedPlan, Project)]) -> Vec<Unmet> {
    let mut out = Vec::new();
    for (plan, project) in projects {
        let wanted = r.policies.enabled()
            || project
                .apply_requirements
                .contains(&Requirement::PoliciesPassed);
        if !wanted {
            continue;
        }
        let flags = super::project::lock_key(job, project).plan_flags();
        match PolicyCheck::from_saved(plan.policy_check.as_ref()) {
            Some(check) if !check.cleared() => out.push(Unmet::PoliciesFailed {
                project: project.label(),
                flags,
                sets: check.blocking().iter().map(|s| (*s).to_owned()).collect(),
            }),
            Some(_) => {}
            None if r.policies.enabled() => out.push(Unmet::PoliciesUnchecked {
                project: project.label(),
                flags,
            }),
            None => {}
        }
    }
    out
}
