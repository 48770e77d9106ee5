//! The PR comments the runner posts: plan results, apply progress, lock conflicts, unmet
//! requirements, stale plans, errors, unlock, help and version. Each one is a template under
//! `templates/comments/` rendered from a small view; the layout lives in the templates, the
//! escaping in [`template`](super::template)'s filters.

use serde::Serialize;

use super::template::render;
use crate::locks::{LockKey, Stale};

/// One project's plan outcome.
#[derive(Debug, Clone)]
pub struct ProjectPlanView {
    /// `dir=envs/dev workspace=default` or the project name.
    pub label: String,
    /// The flags that select it (`-d envs/dev`).
    pub flags: String,
    pub outcome: PlanOutcome,
}

#[derive(Debug, Clone)]
pub enum PlanOutcome {
    /// Planned: the plan text, its one-line summary, and whether the guard blocked anything.
    Planned {
        text: String,
        summary: String,
        blocked: usize,
        changes: bool,
    },
    /// Planning failed: the error text.
    Failed { error: String },
    /// Not run: an earlier execution order group failed and atlantis.yaml sets
    /// `abort_on_execution_order_fail` (the reason names the failed projects).
    Skipped { reason: String },
}

impl PlanOutcome {
    /// Planned with changes and nothing blocked: `atlantis apply` can apply it.
    fn applicable(&self) -> bool {
        matches!(
            self,
            Self::Planned {
                blocked: 0,
                changes: true,
                ..
            }
        )
    }
}

/// A project as `plan.md` sees it.
#[derive(Serialize)]
struct ProjectContext<'a> {
    label: &'a str,
    flags: &'a str,
    failed: bool,
    error: &'a str,
    skipped: &'a str,
    text: &'a str,
    summary: &'a str,
    blocked: usize,
    changes: bool,
}

impl<'a> From<&'a ProjectPlanView> for ProjectContext<'a> {
    fn from(p: &'a ProjectPlanView) -> Self {
        let mut c = ProjectContext {
            label: &p.label,
            flags: &p.flags,
            failed: false,
            error: "",
            skipped: "",
            text: "",
            summary: "",
            blocked: 0,
            changes: false,
        };
        match &p.outcome {
            PlanOutcome::Failed { error } => {
                c.failed = true;
                c.error = error;
            }
            PlanOutcome::Skipped { reason } => c.skipped = reason,
            PlanOutcome::Planned {
                text,
                summary,
                blocked,
                changes,
            } => {
                c.text = text;
                c.summary = summary;
                c.blocked = *blocked;
                c.changes = *changes;
            }
        }
        c
    }
}

/// The plan comment for one or many projects, in Atlantis's layout.
pub fn plan_comment(executable: &str, projects: &[ProjectPlanView], warnings: &[String]) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        projects: Vec<ProjectContext<'a>>,
        applicable: usize,
        warnings: &'a [String],
    }
    render(
        "plan.md",
        &View {
            executable,
            projects: projects.iter().map(ProjectContext::from).collect(),
            applicable: projects.iter().filter(|p| p.outcome.applicable()).count(),
            warnings,
        },
    )
}

/// The plan comment when no project matched (with the repo-config warnings).
pub fn no_projects(executable: &str, warnings: &[String]) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        warnings: &'a [String],
    }
    render(
        "plan_none.md",
        &View {
            executable,
            warnings,
        },
    )
}

/// A lock held by another PR.
#[derive(Debug, Clone, Serialize)]
pub struct ConflictView {
    pub label: String,
    pub holder_pr: u64,
    pub holder_url: String,
    pub flags: String,
    /// Who holds it; shown for a remote run's lock (`holder_pr` 0), which has no PR.
    pub holder_user: String,
}

/// The lock-conflict comment: names each holder PR and the exact command to re-plan.
pub fn lock_conflict(executable: &str, conflicts: &[ConflictView]) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        conflicts: &'a [ConflictView],
    }
    render(
        "lock_conflict.md",
        &View {
            executable,
            conflicts,
        },
    )
}

/// An apply requirement that is not met, and why (`apply_requirements` in the repo config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unmet {
    /// `approved`: no approving review by someone with write access other than the author.
    NotApproved,
    /// `mergeable`: the forge says the pull request cannot be merged, with its reason.
    NotMergeable { reason: String },
    /// `mergeable`: the forge has not computed mergeability yet.
    MergeabilityUnknown,
    /// `undiverged`: the head does not contain the base branch's current head.
    Diverged { base: String },
    /// `policies_passed`: policy sets of a project's plan fail without enough approvals.
    PoliciesFailed {
        project: String,
        flags: String,
        sets: Vec<String>,
    },
    /// `policies_passed`: the plan was made before policies were configured (no check).
    PoliciesUnchecked { project: String, flags: String },
}

impl Unmet {
    /// The requirement's name as `apply_requirements` spells it.
    pub fn requirement(&self) -> &'static str {
        match self {
            Self::NotApproved => "approved",
            Self::NotMergeable { .. } | Self::MergeabilityUnknown => "mergeable",
            Self::Diverged { .. } => "undiverged",
            Self::PoliciesFailed { .. } | Self::PoliciesUnchecked { .. } => "policies_passed",
        }
    }

    pub(super) fn why(&self) -> String {
        match self {
            Self::NotApproved => "the pull request has no approving review by someone with write \
                                  access (other than its author); ask such a reviewer to approve it"
                .to_owned(),
            Self::NotMergeable { reason } => {
                format!("the forge says it cannot be merged: {reason}")
            }
            Self::MergeabilityUnknown => {
                "the forge is still computing mergeability; try again in a minute".to_owned()
            }
            Self::Diverged { base } => format!(
                "the base branch {base} has commits this pull request does not contain; merge \
                 {base} into the branch or rebase it onto {base}, push, then plan again"
            ),
            Self::PoliciesFailed {
                project,
                flags,
                sets,
            } => format!(
                "{project}: policy set(s) {} failed and are not approved; a policy owner can \
                 approve them with approve_policies {flags}, or change the configuration and \
                 plan again",
                sets.join(", ")
            ),
            Self::PoliciesUnchecked { project, flags } => format!(
                "{project}: its plan was made before the policy sets were configured, so it was \
                 never checked; plan it again (plan {flags})"
            ),
        }
    }
}

/// The apply refusal when requirements are unmet; each one named with why.
pub fn unmet_requirements(executable: &str, unmet: &[Unmet]) -> String {
    #[derive(Serialize)]
    struct Line {
        name: &'static str,
        why: String,
    }
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        unmet: Vec<Line>,
    }
    let unmet = unmet
        .iter()
        .map(|u| Line {
            name: u.requirement(),
            why: u.why(),
        })
        .collect();
    render("unmet_requirements.md", &View { executable, unmet })
}

/// The plan refusal when `plan_requirements` are unmet; each one named with why.
pub fn plan_unmet_requirements(executable: &str, unmet: &[Unmet]) -> String {
    #[derive(Serialize)]
    struct Line {
        name: &'static str,
        why: String,
    }
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        unmet: Vec<Line>,
    }
    let unmet = unmet
        .iter()
        .map(|u| Line {
            name: u.requirement(),
            why: u.why(),
        })
        .collect();
    render("plan_unmet_requirements.md", &View { executable, unmet })
}

/// The apply comment for projects not applied because an earlier execution order group
/// failed (`abort_on_execution_order_fail`), or because a dependency is not applied.
pub fn apply_skipped(executable: &str, skipped: &[SkippedView]) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        skipped: &'a [SkippedView],
    }
    render(
        "apply_skipped.md",
        &View {
            executable,
            skipped,
        },
    )
}

/// A project an apply did not run, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedView {
    pub label: String,
    pub flags: String,
    pub reason: String,
}

/// The automerge comment: merged with `method`, and what became of the head branch.
pub fn automerged(executable: &str, method: &str, branch_deleted: &Result<bool, String>) -> String {
    let (deleted, kept) = match branch_deleted {
        Ok(deleted) => (*deleted, ""),
        Err(reason) => (false, reason.as_str()),
    };
    automerge(executable, method, None, deleted, kept)
}

/// The automerge comment when the forge refused the merge, with its reason.
pub fn automerge_failed(executable: &str, method: &str, reason: &str) -> String {
    automerge(executable, method, Some(reason), false, "")
}

fn automerge(
    executable: &str,
    method: &str,
    failed: Option<&str>,
    deleted: bool,
    not_deleted: &str,
) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        method: &'a str,
        failed: bool,
        reason: &'a str,
        deleted: bool,
        not_deleted: &'a str,
    }
    render(
        "automerge.md",
        &View {
            executable,
            method,
            failed: failed.is_some(),
            reason: failed.unwrap_or(""),
            deleted,
            not_deleted,
        },
    )
}

/// The apply refusal when the saved plan no longer matches; `cluster` names the guests that
/// changed on the cluster since the plan, when that is why its state differs.
pub fn stale(
    executable: &str,
    label: &str,
    stale: &[Stale],
    cluster: Option<&str>,
    flags: &str,
) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        label: &'a str,
        reasons: Vec<String>,
        flags: &'a str,
    }
    let reasons = stale
        .iter()
        .map(|s| match s {
            Stale::HeadSha { planned, now } => format!(
                "new commits were pushed: the plan was made at {}, the pull request head is now {}",
                short_sha(planned),
                short_sha(now)
            ),
            Stale::ConfigHash { .. } => {
                "the configuration evaluates differently than when it was planned".to_owned()
            }
            Stale::StateFingerprint { .. } => cluster.map_or_else(
                || "atoll's state changed since the plan (another apply ran)".to_owned(),
                str::to_owned,
            ),
        })
        .collect();
    render(
        "stale.md",
        &View {
            executable,
            label,
            reasons,
            flags,
        },
    )
}

fn short_sha(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}

/// A failure with what to do next. `detail` (error text, possibly quoting user input) is shown
/// in a code block; `what` and `next` are atoll's own Markdown and must not carry user text.
pub fn error(what: &str, detail: &str, next: &str) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        what: &'a str,
        detail: &'a str,
        next: &'a str,
    }
    render("error.md", &View { what, detail, next })
}

/// One guest's apply progress line.
#[derive(Debug, Clone, Serialize)]
pub struct GuestLine {
    pub address: String,
    pub status: String,
}

/// The apply comment, edited as guests finish; `done` is atoll's own closing Markdown.
pub fn apply_progress(label: &str, lines: &[GuestLine], done: Option<&ApplyEnd<'_>>) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        label: &'a str,
        lines: &'a [GuestLine],
        done: Option<&'a ApplyEnd<'a>>,
    }
    render("apply_progress.md", &View { label, lines, done })
}

/// How an apply ended, for its comment's closing line. `flags` (the project's `-d`/`-w`/`-p`)
/// come from the repository, so the template quotes them as code.
#[derive(Debug, Clone, Serialize)]
pub struct ApplyEnd<'a> {
    pub failed: bool,
    pub executable: &'a str,
    pub flags: &'a str,
    /// The root module's outputs after a successful apply (`name = value` lines, secrets
    /// `<sensitive>`: [`crate::render::outputs_text`]); empty when there are none.
    pub outputs: &'a str,
    /// `check` blocks evaluated again after the apply ([`crate::render::checks_after_apply`]);
    /// empty when none failed.
    pub checks: &'a str,
}

/// The report of an apply cut short by a restart: per project, each guest's last known state
/// (from the apply's log), that nothing is retried, and the next step. `job` is atoll's id.
pub fn apply_interrupted(
    executable: &str,
    job: &str,
    projects: &[(String, Vec<GuestLine>)],
) -> String {
    #[derive(Serialize)]
    struct Project<'a> {
        label: &'a str,
        guests: &'a [GuestLine],
    }
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        job: &'a str,
        projects: Vec<Project<'a>>,
    }
    let projects = projects
        .iter()
        .map(|(label, guests)| Project { label, guests })
        .collect();
    render(
        "apply_interrupted.md",
        &View {
            executable,
            job,
            projects,
        },
    )
}

/// A lock released from the dashboard, announced on its PR: who, which lock, how to re-plan.
pub fn unlock_announcement(executable: &str, actor: &str, key: &LockKey) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        actor: &'a str,
        dir: String,
        project: Option<String>,
        workspace: String,
        flags: String,
    }
    render(
        "unlock_announcement.md",
        &View {
            executable,
            actor,
            dir: key.dir.to_string(),
            project: key.project.as_ref().map(ToString::to_string),
            workspace: key.workspace.to_string(),
            flags: key.plan_flags(),
        },
    )
}

/// The apply refusal when the commenter lacks write access.
pub fn apply_no_permission(user: &str) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        user: &'a str,
    }
    render("apply_no_permission.md", &View { user })
}

/// The apply refusal when an admin turned applies off (with their reason).
pub fn apply_turned_off(executable: &str, reason: &str) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        reason: &'a str,
    }
    render("apply_turned_off.md", &View { executable, reason })
}

/// The apply refusal when there is no current plan (`filtered`: the command had flags).
pub fn apply_no_plan(executable: &str, filtered: bool) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        filtered: bool,
    }
    render(
        "apply_no_plan.md",
        &View {
            executable,
            filtered,
        },
    )
}

/// One lock released by `atlantis unlock`.
#[derive(Debug, Clone, Serialize)]
pub struct ReleasedLock {
    pub label: String,
}

/// The answer to `atlantis unlock`.
pub fn unlocked(executable: &str, released: &[ReleasedLock]) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        released: &'a [ReleasedLock],
    }
    render(
        "unlock.md",
        &View {
            executable,
            released,
        },
    )
}

/// The most log lines a `--verbose` reply shows (the last ones), and the most characters.
pub const VERBOSE_LOG_LINES: usize = 400;
const VERBOSE_LOG_CHARS: usize = 48_000;

/// The job's own log, folded, for a command written with `--verbose` (Atlantis: "append Atlantis
/// log to comment"). It is the log the dashboard shows for the job: steps, never secrets. Only
/// the last lines are kept, within [`VERBOSE_LOG_LINES`] and a character budget.
pub fn verbose_log(lines: &[String]) -> String {
    #[derive(Serialize)]
    struct View {
        shown: usize,
        omitted: usize,
        text: String,
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut chars = 0usize;
    for line in lines.iter().rev().take(VERBOSE_LOG_LINES) {
        chars = chars.saturating_add(line.chars().count() + 1);
        if chars > VERBOSE_LOG_CHARS {
            break;
        }
        kept.push(line);
    }
    kept.reverse();
    render(
        "verbose_log.md",
        &View {
            shown: kept.len(),
            omitted: lines.len() - kept.len(),
            text: kept.join("\n"),
        },
    )
}

/// One job a cancel reply names: the command that queued it, who asked, its dashboard page.
#[derive(Debug, Clone, Serialize)]
pub struct CancelledJob {
    pub command: String,
    pub by: Option<String>,
    pub page: Option<String>,
}

/// The reply to `atlantis cancel`: the queued jobs it cancelled and those still running.
pub fn cancelled(executable: &str, cancelled: &[CancelledJob], running: &[CancelledJob]) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        cancelled: &'a [CancelledJob],
        running: &'a [CancelledJob],
    }
    render(
        "cancel.md",
        &View {
            executable,
            cancelled,
            running,
        },
    )
}

/// The note when a merged or closed PR's locks are released.
pub fn pr_closed(released: usize, merged: bool) -> String {
    #[derive(Serialize)]
    struct View {
        released: usize,
        merged: bool,
    }
    render("pr_closed.md", &View { released, merged })
}

/// A reply of the command grammar (usage, did-you-mean, an error), in a code block.
pub fn reply(text: &str) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        text: &'a str,
    }
    render("reply.md", &View { text })
}

/// `atlantis help`: each command's synopsis and summary (`(synopsis, summary)`).
pub fn help(commands: &[(String, String)]) -> String {
    #[derive(Serialize)]
    struct Entry<'a> {
        synopsis: &'a str,
        summary: &'a str,
    }
    #[derive(Serialize)]
    struct View<'a> {
        commands: Vec<Entry<'a>>,
    }
    let commands = commands
        .iter()
        .map(|(synopsis, summary)| Entry { synopsis, summary })
        .collect();
    render("help.md", &View { commands })
}

/// `atlantis version`.
pub fn version() -> String {
    #[derive(Serialize)]
    struct View {
        version: &'static str,
    }
    render(
        "version.md",
        &View {
            version: env!("CARGO_PKG_VERSION"),
        },
    )
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupted_apply_names_each_guest_escaped_and_the_next_step() {
        let body = apply_interrupted(
            "atlantis",
            "j-1",
            &[(
                "dir: a <b>".into(),
                vec![GuestLine {
                    address: "ct.`x`".into(),
                    status: "FAILED: <script>@alice".into(),
                }],
            )],
        );
        assert!(body.contains("**Apply Interrupted**"), "{body}");
        assert!(
            !body.contains("<script>") && !body.contains("<b>"),
            "{body}"
        );
        assert!(!body.contains("ct.`x`"), "{body}");
        assert!(!body.contains("@alice"), "{body}");
        assert!(
            body.contains("Nothing will be retried automatically"),
            "{body}"
        );
        assert!(body.contains("`atlantis plan`"), "{body}");
    }

    #[test]
    fn conflict_names_holder_and_replan_command() {
        let c = lock_conflict(
            "atlantis",
            &[ConflictView {
                label: "dir=envs/dev workspace=default".into(),
                holder_pr: 3,
                holder_url: "https://x/pr/3".into(),
                holder_user: "alice".into(),
                flags: "-d envs/dev".into(),
            }],
        );
        assert!(c.contains("pull request #3"));
        assert!(c.contains("`atlantis plan -d envs/dev`"));
    }

    #[test]
    fn plan_comment_for_blocked_project_offers_no_apply() {
        let p = ProjectPlanView {
            label: "dir=a".into(),
            flags: "-d a".into(),
            outcome: PlanOutcome::Planned {
                text: "~ x".into(),
                summary: "Plan: 0 to add".into(),
                blocked: 1,
                changes: true,
            },
        };
        let c = plan_comment("atlantis", &[p], &[]);
        assert!(c.contains("Blocked"));
        assert!(!c.contains("atlantis apply"));
    }

    #[test]
    fn unmet_requirements_are_each_named() {
        let c = unmet_requirements(
            "atlantis",
            &[
                Unmet::NotApproved,
                Unmet::Diverged {
                    base: "main".into(),
                },
            ],
        );
        assert!(c.contains("`approved`: the pull request has no approving review"));
        assert!(c.contains("`undiverged`: the base branch main has commits"));
    }
}
