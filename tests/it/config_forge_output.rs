//! The settings behind what atoll posts to forges: `server.public_url` (links in commit
//! statuses), `gitea.max_comment_chars` (comment splitting) and GitHub App credentials.

use atoll::config::{self, ConfigError, Loaded};
use secrecy::ExposeSecret;

fn load(yaml: &str, env: &[(&str, &str)]) -> Result<Loaded, ConfigError> {
    config::from_sources(yaml, env.iter().copied())
}

fn ok(yaml: &str) -> Loaded {
    load(yaml, &[]).unwrap_or_else(|e| panic!("expected a valid config, got:\n{e}"))
}

fn problems(yaml: &str) -> Vec<String> {
    match load(yaml, &[]) {
        Ok(_) => panic!("expected problems, config was accepted"),
        Err(e) => e.problems.iter().map(ToString::to_string).collect(),
    }
}

const KEY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/forge/test-app-key.pem"
);

#[test]
fn public_url_is_unset_by_default_and_loses_its_trailing_slash() {
    assert_eq!(ok("").settings.server.public_url, None);
    let s = ok("server: {public_url: 'https://atoll.example.com/'}\n").settings;
    assert_eq!(
        s.server.public_url.as_deref(),
        Some("https://atoll.example.com")
    );
    let env = [("ATOLL_SERVER__PUBLIC_URL", "http://10.0.0.5:4141/atoll")];
    let s = load("", &env).expect("config").settings;
    assert_eq!(
        s.server.public_url.as_deref(),
        Some("http://10.0.0.5:4141/atoll")
    );
}

#[test]
fn public_url_that_is_not_an_http_url_is_refused_with_its_key() {
    for bad in [
        "atoll.example.com",
        "ftp://atoll.example.com",
        "https://user:pw@atoll.example.com",
        "https://user:p#w@atoll.example.com",
        "https://atoll.example.com/?a=b",
    ] {
        let p = problems(&format!("server: {{public_url: '{bad}'}}\n"));
        assert!(
            p.iter().any(|m| m.contains("server.public_url")),
            "{bad}: {p:?}"
        );
        assert!(
            !p.iter().any(|m| m.contains("pw@")),
            "credentials echoed: {p:?}"
        );
    }
}

#[test]
fn gitea_comment_limit_defaults_to_githubs_and_is_bounded() {
    assert_eq!(ok("").settings.gitea.max_comment_chars, 65_536);
    let s = ok("gitea: {max_comment_chars: 20000}\n").settings;
    assert_eq!(s.gitea.max_comment_chars, 20_000);
    let p = problems("gitea: {max_comment_chars: 10}\n");
    assert!(
        p.iter().any(|m| m.contains("gitea.max_comment_chars")),
        "{p:?}"
    );
    let p = problems("github: {max_comment_chars: 20000}\n");
    assert!(
        p.iter().any(|m| m.contains("github.max_comment_chars")),
        "GitHub's limit is fixed: {p:?}"
    );
}

#[test]
fn github_app_keys_are_read_together() {
    let s = ok(&format!(
        "github: {{app_id: 4242, installation_id: 77, app_private_key_file: '{KEY}'}}\n"
    ))
    .settings;
    let app = s.github.app.expect("app settings");
    assert_eq!((app.app_id, app.installation_id), (4242, 77));
    assert!(app.private_key.expose_secret().starts_with("-----BEGIN"));
    assert!(ok("").settings.github.app.is_none());
}

#[test]
fn partial_or_conflicting_github_app_keys_are_refused_without_echoing_the_key() {
    let p = problems("github: {app_id: 4242}\n");
    assert!(
        p.iter().any(|m| m.contains("github.installation_id")),
        "{p:?}"
    );
    let p = problems(&format!(
        "github: {{app_id: 1, installation_id: 2, app_private_key_file: '{KEY}', token: tok-123}}\n"
    ));
    assert!(p.iter().any(|m| m.contains("not both")), "{p:?}");
    let p =
        problems("github: {app_id: 1, installation_id: 2, app_private_key: not-a-pem-s3cret}\n");
    assert!(p.iter().any(|m| m.contains("PEM")), "{p:?}");
    assert!(
        !p.iter().any(|m| m.contains("s3cret")),
        "secret echoed: {p:?}"
    );
}
