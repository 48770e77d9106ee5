//! Per-PR checkouts with real git against the fake forge's bare repositories.

use crate::forge_support;

use std::path::Path;

use atoll::forge::{CommitSha, RepoName};
use atoll::workdir::{PrCheckout, Workdir, WorkdirError};
use forge_support::{REPO, setup};
use model::ForgeKind;
use secrecy::SecretString;

const HOST: &str = "github.com";

fn sha(s: &str) -> CommitSha {
    CommitSha::parse(s).expect("sha")
}

async fn checkout(
    wd: &Workdir,
    repo: &RepoName,
    n: u64,
    url: &str,
    head: &str,
) -> Result<atoll::workdir::Checkout, WorkdirError> {
    let head = sha(head);
    wd.checkout(&PrCheckout {
        host: HOST,
        repo,
        number: n,
        clone_url: url,
        sha: &head,
        auth_header: None,
    })
    .await
}

fn read(dir: &Path, file: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(file)).ok()
}

#[tokio::test]
async fn checkout_lands_on_the_exact_head_sha() {
    let s = setup(ForgeKind::Github).await;
    let data = tempfile::tempdir().expect("tmp");
    let wd = Workdir::new(data.path());
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("envs/dev/main.tf", "v1")])
        .await
        .expect("pr");
    let url = s.fake.clone_url(REPO).expect("url");
    let head = s.fake.head_sha(REPO, n).expect("sha");
    let co = checkout(&wd, &s.repo, n, &url, &head)
        .await
        .expect("checkout");
    assert!(!co.reused);
    assert_eq!(co.sha.as_str(), head);
    assert_eq!(
        co.path,
        data.path().join("workdirs/github.com/acme/infra/pr-1")
    );
    assert_eq!(read(&co.path, "envs/dev/main.tf").as_deref(), Some("v1"));
}

#[tokio::test]
async fn new_commit_reuses_the_directory_and_lands_on_the_new_sha() {
    let s = setup(ForgeKind::Github).await;
    let data = tempfile::tempdir().expect("tmp");
    let wd = Workdir::new(data.path());
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("main.tf", "v1")])
        .await
        .expect("pr");
    let url = s.fake.clone_url(REPO).expect("url");
    let first = checkout(
        &wd,
        &s.repo,
        n,
        &url,
        &s.fake.head_sha(REPO, n).expect("sha"),
    )
    .await
    .expect("checkout");
    std::fs::write(first.path.join("main.tf"), "local edit").expect("edit");
    std::fs::write(first.path.join("junk.tfstate"), "left over").expect("junk");
    let second_sha = s
        .fake
        .push(REPO, n, &[("other.tf", "v2")])
        .await
        .expect("push");
    let second = checkout(&wd, &s.repo, n, &url, &second_sha)
        .await
        .expect("checkout again");
    assert!(second.reused);
    assert_eq!(second.path, first.path);
    assert_eq!(second.sha.as_str(), second_sha);
    assert_eq!(
        read(&second.path, "main.tf").as_deref(),
        Some("v1"),
        "local edits are discarded"
    );
    assert_eq!(read(&second.path, "other.tf").as_deref(), Some("v2"));
    assert_eq!(
        read(&second.path, "junk.tfstate"),
        None,
        "untracked files are cleaned"
    );
}

#[tokio::test]
async fn force_push_replaces_the_history() {
    let s = setup(ForgeKind::Gitea).await;
    let data = tempfile::tempdir().expect("tmp");
    let wd = Workdir::new(data.path());
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("old.tf", "v1")])
        .await
        .expect("pr");
    let url = s.fake.clone_url(REPO).expect("url");
    checkout(
        &wd,
        &s.repo,
        n,
        &url,
        &s.fake.head_sha(REPO, n).expect("sha"),
    )
    .await
    .expect("checkout");
    let forced = s
        .fake
        .force_push(REPO, n, &[("new.tf", "v2")])
        .await
        .expect("force push");
    let co = checkout(&wd, &s.repo, n, &url, &forced)
        .await
        .expect("checkout forced head");
    assert_eq!(co.sha.as_str(), forced);
    assert_eq!(read(&co.path, "old.tf"), None);
    assert_eq!(read(&co.path, "new.tf").as_deref(), Some("v2"));
}

#[tokio::test]
async fn unknown_sha_is_reported_as_missing() {
    let s = setup(ForgeKind::Github).await;
    let data = tempfile::tempdir().expect("tmp");
    let wd = Workdir::new(data.path());
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let url = s.fake.clone_url(REPO).expect("url");
    let err = checkout(&wd, &s.repo, n, &url, &"0123456789".repeat(4))
        .await
        .expect_err("no such commit");
    assert!(matches!(err, WorkdirError::ShaMissing { .. }), "{err}");
    assert!(err.to_string().contains("plan again"), "{err}");
}

#[tokio::test]
async fn close_removes_the_checkout() {
    let s = setup(ForgeKind::Github).await;
    let data = tempfile::tempdir().expect("tmp");
    let wd = Workdir::new(data.path());
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let url = s.fake.clone_url(REPO).expect("url");
    let co = checkout(
        &wd,
        &s.repo,
        n,
        &url,
        &s.fake.head_sha(REPO, n).expect("sha"),
    )
    .await
    .expect("checkout");
    assert!(co.path.is_dir());
    assert!(wd.remove(HOST, &s.repo, n).await.expect("remove"));
    assert!(!co.path.exists());
    assert!(
        !wd.remove(HOST, &s.repo, n).await.expect("remove again"),
        "nothing left to remove"
    );
}

/// A `git` wrapper that appends its argv and its GIT_CONFIG_VALUE_* to a log, then runs git.
fn recording_git(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let log = dir.join("git.log");
    let script = dir.join("git-wrapper");
    let real = which_git();
    let body = format!(
        "#!/bin/sh\nprintf 'ARGV %s\\n' \"$*\" >> '{log}'\nenv | grep '^GIT_CONFIG_VALUE_' | sed 's/^/ENV /' >> '{log}'\nexec '{real}' \"$@\"\n",
        log = log.display(),
        real = real.display()
    );
    std::fs::write(&script, body).expect("write wrapper");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (script, log)
}

fn which_git() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").expect("PATH");
    std::env::split_paths(&path)
        .map(|p| p.join("git"))
        .find(|p| p.is_file())
        .expect("git on PATH")
}

#[tokio::test]
async fn token_reaches_git_only_through_the_environment() {
    let s = setup(ForgeKind::Gitea).await;
    let data = tempfile::tempdir().expect("tmp");
    let (wrapper, log) = recording_git(data.path());
    let wd = Workdir::new(data.path()).with_git_program(&wrapper);
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let header: SecretString = s
        .forge
        .git_auth_header()
        .await
        .expect("auth")
        .expect("header");
    let head = sha(&s.fake.head_sha(REPO, n).expect("sha"));
    let url = s.fake.clone_url(REPO).expect("url");
    let req = PrCheckout {
        host: HOST,
        repo: &s.repo,
        number: n,
        clone_url: &url,
        sha: &head,
        auth_header: Some(&header),
    };
    wd.checkout(&req).await.expect("checkout");
    let log = std::fs::read_to_string(log).expect("log");
    let secret = secrecy::ExposeSecret::expose_secret(&header).to_owned();
    let credential = secret
        .rsplit_once(' ')
        .expect("scheme and credential")
        .1
        .to_owned();
    let argv: Vec<&str> = log.lines().filter(|l| l.starts_with("ARGV")).collect();
    assert!(argv.iter().any(|l| l.contains(" fetch ")), "{log}");
    assert!(
        argv.iter().all(|l| !l.contains(&credential)),
        "credential in argv:\n{log}"
    );
    let env_hits = log
        .lines()
        .filter(|l| l.starts_with("ENV") && l.contains(&credential))
        .count();
    assert!(
        env_hits >= 1,
        "the fetch got the header through GIT_CONFIG_*:\n{log}"
    );
    let non_fetch_with_header = log
        .split("ARGV ")
        .filter(|chunk| !chunk.starts_with("fetch"))
        .any(|chunk| chunk.contains(&credential));
    assert!(!non_fetch_with_header, "only fetch gets the header:\n{log}");
}

#[tokio::test]
async fn fetch_failure_never_shows_the_token() {
    let data = tempfile::tempdir().expect("tmp");
    let wd = Workdir::new(data.path());
    let repo = RepoName::parse(REPO).expect("repo");
    let header = SecretString::from("Basic dG9rZW4tdGhhdC1tdXN0LW5vdC1sZWFr");
    let head = sha(&"a".repeat(40));
    // A port nobody listens on: git fails to connect.
    let req = PrCheckout {
        host: HOST,
        repo: &repo,
        number: 3,
        clone_url: "http://127.0.0.1:9/acme/infra.git",
        sha: &head,
        auth_header: Some(&header),
    };
    let err = wd.checkout(&req).await.expect_err("unreachable");
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains("dG9rZW4"), "{shown}");
    assert!(
        matches!(err, WorkdirError::Git { step: "fetch", .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn concurrent_checkouts_of_one_pr_take_turns() {
    let s = setup(ForgeKind::Github).await;
    let data = tempfile::tempdir().expect("tmp");
    let wd = Workdir::new(data.path());
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let url = s.fake.clone_url(REPO).expect("url");
    let first = s.fake.head_sha(REPO, n).expect("sha");
    let second = s.fake.push(REPO, n, &[("b.tf", "y")]).await.expect("push");
    let (a, b) = tokio::join!(
        checkout(&wd, &s.repo, n, &url, &first),
        checkout(&wd, &s.repo, n, &url, &second)
    );
    let (a, b) = (a.expect("first checkout"), b.expect("second checkout"));
    assert_eq!(a.path, b.path);
    assert!(
        a.reused != b.reused,
        "one created the directory, the other reused it"
    );
}
