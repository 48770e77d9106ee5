//! The fake forges' webhooks: generated payloads parse with atoll's own parsers as the events
//! they stand for, and a real atoll server verifies their signatures and queues jobs.

use crate::webhook_support;

use atoll::forge::{EventHeaders, ForgeEvent, PrAction, parse_event};
use fakeforge::{FakeForge, ReviewAction};
use model::ForgeKind;
use webhook_support::{GITEA_SECRET, GITHUB_SECRET, TestServer};

const REPO: &str = "acme/infra";

async fn fake(kind: ForgeKind, host: &str) -> FakeForge {
    let fake = match kind {
        ForgeKind::Github => FakeForge::github().await,
        ForgeKind::Gitea => FakeForge::gitea().await,
    }
    .expect("fake forge");
    fake.set_web_host(host);
    fake.create_repo(REPO).await.expect("repo");
    fake
}

/// Plays open, push, comment, approve, request changes, close, reopen, merge.
async fn play(fake: &FakeForge) -> u64 {
    let n = fake
        .open_pr(REPO, "alice", "cores-4", &[("envs/dev/main.tf", "a")])
        .await
        .expect("open");
    fake.push(REPO, n, &[("envs/dev/main.tf", "b")])
        .await
        .expect("push");
    fake.comment(REPO, n, "alice", "atlantis plan -d envs/dev")
        .await
        .expect("comment");
    fake.review(REPO, n, "bob", ReviewAction::Approve)
        .await
        .expect("approve");
    fake.review(REPO, n, "bob", ReviewAction::RequestChanges)
        .await
        .expect("reject");
    fake.close(REPO, n).await.expect("close");
    fake.reopen(REPO, n).await.expect("reopen");
    fake.merge(REPO, n).await.expect("merge");
    n
}

fn parsed(fake: &FakeForge) -> Vec<ForgeEvent> {
    fake.deliveries()
        .iter()
        .map(|d| {
            let headers = EventHeaders {
                event: &d.event,
                event_type: d.event_type.as_deref(),
            };
            parse_event(fake.kind(), headers, &d.body)
                .unwrap_or_else(|e| panic!("{} payload does not parse: {e}", d.event))
        })
        .collect()
}

async fn scripted_events_parse_as_what_they_stand_for(kind: ForgeKind) {
    let fake = fake(kind, "forge.example").await;
    let n = play(&fake).await;
    let events = parsed(&fake);
    let head = fake.head_sha(REPO, n).expect("sha");
    let summary: Vec<String> = events
        .iter()
        .map(|e| match e {
            ForgeEvent::PullRequest { repo, pr, action } => {
                assert_eq!(repo.to_string(), "forge.example/acme/infra");
                assert_eq!(pr.number, n);
                assert!(!pr.from_fork);
                if *action == PrAction::Updated {
                    assert_eq!(pr.head_sha, head);
                }
                format!("{action:?}")
            }
            ForgeEvent::Comment { body, author, .. } => format!("comment {author}: {body}"),
            ForgeEvent::Review {
                reviewer, approved, ..
            } => format!("review {reviewer} {approved}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "Opened",
            "Updated",
            "comment alice: atlantis plan -d envs/dev",
            "review bob true",
            "review bob false",
            "Closed { merged: false }",
            "Reopened",
            "Closed { merged: true }",
        ]
    );
}

#[tokio::test]
async fn github_scripted_events_parse_as_what_they_stand_for() {
    scripted_events_parse_as_what_they_stand_for(ForgeKind::Github).await;
}

#[tokio::test]
async fn gitea_scripted_events_parse_as_what_they_stand_for() {
    scripted_events_parse_as_what_they_stand_for(ForgeKind::Gitea).await;
    let fake = fake(ForgeKind::Gitea, "forge.example").await;
    let n = fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("open");
    fake.push(REPO, n, &[("a.tf", "y")]).await.expect("push");
    let sync = &fake.deliveries()[1];
    let legacy = sync
        .headers
        .iter()
        .find(|(k, _)| k == "x-hub-signature")
        .map(|(_, v)| v.as_str());
    assert_eq!(
        legacy,
        Some("sha1="),
        "no secret set: Gitea sends empty signatures"
    );
    assert_eq!(
        (sync.event.as_str(), sync.event_type.as_deref()),
        ("pull_request", Some("pull_request_sync"))
    );
}

async fn deliveries_are_verified_and_queued_by_atoll(kind: ForgeKind, secret: &str) {
    let server =
        TestServer::start_with("['github.com/acme/*', 'gitea.example.com/acme/*']", "").await;
    let host = if kind == ForgeKind::Github {
        "github.com"
    } else {
        "gitea.example.com"
    };
    let fake = fake(kind, host).await;
    fake.set_webhook(&server.url("/events"), secret);
    let n = fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("open");
    fake.comment(REPO, n, "alice", "atlantis plan")
        .await
        .expect("comment");
    let statuses: Vec<Option<u16>> = fake.deliveries().iter().map(|d| d.status).collect();
    assert_eq!(
        statuses,
        [Some(202), Some(202)],
        "{:?}",
        fake.deliveries()
            .iter()
            .map(|d| &d.response)
            .collect::<Vec<_>>()
    );
    let jobs = server.jobs().await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(jobs.iter().all(|j| j.pr == Some(n)));

    fake.set_webhook(&server.url("/events"), "wrong-secret");
    fake.comment(REPO, n, "alice", "atlantis plan")
        .await
        .expect("comment");
    let last = fake.deliveries().pop().expect("delivery");
    assert_eq!(last.status, Some(401), "{}", last.response);
    server.stop().await;
}

#[tokio::test]
async fn github_deliveries_are_verified_and_queued_by_atoll() {
    deliveries_are_verified_and_queued_by_atoll(ForgeKind::Github, GITHUB_SECRET).await;
}

#[tokio::test]
async fn gitea_deliveries_are_verified_and_queued_by_atoll() {
    deliveries_are_verified_and_queued_by_atoll(ForgeKind::Gitea, GITEA_SECRET).await;
}
