//! `atlantis import ADDRESS ID` and `atlantis state rm ADDRESS...`: permission -> checkout ->
//! the one project the flags select -> its lock -> (import) its `import_requirements` -> the
//! object found as an `import` block finds it, recorded in atoll's state / the addresses
//! forgotten -> the project's saved plan discarded -> audit -> reply. Nothing on the cluster
//! changes: the next plan shows what would.

use anyhow::anyhow;

use super::plan::take_locks;
use super::project::{self, checkout, lock_key, open_pull, project_io, resolve};
use super::requirements::unmet;
use super::{Job, Runner, gate};
use crate::commands::{Command, PlanOptions, ResourceAddress, ResourceArgs, Verb};
use crate::forge::{PullDetails, StatusKind};
use crate::locks::{Actor, ActorVia, AuditAction, NewAuditEvent, PlanQuery};
use crate::proxmox::engine::{import_one, refuse_foreign};
use crate::proxmox::guard::ProtectedBy;
use crate::proxmox::plan::StateEntry;
use crate::render::pr as view;
use crate::render::state::{self as reply, ImportView, Protection, StateRmView};
use crate::repocfg::{Project, select};

/// Runs an import job; every refusal or failure ends in a comment.
pub(super) async fn import(r: &Runner, job: &Job, command: &Command) -> anyhow::Result<()> {
    let result = match &command.resources {
        Some(ResourceArgs::Import { address, id }) => {
            import_steps(r, job, command, address.as_str(), id.as_str()).await
        }
        _ => Err(anyhow!("the import job carries no ADDRESS and ID")),
    };
    answer_failure(r, job, command, result, "Import Error").await
}

/// Runs a `state rm` job; every refusal or failure ends in a comment.
pub(super) async fn state_rm(r: &Runner, job: &Job, command: &Command) -> anyhow::Result<()> {
    let result = match &command.resources {
        Some(ResourceArgs::Remove { addresses }) => {
            state_rm_steps(r, job, command, addresses).await
        }
        _ => Err(anyhow!("the state rm job carries no ADDRESS")),
    };
    answer_failure(r, job, command, result, "State rm Error").await
}

async fn answer_failure(
    r: &Runner,
    job: &Job,
    command: &Command,
    result: anyhow::Result<()>,
    what: &str,
) -> anyhow::Result<()> {
    let Err(e) = result else {
        return Ok(());
    };
    // `next` is atoll's own Markdown: no word of the comment goes in it.
    let next = format!(
        "Fix the cause, then comment `{} {}` again.",
        r.executable, command.verb
    );
    job.comment(&view::error(what, &format!("{e:#}"), &next))
        .await?;
    Err(e)
}

/// The one project the command acts on, checked out and locked; `None`: refused (answered).
struct Admitted {
    pull: PullDetails,
    root: std::path::PathBuf,
    project: Project,
}

async fn admitted(r: &Runner, job: &Job, command: &Command) -> anyhow::Result<Option<Admitted>> {
    let user = job.user();
    if !gate::permission(job, &user).await?.can_apply() {
        job.step(&format!("refused: {user} has no write access"))
            .await;
        let body = reply::state_no_permission(command.verb.as_str(), &user);
        job.comment(&body).await?;
        return Ok(None);
    }
    let pull = open_pull(job).await?;
    if gate::refuse_fork(&r.policy, job, &pull, StatusKind::Plan).await? {
        return Ok(None);
    }
    let co = checkout(r, job, &pull).await?;
    let resolution = resolve(r, job, &co.path, &pull.base_ref).await?;
    let mut projects = select(command, &resolution)?;
    let project = match projects.len() {
        1 => projects.remove(0),
        0 => {
            return Err(anyhow!(
                "no project to run `{}` in: this pull request changes none; name one with `-p \
                 NAME` or `-d DIR [-w WORKSPACE]`",
                command.verb
            ));
        }
        _ => {
            let labels: Vec<String> = projects.iter().map(Project::label).collect();
            return Err(anyhow!(
                "`{}` runs in one project, and these {} match: {}; name one with `-p NAME` or \
                 `-d DIR [-w WORKSPACE]`",
                command.verb,
                projects.len(),
                labels.join("; ")
            ));
        }
    };
    let sha = pull.head_sha.clone();
    if !take_locks(
        r,
        job,
        std::slice::from_ref(&project),
        &sha,
        StatusKind::Plan,
    )
    .await?
    {
        return Ok(None);
    }
    Ok(Some(Admitted {
        pull,
        root: co.path,
        project,
    }))
}

async fn import_steps(
    r: &Runner,
    job: &Job,
    command: &Command,
    address: &str,
    id: &str,
) -> anyhow::Result<()> {
    let Some(at) = admitted(r, job, command).await? else {
        return Ok(());
    };
    let p = &at.project;
    let missing = unmet(r, job, &at.pull, p.options.import_requirements.clone()).await?;
    if !missing.is_empty() {
        let again = command.to_comment(&r.executable);
        job.comment(&reply::import_unmet(&again, &missing)).await?;
        return Ok(());
    }
    job.step(&format!("import {address} {id} into {}", p.label()))
        .await;
    let (state, mut input) = project_io(r, job, &at.root, p);
    let sha = at.pull.head_sha.as_str();
    let options = PlanOptions::default();
    let prepared = project::prepare(r, job, &state, &mut input, sha, &options).await?;
    let imported = import_one(&prepared, address, id)?;
    if let StateEntry::Guest { kind, vm_id, .. } = &imported.entry {
        let claim = [(*kind, *vm_id)];
        refuse_foreign(&state, &prepared.state.entries, &claim, &prepared.inventory).await?;
    }
    state.record(&imported.entry).await?;
    job.record_state_version(&state, crate::store::VersionReason::Import, sha)
        .await;
    let discarded = discard_plan(r, job, p).await?;
    audit(r, job, command, p, AuditAction::Import).await?;
    let flags = lock_key(job, p).plan_flags();
    let label = p.label();
    let body = reply::imported(&ImportView {
        executable: &r.executable,
        label: &label,
        flags: &flags,
        address,
        id,
        what: &imported.what,
        protected: imported.protected.map(|by| match by {
            ProtectedBy::Configured => Protection::Configured,
            ProtectedBy::Discovered { .. } => Protection::OwnGuest,
        }),
        discarded,
    });
    job.comment(&body).await?;
    Ok(())
}

async fn state_rm_steps(
    r: &Runner,
    job: &Job,
    command: &Command,
    addresses: &[ResourceAddress],
) -> anyhow::Result<()> {
    let Some(at) = admitted(r, job, command).await? else {
        return Ok(());
    };
    let p = &at.project;
    let (state, _) = project_io(r, job, &at.root, p);
    let now = state.load().await?;
    let mut removed: Vec<(&str, bool)> = Vec::new();
    for address in addresses {
        let found = now.covered(|a| address.covers(a));
        if found.is_empty() {
            return Err(anyhow!(
                "Error: Invalid target address\n\nNo matching objects found for {address} in \
                 the state of {}. Check the address (the plan comment names every resource \
                 atoll manages in this project).",
                p.label()
            ));
        }
        for hit in found {
            if !removed.contains(&hit) {
                removed.push(hit);
            }
        }
    }
    for (address, _) in &removed {
        job.step(&format!("state rm {address} in {}", p.label()))
            .await;
        state.forget(address).await?;
    }
    let sha = at.pull.head_sha.as_str();
    job.record_state_version(&state, crate::store::VersionReason::StateRm, sha)
        .await;
    let discarded = discard_plan(r, job, p).await?;
    audit(r, job, command, p, AuditAction::StateRm).await?;
    let flags = lock_key(job, p).plan_flags();
    let label = p.label();
    let names: Vec<String> = removed.iter().map(|(a, _)| (*a).to_owned()).collect();
    let body = reply::state_removed(&StateRmView {
        executable: &r.executable,
        label: &label,
        flags: &flags,
        removed: &names,
        guests: removed.iter().filter(|(_, guest)| *guest).count(),
        discarded,
    });
    job.comment(&body).await?;
    Ok(())
}

/// The PR's saved plan of the project no longer matches its state: superseded, so `apply`
/// asks for a new plan. `true` when there was one.
async fn discard_plan(r: &Runner, job: &Job, p: &Project) -> anyhow::Result<bool> {
    let key = lock_key(job, p);
    let query = PlanQuery {
        repo: job.repo(),
        pr: job.pr.number,
        current_only: true,
    };
    let had = r
        .store
        .plans()
        .plan_list(&query)
        .await?
        .iter()
        .any(|plan| plan.key == key);
    if had {
        job.step(&format!("discard the saved plan of {}", p.label()))
            .await;
        r.store
            .plans()
            .plan_supersede_key(&key, job.pr.number)
            .await?;
    }
    Ok(had)
}

/// The audit trail: who changed which project's state, with the comment.
async fn audit(
    r: &Runner,
    job: &Job,
    command: &Command,
    p: &Project,
    action: AuditAction,
) -> anyhow::Result<()> {
    debug_assert!(matches!(command.verb, Verb::Import | Verb::StateRm));
    r.store
        .audit()
        .audit_append(&NewAuditEvent {
            actor: Actor::new(job.user(), ActorVia::Comment),
            action,
            repo: Some(job.repo()),
            pr: Some(job.pr.number),
            target: lock_key(job, p).to_string(),
            detail: command.to_comment(&r.executable),
        })
        .await?;
    Ok(())
}
