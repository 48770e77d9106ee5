//! `atoll demo`: the Proxmox simulator, a fake GitHub and the server on loopback, with SQLite
//! in a temporary directory, playing a scripted PR (open, autoplan, approve, apply) and then a
//! PR that touches atoll's own protected guest, which is blocked. Demo only: it wires the fake
//! forge, which production paths never use.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use atoll::app::App;
use atoll::runner::Runner;
use fakeforge::{FAKE_TOKEN, FakeForge, ReviewAction};
use pvesim::{Scenario, SimOptions, Simulator};

const SECRET: &str = "demo-webhook-secret";
/// The dashboard login the demo prints; it only ever listens on loopback.
const DEMO_USER: &str = "demo";
const DEMO_PASSWORD: &str = "demo";
const REPO: &str = "acme/infra";
const TEMPLATE: &str = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";
/// atoll's own guest in the simulated cluster, protected by the server's config.
const SCENARIO: &str = "guests:\n  - vmid: 100\n    status: running\n    config:\n      hostname: atoll\n      tags: atoll\n      cores: 2\n      memory: 512\n      ostype: debian\n      rootfs: 'local-lvm:vm-100-disk-0,size=8G'\n      unprivileged: 1\n";

fn container(name: &str, vm_id: u32, cores: u32) -> String {
    format!(
        "resource \"proxmox_virtual_environment_container\" \"{name}\" {{\n  node_name = \"pve\"\n  vm_id = {vm_id}\n  unprivileged = true\n  operating_system {{\n    template_file_id = \"{TEMPLATE}\"\n    type = \"debian\"\n  }}\n  disk {{\n    datastore_id = \"local-lvm\"\n    size = 8\n  }}\n  cpu {{\n    cores = {cores}\n  }}\n}}\n"
    )
}

/// Runs the demo; with `exit`, returns after the script instead of serving until Ctrl-C.
pub(crate) async fn run(exit: bool) -> anyhow::Result<()> {
    let scenario: Scenario = serde_yaml_ng::from_str(SCENARIO).context("demo scenario")?;
    let options = SimOptions {
        task_duration: Duration::from_millis(50),
        ..SimOptions::default()
    };
    let sim = Simulator::start(&scenario, options).await?;
    let fake = FakeForge::github().await?;
    fake.set_web_host("github.com");
    let dir = tempfile::tempdir().context("temporary directory")?;
    let password_hash = atoll::web::hash_password(DEMO_PASSWORD)
        .map_err(|e| anyhow::anyhow!("hashing the demo password: {e}"))?;
    let yaml = format!(
        "server: {{listen: '127.0.0.1:0'}}\ndata_dir: {:?}\n\
         web: {{username: {DEMO_USER}, password_hash: '{password_hash}'}}\n\
         github: {{enabled: true, webhook_secret: {SECRET}, bot_user: atoll-bot, api_url: '{}', token: {FAKE_TOKEN}}}\n\
         repo_allowlist: ['github.com/acme/*']\n\
         proxmox: {{endpoint: '{}', api_token: 'root@pam!atoll=secret'}}\n\
         protect: {{discover: false, guests: [{{vm_id: 100}}]}}\n\
         repos:\n  - id: /.*/\n    apply_requirements: [approved]\n",
        dir.path(),
        fake.api_url(),
        sim.url()
    );
    let settings = atoll::config::from_sources(&yaml, std::iter::empty())
        .map_err(|e| anyhow::anyhow!("demo config: {e}"))?
        .settings;
    let app = App::build(&settings).await?;
    let runner = Runner::from_settings(&settings, app.store(), app.proxmox())?;
    let app = app.with_runner(Arc::new(runner));
    let addr = app.local_addr()?;
    fake.set_webhook(&format!("http://{addr}/events"), SECRET);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.serve(async move {
        let _ = stopped.await;
    }));
    println!(
        "atoll demo: server on http://{addr}/ (dashboard), simulator on {}",
        sim.url()
    );
    let played = script(&fake).await;
    if played.is_ok() && !exit {
        println!(
            "\nDemo done. Dashboard: http://{addr}/ (log in as {DEMO_USER} / {DEMO_PASSWORD}). Press Ctrl-C to stop."
        );
        atoll::app::shutdown_signal().await;
    }
    let _ = stop.send(());
    server.await.context("server task")??;
    played
}

async fn script(fake: &FakeForge) -> anyhow::Result<()> {
    fake.create_repo(REPO).await?;
    fake.set_permission(REPO, "alice", "write");
    fake.set_permission(REPO, "bob", "write");
    println!("\n== PR #1: alice adds container web (vm 200) in envs/dev");
    let pr = fake
        .open_pr(
            REPO,
            "alice",
            "add-web",
            &[("envs/dev/main.tf", &container("web", 200, 2))],
        )
        .await?;
    let plan = wait_for(fake, pr, "Plan:").await?;
    println!("{plan}");
    println!("== bob approves; alice comments `atlantis apply`");
    fake.review(REPO, pr, "bob", ReviewAction::Approve).await?;
    fake.comment(REPO, pr, "alice", "atlantis apply").await?;
    println!("{}", wait_for(fake, pr, "Apply complete").await?);
    println!("== PR #1 merged");
    fake.merge(REPO, pr).await?;
    println!("\n== PR #2: alice changes atoll's own guest (vm 100, protected)");
    let pr = fake
        .open_pr(
            REPO,
            "alice",
            "resize-atoll",
            &[("infra/atoll/main.tf", &container("atoll", 100, 4))],
        )
        .await?;
    let blocked = wait_for(fake, pr, "Plan").await?;
    println!("{blocked}");
    if !blocked.contains("Blocked") {
        bail!("the PR touching the protected guest was not blocked");
    }
    Ok(())
}

/// The body of atoll's first comment on `pr` containing `needle`, within 60 s.
async fn wait_for(fake: &FakeForge, pr: u64, needle: &str) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = fake
            .comments(REPO, pr)
            .into_iter()
            .find(|c| c.author == "atoll-bot" && c.body.contains(needle));
        if let Some(c) = found {
            return Ok(c.body);
        }
        if Instant::now() > deadline {
            bail!("no comment containing {needle:?} on PR #{pr} within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
