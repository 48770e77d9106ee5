//! What the state's history looks like from the dashboard and the pull request: the State
//! pages, the versions a PR's `state rm` and a local apply write, and the plan comment of a PR
//! whose project a remote run has locked.

use std::time::Duration;

use atoll::store::VersionReason;
use reqwest::StatusCode;

use crate::state_remote::{open_and_apply, repo, scope, stderr, stdout};
use crate::support::Container;
use crate::web_support::{TOKEN, start_with_forge};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_state_page_lists_projects_resources_and_versions() {
    let w = start_with_forge(Duration::from_millis(20)).await;
    let tf = Container::new("web").cores(2).hcl();
    open_and_apply(&w, &tf).await;
    let (cookie, _) = w.login().await;
    let page = w.get(&cookie, "/state").await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.expect("body");
    assert!(
        html.contains(">State</a>"),
        "linked from the navigation: {html}"
    );
    let link =
        "/state/project?repo=github%2Ecom%2Facme%2Finfra&amp;dir=envs%2Fdev&amp;workspace=default";
    assert!(html.contains(link), "{html}");
    let project = w
        .get(
            &cookie,
            "/state/project?repo=github.com%2Facme%2Finfra&dir=envs%2Fdev&workspace=default",
        )
        .await;
    assert_eq!(project.status(), StatusCode::OK);
    let html = project.text().await.expect("body");
    assert!(
        html.contains("proxmox_virtual_environment_container.web"),
        "{html}"
    );
    assert!(
        html.contains("<td>apply</td>") && html.contains("<td>alice</td>"),
        "{html}"
    );
    assert!(
        html.contains("href=\"/jobs/"),
        "the version links its job: {html}"
    );
    let anonymous = w.http.get(w.url("/state")).send().await.expect("get");
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER, "needs a login");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prs_state_rm_writes_a_version_after_the_apply_one() {
    let w = crate::app_support::TestApp::start(crate::app_support::Options {
        extra: "commands: {allow_commands: [all]}\n".to_owned(),
        ..crate::app_support::Options::new(model::ForgeKind::Github)
    })
    .await;
    let tf = Container::new("web").vm_id(951).hcl();
    let pr = open_and_apply(&w, &tf).await;
    let address = "proxmox_virtual_environment_container.web";
    w.say(
        pr,
        "alice",
        &format!("atlantis state rm {address} -d envs/dev"),
    )
    .await;
    w.comment_containing(pr, "State rm complete").await;
    let versions = w
        .store
        .state()
        .state_versions(&scope())
        .await
        .expect("versions");
    let got: Vec<(u32, VersionReason, u32)> = versions
        .iter()
        .map(|v| (v.version, v.meta.reason, v.resources))
        .collect();
    assert_eq!(
        got,
        [(2, VersionReason::StateRm, 0), (1, VersionReason::Apply, 1)]
    );
    let first = w
        .store
        .state()
        .state_version(&scope(), 1)
        .await
        .expect("v1")
        .expect("v1 exists");
    let document = first.document.expect("document").to_string();
    assert!(document.contains(address), "{document}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_plan_while_a_remote_run_holds_the_lock_names_the_run() {
    let w = start_with_forge(Duration::from_millis(20)).await;
    let taken = w
        .http
        .post(w.url("/api/state/lock"))
        .bearer_auth(TOKEN)
        .json(
            &serde_json::json!({"repo": repo(), "dir": "envs/dev", "workspace": "default",
            "actor": "bob (atoll --remote)"}),
        )
        .send()
        .await
        .expect("take the lock");
    assert_eq!(taken.status(), StatusCode::OK);
    let (cookie, _) = w.login().await;
    let locks = w
        .get(&cookie, "/locks")
        .await
        .text()
        .await
        .expect("locks page");
    assert!(locks.contains(">remote run</span>"), "{locks}");
    assert!(!locks.contains("#0"), "{locks}");
    let tf = Container::new("web").hcl();
    let pr = w
        .open_pr("alice", "web", &[("envs/dev/main.tf", &tf)])
        .await;
    let refused = w.comment_containing(pr, "Plan Failed").await;
    assert!(
        refused
            .body
            .contains("a command-line run through the server's API (`atoll --remote`, by `bob (atoll --remote)`)"),
        "{}",
        refused.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_apply_writes_a_version_that_state_versions_lists() {
    let env = crate::engine_support::Env::start().await;
    let none = env.atoll(&["state", "versions"]).await;
    assert!(none.status.success());
    assert!(
        stderr(&none).contains("No state versions yet"),
        "{}",
        stderr(&none)
    );
    env.write_tf(&Container::new("web").vm_id(320).cores(1).hcl());
    env.apply().await;
    env.write_tf(&Container::new("web").vm_id(320).cores(2).hcl());
    env.apply().await;
    let listed = env.atoll(&["state", "versions"]).await;
    assert!(listed.status.success(), "{}", stderr(&listed));
    let text = stdout(&listed);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("2\t") && lines[1].starts_with("1\t"),
        "{text}"
    );
    assert!(
        lines[1].contains("\tapply\tby atoll-cli\t1 resources"),
        "{text}"
    );
    let address = "proxmox_virtual_environment_container.web";
    let first = env
        .atoll(&["state", "show", address, "--version", "1"])
        .await;
    assert!(
        stdout(&first).contains("config.cores = \"1\""),
        "{}",
        stdout(&first)
    );
    let second = env
        .atoll(&["state", "show", address, "--version", "2"])
        .await;
    assert!(
        stdout(&second).contains("config.cores = \"2\""),
        "{}",
        stdout(&second)
    );
}
