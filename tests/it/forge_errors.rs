//! Forge client errors are classified by what the caller can do, never retry a POST, and never
//! show the token; GitHub App auth mints, caches and uses installation tokens.

use crate::forge_support;

use std::time::Duration;

use atoll::forge::{Forge, ForgeError, GithubApi, GithubApiSettings, GithubAuth, RepoName};
use fakeforge::{FakeForge, InjectedFailure};
use forge_support::{REPO, client_for, setup};
use model::ForgeKind;
use secrecy::{ExposeSecret, SecretString};

per_forge!(
    wrong_token_is_unauthorized_and_never_echoed,
    missing_pull_request_is_not_found,
    rate_limit_carries_retry_after,
    server_error_is_transient_and_a_failed_post_is_not_retried,
    transient_get_is_retried_twice_then_reported,
);

fn inject(status: u16, retry_after: Option<u64>) -> InjectedFailure {
    InjectedFailure {
        status,
        retry_after,
        message: "injected".to_owned(),
    }
}

async fn wrong_token_is_unauthorized_and_never_echoed(kind: ForgeKind) {
    let s = setup(kind).await;
    let token = "sekrit-token-that-must-not-leak";
    let forge = client_for(&s.fake, token);
    let err = forge.pull_request(&s.repo, 1).await.expect_err("bad token");
    assert!(matches!(err, ForgeError::Unauthorized { .. }), "{err:?}");
    assert!(!format!("{err} {err:?}").contains(token));
    assert!(
        !format!("{forge:?}").contains(token),
        "Debug of the client redacts the token"
    );
}

async fn missing_pull_request_is_not_found(kind: ForgeKind) {
    let s = setup(kind).await;
    let err = s
        .forge
        .pull_request(&s.repo, 404)
        .await
        .expect_err("no such PR");
    assert!(matches!(err, ForgeError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("acme/infra#404"), "{err}");
}

async fn rate_limit_carries_retry_after(kind: ForgeKind) {
    let s = setup(kind).await;
    s.fake.fail_next_request(inject(429, Some(7)));
    let err = s
        .forge
        .permission(&s.repo, "bob")
        .await
        .expect_err("rate limited");
    assert_eq!(
        err,
        ForgeError::RateLimited {
            op: "reading \"bob\"'s permission on acme/infra".to_owned(),
            retry_after: Duration::from_secs(7)
        }
    );
}

async fn server_error_is_transient_and_a_failed_post_is_not_retried(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    s.fake.fail_next_request(inject(502, None));
    let before = s.fake.requests().len();
    let err = s
        .forge
        .create_comment(&s.repo, n, "plan")
        .await
        .expect_err("502");
    assert!(matches!(err, ForgeError::Transient { .. }), "{err:?}");
    assert_eq!(s.fake.requests().len(), before + 1, "exactly one POST");
    assert!(s.fake.comments(REPO, n).is_empty());
}

fn app_client(fake: &FakeForge, key: &str) -> GithubApi {
    GithubApi::new(&GithubApiSettings {
        api_url: fake.api_url(),
        auth: GithubAuth::App {
            app_id: 4242,
            private_key_pem: SecretString::from(key.to_owned()),
            installation_id: 77,
        },
        timeout: Duration::from_secs(10),
    })
    .expect("app client")
}

#[tokio::test]
async fn github_app_mints_one_installation_token_and_reuses_it() {
    let fake = FakeForge::github().await.expect("fake");
    fake.create_repo(REPO).await.expect("repo");
    fake.enable_app(
        4242,
        77,
        include_str!("../fixtures/forge/test-app-key.pub.pem"),
    );
    fake.set_permission(REPO, "bob", "write");
    let forge = app_client(&fake, include_str!("../fixtures/forge/test-app-key.pem"));
    let repo = RepoName::parse(REPO).expect("repo");
    for _ in 0..3 {
        assert!(
            forge
                .permission(&repo, "bob")
                .await
                .expect("permission")
                .can_apply()
        );
    }
    assert_eq!(fake.minted_tokens(), 1, "the installation token is cached");
    let header = forge
        .git_auth_header()
        .await
        .expect("git auth")
        .expect("a header");
    assert!(header.expose_secret().starts_with("Basic "));
    assert_eq!(fake.minted_tokens(), 1);
}

#[tokio::test]
async fn github_app_with_a_key_the_forge_does_not_know_is_unauthorized() {
    let fake = FakeForge::github().await.expect("fake");
    fake.create_repo(REPO).await.expect("repo");
    fake.enable_app(
        4242,
        77,
        include_str!("../fixtures/forge/test-app-key.pub.pem"),
    );
    // Another App id: the fake refuses the JWT's issuer.
    let forge = GithubApi::new(&GithubApiSettings {
        api_url: fake.api_url(),
        auth: GithubAuth::App {
            app_id: 1,
            private_key_pem: SecretString::from(include_str!("../fixtures/forge/test-app-key.pem")),
            installation_id: 77,
        },
        timeout: Duration::from_secs(10),
    })
    .expect("client");
    let err = forge
        .permission(&RepoName::parse(REPO).expect("repo"), "bob")
        .await
        .expect_err("refused");
    assert!(matches!(err, ForgeError::Unauthorized { .. }), "{err:?}");
    assert_eq!(fake.minted_tokens(), 0);
}

#[test]
fn github_app_key_that_is_not_pem_is_refused_at_start() {
    let err = GithubApi::new(&GithubApiSettings {
        api_url: "https://api.github.com".to_owned(),
        auth: GithubAuth::App {
            app_id: 1,
            private_key_pem: SecretString::from("not a key"),
            installation_id: 2,
        },
        timeout: Duration::from_secs(10),
    })
    .expect_err("bad key");
    assert!(err.to_string().contains("PEM"), "{err}");
}

#[tokio::test]
async fn fake_github_refuses_an_over_long_comment_like_github() {
    let s = setup(ForgeKind::Github).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let url = format!("{}/repos/{REPO}/issues/{n}/comments", s.fake.api_url());
    let body = serde_json::json!({ "body": "x".repeat(65_537) });
    let resp = client
        .post(&url)
        .header("authorization", format!("Bearer {}", fakeforge::FAKE_TOKEN))
        .json(&body)
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status().as_u16(), 422);
    let text = resp.text().await.expect("body");
    assert!(
        text.contains("Body is too long (maximum is 65536 characters)"),
        "{text}"
    );
    assert!(s.fake.comments(REPO, n).is_empty());
}

async fn transient_get_is_retried_twice_then_reported(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    s.fake.fail_next_request(inject(503, None));
    let before = s.fake.requests().len();
    s.forge
        .pull_request(&s.repo, n)
        .await
        .expect("second try succeeds");
    assert_eq!(s.fake.requests().len(), before + 2);
    for _ in 0..3 {
        s.fake.fail_next_request(inject(502, None));
    }
    let before = s.fake.requests().len();
    let err = s
        .forge
        .changed_files(&s.repo, n)
        .await
        .expect_err("three failures");
    assert!(matches!(err, ForgeError::Transient { .. }), "{err:?}");
    assert_eq!(
        s.fake.requests().len(),
        before + 3,
        "one try and two retries"
    );
}

#[tokio::test]
async fn gitea_permission_lookup_without_repo_admin_says_what_to_grant() {
    let s = setup(ForgeKind::Gitea).await;
    s.fake.set_permission(REPO, "atoll-bot", "write");
    let err = s.forge.permission(&s.repo, "bob").await.expect_err("403");
    assert!(matches!(err, ForgeError::Unauthorized { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("make atoll's bot account an admin"),
        "{err}"
    );
}
