//! Which projects a PR modifies (with and without `atlantis.yaml`), and which ones a comment
//! command targets.

use atoll::commands::{Command, Grammar, Parsed, RepoDir, Verb, parse};
use atoll::repocfg::{
    Inputs, ModuleUse, Project, ProjectKey, RepoPolicy, Resolution, SelectError, ServerRules,
    resolve, select,
};

const ATLANTIS_YAML: &str = include_str!("../fixtures/repocfg/atlantis.yaml");
const REPOS_YAML: &str = include_str!("../fixtures/repocfg/repos.yaml");
const PVE: &str = "git.example.lan/infra/pve";

fn files(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn policy() -> RepoPolicy {
    ServerRules::from_yaml(REPOS_YAML)
        .expect("fixture rules parse")
        .policy_for(PVE)
}

/// The head commit of the repository used below.
fn tree() -> Vec<String> {
    files(&[
        "README.md",
        "envs/network/main.tf",
        "envs/dev/main.tf",
        "envs/dev/env/staging.tfvars",
        "lab/main.tf",
        "lab/modules/lxc/main.tf",
        "modules/net/bridge/main.tf",
        "modules/shared/main.tf",
        "stack/main.tf",
        "stack/env/dev.tfvars",
        "infra/atoll/main.tf",
        "docs/notes.md",
    ])
}

fn resolution(yaml: Option<&str>, changed: &[&str]) -> Resolution {
    resolution_with_modules(yaml, changed, &[])
}

fn resolution_with_modules(
    yaml: Option<&str>,
    changed: &[&str],
    module_uses: &[ModuleUse],
) -> Resolution {
    let tree = tree();
    let changed = files(changed);
    resolve(
        Inputs {
            atlantis_yaml: yaml,
            tree: &tree,
            changed: &changed,
            module_uses,
        },
        &policy(),
    )
    .expect("resolves")
}

fn dirs(projects: &[Project]) -> Vec<String> {
    projects
        .iter()
        .map(|p| format!("{}@{}", p.dir, p.workspace))
        .collect()
}

fn command(text: &str) -> Command {
    match parse(text, &Grammar::default()) {
        Parsed::Run(command) => command,
        other => panic!("{text:?} did not parse: {other:?}"),
    }
}

#[test]
fn without_config_directories_with_changed_terraform_files_are_projects() {
    let r = resolution(
        None,
        &[
            "envs/dev/main.tf",
            "lab/main.tf",
            "README.md",
            "docs/notes.md",
        ],
    );
    assert_eq!(dirs(&r.modified), ["envs/dev@default", "lab@default"]);
    assert!(r.modified.iter().all(|p| p.name.is_none() && p.autoplan));
    assert!(!r.has_configured_projects());
}

#[test]
fn a_module_inside_a_project_plans_the_project_but_a_shared_module_plans_nothing() {
    let r = resolution(None, &["lab/modules/lxc/main.tf", "modules/shared/main.tf"]);
    assert_eq!(dirs(&r.modified), ["lab@default"]);
}

fn uses(pairs: &[(&str, &str)]) -> Vec<ModuleUse> {
    pairs
        .iter()
        .map(|(user, module)| ModuleUse {
            user: RepoDir::parse(user).expect("valid user dir"),
            module: RepoDir::parse(module).expect("valid module dir"),
        })
        .collect()
}

#[test]
fn with_module_calls_a_shared_module_plans_its_users_transitively() {
    let calls = uses(&[
        ("envs/dev", "modules/shared"),
        ("modules/net/bridge", "modules/shared"),
        ("lab", "modules/net/bridge"),
        ("envs/network", "modules/other"),
    ]);
    let r = resolution_with_modules(None, &["modules/shared/main.tf"], &calls);
    assert_eq!(dirs(&r.modified), ["envs/dev@default", "lab@default"]);
}

#[test]
fn module_call_cycles_terminate() {
    let calls = uses(&[
        ("modules/shared", "modules/net/bridge"),
        ("modules/net/bridge", "modules/shared"),
    ]);
    let r = resolution_with_modules(None, &["modules/shared/main.tf"], &calls);
    assert!(r.modified.is_empty(), "{:?}", dirs(&r.modified));
}

#[test]
fn a_change_under_env_plans_the_directory_above() {
    let r = resolution(None, &["stack/env/dev.tfvars"]);
    assert_eq!(dirs(&r.modified), ["stack@default"]);
}

#[test]
fn deleted_directories_state_files_and_other_files_plan_nothing() {
    let r = resolution(
        None,
        &[
            "gone/main.tf",
            "envs/dev/terraform.tfstate",
            "envs/dev/README.md",
            "lab/main.tf.bak",
        ],
    );
    assert!(r.modified.is_empty(), "{:?}", dirs(&r.modified));
}

#[test]
fn discovered_projects_get_the_server_settings() {
    let r = resolution(None, &["lab/main.tf"]);
    assert_eq!(
        r.modified[0].apply_requirements,
        policy().apply_requirements
    );
    assert_eq!(r.modified[0].restart, policy().restart);
}

#[test]
fn an_excluded_directory_is_reported_not_planned() {
    let r = resolution(None, &["infra/atoll/main.tf", "lab/main.tf"]);
    assert_eq!(dirs(&r.modified), ["lab@default"]);
    assert_eq!(r.excluded.len(), 1);
    assert_eq!(r.excluded[0].project.dir.as_str(), "infra/atoll");
    assert_eq!(r.excluded[0].pattern, "infra/atoll");
}

#[test]
fn with_config_when_modified_decides_and_autoplan_disabled_projects_wait_for_a_comment() {
    let r = resolution(Some(ATLANTIS_YAML), &["envs/dev/main.tf"]);
    assert_eq!(dirs(&r.modified), ["envs/dev@default", "envs/dev@staging"]);
    let auto: Vec<&str> = r
        .autoplan()
        .filter_map(|p| p.name.as_ref().map(|n| n.as_str()))
        .collect();
    assert_eq!(auto, ["dev"]);
    assert!(r.parallel_plan);
}

#[test]
fn with_config_a_parent_relative_pattern_marks_the_project_modified() {
    let r = resolution(Some(ATLANTIS_YAML), &["modules/net/bridge/main.tf"]);
    assert_eq!(dirs(&r.modified), ["envs/network@default"]);
    let r = resolution(Some(ATLANTIS_YAML), &["modules/shared/main.tf"]);
    assert!(r.modified.is_empty());
}

#[test]
fn with_config_warnings_are_carried_for_the_plan_comment() {
    let r = resolution(Some(ATLANTIS_YAML), &[]);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.path == "projects[1].terraform_version")
    );
}

#[test]
fn config_without_projects_falls_back_to_discovery() {
    let r = resolution(Some("version: 3\nparallel_apply: true\n"), &["lab/main.tf"]);
    assert_eq!(dirs(&r.modified), ["lab@default"]);
    assert!(r.parallel_apply);
}

#[test]
fn no_flags_select_every_modified_project() {
    let r = resolution(Some(ATLANTIS_YAML), &["envs/dev/main.tf", "lab/main.tf"]);
    let selected = select(&command("atlantis plan"), &r).expect("selects");
    assert_eq!(
        dirs(&selected),
        ["envs/dev@default", "envs/dev@staging", "lab@default"]
    );
}

#[test]
fn project_flag_selects_by_name_even_when_unmodified() {
    let r = resolution(Some(ATLANTIS_YAML), &[]);
    let selected = select(&command("atlantis plan -p network"), &r).expect("selects");
    assert_eq!(dirs(&selected), ["envs/network@default"]);
}

#[test]
fn unknown_project_name_lists_the_known_ones() {
    let r = resolution(Some(ATLANTIS_YAML), &[]);
    let err = select(&command("atlantis apply -p netwrk"), &r).expect_err("unknown");
    assert!(matches!(err, SelectError::UnknownProject { .. }));
    assert_eq!(
        err.to_string(),
        "there is no project named `netwrk` in atlantis.yaml; known projects: `network`, `dev`, \
         `dev-staging`, `lab`"
    );
}

#[test]
fn project_flag_without_configured_projects_says_to_use_dir() {
    let r = resolution(None, &["lab/main.tf"]);
    let err = select(&command("atlantis plan -p lab"), &r).expect_err("no config");
    assert_eq!(err, SelectError::NoConfiguredProjects);
    assert!(err.to_string().contains("use `-d DIR`"));
}

#[test]
fn dir_flag_selects_every_workspace_listed_for_it_and_workspace_narrows() {
    let r = resolution(Some(ATLANTIS_YAML), &[]);
    let all = select(&command("atlantis plan -d envs/dev"), &r).expect("selects");
    assert_eq!(dirs(&all), ["envs/dev@default", "envs/dev@staging"]);
    let one = select(&command("atlantis plan -d envs/dev -w staging"), &r).expect("selects");
    assert_eq!(dirs(&one), ["envs/dev@staging"]);
    assert_eq!(
        one[0].name.as_ref().map(|n| n.as_str()),
        Some("dev-staging")
    );
}

#[test]
fn dir_flag_on_an_unlisted_terraform_directory_uses_server_settings() {
    let r = resolution(Some(ATLANTIS_YAML), &[]);
    let selected = select(&command("atlantis plan -d stack -w blue"), &r).expect("selects");
    assert_eq!(dirs(&selected), ["stack@blue"]);
    assert_eq!(selected[0].name, None);
    assert_eq!(selected[0].apply_requirements, policy().apply_requirements);
}

#[test]
fn dir_flag_on_a_directory_without_terraform_is_refused() {
    let r = resolution(None, &[]);
    let err = select(&command("atlantis plan -d docs"), &r).expect_err("no tf");
    assert_eq!(
        err.to_string(),
        "directory `docs` holds no .tf files at this commit; check the path"
    );
}

#[test]
fn workspace_flag_alone_means_the_repository_root() {
    let r = resolution(None, &[]);
    let err = select(&command("atlantis plan -w staging"), &r).expect_err("root has no tf");
    assert!(
        matches!(err, SelectError::NoTerraform { ref dir } if dir.is_root()),
        "{err:?}"
    );
}

#[test]
fn targeting_an_excluded_directory_is_refused_with_the_manual_route() {
    let r = resolution(None, &[]);
    for text in [
        "atlantis plan -d infra/atoll",
        "atlantis apply -d infra/atoll/../atoll -w default",
    ] {
        let err = select(&command(text), &r).expect_err("excluded");
        assert!(
            matches!(err, SelectError::NotManaged { .. }),
            "{text}: {err:?}"
        );
        assert!(
            err.to_string().contains("atoll apply --dir infra/atoll"),
            "{err}"
        );
    }
}

#[test]
fn targeting_an_excluded_project_by_name_is_refused() {
    let yaml = "version: 3\nprojects:\n- {name: self, dir: infra/atoll}\n- {name: lab, dir: lab}\n";
    let r = resolution(Some(yaml), &["infra/atoll/main.tf"]);
    assert!(r.modified.is_empty());
    assert_eq!(r.excluded.len(), 1);
    let err = select(&command("atlantis plan -p self"), &r).expect_err("excluded");
    assert!(
        err.to_string()
            .starts_with("project `self` is not managed by this server"),
        "{err}"
    );
}

#[test]
fn project_keys_round_trip_through_json_and_refuse_tampered_dirs() {
    let r = resolution(Some(ATLANTIS_YAML), &["envs/dev/main.tf"]);
    let key = r.modified[1].key();
    let json = serde_json::to_string(&key).expect("serialise");
    assert_eq!(
        json,
        r#"{"dir":"envs/dev","workspace":"staging","name":"dev-staging"}"#
    );
    let back: ProjectKey = serde_json::from_str(&json).expect("deserialise");
    assert_eq!(back, key);
    let tampered = r#"{"dir":"../../etc","workspace":"default","name":null}"#;
    assert!(serde_json::from_str::<ProjectKey>(tampered).is_err());
}

#[test]
fn a_listed_project_whose_directory_is_gone_is_refused() {
    let yaml = "version: 3\nprojects:\n- {name: old, dir: envs/old}\n";
    let r = resolution(Some(yaml), &["envs/old/main.tf"]);
    assert!(r.modified.is_empty());
    for text in ["atlantis plan -p old", "atlantis plan -d envs/old"] {
        let err = select(&command(text), &r).expect_err("dir gone");
        assert!(
            matches!(err, SelectError::DirMissing { .. }),
            "{text}: {err:?}"
        );
        assert!(
            err.to_string().contains("does not exist at this commit"),
            "{err}"
        );
    }
}

#[test]
fn terraform_directories_with_refused_names_are_skipped_with_a_bounded_warning_list() {
    let mut tree = tree();
    tree.extend((0..30).map(|i| format!("odd[{i}]/main.tf")));
    let changed = files(&["odd[1]/main.tf", "lab/main.tf"]);
    let r = resolve(
        Inputs {
            atlantis_yaml: None,
            tree: &tree,
            changed: &changed,
            module_uses: &[],
        },
        &policy(),
    )
    .expect("resolves");
    assert_eq!(dirs(&r.modified), ["lab@default"]);
    assert_eq!(r.warnings.len(), 21);
    assert_eq!(r.warnings[0].path, "odd[0]");
    assert_eq!(
        r.warnings[20].message,
        "10 more directories with refused names are skipped"
    );
}

#[test]
fn each_project_key_command_selects_exactly_that_project() {
    let r = resolution(
        Some(ATLANTIS_YAML),
        &["envs/dev/main.tf", "envs/network/main.tf", "lab/main.tf"],
    );
    let discovered = resolution(None, &["envs/dev/main.tf", "lab/main.tf"]);
    for r in [&r, &discovered] {
        assert!(!r.modified.is_empty());
        for project in &r.modified {
            let comment = project.key().command(Verb::Plan).to_comment("atlantis");
            let selected = select(&command(&comment), r).expect("selects");
            assert_eq!(selected, vec![project.clone()], "{comment}");
        }
    }
}

#[test]
fn a_workspace_the_listed_directory_is_not_configured_for_is_refused_naming_the_ones_it_is() {
    let yaml = "version: 3\nprojects:\n- dir: envs/dev\n  workspace: notmyworkspace\n  \
                apply_requirements: [approved]\n- dir: envs/dev\n  workspace: staging\n";
    let resolution = resolution(Some(yaml), &[]);
    let err = select(
        &command("atlantis plan -d envs/dev -w myworkspace"),
        &resolution,
    )
    .expect_err("refused");
    assert!(
        matches!(err, SelectError::WorkspaceNotConfigured { .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(
            "running commands in workspace `myworkspace` is not allowed because this directory \
             is only configured for the following workspaces: `notmyworkspace`, `staging`"
        ),
        "{err}"
    );
    let picked = select(
        &command("atlantis plan -d envs/dev -w staging"),
        &resolution,
    )
    .expect("a configured workspace is selected");
    assert_eq!(dirs(&picked), ["envs/dev@staging"]);
    // An unlisted directory still gets the server's settings in any workspace.
    let other = select(&command("atlantis plan -d lab -w myworkspace"), &resolution)
        .expect("unlisted directory");
    assert_eq!(dirs(&other), ["lab@myworkspace"]);
}

#[test]
fn a_dir_and_workspace_matching_two_named_projects_asks_for_a_project_name() {
    let yaml = "version: 3\nprojects:\n- name: blue\n  dir: envs/dev\n  workspace: ws\n\
                - name: green\n  dir: envs/dev\n  workspace: ws\n";
    let resolution = resolution(Some(yaml), &[]);
    let err =
        select(&command("atlantis plan -d envs/dev -w ws"), &resolution).expect_err("ambiguous");
    let text = err.to_string();
    assert!(text.contains("must specify project name"), "{text}");
    assert!(text.contains("`-p` with one of `blue`, `green`"), "{text}");
    let one = select(&command("atlantis plan -p green"), &resolution).expect("by name");
    assert_eq!(
        one[0].name.as_ref().map(ToString::to_string).as_deref(),
        Some("green")
    );
}

/// Atlantis's `--parallel-plan`/`--parallel-apply`: the repo rule's value holds where
/// `atlantis.yaml` says nothing, and the file's own value wins where it does.
#[test]
fn the_servers_parallel_defaults_hold_unless_atlantis_yaml_says() {
    let rules = "repos:\n  - id: /.*/\n    parallel_plan: true\n    parallel_apply: true\n";
    let policy = ServerRules::from_yaml(rules)
        .expect("rules")
        .policy_for(PVE);
    let tree = files(&["stack/main.tf"]);
    let resolve_with = |yaml: &str| {
        atoll::repocfg::resolve(
            Inputs {
                atlantis_yaml: Some(yaml),
                tree: &tree,
                changed: &tree,
                module_uses: &[],
            },
            &policy,
        )
        .expect("resolves")
    };
    let silent = resolve_with("version: 3\nprojects:\n  - dir: stack\n");
    assert!(silent.parallel_plan && silent.parallel_apply);
    let own = resolve_with("version: 3\nparallel_apply: false\nprojects:\n  - dir: stack\n");
    assert!(own.parallel_plan && !own.parallel_apply);
}
