//! `POST /events` over real HTTP against the real server (SQLite store), driven like GitHub.

use crate::webhook_support;

use webhook_support::{Delivery, TestServer, fixture};

const PLAN_COMMENT: &str = "github/issue_comment.created.pr-plan.json";

fn plan_comment(delivery: &str) -> Delivery {
    Delivery::github("issue_comment", delivery, fixture(PLAN_COMMENT))
}

#[tokio::test]
async fn signed_plan_comment_queues_exactly_one_job_with_the_parsed_command() {
    let server = TestServer::start().await;
    let (status, body) = plan_comment("d-1").send(&server).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["status"], "queued");
    let jobs = server.jobs().await;
    assert_eq!(jobs.len(), 1, "{jobs:#?}");
    let job = &jobs[0];
    assert_eq!(body["job"], job.id.to_string());
    assert_eq!(job.kind, "plan");
    assert_eq!(job.repo, "github.com/Codertocat/Hello-World");
    assert_eq!(job.pr, Some(1));
    let cmd = &job.payload["command"];
    assert_eq!(cmd["verb"], "plan");
    assert_eq!(cmd["dir"], "envs/dev");
    assert!(
        cmd["workspace"].is_null() && cmd["project"].is_null(),
        "{cmd}"
    );
    assert_eq!(job.payload["comment_id"], 492_700_400);
    assert_eq!(job.payload["author"], "Codertocat");
    server.stop().await;
}

#[tokio::test]
async fn same_delivery_again_is_a_duplicate_and_queues_nothing() {
    let server = TestServer::start().await;
    assert_eq!(plan_comment("d-dup").send(&server).await.0, 202);
    let (status, body) = plan_comment("d-dup").send(&server).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("duplicate")),
        "{body}"
    );
    assert_eq!(server.jobs().await.len(), 1);
}

#[tokio::test]
async fn same_comment_under_a_new_delivery_id_runs_once() {
    // Gitea mints a new delivery id on redelivery: the comment id still deduplicates.
    let server = TestServer::start().await;
    assert_eq!(plan_comment("d-a").send(&server).await.0, 202);
    let (status, body) = plan_comment("d-b").send(&server).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("duplicate")),
        "{body}"
    );
    assert_eq!(server.jobs().await.len(), 1);
}

#[tokio::test]
async fn wrong_or_missing_signature_is_401_and_stores_nothing() {
    let server = TestServer::start().await;
    let wrong = plan_comment("d-w").set_header(
        "x-hub-signature-256",
        &format!("sha256={}", "ab".repeat(32)),
    );
    let missing = plan_comment("d-m").without_header("x-hub-signature-256");
    let empty = plan_comment("d-e").set_header("x-hub-signature-256", "sha256=");
    let sha1_only = plan_comment("d-s")
        .without_header("x-hub-signature-256")
        .set_header(
            "x-hub-signature",
            "sha1=0123456789abcdef0123456789abcdef01234567",
        );
    let other_secret = plan_comment("d-o").set_header(
        "x-hub-signature-256",
        &format!(
            "sha256={}",
            atoll::webhook::sign("not-the-secret", &fixture(PLAN_COMMENT))
        ),
    );
    for d in [wrong, missing, empty, sha1_only, other_secret] {
        let (status, body) = d.send(&server).await;
        assert_eq!(status, 401, "{body}");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|m| m.contains("signature")),
            "{body}"
        );
    }
    assert!(server.jobs().await.is_empty());
    // A correctly signed retry of a refused delivery id is still accepted: nothing was recorded.
    assert_eq!(plan_comment("d-w").send(&server).await.0, 202);
}

#[tokio::test]
async fn tampered_body_with_the_original_signature_is_401() {
    let server = TestServer::start().await;
    let mut d = plan_comment("d-t");
    let text = String::from_utf8(d.body.clone()).expect("utf-8");
    d.body = text
        .replace("atlantis plan -d envs/dev", "atlantis apply -d envs/dev")
        .into_bytes();
    assert_eq!(d.send(&server).await.0, 401);
    assert!(server.jobs().await.is_empty());
}

#[tokio::test]
async fn body_over_25_mib_is_413() {
    let server = TestServer::start().await;
    let big = vec![b' '; 26 * 1024 * 1024];
    let (status, _) = Delivery::github("issue_comment", "d-big", big)
        .send(&server)
        .await;
    assert_eq!(status, 413);
    assert!(server.jobs().await.is_empty());
}

#[tokio::test]
async fn invalid_json_with_a_valid_signature_is_400_with_a_message() {
    let server = TestServer::start().await;
    let d = Delivery::github(
        "issue_comment",
        "d-bad",
        b"{\"action\": \"created\", ".to_vec(),
    );
    let (status, body) = d.send(&server).await;
    assert_eq!(status, 400);
    let msg = body["error"].as_str().unwrap_or_default();
    assert!(msg.contains("not valid JSON"), "{body}");
    // Valid JSON that lacks what the event needs is also a 400 naming the event.
    let d = Delivery::github(
        "issue_comment",
        "d-bad2",
        br#"{"action":"created"}"#.to_vec(),
    );
    let (status, body) = d.send(&server).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("issue_comment"),
        "{body}"
    );
    // An event atoll does not read must still be JSON.
    let d = Delivery::github("star", "d-bad3", b"not json".to_vec());
    assert_eq!(d.send(&server).await.0, 400);
    assert!(server.jobs().await.is_empty());
}

#[tokio::test]
async fn unknown_event_is_200_with_a_reason_and_no_job() {
    let server = TestServer::start().await;
    let d = Delivery::github("star", "d-star", br#"{"action":"created"}"#.to_vec());
    let (status, body) = d.send(&server).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("ignored")),
        "{body}"
    );
    assert!(
        body["reason"].as_str().unwrap_or_default().contains("star"),
        "{body}"
    );
    assert!(server.jobs().await.is_empty());
}

#[tokio::test]
async fn repository_outside_the_allowlist_is_403_and_queues_nothing() {
    let server =
        TestServer::start_with("['github.com/acme/*', '!github.com/Codertocat/*']", "").await;
    let (status, body) = plan_comment("d-403").send(&server).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("github.com/Codertocat/Hello-World")
    );
    assert!(server.jobs().await.is_empty());
}

#[tokio::test]
async fn non_json_content_type_is_415() {
    let server = TestServer::start().await;
    let d = plan_comment("d-form").set_header("content-type", "application/x-www-form-urlencoded");
    assert_eq!(d.send(&server).await.0, 415);
    assert!(server.jobs().await.is_empty());
}

#[tokio::test]
async fn request_without_forge_headers_is_400() {
    let server = TestServer::start().await;
    let d = plan_comment("d-x").without_header("x-github-event");
    let (status, body) = d.send(&server).await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test]
async fn ping_is_answered_without_a_job() {
    let server = TestServer::start().await;
    let (status, body) = Delivery::github("ping", "d-ping", fixture("github/ping.json"))
        .send(&server)
        .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (200, Some("pong")),
        "{body}"
    );
    assert!(server.jobs().await.is_empty());
}

#[tokio::test]
async fn health_and_readiness_answer_and_carry_a_request_id() {
    let server = TestServer::start().await;
    let health = server
        .client
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status(), 200);
    assert!(health.headers().contains_key("x-request-id"));
    let ready = server
        .client
        .get(server.url("/readyz"))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 200);
}

#[tokio::test]
async fn a_captured_close_replayed_under_new_delivery_ids_queues_one_pr_closed_job() {
    let server = TestServer::start().await;
    let close = |id: &str| {
        Delivery::github(
            "pull_request",
            id,
            fixture("github/pull_request.closed.json"),
        )
    };
    assert_eq!(close("close-1").send(&server).await.0, 202);
    for i in 2..=5 {
        let (status, body) = close(&format!("close-{i}")).send(&server).await;
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("duplicate")),
            "{body}"
        );
    }
    let closed: Vec<_> = server
        .jobs()
        .await
        .into_iter()
        .filter(|j| j.kind == "pr_closed")
        .collect();
    assert_eq!(closed.len(), 1, "{closed:#?}");
    // A real second close (after a reopen) carries other times, so other bytes: it queues.
    let text = String::from_utf8(fixture("github/pull_request.closed.json")).expect("utf-8");
    let later = text.replacen("\"closed_at\": \"", "\"closed_at\": \"2099-", 1);
    assert_ne!(later, text, "the fixture has a closed_at");
    let again = Delivery::github("pull_request", "close-later", later.into_bytes());
    assert_eq!(again.send(&server).await.0, 202);
    server.stop().await;
}
