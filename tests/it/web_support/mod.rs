//! Shared by the dashboard tests: presets of the one test world (`app_support::TestApp`) and,
//! on it, a login helper and seeding helpers.
#![allow(dead_code)]

use std::time::Duration;

use atoll::commands::{RepoDir, Workspace};
use atoll::locks::{Acquisition, Lock, LockKey, LockOwner, NewPlan, PlanSource, SavedPlan};
use atoll::proxmox::plan::Plan;
use atoll::store::{DeliveryOutcome, NewJob};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::json;
use uuid::Uuid;

pub(crate) use crate::app_support::{API_TOKEN as TOKEN, REPO, TestApp};
use crate::app_support::{Options, PASSWORD};
pub(crate) const EVIL_REPO: &str = "github.com/acme/<script>alert(1)</script>";
pub(crate) const EVIL_LINE: &str = "resource \"<script>alert(2)</script>\" created";

/// The dashboard alone: no forge, no runner (queued jobs stay queued).
pub(crate) async fn start() -> TestApp {
    TestApp::start(Options::dashboard()).await
}

/// The dashboard with `extra` YAML appended to its config; with `runner`, the PR runner
/// handles jobs.
pub(crate) async fn start_with(extra: &str, runner: bool) -> TestApp {
    TestApp::start(Options {
        extra: extra.to_owned(),
        runner,
        ..Options::dashboard()
    })
    .await
}

/// The dashboard with the PR runner, a fake GitHub holding `REPO` and a simulator whose tasks
/// each take `task` (slow enough to watch an apply).
pub(crate) async fn start_with_forge(task: Duration) -> TestApp {
    TestApp::start(Options {
        login: true,
        task,
        ..Options::new(model::ForgeKind::Github)
    })
    .await
}

pub(crate) fn cookie_value(resp: &reqwest::Response, name: &str) -> Option<String> {
    resp.headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| {
            v.strip_prefix(&format!("{name}="))
                .map(|r| r.split(';').next().unwrap_or("").to_owned())
        })
}

pub(crate) fn hidden_csrf(html: &str) -> String {
    let at = html.find("name=\"csrf\" value=\"").expect("a csrf field") + 19;
    html[at..].split('"').next().expect("value").to_owned()
}

impl TestApp {
    pub(crate) async fn login_with(&self, password: &str) -> reqwest::Response {
        let form = self
            .http
            .get(self.url("/login"))
            .send()
            .await
            .expect("login form");
        let login_cookie = cookie_value(&form, "atoll_login").expect("login cookie");
        let csrf = hidden_csrf(&form.text().await.expect("body"));
        self.http
            .post(self.url("/login"))
            .header(COOKIE, format!("atoll_login={login_cookie}"))
            .form(&[
                ("csrf", csrf.as_str()),
                ("username", "ops"),
                ("password", password),
            ])
            .send()
            .await
            .expect("login post")
    }

    /// Logs in; returns the Cookie header value and the session's CSRF token.
    pub(crate) async fn login(&self) -> (String, String) {
        let resp = self.login_with(PASSWORD).await;
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let set = resp
            .headers()
            .get(SET_COOKIE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        let cookie = format!(
            "atoll_session={}",
            cookie_value(&resp, "atoll_session").expect("session")
        );
        let page = self.get(&cookie, "/locks").await;
        (cookie, hidden_csrf(&page.text().await.expect("body")))
    }

    pub(crate) async fn get(&self, cookie: &str, path: &str) -> reqwest::Response {
        self.http
            .get(self.url(path))
            .header(COOKIE, cookie)
            .send()
            .await
            .expect("get")
    }

    pub(crate) async fn lock(&self, repo: &str, pr: u64) -> Lock {
        self.lock_in(repo, "envs/dev", pr).await
    }

    pub(crate) async fn lock_in(&self, repo: &str, dir: &str, pr: u64) -> Lock {
        let key = LockKey {
            repo: repo.to_owned(),
            dir: RepoDir::parse(dir).expect("dir"),
            workspace: Workspace::parse("default").expect("ws"),
            project: None,
        };
        let owner = LockOwner {
            pr,
            pr_url: format!("https://github.com/acme/infra/pull/{pr}"),
            head_sha: "0123456789abcdef".to_owned(),
            user: "alice".to_owned(),
            job: None,
            summary: "Plan: 1 to add, 0 to change, 0 to destroy.".to_owned(),
            forge: Some(model::ForgeKind::Github),
        };
        match self
            .store
            .locks()
            .lock_acquire(&[key], &owner)
            .await
            .expect("acquire")
        {
            Acquisition::Granted(mut locks) => locks.remove(0),
            Acquisition::Conflict(_) => panic!("lock conflict in a fresh store"),
        }
    }

    /// Saves a current plan for `envs/dev` of `repo#pr` in which guest `name` (2100) is
    /// restarted and `atoll_self` (2200) is blocked by the guard, with its rendered text.
    pub(crate) async fn plan(&self, repo: &str, pr: u64, name: &str) -> SavedPlan {
        let guest = |address: String, vm_id: u32, blocked: serde_json::Value| {
            json!({
                "address": address,
                "type": "proxmox_virtual_environment_container", "node": "pve", "vm_id": vm_id,
                "actions": ["update"], "disruption": "restart", "blocked": blocked, "kind": "lxc",
                "attributes": [{"path": "features.nesting", "before": false, "after": true,
                                "effect": "restart", "pve_key": "features"}]
            })
        };
        let plan: Plan = serde_json::from_value(json!({
            "format_version": "1",
            "source": {"sha": "0123456789abcdef", "config_hash": "c", "state_fingerprint": "f"},
            "resource_changes": [
                guest(format!("proxmox_virtual_environment_container.{name}"), 2100, json!(null)),
                guest("proxmox_virtual_environment_container.atoll_self".to_owned(), 2200,
                      json!({"rule": "restart", "reason": "guest 2200 is atoll's own <host>"})),
            ],
            "summary": {"add": 0, "change": 2, "destroy": 0, "replace": 0, "restart": 2, "blocked": 1}
        }))
        .expect("plan document");
        let new = NewPlan {
            key: LockKey {
                repo: repo.to_owned(),
                dir: RepoDir::parse("envs/dev").expect("dir"),
                workspace: Workspace::parse("default").expect("ws"),
                project: None,
            },
            pr,
            job: None,
            source: PlanSource {
                sha: "0123456789abcdef".to_owned(),
                config_hash: "c".to_owned(),
                state_fingerprint: "f".to_owned(),
            },
            document: serde_json::to_value(&plan).expect("json"),
            rendered: atoll::render::plan_text(&plan),
            summary: "Plan: 0 to add, 2 to change, 0 to destroy.".to_owned(),
        };
        self.store.plans().plan_save(&new).await.expect("save plan")
    }

    pub(crate) async fn job(&self, kind: &str, lines: &[&str]) -> Uuid {
        let job = NewJob {
            kind: kind.to_owned(),
            repo: "github.com/acme/infra".to_owned(),
            pr: Some(7),
            dedup_key: None,
            payload: json!({}),
        };
        let DeliveryOutcome::Accepted { job: Some(id) } =
            self.store.enqueue(job).await.expect("enqueue")
        else {
            panic!("job not queued");
        };
        for line in lines {
            self.store.append_log(id, line).await.expect("log");
        }
        id
    }
}
