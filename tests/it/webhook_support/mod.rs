//! A real atoll server on port 0 with a fresh SQLite file, and a forge-like client that signs
//! deliveries the way GitHub and Gitea do.

#![allow(dead_code, reason = "each test crate uses part of the support module")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use atoll::app::App;
use atoll::store::{Job, Store};
use atoll::webhook::sign;
use tempfile::TempDir;
use tokio::sync::oneshot;

pub(crate) const GITHUB_SECRET: &str = "github-test-secret";
pub(crate) const GITEA_SECRET: &str = "gitea-test-secret";

pub(crate) struct TestServer {
    pub(crate) base: String,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    _dir: TempDir,
}

/// The YAML used by tests: both forges on, an allowlist for the fixture repositories.
pub(crate) fn test_yaml(data_dir: &Path, allowlist: &str, extra: &str) -> String {
    format!(
        "server: {{listen: '127.0.0.1:0'}}\n\
         data_dir: {data_dir:?}\n\
         github: {{enabled: true, webhook_secret: {GITHUB_SECRET}, bot_user: atoll-bot}}\n\
         gitea: {{enabled: true, webhook_secret: {GITEA_SECRET}}}\n\
         repo_allowlist: {allowlist}\n{extra}",
    )
}

/// Allows the repositories the fixtures come from.
pub(crate) const FIXTURE_REPOS: &str = "['github.com/Codertocat/*', 'gitea.example.com/acme/*']";

pub(crate) fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().expect("http client")
}

impl TestServer {
    pub(crate) async fn start() -> Self {
        Self::start_with(FIXTURE_REPOS, "").await
    }

    /// Starts with this allowlist (a YAML list) and extra YAML appended.
    pub(crate) async fn start_with(allowlist: &str, extra: &str) -> Self {
        Self::start_with_env(allowlist, extra, &[]).await
    }

    /// Also with `ATOLL_*` variables (for `server.*` keys, which the YAML already has).
    pub(crate) async fn start_with_env(allowlist: &str, extra: &str, env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let yaml = test_yaml(dir.path(), allowlist, extra);
        let loaded = atoll::config::from_sources(&yaml, env.iter().copied())
            .unwrap_or_else(|e| panic!("test config invalid:\n{e}"));
        let app = App::build(&loaded.settings).await.expect("app builds");
        let addr = app.local_addr().expect("bound address");
        let store = app.store();
        let (stop, stopped) = oneshot::channel::<()>();
        let handle = tokio::spawn(app.serve(async move {
            let _ = stopped.await;
        }));
        Self {
            base: format!("http://{addr}"),
            store,
            client: client(),
            stop: Some(stop),
            handle: Some(handle),
            _dir: dir,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub(crate) async fn jobs(&self) -> Vec<Job> {
        self.store.list_jobs(1000).await.expect("list jobs")
    }

    /// Stops the server and waits until it has shut down.
    pub(crate) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(handle) = self.handle.take() {
            handle
                .await
                .expect("server task")
                .expect("server ran cleanly");
        }
    }
}

pub(crate) fn fixture(path: &str) -> Vec<u8> {
    let full: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "fixtures", path]
        .iter()
        .collect();
    std::fs::read(&full).unwrap_or_else(|e| panic!("reading fixture {}: {e}", full.display()))
}

/// A delivery as a forge would send it.
pub(crate) struct Delivery {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Delivery {
    /// GitHub: `X-GitHub-Event`, `X-GitHub-Delivery`, `X-Hub-Signature-256: sha256=<hex>`.
    pub(crate) fn github(event: &str, delivery: &str, body: Vec<u8>) -> Self {
        let sig = format!("sha256={}", sign(GITHUB_SECRET, &body));
        let headers = vec![
            ("content-type".into(), "application/json".into()),
            ("x-github-event".into(), event.into()),
            ("x-github-delivery".into(), delivery.into()),
            ("x-hub-signature-256".into(), sig),
            ("user-agent".into(), "GitHub-Hookshot/test".into()),
        ];
        Self { headers, body }
    }

    /// Gitea: its own headers plus the GitHub-style copies Gitea also sends.
    pub(crate) fn gitea(event: &str, event_type: &str, delivery: &str, body: Vec<u8>) -> Self {
        let sig = sign(GITEA_SECRET, &body);
        let headers = vec![
            ("content-type".into(), "application/json".into()),
            ("x-gitea-event".into(), event.into()),
            ("x-gitea-event-type".into(), event_type.into()),
            ("x-gitea-delivery".into(), delivery.into()),
            ("x-gitea-signature".into(), sig.clone()),
            ("x-github-event".into(), event.into()),
            ("x-github-delivery".into(), delivery.into()),
            ("x-hub-signature-256".into(), format!("sha256={sig}")),
        ];
        Self { headers, body }
    }

    /// Forgejo: `X-Forgejo-*` headers (and the Gitea copies).
    pub(crate) fn forgejo(event: &str, event_type: &str, delivery: &str, body: Vec<u8>) -> Self {
        let mut d = Self::gitea(event, event_type, delivery, body);
        let sig = sign(GITEA_SECRET, &d.body);
        d.headers.extend([
            ("x-forgejo-event".into(), event.into()),
            ("x-forgejo-event-type".into(), event_type.into()),
            ("x-forgejo-delivery".into(), delivery.into()),
            ("x-forgejo-signature".into(), sig),
        ]);
        d
    }

    pub(crate) fn set_header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub(crate) fn without_header(mut self, name: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    pub(crate) async fn send(&self, server: &TestServer) -> (u16, serde_json::Value) {
        let mut req = server.client.post(server.url("/events"));
        for (name, value) in &self.headers {
            req = req.header(name.as_str(), value.as_str());
        }
        let resp = req
            .body(self.body.clone())
            .send()
            .await
            .expect("POST /events");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("response body");
        let json = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
        (status, json)
    }
}
