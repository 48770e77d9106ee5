use std::collections::BTreeMap;

use crate::value::{Type, Value};
use crate::{Known, Loaded, Severity};

/// Loads `tf` as a project's `main.tf` with `known` answers.
fn load(tf: &str, known: &Known) -> Loaded {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("main.tf"), tf).expect("main.tf");
    crate::load_with_known(
        &crate::Input {
            checkout: dir.path().to_path_buf(),
            project_dir: ".".into(),
            workspace: "default".to_owned(),
            vars: Vec::new(),
            limits: crate::Limits::default(),
            modules: Default::default(),
        },
        known,
    )
}

const TEMPLATE_BY_NAME: &str = r#"
data "proxmox_virtual_environment_vms" "template" {
  node_name = "pve"
  filter {
    name   = "name"
    values = ["noble-cloud"]
  }
}
data "proxmox_virtual_environment_vm" "template" {
  node_name = "pve"
  vm_id     = data.proxmox_virtual_environment_vms.template.vms[0].vm_id
}
resource "terraform_data" "uses" {
  input = data.proxmox_virtual_environment_vm.template.name
}
output "template_id" {
  value = data.proxmox_virtual_environment_vms.template.vms[0].vm_id
}
"#;

fn errors(loaded: &Loaded) -> Vec<String> {
    loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {}", d.summary, d.detail))
        .collect()
}

fn vms_answer(vm_id: f64) -> BTreeMap<String, Value> {
    let vm = Value::Object(BTreeMap::from([
        ("name".to_owned(), Value::string("noble-cloud")),
        ("vm_id".to_owned(), Value::Number(vm_id)),
    ]));
    BTreeMap::from([("vms".to_owned(), Value::List(Type::Dynamic, vec![vm]))])
}

#[test]
fn unanswered_data_sources_are_unknown_and_only_ready_reads_are_listed() {
    let loaded = load(TEMPLATE_BY_NAME, &Known::new());
    assert_eq!(errors(&loaded), Vec::<String>::new());
    let reads: Vec<&str> = loaded
        .data_reads
        .iter()
        .map(|r| r.address.as_str())
        .collect();
    assert_eq!(reads, ["data.proxmox_virtual_environment_vms.template"]);
    assert_eq!(loaded.data_reads[0].declared_at, "main.tf:2");
    let filter = loaded.data_reads[0]
        .arguments
        .get_attr("filter")
        .expect("filter");
    assert!(!filter.contains_unknown());
    assert!(loaded.outputs["template_id"].value.is_unknown());
    let uses = &loaded.resources[0].attributes;
    assert!(uses.get_attr("input").is_some_and(Value::is_unknown));
}

#[test]
fn answers_feed_expressions_and_the_reads_that_waited_on_them() {
    let mut known = Known::new();
    known.insert(
        "data.proxmox_virtual_environment_vms.template".to_owned(),
        vms_answer(9000.0),
    );
    let loaded = load(TEMPLATE_BY_NAME, &known);
    assert_eq!(errors(&loaded), Vec::<String>::new());
    assert_eq!(loaded.outputs["template_id"].value, Value::Number(9000.0));
    let read = &loaded.data_reads[..];
    assert_eq!(read.len(), 1);
    assert_eq!(
        read[0].address,
        "data.proxmox_virtual_environment_vm.template"
    );
    assert_eq!(
        read[0].arguments.get_attr("vm_id"),
        Some(&Value::Number(9000.0))
    );

    known.insert(
        "data.proxmox_virtual_environment_vm.template".to_owned(),
        BTreeMap::from([("name".to_owned(), Value::string("noble-cloud"))]),
    );
    let loaded = load(TEMPLATE_BY_NAME, &known);
    assert!(loaded.data_reads.is_empty());
    let uses = &loaded.resources[0].attributes;
    assert_eq!(uses.get_attr("input"), Some(&Value::string("noble-cloud")));
}

#[test]
fn an_argument_known_only_after_apply_is_an_error_on_its_line() {
    let tf = r#"
resource "random_integer" "id" {
  min = 100
  max = 200
}
data "proxmox_virtual_environment_vm" "x" {
  node_name = "pve"
  vm_id     = random_integer.id.result
}
"#;
    let loaded = load(tf, &Known::new());
    let rendered = loaded.render_diagnostics();
    assert!(
        rendered.contains("Data source argument known only after apply"),
        "{rendered}"
    );
    assert!(
        rendered.contains("\"vm_id\" argument of data.proxmox_virtual_environment_vm.x"),
        "{rendered}"
    );
    assert!(rendered.contains("line 8"), "{rendered}");
    assert!(loaded.data_reads.is_empty());
}

#[test]
fn the_singular_vm_data_source_warns_once_that_bpg_deprecated_it() {
    let tf = r#"
data "proxmox_virtual_environment_vm" "x" {
  count     = 2
  node_name = "pve"
  vm_id     = 100 + count.index
}
"#;
    let loaded = load(tf, &Known::new());
    let warnings = loaded.render_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("Deprecated Resource"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[0].contains("Use \"proxmox_vm\" instead"),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("line 2"), "{}", warnings[0]);
    let reads: Vec<&str> = loaded
        .data_reads
        .iter()
        .map(|r| r.address.as_str())
        .collect();
    assert_eq!(
        reads,
        [
            "data.proxmox_virtual_environment_vm.x[0]",
            "data.proxmox_virtual_environment_vm.x[1]"
        ]
    );
}

#[test]
fn other_data_sources_are_refused_naming_those_atoll_reads() {
    let tf = "data \"proxmox_virtual_environment_acme_accounts\" \"all\" {}\n";
    let loaded = load(tf, &Known::new());
    let refused = errors(&loaded);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].starts_with("Unsupported data source"),
        "{}",
        refused[0]
    );
    assert!(
        refused[0].contains(
            "is a bpg/proxmox type atoll's Proxmox engine does not evaluate yet. atoll reads only these data sources: proxmox_virtual_environment_vm, proxmox_virtual_environment_vms"
        )
    );
}

#[test]
fn data_source_arguments_are_checked_against_the_schema() {
    let tf = "data \"proxmox_virtual_environment_vm\" \"x\" {\n  node_name = \"pve\"\n}\n";
    let missing = errors(&load(tf, &Known::new()));
    assert!(
        missing
            .iter()
            .any(|e| e.starts_with("Missing required argument")),
        "{missing:?}"
    );
    let tf = "data \"proxmox_virtual_environment_vms\" \"x\" {\n  vms = []\n}\n";
    let read_only = errors(&load(tf, &Known::new()));
    assert!(
        read_only.iter().any(|e| e.contains("read-only")),
        "{read_only:?}"
    );
}

#[test]
fn validate_without_a_cluster_shows_data_source_values_as_known_after_apply() {
    let loaded = load(TEMPLATE_BY_NAME, &Known::new());
    let text = crate::cli::to_text(&loaded);
    assert!(
        text.contains("Success! The configuration is valid"),
        "{text}"
    );
    assert!(text.contains("template_id = (known after apply)"), "{text}");
    assert!(text.contains("input  = (known after apply)"), "{text}");
}
