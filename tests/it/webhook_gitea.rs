//! Gitea and Forgejo deliveries over real HTTP: routing on `X-Gitea-Event-Type`, their own
//! signature headers and secret.

use crate::webhook_support;

use webhook_support::{Delivery, GITHUB_SECRET, TestServer, fixture};

/// (fixture, X-Gitea-Event, X-Gitea-Event-Type, status, job kind or ignore-reason fragment)
const CASES: &[(&str, &str, &str, u16, &str)] = &[
    (
        "gitea/pull_request.opened.json",
        "pull_request",
        "pull_request",
        202,
        "autoplan",
    ),
    (
        "gitea/pull_request_sync.synchronized.json",
        "pull_request",
        "pull_request_sync",
        202,
        "autoplan",
    ),
    (
        "gitea/pull_request.reopened.json",
        "pull_request",
        "pull_request",
        202,
        "autoplan",
    ),
    (
        "gitea/pull_request.closed.merged.json",
        "pull_request",
        "pull_request",
        202,
        "pr_closed",
    ),
    (
        "gitea/issue_comment.pull_request_comment.created.json",
        "issue_comment",
        "pull_request_comment",
        202,
        "plan",
    ),
    (
        "gitea/issue_comment.pull_request_comment.edited.json",
        "issue_comment",
        "pull_request_comment",
        200,
        "only new comments",
    ),
    (
        "gitea/issue_comment.issue_comment.created.json",
        "issue_comment",
        "issue_comment",
        200,
        "not a pull request",
    ),
    (
        "gitea/pull_request_review_approved.reviewed.json",
        "pull_request_approved",
        "pull_request_review_approved",
        200,
        "reviews",
    ),
    (
        "gitea/pull_request_review_rejected.reviewed.json",
        "pull_request_rejected",
        "pull_request_review_rejected",
        200,
        "reviews",
    ),
];

#[tokio::test]
async fn each_gitea_fixture_gets_the_expected_outcome() {
    for (i, (file, event, event_type, status, what)) in CASES.iter().enumerate() {
        let server = TestServer::start().await;
        let d = Delivery::gitea(event, event_type, &format!("gt-{i}"), fixture(file));
        let (got, body) = d.send(&server).await;
        assert_eq!(got, *status, "{file}: {body}");
        let jobs = server.jobs().await;
        if *status == 202 {
            assert_eq!(jobs.len(), 1, "{file}");
            assert_eq!(jobs[0].kind, *what, "{file}");
            assert_eq!(jobs[0].repo, "gitea.example.com/acme/infra", "{file}");
            assert_eq!(jobs[0].payload["forge"], "gitea", "{file}");
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
async fn gitea_comment_carries_the_parsed_command() {
    let server = TestServer::start().await;
    let file = "gitea/issue_comment.pull_request_comment.created.json";
    let d = Delivery::gitea(
        "issue_comment",
        "pull_request_comment",
        "gc-1",
        fixture(file),
    );
    assert_eq!(d.send(&server).await.0, 202);
    let jobs = server.jobs().await;
    assert_eq!(jobs[0].pr, Some(12));
    assert_eq!(jobs[0].payload["command"]["dir"], "envs/dev");
    assert_eq!(jobs[0].payload["comment_id"], 88);
    assert_eq!(jobs[0].payload["author"], "bob");
}

#[tokio::test]
async fn gitea_sync_is_routed_on_event_type_not_event() {
    // X-Gitea-Event says `pull_request` for new commits too; only the type tells them apart.
    let server = TestServer::start().await;
    let file = "gitea/pull_request_sync.synchronized.json";
    let d = Delivery::gitea("pull_request", "pull_request_sync", "gs-1", fixture(file));
    assert_eq!(d.send(&server).await.0, 202);
    let jobs = server.jobs().await;
    assert_eq!(jobs[0].payload["trigger"], "updated");
    assert_eq!(
        jobs[0].payload["head_sha"],
        "9f1d3b7a2e8c4f6a0d5b1e9c7a3f8d2b6e4c0a15"
    );
}

#[tokio::test]
async fn gitea_review_comment_header_never_runs_a_command() {
    // `X-Gitea-Event: pull_request_comment` is a review comment, even if it looks like a command.
    let server = TestServer::start().await;
    let file = "gitea/issue_comment.pull_request_comment.created.json";
    let d = Delivery::gitea(
        "pull_request_comment",
        "pull_request_review_comment",
        "rc-1",
        fixture(file),
    );
    let (status, body) = d.send(&server).await;
    assert_eq!(status, 200, "{body}");
    assert!(server.jobs().await.is_empty());
}

#[tokio::test]
async fn gitea_is_detected_before_github_and_verified_with_its_own_secret() {
    // Gitea also sends X-GitHub-Event and X-Hub-Signature-256. A delivery carrying Gitea headers
    // but signed with the GitHub secret must fail: the Gitea secret is the one that counts.
    let server = TestServer::start().await;
    let file = "gitea/pull_request.opened.json";
    let body = fixture(file);
    let github_sig = atoll::webhook::sign(GITHUB_SECRET, &body);
    let d = Delivery::gitea("pull_request", "pull_request", "gx-1", body)
        .set_header("x-gitea-signature", &github_sig)
        .set_header("x-hub-signature-256", &format!("sha256={github_sig}"));
    assert_eq!(d.send(&server).await.0, 401);
    let d = Delivery::gitea("pull_request", "pull_request", "gx-1", fixture(file));
    assert_eq!(d.send(&server).await.0, 202);
}

#[tokio::test]
async fn gitea_empty_signature_header_counts_as_missing() {
    // Gitea sends the headers empty when its side has no secret.
    let server = TestServer::start().await;
    let d = Delivery::gitea(
        "pull_request",
        "pull_request",
        "ge-1",
        fixture("gitea/pull_request.opened.json"),
    )
    .set_header("x-gitea-signature", "");
    let (status, body) = d.send(&server).await;
    assert_eq!(status, 401);
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("missing signature"),
        "{body}"
    );
}

#[tokio::test]
async fn forgejo_headers_are_accepted_with_the_gitea_secret() {
    let server = TestServer::start().await;
    let file = "gitea/issue_comment.pull_request_comment.created.json";
    let d = Delivery::forgejo(
        "issue_comment",
        "pull_request_comment",
        "fj-1",
        fixture(file),
    )
    .without_header("x-gitea-signature");
    assert_eq!(d.send(&server).await.0, 202);
    let wrong = Delivery::forgejo(
        "issue_comment",
        "pull_request_comment",
        "fj-2",
        fixture(file),
    )
    .set_header("x-forgejo-signature", &"00".repeat(32));
    assert_eq!(wrong.send(&server).await.0, 401);
}

#[tokio::test]
async fn disabled_forge_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = format!(
        "server: {{listen: '127.0.0.1:0'}}\ndata_dir: {:?}\n\
         github: {{enabled: true, webhook_secret: x}}\nrepo_allowlist: ['*']\n",
        dir.path()
    );
    let loaded = atoll::config::from_sources(&yaml, std::iter::empty()).expect("config");
    let app = atoll::app::App::build(&loaded.settings).await.expect("app");
    let addr = app.local_addr().expect("addr");
    let server = tokio::spawn(app.serve(std::future::pending()));
    let d = Delivery::gitea(
        "pull_request",
        "pull_request",
        "dis-1",
        fixture("gitea/pull_request.opened.json"),
    );
    let mut req = webhook_support::client().post(format!("http://{addr}/events"));
    for (n, v) in &d.headers {
        req = req.header(n.as_str(), v.as_str());
    }
    let resp = req.body(d.body.clone()).send().await.expect("post");
    assert_eq!(resp.status(), 404);
    let text = resp.text().await.expect("body");
    assert!(text.contains("gitea.enabled"), "{text}");
    server.abort();
}
