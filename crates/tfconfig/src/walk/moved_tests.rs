//! Each refusal's words are Terraform 1.15's for the same blocks over `terraform_data`
//! (recorded in `tests/oracle/moved.txt`).

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

const POOL: &str = "resource \"proxmox_virtual_environment_pool\" \"b\" {\n  pool_id = \"b\"\n}\n";

#[test]
fn moved_into_a_module_is_read_with_absolute_addresses() {
    let main = "module \"m\" {\n  source = \"./mod\"\n}\nmoved {\n  from = proxmox_virtual_environment_pool.b\n  to   = module.m.proxmox_virtual_environment_pool.b\n}\n";
    let loaded = load(&[("main.tf", main), ("mod/main.tf", POOL)]);
    assert_eq!(errors(&loaded), Vec::<String>::new());
    assert_eq!(loaded.moves.len(), 1);
    let m = &loaded.moves[0];
    assert_eq!(m.from, "proxmox_virtual_environment_pool.b");
    assert_eq!(m.to, "module.m.proxmox_virtual_environment_pool.b");
    assert!(!m.module && !m.keyed);
    assert_eq!(m.declared_at, "main.tf:4,1");
}

#[test]
fn moved_in_a_child_module_carries_the_instance_prefix() {
    let main = "module \"m\" {\n  source   = \"./mod\"\n  for_each = toset([\"x\"])\n}\n";
    let child = format!(
        "{POOL}moved {{\n  from = proxmox_virtual_environment_pool.a[0]\n  to   = proxmox_virtual_environment_pool.b\n}}\n"
    );
    let loaded = load(&[("main.tf", main), ("mod/main.tf", &child)]);
    assert_eq!(errors(&loaded), Vec::<String>::new());
    let m = &loaded.moves[0];
    assert_eq!(
        m.from,
        "module.m[\"x\"].proxmox_virtual_environment_pool.a[0]"
    );
    assert_eq!(m.to, "module.m[\"x\"].proxmox_virtual_environment_pool.b");
    assert!(m.keyed);
}

#[test]
fn module_moves_and_mixed_kinds() {
    let main = "module \"b\" {\n  source = \"./mod\"\n}\nmoved {\n  from = module.a\n  to   = module.b\n}\nmoved {\n  from = proxmox_virtual_environment_pool.z\n  to   = module.b\n}\n";
    let loaded = load(&[("main.tf", main), ("mod/main.tf", POOL)]);
    assert_eq!(
        errors(&loaded),
        [
            "Invalid \"moved\" addresses: The \"from\" and \"to\" addresses must either both refer to resources or both refer to modules."
        ]
    );
    assert_eq!(loaded.moves.len(), 1);
    assert!(loaded.moves[0].module);
}

#[test]
fn a_moved_object_still_declared_is_refused_as_terraform_words_it() {
    let main = format!(
        "{POOL}resource \"proxmox_virtual_environment_pool\" \"c\" {{\n  pool_id = \"c\"\n}}\nmoved {{\n  from = proxmox_virtual_environment_pool.b\n  to   = proxmox_virtual_environment_pool.c\n}}\n"
    );
    let loaded = load(&[("main.tf", &main)]);
    assert_eq!(
        errors(&loaded),
        [
            "Moved object still exists: This statement declares a move from proxmox_virtual_environment_pool.b, but that resource is still declared at main.tf:1,1.\n\nChange your configuration so that this resource will be declared as proxmox_virtual_environment_pool.c instead."
        ]
    );
}

#[test]
fn redundant_ambiguous_dynamic_and_mistyped_moves_are_refused() {
    let main = format!(
        "{POOL}locals {{ k = 1 }}\n\
         moved {{\n  from = proxmox_virtual_environment_pool.b\n  to   = proxmox_virtual_environment_pool.b\n}}\n\
         moved {{\n  from = proxmox_virtual_environment_pool.a[local.k]\n  to   = proxmox_virtual_environment_pool.b\n}}\n\
         moved {{\n  from = proxmox_virtual_environment_pool.x\n  to   = proxmox_virtual_environment_vm.x\n}}\n\
         moved {{\n  from = proxmox_virtual_environment_pool.y\n  to   = proxmox_virtual_environment_pool.b\n}}\n\
         moved {{\n  from = proxmox_virtual_environment_pool.y\n  to   = proxmox_virtual_environment_pool.z\n}}\n"
    );
    let loaded = load(&[("main.tf", &main)]);
    let errors = errors(&loaded);
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(errors[0].starts_with("Redundant move statement: This statement declares a move from proxmox_virtual_environment_pool.b to the same address"));
    assert!(
        errors[1].starts_with("Invalid expression: A single static variable reference is required")
    );
    assert!(errors[2].starts_with("Resource type mismatch: This statement declares a move from proxmox_virtual_environment_pool.x to proxmox_virtual_environment_vm.x"));
    assert!(errors[3].starts_with("Ambiguous move statements: A statement at main.tf:17,1 declared that proxmox_virtual_environment_pool.y moved to proxmox_virtual_environment_pool.b, but this statement instead declares that it moved to proxmox_virtual_environment_pool.z."), "{}", errors[3]);
}

#[test]
fn removed_blocks_destroy_unless_told_not_to() {
    let main = "removed {\n  from = proxmox_virtual_environment_pool.a\n  lifecycle {\n    destroy = false\n  }\n}\nremoved {\n  from = module.gone\n}\nremoved {\n  from = proxmox_virtual_environment_pool.c\n  lifecycle {}\n}\n";
    let loaded = load(&[("main.tf", main)]);
    assert_eq!(errors(&loaded), Vec::<String>::new());
    let got: Vec<(&str, bool, bool)> = loaded
        .removals
        .iter()
        .map(|r| (r.from.as_str(), r.module, r.destroy))
        .collect();
    assert_eq!(
        got,
        [
            ("proxmox_virtual_environment_pool.a", false, false),
            ("module.gone", true, true),
            ("proxmox_virtual_environment_pool.c", false, true),
        ]
    );
}

#[test]
fn removed_refuses_instances_and_what_is_still_declared() {
    let main = format!(
        "{POOL}removed {{\n  from = proxmox_virtual_environment_pool.b\n  lifecycle {{\n    destroy = false\n  }}\n}}\nremoved {{\n  from = proxmox_virtual_environment_pool.a[0]\n}}\nremoved {{\n  from = proxmox_virtual_environment_pool.a\n  lifecycle {{\n    destroy = \"no\"\n  }}\n}}\n"
    );
    let loaded = load(&[("main.tf", &main)]);
    let errors = errors(&loaded);
    assert_eq!(
        errors,
        [
            "Invalid value: The \"destroy\" argument must be a literal true or false.",
            "Removed resource still exists: This statement declares that proxmox_virtual_environment_pool.b was removed, but it is still declared in configuration.",
            "Resource instance keys not allowed: Resource address must be a resource (e.g. \"test_instance.foo\"), not a resource instance (e.g. \"test_instance.foo[1]\").",
        ]
    );
}

fn warnings(loaded: &Loaded) -> Vec<String> {
    loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| format!("{}: {}", d.summary, d.detail))
        .collect()
}

#[test]
fn check_assertions_warn_as_terraform_does() {
    let main = "variable \"want\" {\n  default = 2\n}\n\
        resource \"random_password\" \"p\" {\n  length = 12\n}\n\
        check \"ok\" {\n  assert {\n    condition     = var.want == 1\n    error_message = \"want is not one\"\n  }\n}\n\
        check \"later\" {\n  assert {\n    condition     = random_password.p.result == \"x\"\n    error_message = \"not x\"\n  }\n}\n\
        check \"fine\" {\n  assert {\n    condition     = var.want == 2\n    error_message = \"never\"\n  }\n}\n";
    let loaded = load(&[("main.tf", main)]);
    assert_eq!(errors(&loaded), Vec::<String>::new());
    assert_eq!(
        warnings(&loaded),
        [
            "Check block assertion failed: want is not one",
            "Check block assertion known after apply: The condition could not be evaluated at this time, a result will be known when this plan is applied.",
        ]
    );
    let rendered = loaded.render_warnings().join("\n");
    assert!(
        rendered.contains("on main.tf line 9, in check \"ok\":"),
        "{rendered}"
    );
}

#[test]
fn check_blocks_need_asserts_that_read_the_configuration() {
    let main = "check \"ok\" {\n  assert {\n    condition     = 1 == 2\n    error_message = \"one is not two\"\n  }\n}\n\
        check \"scoped\" {\n  data \"proxmox_virtual_environment_vms\" \"all\" {}\n  assert {\n    condition     = terraform.workspace == \"x\"\n    error_message = \"x\"\n  }\n}\n";
    let loaded = load(&[("main.tf", main)]);
    let errors = errors(&loaded);
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(errors[0].starts_with(
        "Invalid assert expression: The condition expression must refer to at least one object"
    ));
    assert_eq!(
        errors[1],
        "Zero assert blocks: Check blocks must have at least one assert block."
    );
    assert!(errors[2].contains("scoped to a check block"));
}

#[test]
fn a_cycle_of_moves_is_refused_before_any_state_is_read() {
    let main = format!(
        "{POOL}moved {{\n  from = proxmox_virtual_environment_pool.x\n  to   = proxmox_virtual_environment_pool.y\n}}\n\
         moved {{\n  from = proxmox_virtual_environment_pool.y\n  to   = proxmox_virtual_environment_pool.x\n}}\n"
    );
    let loaded = load(&[("main.tf", &main)]);
    assert_eq!(
        errors(&loaded),
        [
            "Cyclic dependency in move statements: The following chained move statements form a cycle, and so there is no final location to move objects to:\n  \
          - main.tf:4,1: proxmox_virtual_environment_pool.x[*] → proxmox_virtual_environment_pool.y[*]\n  \
          - main.tf:8,1: proxmox_virtual_environment_pool.y[*] → proxmox_virtual_environment_pool.x[*]\n\n\
          A chain of move statements must end with an address that doesn't appear in any other statements, and which typically also refers to an object still declared in the configuration."
        ]
    );
    assert!(loaded.moves.is_empty());
}

#[test]
fn two_sources_for_one_destination_are_ambiguous_in_terraforms_words() {
    let main = format!(
        "{POOL}moved {{\n  from = proxmox_virtual_environment_pool.x[0]\n  to   = proxmox_virtual_environment_pool.b[0]\n}}\n\
         moved {{\n  from = proxmox_virtual_environment_pool.y[0]\n  to   = proxmox_virtual_environment_pool.b[0]\n}}\n"
    );
    let loaded = load(&[("main.tf", &main)]);
    assert_eq!(
        errors(&loaded),
        [
            "Ambiguous move statements: A statement at main.tf:4,1 declared that proxmox_virtual_environment_pool.x[0] moved to proxmox_virtual_environment_pool.b[0], but this statement instead declares that proxmox_virtual_environment_pool.y[0] moved there.\n\nEach resource instance can have moved from only one source instance."
        ]
    );
}
