//! `atoll state import-terraform`: the state Terraform with bpg wrote for a project
//! (`tests/fixtures/terraform_state`) is taken over against a cluster holding its guests; the
//! import changes nothing on the cluster, carries Terraform's generated values (the VM's name
//! reads `random_id.suffix`), lists what atoll does not manage, and the next plan is empty. A
//! state that holds another guest at an address is refused with the way out; a bad file is
//! refused before anything is opened. `export-terraform` then writes a state that another
//! scope imports back to the same empty plan.

use std::collections::BTreeMap;
use std::path::Path;

use crate::engine_support::{Env, options, stdout, text};

pub(crate) const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/terraform_state"
);
const CONTAINERS: [u32; 3] = [300, 301, 310];
const VM: u32 = 400;

fn copy_project(to: &Path) {
    let from = Path::new(FIXTURE).join("project");
    std::fs::create_dir_all(to.join("modules/db")).expect("module dir");
    for file in ["main.tf", "modules/db/main.tf"] {
        std::fs::copy(from.join(file), to.join(file)).expect("copying the project");
    }
}

/// A cluster holding the project's guests as Terraform made them: the configuration applied
/// once on a scratch simulator, each guest's config read back without atoll's marker tag (and
/// the VM named with the suffix Terraform's state holds).
pub(crate) async fn terraform_made_cluster() -> Env {
    let scratch = Env::start().await;
    copy_project(&scratch.project());
    scratch.apply().await;
    let mut guests = Vec::new();
    for vmid in CONTAINERS {
        guests.push(guest(vmid, "lxc", scratch.live_config(vmid).await));
    }
    let mut vm = scratch.vm_config(VM).await;
    vm.insert("name".to_owned(), "k3s-deadbeef".to_owned());
    guests.push(guest(VM, "qemu", vm));
    let yaml = serde_yaml_ng::to_string(&serde_json::json!({ "guests": guests })).expect("yaml");
    let env = Env::with_scenario(&yaml, options(20)).await;
    copy_project(&env.project());
    env
}

fn guest(vmid: u32, kind: &str, mut config: BTreeMap<String, String>) -> serde_json::Value {
    config.remove("digest");
    if let Some(tags) = config.remove("tags") {
        let kept: Vec<&str> = tags
            .split(';')
            .filter(|t| !atoll::proxmox::owner::is_marker(t))
            .collect();
        if !kept.is_empty() {
            config.insert("tags".to_owned(), kept.join(";"));
        }
    }
    serde_json::json!({ "vmid": vmid, "type": kind, "status": "running", "config": config })
}

/// Asserts the plan changes nothing: atoll's marker tags, which Terraform's guests lack, are
/// bookkeeping the plan never shows.
pub(crate) async fn assert_no_changes(env: &Env, args: &[&str]) {
    let mut all = vec!["plan", "--json"];
    all.extend_from_slice(args);
    let out = env.atoll(&all).await;
    assert!(out.status.success(), "{}", text(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json plan");
    for c in plan["resource_changes"].as_array().expect("changes") {
        assert_eq!(c["actions"], serde_json::json!(["no-op"]), "{c}");
    }
    let mut all = vec!["plan"];
    all.extend_from_slice(args);
    let out = env.atoll(&all).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout(&out).contains("No changes."), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terraform_state_is_taken_over_by_address_and_the_next_plan_changes_nothing() {
    let env = terraform_made_cluster().await;
    let before: Vec<_> = futures_configs(&env).await;
    let file = format!("{FIXTURE}/terraform.tfstate");
    let out = env.atoll(&["state", "import-terraform", &file]).await;
    assert!(out.status.success(), "{}", text(&out));
    let said = stdout(&out);
    for line in [
        "proxmox_virtual_environment_container.web[0]: took over CT 300 on node pve",
        "proxmox_virtual_environment_container.web[1]: took over CT 301 on node pve",
        "module.db.proxmox_virtual_environment_container.this: took over CT 310 on node pve",
        "proxmox_virtual_environment_vm.k3s: took over VM 400 on node pve",
        "random_password.root: took over Terraform's generated values",
        "random_id.suffix: took over Terraform's generated values",
        "local_file.inventory: local_file of registry.terraform.io/hashicorp/local",
        "data.proxmox_virtual_environment_nodes.all: a data source",
        "Imported 4 resources and 2 generated values; 0 already in state, 2 left alone.",
    ] {
        assert!(said.contains(line), "missing {line:?} in:\n{said}");
    }
    assert!(!said.contains("Xk3vQ9pLm2RtW8sYz4Nb"), "{said}");
    let versions = stdout(&env.atoll(&["state", "versions"]).await);
    assert!(versions.contains("import_terraform"), "{versions}");
    assert!(!versions.contains("Xk3vQ9pLm2RtW8sYz4Nb"), "{versions}");
    assert_eq!(
        futures_configs(&env).await,
        before,
        "nothing on the cluster changed"
    );

    // the VM's name reads the imported suffix: no rename planned
    assert_no_changes(&env, &[]).await;
    let shown = env.atoll(&["state", "show", "random_password.root"]).await;
    assert!(
        !text(&shown).contains("Xk3vQ9pLm2RtW8sYz4Nb"),
        "{}",
        text(&shown)
    );

    // a second import of the same file keeps what is there
    let again = env.atoll(&["state", "import-terraform", &file]).await;
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        stdout(&again).contains("Imported 0 resources and 0 generated values; 6 already in state"),
        "{}",
        text(&again)
    );
}

async fn futures_configs(env: &Env) -> Vec<BTreeMap<String, String>> {
    let mut all = Vec::new();
    for vmid in CONTAINERS {
        all.push(env.live_config(vmid).await);
    }
    all.push(env.vm_config(VM).await);
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_guest_at_an_address_is_refused_with_the_way_out_and_nothing_is_recorded() {
    let env = terraform_made_cluster().await;
    let file = format!("{FIXTURE}/terraform.tfstate");
    let ok = env.atoll(&["state", "import-terraform", &file]).await;
    assert!(ok.status.success(), "{}", text(&ok));
    let listed = stdout(&env.atoll(&["state", "list"]).await);

    let edited = std::fs::read_to_string(&file)
        .expect("fixture")
        .replace("\"vm_id\": 301", "\"vm_id\": 399")
        .replace("\"length\": 20", "\"length\": 21")
        .replace("Xk3vQ9pLm2RtW8sYz4Nb", "another-password-000");
    let other = env.dir.path().join("other.tfstate");
    std::fs::write(&other, edited).expect("other state");
    let out = env
        .atoll(&["state", "import-terraform", &other.display().to_string()])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    for line in [
        "Error: proxmox_virtual_environment_container.web[1] is already in atoll's state",
        "atoll's state holds the guest pve/301 at proxmox_virtual_environment_container.web[1]",
        "`atoll state rm proxmox_virtual_environment_container.web[1]`",
        "random_password.root is already in atoll's state",
    ] {
        assert!(said.contains(line), "missing {line:?} in:\n{said}");
    }
    assert!(!said.contains("another-password-000"), "{said}");
    assert_eq!(stdout(&env.atoll(&["state", "list"]).await), listed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_version_4_state_is_refused_before_anything_is_read() {
    let env = Env::start().await;
    copy_project(&env.project());
    let v3 = env.dir.path().join("v3.tfstate");
    std::fs::write(&v3, r#"{"version": 3, "serial": 1, "modules": []}"#).expect("v3");
    let out = env
        .atoll(&["state", "import-terraform", &v3.display().to_string()])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("the state file is version 3; atoll reads version 4"),
        "{}",
        text(&out)
    );
    let mut piped = env.command(&[
        "state",
        "import-terraform",
        "-",
        "--dir",
        env.project().to_str().expect("path"),
    ]);
    piped
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = piped.spawn().expect("atoll");
    let mut stdin = child.stdin.take().expect("stdin");
    tokio::io::AsyncWriteExt::write_all(&mut stdin, br#"{"version": 5}"#)
        .await
        .expect("writing stdin");
    drop(stdin);
    let out = child.wait_with_output().await.expect("atoll");
    assert!(
        text(&out).contains("the state file is version 5"),
        "{}",
        text(&out)
    );
    let missing = env
        .atoll(&["state", "import-terraform", "/nonexistent.tfstate"])
        .await;
    assert!(
        text(&missing).contains("reading the state file /nonexistent.tfstate"),
        "{}",
        text(&missing)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_imported_into_another_scope_plans_no_changes() {
    let env = terraform_made_cluster().await;
    let file = format!("{FIXTURE}/terraform.tfstate");
    let ok = env.atoll(&["state", "import-terraform", &file]).await;
    assert!(ok.status.success(), "{}", text(&ok));
    let exported = env.dir.path().join("exported.tfstate");
    let out = env
        .atoll(&[
            "state",
            "export-terraform",
            "--out",
            &exported.display().to_string(),
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out));
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&exported).expect("exported")).expect("json");
    assert_eq!(state["version"], 4);
    let addresses = crate::tfstate_export::addresses(&state);
    assert_eq!(
        addresses,
        [
            "module.db.proxmox_virtual_environment_container.this",
            "proxmox_virtual_environment_container.web[0]",
            "proxmox_virtual_environment_container.web[1]",
            "proxmox_virtual_environment_vm.k3s",
            "random_id.suffix",
            "random_password.root",
        ]
    );

    // Leaving this project: its state forgets what it handed over, or the other project would
    // be refused every guest as this one's.
    let state = env.state().await;
    for address in &addresses {
        assert!(state.forget(address).await.expect("forget"), "{address}");
    }
    let elsewhere = ["--repo", "example.org/acme/infra"];
    let mut import = vec![
        "state",
        "import-terraform",
        exported.to_str().expect("path"),
    ];
    import.extend(elsewhere);
    let back = env.atoll(&import).await;
    assert!(back.status.success(), "{}", text(&back));
    assert!(
        stdout(&back).contains("Imported 4 resources and 2 generated values"),
        "{}",
        text(&back)
    );
    assert_no_changes(&env, &elsewhere).await;
}
