//! Shared by the dashboard tests: an `App` on port 0 with a SQLite store in a temporary
//! directory, a login helper and seeding helpers. Each test binary uses part of it.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use argon2::password_hash::SaltString;
use argon2::{Argon2, PasswordHasher};
use atoll::app::App;
use atoll::commands::{RepoDir, Workspace};
use atoll::locks::{Acquisition, Lock, LockKey, LockOwner};
use atoll::store::{DeliveryOutcome, NewJob, Store};
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
    stop: tokio::sync::oneshot::Sender<()>,
    serving: tokio::task::JoinHandle<anyhow::Result<()>>,
    settings: atoll::config::Settings,
    runner: bool,
    dir: tempfile::TempDir,
}

pub(crate) async fn start() -> Server {
    start_with("", false).await
}

/// A server whose config has `extra` YAML appended; with `runner`, the PR runner handles jobs.
pub(crate) async fn start_with(extra: &str, runner: bool) -> Server {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let salt = SaltString::encode_b64(b"web-http-test-salt").expect("salt");
    let hash = Argon2::default()
        .hash_password(b"correct horse", &salt)
        .expect("hash")
        .to_string();
    let yaml = format!(
        "server: {{listen: \"127.0.0.1:0\"}}\ndata_dir: {:?}\nweb: {{username: ops, password_hash: {hash:?}, max_failed_logins: 3}}\napi: {{token: {TOKEN:?}}}\n{extra}",
        dir.path().display().to_string()
    );
    let loaded = atoll::config::from_sources(&yaml, []).expect("config");
    serve(loaded.settings, runner, dir).await
}

async fn serve(settings: atoll::config::Settings, runner: bool, dir: tempfile::TempDir) -> Server {
    let mut app = App::build(&settings).await.expect("build");
    if runner {
        let r = atoll::runner::Runner::from_settings(&settings, app.store()).expect("runner");
        app = Arc::new(r).register(app);
    }
    let base = format!("http://{}", app.local_addr().expect("addr"));
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
        serve(self.settings, self.runner, self.dir).await
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
        };
        match self
            .store
            .lock_acquire(&[key], &owner)
            .await
            .expect("acquire")
        {
            Acquisition::Granted(mut locks) => locks.remove(0),
            Acquisition::Conflict(_) => panic!("lock conflict in a fresh store"),
        }
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
