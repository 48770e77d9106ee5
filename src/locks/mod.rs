//! Workspace locks, saved plans and the audit trail: the values the runner, the webhook and the
//! dashboard exchange with the store about who holds what.
//!
//! A lock key is a struct (`repo`, `dir`, `workspace`, optional `project`), never a string
//! parsed back. The store enforces one holder per key with a unique constraint and takes every
//! lock a command needs in one transaction, or none (`store::LockStore`). This module owns the
//! types and the pure rules around them (which locks an `atlantis unlock -d x` means, what to
//! comment to re-plan, whether a saved plan is still fresh). It must not write SQL, format
//! comments (that is `render`'s job) or be bypassed: nothing else decides who holds a lock.

mod audit;
mod plans;

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::commands::{Command, ProjectName, RepoDir, Workspace};

pub use audit::{Actor, ActorVia, ApplySwitch, AuditAction, AuditEvent, AuditStamp, NewAuditEvent};
pub use plans::{NewPlan, PlanQuery, PlanSource, SavedPlan, Stale};

/// What one lock protects: a project directory and workspace of a repository, and the
/// `atlantis.yaml` project name when the project has one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LockKey {
    /// `host/owner/repo`.
    pub repo: String,
    pub dir: RepoDir,
    pub workspace: Workspace,
    pub project: Option<ProjectName>,
}

impl LockKey {
    /// The flags of the `atlantis plan` comment that re-plans just this key: `-p NAME` for a
    /// named project, else `-d DIR` and, outside the default workspace, `-w WORKSPACE`. The
    /// names are validated, so the result is safe inside a Markdown code span.
    pub fn plan_flags(&self) -> String {
        if let Some(project) = &self.project {
            return format!("-p {project}");
        }
        if self.workspace == Workspace::default_workspace() {
            format!("-d {}", self.dir)
        } else {
            format!("-d {} -w {}", self.dir, self.workspace)
        }
    }
}

impl fmt::Display for LockKey {
    /// `host/owner/repo dir=envs/dev workspace=default [project=web]`, for logs and audit
    /// targets. Never parsed back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} dir={} workspace={}",
            self.repo, self.dir, self.workspace
        )?;
        if let Some(project) = &self.project {
            write!(f, " project={project}")?;
        }
        Ok(())
    }
}

/// The `pr` of a lock held by a run of the command line through the server's API (`atoll plan
/// --remote`) rather than a pull request: forges number pull requests from 1.
pub const REMOTE_RUN: u64 = 0;

/// Who holds a lock: the pull request whose plan took it, and what the dashboard shows about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockOwner {
    pub pr: u64,
    pub pr_url: String,
    /// The head commit that was planned.
    pub head_sha: String,
    /// The forge user who asked for the plan (or opened the PR, for autoplan).
    pub user: String,
    /// The plan job that took the lock.
    pub job: Option<Uuid>,
    /// One line for display, e.g. `Plan: 1 to add, 2 to change, 0 to destroy. 1 restart.`
    pub summary: String,
    /// The forge the PR is on; `None` for locks taken before locks recorded it.
    #[serde(default)]
    pub forge: Option<model::ForgeKind>,
}

/// A held lock as stored. `id` is stable for the life of the lock, across re-plans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    pub id: Uuid,
    pub key: LockKey,
    pub owner: LockOwner,
    /// When the PR first took this lock.
    #[serde(with = "time::serde::rfc3339")]
    pub locked_at: OffsetDateTime,
    /// When the owner info was last written (the latest plan).
    #[serde(with = "time::serde::rfc3339")]
    pub planned_at: OffsetDateTime,
}

/// The payload of the job that tells a PR one of its locks was released from the dashboard:
/// the dashboard queues it (after the release is audited), the runner posts the comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnlockAnnouncement {
    pub actor: Actor,
    /// The lock as it was when released.
    pub lock: Lock,
}

/// The result of asking for a set of locks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquisition {
    /// Every key is now held by the asking PR (taken, or re-taken with fresh owner info),
    /// ordered by key.
    Granted(Vec<Lock>),
    /// Nothing was taken: these locks, held by other PRs, stand in the way (ordered by key).
    Conflict(Vec<Lock>),
}

/// Which of a PR's locks an `atlantis unlock` means: every given flag must match; no flags
/// means all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyFilter {
    pub dir: Option<RepoDir>,
    pub workspace: Option<Workspace>,
    pub project: Option<ProjectName>,
    /// `-d` written as a glob: the key's directory must match it.
    pub dir_glob: Option<Box<crate::repocfg::DirGlob>>,
}

impl KeyFilter {
    /// The filter of `atlantis unlock [-p P] [-d D] [-w W]`.
    pub fn from_command(command: &Command) -> Self {
        Self {
            dir: command.dir.clone(),
            workspace: command.workspace.clone(),
            project: command.project.clone(),
            // The parser checked it; a glob that no longer compiles matches nothing.
            dir_glob: command.dir_glob.as_deref().map(|g| {
                Box::new(
                    crate::repocfg::DirGlob::parse(g)
                        .unwrap_or_else(|_| crate::repocfg::DirGlob::nothing()),
                )
            }),
        }
    }

    /// True when `key` is one this filter selects.
    pub fn matches(&self, key: &LockKey) -> bool {
        self.dir.as_ref().is_none_or(|d| *d == key.dir)
            && self
                .dir_glob
                .as_ref()
                .is_none_or(|g| g.matches(key.dir.as_str()))
            && self.workspace.as_ref().is_none_or(|w| *w == key.workspace)
            && self
                .project
                .as_ref()
                .is_none_or(|p| key.project.as_ref() == Some(p))
    }
}

/// Which locks to release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Release {
    /// The locks of one PR that match `filter` (`atlantis unlock`, with or without flags).
    Pr {
        repo: String,
        pr: u64,
        filter: KeyFilter,
    },
    /// One lock by id (the dashboard's unlock button).
    Id(Uuid),
}

/// Filters for listing locks; `None` means any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockQuery {
    pub repo: Option<String>,
    pub pr: Option<u64>,
}

/// What closing a PR (merged or not) cleaned up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClosedPr {
    /// The locks it held, now released.
    pub released: Vec<Lock>,
    /// How many saved plans (current and superseded) were deleted.
    pub plans_deleted: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::Verb;

    fn key(dir: &str, ws: &str, project: Option<&str>) -> LockKey {
        LockKey {
            repo: "github.com/acme/infra".to_owned(),
            dir: RepoDir::parse(dir).expect("dir"),
            workspace: Workspace::parse(ws).expect("workspace"),
            project: project.map(|p| ProjectName::parse(p).expect("project")),
        }
    }

    #[test]
    fn plan_flags_name_the_project_or_the_dir_and_non_default_workspace() {
        assert_eq!(key("envs/dev", "default", None).plan_flags(), "-d envs/dev");
        assert_eq!(
            key("envs/dev", "staging", None).plan_flags(),
            "-d envs/dev -w staging"
        );
        assert_eq!(
            key("envs/dev", "staging", Some("prod/web")).plan_flags(),
            "-p prod/web"
        );
    }

    #[test]
    fn display_names_every_part_of_the_key() {
        assert_eq!(
            key("envs/dev", "default", Some("web")).to_string(),
            "github.com/acme/infra dir=envs/dev workspace=default project=web"
        );
        assert_eq!(
            key(".", "default", None).to_string(),
            "github.com/acme/infra dir=. workspace=default"
        );
    }

    #[test]
    fn unlock_filter_from_flags_selects_only_matching_keys() {
        let mut command = Command::new(Verb::Unlock);
        assert!(KeyFilter::from_command(&command).matches(&key("a", "default", None)));
        command.dir = Some(RepoDir::parse("a").expect("dir"));
        let filter = KeyFilter::from_command(&command);
        assert!(filter.matches(&key("a", "default", None)));
        assert!(filter.matches(&key("a", "prod", Some("p"))));
        assert!(!filter.matches(&key("a/b", "default", None)));
        command.workspace = Some(Workspace::parse("prod").expect("ws"));
        let filter = KeyFilter::from_command(&command);
        assert!(!filter.matches(&key("a", "default", None)));
        assert!(filter.matches(&key("a", "prod", None)));
        let by_project = KeyFilter {
            project: Some(ProjectName::parse("p").expect("project")),
            ..KeyFilter::default()
        };
        assert!(by_project.matches(&key("x", "default", Some("p"))));
        assert!(!by_project.matches(&key("x", "default", None)));
    }

    #[test]
    fn apply_with_a_dir_glob_selects_only_plans_in_matching_directories() {
        let mut command = Command::new(Verb::Apply);
        command.dir_glob = Some("envs/*".to_owned());
        let filter = KeyFilter::from_command(&command);
        assert!(filter.matches(&key("envs/dev", "default", None)));
        assert!(!filter.matches(&key("envs/dev/sub", "default", None)));
        assert!(!filter.matches(&key("lab", "default", None)));
        command.dir_glob = Some("bad[".to_owned());
        let filter = KeyFilter::from_command(&command);
        assert!(!filter.matches(&key("envs/dev", "default", None)));
    }
}
