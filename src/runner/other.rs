//! The small jobs: `atlantis unlock`, a dashboard unlock's announcement, PR closed or merged,
//! replies, help and version.

use anyhow::anyhow;

use super::{Job, Runner, gate};
use crate::commands::{Command, Reply, Verb};
use crate::jobs::{JobKind, JobSpec, PrJob};
use crate::locks::{Actor, ActorVia, AuditStamp, KeyFilter, Lock, Release, UnlockAnnouncement};
use crate::queue::JobContext;
use crate::render::notice;
use crate::render::pr::{self as view, CancelledJob, ReleasedLock};
use crate::store::{CancelQueued, Job as StoredJob, JobState};
use model::ForgeKind;

/// `atlantis unlock [-p|-d|-w]`: releases only the matching locks of this PR.
pub(super) async fn unlock(r: &Runner, job: &Job, command: &Command) -> anyhow::Result<()> {
    job.step("unlock").await;
    let refusal = match gate::unlock_refusal(&r.policy, job).await {
        Ok(refusal) => refusal,
        Err(e) => {
            let next = format!("Try again later with `{} unlock`.", r.executable);
            job.comment(&view::error("Unlock Error", &format!("{e:#}"), &next))
                .await?;
            return Err(e);
        }
    };
    if let Some(needs) = refusal {
        job.step(&format!("refused: unlocking needs {needs}")).await;
        let body = notice::unlock_no_permission(&r.executable, &job.user(), &needs);
        job.comment(&body).await?;
        return Ok(());
    }
    let release = Release::Pr {
        repo: job.repo(),
        pr: job.pr.number,
        filter: KeyFilter::from_command(command),
    };
    let stamp = AuditStamp {
        actor: Actor::new(job.user(), ActorVia::Comment),
        detail: command.to_comment(&r.executable),
    };
    let released = r.store.locks().lock_release(&release, &stamp).await?;
    let released: Vec<ReleasedLock> = released
        .iter()
        .map(|l| ReleasedLock {
            label: l.key.to_string(),
        })
        .collect();
    let body = view::unlocked(&r.executable, &released);
    job.comment(&body).await?;
    Ok(())
}

/// `atlantis cancel`: the PR's plans, applies and unlocks that are still queued are cancelled;
/// running ones finish. Who may cancel is who may unlock (`commands.unlock_requires`): both
/// undo what someone else asked for. The reply lists what was cancelled and what still runs.
pub(super) async fn cancel(r: &Runner, job: &Job) -> anyhow::Result<()> {
    job.step("cancel").await;
    let refusal = match gate::unlock_refusal(&r.policy, job).await {
        Ok(refusal) => refusal,
        Err(e) => {
            let next = format!("Try again later with `{} cancel`.", r.executable);
            job.comment(&view::error("Cancel Error", &format!("{e:#}"), &next))
                .await?;
            return Err(e);
        }
    };
    if let Some(needs) = refusal {
        job.step(&format!("refused: cancelling needs {needs}"))
            .await;
        let body = notice::cancel_no_permission(&r.executable, &job.user(), &needs);
        job.comment(&body).await?;
        return Ok(());
    }
    let repo = job.repo();
    let kinds = JobKind::CANCELLABLE.map(JobKind::as_str);
    let reason = format!("cancelled by {} with `{} cancel`", job.user(), r.executable);
    let cancelled = r
        .store
        .cancel_queued(&CancelQueued {
            repo: &repo,
            pr: job.pr.number,
            before: job.ctx.job().id,
            kinds: &kinds,
            reason: &reason,
        })
        .await?;
    for c in &cancelled {
        job.step(&format!("cancelled job {} ({})", c.id, c.kind))
            .await;
    }
    let mut running = Vec::new();
    for kind in kinds {
        let jobs = r
            .store
            .list_pr_jobs(&repo, job.pr.number, kind, RUNNING_SHOWN)
            .await?;
        running.extend(
            jobs.into_iter()
                .filter(|j| matches!(j.state, JobState::Running | JobState::Applying)),
        );
    }
    running.sort_by_key(|j| j.created_at);
    let shown = |j: &StoredJob| CancelledJob {
        command: job_command(&r.executable, j),
        by: job_author(j),
        page: r.job_page(j.id),
    };
    let body = view::cancelled(
        &r.executable,
        &cancelled.iter().map(shown).collect::<Vec<_>>(),
        &running.iter().map(shown).collect::<Vec<_>>(),
    );
    job.comment(&body).await?;
    Ok(())
}

/// The most running jobs of one kind a cancel reply names.
const RUNNING_SHOWN: u32 = 10;

/// A stored job as a reply names it: the comment that queued it (`atlantis plan -d envs/dev`), or
/// the push that did (`autoplan of 1a2b3c4`).
fn job_command(executable: &str, job: &StoredJob) -> String {
    match JobSpec::parse(&job.kind, &job.payload) {
        Ok(JobSpec::Command(c)) => c.command.to_comment(executable),
        Ok(JobSpec::Autoplan(a)) => {
            format!("autoplan of {}", a.head_sha.get(..7).unwrap_or(&a.head_sha))
        }
        _ => job.kind.clone(),
    }
}

/// Who queued a stored job, if it says.
fn job_author(job: &StoredJob) -> Option<String> {
    JobSpec::parse(&job.kind, &job.payload)
        .ok()
        .and_then(|spec| spec.pr().and_then(|pr| pr.author.clone()))
}

/// The dashboard released one of the PR's locks (already audited): tell the PR who did it,
/// what was released and how to plan again.
pub(super) async fn announce_unlock(
    r: &Runner,
    ctx: JobContext,
    note: UnlockAnnouncement,
) -> anyhow::Result<()> {
    let forge = lock_forge(r, &note.lock).await?;
    let repo = note
        .lock
        .key
        .repo
        .parse()
        .map_err(|e| anyhow!("lock {}: {e}", note.lock.key))?;
    let pr = PrJob {
        forge,
        repo,
        number: note.lock.owner.pr,
        author: Some(note.actor.name.clone()),
    };
    let job = Job::about(r, ctx, JobSpec::AnnounceUnlock(note.clone()), pr)?;
    job.step(&format!(
        "announce: {} unlocked {} from the dashboard",
        note.actor.name, note.lock.key
    ))
    .await;
    job.comment(&unlock_announcement(&r.executable, &note))
        .await?;
    Ok(())
}

/// The comment: who, which lock (names are validated, so code spans are safe), the next step.
fn unlock_announcement(executable: &str, note: &UnlockAnnouncement) -> String {
    view::unlock_announcement(executable, &note.actor.name, &note.lock.key)
}

/// Which forge the locked PR is on: the lock says (since locks record it); for a lock taken
/// by an earlier version, the plan job that took it, else the only forge configured.
async fn lock_forge(r: &Runner, lock: &Lock) -> anyhow::Result<ForgeKind> {
    if let Some(forge) = lock.owner.forge {
        return Ok(forge);
    }
    if let Some(id) = lock.owner.job
        && let Some(job) = r.store.get_job(id).await?
        && let Ok(spec) = JobSpec::parse(&job.kind, &job.payload)
        && let Some(pr) = spec.pr()
    {
        return Ok(pr.forge);
    }
    match (&r.github, &r.gitea) {
        (Some(_), None) => Ok(ForgeKind::Github),
        (None, Some(_)) => Ok(ForgeKind::Gitea),
        _ => Err(anyhow!(
            "cannot tell which forge {} is on: the plan job that took the lock is gone and {} forges are configured; tell the PR by hand",
            lock.key.repo,
            if r.github.is_some() { "both" } else { "no" }
        )),
    }
}

/// The PR was merged or closed: release its locks, drop its plans and its checkout.
pub(super) async fn pr_closed(r: &Runner, job: &Job, merged: bool) -> anyhow::Result<()> {
    job.step(if merged {
        "release locks (merged)"
    } else {
        "release locks (closed)"
    })
    .await;
    let stamp = AuditStamp {
        actor: Actor::new(job.user(), ActorVia::Forge),
        detail: if merged {
            "pull request merged".to_owned()
        } else {
            "pull request closed".to_owned()
        },
    };
    let closed = r
        .store
        .locks()
        .pr_closed(&job.repo(), job.pr.number, &stamp)
        .await?;
    job.step(&format!(
        "released {} lock(s), deleted {} plan(s)",
        closed.released.len(),
        closed.plans_deleted
    ))
    .await;
    r.workdir
        .remove(job.host(), &job.name, job.pr.number)
        .await?;
    if !closed.released.is_empty() {
        let body = view::pr_closed(closed.released.len(), merged);
        job.comment(&body).await?;
    }
    Ok(())
}

/// A comment the grammar answered with a reply (usage, did-you-mean, an error).
pub(super) async fn reply(_r: &Runner, job: &Job, reply: &Reply) -> anyhow::Result<()> {
    job.comment(&view::reply(&reply.to_string())).await?;
    Ok(())
}

/// `atlantis help`: the list of the commands this server runs (`approve_policies` only where
/// policies are checked).
pub(super) async fn help(r: &Runner, job: &Job) -> anyhow::Result<()> {
    let commands: Vec<(String, String)> = r
        .policy
        .allow_commands
        .verbs()
        .iter()
        .filter(|verb| **verb != Verb::ApprovePolicies || r.policies.enabled())
        .map(|verb| {
            let synopsis = verb.synopsis().replacen("atlantis", &r.executable, 1);
            (synopsis, verb.summary().to_owned())
        })
        .collect();
    let body = view::help(&commands);
    job.comment(&body).await?;
    Ok(())
}

/// `atlantis version`.
pub(super) async fn version(_r: &Runner, job: &Job) -> anyhow::Result<()> {
    job.comment(&view::version()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{RepoDir, Workspace};
    use crate::locks::{LockKey, LockOwner};

    fn note(actor: &str) -> UnlockAnnouncement {
        let at = time::OffsetDateTime::UNIX_EPOCH;
        UnlockAnnouncement {
            actor: Actor::new(actor, ActorVia::Dashboard),
            lock: Lock {
                id: uuid::Uuid::nil(),
                key: LockKey {
                    repo: "github.com/acme/infra".to_owned(),
                    dir: RepoDir::parse("envs/dev").unwrap_or_else(|e| panic!("{e}")),
                    workspace: Workspace::parse("staging").unwrap_or_else(|e| panic!("{e}")),
                    project: None,
                },
                owner: LockOwner {
                    pr: 7,
                    pr_url: String::new(),
                    head_sha: "abc".to_owned(),
                    user: "alice".to_owned(),
                    job: None,
                    summary: String::new(),
                    forge: None,
                },
                locked_at: at,
                planned_at: at,
            },
        }
    }

    #[test]
    fn unlock_announcement_names_the_actor_escaped_and_the_replan_command() {
        let body = unlock_announcement("atlantis", &note("ops"));
        assert!(
            body.contains("ops released the lock on `envs/dev`"),
            "{body}"
        );
        assert!(
            body.contains("`atlantis plan -d envs/dev -w staging`"),
            "{body}"
        );
        let evil = unlock_announcement("atlantis", &note("@admins <img src=x>"));
        assert!(!evil.contains("@admins") && !evil.contains('<'), "{evil}");
    }
}
