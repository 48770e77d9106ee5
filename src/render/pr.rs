//! The PR comments the runner posts: plan results, apply progress, lock conflicts, unmet
//! requirements, stale plans, errors. Plain Rust over small view structs; every piece of
//! user-controlled text goes through [`escape`] or a code block.

use super::comment::{code_block, escape};

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
}

/// The plan comment for one or many projects, in Atlantis's layout.
pub fn plan_comment(executable: &str, projects: &[ProjectPlanView], warnings: &[String]) -> String {
    let mut out = String::new();
    if projects.len() > 1 {
        out.push_str(&format!("Ran Plan for {} projects:\n\n", projects.len()));
        for p in projects {
            out.push_str(&format!("1. {}\n", escape(&p.label)));
        }
        out.push_str("\n---\n\n");
    }
    for (i, p) in projects.iter().enumerate() {
        if i > 0 {
            out.push_str("\n---\n\n");
        }
        out.push_str(&project_section(executable, p));
    }
    let applicable = projects
        .iter()
        .filter(|p| {
            matches!(
                p.outcome,
                PlanOutcome::Planned {
                    blocked: 0,
                    changes: true,
                    ..
                }
            )
        })
        .count();
    if applicable > 0 && projects.len() > 1 {
        out.push_str(&format!(
            "\n---\n\n* :fast_forward: To apply all unapplied plans from this pull request, comment:\n  * `{executable} apply`\n"
        ));
    }
    for w in warnings {
        out.push_str(&format!("\n:warning: {}\n", escape(w)));
    }
    out
}

fn project_section(executable: &str, p: &ProjectPlanView) -> String {
    let label = escape(&p.label);
    match &p.outcome {
        PlanOutcome::Failed { error } => format!(
            "### {label}\n**Plan Error**\n{}\nFix the error, push a commit, or re-plan with `{executable} plan {}`.\n",
            code_block("", error, "Show error"),
            p.flags
        ),
        PlanOutcome::Planned {
            text,
            summary,
            blocked,
            changes,
        } => {
            let mut s = format!(
                "### {label}\n{}\n{}\n",
                code_block("diff", text, "Show Output"),
                escape(summary)
            );
            if *blocked > 0 {
                s.push_str(&format!(
                    "\n:no_entry: **Blocked**: {blocked} change(s) touch a protected guest; this plan cannot be applied. Change the configuration and push a new commit.\n"
                ));
            } else if *changes {
                s.push_str(&format!(
                    "\n* :arrow_forward: To **apply** this plan, comment:\n  * `{executable} apply {}`\n* :repeat: To **plan** this project again, comment:\n  * `{executable} plan {}`\n",
                    p.flags, p.flags
                ));
            }
            s
        }
    }
}

/// A lock held by another PR.
#[derive(Debug, Clone)]
pub struct ConflictView {
    pub label: String,
    pub holder_pr: u64,
    pub holder_url: String,
    pub flags: String,
}

/// The lock-conflict comment: names each holder PR and the exact command to re-plan.
pub fn lock_conflict(executable: &str, conflicts: &[ConflictView]) -> String {
    let mut out = String::from(
        "**Plan Failed**: the directories this pull request changes are locked by other pull requests.\n\n",
    );
    for c in conflicts {
        out.push_str(&format!(
            "* {} is locked by pull request #{} ({})\n",
            escape(&c.label),
            c.holder_pr,
            escape(&c.holder_url)
        ));
    }
    out.push_str("\nOnce the other pull request is merged, closed or unlocked, re-plan with:\n");
    for c in conflicts {
        out.push_str(&format!("* `{executable} plan {}`\n", c.flags));
    }
    out
}

/// The apply refusal when requirements are unmet; each one named.
pub fn unmet_requirements(executable: &str, unmet: &[(String, String)]) -> String {
    let mut out = String::from(
        "**Apply Failed**: this pull request does not meet the apply requirements:\n\n",
    );
    for (name, why) in unmet {
        out.push_str(&format!("* `{name}`: {}\n", escape(why)));
    }
    out.push_str(&format!(
        "\nMeet them, then comment `{executable} apply` again.\n"
    ));
    out
}

/// The apply refusal when the saved plan no longer matches.
pub fn stale(executable: &str, label: &str, reasons: &[String], flags: &str) -> String {
    let mut out = format!(
        "**Apply Failed** for {}: the plan is stale.\n\n",
        escape(label)
    );
    for r in reasons {
        out.push_str(&format!("* {}\n", escape(r)));
    }
    out.push_str(&format!(
        "\nRe-plan with `{executable} plan {flags}`, review the new plan, then apply again.\n"
    ));
    out
}

/// A failure with what to do next. `detail` (error text, possibly quoting user input) is shown
/// in a code block; `what` and `next` are atoll's own Markdown and must not carry user text.
pub fn error(what: &str, detail: &str, next: &str) -> String {
    format!(
        "**{what}**\n{}\n{next}\n",
        code_block("", detail, "Show error")
    )
}

/// One guest's apply progress line.
#[derive(Debug, Clone)]
pub struct GuestLine {
    pub address: String,
    pub status: String,
}

/// The apply comment, edited as guests finish; `done` is atoll's own closing Markdown.
pub fn apply_progress(label: &str, lines: &[GuestLine], done: Option<&str>) -> String {
    let mut out = format!("### Apply for {}\n\n", escape(label));
    if lines.is_empty() {
        out.push_str("Starting…\n");
    }
    for l in lines {
        out.push_str(&format!(
            "* `{}`: {}\n",
            code_safe(&l.address),
            escape(&l.status)
        ));
    }
    if let Some(done) = done {
        // atoll's own closing line (it names commands in backticks): not user text.
        out.push_str(&format!("\n{done}\n"));
    }
    out
}

/// The report of an apply cut short by a restart: per project, each guest's last known state
/// (from the apply's log), that nothing is retried, and the next step. `job` is atoll's id.
pub fn apply_interrupted(
    executable: &str,
    job: &str,
    projects: &[(String, Vec<GuestLine>)],
) -> String {
    let mut out = format!(
        "**Apply Interrupted**: atoll stopped (crash or restart) while this apply was running \
         (job `{}`), so it did not finish.\n\n",
        code_safe(job)
    );
    if projects.is_empty() {
        out.push_str("Its log names no guest: it stopped before changing any.\n");
    } else {
        out.push_str("What the apply's log says about each guest:\n");
    }
    for (label, guests) in projects {
        out.push_str(&format!("\n#### {}\n\n", escape(label)));
        for g in guests {
            out.push_str(&format!(
                "* `{}`: {}\n",
                code_safe(&g.address),
                escape(&g.status)
            ));
        }
    }
    out.push_str(&format!(
        "\nNothing will be retried automatically. Comment `{executable} plan` to see the real \
         state of the guests, review the new plan, then `{executable} apply` again.\n"
    ));
    out
}

fn code_safe(s: &str) -> String {
    s.replace('`', "'")
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
            &[("approved".into(), "no approving review".into())],
        );
        assert!(c.contains("`approved`: no approving review"));
    }
}
