//! The dashboard, API and metrics, black-box over real HTTP against `App` on port 0 with a
//! SQLite store: sessions, CSRF, bearer tokens, unlock with audit and announcement, escaping,
//! the SSE log replay.

use std::time::Duration;

use atoll::locks::{ActorVia, AuditAction};
use atoll::store::{ClaimLimits, JobState};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION};
use serde_json::json;
use uuid::Uuid;

use crate::web_support;

use web_support::{EVIL_LINE, EVIL_REPO, TOKEN, start};

#[tokio::test]
async fn pages_redirect_to_login_without_a_session() {
    let s = start().await;
    let job = s.job("plan", &[]).await;
    for path in [
        "/",
        "/locks",
        "/jobs",
        "/apply",
        "/protect",
        &format!("/jobs/{job}"),
    ] {
        let resp = s.get("atoll_session=forged", path).await;
        assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{path}");
        let to = resp
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        assert!(
            to == "/login" || (path == "/" && to == "/locks"),
            "{path} -> {to}"
        );
    }
    let stream = s.get("", &format!("/jobs/{job}/stream")).await;
    assert_eq!(stream.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn api_answers_401_without_the_bearer_token_and_json_with_it() {
    let s = start().await;
    let lock = s.lock("github.com/acme/infra", 7).await;
    let job = s.job("plan", &["line one"]).await;
    let paths = [
        "/api/locks".to_owned(),
        "/api/jobs".to_owned(),
        format!("/api/jobs/{job}"),
        format!("/api/plans/{}", Uuid::new_v4()),
        "/api/nonexistent".to_owned(),
    ];
    for path in &paths {
        for auth in [None, Some("Bearer wrong-token-wrong-token-xx"), Some(TOKEN)] {
            let mut req = s.http.get(s.url(path));
            if let Some(a) = auth {
                req = req.header("authorization", a);
            }
            assert_eq!(
                req.send().await.expect("api").status(),
                StatusCode::UNAUTHORIZED,
                "{path} {auth:?}"
            );
        }
    }
    let ok = s
        .http
        .get(s.url("/api/locks"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("api");
    assert_eq!(ok.status(), StatusCode::OK);
    let body: serde_json::Value = ok.json().await.expect("json");
    assert_eq!(body["locks"][0]["id"], json!(lock.id));
    let detail: serde_json::Value = s
        .http
        .get(s.url(&format!("/api/jobs/{job}")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("api")
        .json()
        .await
        .expect("json");
    assert_eq!(detail["log"][0]["line"], json!("line one"));
    let missing = s
        .http
        .get(s.url(&format!("/api/plans/{}", Uuid::new_v4())))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("api");
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

/// A malformed id in a URL is answered like an unknown one: the dashboard's styled 404 page,
/// the API's JSON 404, never the router's plain-text rejection.
#[tokio::test]
async fn malformed_ids_in_urls_get_the_same_404_as_unknown_ones() {
    let s = start().await;
    let (cookie, _) = s.login().await;
    for (path, title) in [
        ("/jobs/not-a-uuid", "No such job"),
        ("/jobs/12345", "No such job"),
        ("/locks/%3Cscript%3E/unlock", "No such lock"),
    ] {
        let resp = s
            .http
            .get(s.url(path))
            .header(COOKIE, &cookie)
            .send()
            .await
            .expect("page");
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{path}");
        let kind = resp.headers()["content-type"]
            .to_str()
            .expect("type")
            .to_owned();
        assert!(kind.starts_with("text/html"), "{path}: {kind}");
        let html = resp.text().await.expect("body");
        assert!(html.contains(title), "{path}: {html}");
        assert!(html.contains("atoll.css"), "the styled page: {html}");
        assert!(!html.contains("<script>"), "{html}");
    }
    for path in ["/api/jobs/not-a-uuid", "/api/plans/xyz"] {
        let resp = s
            .http
            .get(s.url(path))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("api");
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{path}");
        let body: serde_json::Value = resp.json().await.expect("json");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|e| e.contains("has this id")),
            "{body}"
        );
    }
}

#[tokio::test]
async fn form_posts_without_the_csrf_token_are_refused() {
    let s = start().await;
    let lock = s.lock("github.com/acme/infra", 7).await;
    let (cookie, _csrf) = s.login().await;
    for form in [vec![], vec![("csrf", "forged")]] {
        let resp = s
            .http
            .post(s.url(&format!("/locks/{}/unlock", lock.id)))
            .header(COOKIE, &cookie)
            .form(&form)
            .send()
            .await
            .expect("post");
        assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    }
    let off = s
        .http
        .post(s.url("/apply"))
        .header(COOKIE, &cookie)
        .form(&[("enabled", "false")])
        .send()
        .await
        .expect("post");
    assert_eq!(off.status(), StatusCode::FORBIDDEN);
    assert!(
        s.store
            .locks()
            .lock_get(lock.id)
            .await
            .expect("get")
            .is_some(),
        "the lock was released"
    );
    assert!(
        s.store
            .audit()
            .apply_switch()
            .await
            .expect("switch")
            .enabled
    );
    let no_csrf_login = s
        .http
        .post(s.url("/login"))
        .form(&[("username", "ops"), ("password", "correct horse")])
        .send()
        .await
        .expect("post");
    assert_eq!(no_csrf_login.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn unlock_after_confirmation_is_audited_and_announced_with_the_actor() {
    let s = start().await;
    let lock = s.lock("github.com/acme/infra", 7).await;
    let (cookie, csrf) = s.login().await;
    let confirm = s.get(&cookie, &format!("/locks/{}/unlock", lock.id)).await;
    assert_eq!(confirm.status(), StatusCode::OK);
    assert!(confirm.text().await.expect("body").contains("Unlock?"));
    let resp = s
        .http
        .post(s.url(&format!("/locks/{}/unlock", lock.id)))
        .header(COOKIE, &cookie)
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert!(
        s.store
            .locks()
            .lock_get(lock.id)
            .await
            .expect("get")
            .is_none()
    );
    let events = s.store.audit().audit_list(10, None).await.expect("audit");
    assert!(
        events.iter().any(|e| e.action == AuditAction::Unlock
            && e.actor.name == "ops"
            && e.actor.via == ActorVia::Dashboard),
        "{events:?}"
    );
    let jobs = s.store.list_jobs(10).await.expect("jobs");
    let announce = jobs
        .iter()
        .find(|j| j.kind == "announce_unlock")
        .expect("an announce_unlock job");
    assert_eq!(announce.pr, Some(7));
    assert_eq!(announce.payload["actor"]["name"], json!("ops"));
    assert_eq!(announce.payload["lock"]["id"], json!(lock.id));
}

#[tokio::test]
async fn script_in_a_repo_name_or_a_log_line_renders_as_inert_text() {
    let s = start().await;
    s.lock(EVIL_REPO, 9).await;
    let job = s.job("plan", &[EVIL_LINE]).await;
    let (cookie, _) = s.login().await;
    for path in ["/locks".to_owned(), format!("/jobs/{job}")] {
        let html = s.get(&cookie, &path).await.text().await.expect("body");
        assert!(
            !html.contains("<script>alert"),
            "{path} carries live markup"
        );
        assert!(html.contains("&lt;script&gt;alert"), "{path} lost the text");
    }
}

#[tokio::test]
async fn log_stream_resumes_after_last_event_id_and_ends_with_the_job() {
    let s = start().await;
    let job = s.job("plan", &["one", "two", "three"]).await;
    let limits = ClaimLimits {
        global: 10,
        per_repo: 10,
        per_repo_exempt: &[],
    };
    let claimed = s
        .store
        .claim("w1", &["plan"], Duration::from_secs(60), limits)
        .await
        .expect("claim");
    assert_eq!(claimed.map(|j| j.id), Some(job));
    assert!(
        s.store
            .transition(job, "w1", JobState::Succeeded, None)
            .await
            .expect("transition")
    );
    let (cookie, _) = s.login().await;
    let resp = s
        .http
        .get(s.url(&format!("/jobs/{job}/stream")))
        .header(COOKIE, &cookie)
        .header("last-event-id", "1")
        .send()
        .await
        .expect("stream");
    assert_eq!(resp.status(), StatusCode::OK);
    let body = resp.text().await.expect("body");
    assert!(!body.contains("data: one"), "{body}");
    assert!(
        body.contains("id: 2\ndata: two") && body.contains("id: 3\ndata: three"),
        "{body}"
    );
    assert!(body.contains("event: end\ndata: succeeded"), "{body}");
}

#[tokio::test]
async fn failed_logins_are_limited_per_user() {
    let s = start().await;
    for _ in 0..3 {
        assert_eq!(
            s.login_with("wrong").await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(
        s.login_with("correct horse").await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
}

#[tokio::test]
async fn metrics_count_jobs_by_kind_and_state_and_locks_held() {
    let s = start().await;
    s.lock("github.com/acme/infra", 7).await;
    s.job("plan", &[]).await;
    let text = s
        .http
        .get(s.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("body");
    assert!(
        text.contains("atoll_jobs{kind=\"plan\",state=\"queued\"} 1"),
        "{text}"
    );
    assert!(text.contains("atoll_locks_held 1"), "{text}");
    let _ = s
        .http
        .post(s.url("/events"))
        .header("x-github-event", "ping")
        .body("{}")
        .send()
        .await
        .expect("events");
    let text = s
        .http
        .get(s.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("body");
    assert!(
        text.contains("atoll_webhooks_total{forge=\"github\",result="),
        "{text}"
    );
}

#[tokio::test]
async fn jobs_page_filters_by_repository_pr_and_state() {
    let s = start().await;
    let wanted = s.job("plan", &[]).await;
    let other = s
        .store
        .enqueue(atoll::store::NewJob {
            kind: "plan".to_owned(),
            repo: "github.com/acme/other".to_owned(),
            pr: Some(8),
            dedup_key: None,
            payload: json!({}),
        })
        .await
        .expect("enqueue");
    let atoll::store::DeliveryOutcome::Accepted { job: Some(other) } = other else {
        panic!("not queued");
    };
    let (cookie, _) = s.login().await;
    let page = |q: &'static str| {
        let s = &s;
        let cookie = cookie.clone();
        async move {
            s.get(&cookie, &format!("/jobs{q}"))
                .await
                .text()
                .await
                .expect("body")
        }
    };
    let all = page("").await;
    assert!(all.contains(&wanted.to_string()) && all.contains(&other.to_string()));
    let by_repo = page("?repo=github.com%2Facme%2Finfra").await;
    assert!(by_repo.contains(&wanted.to_string()) && !by_repo.contains(&other.to_string()));
    let by_pr = page("?pr=8").await;
    assert!(!by_pr.contains(&wanted.to_string()) && by_pr.contains(&other.to_string()));
    let none = page("?state=succeeded").await;
    assert!(!none.contains(&wanted.to_string()) && none.contains("No jobs match"));
}

#[tokio::test]
async fn turning_applies_off_records_who_and_why_and_shows_it() {
    let s = start().await;
    let (cookie, csrf) = s.login().await;
    let resp = s
        .http
        .post(s.url("/apply"))
        .header(COOKIE, &cookie)
        .form(&[
            ("csrf", csrf.as_str()),
            ("enabled", "false"),
            ("reason", "freeze <b>now</b>"),
        ])
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let switch = s.store.audit().apply_switch().await.expect("switch");
    assert!(!switch.enabled);
    assert_eq!(
        switch.changed_by.map(|a| (a.name, a.via)),
        Some(("ops".to_owned(), ActorVia::Dashboard))
    );
    let html = s.get(&cookie, "/apply").await.text().await.expect("body");
    assert!(
        html.contains("Applies are <strong>off</strong>") && html.contains("ops (via dashboard)"),
        "{html}"
    );
    assert!(
        html.contains("freeze &lt;b&gt;now&lt;&#x2F;b&gt;"),
        "{html}"
    );
    let locks = s.get(&cookie, "/locks").await.text().await.expect("body");
    assert!(locks.contains("Applies are turned off"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_survive_a_restart_and_logout_ends_them_everywhere() {
    let s = start().await;
    let (cookie, csrf) = s.login().await;
    let token = cookie.trim_start_matches("atoll_session=").to_owned();
    let s = s.restart().await;
    let page = s.get(&cookie, "/locks").await;
    assert_eq!(
        page.status(),
        StatusCode::OK,
        "the session survived the restart"
    );
    // The store holds the token's hash, never the token.
    let now = time::OffsetDateTime::now_utc();
    let by_token = s
        .store
        .sessions()
        .session_get(&token, now)
        .await
        .expect("get");
    assert!(by_token.is_none());
    let hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(token.as_bytes()));
    let stored = s
        .store
        .sessions()
        .session_get(&hash, now)
        .await
        .expect("get");
    assert_eq!(stored.map(|x| x.username).as_deref(), Some("ops"));

    let out = s
        .http
        .post(s.url("/logout"))
        .header(COOKIE, &cookie)
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .expect("logout");
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    let s = s.restart().await;
    let after = s.get(&cookie, "/locks").await;
    assert_eq!(after.status(), StatusCode::SEE_OTHER, "logged out for good");
    let stored = s
        .store
        .sessions()
        .session_get(&hash, now)
        .await
        .expect("get");
    assert!(stored.is_none(), "logout deleted the row");
}

#[tokio::test]
async fn pull_request_page_shows_its_plans_with_badges_its_locks_and_jobs() {
    let s = start().await;
    let (cookie, _) = s.login().await;
    let lock = s.lock("github.com/acme/infra", 7).await;
    s.plan("github.com/acme/infra", 7, "web").await;
    let mine = s.job("apply", &[]).await;
    let other = s
        .store
        .enqueue(atoll::store::NewJob {
            kind: "plan".to_owned(),
            repo: "github.com/acme/infra".to_owned(),
            pr: Some(8),
            dedup_key: None,
            payload: json!({}),
        })
        .await
        .expect("enqueue");

    let locks = s.get(&cookie, "/locks").await.text().await.expect("body");
    assert!(
        locks.contains("href=\"/pulls/github.com/acme/infra/7\""),
        "the locks page links to the PR page"
    );
    let jobs = s.get(&cookie, "/jobs").await.text().await.expect("body");
    assert!(jobs.contains("href=\"/pulls/github.com/acme/infra/7\""));
    assert!(jobs.contains("href=\"/pulls/github.com/acme/infra/8\""));

    let resp = s.get(&cookie, "/pulls/github.com/acme/infra/7").await;
    assert_eq!(resp.status(), StatusCode::OK);
    let html = resp.text().await.expect("body");
    assert!(html.contains("Pull request #7"), "{html}");
    assert!(
        html.contains("dir: envs&#x2F;dev workspace: default"),
        "{html}"
    );
    assert!(html.contains("class=\"badge blocked\">1 blocked"), "{html}");
    assert!(
        html.contains("class=\"badge restart\">2 restarts"),
        "{html}"
    );
    assert!(
        html.contains("guest 2200 is atoll&#x27;s own &lt;host&gt;"),
        "the blocked reason, escaped: {html}"
    );
    assert!(
        html.contains("Plan: 0 to add, 2 to change, 0 to destroy."),
        "the plan text as in the comment: {html}"
    );
    assert!(
        html.contains("class=\"l-note\""),
        "restart notes are marked: {html}"
    );
    assert!(
        !html.contains("apply -d envs/dev"),
        "a blocked plan offers no apply command"
    );
    assert!(html.contains(&format!("/locks/{}/unlock", lock.id)));
    assert!(html.contains(&format!("/jobs/{mine}")));
    let atoll::store::DeliveryOutcome::Accepted { job: Some(other) } = other else {
        panic!("not queued");
    };
    assert!(
        !html.contains(&other.to_string()),
        "another PR's job is not listed"
    );

    let unknown = s.get(&cookie, "/pulls/github.com/acme/infra/99").await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    assert!(
        unknown
            .text()
            .await
            .expect("body")
            .contains("holds no plans")
    );
    let bad = s.get(&cookie, "/pulls/acme/infra").await;
    assert_eq!(bad.status(), StatusCode::NOT_FOUND);
    assert!(
        bad.text()
            .await
            .expect("body")
            .contains("HOST&#x2F;OWNER&#x2F;REPO&#x2F;NUMBER")
    );
    let anonymous = s.get("", "/pulls/github.com/acme/infra/7").await;
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_dashboard_session_ends_after_its_ttl_on_the_servers_clock() {
    let hand = model::ManualClock::new();
    let s = crate::app_support::TestApp::start(crate::app_support::Options {
        clock: Some(hand.clone()),
        web_extra: ", session_ttl_secs: 600".to_owned(),
        ..crate::app_support::Options::dashboard()
    })
    .await;
    let (cookie, _) = s.login().await;
    hand.advance(Duration::from_secs(599));
    assert_eq!(s.get(&cookie, "/locks").await.status(), StatusCode::OK);
    hand.advance(Duration::from_secs(1));
    let expired = s.get(&cookie, "/locks").await;
    assert_eq!(expired.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        expired
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok()),
        Some("/login")
    );
}
