//! Remote module sources installed as `terraform init` installs them, against a real
//! `git daemon` and a small module registry (the registry protocol) on loopback.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use atoll::workdir::modules::{ForgeHost, INSTALL_DIR, Installer, ModuleSettings};
use tfconfig::{Input, Loaded, Value};

/// A `git daemon` serving the repositories made under its base directory.
pub(crate) struct GitServer {
    base: tempfile::TempDir,
    port: u16,
    child: Child,
}

impl GitServer {
    pub(crate) fn start() -> Self {
        let base = tempfile::tempdir().expect("tmp");
        let port = free_port();
        let child = Command::new("git")
            .args([
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--listen=127.0.0.1",
                &format!("--port={port}"),
                &format!("--base-path={}", base.path().display()),
            ])
            .arg(base.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("git daemon (the git package)");
        wait_for_port(port);
        Self { base, port, child }
    }

    pub(crate) fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub(crate) fn url(&self, repo: &str) -> String {
        format!("git://{}/{repo}.git", self.host())
    }

    /// Commits `files` to `repo` (made on first use) and tags the commit; its id.
    pub(crate) fn commit(&self, repo: &str, files: &[(&str, &str)], tag: &str) -> String {
        let dir = self.base.path().join(format!("{repo}.git"));
        if !dir.exists() {
            git(&dir, &["init", "-q", "-b", "main", "."]);
        }
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", tag]);
        git(&dir, &["tag", tag]);
        git(&dir, &["rev-parse", "HEAD"])
    }
}

impl Drop for GitServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    std::fs::create_dir_all(dir).expect("mkdir");
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "port {port} never opened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A module: one input, one output naming its version, one generated resource.
fn module(version: &str) -> String {
    format!(
        "variable \"name\" {{\n  type = string\n}}\n\nresource \"random_string\" \"suffix\" {{\n  length = 6\n}}\n\noutput \"greeting\" {{\n  value = \"hello ${{var.name}} from {version}\"\n}}\n"
    )
}

fn settings(data: &Path, hosts: &[String], registries: &[String]) -> ModuleSettings {
    ModuleSettings {
        allowed_hosts: hosts.to_vec(),
        registries: registries.to_vec(),
        allow_plaintext: true,
        ..ModuleSettings::defaults(data)
    }
}

/// A checkout holding one root `main.tf`.
fn project(main_tf: &str) -> (tempfile::TempDir, Input) {
    let co = tempfile::tempdir().expect("tmp");
    std::fs::write(co.path().join("main.tf"), main_tf).expect("write");
    let input = Input {
        checkout: co.path().to_path_buf(),
        project_dir: PathBuf::new(),
        workspace: "default".to_owned(),
        vars: Vec::new(),
        limits: tfconfig::Limits::default(),
        modules: Default::default(),
    };
    (co, input)
}

async fn install_and_load(settings: ModuleSettings, input: &mut Input) -> Loaded {
    Installer::new(settings)
        .expect("installer")
        .install(input, None)
        .await;
    tfconfig::load(input)
}

fn output(loaded: &Loaded, name: &str) -> String {
    match loaded.outputs.get(name).map(|o| &o.value) {
        Some(Value::String(s)) => s.clone(),
        other => panic!("output {name}: {other:?}\n{}", loaded.render_diagnostics()),
    }
}

/// Every diagnostic's summary and detail, unwrapped, then the rendered text (file and line).
fn errors(loaded: &Loaded) -> String {
    let plain: Vec<String> = loaded
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.summary, d.detail))
        .collect();
    format!("{}\n{}", plain.join("\n"), loaded.render_diagnostics())
}

fn call(source: &str, extra: &str) -> String {
    format!(
        "module \"app\" {{\n  source = \"{source}\"\n{extra}  name   = \"web\"\n}}\n\noutput \"greeting\" {{\n  value = module.app.greeting\n}}\n"
    )
}

#[tokio::test]
async fn a_git_module_pinned_by_tag_loads_the_tagged_revision_with_its_resources() {
    let server = GitServer::start();
    server.commit("mods", &[("lxc/main.tf", &module("v1"))], "v1.2.0");
    server.commit("mods", &[("lxc/main.tf", &module("v2"))], "v2.0.0");
    let data = tempfile::tempdir().expect("tmp");
    let source = format!("git::{}//lxc?ref=v1.2.0", server.url("mods"));
    let (co, mut input) = project(&call(&source, ""));
    let loaded = install_and_load(settings(data.path(), &[server.host()], &[]), &mut input).await;
    assert!(!loaded.has_errors(), "{}", errors(&loaded));
    assert_eq!(output(&loaded, "greeting"), "hello web from v1");
    let addresses: Vec<&str> = loaded
        .resources
        .iter()
        .map(|r| r.address.as_str())
        .collect();
    assert_eq!(addresses, ["module.app.random_string.suffix"]);
    assert!(
        co.path().join(INSTALL_DIR).is_dir(),
        "installed inside the checkout"
    );

    let source = format!("git::{}//lxc?ref=v2.0.0", server.url("mods"));
    let (_co, mut input) = project(&call(&source, ""));
    let loaded = install_and_load(settings(data.path(), &[server.host()], &[]), &mut input).await;
    assert_eq!(output(&loaded, "greeting"), "hello web from v2");
}

#[tokio::test]
async fn a_package_fetched_once_is_installed_from_the_cache_by_its_commit() {
    let server = GitServer::start();
    let commit = server.commit("mods", &[("main.tf", &module("cached"))], "v1");
    let data = tempfile::tempdir().expect("tmp");
    let host = server.host();
    let source = format!("git::{}?ref={commit}", server.url("mods"));
    let (_a, mut first) = project(&call(&source, ""));
    let loaded = install_and_load(
        settings(data.path(), std::slice::from_ref(&host), &[]),
        &mut first,
    )
    .await;
    assert_eq!(output(&loaded, "greeting"), "hello web from cached");
    drop(server);
    let (_b, mut second) = project(&call(&source, ""));
    let loaded = install_and_load(settings(data.path(), &[host], &[]), &mut second).await;
    assert_eq!(
        output(&loaded, "greeting"),
        "hello web from cached",
        "{}",
        errors(&loaded)
    );
}

#[tokio::test]
async fn a_module_calling_a_remote_module_installs_both() {
    let server = GitServer::start();
    server.commit("inner", &[("main.tf", &module("inner"))], "v1");
    let outer = format!(
        "variable \"name\" {{\n  type = string\n}}\n\nmodule \"inner\" {{\n  source = \"git::{}?ref=v1\"\n  name   = var.name\n}}\n\noutput \"greeting\" {{\n  value = module.inner.greeting\n}}\n",
        server.url("inner")
    );
    server.commit("outer", &[("main.tf", &outer)], "v1");
    let data = tempfile::tempdir().expect("tmp");
    let source = format!("git::{}?ref=v1", server.url("outer"));
    let (_co, mut input) = project(&call(&source, ""));
    let loaded = install_and_load(settings(data.path(), &[server.host()], &[]), &mut input).await;
    assert_eq!(
        output(&loaded, "greeting"),
        "hello web from inner",
        "{}",
        errors(&loaded)
    );
    assert_eq!(input.modules.len(), 2);
}

#[tokio::test]
async fn a_host_the_server_does_not_list_is_refused_on_the_source_line() {
    let server = GitServer::start();
    server.commit("mods", &[("main.tf", &module("v1"))], "v1");
    let data = tempfile::tempdir().expect("tmp");
    let source = format!("git::{}?ref=v1", server.url("mods"));
    let (_co, mut input) = project(&call(&source, ""));
    let loaded = install_and_load(settings(data.path(), &[], &[]), &mut input).await;
    let text = errors(&loaded);
    assert!(text.contains("Module source not allowed"), "{text}");
    assert!(text.contains("modules.allowed_hosts"), "{text}");
    assert!(text.contains("main.tf line 2"), "{text}");
    assert_eq!(
        loaded.diagnostics.len(),
        1,
        "one root cause, one diagnostic: {text}"
    );

    // The PR's own forge host is allowed without being listed.
    let (_co, mut input) = project(&call(&source, ""));
    let forge = ForgeHost {
        host: &server.host(),
        owner: "mods",
        auth_header: None,
    };
    Installer::new(settings(data.path(), &[], &[]))
        .expect("installer")
        .install(&mut input, Some(forge))
        .await;
    let loaded = tfconfig::load(&input);
    assert_eq!(output(&loaded, "greeting"), "hello web from v1");

    // Plain text is refused unless the server allows it.
    let (_co, mut input) = project(&call(&source, ""));
    let strict = ModuleSettings {
        allow_plaintext: false,
        ..settings(data.path(), &[server.host()], &[])
    };
    let loaded = install_and_load(strict, &mut input).await;
    assert!(
        errors(&loaded).contains("modules.allow_plaintext"),
        "{}",
        errors(&loaded)
    );
}

#[tokio::test]
async fn revisions_packages_and_sources_atoll_cannot_use_are_each_one_clear_diagnostic() {
    let server = GitServer::start();
    server.commit(
        "mods",
        &[("main.tf", &module("v1")), ("big.txt", &"x".repeat(8192))],
        "v1",
    );
    let data = tempfile::tempdir().expect("tmp");
    let cases = [
        (
            format!("git::{}?ref=v9", server.url("mods")),
            "has no branch or tag named \"v9\"",
        ),
        (
            format!("git::{}//nowhere?ref=v1", server.url("mods")),
            "has no directory \"nowhere\"",
        ),
        (
            "s3::https://s3.amazonaws.com/bucket/m.zip".to_owned(),
            "\"s3\" getter",
        ),
        (
            format!("git::{}?ref=v1&sshkey=AAAA", server.url("mods")),
            "SSH key",
        ),
    ];
    for (source, expected) in cases {
        let (_co, mut input) = project(&call(&source, ""));
        let loaded =
            install_and_load(settings(data.path(), &[server.host()], &[]), &mut input).await;
        let text = errors(&loaded);
        assert!(text.contains(expected), "{source}: {text}");
        assert_eq!(loaded.diagnostics.len(), 1, "{source}: {text}");
    }
    let (_co, mut input) = project(&call(&format!("git::{}?ref=v1", server.url("mods")), ""));
    let small = ModuleSettings {
        max_bytes: 4096,
        ..settings(data.path(), &[server.host()], &[])
    };
    let loaded = install_and_load(small, &mut input).await;
    assert!(
        errors(&loaded).contains("Module package too large"),
        "{}",
        errors(&loaded)
    );
}

/// A module registry on loopback: versions 1.1.0, 1.2.0 and 2.0.0 of acme/app/proxmox, each
/// downloaded from the git server's tag `v<version>`.
async fn registry(git_url: String) -> (String, tokio::task::JoinHandle<()>) {
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::get;
    let app = axum::Router::new()
        .route("/.well-known/terraform.json", get(|| async { axum::Json(serde_json::json!({"modules.v1": "/v1/modules/"})) }))
        .route(
            "/v1/modules/acme/app/proxmox/versions",
            get(|| async {
                axum::Json(serde_json::json!({"modules": [{"versions": [{"version": "1.1.0"}, {"version": "1.2.0"}, {"version": "2.0.0"}]}]}))
            }),
        )
        .route(
            "/v1/modules/acme/app/proxmox/{version}/download",
            get(move |axum::extract::Path(version): axum::extract::Path<String>| {
                let url = git_url.clone();
                async move {
                    let mut headers = HeaderMap::new();
                    let location = format!("git::{url}?ref=v{version}");
                    headers.insert("x-terraform-get", location.parse().expect("header"));
                    (StatusCode::NO_CONTENT, headers)
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let host = format!("127.0.0.1:{}", listener.local_addr().expect("addr").port());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (host, task)
}

#[tokio::test]
async fn a_registry_module_resolves_its_version_constraint_to_the_newest_match() {
    let server = GitServer::start();
    for v in ["1.1.0", "1.2.0", "2.0.0"] {
        server.commit(
            "app",
            &[("modules/app/main.tf", &module(v))],
            &format!("v{v}"),
        );
    }
    let (registry_host, _task) = registry(server.url("app")).await;
    let data = tempfile::tempdir().expect("tmp");
    let source = format!("{registry_host}/acme/app/proxmox//modules/app");
    let allowed = [server.host()];
    let registries = [registry_host.clone()];

    let (_co, mut input) = project(&call(&source, "  version = \"~> 1.1\"\n"));
    let loaded = install_and_load(settings(data.path(), &allowed, &registries), &mut input).await;
    assert_eq!(
        output(&loaded, "greeting"),
        "hello web from 1.2.0",
        "{}",
        errors(&loaded)
    );

    let (_co, mut input) = project(&call(&source, "  version = \">= 2.0\"\n"));
    let loaded = install_and_load(settings(data.path(), &allowed, &registries), &mut input).await;
    assert_eq!(output(&loaded, "greeting"), "hello web from 2.0.0");

    let (_co, mut input) = project(&call(&source, "  version = \"~> 3.0\"\n"));
    let loaded = install_and_load(settings(data.path(), &allowed, &registries), &mut input).await;
    let text = errors(&loaded);
    assert!(
        text.contains("matches the constraint \"~> 3.0\"") && text.contains("2.0.0, 1.2.0, 1.1.0"),
        "{text}"
    );

    let (_co, mut input) = project(&call(&source, "  version = \"~> 1.1\"\n"));
    let loaded = install_and_load(settings(data.path(), &allowed, &[]), &mut input).await;
    assert!(
        errors(&loaded).contains("modules.registries"),
        "{}",
        errors(&loaded)
    );
}
