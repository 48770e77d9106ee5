//! What the runner posts, black-box over the fake forges: commit statuses linking to the job
//! page, very long plans split into several valid comments, and `parallel_plan` /
//! `parallel_apply` from `atlantis.yaml` (concurrent work, results in a stable order).

use std::time::{Duration, Instant};

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use model::ForgeKind;

const PUBLIC_URL: &str = "https://atoll.example.com";

/// `count` copies (or one, without `count`) of a described container with memory: a bigger
/// plan per guest than the plain fixture.
fn container(name: &str, count: Option<u32>) -> String {
    Container::new(name)
        .count(count)
        .cores(2)
        .body(&format!(
            "  description = \"container {name}\"\n  memory {{\n    dedicated = 512\n  }}"
        ))
        .hcl()
}

/// Opens a PR by alice from `branch` with `files` (path, content).
async fn open_pr(w: &TestApp, branch: &str, files: &[(&str, String)]) -> u64 {
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    w.fake()
        .open_pr(REPO, "alice", branch, &files)
        .await
        .expect("pr")
}

/// A world for `kind` with `server_extra` added to the `server:` section and `forge_extra` to
/// the forge's section (after its token); 100 ms PVE tasks, 90 s waits for comments.
async fn world(kind: ForgeKind, server_extra: &str, forge_extra: &str) -> TestApp {
    let base = options(kind);
    TestApp::start(Options {
        server_extra: server_extra.to_owned(),
        auth: format!("{}{forge_extra}", base.auth),
        ..base
    })
    .await
}

/// The support's defaults for `kind`, with 100 ms PVE tasks and 90 s waits for comments.
fn options(kind: ForgeKind) -> Options {
    Options {
        task: Duration::from_millis(100),
        wait: Duration::from_secs(90),
        ..Options::new(kind)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_plan_and_apply_statuses_link_to_their_job_pages() {
    statuses_link_to_their_job_pages(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_plan_and_apply_statuses_link_to_their_job_pages() {
    statuses_link_to_their_job_pages(ForgeKind::Gitea).await;
}

async fn statuses_link_to_their_job_pages(kind: ForgeKind) {
    // A trailing slash in the config is dropped when links are made.
    let mut w = world(kind, &format!(", public_url: '{PUBLIC_URL}/'"), "").await;
    let pr = open_pr(&w, "web", &[("envs/dev/main.tf", container("web", None))]).await;
    w.comment_containing(pr, "Plan:").await;
    w.approve_and_apply(pr).await;
    w.comment_containing(pr, "Apply complete").await;
    let plan_jobs = w.finished_jobs("autoplan").await;
    let apply_jobs = w.finished_jobs("apply").await;
    let sha = w.fake().head_sha(REPO, pr).expect("sha");
    let statuses = w.fake().statuses(REPO, &sha);
    for (prefix, jobs) in [
        ("atlantis/plan", &plan_jobs),
        ("atlantis/apply", &apply_jobs),
    ] {
        let of_kind: Vec<_> = statuses
            .iter()
            .filter(|s| s.context.starts_with(prefix))
            .collect();
        assert!(!of_kind.is_empty(), "no {prefix} status: {statuses:#?}");
        let pages: Vec<String> = jobs
            .iter()
            .map(|(id, _)| format!("{PUBLIC_URL}/jobs/{id}"))
            .collect();
        for s in of_kind {
            let url = s.target_url.as_deref().unwrap_or_default();
            assert!(
                pages.iter().any(|p| p == url),
                "{s:?} links to none of {pages:?}"
            );
        }
    }
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statuses_carry_no_link_without_a_public_url() {
    let mut w = world(ForgeKind::Github, "", "").await;
    let pr = open_pr(&w, "web", &[("envs/dev/main.tf", container("web", None))]).await;
    w.comment_containing(pr, "Plan:").await;
    w.finished_jobs("autoplan").await;
    let sha = w.fake().head_sha(REPO, pr).expect("sha");
    let statuses = w.fake().statuses(REPO, &sha);
    assert!(!statuses.is_empty());
    assert!(
        statuses.iter().all(|s| s.target_url.is_none()),
        "{statuses:#?}"
    );
    w.stop().await;
}

fn fences_balanced(body: &str) -> bool {
    body.lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count()
        % 2
        == 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_plan_of_5000_lines_arrives_as_several_valid_comments() {
    long_plan_arrives_as_several_valid_comments(ForgeKind::Github, "", 65_536).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_plan_of_5000_lines_arrives_as_several_comments_under_its_configured_limit() {
    long_plan_arrives_as_several_valid_comments(
        ForgeKind::Gitea,
        ", max_comment_chars: 20000",
        20_000,
    )
    .await;
}

async fn long_plan_arrives_as_several_valid_comments(kind: ForgeKind, extra: &str, max: usize) {
    let base = options(kind);
    // Above the default cap of comments per reply: this is about splitting, not cutting.
    let mut w = TestApp::start(Options {
        auth: format!("{}{extra}", base.auth),
        extra: "commands: {max_reply_comments: 50}\n".to_owned(),
        ..base
    })
    .await;
    // The fake refuses anything longer, as a forge with this limit would.
    if kind == ForgeKind::Gitea {
        w.fake().set_max_comment_chars(max);
    }
    let pr = open_pr(
        &w,
        "big",
        &[("envs/big/main.tf", container("lxc", Some(400)))],
    )
    .await;
    let last = w.comment_containing(pr, "Plan: 400 to add").await;
    w.finished_jobs("autoplan").await;
    let parts = w.bot_comments(pr);
    assert!(parts.len() > 1, "one comment only: {}", parts[0].body.len());
    assert_eq!(
        parts.last().map(|c| c.id),
        Some(last.id),
        "summary comes last"
    );
    let mut lines = 0;
    for (i, part) in parts.iter().enumerate() {
        let body = &part.body;
        assert!(
            body.chars().count() <= max,
            "part {i} is {} chars",
            body.chars().count()
        );
        assert!(
            fences_balanced(body),
            "part {i} has an unbalanced fence:\n{body}"
        );
        assert_eq!(
            body.matches("<details>").count(),
            body.matches("</details>").count(),
            "part {i} has unbalanced <details>"
        );
        if i > 0 {
            assert!(body.starts_with(&format!("(continued, part {} of {}", i + 1, parts.len())));
        }
        lines += body.lines().count();
    }
    assert!(lines >= 5_000, "only {lines} lines of plan");
    let all: String = parts.iter().map(|c| c.body.as_str()).collect();
    for i in [0, 199, 399] {
        assert!(
            all.contains(&format!("lxc[{i}] will be created")),
            "lxc[{i}] missing"
        );
    }
    w.stop().await;
}

const PARALLEL_YAML: &str = "version: 3\nparallel_plan: true\nparallel_apply: true\nprojects:\n  - dir: envs/b\n  - dir: envs/a\n";

fn position(log: &[String], line: &str) -> usize {
    log.iter()
        .position(|l| l == line)
        .unwrap_or_else(|| panic!("no {line:?} in the job log: {log:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_plan_and_apply_work_on_both_projects_at_once_and_report_in_order() {
    let mut w = world(ForgeKind::Github, "", "").await;
    let pr = open_pr(
        &w,
        "two",
        &[
            ("atlantis.yaml", PARALLEL_YAML.to_owned()),
            ("envs/a/main.tf", container("alpha", None)),
            ("envs/b/main.tf", container("bravo", None)),
        ],
    )
    .await;
    let plan = w.comment_containing(pr, "Ran Plan for 2 projects").await;
    // Results in the order atlantis.yaml lists the projects, whichever finished first.
    let (b, a) = (
        plan.body.find("### dir: envs/b").expect("b section"),
        plan.body.find("### dir: envs/a").expect("a section"),
    );
    assert!(b < a, "{}", plan.body);
    let plan_log = &w.finished_jobs("autoplan").await[0].1;
    // Both projects were being planned before either plan was saved.
    let started = position(plan_log, "plan dir: envs/a workspace: default")
        .max(position(plan_log, "plan dir: envs/b workspace: default"));
    let saved = position(plan_log, "save plan dir: envs/a workspace: default").min(position(
        plan_log,
        "save plan dir: envs/b workspace: default",
    ));
    assert!(
        started < saved,
        "plans ran one after the other: {plan_log:#?}"
    );

    w.approve_and_apply(pr).await;
    let deadline = Instant::now() + Duration::from_secs(90);
    while w
        .bot_comments(pr)
        .iter()
        .filter(|c| c.body.contains("Apply complete"))
        .count()
        < 2
    {
        assert!(Instant::now() < deadline, "{:#?}", w.bot_comments(pr));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The apply comments, too, are posted in atlantis.yaml's order, like the plan comment
    // (each project takes its turn to post).
    let applies: Vec<String> = w
        .bot_comments(pr)
        .iter()
        .filter(|c| c.body.starts_with("### Apply for"))
        .map(|c| c.body.lines().next().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        applies,
        [
            "### Apply for dir: envs/b workspace: default",
            "### Apply for dir: envs/a workspace: default"
        ],
        "{applies:#?}"
    );
    let apply_log = &w.finished_jobs("apply").await[0].1;
    let checked = position(apply_log, "freshness dir: envs/a workspace: default").max(position(
        apply_log,
        "freshness dir: envs/b workspace: default",
    ));
    let guarded = position(apply_log, "guard dir: envs/a workspace: default")
        .min(position(apply_log, "guard dir: envs/b workspace: default"));
    assert!(
        checked < guarded,
        "applies ran one after the other: {apply_log:#?}"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_app_credentials_from_the_config_plan_and_comment_as_the_app() {
    let key = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/forge/test-app-key.pem"
    );
    let auth = format!(
        "bot_user: 'atoll[bot]', app_id: 4242, installation_id: 77, app_private_key_file: '{key}'"
    );
    let mut w = TestApp::start(Options {
        auth,
        bot: "atoll[bot]".to_owned(),
        ..options(ForgeKind::Github)
    })
    .await;
    w.fake().enable_app(
        4242,
        77,
        include_str!("../fixtures/forge/test-app-key.pub.pem"),
    );
    let pr = open_pr(&w, "web", &[("envs/dev/main.tf", container("web", None))]).await;
    w.comment_containing(pr, "Plan: 1 to add").await;
    assert!(
        w.fake().minted_tokens() >= 1,
        "no installation token was minted"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_apply_command_applies_every_planned_project_in_turn() {
    let mut w = world(ForgeKind::Gitea, "", "").await;
    let yaml = "version: 3\nprojects:\n  - dir: envs/a\n  - dir: envs/b\n";
    let pr = open_pr(
        &w,
        "two",
        &[
            ("atlantis.yaml", yaml.to_owned()),
            ("envs/a/main.tf", container("alpha", None)),
            ("envs/b/main.tf", container("bravo", None)),
        ],
    )
    .await;
    w.comment_containing(pr, "Ran Plan for 2 projects").await;
    w.approve_and_apply(pr).await;
    let apply_log = &w.finished_jobs("apply").await[0].1;
    // One after another: the second project starts once the first is done.
    let (fa, fb) = (
        position(apply_log, "freshness dir: envs/a workspace: default"),
        position(apply_log, "freshness dir: envs/b workspace: default"),
    );
    let (ga, gb) = (
        position(apply_log, "guard dir: envs/a workspace: default"),
        position(apply_log, "guard dir: envs/b workspace: default"),
    );
    let first_guard = if fa < fb { ga } else { gb };
    assert!(first_guard < fa.max(fb), "{apply_log:#?}");
    let applied: Vec<_> = w
        .bot_comments(pr)
        .into_iter()
        .filter(|c| c.body.contains("Apply complete"))
        .collect();
    assert_eq!(applied.len(), 2, "{:#?}", w.bot_comments(pr));
    w.stop().await;
}
