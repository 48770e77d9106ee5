//! `atlantis.yaml` parsing and its merge with the server rules.

use atoll::repocfg::{
    Inputs, Override, RepoConfig, RepoConfigError, RepoPolicy, Requirement, RestartPolicy,
    ServerRules, resolve,
};

const ATLANTIS_YAML: &str = include_str!("../fixtures/repocfg/atlantis.yaml");
const REPOS_YAML: &str = include_str!("../fixtures/repocfg/repos.yaml");
const PVE: &str = "git.example.lan/infra/pve";

fn rules() -> ServerRules {
    ServerRules::from_yaml(REPOS_YAML).expect("fixture rules parse")
}

fn parse_err(yaml: &str) -> RepoConfigError {
    RepoConfig::parse(yaml).expect_err("must be refused")
}

#[test]
fn version_three_projects_are_read_with_defaults() {
    let config = RepoConfig::parse(ATLANTIS_YAML).expect("fixture parses");
    assert_eq!(config.parallel_plan, Some(true));
    assert_eq!(config.parallel_apply, Some(false));
    let names: Vec<&str> = config
        .projects
        .iter()
        .filter_map(|p| p.name.as_ref().map(|n| n.as_str()))
        .collect();
    assert_eq!(names, ["network", "dev", "dev-staging", "lab"]);
    let network = &config.projects[0];
    assert_eq!(network.dir.as_str(), "envs/network");
    assert_eq!(network.workspace.as_str(), "default");
    assert!(network.autoplan);
    assert_eq!(network.apply_requirements, None);
    assert_eq!(
        network.when_modified.joined(),
        [
            "envs/network/*.tf",
            "modules/net/**/*.tf",
            "envs/network/.terraform.lock.hcl"
        ]
    );
    assert_eq!(
        config.projects[1].apply_requirements,
        Some(vec![Requirement::Approved, Requirement::PoliciesPassed])
    );
    assert_eq!(config.projects[2].workspace.as_str(), "staging");
    assert!(!config.projects[2].autoplan);
    assert_eq!(config.projects[3].restart, Some(RestartPolicy::Never));
}

#[test]
fn keys_atoll_does_not_support_become_warnings() {
    let config = RepoConfig::parse(ATLANTIS_YAML).expect("fixture parses");
    let paths: Vec<&str> = config.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(paths, ["projects[1].terraform_version"]);
    // `workflows` is read now (see `runner_workflows`).
    assert!(config.workflows.contains_key("custom"));
    assert!(
        config
            .warnings
            .iter()
            .all(|w| w.message.contains("not supported by atoll"))
    );
}

#[test]
fn unknown_keys_are_errors_naming_the_path() {
    let err = parse_err("version: 3\nprojects:\n- dir: a\n  worspace: x\n");
    assert_eq!(
        err,
        RepoConfigError::UnknownKey {
            path: "projects[0].worspace".to_owned()
        }
    );
    assert!(err.to_string().contains("check its spelling"));
    let err = parse_err("version: 3\nprojects:\n- dir: a\n  autoplan: {enable: false}\n");
    assert_eq!(
        err,
        RepoConfigError::UnknownKey {
            path: "projects[0].autoplan.enable".to_owned()
        }
    );
    assert!(matches!(
        parse_err("version: 3\nprojekts: []\n"),
        RepoConfigError::UnknownKey { .. }
    ));
}

#[test]
fn other_versions_and_a_missing_version_are_refused_with_the_next_step() {
    let err = parse_err("version: 2\nprojects: []\n");
    assert_eq!(
        err,
        RepoConfigError::UnsupportedVersion {
            found: "2".to_owned()
        }
    );
    assert!(err.to_string().contains("set `version: 3`"), "{err}");
    assert_eq!(parse_err("projects: []\n"), RepoConfigError::MissingVersion);
    assert_eq!(parse_err(""), RepoConfigError::MissingVersion);
    assert!(RepoConfig::parse("version: '3'\n").is_ok());
}

#[test]
fn invalid_values_name_the_key_and_say_what_is_accepted() {
    let cases = [
        (
            "version: 3\nprojects:\n- dir: ../../etc\n",
            "projects[0].dir",
            "outside the repository",
        ),
        (
            "version: 3\nprojects:\n- dir: /etc\n",
            "projects[0].dir",
            "absolute",
        ),
        (
            "version: 3\nprojects:\n- dir: a\n  workspace: 'a;id'\n",
            "projects[0].workspace",
            "not a valid name",
        ),
        (
            "version: 3\nprojects:\n- dir: a\n  name: 'x y'\n",
            "projects[0].name",
            "not a valid name",
        ),
        (
            "version: 3\nprojects:\n- name: x\n",
            "projects[0]",
            "has no `dir`",
        ),
        (
            "version: 3\nprojects:\n- dir: a\n  apply_requirements: [approve]\n",
            "projects[0].apply_requirements[0]",
            "use `approved`",
        ),
        (
            "version: 3\nprojects:\n- dir: a\n  restart: sometimes\n",
            "projects[0].restart",
            "`auto` or `never`",
        ),
        (
            "version: 3\nparallel_plan: yes please\n",
            "parallel_plan",
            "true or false",
        ),
        (
            "version: 3\nprojects:\n- dir: a\n  autoplan: {when_modified: ['../../x']}\n",
            "projects[0].autoplan.when_modified",
            "outside the repository",
        ),
        (
            "version: 3\nprojects: {dir: a}\n",
            "projects",
            "must be a list",
        ),
    ];
    for (yaml, path, needle) in cases {
        match parse_err(yaml) {
            RepoConfigError::Invalid { path: got, problem } => {
                assert_eq!(got, path, "{yaml}");
                assert!(problem.contains(needle), "{yaml}: {problem}");
            }
            other => panic!("{yaml}: unexpected {other:?}"),
        }
    }
}

#[test]
fn projects_sharing_dir_and_workspace_must_be_named_uniquely() {
    let err = parse_err("version: 3\nprojects:\n- dir: a\n- dir: a\n");
    assert!(err.to_string().contains("give both a `name`"), "{err}");
    let err = parse_err("version: 3\nprojects:\n- {dir: a, name: x}\n- {dir: b, name: x}\n");
    assert!(err.to_string().contains("repeats the name"), "{err}");
    assert!(
        RepoConfig::parse("version: 3\nprojects:\n- {dir: a, name: x}\n- {dir: a, name: y}\n")
            .is_ok()
    );
}

#[test]
fn broken_yaml_and_oversized_files_are_refused() {
    assert!(matches!(
        parse_err("version: 3\nprojects: [\n"),
        RepoConfigError::Syntax { .. }
    ));
    let huge = format!("version: 3\n# {}\n", "x".repeat(300 * 1024));
    assert!(matches!(parse_err(&huge), RepoConfigError::TooLarge { .. }));
}

/// YAML aliases that repeat a list of a thousand entries a million times: 40 KiB of text that
/// would expand to a billion values.
#[test]
fn alias_bombs_are_refused_before_they_expand() {
    let mut text = format!("version: 3\npad: [{}]\n", vec!["0"; 20_000].join(","));
    text.push_str(&format!("a0: &a0 [{}]\n", vec!["lol"; 1000].join(",")));
    text.push_str(&format!("a1: &a1 [{}]\n", vec!["*a0"; 1000].join(",")));
    text.push_str(&format!("a2: &a2 [{}]\n", vec!["*a1"; 1000].join(",")));
    let err = parse_err(&text);
    assert!(
        matches!(err, RepoConfigError::TooExpanded { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("use fewer aliases"), "{err}");
}

#[test]
fn anchors_that_share_a_list_still_work() {
    let text = "version: 3\nprojects:\n- dir: a\n  autoplan:\n    when_modified: &files [\"*.tf\", \"*.tfvars\"]\n\
                - dir: b\n  autoplan:\n    when_modified: *files\n";
    let config = RepoConfig::parse(text).expect("parses");
    assert_eq!(config.projects.len(), 2);
    let joined: Vec<Vec<String>> = config
        .projects
        .iter()
        .map(|p| p.when_modified.joined())
        .collect();
    assert_eq!(joined, [["a/*.tf", "a/*.tfvars"], ["b/*.tf", "b/*.tfvars"]]);
}

fn inputs<'a>(yaml: &'a str, tree: &'a [String]) -> Inputs<'a> {
    Inputs {
        atlantis_yaml: Some(yaml),
        tree,
        changed: tree,
        module_uses: &[],
    }
}

fn files(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn repository_overrides_apply_only_where_the_server_allows_them() {
    let tree = files(&["envs/network/main.tf", "envs/dev/main.tf", "lab/main.tf"]);
    let resolution =
        resolve(inputs(ATLANTIS_YAML, &tree), &rules().policy_for(PVE)).expect("allowed");
    let dev = resolution
        .modified
        .iter()
        .find(|p| p.dir.as_str() == "envs/dev")
        .expect("dev modified");
    assert_eq!(
        dev.apply_requirements,
        [Requirement::Approved, Requirement::PoliciesPassed]
    );
    let network = &resolution.modified[0];
    assert_eq!(
        network.apply_requirements,
        [Requirement::Approved, Requirement::Mergeable]
    );
    let lab = resolution
        .modified
        .iter()
        .find(|p| p.dir.as_str() == "lab")
        .expect("lab modified");
    assert_eq!(lab.restart, RestartPolicy::Never);

    let err = resolve(
        inputs(ATLANTIS_YAML, &tree),
        &rules().policy_for("github.com/acme/other"),
    )
    .expect_err("overrides are not allowed for other repositories");
    assert_eq!(
        err,
        RepoConfigError::OverrideRefused {
            path: "projects[1].apply_requirements".to_owned(),
            key: "apply_requirements"
        }
    );
    assert!(
        err.to_string()
            .contains("add `apply_requirements` to `allowed_overrides`"),
        "{err}"
    );
}

#[test]
fn refused_restart_override_names_restart() {
    let yaml = "version: 3\nprojects:\n- dir: lab\n  restart: never\n";
    let tree = files(&["lab/main.tf"]);
    let err = resolve(inputs(yaml, &tree), &RepoPolicy::default()).expect_err("not allowed");
    assert!(
        matches!(err, RepoConfigError::OverrideRefused { key: "restart", .. }),
        "{err:?}"
    );
}

#[test]
fn server_policy_for_a_repository_combines_matching_rules() {
    let policy = rules().policy_for(PVE);
    assert!(policy.allows(Override::ApplyRequirements));
    assert!(policy.allows(Override::Restart));
    assert_eq!(
        policy.apply_requirements,
        [Requirement::Approved, Requirement::Mergeable]
    );
    let other = rules().policy_for("github.com/acme/web");
    assert!(!other.allows(Override::Restart));
}

#[test]
fn alias_bombs_and_deep_nesting_are_refused_without_hanging() {
    let mut bomb = String::from("version: 3\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    assert!(matches!(
        RepoConfig::parse(&bomb),
        Err(RepoConfigError::Syntax { .. })
    ));
    let deep = format!(
        "version: 3\nprojects: {}{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert!(matches!(
        RepoConfig::parse(&deep),
        Err(RepoConfigError::Syntax { .. })
    ));
}

/// Every key of Atlantis's `raw.RepoCfg` and `raw.Project` (runatlantis/atlantis
/// `server/core/config/raw/repo_cfg.go` and `project.go` at 078d0a8) is read or warned about.
#[test]
fn every_atlantis_key_is_read_or_warned_about_never_refused() {
    let top = [
        ("workflows", "{custom: {plan: {steps: [init, plan]}}}"),
        (
            "policies",
            "{policy_sets: [{name: p, path: policies/, source: local}]}",
        ),
        ("autodiscover", "{mode: auto}"),
        ("automerge", "true"),
        ("parallel_apply", "true"),
        ("parallel_plan", "true"),
        ("delete_source_branch_on_merge", "true"),
        ("emoji_reaction", "eyes"),
        ("allowed_regexp_prefixes", "[dev/]"),
        ("abort_on_execution_order_fail", "true"),
        ("repo_locks", "{mode: on_plan}"),
        ("silence_pr_comments", "[apply]"),
    ];
    for (key, value) in top {
        let yaml = format!("version: 3\n{key}: {value}\nprojects:\n- dir: .\n");
        let config = RepoConfig::parse(&yaml).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(config.projects.len(), 1, "{key}");
    }
    let project = [
        ("name", "web"),
        ("branch", "/main/"),
        ("workspace", "staging"),
        ("workflow", "custom"),
        ("terraform_distribution", "opentofu"),
        ("terraform_version", "v1.9.0"),
        ("autoplan", "{enabled: false, when_modified: ['*.tf']}"),
        ("plan_requirements", "[approved]"),
        ("apply_requirements", "[approved]"),
        ("import_requirements", "[approved]"),
        // A name the file lists (`repocfg_options` checks the names).
        ("depends_on", "[other]\n- name: other\n  dir: other"),
        ("delete_source_branch_on_merge", "true"),
        ("repo_locking", "true"),
        ("repo_locks", "{mode: on_apply}"),
        ("execution_order_group", "1"),
        ("policy_check", "true"),
        ("custom_policy_check", "false"),
        ("silence_pr_comments", "[plan]"),
    ];
    for (key, value) in project {
        let yaml = format!("version: 3\nprojects:\n- dir: .\n  {key}: {value}\n");
        RepoConfig::parse(&yaml).unwrap_or_else(|e| panic!("projects[0].{key}: {e}"));
    }
}

#[test]
fn atlantis_realistic_top_level_keys_warn_and_the_projects_still_load() {
    let yaml = "version: 3\nrepo_locks: {mode: on_plan}\nemoji_reaction: eyes\n\
                silence_pr_comments: [apply]\npolicies:\n  policy_sets:\n  - name: guests\n    \
                path: policies/guests\n    source: local\nprojects:\n- dir: envs/dev\n";
    let config = RepoConfig::parse(yaml).expect("parses");
    let warned: Vec<&str> = config.warnings.iter().map(|w| w.path.as_str()).collect();
    // `repo_locks`, `emoji_reaction` and `silence_pr_comments` are read (`repocfg_options`).
    assert_eq!(warned, ["policies"]);
    assert_eq!(config.projects[0].dir.as_str(), "envs/dev");
}

#[test]
fn empty_values_mean_what_atlantis_means() {
    let config = RepoConfig::parse(
        "version: 3\nprojects:\n- dir: .\n  workspace: \"\"\n  autoplan:\n- dir: a\n  \
         workspace:\n  autoplan:\n    when_modified: [\"\"]\n",
    )
    .expect("parses");
    assert_eq!(config.projects[0].workspace.as_str(), "default");
    assert!(
        config.projects[0].autoplan,
        "`autoplan:` alone keeps the default"
    );
    assert!(config.projects[0].when_modified.matches("main.tf"));
    assert_eq!(config.projects[1].workspace.as_str(), "default");
    // `[""]` is the project directory itself: every file below it, nothing outside.
    assert!(config.projects[1].when_modified.matches("a/deep/x.tfvars"));
    assert!(!config.projects[1].when_modified.matches("b/main.tf"));

    let err = parse_err("version:\nprojects:\n- dir: .\n");
    assert_eq!(err, RepoConfigError::MissingVersion);
    assert!(err.to_string().contains("version: is required"), "{err}");
}

#[test]
fn import_requirements_come_from_the_server_or_from_atlantis_yaml_where_allowed() {
    let yaml = "version: 3\nprojects:\n- dir: lab\n  import_requirements: [approved, undiverged]\n";
    let tree = files(&["lab/main.tf"]);
    let err = resolve(inputs(yaml, &tree), &RepoPolicy::default()).expect_err("not allowed");
    assert_eq!(
        err,
        RepoConfigError::OverrideRefused {
            path: "projects[0].import_requirements".to_owned(),
            key: "import_requirements"
        }
    );
    let server = ServerRules::from_yaml(
        "repos:\n  - id: /.*/\n    import_requirements: [mergeable]\n    allowed_overrides: [import_requirements]\n",
    )
    .expect("rules");
    let policy = server.policy_for(PVE);
    let own = resolve(inputs(yaml, &tree), &policy).expect("allowed");
    assert_eq!(
        own.modified[0].options.import_requirements,
        [Requirement::Approved, Requirement::Undiverged]
    );
    let plain = resolve(
        inputs("version: 3\nprojects:\n- dir: lab\n", &tree),
        &policy,
    )
    .expect("the server's");
    assert_eq!(
        plain.modified[0].options.import_requirements,
        [Requirement::Mergeable]
    );
    let bad = RepoConfig::parse("version: 3\nprojects:\n- dir: lab\n  import_requirements: [x]\n")
        .expect_err("not a requirement");
    assert!(
        bad.to_string().contains("`x` is not a requirement"),
        "{bad}"
    );
}
