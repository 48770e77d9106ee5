//! Shared by the dashboard tests: an `App` on port 0 with a SQLite store in a temporary
//! directory, a login helper and seeding helpers. Each test binary uses part of it.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use argon2::password_hash::SaltString;
use argon2::{Argon2, PasswordHasher};
use atoll::app::App;
use atoll::commands::{RepoDir, Workspace};
use atoll::locks::{Acquisition, Lock, LockKey, LockOwner, NewPlan, PlanSource, SavedPlan};
use atoll::proxmox::plan::Plan;
use atoll::runner::Runner;
use atoll::store::{DeliveryOutcome, NewJob, Store};
use fakeforge::{FAKE_TOKEN, FakeComment, FakeForge};
use pvesim::{Scenario, SimOptions, Simulator};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::json;
use uuid::Uuid;

pub(crate) const TOKEN: &str = "0123456789abcdef0123456789abcdef";
pub(crate) const EVIL_REPO: &str = "github.com/acme/<script>alert(1)</script>";
pub(crate) const EVIL_LINE: &str = "resource \"<script>alert(2)</script>\" created";

pub(crate) struct Server {
    pub(crate) base: String,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) http: reqwest::Client,
    /// The fake GitHub and the simulator, when started with [`start_with_forge`].
    pub(crate) world: Option<World>,
    stop: tokio::sync::oneshot::Sender<()>,
    serving: tokio::task::JoinHandle<anyhow::Result<()>>,
    settings: atoll::config::Settings,
    runner: bool,
    dir: tempfile::TempDir,
}

/// A fake GitHub holding `REPO` and a Proxmox VE simulator, wired to the server's runner.
pub(crate) struct World {
    pub(crate) fake: FakeForge,
    pub(crate) sim: Simulator,
}

pub(crate) const REPO: &str = "acme/infra";
const WEBHOOK_SECRET: &str = "web-test-webhook-secret";
const PVE_TOKEN: &str = "root@pam!atoll=secret";

/// The dashboard alone: no forge, no runner (queued jobs stay queued).
pub(crate) async fn start() -> Server {
    start_with("", false).await
}

/// A server whose config has `extra` YAML appended; with `runner`, the PR runner handles jobs.
pub(crate) async fn start_with(extra: &str, runner: bool) -> Server {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = format!("{}{extra}", login_yaml(dir.path()));
    let loaded = atoll::config::from_sources(&yaml, []).expect("config");
    serve(loaded.settings, runner, dir, None).await
}

/// The dashboard with the PR runner, a fake GitHub and a simulator whose tasks each take
/// `task` (slow enough to watch an apply).
pub(crate) async fn start_with_forge(task: Duration) -> Server {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let scenario = serde_yaml_ng::from_str::<Scenario>("{}").expect("scenario");
    let sim = Simulator::start(
        &scenario,
        SimOptions {
            task_duration: task,
            ..SimOptions::default()
        },
    )
    .await
    .expect("simulator");
    let fake = FakeForge::github().await.expect("fake github");
    fake.set_web_host("github.com");
    let world = World { fake, sim };
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = format!("{}{}", login_yaml(dir.path()), forge_yaml(&world));
    let loaded = atoll::config::from_sources(&yaml, []).expect("config");
    let server = serve(loaded.settings, true, dir, Some(world)).await;
    if let Some(w) = &server.world {
        w.fake.create_repo(REPO).await.expect("repo");
        w.fake.set_permission(REPO, "atoll-bot", "admin");
    }
    server
}

fn login_yaml(dir: &std::path::Path) -> String {
    let salt = SaltString::encode_b64(b"web-http-test-salt").expect("salt");
    let hash = Argon2::default()
        .hash_password(b"correct horse", &salt)
        .expect("hash")
        .to_string();
    format!(
        "server: {{listen: \"127.0.0.1:0\"}}\ndata_dir: {:?}\nweb: {{username: ops, password_hash: {hash:?}, max_failed_logins: 3}}\napi: {{token: {TOKEN:?}}}\n",
        dir.display().to_string()
    )
}

fn forge_yaml(w: &World) -> String {
    format!(
        "github: {{enabled: true, webhook_secret: {WEBHOOK_SECRET}, bot_user: atoll-bot, api_url: '{}', token: {FAKE_TOKEN}}}\n\
         repo_allowlist: ['github.com/acme/*']\n\
         proxmox: {{endpoint: '{}', api_token: '{PVE_TOKEN}'}}\n\
         protect: {{discover: false}}\n\
         repos:\n  - id: /.*/\n    apply_requirements: [approved]\n",
        w.fake.api_url(),
        w.sim.url()
    )
}

async fn serve(
    settings: atoll::config::Settings,
    runner: bool,
    dir: tempfile::TempDir,
    world: Option<World>,
) -> Server {
    let mut app = App::build(&settings).await.expect("build");
    if runner {
        let r = Runner::from_settings(&settings, app.store(), app.proxmox()).expect("runner");
        app = app.with_runner(Arc::new(r));
    }
    let addr = app.local_addr().expect("addr");
    if let Some(w) = &world {
        w.fake
            .set_webhook(&format!("http://{addr}/events"), WEBHOOK_SECRET);
    }
    let base = format!("http://{addr}");
    let store = app.store();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(app.serve(async move {
        let _ = stopped.await;
    }));
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client");
    Server {
        base,
        store,
        http,
        world,
        stop,
        serving,
        settings,
        runner,
        dir,
    }
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

impl Server {
    /// Stops the server and starts a new process-equivalent one on the same data directory
    /// and configuration (a new port).
    pub(crate) async fn restart(self) -> Server {
        let _ = self.stop.send(());
        self.serving
            .await
            .expect("server task")
            .expect("server stopped cleanly");
        drop(self.store);
        serve(self.settings, self.runner, self.dir, self.world).await
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

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
        let resp = self.login_with("correct horse").await;
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

impl World {
    /// Waits (deadline 60 s) for a comment by atoll on `pr` whose body contains `needle`.
    pub(crate) async fn comment_containing(&self, pr: u64, needle: &str) -> FakeComment {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let found = self
                .fake
                .comments(REPO, pr)
                .into_iter()
                .find(|c| c.author == "atoll-bot" && c.body.contains(needle));
            if let Some(c) = found {
                return c;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no comment containing {needle:?} on #{pr}; comments: {:#?}",
                self.fake.comments(REPO, pr)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
