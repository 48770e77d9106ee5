//! The policy comments: the check after a plan (Atlantis's "Policy Set" sections with its
//! "Policy Approval Status" lines) and the reply to `approve_policies`. Messages come from
//! the policies, which may quote a pull request's names: they are shown inside code blocks.

use serde::Serialize;

use super::template::render;
use crate::policies::{Approval, PolicyCheck, SetOutcome};

/// One project's policy check, as the comments show it.
#[derive(Debug, Clone)]
pub struct ProjectPolicyView {
    /// How the plan comment names the project.
    pub label: String,
    /// The flags that select it (`-d envs/dev`).
    pub flags: String,
    pub check: PolicyCheck,
}

#[derive(Serialize)]
struct SetContext<'a> {
    name: &'a str,
    passed: bool,
    error: Option<&'a str>,
    failures: String,
    warnings: String,
}

#[derive(Serialize)]
struct ProjectContext<'a> {
    label: &'a str,
    flags: &'a str,
    sets: Vec<SetContext<'a>>,
    status: String,
    cleared: bool,
}

fn lines(prefix: &str, messages: &[String]) -> String {
    messages
        .iter()
        .map(|m| format!("{prefix} - {m}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Atlantis's `PolicyApprovalSummary`: one line per set.
pub fn approval_status(check: &PolicyCheck) -> String {
    check
        .sets
        .iter()
        .map(status_line)
        .collect::<Vec<_>>()
        .join("\n")
}

fn status_line(set: &SetOutcome) -> String {
    if set.passed() {
        format!("policy set: {}: passed.", set.name)
    } else if set.cleared() {
        format!("policy set: {}: approved.", set.name)
    } else {
        format!(
            "policy set: {}: requires: {} approval(s), have: {}.",
            set.name,
            set.approve_count,
            set.approvals.len()
        )
    }
}

fn project(p: &ProjectPolicyView) -> ProjectContext<'_> {
    ProjectContext {
        label: &p.label,
        flags: &p.flags,
        sets: p
            .check
            .sets
            .iter()
            .map(|s| SetContext {
                name: &s.name,
                passed: s.passed(),
                error: s.error.as_deref(),
                failures: lines("FAIL", &s.failures),
                warnings: lines("WARN", &s.warnings),
            })
            .collect(),
        status: approval_status(&p.check),
        cleared: p.check.cleared(),
    }
}

/// The comment after the plans of a command, one section per planned project.
pub fn policy_check(executable: &str, projects: &[ProjectPolicyView]) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        projects: Vec<ProjectContext<'a>>,
        blocking: usize,
    }
    render(
        "policy_check.md",
        &View {
            executable,
            blocking: projects.iter().filter(|p| !p.check.cleared()).count(),
            projects: projects.iter().map(project).collect(),
        },
    )
}

/// One project's result of `approve_policies`.
#[derive(Debug, Clone)]
pub struct ApprovedProject {
    pub label: String,
    pub events: Vec<Approval>,
    pub check: PolicyCheck,
}

/// The reply to `approve_policies`; `filtered` when `-p/-d/-w` selected the projects.
pub fn approve_policies(
    executable: &str,
    user: &str,
    projects: &[ApprovedProject],
    filtered: bool,
) -> String {
    #[derive(Serialize)]
    struct Project<'a> {
        label: &'a str,
        events: &'a [Approval],
        status: String,
    }
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        user: &'a str,
        filtered: bool,
        projects: Vec<Project<'a>>,
        blocking: usize,
    }
    render(
        "approve_policies.md",
        &View {
            executable,
            user,
            filtered,
            blocking: projects.iter().filter(|p| !p.check.cleared()).count(),
            projects: projects
                .iter()
                .map(|p| Project {
                    label: &p.label,
                    events: &p.events,
                    status: approval_status(&p.check),
                })
                .collect(),
        },
    )
}
