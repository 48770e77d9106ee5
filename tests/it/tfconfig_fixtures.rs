//! Snapshot tests over the fixture corpus in `tests/fixtures/tf/`: each directory is a checkout;
//! optional files `PROJECT` (project dir inside it), `WORKSPACE` and `VARS` (one `--var` per
//! line) set the input. The snapshot is what `atoll validate` prints.

use std::path::{Path, PathBuf};

use tfconfig::{CliVar, Input};

fn fixture_root(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tf")
        .join(name)
}

fn read_opt(root: &Path, file: &str) -> Option<String> {
    std::fs::read_to_string(root.join(file)).ok()
}

fn load(name: &str) -> tfconfig::Loaded {
    let root = fixture_root(name);
    let project =
        read_opt(&root, "PROJECT").map_or_else(|| ".".to_owned(), |s| s.trim().to_owned());
    let workspace =
        read_opt(&root, "WORKSPACE").map_or_else(|| "default".to_owned(), |s| s.trim().to_owned());
    let vars = read_opt(&root, "VARS")
        .map(|s| {
            s.lines()
                .filter(|l| !l.is_empty())
                .map(|l| CliVar::Var(l.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    tfconfig::load(&Input {
        checkout: root,
        project_dir: project.into(),
        workspace,
        vars,
        limits: Default::default(),
        modules: Default::default(),
    })
}

macro_rules! fixture {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let loaded = load(stringify!($name));
            insta::assert_snapshot!(stringify!($name), tfconfig::cli::to_text(&loaded));
        }
    )*};
}

fixture!(
    container_unknown_argument,
    container_wrong_type,
    count_resources,
    cycle,
    download_file_and_keys,
    duplicate_declarations,
    dynamic_blocks,
    eval_errors,
    expressions,
    for_each_errors,
    for_each_set,
    for_each_unknown,
    function_errors,
    functions,
    ignored_files,
    json_syntax,
    lifecycle,
    missing_required,
    module_arg_typo,
    module_cycle,
    module_for_each,
    opentofu_files,
    optional_defaults,
    realistic,
    refused_on_principle,
    registry_module_source,
    sandbox_absolute,
    sandbox_dotdot,
    sandbox_home,
    sandbox_symlink,
    sensitive_propagation,
    syntax_error,
    templatefile,
    tfvars_not_constant,
    undeclared_references,
    unknown_propagation,
    unsupported_resource,
    unsupported_top_level,
    variable_missing_required,
    variable_type_error,
    variable_validation,
    variables_precedence,
    workspace_env_tfvars,
);

#[test]
fn every_fixture_directory_has_a_snapshot_test() {
    let src = include_str!("tfconfig_fixtures.rs");
    let dirs = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tf"))
        .expect("fixtures dir");
    for d in dirs.flatten() {
        let name = d.file_name().into_string().expect("utf-8 name");
        assert!(
            src.contains(&format!("    {name},\n")),
            "fixture {name} has no snapshot test"
        );
    }
}
