//! The checkout is a boundary for every file the loader reads: configuration files, variable
//! files and module directories, not only the file functions.

use std::path::Path;

use tfconfig::{Input, Loaded, Value};

fn load(checkout: &Path, workspace: &str) -> Loaded {
    tfconfig::load(&Input {
        checkout: checkout.to_path_buf(),
        project_dir: ".".into(),
        workspace: workspace.into(),
        vars: Vec::new(),
        limits: Default::default(),
        modules: Default::default(),
    })
}

fn secret_outside() -> (tempfile::TempDir, std::path::PathBuf) {
    let outside = tempfile::tempdir().expect("outside dir");
    let secret = outside.path().join("secret.tf");
    std::fs::write(&secret, "SECRET-LINE-ONE not hcl {{{\n").expect("write secret");
    (outside, secret)
}

#[test]
fn configuration_file_symlinked_outside_the_checkout_is_refused_unread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_outside, secret) = secret_outside();
    std::os::unix::fs::symlink(&secret, dir.path().join("evil.tf")).expect("symlink");
    let loaded = load(dir.path(), "default");
    let text = loaded.render_diagnostics();
    assert!(loaded.has_errors(), "{text}");
    assert!(!text.contains("SECRET-LINE-ONE"), "{text}");
    assert!(text.contains("symbolic link"), "{text}");
}

#[test]
fn variables_file_symlinked_outside_the_checkout_is_refused_unread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_outside, secret) = secret_outside();
    std::fs::write(
        dir.path().join("main.tf"),
        "variable \"x\" {\n  default = 1\n}\n",
    )
    .expect("write");
    std::os::unix::fs::symlink(&secret, dir.path().join("terraform.tfvars")).expect("symlink");
    let loaded = load(dir.path(), "default");
    let text = loaded.render_diagnostics();
    assert!(loaded.has_errors(), "{text}");
    assert!(!text.contains("SECRET-LINE-ONE"), "{text}");
}

#[test]
fn workspace_names_cannot_climb_out_of_the_env_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("main.tf"),
        "output \"w\" {\n  value = terraform.workspace\n}\n",
    )
    .expect("write");
    let loaded = load(dir.path(), "../../etc/x");
    assert!(
        loaded
            .render_diagnostics()
            .contains("Invalid workspace name")
    );
}

#[test]
fn json_variable_files_are_read_in_terraforms_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("main.tf"),
        "variable \"a\" {\n  type = list(number)\n}\nvariable \"b\" {\n  type = string\n}\noutput \"v\" {\n  value = [var.a, var.b]\n}\n",
    )
    .expect("write main.tf");
    std::fs::write(
        dir.path().join("terraform.tfvars"),
        "a = [1]\nb = \"hcl\"\n",
    )
    .expect("write tfvars");
    std::fs::write(
        dir.path().join("terraform.tfvars.json"),
        r#"{"a": [1, 2], "b": "json"}"#,
    )
    .expect("write json");
    std::fs::write(
        dir.path().join("z.auto.tfvars.json"),
        r#"{"b": "auto-json"}"#,
    )
    .expect("write auto json");
    let loaded = load(dir.path(), "default");
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    let v = loaded.outputs.get("v").map(|o| o.value.to_string());
    assert_eq!(v.as_deref(), Some(r#"[[1, 2], "auto-json"]"#));
    assert!(matches!(
        loaded.outputs.get("v").map(|o| &o.value),
        Some(Value::Tuple(_))
    ));
}

#[test]
fn for_each_over_a_map_with_sensitive_values_keeps_the_marks_on_the_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("main.tf"),
        r#"variable "pw" {
  type      = string
  sensitive = true
  default   = "hunter22"
}

locals {
  cts = { web = { pw = var.pw } }
}

resource "proxmox_virtual_environment_container" "ct" {
  for_each  = local.cts
  node_name = "pve"
  initialization {
    user_account {
      password = each.value.pw
    }
  }
  description = "plain ${each.key}"
  operating_system {
    template_file_id = "local:vztmpl/x.tar.zst"
  }
}
"#,
    )
    .expect("write main.tf");
    let loaded = load(dir.path(), "default");
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    let ct = &loaded.resources[0];
    assert_eq!(
        ct.address,
        "proxmox_virtual_environment_container.ct[\"web\"]"
    );
    assert_eq!(
        ct.attributes.get_attr("description"),
        Some(&Value::string("plain web"))
    );
    let text = tfconfig::cli::to_text(&loaded);
    assert!(!text.contains("hunter22"), "{text}");
    assert!(
        tfconfig::cli::to_json(&loaded)
            .to_string()
            .contains("(sensitive value)")
    );
}

/// `abspath` answers a path under `/checkout` (never the server's own directories), and the
/// file functions read such a path back: `file(abspath(...))` works in modules as in Terraform.
#[test]
fn abspath_names_the_checkout_and_file_functions_read_it_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("files")).expect("mkdir");
    std::fs::write(dir.path().join("files/key.pub"), "ssh-ed25519 AAAA test").expect("write");
    std::fs::write(
        dir.path().join("main.tf"),
        r#"
output "root" { value = abspath(path.module) }
output "key_path" { value = abspath("files/key.pub") }
output "key" { value = file(abspath("files/key.pub")) }
output "exists" { value = fileexists("/checkout/files/key.pub") }
"#,
    )
    .expect("write");
    let loaded = load(dir.path(), "default");
    let text = loaded.render_diagnostics();
    assert!(!loaded.has_errors(), "{text}");
    let out = |name: &str| loaded.outputs[name].value.clone();
    assert_eq!(out("root"), Value::string("/checkout"));
    assert_eq!(out("key_path"), Value::string("/checkout/files/key.pub"));
    assert_eq!(out("key"), Value::string("ssh-ed25519 AAAA test"));
    assert_eq!(out("exists"), Value::Bool(true));
    let server_path = dir.path().display().to_string();
    assert!(
        !format!("{:?}", loaded.outputs).contains(&server_path),
        "the server's path leaked"
    );
    // The virtual root is no way out: `..` past it is refused as before.
    std::fs::write(
        dir.path().join("main.tf"),
        r#"output "x" { value = file("/checkout/../etc/passwd") }"#,
    )
    .expect("write");
    let escaped = load(dir.path(), "default");
    let text = escaped.render_diagnostics();
    assert!(escaped.has_errors(), "{text}");
    assert!(text.contains("leaves"), "{text}");
}
