//! GitHub pull request, review and comment events through `POST /events`: which fixture
//! becomes which job, autoplan deduplication per head SHA, drafts and the bot's own comments.

use crate::webhook_support;

use webhook_support::{Delivery, TestServer, fixture};

const PLAN_COMMENT: &str = "github/issue_comment.created.pr-plan.json";

/// (fixture, event, expected status, expected job kind or ignore-reason fragment)
const GITHUB_CASES: &[(&str, &str, u16, &str)] = &[
    (
        "github/pull_request.opened.json",
        "pull_request",
        202,
        "autoplan",
    ),
    (
        "github/pull_request.closed.json",
        "pull_request",
        202,
        "pr_closed",
    ),
    (
        "github/pull_request.converted_to_draft.json",
        "pull_request",
        200,
        "converted_to_draft",
    ),
    (
        "github/pull_request.labeled.json",
        "pull_request",
        200,
        "labeled",
    ),
    (
        "github/pull_request_review.submitted.json",
        "pull_request_review",
        200,
        "reviews",
    ),
    (
        "github/issue_comment.created.json",
        "issue_comment",
        200,
        "not a pull request",
    ),
    (
        "github/issue_comment.edited.json",
        "issue_comment",
        200,
        "not a pull request",
    ),
    (
        "github/issue_comment.edited.pr.json",
        "issue_comment",
        200,
        "only new comments",
    ),
];

#[tokio::test]
async fn each_github_fixture_gets_the_expected_outcome() {
    for (i, (file, event, status, what)) in GITHUB_CASES.iter().enumerate() {
        let server = TestServer::start().await;
        let (got, body) = Delivery::github(event, &format!("gh-{i}"), fixture(file))
            .send(&server)
            .await;
        assert_eq!(got, *status, "{file}: {body}");
        let jobs = server.jobs().await;
        if *status == 202 {
            assert_eq!(jobs.len(), 1, "{file}");
            assert_eq!(jobs[0].kind, *what, "{file}");
        } else {
            assert!(jobs.is_empty(), "{file}: {jobs:?}");
            let reason = body["reason"].as_str().unwrap_or_default();
            assert!(
                reason.contains(what),
                "{file}: reason {reason:?} lacks {what:?}"
            );
        }
        server.stop().await;
    }
}

#[tokio::test]
async fn autoplan_runs_once_per_head_sha() {
    // octokit's `opened`, `reopened`, `ready_for_review` and `synchronize` examples share one
    // head SHA: only the first queues an autoplan.
    let server = TestServer::start().await;
    let d = Delivery::github(
        "pull_request",
        "ap-1",
        fixture("github/pull_request.opened.json"),
    );
    assert_eq!(d.send(&server).await.0, 202);
    for (i, file) in [
        "github/pull_request.synchronize.json",
        "github/pull_request.reopened.json",
        "github/pull_request.ready_for_review.json",
    ]
    .iter()
    .enumerate()
    {
        let d = Delivery::github("pull_request", &format!("ap-{}", i + 2), fixture(file));
        let (status, body) = d.send(&server).await;
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("duplicate")),
            "{file}: {body}"
        );
    }
    let jobs = server.jobs().await;
    assert_eq!(jobs.len(), 1);
    assert_eq!(
        jobs[0].payload["head_sha"],
        "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
    );
    assert_eq!(jobs[0].payload["trigger"], "opened");
}

#[tokio::test]
async fn draft_pull_request_is_ignored_unless_allowed() {
    let body = String::from_utf8(fixture("github/pull_request.opened.json")).expect("utf-8");
    let draft = body
        .replacen("\"draft\": false", "\"draft\": true", 1)
        .into_bytes();
    let server = TestServer::start().await;
    let (status, resp) = Delivery::github("pull_request", "dr-1", draft.clone())
        .send(&server)
        .await;
    assert_eq!(status, 200, "{resp}");
    assert!(
        resp["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("draft"),
        "{resp}"
    );
    assert!(server.jobs().await.is_empty());
    server.stop().await;

    let server = TestServer::start_with(
        webhook_support::FIXTURE_REPOS,
        "webhook: {allow_draft_prs: true}\n",
    )
    .await;
    let (status, _) = Delivery::github("pull_request", "dr-2", draft)
        .send(&server)
        .await;
    assert_eq!(status, 202);
}

#[tokio::test]
async fn comment_by_the_bot_user_runs_nothing() {
    let body = String::from_utf8(fixture(PLAN_COMMENT)).expect("utf-8");
    // The comment author's login is the second "login" after `"comment": {`.
    let (head, tail) = body.split_at(body.find("\"comment\": {").expect("comment object"));
    let tail = tail.replacen("\"login\": \"Codertocat\"", "\"login\": \"atoll-bot\"", 1);
    let d = Delivery::github(
        "issue_comment",
        "bot-1",
        format!("{head}{tail}").into_bytes(),
    );
    let server = TestServer::start().await;
    let (status, resp) = d.send(&server).await;
    assert_eq!(status, 200, "{resp}");
    assert!(
        resp["reason"].as_str().unwrap_or_default().contains("bot"),
        "{resp}"
    );
    assert!(server.jobs().await.is_empty());
}
