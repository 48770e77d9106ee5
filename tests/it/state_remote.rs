//! `atoll ... --remote`: the command line on the server's state and locks from another machine
//! (another directory, another data dir), the version a PR's apply writes, and the API's
//! refusals (401 without the token, no write without the lock, a second remote run waits).

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use atoll::store::{StateScope, VersionReason};
use reqwest::StatusCode;
use tokio::io::AsyncBufReadExt;

use crate::app_support::{REPO, TestApp};
use crate::support::Container;
use crate::web_support::{TOKEN, start_with_forge};

const PVE_TOKEN: &str = "root@pam!atoll=secret";

/// Another machine: its own checkout of the repository and its own data directory.
struct Laptop {
    dir: tempfile::TempDir,
}

impl Laptop {
    fn new(main_tf: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("repo/.git")).expect("checkout");
        std::fs::create_dir_all(dir.path().join("repo/envs/dev")).expect("project");
        std::fs::write(dir.path().join("repo/envs/dev/main.tf"), main_tf).expect("main.tf");
        Self { dir }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("repo/envs/dev")
    }

    fn command(&self, w: &TestApp, token: &str, args: &[&str]) -> tokio::process::Command {
        self.command_at(w, &w.base, token, args)
    }

    fn command_at(
        &self,
        w: &TestApp,
        remote: &str,
        token: &str,
        args: &[&str],
    ) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_atoll"));
        let project = self.project().display().to_string();
        cmd.args(args)
            .args(["--dir", &project, "--repo", &repo(), "--remote", remote])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("ATOLL_REMOTE_TOKEN", token)
            .env(
                "ATOLL_STORE__URL",
                format!("sqlite://{}", self.dir.path().join("laptop.db").display()),
            )
            .env("PROXMOX_VE_ENDPOINT", w.sim().url())
            .env("PROXMOX_VE_API_TOKEN", PVE_TOKEN)
            .env("ATOLL_PROTECT__DISCOVER", "false")
            .current_dir(self.dir.path())
            .kill_on_drop(true);
        cmd
    }

    async fn run(&self, w: &TestApp, args: &[&str]) -> Output {
        self.run_with(w, TOKEN, args).await
    }

    async fn run_with(&self, w: &TestApp, token: &str, args: &[&str]) -> Output {
        let output = self
            .command(w, token, args)
            .output()
            .await
            .expect("running atoll");
        eprintln!(
            "$ atoll {}\n--- stdout\n{}--- stderr\n{}--- exit {:?}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            output.status.code()
        );
        output
    }
}

pub(crate) fn repo() -> String {
    format!("github.com/{REPO}")
}

pub(crate) fn scope() -> StateScope {
    StateScope {
        repo: repo(),
        project_dir: "envs/dev".to_owned(),
        workspace: "default".to_owned(),
    }
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub(crate) async fn open_and_apply(w: &TestApp, main_tf: &str) -> u64 {
    let pr = w
        .open_pr("alice", "web", &[("envs/dev/main.tf", main_tf)])
        .await;
    w.comment_containing(pr, "Plan:").await;
    w.approve_and_apply(pr).await;
    w.comment_containing(pr, "Apply complete").await;
    pr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_list_versions_and_show_work_from_another_machine_through_remote() {
    let w = start_with_forge(Duration::from_millis(20)).await;
    let tf = Container::new("web").cores(2).hcl();
    let pr = open_and_apply(&w, &tf).await;

    // The runner's apply wrote version 1: who, which job, which commit.
    let versions = w
        .store
        .state()
        .state_versions(&scope())
        .await
        .expect("versions");
    assert_eq!(versions.len(), 1, "{versions:?}");
    let v1 = &versions[0];
    assert_eq!(v1.version, 1);
    assert_eq!(v1.meta.reason, VersionReason::Apply);
    assert_eq!(v1.meta.actor, "alice");
    assert!(v1.meta.job.is_some());
    let sha = w.fake().head_sha(REPO, pr).expect("sha");
    assert_eq!(v1.meta.commit.as_deref(), Some(sha.as_str()));
    assert_eq!(v1.resources, 1);

    let laptop = Laptop::new(&tf);
    let listed = laptop.run(&w, &["state", "list"]).await;
    assert!(listed.status.success(), "{}", stderr(&listed));
    let address = "proxmox_virtual_environment_container.web";
    assert!(stdout(&listed).contains(address), "{}", stdout(&listed));

    let versions = laptop.run(&w, &["state", "versions"]).await;
    assert!(versions.status.success(), "{}", stderr(&versions));
    let text = stdout(&versions);
    assert!(text.starts_with("1\t"), "{text}");
    assert!(text.contains("\tapply\tby alice\t1 resources"), "{text}");
    assert!(text.contains(&format!("commit={}", &sha[..12])), "{text}");

    let shown = laptop
        .run(&w, &["state", "show", address, "--version", "1"])
        .await;
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(
        stdout(&shown).contains(&format!("# {address}")),
        "{}",
        stdout(&shown)
    );
    assert!(
        stdout(&shown).contains("config.cores = \"2\""),
        "{}",
        stdout(&shown)
    );
    let missing = laptop
        .run(&w, &["state", "show", address, "--version", "9"])
        .await;
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("has no state version 9"),
        "{}",
        stderr(&missing)
    );

    // The laptop's own store never got the state: it came from the server.
    let local = atoll::store::connect(&format!(
        "sqlite://{}",
        laptop.dir.path().join("laptop.db").display()
    ))
    .await;
    if let Ok(local) = local {
        let scopes = local.state().state_scopes().await.expect("local scopes");
        assert!(scopes.is_empty(), "{scopes:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_api_answers_401_without_the_token_and_the_cli_says_what_to_set() {
    let w = start_with_forge(Duration::from_millis(20)).await;
    let url = w.url("/api/state?repo=github.com/acme/infra&dir=envs/dev&workspace=default");
    let bare = w.http.get(&url).send().await.expect("get");
    assert_eq!(bare.status(), StatusCode::UNAUTHORIZED);
    let wrong = w
        .http
        .get(&url)
        .bearer_auth("not-the-token")
        .send()
        .await
        .expect("get");
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let right = w
        .http
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("get");
    assert_eq!(right.status(), StatusCode::OK);

    let laptop = Laptop::new("");
    let secret = "wrong-token-n3ver-printed";
    let out = laptop.run_with(&w, secret, &["state", "list"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("401") && err.contains("ATOLL_REMOTE_TOKEN"),
        "{err}"
    );
    assert!(
        !err.contains(secret) && !stdout(&out).contains(secret),
        "{err}"
    );

    // Without --repo the server could not know whose state is meant.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_atoll"));
    let project = laptop.project().display().to_string();
    let out = cmd
        .args(["state", "list", "--dir", &project, "--remote", &w.base])
        .env_clear()
        .env("ATOLL_REMOTE_TOKEN", TOKEN)
        .output()
        .await
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("add --repo host/owner/repo"),
        "{}",
        stderr(&out)
    );

    // A second remote run waits for the first; a PR's lock is not a remote run's to release.
    let take = |actor: &'static str| {
        w.http
            .post(w.url("/api/state/lock"))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({"repo": repo(), "dir": "envs/dev",
                "workspace": "default", "actor": actor}))
            .send()
    };
    let first: serde_json::Value = take("bob").await.expect("take").json().await.expect("json");
    let id = first["lock"]["id"].as_str().expect("lock id").to_owned();
    let second = take("carol").await.expect("take again");
    assert_eq!(second.status(), StatusCode::CONFLICT);
    let held: serde_json::Value = second.json().await.expect("json");
    assert_eq!(held["held_by"][0]["owner"]["user"], "bob", "{held}");
    let bad_dir = w
        .http
        .post(w.url("/api/state/lock"))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({"repo": repo(), "dir": "../etc",
            "workspace": "default", "actor": "eve"}))
        .send()
        .await
        .expect("take");
    assert_eq!(bad_dir.status(), StatusCode::BAD_REQUEST);
    let released = w
        .http
        .delete(w.url(&format!("/api/state/lock/{id}")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("release");
    assert_eq!(released.status(), StatusCode::OK);
    assert_eq!(take("carol").await.expect("take").status(), StatusCode::OK);

    // A server nobody listens on: unreachable, with the next step.
    let mut cmd = laptop.command_at(&w, "http://127.0.0.1:9", TOKEN, &["state", "list"]);
    let out = cmd.output().await.expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cannot be reached"),
        "{}",
        stderr(&out)
    );
}

/// Reads `child`'s stderr until a line contains `needle` (with a deadline); returns the text.
async fn stderr_until(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>,
    needle: &str,
) -> String {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let line = tokio::time::timeout_at(deadline, lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no {needle:?} on stderr within 60 s; saw:\n{seen}"))
            .expect("stderr")
            .unwrap_or_else(|| panic!("stderr ended before {needle:?}; saw:\n{seen}"));
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(needle) {
            return seen;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_plan_waits_for_a_prs_lock_and_apply_without_the_lock_is_refused() {
    let w = start_with_forge(Duration::from_millis(20)).await;
    let tf = Container::new("web").cores(2).hcl();
    let pr = w
        .open_pr("alice", "web", &[("envs/dev/main.tf", &tf)])
        .await;
    w.comment_containing(pr, "Plan:").await;
    let laptop = Laptop::new(&tf);

    // The PR holds the lock: apply cannot get it and changes nothing.
    let refused = laptop
        .run(&w, &["apply", "--auto-approve", "--lock-timeout", "0"])
        .await;
    assert_eq!(refused.status.code(), Some(1));
    let err = stderr(&refused);
    assert!(
        err.contains(&format!("locked by pull request #{pr}")),
        "{err}"
    );
    assert!(w.pve().cluster_guests().await.expect("guests").is_empty());

    // Nor can anyone write the server's state without the remote run's lock.
    let put = w
        .http
        .put(w.url("/api/state/resource?repo=github.com/acme/infra&dir=envs/dev&workspace=default"))
        .bearer_auth(TOKEN)
        .json(
            &serde_json::json!({"address": "x.y", "resource_type": "x", "node": "pve",
            "vm_id": null, "volid": null, "attributes": {}}),
        )
        .send()
        .await
        .expect("put");
    assert_eq!(put.status(), StatusCode::CONFLICT);
    let body = put.text().await.expect("body");
    assert!(body.contains("lock"), "{body}");

    // A plan waits, saying who holds the lock, and goes on once the PR unlocks.
    let mut child = laptop
        .command(&w, TOKEN, &["plan", "--lock-timeout", "2m"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn plan");
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let waiting = stderr_until(&mut lines, "Waiting for the lock").await;
    assert!(
        waiting.contains(&format!("pull request #{pr}")),
        "{waiting}"
    );
    assert!(waiting.contains("planned by alice"), "{waiting}");
    w.fake()
        .comment(REPO, pr, "alice", "atlantis unlock")
        .await
        .expect("unlock");
    w.comment_containing(pr, "Released 1 lock").await;
    let planned = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the plan ends after the unlock")
        .expect("plan output");
    assert!(planned.status.success(), "plan failed");
    assert!(
        stdout(&planned).contains("1 to add"),
        "{}",
        stdout(&planned)
    );
    let held = w
        .store
        .locks()
        .lock_list(&atoll::locks::LockQuery::default())
        .await
        .expect("locks");
    assert!(held.is_empty(), "the plan gave its lock back: {held:?}");

    // With the lock free, a remote apply creates the guest and writes a version.
    let applied = laptop.run(&w, &["apply", "--auto-approve"]).await;
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert_eq!(w.pve().cluster_guests().await.expect("guests").len(), 1);
    let rows = w.store.state().state_list(&scope()).await.expect("state");
    assert_eq!(rows.len(), 1, "the server's state has the guest");
    let versions = w
        .store
        .state()
        .state_versions(&scope())
        .await
        .expect("versions");
    assert_eq!(versions.len(), 1, "{versions:?}");
    assert_eq!(versions[0].meta.reason, VersionReason::RemoteApply);
    assert_eq!(versions[0].meta.actor, "atoll-cli");
    let held = w
        .store
        .locks()
        .lock_list(&atoll::locks::LockQuery::default())
        .await
        .expect("locks");
    assert!(held.is_empty(), "the apply gave its lock back: {held:?}");
}
