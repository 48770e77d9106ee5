//! The small jobs: `atlantis unlock`, PR closed or merged, replies, help and version.

use anyhow::anyhow;

use super::{Job, Runner};
use crate::commands::{Command, Verb};
use crate::locks::{Actor, ActorVia, AuditStamp, KeyFilter, Release};
use crate::render::comment::escape;

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
    let body = if released.is_empty() {
        "This pull request holds no lock matching that command; nothing was unlocked.\n".to_owned()
    } else {
        let mut s = format!(
            "Released {} lock(s) and discarded their plans:\n\n",
            released.len()
        );
        for l in &released {
            s.push_str(&format!("* {}\n", escape(&l.key.to_string())));
        }
        s.push_str(&format!(
            "\nComment `{} plan` to plan again.\n",
            r.executable
        ));
        s
    };
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
        let body = format!(
            "Locks released for {} project(s) now that this pull request is {}.\n",
            closed.released.len(),
            if merged { "merged" } else { "closed" }
        );
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
    job.comment(&format!(
        "```\n{}\n```\n",
        crate::render::comment::code_text(&reply.to_string())
    ))
    .await?;
    Ok(())
}

/// `atlantis help`: the list of commands.
pub(super) async fn help(r: &Runner, job: &Job) -> anyhow::Result<()> {
    let mut body = String::from(
        "atoll: Atlantis-style pull-request automation for Proxmox VE.\n\nCommands:\n\n",
    );
    for verb in Verb::ALL {
        let synopsis = verb.synopsis().replacen("atlantis", &r.executable, 1);
        body.push_str(&format!("* `{synopsis}`: {}\n", verb.summary()));
    }
    job.comment(&body).await?;
    Ok(())
}

/// `atlantis version`.
pub(super) async fn version(_r: &Runner, job: &Job) -> anyhow::Result<()> {
    job.comment(&format!("atoll {}\n", env!("CARGO_PKG_VERSION")))
        .await?;
    Ok(())
}
