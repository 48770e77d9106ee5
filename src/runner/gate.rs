//! Who and what may run a command, decided before any work: a pull request from a fork is not
//! checked out or evaluated unless forks are allowed, and `atlantis unlock` needs write access
//! or authorship (configurable). A refusal is a comment saying why and what would allow it.

use anyhow::Context as _;

use super::Job;
use crate::config::UnlockRole;
use crate::forge::{CommitStatus, ForgeError, Permission, PullDetails, StatusKind, StatusState};
use crate::render::notice;

/// What comments may make the runner do (`webhook.allow_fork_prs`, `commands.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Plan and apply pull requests whose head lives in a fork.
    pub allow_fork_prs: bool,
    /// Who may `atlantis unlock`: any one of these.
    pub unlock_requires: Vec<UnlockRole>,
    /// The most comments one reply is split into.
    pub max_reply_comments: usize,
    /// The commands the server runs (`commands.allow_commands`): `help` lists these.
    pub allow_commands: crate::commands::AllowedCommands,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            allow_fork_prs: false,
            unlock_requires: vec![UnlockRole::Write, UnlockRole::Author],
            max_reply_comments: 4,
            allow_commands: crate::commands::AllowedCommands::default(),
        }
    }
}

/// Refuses `verb` on a fork's pull request unless forks are allowed: comments why, sets the
/// command's status to failure, and returns `true`. Call it before anything is checked out.
pub(super) async fn refuse_fork(
    policy: &Policy,
    job: &Job,
    pull: &PullDetails,
    kind: StatusKind,
) -> anyhow::Result<bool> {
    if !pull.from_fork || policy.allow_fork_prs {
        return Ok(false);
    }
    let verb = match kind {
        StatusKind::Plan => "Plan",
        StatusKind::Apply => "Apply",
        StatusKind::PolicyCheck => "Policy check",
    };
    job.step(&format!(
        "refused: the pull request comes from a fork ({})",
        pull.head_repo.as_deref().unwrap_or("deleted")
    ))
    .await;
    job.comment(&notice::fork_refused(verb, pull.head_repo.as_deref()))
        .await?;
    let status = CommitStatus::aggregate(
        kind,
        StatusState::Failure,
        "pull requests from forks are not run",
    );
    job.status(&pull.head_sha, &status).await;
    Ok(true)
}

/// Whether the commenter may unlock this pull request's locks; `Err` when the forge could not
/// tell. `Some(needs)` is a refusal naming who may (atoll's own words).
pub(super) async fn unlock_refusal(policy: &Policy, job: &Job) -> anyhow::Result<Option<String>> {
    let roles = &policy.unlock_requires;
    if roles.contains(&UnlockRole::Anyone) {
        return Ok(None);
    }
    let user = job.user();
    if roles.contains(&UnlockRole::Author) {
        let pull = job
            .forge
            .pull_request(&job.name, job.pr.number)
            .await
            .context("reading the pull request's author")?;
        if pull.author.eq_ignore_ascii_case(&user) {
            return Ok(None);
        }
    }
    if roles.contains(&UnlockRole::Write) && permission(job, &user).await?.can_apply() {
        return Ok(None);
    }
    Ok(Some(needs(roles)))
}

/// A user's permission; a user the forge does not know has none.
pub(super) async fn permission(job: &Job, user: &str) -> anyhow::Result<Permission> {
    match job.forge.permission(&job.name, user).await {
        Ok(p) => Ok(p),
        Err(ForgeError::NotFound { .. }) => Ok(Permission::None),
        Err(e) => Err(e).context("reading the commenter's permission"),
    }
}

/// "write access to this repository or authorship of this pull request".
fn needs(roles: &[UnlockRole]) -> String {
    let words: Vec<&str> = roles
        .iter()
        .filter_map(|role| match role {
            UnlockRole::Write => Some("write access to this repository"),
            UnlockRole::Author => Some("authorship of this pull request"),
            UnlockRole::Anyone => None,
        })
        .collect();
    words.join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_names_every_role_that_would_do() {
        assert_eq!(
            needs(&[UnlockRole::Write, UnlockRole::Author]),
            "write access to this repository or authorship of this pull request"
        );
        assert_eq!(
            needs(&[UnlockRole::Author]),
            "authorship of this pull request"
        );
    }
}
