use crate::{Known, Loaded, Severity};

fn load(files: &[(&str, &str)]) -> Loaded {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dir");
        std::fs::write(path, text).expect("file");
    }
    crate::load_with_known(
        &crate::Input {
            checkout: dir.path().to_path_buf(),
            project_dir: ".".into(),
            workspace: "default".to_owned(),
            vars: Vec::new(),
            limits: crate::Limits::default(),
            modules: Default::default(),
        },
        &Known::new(),
    )
}

fn errors(loaded: &Loaded) -> Vec<String> {
    loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {}", d.summary, d.detail))
        .collect()
}

const POOLS: &str = r#"
variable "pools" {
  default = { ops = "operations", web = "web servers" }
}
locals { prefix = "" }
resource "proxmox_virtual_environment_pool" "one" {
  for_each = var.pools
  pool_id  = each.key
  comment  = each.value
}
resource "proxmox_virtual_environment_pool" "lone" {
  pool_id = "lone"
}
"#;

#[test]
fn import_blocks_give_each_target_its_address_and_id() {
    let tf = format!(
        "{POOLS}\nimport {{\n  to = proxmox_virtual_environment_pool.lone\n  id = \"${{local.prefix}}lone\"\n}}\n\
         import {{\n  for_each = var.pools\n  to = proxmox_virtual_environment_pool.one[each.key]\n  id = each.key\n}}\n"
    );
    let loaded = load(&[("main.tf", &tf)]);
    assert!(errors(&loaded).is_empty(), "{:?}", errors(&loaded));
    let got: Vec<(&str, &str)> = loaded
        .imports
        .iter()
        .map(|i| (i.address.as_str(), i.id.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("proxmox_virtual_environment_pool.lone", "lone"),
            ("proxmox_virtual_environment_pool.one[\"ops\"]", "ops"),
            ("proxmox_virtual_environment_pool.one[\"web\"]", "web"),
        ]
    );
    assert_eq!(loaded.imports[0].declared_at, "main.tf:15");
}

#[test]
fn an_import_of_nothing_configured_or_twice_is_refused_as_terraform_refuses_it() {
    let tf = format!(
        "{POOLS}\nimport {{\n  to = proxmox_virtual_environment_pool.gone\n  id = \"gone\"\n}}\n\
         import {{\n  to = proxmox_virtual_environment_pool.lone\n  id = \"lone\"\n}}\n\
         import {{\n  to = proxmox_virtual_environment_pool.lone\n  id = \"lone\"\n}}\n\
         import {{\n  to = data.proxmox_virtual_environment_pool.x\n  id = \"x\"\n}}\n\
         import {{\n  to = proxmox_virtual_environment_pool.lone\n}}\n"
    );
    let loaded = load(&[("main.tf", &tf)]);
    let errors = errors(&loaded);
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(errors.iter().any(|e| e.starts_with("Configuration for import target does not exist: The configuration for the given import target proxmox_virtual_environment_pool.gone")), "{errors:?}");
    assert!(errors.iter().any(|e| e.starts_with("Duplicate import configuration for \"proxmox_virtual_environment_pool.lone\": An import block for the resource \"proxmox_virtual_environment_pool.lone\" was already declared at main.tf:19.")), "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("Invalid import address: Only managed resources")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e == "Missing required argument: The argument \"id\" is required, but no definition was found."), "{errors:?}");
    assert_eq!(loaded.imports.len(), 1);
}

#[test]
fn an_import_id_must_be_known_and_not_empty_and_blocks_stay_in_the_root() {
    let tf = r#"
resource "proxmox_virtual_environment_pool" "a" {
  pool_id = "a"
}
resource "random_password" "p" {
  length = 8
}
import {
  to = proxmox_virtual_environment_pool.a
  id = random_password.p.result
}
module "child" {
  source = "./child"
}
"#;
    let child = r#"
resource "proxmox_virtual_environment_pool" "b" {
  pool_id = "b"
}
import {
  to = proxmox_virtual_environment_pool.b
  id = ""
}
"#;
    let loaded = load(&[("main.tf", tf), ("child/main.tf", child)]);
    let errors = errors(&loaded);
    assert!(errors.iter().any(|e| e.starts_with("Invalid import id argument: The import block \"id\" argument depends on values that cannot be determined until apply")), "{errors:?}");
    assert!(errors.iter().any(|e| e == "Invalid import configuration: An import block was detected in \"module.child\". Import blocks are only allowed in the root module."), "{errors:?}");
    assert!(loaded.imports.is_empty());
}

#[test]
fn a_for_each_of_thousands_of_bad_imports_stops_at_the_diagnostics_bound() {
    let tf = r#"
resource "proxmox_virtual_environment_pool" "lone" {
  pool_id = "lone"
}
import {
  for_each = toset(flatten([for a in range(60) : [for b in range(60) : "${a}-${b}"]]))
  to       = proxmox_virtual_environment_pool.lone[each.key]
  id       = each.key
}
"#;
    let loaded = load(&[("main.tf", tf)]);
    let errors = errors(&loaded);
    assert!(
        !errors.is_empty() && errors.len() <= crate::walk::MAX_DIAGNOSTICS,
        "{}",
        errors.len()
    );
    assert!(
        errors[0].starts_with("Configuration for import target does not exist"),
        "{}",
        errors[0]
    );
    assert!(loaded.imports.is_empty());
}
