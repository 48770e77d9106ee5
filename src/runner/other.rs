//! The small jobs: `atlantis unlock`, PR closed or merged, replies, help and version.

use anyhow::anyhow;

use super::{Job, Runner};
use crate::commands::{Command, Verb};
use crate::locks::{Actor, ActorVia, AuditStamp, KeyFilter, Release};
use crate::render::pr::{self as view, ReleasedLock};

/// `atlantis unlock [-p|-d|-w]`: releases only the matching locks of this PR.
pub(super) async fn unlock(r: &Runner, job: &Job, command: &Command) -> anyhow::Result<()> {
    job.step("unlock").await;
    let release = Release::Pr {
        repo: job.payload.repo.clone(),
        pr: job.payload.pr,
        filter: KeyFilter::from_command(command),
    };
    let stamp = AuditStamp {
        actor: Actor::new(job.user(), ActorVia::Comment),
        detail: command.to_comment(&r.executable),
    };
    let released = r.store.lock_release(&release, &stamp).await?;
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

/// The PR was merged or closed: release its locks, drop its plans and its checkout.
pub(super) async fn pr_closed(r: &Runner, job: &Job) -> anyhow::Result<()> {
    let merged = job.payload.merged.unwrap_or(false);
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
        .pr_closed(&job.payload.repo, job.payload.pr, &stamp)
        .await?;
    job.step(&format!(
        "released {} lock(s), deleted {} plan(s)",
        closed.released.len(),
        closed.plans_deleted
    ))
    .await;
    r.workdir
        .remove(&job.host, &job.name, job.payload.pr)
        .await?;
    if !closed.released.is_empty() {
        let body = view::pr_closed(closed.released.len(), merged);
        job.comment(&body).await?;
    }
    Ok(())
}

/// A comment the grammar answered with a reply (usage, did-you-mean, an error).
pub(super) async fn reply(_r: &Runner, job: &Job) -> anyhow::Result<()> {
    let reply = job
        .payload
        .reply
        .as_ref()
        .ok_or_else(|| anyhow!("reply job without a reply"))?;
    job.comment(&view::reply(&reply.to_string())).await?;
    Ok(())
}

/// `atlantis help`: the list of commands.
pub(super) async fn help(r: &Runner, job: &Job) -> anyhow::Result<()> {
    let commands: Vec<(String, String)> = Verb::ALL
        .iter()
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
