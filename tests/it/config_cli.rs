//! `atoll check-config` and `atoll serve` start-up checks, through the built binary.

use std::process::Command;

fn atoll(args: &[&str], config: &str) -> std::process::Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("atoll.yaml");
    std::fs::write(&path, config).expect("write config");
    Command::new(env!("CARGO_BIN_EXE_atoll"))
        .args(args)
        .arg(&path)
        .env_remove("ATOLL_GITHUB__WEBHOOK_SECRET")
        .env_remove("ATOLL_GITEA__WEBHOOK_SECRET")
        .output()
        .expect("run atoll")
}

#[test]
fn check_config_lists_every_problem_with_its_key_path_and_exits_2() {
    let out = atoll(
        &["check-config", "--config"],
        "server: {listen: nope}\ngithub: {enabled: true}\nrepo_allowlist: ['acme']\nqueue: {lease_secs: 1}\n",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for path in [
        "server.listen:",
        "github.webhook_secret:",
        "repo_allowlist[0]:",
        "queue.lease_secs:",
    ] {
        assert!(err.contains(path), "{path} missing from:\n{err}");
    }
    assert!(err.contains("4 problems"), "{err}");
}

#[test]
fn check_config_accepts_the_example_file() {
    let example = include_str!("../../config.example.yaml");
    let out = atoll(&["check-config", "--config"], example);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("configuration is valid"));
}

#[test]
fn serve_refuses_to_start_when_an_enabled_forge_has_no_secret() {
    let out = atoll(
        &["serve", "--config"],
        "server: {listen: '127.0.0.1:0'}\ngitea: {enabled: true}\nrepo_allowlist: ['*']\n",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gitea.webhook_secret: gitea is enabled but has no webhook secret"),
        "{err}"
    );
}
