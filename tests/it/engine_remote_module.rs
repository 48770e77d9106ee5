//! The realistic project of the Terraform fidelity issue, end to end on the simulator: the
//! containers come from a module on a Git server pinned by tag, keyed with a
//! `tls_private_key`, with a `random_password` that has keepers and a `time_static` in their
//! description. It plans, applies and plans again to no changes, and no output shows a secret.

use crate::engine_support::{Env, text};
use crate::support::TEMPLATE;
use crate::workdir_modules::GitServer;

/// The module: a container per call, its root account keyed and passworded by the caller.
fn module() -> String {
    format!(
        r#"variable "name" {{
  type = string
}}

variable "vm_id" {{
  type = number
}}

variable "ssh_key" {{
  type = string
}}

variable "password" {{
  type      = string
  sensitive = true
}}

variable "created" {{
  type = string
}}

resource "proxmox_virtual_environment_container" "ct" {{
  node_name    = "pve"
  vm_id        = var.vm_id
  unprivileged = true
  description  = "${{var.name}}, created ${{var.created}}"
  operating_system {{
    template_file_id = "{TEMPLATE}"
    type             = "debian"
  }}
  disk {{
    datastore_id = "local-lvm"
    size         = 8
  }}
  initialization {{
    hostname = var.name
    user_account {{
      keys     = [trimspace(var.ssh_key)]
      password = var.password
    }}
  }}
}}

output "vm_id" {{
  value = proxmox_virtual_environment_container.ct.vm_id
}}
"#
    )
}

fn root(source: &str) -> String {
    format!(
        r#"resource "tls_private_key" "ssh" {{
  algorithm = "ED25519"
}}

resource "random_password" "root" {{
  length  = 24
  special = false
  keepers = {{
    image = "debian-12"
  }}
}}

resource "time_static" "created" {{}}

module "app" {{
  for_each = {{ web = 951, db = 952 }}
  source   = "{source}"
  name     = each.key
  vm_id    = each.value
  ssh_key  = tls_private_key.ssh.public_key_openssh
  password = random_password.root.result
  created  = time_static.created.rfc3339
}}

output "vm_ids" {{
  value = [for name, app in module.app : app.vm_id]
}}

output "fingerprint" {{
  value = tls_private_key.ssh.public_key_fingerprint_sha256
}}

output "root_password" {{
  value     = random_password.root.result
  sensitive = true
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_with_a_git_module_pinned_by_tag_and_generated_keys_applies_and_replans_empty() {
    let server = GitServer::start();
    server.commit("lxc", &[("modules/lxc/main.tf", &module())], "v1.0.0");
    let mut env = Env::start().await;
    env.extra_env.extend([
        ("ATOLL_MODULES__ALLOWED_HOSTS".to_owned(), server.host()),
        (
            "ATOLL_MODULES__ALLOW_PLAINTEXT".to_owned(),
            "true".to_owned(),
        ),
    ]);
    let source = format!("git::{}//modules/lxc?ref=v1.0.0", server.url("lxc"));
    env.write_tf(&root(&source));

    let plan = env.plan().await;
    for created in [
        "tls_private_key.ssh will be created",
        "random_password.root will be created",
        "time_static.created will be created",
        "module.app[\"web\"].proxmox_virtual_environment_container.ct will be created",
        "module.app[\"db\"].proxmox_virtual_environment_container.ct will be created",
    ] {
        assert!(plan.contains(created), "{created}:\n{plan}");
    }
    let applied = env.apply().await;
    assert_eq!(env.lxc_ids().await, vec![951, 952]);
    let state = env.state().await.load().await.expect("state");
    let generated = state.generated_values();
    let key = &generated["tls_private_key.ssh"].values;
    let password = &generated["random_password.root"].values["result"];
    let created = &generated["time_static.created"].values["rfc3339"];
    for vmid in [951, 952] {
        let config = env.sim.created_from(vmid);
        assert_eq!(
            config.get("ssh-public-keys").map(|k| k.trim()),
            Some(key["public_key_openssh"].trim()),
            "CT {vmid} got the generated key"
        );
        let live = env.live_config(vmid).await;
        let description = live.get("description").cloned().unwrap_or_default();
        assert!(
            description.contains(created.as_str()),
            "CT {vmid}: {description}"
        );
    }

    let again = env.plan().await;
    assert!(again.contains("No changes."), "{again}");
    let json = env.atoll(&["plan", "--json"]).await;

    // Outputs, after the apply and by `atoll output`, as Terraform prints them; the secret never.
    let fingerprint = &key["public_key_fingerprint_sha256"];
    let listed = format!(
        "fingerprint = \"{fingerprint}\"\nroot_password = <sensitive>\nvm_ids = [\n  952,\n  951,\n]\n"
    );
    assert!(
        text(&applied).contains(&format!("Outputs:\n\n{listed}")),
        "{}",
        text(&applied)
    );
    let all = env.atoll(&["output"]).await;
    assert_eq!(crate::engine_support::stdout(&all), listed);
    let one = env.atoll(&["output", "fingerprint"]).await;
    assert_eq!(
        crate::engine_support::stdout(&one),
        format!("\"{fingerprint}\"\n")
    );
    let as_json = env.atoll(&["output", "--json"]).await;
    let doc: serde_json::Value =
        serde_json::from_str(&crate::engine_support::stdout(&as_json)).expect("json");
    assert_eq!(doc["vm_ids"]["value"], serde_json::json!([952, 951]));
    assert_eq!(doc["root_password"], serde_json::json!({"sensitive": true}));
    let missing = env.atoll(&["output", "nope"]).await;
    assert!(!missing.status.success());
    assert!(
        text(&missing).contains("Output \"nope\" not found"),
        "{}",
        text(&missing)
    );

    for (what, out) in [
        ("plan", plan),
        ("apply", text(&applied)),
        ("re-plan", again),
        ("plan --json", text(&json)),
        ("output", text(&all)),
        ("output --json", text(&as_json)),
    ] {
        assert!(
            !out.contains(password.as_str()),
            "{what} printed the password"
        );
        assert!(
            !out.contains(&key["private_key_openssh"]),
            "{what} printed the private key"
        );
    }
}
