//! `atoll demo`: the Proxmox simulator, a fake GitHub and the server on loopback, with SQLite
//! in a temporary directory, playing the incident atoll exists for. atoll runs in a VM that
//! the same stack declares: PR #1 adds a container and a k3s VM (plan, approve, apply); PR #2
//! changes `cpu.units` on atoll's own VM (applied live, no restart: blocked only as a live
//! change on a protected guest); PR #3 adds a serial port to it (a restart: blocked, with the
//! reason); PR #4 makes the same serial change on the k3s VM, applied with the restart its
//! plan announced. Demo only: it wires the fake forge, which production paths never use.

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
/// atoll's own VM in the simulated cluster, protected by the server's config: the config
/// qemu-server holds for what [`atoll_vm`] declares, so only a PR's change shows.
const SCENARIO: &str = "guests:\n  - vmid: 100\n    type: qemu\n    status: running\n    config:\n      name: atoll\n      tags: atoll\n      acpi: 1\n      agent: 'enabled=0,fstrim_cloned_disks=0,type=virtio'\n      bios: seabios\n      boot: 'order=scsi0;net0'\n      cores: 2\n      cpu: qemu64\n      sockets: 1\n      numa: 0\n      memory: 2048\n      balloon: 0\n      protection: 0\n      keyboard: en-us\n      ostype: l26\n      scsihw: virtio-scsi-pci\n      onboot: 1\n      tablet: 1\n      scsi0: 'local-lvm:vm-100-disk-0,size=16G'\n      net0: 'virtio=BC:24:11:00:01:00,bridge=vmbr0,firewall=0'\n";

fn container(name: &str, vm_id: u32, cores: u32) -> String {
    format!(
        "resource \"proxmox_virtual_environment_container\" \"{name}\" {{\n  node_name = \"pve\"\n  vm_id = {vm_id}\n  unprivileged = true\n  operating_system {{\n    template_file_id = \"{TEMPLATE}\"\n    type = \"debian\"\n  }}\n  disk {{\n    datastore_id = \"local-lvm\"\n    size = 8\n  }}\n  cpu {{\n    cores = {cores}\n  }}\n}}\n"
    )
}

/// A VM as the stack declares it; `cpu` goes into its `cpu` block, `serial` adds a serial port.
fn vm(name: &str, vm_id: u32, cpu: &str, serial: bool) -> String {
    let serial = if serial {
        "  serial_device {\n    device = \"socket\"\n  }\n"
    } else {
        ""
    };
    format!(
        "resource \"proxmox_virtual_environment_vm\" \"{name}\" {{\n  node_name = \"pve\"\n  vm_id = {vm_id}\n  name = \"{name}\"\n  cpu {{\n    cores = 2\n{cpu}  }}\n  memory {{\n    dedicated = 2048\n  }}\n  operating_system {{\n    type = \"l26\"\n  }}\n  disk {{\n    interface = \"scsi0\"\n    datastore_id = \"local-lvm\"\n    size = 16\n  }}\n  network_device {{\n    bridge = \"vmbr0\"\n  }}\n{serial}}}\n"
    )
}

/// atoll's own VM (vm 100): `units` sets `cpu.units`.
fn atoll_vm(units: Option<u32>, serial: bool) -> String {
    let cpu = units.map_or_else(String::new, |u| format!("    units = {u}\n"));
    vm("atoll", 100, &cpu, serial)
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
    println!("\n== PR #1: alice adds container web (vm 200) and VM k3s (vm 201) in envs/dev");
    let dev = format!("{}{}", container("web", 200, 2), vm("k3s", 201, "", false));
    let pr = fake
        .open_pr(REPO, "alice", "add-web", &[("envs/dev/main.tf", &dev)])
        .await?;
    apply(fake, pr).await?;
    println!("== PR #1 merged");
    fake.merge(REPO, pr).await?;

    println!("\n== PR #2: alice changes cpu.units on atoll's own VM (vm 100, protected)");
    let pr = fake
        .open_pr(
            REPO,
            "alice",
            "atoll-cpu-units",
            &[("infra/atoll/main.tf", &atoll_vm(Some(200), false))],
        )
        .await?;
    let plan = wait_for(fake, pr, "Plan").await?;
    println!("{plan}");
    if !plan.contains("applied live, no restart") || !plan.contains("Blocked") {
        bail!("the cpu.units plan on the protected VM was not live and blocked");
    }
    println!("== PR #2 closed");
    fake.close(REPO, pr).await?;
    wait_for(fake, pr, "Locks released").await?;

    println!("\n== PR #3: alice adds a serial port to atoll's own VM (vm 100, protected)");
    let pr = fake
        .open_pr(
            REPO,
            "alice",
            "atoll-serial",
            &[("infra/atoll/main.tf", &atoll_vm(None, true))],
        )
        .await?;
    let plan = wait_for(fake, pr, "Plan").await?;
    println!("{plan}");
    if !plan.contains("guest will be restarted") || !plan.contains("Blocked") {
        bail!("the serial_device plan on the protected VM was not a blocked restart");
    }

    println!("\n== PR #4: the same serial port on VM k3s (vm 201), not protected");
    let dev = format!("{}{}", container("web", 200, 2), vm("k3s", 201, "", true));
    let pr = fake
        .open_pr(REPO, "alice", "k3s-serial", &[("envs/dev/main.tf", &dev)])
        .await?;
    let applied = apply(fake, pr).await?;
    if !applied.contains("restarted") {
        bail!("the k3s VM was not restarted as its plan announced");
    }
    Ok(())
}

/// Waits for `pr`'s plan, approves it as bob, applies it as alice; the apply comment.
async fn apply(fake: &FakeForge, pr: u64) -> anyhow::Result<String> {
    let plan = wait_for(fake, pr, "Plan:").await?;
    println!("{plan}");
    println!("== bob approves; alice comments `atlantis apply`");
    fake.review(REPO, pr, "bob", ReviewAction::Approve).await?;
    fake.comment(REPO, pr, "alice", "atlantis apply").await?;
    let applied = wait_for(fake, pr, "Apply complete").await?;
    println!("{applied}");
    Ok(applied)
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
