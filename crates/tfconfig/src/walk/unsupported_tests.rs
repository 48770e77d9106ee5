use crate::{Loaded, Severity};

/// Loads a project from `(path, content)` files, `main.tf` at its root.
fn load(files: &[(&str, &str)]) -> Loaded {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, content) in files {
        let path = dir.path().join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("module dir");
        }
        std::fs::write(path, content).expect("file");
    }
    crate::load(&crate::Input {
        checkout: dir.path().to_path_buf(),
        project_dir: ".".into(),
        workspace: "default".to_owned(),
        vars: Vec::new(),
        limits: crate::Limits::default(),
        modules: Default::default(),
    })
}

fn unsupported(loaded: &Loaded) -> Vec<String> {
    loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error && d.summary.starts_with("Unsupported"))
        .map(|d| format!("{}: {}", d.summary, d.detail))
        .collect()
}

const VAULT_MODULE: &str = r#"
variable "n" {}
data "vault_generic_secret" "db" {
  count = var.n
  path  = "secret/db"
}
resource "ansible_host" "web" {
  name = "web"
}
"#;

#[test]
fn an_unsupported_type_is_one_diagnostic_however_many_blocks_and_instances() {
    let root = r#"
resource "vault_generic_secret" "a" {
  count     = 3
  path      = "secret/a"
  data_json = "{}"
}
resource "vault_generic_secret" "b" {
  path      = "secret/b"
  data_json = "{}"
}
"#;
    let said = unsupported(&load(&[("main.tf", root)]));
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0].starts_with("Unsupported resource type"),
        "{}",
        said[0]
    );
    assert!(
        said[0].contains("comes from provider \"vault\""),
        "{}",
        said[0]
    );
    assert!(
        said[0].contains("in 2 blocks: main.tf:2, main.tf:7"),
        "{}",
        said[0]
    );
    assert!(
        said[0]
            .contains("manages only these resource types: proxmox_virtual_environment_container"),
        "{}",
        said[0]
    );
    assert!(
        said[0].contains("Remove those blocks from this project, or move them"),
        "{}",
        said[0]
    );
}

#[test]
fn unsupported_types_with_count_zero_are_diagnosed_like_any_other() {
    let root = "resource \"ansible_host\" \"none\" {\n  count = 0\n  name  = \"x\"\n}\n";
    let said = unsupported(&load(&[("main.tf", root)]));
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0].contains("\"ansible_host\" comes from provider \"ansible\""),
        "{}",
        said[0]
    );
    assert!(said[0].contains("in main.tf:1"), "{}", said[0]);
}

#[test]
fn unsupported_types_in_a_module_without_instances_are_diagnosed_once_per_type() {
    let root = r#"
module "none" {
  source = "./modules/vault"
  count  = 0
  n      = 1
}
module "three" {
  source   = "./modules/vault"
  for_each = toset(["a", "b", "c"])
  n        = 2
}
"#;
    let loaded = load(&[("main.tf", root), ("modules/vault/main.tf", VAULT_MODULE)]);
    let said = unsupported(&loaded);
    assert_eq!(said.len(), 2, "{said:#?}");
    assert!(
        said[0].starts_with("Unsupported data source"),
        "{}",
        said[0]
    );
    assert!(
        said[0].contains("in modules/vault/main.tf:3"),
        "{}",
        said[0]
    );
    assert!(
        said[1].starts_with("Unsupported resource type"),
        "{}",
        said[1]
    );

    let without = load(&[
        (
            "main.tf",
            "module \"none\" {\n  source = \"./modules/vault\"\n  count  = 0\n  n = 1\n}\n",
        ),
        ("modules/vault/main.tf", VAULT_MODULE),
    ]);
    assert_eq!(unsupported(&without).len(), 2);
}

#[test]
fn a_type_refused_on_principle_keeps_its_reason() {
    let root = "data \"external\" \"x\" {\n  program = [\"sh\"]\n}\n";
    let said = unsupported(&load(&[("main.tf", root)]));
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0].contains("is refused: it runs a program"),
        "{}",
        said[0]
    );
}
