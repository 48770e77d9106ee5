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
