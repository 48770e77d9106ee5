//! PR comments rendered from the templates under `templates/comments/`: one snapshot per
//! comment kind (snapshots in `tests/snapshots/`), and an escaping test that pushes HTML,
//! mentions and Markdown control characters through every piece of user text of every
//! template.

use atoll::locks::Stale;
use atoll::policies::{Approval, PolicyCheck, SetOutcome};
use atoll::render::notice::{self, JobRef};
use atoll::render::policies;
use atoll::render::pr::{
    self, ConflictView, GuestLine, PlanOutcome, ProjectPlanView, ReleasedLock, Unmet,
};

const JOB: JobRef<'static> = JobRef {
    id: "0c0ffee0-0000-4000-8000-000000000003",
    link: None,
};

const EVIL: &str = "<script>alert(1)</script> @admins [x](http://e) *b* _i_ `c` ``` | # ~";

fn planned(label: &str, flags: &str, text: &str, blocked: usize, changes: bool) -> ProjectPlanView {
    ProjectPlanView {
        label: label.to_owned(),
        flags: flags.to_owned(),
        outcome: PlanOutcome::Planned {
            text: text.to_owned(),
            summary: "Plan: 1 to add, 0 to change, 0 to destroy. 0 restart. 0 blocked.".to_owned(),
            blocked,
            changes,
        },
    }
}

fn short_plan() -> String {
    "  # proxmox_virtual_environment_container.web will be created\n  + resource \"proxmox_virtual_environment_container\" \"web\" {\n      + node_name = \"pve\"\n    }\n\nPlan: 1 to add, 0 to change, 0 to destroy. 0 restart. 0 blocked.\n".to_owned()
}

fn long_plan() -> String {
    (0..20).map(|i| format!("  + line {i}\n")).collect()
}

fn every_comment(user: &str) -> Vec<(&'static str, String)> {
    let failed = ProjectPlanView {
        label: user.to_owned(),
        flags: "-d envs/x".to_owned(),
        outcome: PlanOutcome::Failed {
            error: user.to_owned(),
        },
    };
    let lines = vec![
        GuestLine {
            address: format!("proxmox_virtual_environment_container.lxc[\"{user}\"]"),
            status: format!("done: {user}"),
        },
        GuestLine {
            address: "proxmox_virtual_environment_container.db".to_owned(),
            status: "start…".to_owned(),
        },
    ];
    let released = vec![ReleasedLock {
        label: user.to_owned(),
    }];
    let outputs = format!("greeting = \"{user}\"\nroot_password = <sensitive>\n");
    vec![
        (
            "plan_one_project",
            pr::plan_comment(
                "atlantis",
                &[planned(user, "-d envs/dev", &short_plan(), 0, true)],
                &[],
            ),
        ),
        (
            "plan_many_projects",
            pr::plan_comment(
                "atlantis",
                &[
                    planned(
                        "dir: envs/dev workspace: default",
                        "-d envs/dev",
                        &short_plan(),
                        0,
                        true,
                    ),
                    planned(
                        "dir: envs/prod workspace: default",
                        "-d envs/prod",
                        &long_plan(),
                        1,
                        true,
                    ),
                    planned(
                        "dir: envs/qa workspace: default",
                        "-d envs/qa",
                        "No changes.\n",
                        0,
                        false,
                    ),
                    failed,
                ],
                &[user.to_owned()],
            ),
        ),
        (
            "plan_no_projects",
            pr::no_projects("atlantis", &[user.to_owned()]),
        ),
        (
            "lock_conflict",
            pr::lock_conflict(
                "atlantis",
                &[ConflictView {
                    label: user.to_owned(),
                    holder_pr: 3,
                    holder_url: format!("https://github.com/acme/infra/pull/3?{user}"),
                    flags: "-d envs/dev".to_owned(),
                    holder_user: user.to_owned(),
                }],
            ),
        ),
        (
            "unmet_requirements",
            pr::unmet_requirements(
                "atlantis",
                &[
                    Unmet::NotMergeable {
                        reason: user.to_owned(),
                    },
                    Unmet::Diverged {
                        base: user.to_owned(),
                    },
                ],
            ),
        ),
        (
            "stale",
            pr::stale(
                "atlantis",
                user,
                &[
                    Stale::HeadSha {
                        planned: user.to_owned(),
                        now: user.to_owned(),
                    },
                    Stale::StateFingerprint {
                        planned: String::new(),
                        now: String::new(),
                    },
                ],
                Some(user),
                "-d envs/dev",
            ),
        ),
        (
            "error",
            pr::error(
                "Plan Error",
                user,
                "Fix the cause, then comment `atlantis plan` to try again.",
            ),
        ),
        ("apply_starting", pr::apply_progress(user, &[], None)),
        (
            "apply_done",
            pr::apply_progress(
                user,
                &lines,
                Some(&pr::ApplyEnd {
                    failed: false,
                    executable: "atlantis",
                    flags: "-d envs/dev",
                    outputs: &outputs,
                    checks: "",
                }),
            ),
        ),
        (
            "apply_failed",
            pr::apply_progress(
                user,
                &lines,
                Some(&pr::ApplyEnd {
                    failed: true,
                    executable: "atlantis",
                    flags: user,
                    outputs: "",
                    checks: "",
                }),
            ),
        ),
        ("apply_no_permission", pr::apply_no_permission(user)),
        ("apply_turned_off", pr::apply_turned_off("atlantis", user)),
        ("apply_no_plan", pr::apply_no_plan("atlantis", true)),
        ("unlock_released", pr::unlocked("atlantis", &released)),
        ("unlock_nothing", pr::unlocked("atlantis", &[])),
        ("locks_released_on_merge", pr::pr_closed(2, true)),
        ("reply", pr::reply(user)),
        (
            "help",
            pr::help(&[
                (
                    "atlantis plan [-d DIR] [-w WS]".to_owned(),
                    "plan the projects".to_owned(),
                ),
                ("atlantis apply".to_owned(), "apply the plans".to_owned()),
            ]),
        ),
        ("version", pr::version()),
        (
            "apply_interrupted",
            pr::apply_interrupted(
                "atlantis",
                "0c0ffee0-0000-4000-8000-000000000001",
                &[(user.to_owned(), lines.clone())],
            ),
        ),
        (
            "apply_interrupted_before_any_guest",
            pr::apply_interrupted("atlantis", "0c0ffee0-0000-4000-8000-000000000002", &[]),
        ),
        (
            "unlock_announcement",
            pr::unlock_announcement("atlantis", user, &lock_key()),
        ),
        ("fork_refused", notice::fork_refused("Plan", Some(user))),
        (
            "fork_refused_deleted_fork",
            notice::fork_refused("Apply", None),
        ),
        (
            "unlock_no_permission",
            notice::unlock_no_permission(
                "atlantis",
                user,
                "write access to this repository or authorship of this pull request",
            ),
        ),
        (
            "reply_truncated",
            notice::reply_truncated(4, 121, 3_900_000, JOB),
        ),
        (
            "apply_coalesced_in_flight",
            notice::apply_coalesced("atlantis", JOB, true),
        ),
        (
            "apply_coalesced_applied",
            notice::apply_coalesced("atlantis", JOB, false),
        ),
        (
            "job_gave_up",
            notice::job_gave_up("atlantis", "Plan", "plan", 3, JOB),
        ),
        (
            "policy_check",
            policies::policy_check("atlantis", &policy_views(user)),
        ),
        (
            "approve_policies",
            policies::approve_policies("atlantis", user, &approved_projects(user), false),
        ),
        (
            "approve_policies_nothing",
            policies::approve_policies("atlantis", user, &[], true),
        ),
        (
            "unmet_policies",
            pr::unmet_requirements(
                "atlantis",
                &[
                    Unmet::PoliciesFailed {
                        project: user.to_owned(),
                        flags: "-d envs/dev".to_owned(),
                        sets: vec!["unprivileged".to_owned()],
                    },
                    Unmet::PoliciesUnchecked {
                        project: "web".to_owned(),
                        flags: "-p web".to_owned(),
                    },
                ],
            ),
        ),
        (
            "apply_done_checks",
            pr::apply_progress(
                user,
                &lines,
                Some(&pr::ApplyEnd {
                    failed: false,
                    executable: "atlantis",
                    flags: "-d envs/dev",
                    outputs: "",
                    checks: &format!("Warning: Check block assertion failed\n\n{user}"),
                }),
            ),
        ),
    ]
}

fn outcome(name: &str, failures: &[String], approvals: &[&str]) -> SetOutcome {
    SetOutcome {
        name: name.to_owned(),
        failures: failures.to_vec(),
        warnings: Vec::new(),
        error: None,
        approve_count: 1,
        approvals: approvals.iter().map(|a| (*a).to_owned()).collect(),
    }
}

/// A failing project (a deny message quoting user text, a warning, an evaluation error) and a
/// passing one.
fn policy_views(user: &str) -> Vec<policies::ProjectPolicyView> {
    let mut warned = outcome("datastores", &[], &[]);
    warned.warnings = vec![format!("{user} is large")];
    let mut broken = outcome("broken", &[], &[]);
    broken.error = Some(format!("bad.rego is not valid Rego: {user}"));
    vec![
        policies::ProjectPolicyView {
            label: user.to_owned(),
            flags: "-d envs/dev".to_owned(),
            check: PolicyCheck {
                sets: vec![
                    outcome("unprivileged", &[format!("{user}: privileged")], &[]),
                    warned,
                    broken,
                ],
            },
        },
        policies::ProjectPolicyView {
            label: "web".to_owned(),
            flags: "-p web".to_owned(),
            check: PolicyCheck {
                sets: vec![outcome("unprivileged", &[], &[])],
            },
        },
    ]
}

fn approved_projects(user: &str) -> Vec<policies::ApprovedProject> {
    vec![policies::ApprovedProject {
        label: user.to_owned(),
        events: vec![
            Approval::Approved {
                set: "unprivileged".to_owned(),
                have: 1,
                need: 1,
            },
            Approval::NotOwner {
                set: "datastores".to_owned(),
            },
            Approval::SelfApprove {
                set: "storage".to_owned(),
            },
        ],
        check: PolicyCheck {
            sets: vec![
                outcome("unprivileged", &["x".to_owned()], &[user]),
                outcome("datastores", &["y".to_owned()], &[]),
            ],
        },
    }]
}

fn lock_key() -> atoll::locks::LockKey {
    atoll::locks::LockKey {
        repo: "github.com/acme/infra".to_owned(),
        dir: atoll::commands::RepoDir::parse("envs/dev").expect("dir"),
        workspace: atoll::commands::Workspace::parse("staging").expect("workspace"),
        project: None,
    }
}

#[test]
fn every_comment_kind_renders_like_its_snapshot() {
    for (name, body) in every_comment("dev-web") {
        let body = body.replace(env!("CARGO_PKG_VERSION"), "VERSION");
        insta::assert_snapshot!(format!("comment_{name}"), body);
    }
}

fn fences_balanced(body: &str) -> bool {
    body.lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count()
        % 2
        == 0
}

/// The parts of `body` that render as Markdown prose: fenced blocks, inline code spans and
/// backslash-escaped characters removed (what is left is what a forge would interpret).
fn prose(body: &str) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    for line in body.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut chars = line.chars();
        let mut in_span = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' if !in_span => {
                    chars.next();
                }
                '`' => in_span = !in_span,
                c if !in_span => out.push(c),
                _ => {}
            }
        }
        out.push('\n');
    }
    out
}

#[test]
fn user_text_cannot_inject_html_mention_anyone_or_break_fences_in_any_comment() {
    for (name, body) in every_comment(EVIL) {
        let prose = prose(&body);
        assert!(!prose.contains("<script"), "{name}: HTML injected:\n{body}");
        assert!(!body.contains("@admins"), "{name}: mention:\n{body}");
        assert!(!prose.contains("]("), "{name}: link injected:\n{body}");
        assert!(!prose.contains("*b*"), "{name}: emphasis injected:\n{body}");
        assert!(fences_balanced(&body), "{name}: unbalanced fences:\n{body}");
        assert_eq!(
            body.matches("<details>").count(),
            body.matches("</details>").count(),
            "{name}: unbalanced details:\n{body}"
        );
    }
}

#[test]
fn notices_link_the_job_page_when_the_public_url_is_set() {
    let job = JobRef {
        id: "j-1",
        link: Some("https://atoll.example.com/jobs/j-1"),
    };
    let link = "(https://atoll.example.com/jobs/j-1)";
    for body in [
        notice::reply_truncated(4, 9, 100, job),
        notice::apply_coalesced("atlantis", job, true),
        notice::apply_coalesced("atlantis", job, false),
        notice::job_gave_up("atlantis", "Apply", "apply", 3, job),
    ] {
        assert!(body.contains(link), "{body}");
    }
}

#[test]
fn output_over_twelve_lines_folds_and_short_output_does_not() {
    let short = pr::plan_comment(
        "atlantis",
        &[planned("a", "-d a", &"x\n".repeat(12), 0, true)],
        &[],
    );
    assert!(!short.contains("<details>"), "{short}");
    let long = pr::plan_comment(
        "atlantis",
        &[planned("a", "-d a", &"x\n".repeat(13), 0, true)],
        &[],
    );
    assert!(
        long.contains("<details><summary>Show Output</summary>"),
        "{long}"
    );
}
